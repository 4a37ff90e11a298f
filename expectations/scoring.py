"""GX suites and asset checks for the per-model scores and memorization results."""

import numpy as np
import pandas as pd
from dagster import AssetCheckResult, asset_check

from assets.partitions import models_partitions
from assets.scoring import controlled_memorization, memorization, scores
from expectations.gx import check_result, gxe
from wikimem_platform.vocabulary import N_SCORED_VARIANTS
from wikimem_platform.wikimem import controls

NLL_COLUMNS = ("nll_h", "nll_h0", "nll_similar_mean")


def scores_suite() -> list:
    return [
        *[gxe.ExpectColumnValuesToBeInSet(column=f"{c}_finite", value_set=[True]) for c in NLL_COLUMNS],
        *[gxe.ExpectColumnValuesToBeBetween(column=c, min_value=0) for c in NLL_COLUMNS],
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["subject_qid", "property", "variant_id", "value"]),
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
    ]


def scores_for_checks(scores: pd.DataFrame) -> pd.DataFrame:
    """NLLs with explicit finiteness flags (GX's between-check lets NaN through as 'missing')."""
    return scores[["subject_qid", "property", "variant_id", "value", *NLL_COLUMNS]].assign(
        **{f"{c}_finite": np.isfinite(scores[c].to_numpy(dtype=float)) for c in NLL_COLUMNS}
    )


def memorization_suite() -> list:
    return [
        gxe.ExpectColumnValuesToBeBetween(column="M", min_value=0, max_value=1),
        gxe.ExpectColumnValuesToBeBetween(column="rank_within_candidates", min_value=1, max_value=1),
        gxe.ExpectColumnValuesToBeInSet(column="variants_as_planned", value_set=[True]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["subject_qid", "property"]),
    ]


def memorization_for_checks(pairs: pd.DataFrame) -> pd.DataFrame:
    """rank_within_candidates: 1 where the summed-score rank of the truth lies within
    1..n_candidates (or, at top-logprobs access, has none because the truth left the server's top
    k: no evidence, not an error), else 0. variants_as_planned: every pair has the wordings its
    release's access scores (N_SCORED_VARIANTS; fewer at top-logprobs, `scoring.planned_variants`)."""
    within = pairs["summed_truth_rank"].between(1, pairs["n_candidates"])
    if "truth_censored" in pairs.columns:
        within |= pairs["summed_truth_rank"].isna() & pairs["truth_censored"]
    planned = pairs["n_variants_planned"] if "n_variants_planned" in pairs.columns else N_SCORED_VARIANTS
    return pairs.assign(rank_within_candidates=within.astype(int), variants_as_planned=pairs["n_variants"] == planned)


# partitions_def: a check run for one model release loads that release's table only.
@asset_check(asset=scores, blocking=True, partitions_def=models_partitions, description="Finite, non-negative NLLs; one row per (canary, candidate).")
def scores_check(scores: pd.DataFrame) -> AssetCheckResult:
    return check_result(scores_for_checks(scores), "scores", scores_suite())


@asset_check(asset=memorization, blocking=True, partitions_def=models_partitions, description=f"M in [0, 1], ranks within 1..n, {N_SCORED_VARIANTS} variants per pair (fewer where the access "
                         "scores fewer wordings).")
def memorization_check(memorization: pd.DataFrame) -> AssetCheckResult:
    return check_result(memorization_for_checks(memorization), "memorization", memorization_suite())


def controlled_memorization_suite() -> list:
    return [
        gxe.ExpectColumnValuesToBeInSet(column="verdict", value_set=list(controls.VERDICTS)),
        gxe.ExpectColumnValuesToBeBetween(column="p_value", min_value=0, max_value=1, strict_min=True),
        gxe.ExpectColumnValuesToBeInSet(column="evidence_within_alpha", value_set=[True]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["subject_qid", "property"]),
    ]


def controlled_for_checks(pairs: pd.DataFrame) -> pd.DataFrame:
    """True where a fact that beats the controls has p <= alpha and at least one control (a verdict
    other than "no evidence" without a p-value would be a claim nothing measured)."""
    beats = pairs["verdict"].isin([controls.MEMORIZED, controls.WEAK])
    within = ~beats | ((pairs["n_controls"].fillna(0) > 0) & (pairs["p_value"] <= pairs["alpha"]))
    return pairs[["subject_qid", "property", "verdict", "p_value"]].assign(evidence_within_alpha=within.astype(bool))


@asset_check(asset=controlled_memorization, blocking=True, partitions_def=models_partitions,
             description="Verdicts from the controls' vocabulary; p in (0, 1]; a fact beats the controls only at p <= alpha.")
def controlled_memorization_check(controlled_memorization: pd.DataFrame) -> AssetCheckResult:
    return check_result(controlled_for_checks(controlled_memorization), "controlled_memorization",
                        controlled_memorization_suite())
