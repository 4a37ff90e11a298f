"""Checks of the wording-sensitivity table: one row per canary wording, AUCs in [0, 1]."""

import pandas as pd
from dagster import AssetCheckResult, asset_check

from assets.partitions import models_partitions
from assets.wording import wording_sensitivity
from expectations.gx import check_result, gxe
from wikimem_platform.vocabulary import CANARY_KINDS
from wikimem_platform.wikimem.wording import DETECTIONS, HALVES, WORDING_KEYS


def wording_suite(columns) -> list:
    scores = [c for d in DETECTIONS for c in (d, *(f"{d}_{h}" for h in HALVES)) if c in columns]
    return [
        gxe.ExpectCompoundColumnsToBeUnique(column_list=WORDING_KEYS),
        gxe.ExpectColumnValuesToBeInSet(column="kind", value_set=list(CANARY_KINDS)),
        gxe.ExpectColumnValuesToNotBeNull(column="template"),
        *[gxe.ExpectColumnValuesToBeBetween(column=c, min_value=0, max_value=1) for c in scores],
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
    ]


@asset_check(asset=wording_sensitivity, blocking=True, partitions_def=models_partitions,
             description="One row per canary wording, a known kind and its text, every AUC in [0, 1].")
def wording_sensitivity_check(wording_sensitivity: pd.DataFrame) -> AssetCheckResult:
    return check_result(wording_sensitivity, "wording_sensitivity", wording_suite(wording_sensitivity.columns))
