"""Memorization in NER models, and how much its measure depends on the prompt (M-MEM; NER
prompt-sensitivity paper, ../shared/papers/ner-prompt-memorization.txt).

`prompts` writes the probe prompt set and the hand-written baselines, `corpus` the names (in- and
out-of-sample, from the bundled Wikidata sample) and the training sentences, `training`
fine-tunes and caches a MiniLM NER model on them, `confidence` computes the entity confidence
C(e), `engineering` the token-removal prompt engineering, `audit` the per-type tables. The
prompt-sensitivity math (M-MEM, Δ, σ, Kendall τ, ensembles) is `wikimem_platform.wikimem.prompt_sensitivity`.
"""

from wikimem_platform.ner.audit import (
    across_models,
    BEST_MODIFIED_PT,
    BEST_PT,
    detection_names,
    EMPTY_PT,
    ENSEMBLE_NAMES,
    MIX_PT,
    ner_audit,
    NerAcrossModels,
    NerAudit,
    NerAuditConfig,
    ONE_PT,
    prompt_scores_figure,
    STRATEGY_GROUPS,
    strategy_table,
    WORST_MODIFIED_PT,
    WORST_PT,
)
from wikimem_platform.ner.confidence import entity_confidence, entity_confidences, SCORE_BATCH_SIZE, score_pairs
from wikimem_platform.ner.corpus import (
    assert_never_trained,
    build_corpus,
    candidate_names,
    leaked_names,
    read_names,
    split_names,
    TRAINING_TEMPLATES,
    TrainingSentence,
)
from wikimem_platform.ner.engineering import iterative_removal, prompt_tokens, removals
from wikimem_platform.ner.prompts import (
    EMPTY_PROMPT,
    fill,
    generate_prompts,
    mix_prompt,
    MIX_PROMPTS,
    ONE_PROMPT,
    PROMPTS_PER_TYPE,
)
from wikimem_platform.ner.schema import ENTITY_TYPES, LABELS, MASK, SENTENCE_TYPES
from wikimem_platform.ner.training import (
    default_ner_dir,
    is_trained,
    load_manifest,
    load_ner_model,
    manifest_names,
    ner_config_hash,
    NER_MODEL_NAME,
    NerModel,
    NerTrainConfig,
    read_training_sentences,
    train_ner_model,
)

__all__ = [
    "BEST_MODIFIED_PT", "BEST_PT", "EMPTY_PROMPT", "EMPTY_PT", "ENSEMBLE_NAMES", "ENTITY_TYPES", "LABELS", "MASK",
    "MIX_PROMPTS", "MIX_PT", "NER_MODEL_NAME", "ONE_PROMPT", "ONE_PT", "PROMPTS_PER_TYPE", "SCORE_BATCH_SIZE",
    "SENTENCE_TYPES", "STRATEGY_GROUPS", "TRAINING_TEMPLATES", "WORST_MODIFIED_PT", "WORST_PT",
    "NerAcrossModels", "NerAudit", "NerAuditConfig", "NerModel", "NerTrainConfig", "TrainingSentence",
    "across_models", "assert_never_trained", "build_corpus", "candidate_names", "default_ner_dir", "detection_names",
    "entity_confidence", "entity_confidences", "fill", "generate_prompts", "is_trained", "iterative_removal",
    "leaked_names", "load_manifest", "load_ner_model", "manifest_names", "mix_prompt", "ner_audit",
    "ner_config_hash", "prompt_scores_figure", "prompt_tokens", "read_names", "read_training_sentences", "removals",
    "score_pairs", "split_names", "strategy_table", "train_ner_model",
]
