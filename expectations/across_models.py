"""Checks of the tables across releases: shares in [0, 100] %, one row per key, H(M=0) within the people counted."""

import pandas as pd
from dagster import AssetCheckResult, asset_check

from expectations.gx import check_result, gxe
from wikimem_platform.reports.across_models import RELEASE

PERCENT_COLUMNS = ("M_bar_pct", "strict_pct", "lenient_pct", "at_threshold_pct")


def table1_suite() -> list:
    return [
        gxe.ExpectCompoundColumnsToBeUnique(column_list=[RELEASE, "cohort"]),
        *[gxe.ExpectColumnValuesToBeBetween(column=c, min_value=0, max_value=100) for c in PERCENT_COLUMNS],
        gxe.ExpectColumnValuesToBeInSet(column="h_m0_within_subjects", value_set=[True]),
        gxe.ExpectColumnValuesToNotBeNull(column="cohort"),
    ]


def by_property_suite() -> list:
    return [
        gxe.ExpectCompoundColumnsToBeUnique(column_list=[RELEASE, "cohort", "property"]),
        gxe.ExpectColumnValuesToBeBetween(column="M_bar_pct", min_value=0, max_value=100),
        gxe.ExpectColumnValuesToBeBetween(column="n_pairs", min_value=1),
    ]


@asset_check(asset="memorization_across_models", blocking=True,
             description="One row per release and cohort, every share in [0, 100] %, H(M=0) <= people counted.")
def memorization_across_models_check(memorization_across_models: pd.DataFrame) -> AssetCheckResult:
    table = memorization_across_models.assign(
        h_m0_within_subjects=memorization_across_models["H_M0"] <= memorization_across_models["n_subjects"])
    return check_result(table, "memorization_across_models", table1_suite())


@asset_check(asset="memorization_by_property_across_models", blocking=True,
             description="One row per release, cohort and property; mean M in [0, 100] %.")
def memorization_by_property_across_models_check(memorization_by_property_across_models: pd.DataFrame) -> AssetCheckResult:
    return check_result(memorization_by_property_across_models, "memorization_by_property_across_models", by_property_suite())
