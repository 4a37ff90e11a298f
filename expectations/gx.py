"""Run a Great Expectations 1.x suite on a DataFrame and report it as a Dagster check result.

dagster-ge only supports GX < 1, so the validation is wrapped here: one ephemeral context per
process, a pandas data source, a whole-dataframe batch.
"""


from __future__ import annotations

import uuid
from functools import lru_cache
from typing import TYPE_CHECKING

import pandas as pd
from dagster import AssetCheckResult, AssetCheckSeverity, MetadataValue

if TYPE_CHECKING:
    import great_expectations as gx


class _Expectations:
    """`great_expectations.expectations`, imported on first use: every step process imports the
    code location, and only check steps need Great Expectations (1.4 s to import)."""

    def __getattr__(self, name: str):
        import great_expectations.expectations

        return getattr(great_expectations.expectations, name)


gxe = _Expectations()


@lru_cache(maxsize=1)
def _context():
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context


def validate_frame(frame: pd.DataFrame, suite_name: str, expectations: list) -> gx.core.ExpectationSuiteValidationResult:
    """Validate ``frame`` against ``expectations`` (GX expectation objects)."""
    import great_expectations as gx

    context = _context()
    name = f"{suite_name}-{uuid.uuid4().hex[:8]}"
    batch_definition = (
        context.data_sources.add_pandas(name).add_dataframe_asset(name="frame").add_batch_definition_whole_dataframe("all")
    )
    suite = context.suites.add(gx.ExpectationSuite(name=name, expectations=expectations))
    validation = context.validation_definitions.add(gx.ValidationDefinition(name=name, data=batch_definition, suite=suite))
    try:
        return validation.run(batch_parameters={"dataframe": frame})
    finally:
        context.validation_definitions.delete(name)
        context.suites.delete(name)
        context.data_sources.delete(name)


def check_result(
    frame: pd.DataFrame, suite_name: str, expectations: list, blocking: bool = True
) -> AssetCheckResult:
    """The Dagster check result of a GX validation, with per-expectation counts as metadata."""
    result = validate_frame(frame, suite_name, expectations)
    rows = []
    for item in result.results:
        config = item.expectation_config
        column = config.kwargs.get("column") or config.kwargs.get("column_list") or ""
        details = item.result or {}
        rows.append(
            {
                "expectation": config.type,
                "column": str(column),
                "success": bool(item.success),
                "unexpected": details.get("unexpected_count", details.get("observed_value", "")),
                "examples": ", ".join(map(str, (details.get("partial_unexpected_list") or [])[:5])),
            }
        )
    failed = [r for r in rows if not r["success"]]
    return AssetCheckResult(
        passed=bool(result.success),
        severity=AssetCheckSeverity.ERROR if blocking else AssetCheckSeverity.WARN,
        metadata={
            "rows_checked": len(frame),
            "expectations": len(rows),
            "failed_expectations": len(failed),
            "results": MetadataValue.md(pd.DataFrame(rows).to_markdown(index=False) if rows else "none"),
        },
    )
