"""Canaries: sentences asserting (subject, property, value) with placeholders (WikiMem §4).

- ``build_templates(property_table)`` -> baseline + 10 ranked paraphrases per property;
  ``build_template_tables`` also returns the candidates the meaning filter dropped.
- ``filter_paraphrases(baseline, prop, candidates)`` -> kept candidates and, per dropped one,
  the rule it broke (tense, disjunction, relation word, dropped qualifier, similarity).
- ``build_canaries(subjects, claims, property_table, templates)`` -> one row per
  (subject, property, variant), with h0, S(h), ground truths and contextualized variants.
- ``render(template, subject, value)`` -> the sentence a model scores.
- ``similar_names(name)`` -> S(h); ``generic_subject(template)`` -> h0.
- ``ParaphraseGenerator`` -> the interface a model-based paraphraser implements.
- ``load_nlp()``, ``load_encoder()`` -> the offline spaCy / MiniLM models, loaded once.
"""

from wikimem_platform.canaries.build import (
    build_canaries,
    build_template_tables,
    build_templates,
    CANARY_COLUMNS,
    DEFAULT_CONTEXT_EXCLUDE,
    DROPPED_COLUMNS,
    TEMPLATE_COLUMNS,
)
from wikimem_platform.canaries.encoders import load_encoder, load_nlp, SentenceEncoder
from wikimem_platform.canaries.meaning import (
    DroppedParaphrase,
    filter_paraphrases,
    filter_pools,
    MeaningFilterResult,
    MIN_MEANING_SIMILARITY,
)
from wikimem_platform.canaries.names import similar_names
from wikimem_platform.canaries.paraphrases import (
    distinct_pool,
    ParaphraseGenerator,
    rank_pools,
    RankedPool,
    RuleBasedParaphraser,
)
from wikimem_platform.canaries.templates import analyze_phrase, baseline_template, PropertyInfo, relation_forms
from wikimem_platform.canaries.text import (
    classify_shape,
    count_placeholders,
    generic_subject,
    normalize_sentence,
    render,
    SUBJECT,
    VALUE,
)

__all__ = [
    "CANARY_COLUMNS",
    "DEFAULT_CONTEXT_EXCLUDE",
    "DROPPED_COLUMNS",
    "MIN_MEANING_SIMILARITY",
    "DroppedParaphrase",
    "MeaningFilterResult",
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
    "build_template_tables",
    "build_templates",
    "classify_shape",
    "count_placeholders",
    "distinct_pool",
    "filter_paraphrases",
    "filter_pools",
    "generic_subject",
    "load_encoder",
    "load_nlp",
    "normalize_sentence",
    "rank_pools",
    "relation_forms",
    "render",
    "similar_names",
]
