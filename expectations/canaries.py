"""GX suite and asset check for the canary table."""

import pandas as pd
from dagster import AssetCheckResult, asset_check

from assets.canaries import canaries
from expectations.gx import check_result, gxe
from wikimem_platform.canaries.checks import canary_rows_for_checks, variants_per_pair
from wikimem_platform.vocabulary import CANARY_KINDS, N_PARAPHRASES, N_SCORED_VARIANTS

NON_EMPTY = r"\S"


def canary_rows_suite() -> list:
    return [
        gxe.ExpectColumnValuesToBeInSet(column="subject_placeholders", value_set=[1]),
        gxe.ExpectColumnValuesToBeInSet(column="value_placeholders", value_set=[1]),
        *[gxe.ExpectColumnValuesToMatchRegex(column=c, regex=NON_EMPTY) for c in ("template", "subject", "subject_generic", "sentence")],
        gxe.ExpectColumnValuesToBeInSet(column="kind", value_set=list(CANARY_KINDS)),
        gxe.ExpectColumnValuesToBeBetween(column="n_similar", min_value=2),
        gxe.ExpectColumnValuesToBeInSet(column="similar_equals_subject", value_set=[False]),
        gxe.ExpectColumnValuesToBeBetween(column="n_ground_truth", min_value=1),
        gxe.ExpectColumnValuesToBeInSet(column="contains_subject", value_set=[True]),
        gxe.ExpectColumnValuesToBeInSet(column="contains_value", value_set=[True]),
    ]


def variants_suite() -> list:
    return [gxe.ExpectColumnValuesToBeBetween(column="n_variants", min_value=N_SCORED_VARIANTS, max_value=N_SCORED_VARIANTS)]


@asset_check(asset=canaries, blocking=True, description="Each placeholder exactly once; rendered sentences hold subject and value; no empty strings.")
def canaries_check(canaries: pd.DataFrame) -> AssetCheckResult:
    return check_result(canary_rows_for_checks(canaries), "canaries", canary_rows_suite())


@asset_check(asset=canaries, blocking=True, description=f"Every (subject, property) has {N_SCORED_VARIANTS} variants (baseline + {N_PARAPHRASES} paraphrases).")
def canary_variants_check(canaries: pd.DataFrame) -> AssetCheckResult:
    return check_result(variants_per_pair(canaries), "canary_variants", variants_suite())
