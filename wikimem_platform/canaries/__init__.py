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
    CANARY_COLUMNS,
    DEFAULT_CONTEXT_EXCLUDE,
    DROPPED_COLUMNS,
    TEMPLATE_COLUMNS,
    build_canaries,
    build_template_tables,
    build_templates,
)
from wikimem_platform.canaries.meaning import (
    MIN_MEANING_SIMILARITY,
    DroppedParaphrase,
    MeaningFilterResult,
    filter_paraphrases,
    filter_pools,
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
