"""Entity-level memorization probes (group "probes", one `models` partition per model release).

Wiring only: prompts, soft-prompt training, the ensemble and the control live in
wikimem_platform.eme. Soft prompts are stored under the instance's storage (`soft_prompts/`):
they are trained on real people's records and keep those records beside them.
"""

from pathlib import Path
from typing import Literal

import pandas as pd
from dagster import AssetExecutionContext, Config, MetadataValue, Output, asset
from pydantic import Field

from assets.config import to_library
from assets.metadata import plot_path, preview
from assets.partitions import models_partitions
from resources.placement import LM_OP_TAGS, LM_POOL
from resources.scoring import RegistryResource, ScoringResource
from wikimem_platform import eme
from wikimem_platform.eme.audit import TRAINING_DATA
from wikimem_platform.eme.records import TEXT_PROMPTS
from wikimem_platform.versions import source_version

GROUP = "probes"
SOFT_PROMPTS_DIR = "soft_prompts"
# The audit of every new release runs this: one prefix length, 20 epochs on 50 people's records
# (minutes per soft prompt for the shipped models on a CPU); the paper's sweeps are configuration.
_DEFAULTS = eme.EmeConfig(prefix_lengths=(5,), epochs=20)
DEFAULT_MAX_TRAINING_PEOPLE = 50


class EmeProbeConfig(Config):
    n_identifiers: int = Field(default=_DEFAULTS.n_identifiers, description="Entities in a prompt that identify the person, the name included.")
    train_share: float = Field(default=_DEFAULTS.train_share, description="Share of the people soft prompts may be trained on (seeded split by person; audited subjects never).")
    split_seed: int = Field(default=_DEFAULTS.split_seed, description="Seed of the split by person.")
    text_prompts: list[str] = Field(default=list(_DEFAULTS.text_prompts), description=f"Hand-written prompts without a soft prompt, of {', '.join(TEXT_PROMPTS)}.")
    methods: list[str] = Field(default=list(_DEFAULTS.methods), description=f"Soft-prompt methods (peft), of {', '.join(eme.METHODS)}; two or more add the ensemble.")
    prefix_lengths: list[int] = Field(default=list(_DEFAULTS.prefix_lengths), description=f"Virtual tokens per soft prompt (the paper sweeps {', '.join(map(str, eme.PREFIX_LENGTHS))}).")
    training_data: list[str] = Field(default=list(_DEFAULTS.training_data), description=f"Soft-prompt training records, of {', '.join(TRAINING_DATA)} (fabricated: values moved to people they are not true of).")
    volumes: list[int] = Field(default=[], description="Data-volume sweep: training-record counts for the first method and length.")
    epochs: int = Field(default=_DEFAULTS.epochs, description="Passes over the training records per soft prompt.")
    batch_size: int = Field(default=_DEFAULTS.batch_size, description="Training records per optimizer step.")
    learning_rate: float = Field(default=_DEFAULTS.learning_rate, description="AdamW learning rate of the soft prompt.")
    control: Literal["untrained", "none"] = Field(default="untrained", description="Control: the same training on the architecture with random weights, or none.")
    max_eval_people: int = Field(default=100, description="Audited people probed (seeded sample); 0 = all.")
    max_training_people: int = Field(default=DEFAULT_MAX_TRAINING_PEOPLE, description="People whose records train the soft prompts (seeded sample); 0 = all.")
    seed: int = 0

    def eme_config(self) -> eme.EmeConfig:
        return to_library(self, eme.EmeConfig)


def soft_prompt_store(context: AssetExecutionContext) -> eme.SoftPromptStore:
    return eme.SoftPromptStore(Path(context.instance.storage_directory()) / SOFT_PROMPTS_DIR)


@asset(group_name=GROUP, partitions_def=models_partitions, kinds={"pytorch", "pandas"},
       code_version=source_version("wikimem_platform.eme"), pool=LM_POOL, op_tags=LM_OP_TAGS)
def eme_probe(
    context: AssetExecutionContext,
    config: EmeProbeConfig,
    scoring: ScoringResource,
    model_registry: RegistryResource,
    humans: pd.DataFrame,
    claims: pd.DataFrame,
    property_table: pd.DataFrame,
    subjects: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """One row per (arm, audited person, target property): the prompt, the model's greedy answer,
    whether it names the true value, and the prompt's CRM cue. Arms: text prompts, soft prompts
    by method / length / real or fabricated records / volume, the ensemble, the control."""
    entry = model_registry.registry().get(context.partition_key)
    people = eme.audit_people(entry.source, subjects, claims, humans, property_table)
    lm = scoring.load(entry, served=True)  # served: its text prompts through the server, no soft prompt
    audit = eme.eme_audit(lm, people.facts, soft_prompt_store(context), config.eme_config(),
                          never_train=people.never_train, evaluate_only=people.evaluate_only, cohorts=people.cohorts,
                          group_by=[people.group], log=context.log.info)
    table = eme.rate_table(audit.rates)
    figure = eme.rates_figure(audit.rates, people.group, title=f"{entry.key}: facts emitted by prompt")
    emitted = audit.examples[(audit.examples["model_role"] == eme.AUDITED) & audit.examples["hit"]]
    return Output(
        audit.examples,
        metadata={
            "rows": len(audit.examples),
            "model": entry.key,
            "ground_truth": "planted" if people.planted else "none (real people)",
            "training_people": len(audit.split["training_people"]),
            "evaluated_people": len(audit.split["evaluated_people"]),
            "excluded_prompts": audit.split["excluded_prompts"],
            **{f"hit_rate_{arm.replace(' ', '_')}": float(rate) for arm, rate in table["hit_rate"].items()},
            "rates": MetadataValue.md(eme.rate_table(audit.rates, people.group).round(3).to_markdown()),
            "soft_prompts": preview(audit.prompts.drop(columns=["path"]), rows=50) if len(audit.prompts) else "none",
            "plot": MetadataValue.path(plot_path(context, GROUP, "eme_rates", figure)),
            "emitted_facts": preview(emitted[["prompt_method", "prefix_length", "prompt", "output"]]),
        },
    )
