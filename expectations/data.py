"""GX suites for the data assets and the Dagster asset checks that run them.

Checks are blocking where bad rows would poison scores downstream (a malformed id, an empty
label, a counterfactual equal to the truth it is ranked against).
"""


import pandas as pd
from dagster import AssetCheckResult, AssetIn, asset_check

from assets.data import candidates, counterfactuals, property_table, subjects
from expectations.gx import check_result, gxe
from wikimem_platform.reference.cohorts import LESSER_KNOWN, WELL_KNOWN
from wikimem_platform.reference.counterfactuals import flag_truth_clashes
from wikimem_platform.wikidata.entities import LANGUAGE_CODE
from wikimem_platform.wikidata.extract import ALLOWED_DATATYPES, PID_PATTERN, QID_PATTERN

QID = QID_PATTERN.pattern
PID = PID_PATTERN.pattern
NON_EMPTY = r"\S"


def _id_and_label(id_column: str, pattern: str, label_column: str) -> list:
    return [
        gxe.ExpectColumnValuesToNotBeNull(column=id_column),
        gxe.ExpectColumnValuesToMatchRegex(column=id_column, regex=pattern),
        gxe.ExpectColumnValuesToNotBeNull(column=label_column),
        gxe.ExpectColumnValuesToMatchRegex(column=label_column, regex=NON_EMPTY),
    ]


def humans_suite() -> list:
    return [
        *_id_and_label("qid", QID, "label"),
        gxe.ExpectColumnValuesToBeUnique(column="qid"),
        gxe.ExpectColumnValuesToBeBetween(column="web_presence", min_value=0, max_value=1),
        gxe.ExpectColumnValuesToBeBetween(column="sitelinks", min_value=0),
    ]


def claims_suite(datatypes=ALLOWED_DATATYPES) -> list:
    return [
        *_id_and_label("qid", QID, "value_label"),
        gxe.ExpectColumnValuesToMatchRegex(column="property", regex=PID),
        gxe.ExpectColumnValuesToBeInSet(column="datatype", value_set=list(datatypes)),
        gxe.ExpectColumnValuesToNotBeNull(column="value"),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["qid", "property", "value"]),
    ]


def value_aliases_suite() -> list:
    return [
        gxe.ExpectColumnValuesToNotBeNull(column="value"),
        gxe.ExpectColumnValuesToMatchRegex(column="value", regex=QID),
        gxe.ExpectColumnValuesToBeUnique(column="value"),
        gxe.ExpectColumnValuesToNotBeNull(column="aliases"),
    ]


def entity_terms_suite() -> list:
    return [
        gxe.ExpectColumnValuesToNotBeNull(column="qid"),
        gxe.ExpectColumnValuesToMatchRegex(column="qid", regex=QID),
        gxe.ExpectColumnValuesToNotBeNull(column="language"),
        gxe.ExpectColumnValuesToMatchRegex(column="language", regex=LANGUAGE_CODE.pattern),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["qid", "language"]),
        gxe.ExpectColumnValuesToNotBeNull(column="aliases"),
    ]


def property_table_suite(datatypes=ALLOWED_DATATYPES) -> list:
    return [
        *_id_and_label("property", PID, "label"),
        gxe.ExpectColumnValuesToBeUnique(column="property"),
        gxe.ExpectColumnValuesToBeInSet(column="datatype", value_set=list(datatypes)),
        gxe.ExpectColumnValuesToBeBetween(column="n_humans", min_value=1),
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
    ]


def subjects_suite() -> list:
    return [
        *_id_and_label("qid", QID, "label"),
        gxe.ExpectColumnValuesToBeUnique(column="qid"),
        gxe.ExpectColumnValuesToBeInSet(column="cohort", value_set=[WELL_KNOWN, LESSER_KNOWN]),
        gxe.ExpectColumnValuesToNotBeNull(column="web_presence"),
        gxe.ExpectTableRowCountToBeBetween(min_value=2),
    ]


def counterfactuals_suite() -> list:
    return [
        *_id_and_label("human_qid", QID, "human_label"),
        gxe.ExpectColumnValuesToMatchRegex(column="property", regex=PID),
        gxe.ExpectColumnValuesToMatchRegex(column="value_label", regex=NON_EMPTY),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["property", "value"]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["property", "human_qid"]),
    ]


def counterfactual_counts_suite(per_property: int = 100) -> list:
    """On the per-property counts: every probed property can be ranked, none exceeds the cap."""
    return [gxe.ExpectColumnValuesToBeBetween(column="counterfactuals", min_value=1, max_value=per_property)]


def candidates_suite() -> list:
    return [
        *_id_and_label("subject_qid", QID, "value_label"),
        gxe.ExpectColumnValuesToMatchRegex(column="property", regex=PID),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["subject_qid", "property", "value"]),
        gxe.ExpectColumnValuesToBeInSet(column="clashes_with_truth", value_set=[False]),
    ]


def counterfactual_counts(property_table: pd.DataFrame, counterfactuals: pd.DataFrame) -> pd.DataFrame:
    """Counts per probed property, zero for a property that got none."""
    counts = counterfactuals.groupby("property").size()
    return pd.DataFrame(
        {"property": property_table["property"], "counterfactuals": property_table["property"].map(counts).fillna(0).astype(int)}
    )


@asset_check(asset="humans", blocking=True, description="QIDs, non-empty labels, unique subjects, web presence in [0, 1].")
def humans_check(humans: pd.DataFrame) -> AssetCheckResult:
    return check_result(humans, "humans", humans_suite())


@asset_check(asset="claims", blocking=True, description="Ids, datatypes in the allowed set, labelled values, no duplicates.")
def claims_check(claims: pd.DataFrame) -> AssetCheckResult:
    return check_result(claims, "claims", claims_suite())


@asset_check(asset="value_aliases", blocking=True, description="One row per value id (a QID), aliases present.")
def value_aliases_check(value_aliases: pd.DataFrame) -> AssetCheckResult:
    return check_result(value_aliases, "value_aliases", value_aliases_suite())


@asset_check(asset="entity_terms", blocking=True, description="One row per (QID, language code), aliases present.")
def entity_terms_check(entity_terms: pd.DataFrame) -> AssetCheckResult:
    return check_result(entity_terms, "entity_terms", entity_terms_suite())


@asset_check(asset=property_table, blocking=True, description="Property ids, labels, datatypes, usage.")
def property_table_check(property_table: pd.DataFrame) -> AssetCheckResult:
    return check_result(property_table, "property_table", property_table_suite())


@asset_check(asset=subjects, blocking=True, description="No duplicate subjects, known web presence, valid cohorts.")
def subjects_check(subjects: pd.DataFrame) -> AssetCheckResult:
    return check_result(subjects, "subjects", subjects_suite())


@asset_check(asset=counterfactuals, blocking=True, description="Ids and labels; values and humans distinct per property.")
def counterfactuals_check(counterfactuals: pd.DataFrame) -> AssetCheckResult:
    return check_result(counterfactuals, "counterfactuals", counterfactuals_suite())


@asset_check(
    asset=counterfactuals,
    blocking=True,
    additional_ins={"property_table": AssetIn("property_table")},
    description="Every probed property has between 1 and 100 counterfactuals.",
)
def counterfactual_counts_check(counterfactuals: pd.DataFrame, property_table: pd.DataFrame) -> AssetCheckResult:
    counts = counterfactual_counts(property_table, counterfactuals)
    return check_result(counts, "counterfactual_counts", counterfactual_counts_suite())


@asset_check(asset=candidates, blocking=True, description="No counterfactual equals a ground truth of its (subject, property).")
def candidates_check(candidates: pd.DataFrame) -> AssetCheckResult:
    return check_result(flag_truth_clashes(candidates), "candidates", candidates_suite())
