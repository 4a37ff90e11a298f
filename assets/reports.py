"""Compliance report per model release (group "reports", one `models` partition per release).

Wiring only: the forget set, figures and HTML live in wikimem_platform.reports.compliance. This module
collects what only Dagster knows — the materializations (run ids, data versions, ids) of every
upstream table — and hands them over as plain dicts for the lineage section.
"""

from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Optional

import dagster
import pandas as pd
from dagster import (
    AllPartitionMapping,
    AssetExecutionContext,
    AssetIn,
    AssetKey,
    AssetRecordsFilter,
    Config,
    MetadataValue,
    Output,
    asset,
)
from pydantic import Field

from assets.metadata import by_release, preview
from assets.partitions import models_partitions
from resources.scoring import RegistryResource, ScoringResource
from wikimem_platform.registry import record_fields, Status
from wikimem_platform.reports import compliance as reports
from wikimem_platform.storage import report_dir
from wikimem_platform.subject_requests.inquiry import fact_cues, ModelRef
from wikimem_platform.versions import source_version
from wikimem_platform.security.urls import redact_url
from wikimem_platform.unlearning.forget_sets import DEFAULT_FORGET_CRITERION, best_true_values, forget_set
from wikimem_platform.vocabulary import CRITERIA, DEFAULT_CRITERION, DEFAULT_CUE_TAU, M_THRESHOLD

GROUP = "reports"
REPO = Path(__file__).resolve().parent.parent
# A summary that was not (yet) computed for this release loads as None: "not computed" in the report.
OPTIONAL = {"allow_missing_partitions": True}


class ReportConfig(Config):
    criterion: Literal[CRITERIA] = Field(
        default=DEFAULT_CRITERION, description=f"Memorized = at_threshold (M >= {M_THRESHOLD}), lenient (any wording) or strict (all).")
    forget_criterion: Literal[CRITERIA] = Field(
        default=DEFAULT_FORGET_CRITERION, description="Which pairs enter the forget set.")
    alpha: float = Field(default=1.0, description="The memorization asset's alpha: picks the value the model prefers.")
    cue_tau: float = Field(default=DEFAULT_CUE_TAU, description="A fact is flagged as cued when the CRM cue of its canaries >= cue_tau.")


def upstream_lineage(context: AssetExecutionContext) -> list[dict]:
    """The latest materialization of every ancestor (this release's partition where partitioned)."""
    graph = context.job_def.asset_layer.asset_graph
    rows = []
    for key in sorted(graph.get_ancestor_asset_keys(context.asset_key), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        partition = context.partition_key if node.partitions_def is not None else None
        records = context.instance.fetch_materializations(
            AssetRecordsFilter(asset_key=key, asset_partitions=[partition] if partition else None), limit=1
        ).records
        if not records:
            rows.append({"asset": key.to_user_string(), "partition": partition, "status": "not materialized"})
            continue
        record = records[0]
        tags = record.asset_materialization.tags or {}
        rows.append({
            "asset": key.to_user_string(),
            "partition": partition,
            "materialization_id": record.storage_id,
            "run_id": record.run_id,
            "data_version": tags.get("dagster/data_version"),
            "code_version": tags.get("dagster/code_version"),
            "materialized_at": datetime.fromtimestamp(record.timestamp, UTC).isoformat(timespec="seconds"),
        })
    return rows


def run_lineage(context: AssetExecutionContext, subject: dict, settings: dict, **run) -> dict:
    """`compliance.lineage` with what only Dagster knows: the upstream materializations, the run
    id and job (and `run`'s other fields), the Dagster version."""
    return reports.lineage(subject, repo_dir=REPO, data_assets=upstream_lineage(context),
                           run={"run_id": context.run_id, "job": context.job_name, **run}, config=settings,
                           tools={"dagster_version": dagster.__version__})


def scores_fingerprint(context: AssetExecutionContext) -> str | None:
    """The model fingerprint the scores of this release were computed with (scores' metadata)."""
    records = context.instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey("scores"), asset_partitions=[context.partition_key]), limit=1
    ).records
    if not records:
        return None
    value = records[0].asset_materialization.metadata.get("model_fingerprint")
    return getattr(value, "value", value)


@asset(
    group_name=GROUP,
    partitions_def=models_partitions,
    ins={
        # Every release's memorization: this one's, and the others' for base vs instruct.
        "memorization": AssetIn(partition_mapping=AllPartitionMapping(), metadata=OPTIONAL),
        "crm_summary": AssetIn(metadata=OPTIONAL),
        "mia_summary": AssetIn(metadata=OPTIONAL),
        "eme_probe": AssetIn(metadata=OPTIONAL),
        "controlled_memorization": AssetIn(metadata=OPTIONAL),
        # Every release's wording scores: this one's, and the others' for Kendall τ between releases.
        "wording_sensitivity": AssetIn(partition_mapping=AllPartitionMapping(), metadata=OPTIONAL),
    },
    kinds={"html", "pandas"},
    code_version=source_version("wikimem_platform.reports.compliance", "wikimem_platform.subject_requests.inquiry", "wikimem_platform.eme",
                                "wikimem_platform.wikimem.wording", "wikimem_platform.wikimem.controlled_rates"),
)
def compliance_report(
    context: AssetExecutionContext,
    config: ReportConfig,
    scoring: ScoringResource,
    model_registry: RegistryResource,
    memorization,  # dict of releases; a bare DataFrame when only one release exists
    scores: pd.DataFrame,
    canaries: pd.DataFrame,
    property_table: pd.DataFrame,
    crm_summary: Optional[pd.DataFrame],
    mia_summary: Optional[pd.DataFrame],
    eme_probe: Optional[pd.DataFrame],
    controlled_memorization: Optional[pd.DataFrame],
    wording_sensitivity,  # dict of releases, a bare DataFrame when only one exists, or None
) -> Output[pd.DataFrame]:
    """HTML report + forget set (JSONL) + lineage for one release; the forget set is the table."""
    key = context.partition_key
    memorization = by_release(context, "memorization", memorization)
    wordings = by_release(context, "wording_sensitivity", wording_sensitivity)
    if key not in memorization:
        raise FileNotFoundError(f"no stored memorization for {key}: materialize scores and memorization first")
    registry = model_registry.registry()
    entry = registry.get(key)
    pairs = memorization[key]
    others = {}
    for other in registry.list():
        if other.key != key and other.key in memorization:
            ref = ModelRef.of(other)
            others[other.key] = ({"key": ref.key, "variant": ref.variant, "family": ref.family}, memorization[other.key])
    property_labels = dict(zip(property_table["property"], property_table["label"]))
    cues = fact_cues(canaries, pairs["subject_qid"].unique())
    forget = forget_set(
        key, pairs, best_true_values(scores, config.alpha), cues, property_labels,
        config.forget_criterion, config.cue_tau, controls=controlled_memorization,
    )
    run_config = context.run.run_config or {}
    settings = {"run_config": run_config, "report": config.model_dump(), "scoring": scoring.settings()}
    model = {
        **record_fields(entry, exclude={"id"}), "source": redact_url(entry.source), "key": key, "fingerprint": scores_fingerprint(context),
        "registered_at": entry.registered_at.isoformat(timespec="seconds"),
    }
    lineage = run_lineage(context, {"model": model}, settings, started_at=datetime.now(UTC).isoformat(timespec="seconds"))
    files = reports.write_report(
        reports.ReportInputs(
            model=model, pairs=pairs, forget=forget, property_labels=property_labels, others=others,
            crm=crm_summary, mia=mia_summary, eme=eme_probe, wordings=wordings, lineage=lineage, criterion=config.criterion,
            controlled=controlled_memorization,
            forget_criterion=config.forget_criterion,
        ),
        report_dir(context.instance.storage_directory(), key),
    )
    registry.set_status(key, Status.SCORED)
    context.log.info(f"Report for {key}: {files.html} ({files.summary})")
    return Output(
        forget,
        metadata={
            "report": MetadataValue.path(str(files.html)),
            "forget_set_jsonl": MetadataValue.path(str(files.forget_set)),
            "lineage_json": MetadataValue.path(str(files.lineage)),
            "config_hash": lineage["config_hash"][:16],
            "git_commit": str(lineage["code"]["git_commit"]),
            "model_fingerprint": str(model["fingerprint"]),
            "crm_summary": "included" if crm_summary is not None else "not computed",
            "mia_summary": "included" if mia_summary is not None else "not computed",
            "eme_probe": "included" if eme_probe is not None else "not computed",
            "controlled_memorization": "included" if controlled_memorization is not None else "not computed",
            "wording_sensitivity": "included" if key in wordings else "not computed",
            **files.summary,
            "forget_set": preview(forget[["subject_label", "property_label", "value_label", "M", "z_star", "cue_flag",
                                          "beats_controls", "p_controls"]]),
        },
    )
