"""Canaries: sentences asserting (subject, property, value) with placeholders (WikiMem §4).

- ``build_templates(property_table)`` -> baseline + 10 ranked paraphrases per property.
- ``build_canaries(subjects, claims, property_table, templates)`` -> one row per
  (subject, property, variant), with h0, S(h), ground truths and contextualized variants.
- ``render(template, subject, value)`` -> the sentence a model scores.
- ``similar_names(name)`` -> S(h); ``generic_subject(template)`` -> h0.
- ``ParaphraseGenerator`` -> the interface a model-based paraphraser implements.
- ``load_nlp()``, ``load_encoder()`` -> the offline spaCy / MiniLM models, loaded once.
"""

from wikimem_platform.canaries.build import (
    CANARY_COLUMNS,
    DEFAULT_CONTEXT_EXCLUDE,
    TEMPLATE_COLUMNS,
    build_canaries,
    build_templates,
)
from wikimem_platform.canaries.models import SentenceEncoder, load_encoder, load_nlp
from wikimem_platform.canaries.names import similar_names
from wikimem_platform.canaries.paraphrases import (
    ParaphraseGenerator,
    RankedPool,
    RuleBasedParaphraser,
    distinct_pool,
    rank_pools,
)
from wikimem_platform.canaries.templates import PropertyInfo, analyze_phrase, baseline_template, relation_forms
from wikimem_platform.canaries.text import (
    SUBJECT,
    VALUE,
    classify_shape,
    count_placeholders,
    generic_subject,
    normalize_sentence,
    render,
)

__all__ = [
    "CANARY_COLUMNS",
    "DEFAULT_CONTEXT_EXCLUDE",
    "SUBJECT",
    "TEMPLATE_COLUMNS",
    "VALUE",
    "ParaphraseGenerator",
    "PropertyInfo",
    "RankedPool",
    "RuleBasedParaphraser",
    "SentenceEncoder",
    "analyze_phrase",
    "baseline_template",
    "build_canaries",
    "build_templates",
    "classify_shape",
    "count_placeholders",
    "distinct_pool",
    "generic_subject",
    "load_encoder",
    "load_nlp",
    "normalize_sentence",
    "rank_pools",
    "relation_forms",
    "render",
    "similar_names",
]
