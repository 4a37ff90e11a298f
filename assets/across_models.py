"""WikiMem's Table 1 and Fig. 1 across every audited release, and the cross-model HTML report.

Wiring only: the tables, figures and HTML live in wikimem_platform.reports.across_models.

- `memorization_across_models` (group "across_models"): one row per (release, cohort) — mean M,
  strict / lenient / at-threshold shares, mean z*, H_{M=0} — with the release's family and
  variant from the registry.
- `memorization_by_property_across_models`: mean M per (release, cohort, property) on the pairs
  every release audited: the paper's Fig. 1 (base vs instruct), plotted in the UI.
- `across_models_report`: both, and the wording τ between releases, as one HTML report.
Refreshed after every successful audit (sensors/across_models.py).
"""

from datetime import UTC, datetime
from typing import Optional

import pandas as pd
from dagster import (
    AllPartitionMapping,
    AssetExecutionContext,
    AssetIn,
    AssetOut,
    MetadataValue,
    Output,
    asset,
    multi_asset,
)

from assets.metadata import by_release, plot_path, preview
from assets.wording import ACROSS_MODELS_GROUP
from resources.scoring import RegistryResource
from wikimem_platform.reports import across_models
from wikimem_platform.versions import source_version
from wikimem_platform.wikimem import wording

CODE_VERSION = source_version("wikimem_platform.reports.across_models", "wikimem_platform.wikimem.wording",
                              "wikimem_platform.wikimem.controlled_rates")


def _releases(model_registry: RegistryResource) -> pd.DataFrame:
    entries = model_registry.registry().list()
    return pd.DataFrame([{"key": e.key, "family": e.family, "variant": e.variant, "parameter_count": e.parameter_count}
                         for e in entries], columns=["key", "family", "variant", "parameter_count"])


@multi_asset(
    outs={
        "memorization_across_models": AssetOut(
            group_name=ACROSS_MODELS_GROUP, kinds={"pandas", "plotly"},
            description="Table 1 across releases: mean M, strict / lenient / threshold shares, mean z*, H(M=0) per cohort."),
        "cohort_gap_across_models": AssetOut(
            group_name=ACROSS_MODELS_GROUP, kinds={"pandas"},
            description="Well-known minus lesser-known share of facts memorized, without and with controls, with bootstrap CIs."),
        "memorization_by_property_across_models": AssetOut(
            group_name=ACROSS_MODELS_GROUP, kinds={"pandas", "plotly"},
            description="Fig. 1: mean M per property, release (base / instruct) and cohort, on the pairs all releases audited."),
    },
    ins={"memorization": AssetIn(partition_mapping=AllPartitionMapping(), metadata={"allow_missing_partitions": True}),
         "controlled_memorization": AssetIn(partition_mapping=AllPartitionMapping(), metadata={"allow_missing_partitions": True})},
    code_version=CODE_VERSION,
)
def memorization_across_models(
    context: AssetExecutionContext, model_registry: RegistryResource, memorization, controlled_memorization,
    property_table: pd.DataFrame,
):
    """Table 1 and Fig. 1 of the paper over every release with a stored memorization table; Table 1
    and the cohort gap also with controls, for releases with a stored controlled_memorization."""
    per_release = by_release(context, "memorization", memorization)
    controlled = by_release(context, "controlled_memorization", controlled_memorization)
    releases = _releases(model_registry)
    labels = dict(zip(property_table["property"], property_table["label"]))
    table = across_models.table1(per_release, releases, controlled=controlled)
    gaps = across_models.cohort_gaps(controlled)
    rates = across_models.property_rates(per_release, releases, labels)
    context.log.info(f"Table 1 over {len(per_release)} release(s): {len(table)} rows")
    yield Output(table, "memorization_across_models", metadata={
        "releases": len(per_release),
        "table_1": MetadataValue.md(across_models.table1_paper_layout(table).round(2).to_markdown(index=False))
        if len(table) else MetadataValue.md("no release has memorization results"),
        "all_measures": preview(table.round(2), rows=50),
        "plot": MetadataValue.path(plot_path(context, ACROSS_MODELS_GROUP, "table_1", across_models.table1_figure(table))),
    })
    yield Output(gaps, "cohort_gap_across_models", metadata={
        "releases_with_controls": len(controlled),
        "gaps": MetadataValue.md(gaps.round(2).to_markdown(index=False) if len(gaps)
                                 else "no release has controls for both cohorts"),
    })
    yield Output(rates, "memorization_by_property_across_models", metadata={
        "rows": len(rates),
        "pairs_every_release_audited": len(across_models.common_pairs(per_release)),
        "plot": MetadataValue.path(plot_path(context, ACROSS_MODELS_GROUP, "fig_1", across_models.property_figure(rates))),
    })


@asset(
    group_name=ACROSS_MODELS_GROUP,
    kinds={"html"},
    ins={"wording_sensitivity_across_models": AssetIn(metadata={"allow_missing_partitions": True})},
    code_version=CODE_VERSION,
)
def across_models_report(
    context: AssetExecutionContext,
    memorization_across_models: pd.DataFrame,
    memorization_by_property_across_models: pd.DataFrame,
    cohort_gap_across_models: pd.DataFrame,
    wording_sensitivity_across_models: Optional[pd.DataFrame],
) -> Output[pd.DataFrame]:
    """The cross-model HTML report; the table is Table 1 in the paper's layout (what it shows first)."""
    report = across_models.AcrossModelsReport(
        memorization_across_models, memorization_by_property_across_models,
        wording.kendall_between_releases(wording_sensitivity_across_models), gaps=cohort_gap_across_models,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"))
    path = across_models.write_report(report, across_models.report_dir(context.instance.storage_directory()))
    context.log.info(f"Cross-model report: {path}")
    paper_layout = across_models.table1_paper_layout(memorization_across_models)
    return Output(paper_layout, metadata={
        "report": MetadataValue.path(str(path)),
        "releases": len(paper_layout),
    })
