"""Tables across releases, refreshed after each release's audit.

`across_models_sensor` launches the `across_models` job once per successful audit run (run_key =
that run's id), so the cross-release tables always include the newest results without anyone
remembering to rebuild them.
"""

from dagster import (
    AssetSelection,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunStatusSensorContext,
    define_asset_job,
    run_status_sensor,
)

from assets.wording import ACROSS_MODELS_GROUP
from sensors.registry import AUDIT_JOBS, SENSOR_INTERVAL_SECONDS

across_models_job = define_asset_job(
    "across_models",
    selection=AssetSelection.groups(ACROSS_MODELS_GROUP),
    description="Tables across every audited release: Table 1 and Fig. 1 (memorization per cohort and property), wording sensitivity and Kendall τ between releases, the cross-model report.",
)


@run_status_sensor(
    run_status=DagsterRunStatus.SUCCESS,
    monitored_jobs=AUDIT_JOBS,
    request_job=across_models_job,
    minimum_interval_seconds=SENSOR_INTERVAL_SECONDS,
    default_status=DefaultSensorStatus.RUNNING,
    description="Rebuilds the cross-release tables after each successful audit.",
)
def across_models_sensor(context: RunStatusSensorContext):
    audited = context.dagster_run.tags.get("wikimem/model", "")
    return RunRequest(run_key=f"after-{context.dagster_run.run_id}", tags={"wikimem/after": audited})
