"""Membership inference (CRM §3.3, §4.4; mimir's attacks), one sign convention everywhere:
HIGHER score = MORE LIKELY A MEMBER.

- `attacks`: the attacks as math on per-token statistics (`TokenStats`), no model needed;
- `neighbours`: neighbour texts for the neighbourhood attack (PII swaps, word perturbations);
- `model_pass`: the one model pass (`token_stats`) and `run_attacks`, every score per text;
- `evaluation`: AUROC with a bootstrap CI and TPR at low FPRs per attack;
- `blind`: the model-free bag-of-words baseline that tells whether the member / non-member
  split itself is shifted (then every attack's AUROC is suspect).

Everything public is importable from `wikimem_platform.mia` itself.
"""

from wikimem_platform.mia.attacks import (
    attack_scores,
    con_recall_score,
    DC_PDD_CAP,
    dc_pdd_score,
    DEFAULT_K,
    loss_score,
    lowercase_score,
    min_k_plus_plus_score,
    min_k_score,
    neighbourhood_score,
    recall_score,
    reference_score,
    rouge1_f1,
    samia_score,
    token_frequencies,
    token_stats_from_logprobs,
    TokenStats,
    zlib_score,
    zlib_total_score,
)
from wikimem_platform.mia.blind import bag_of_words_scores, BLIND_SHIFT_AUROC
from wikimem_platform.mia.evaluation import (
    auroc_figure,
    evaluate_attack,
    evaluate_attacks,
    evaluate_available,
    min_nonmembers,
    normalized_auroc,
    RATE_COLUMNS,
    TARGET_FPRS,
    too_few_nonmembers,
    tpr_at_fpr,
    tpr_column,
)
from wikimem_platform.mia.model_pass import (
    dc_pdd_frequencies,
    gradient_norms,
    mean_nlls,
    prefixed_mean_nlls,
    run_attacks,
    samia_scores,
    token_stats,
    unavailable_attacks,
)
from wikimem_platform.mia.neighbours import perturb_words, pii_neighbours, word_neighbours

__all__ = [
    "BLIND_SHIFT_AUROC",
    "DC_PDD_CAP",
    "DEFAULT_K",
    "RATE_COLUMNS",
    "TARGET_FPRS",
    "TokenStats",
    "attack_scores",
    "auroc_figure",
    "bag_of_words_scores",
    "con_recall_score",
    "dc_pdd_frequencies",
    "dc_pdd_score",
    "evaluate_attack",
    "evaluate_attacks",
    "evaluate_available",
    "gradient_norms",
    "loss_score",
    "lowercase_score",
    "mean_nlls",
    "min_k_plus_plus_score",
    "min_k_score",
    "min_nonmembers",
    "neighbourhood_score",
    "normalized_auroc",
    "perturb_words",
    "pii_neighbours",
    "prefixed_mean_nlls",
    "recall_score",
    "reference_score",
    "rouge1_f1",
    "run_attacks",
    "samia_score",
    "samia_scores",
    "token_frequencies",
    "token_stats",
    "unavailable_attacks",
    "token_stats_from_logprobs",
    "too_few_nonmembers",
    "tpr_at_fpr",
    "tpr_column",
    "word_neighbours",
    "zlib_score",
    "zlib_total_score",
]
