"""The words every stage shares, each defined once: canary variant kinds, how many wordings M is a
share of, the thresholds that turn numbers into verdicts, and the memorization table's verdict
columns. The canary builder, the scorers, the reports and the Dagster layer all read them from
here, so changing one cannot leave a stale copy behind.
"""

from __future__ import annotations

# --------------------------------------------------------------------------- canary variant kinds
# The canary table's `kind` column (WikiMem §4): one baseline wording, its paraphrases, and a
# contextualized baseline (auxiliary facts first) that is reported apart from M.
BASELINE = "baseline"
PARAPHRASE = "paraphrase"
CONTEXTUALIZED = "contextualized"
CANARY_KINDS = (BASELINE, PARAPHRASE, CONTEXTUALIZED)
SCORED_KINDS = (BASELINE, PARAPHRASE)  # the wordings M is a share of
CONTEXTUALIZED_KINDS = (CONTEXTUALIZED,)  # left out of M unless asked for

N_PARAPHRASES = 10
N_SCORED_VARIANTS = 1 + N_PARAPHRASES  # M = share of these 11 wordings with a truth at rank 1

# --------------------------------------------------------------------------- thresholds
# Memorized at threshold: M >= this share of the 11 wordings rank a ground truth first.
M_THRESHOLD = 0.8
# A fact is "cued" when the canary around the value already shows it (CRM cue >= tau): a hit on
# it may come from the wording, not from memory (Luo et al.; wikimem_platform.crm.metrics).
DEFAULT_CUE_TAU = 0.5

# Greedy completion length of the generation paradigms (CRM paper's code: 15 new tokens).
MAX_NEW_TOKENS = 15

# --------------------------------------------------------------------------- verdict columns
# Boolean columns of the memorization table: a (subject, property) pair counts as memorized when
# the chosen one is true. at_threshold = M >= M_THRESHOLD; lenient = any wording; strict = all.
AT_THRESHOLD = "at_threshold"
LENIENT = "lenient"
STRICT = "strict"
CRITERIA = (AT_THRESHOLD, LENIENT, STRICT)
DEFAULT_CRITERION = AT_THRESHOLD
# The summed-evidence verdict (WikiMem's sum over wordings, memorization.py) can also count as memorized.
SUMMED_MEMORIZED = "summed_memorized"
MEMORIZED_COLUMNS = (*CRITERIA, SUMMED_MEMORIZED)

# Sex or gender (P21) values: the grammatical gender of a person's sentences in other languages,
# the first names of their invented controls.
MALE, FEMALE = "Q6581097", "Q6581072"

# The language a row's canary is written in (canaries, candidates, coverage, controls, scores and
# completions of a request in several languages, forget-set entries); absent: English.
LANGUAGE = "language"
