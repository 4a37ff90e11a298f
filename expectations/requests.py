"""Checks of the data-subject request assets: the legal deadline, the scores and the answer."""

from datetime import UTC, datetime

import pandas as pd
from dagster import AssetCheckExecutionContext, AssetCheckResult, AssetCheckSeverity, asset_check

from assets.partitions import requests_partitions
from expectations.gx import check_result, gxe
from expectations.scoring import scores_for_checks, scores_suite
from resources.scoring import RegistryResource
from wikimem_platform.subject_requests.answer import VERDICT_ORDER
from wikimem_platform.vocabulary import LANGUAGE
from wikimem_platform.subject_requests.intake import deadline_state, DEADLINE_WARNING_DAYS

SEVERITY = {"warn": AssetCheckSeverity.WARN, "fail": AssetCheckSeverity.ERROR, "ok": AssetCheckSeverity.WARN}


def deadline_result(state) -> AssetCheckResult:
    """ok -> passed; warn -> not passed, WARN; fail -> not passed, ERROR."""
    return AssetCheckResult(
        passed=state.state == "ok", severity=SEVERITY[state.state],
        metadata={"state": state.state, "days_left": round(state.days_left, 2), "message": state.message},
        description=state.message,
    )


@asset_check(
    asset="request_subject", partitions_def=requests_partitions, blocking=False,
    description=f"Art. 12(3): warns when an open request is within {DEADLINE_WARNING_DAYS} days of its due date, fails past it.",
)
def request_deadline_check(context: AssetCheckExecutionContext, model_registry: RegistryResource) -> AssetCheckResult:
    request = model_registry.requests().get(context.partition_key)
    return deadline_result(deadline_state(request, datetime.now(UTC)))


@asset_check(asset="request_scores", partitions_def=requests_partitions, blocking=True,
             description="Finite, non-negative NLLs; one row per (release, canary, candidate[, language]).")
def request_scores_check(request_scores: pd.DataFrame) -> AssetCheckResult:
    if request_scores.empty:  # every release failed: the answer says so, nothing to check here
        return AssetCheckResult(passed=True, metadata={"rows_checked": 0})
    languages = [LANGUAGE] if LANGUAGE in request_scores else []  # a request in several languages
    frame = scores_for_checks(request_scores).assign(model=request_scores["model"],
                                                     **{c: request_scores[c] for c in languages})
    suite = [e for e in scores_suite() if not isinstance(e, gxe.ExpectCompoundColumnsToBeUnique)]
    suite.append(gxe.ExpectCompoundColumnsToBeUnique(
        column_list=["model", "subject_qid", "property", "variant_id", "value", *languages]))
    return check_result(frame, "request_scores", suite)


def answer_suite(languages: bool = False) -> list:
    return [
        gxe.ExpectColumnValuesToBeInSet(column="verdict", value_set=list(VERDICT_ORDER)),
        gxe.ExpectColumnValuesToBeBetween(column="M", min_value=0, max_value=1),
        gxe.ExpectColumnValuesToBeBetween(column="n_candidates", min_value=2),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["model", "property", *([LANGUAGE] if languages else [])]),
    ]


@asset_check(asset="request_answer", partitions_def=requests_partitions, blocking=True,
             description="Verdicts from the allowed set, M in [0, 1], one row per (release, property[, language]).")
def request_answer_check(request_answer: pd.DataFrame) -> AssetCheckResult:
    if request_answer.empty:
        return AssetCheckResult(passed=True, metadata={"rows_checked": 0})
    languages = LANGUAGE in request_answer
    columns = ["model", "property", "verdict", "M", "n_candidates", *([LANGUAGE] if languages else [])]
    return check_result(request_answer[columns], "request_answer", answer_suite(languages))
