"""Entity-level memorization and Efficient Memorization Extraction (Zhou et al. 2024).

`records` builds the prompts (attribute-annotated records of identifying entities) and the
training / evaluation split, `soft_prompts` trains and stores peft soft prompts, `ensemble`
merges the methods' answers, `audit` runs every arm of one model's audit.
"""

from wikimem_platform.eme.audit import (
    arm_label,
    audit_people,
    audit_rates,
    AUDITED,
    AuditPeople,
    CONTROL,
    eme_audit,
    EmeAudit,
    EmeConfig,
    ENSEMBLE,
    ground_truth_group,
    person_extractions,
    rate_table,
    rates_figure,
    untrained_copy,
)
from wikimem_platform.eme.ensemble import ensemble_choice, extracted_entity
from wikimem_platform.eme.records import (
    entity_examples,
    fabricate,
    FACT_COLUMNS,
    facts_from_claims,
    facts_from_people,
    planted_inputs,
    record_prompt,
    sentence_prompt,
    split_people,
)
from wikimem_platform.eme.soft_prompts import METHODS, PREFIX_LENGTHS, SoftPromptConfig, SoftPromptStore

__all__ = [
    "AUDITED", "CONTROL", "ENSEMBLE", "FACT_COLUMNS", "METHODS", "PREFIX_LENGTHS",
    "AuditPeople", "EmeAudit", "EmeConfig", "SoftPromptConfig", "SoftPromptStore",
    "arm_label", "audit_people", "audit_rates", "eme_audit", "ground_truth_group", "ensemble_choice", "entity_examples", "extracted_entity", "fabricate",
    "facts_from_claims", "facts_from_people", "person_extractions", "planted_inputs", "record_prompt",
    "rate_table", "rates_figure", "sentence_prompt", "split_people", "untrained_copy",
]
