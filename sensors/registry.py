"""The registry sensor, the periodic re-audit schedule and the jobs they launch.

- `model_registry_sensor` polls the model registry (default running, every
  $WIKIMEM_SENSOR_INTERVAL seconds, 10 by default). Each new release (name@revision) gets a
  `models` partition and one audit run (scoring, planted validation, summaries, report) with run_key = the release
  key, so it is audited exactly once; a new revision of a known model is a new key, hence a new
  audit. On an instance whose reference data (groups data and canaries) was never materialized,
  the first release's run materializes it too and later releases wait for it.
- A release served at generation access (an endpoint that gives completions only) gets its
  partition but no audit run: the cohort audit ranks candidates by log-probabilities, which it
  does not give; it is audited through data-subject requests (their completions, read against
  invented controls).
- A partition that already exists when its release is first seen (added by `wikimem demo` or by
  hand) is adopted without a run: whoever added it audits it.
- A removed release: nothing is deleted. Its partition, results and reports stay as the record
  of what was audited; the schedule stops re-auditing it (it walks the registry). Registering
  the same name@revision again is the same release and is not re-audited automatically.
- `model_audit_failure_sensor` marks a release "failed" in the registry when its audit run fails
  (`wikimem models list` shows it); the next successful audit marks it "scored" again.
- `model_reaudit_schedule` re-audits every registered release ($WIKIMEM_REAUDIT_CRON, weekly by
  default: Mondays 03:00 UTC). The scores asset keeps finished shards under a hash of their
  inputs, model fingerprint and settings, so an unchanged release re-scores nothing.

Run config for these runs: the YAML (or JSON) file $WIKIMEM_AUDIT_CONFIG, else
$DAGSTER_HOME/wikimem_audit.yaml if it exists, else every asset's defaults (a full audit).
"""

import json
from pathlib import Path

import yaml
from dagster import (
    AssetChecksDefinition,
    AssetsDefinition,
    AssetSelection,
    DagsterInstance,
    DagsterRunStatus,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    RunFailureSensorContext,
    RunRequest,
    RunsFilter,
    ScheduleEvaluationContext,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    define_asset_job,
    run_failure_sensor,
    schedule,
    sensor,
)

from assets import canaries as canary_assets
from assets import data as data_assets
from assets import ner as ner_assets
from assets import requests as request_assets
from assets.partitions import models_partitions
from resources.placement import default_execution, endpoint_tags, ensure_lm_pool, LM_POOL
from resources.scoring import RegistryResource
from wikimem_platform.lm.endpoint import GENERATION
from wikimem_platform.registry import Status, Task
from wikimem_platform.settings import DEFAULT_REAUDIT_CRON, get_settings, Settings  # noqa: F401 (DEFAULT_REAUDIT_CRON: the default, named here for tests)

MODEL_GROUPS = ("scoring", "validation", "summaries", "probes", "reports")  # validation: planted models only
NER_GROUPS = ("ner",)  # token-classification releases: their own audit, no reference data needed
REFERENCE_GROUPS = ("data", "canaries")
AUDIT_CONFIG_ENV = Settings.env_name("audit_config")
AUDIT_CONFIG_FILE = "wikimem_audit.yaml"
SENSOR_INTERVAL_ENV = Settings.env_name("sensor_interval")
REAUDIT_CRON_ENV = Settings.env_name("reaudit_cron")
IN_FLIGHT = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]

model_audit_job = define_asset_job(
    "model_audit",
    selection=AssetSelection.groups(*MODEL_GROUPS),
    description="Audit one model release: scores, memorization, CRM/MIA summaries, EME probe, compliance report.",
)
model_audit_with_reference_data_job = define_asset_job(
    "model_audit_with_reference_data",
    selection=AssetSelection.groups(*REFERENCE_GROUPS, *MODEL_GROUPS),
    description="The first audit on a fresh instance: the Wikidata tables and canaries, then one release.",
)
ner_audit_job = define_asset_job(
    "ner_audit",
    selection=AssetSelection.groups(*NER_GROUPS),
    description="Audit one NER (token-classification) release: M-MEM of every prompt, Δ, σ and strategies.",
)

AUDIT_JOBS = [model_audit_job, model_audit_with_reference_data_job, ner_audit_job]
SENSOR_INTERVAL_SECONDS = get_settings().sensor_interval



def _asset_defs(*modules) -> tuple[AssetsDefinition, ...]:
    """The assets defined in these modules (a tuple: the code location collects module-level lists)."""
    return tuple(
        value for module in modules for value in vars(module).values()
        if isinstance(value, AssetsDefinition) and not isinstance(value, AssetChecksDefinition)
    )


REFERENCE_KEYS = sorted({key for a in _asset_defs(data_assets, canary_assets) for key in a.keys}, key=lambda k: k.to_user_string())
REFERENCE_OPS = frozenset(a.node_def.name for a in _asset_defs(data_assets, canary_assets))
REQUEST_OPS = frozenset(a.node_def.name for a in _asset_defs(request_assets))
REQUEST_JOB_NAME = "request_audit"
NER_OPS = frozenset(a.node_def.name for a in _asset_defs(ner_assets) if set(a.group_names_by_key.values()) <= set(NER_GROUPS))


def audit_config_path() -> Path | None:
    """The run-config file for sensor and schedule runs, if any."""
    settings = get_settings()
    if settings.audit_config:
        path = settings.audit_config
        if not path.is_file():
            raise FileNotFoundError(f"${AUDIT_CONFIG_ENV} points to {path}, which does not exist")
        return path
    if settings.dagster_home:  # only a DAGSTER_HOME that is set (the one Dagster runs on), not the CLI's default
        path = settings.dagster_home / AUDIT_CONFIG_FILE
        return path if path.is_file() else None
    return None


def run_config_for(job_name: str) -> dict:
    """The audit run config, keeping only the entries of the ops this job runs (one file configures
    the reference data, the model audits and the request audits)."""
    path = audit_config_path()
    config = {**default_execution(), **((yaml.safe_load(path.read_text()) or {}) if path else {})}
    if "ops" not in config:
        return config
    if job_name == REQUEST_JOB_NAME:
        keep = lambda op: op in REQUEST_OPS  # noqa: E731
    elif job_name == ner_audit_job.name:
        keep = lambda op: op in NER_OPS  # noqa: E731
    elif job_name == model_audit_job.name:
        keep = lambda op: op not in REFERENCE_OPS and op not in REQUEST_OPS and op not in NER_OPS  # noqa: E731
    else:
        keep = lambda op: op not in REQUEST_OPS and op not in NER_OPS  # noqa: E731
    return {**config, "ops": {op: c for op, c in config["ops"].items() if keep(op)}}


def reference_data_ready(instance: DagsterInstance) -> bool:
    """Every table of the data and canaries groups has been materialized at least once."""
    return all(instance.get_latest_materialization_event(key) is not None for key in REFERENCE_KEYS)


def _audit_request(entry, job_name: str, trigger: str, run_key: str) -> RunRequest:
    return RunRequest(
        run_key=run_key,
        partition_key=entry.key,
        job_name=job_name,
        run_config=run_config_for(job_name),
        tags={"wikimem/model": entry.key, "wikimem/trigger": trigger, **endpoint_tags([entry])},
    )


@sensor(
    jobs=AUDIT_JOBS,
    minimum_interval_seconds=SENSOR_INTERVAL_SECONDS,
    default_status=DefaultSensorStatus.RUNNING,
    description="Adds a `models` partition and launches one audit run per new registry entry (name@revision).",
)
def model_registry_sensor(context: SensorEvaluationContext, model_registry: RegistryResource):
    handled = set(json.loads(context.cursor)) if context.cursor else set()
    entries = model_registry.registry().list()
    registered = [entry.key for entry in entries]
    ner_keys = {entry.key for entry in entries if entry.task == Task.TOKEN_CLASSIFICATION}
    completions_only = {entry.key for entry in entries if entry.access == GENERATION}
    partitions = set(context.instance.get_dynamic_partitions(models_partitions.name))
    adopted = [key for key in registered if key not in handled and key in partitions]
    new = [key for key in registered if key not in handled and key not in partitions]
    new_ner = [key for key in new if key in ner_keys]  # NER audits read no reference table
    new_said = [key for key in new if key in completions_only]  # partition, no audit run
    new_causal = [key for key in new if key not in ner_keys and key not in completions_only]
    launch, job, waiting = new_causal, model_audit_job, []
    if new_causal and not reference_data_ready(context.instance):
        in_flight = context.instance.get_runs(
            RunsFilter(job_name=model_audit_with_reference_data_job.name, statuses=IN_FLIGHT), limit=1
        )
        # One run builds the reference tables; the other releases wait for it (no two runs
        # write the same tables at once).
        launch, job = ([] if in_flight else new_causal[:1]), model_audit_with_reference_data_job
        waiting = [key for key in new_causal if key not in launch]
    for key in adopted:
        context.log.info(f"{key}: partition already exists, adopted without a run")
    for key in new_said:
        context.log.info(f"{key}: served at generation access (no log-probabilities): no cohort audit run; "
                         "data-subject requests audit it through its completions")
    if waiting:
        context.log.info(f"waiting for the reference data before auditing {', '.join(waiting)}")
    cursor = json.dumps(sorted((handled | set(adopted) | set(launch) | set(new_ner) | set(new_said)) & set(registered)))
    if not launch and not new_ner and not new_said:
        reason = f"waiting for the reference data run ({len(waiting)} release(s) pending)" if waiting else "no new release in the registry"
        return SensorResult(skip_reason=reason, cursor=cursor)
    by_key = {entry.key: entry for entry in entries}
    requests = [_audit_request(by_key[key], job.name, "registry", run_key=key) for key in launch]
    requests += [_audit_request(by_key[key], ner_audit_job.name, "registry", run_key=key) for key in new_ner]
    if ensure_lm_pool(context.instance):  # before these runs are queued (see ensure_lm_pool)
        context.log.info(f"pool '{LM_POOL}' given the instance's default limit")
    return SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[models_partitions.build_add_request([*launch, *new_ner, *new_said])],
        cursor=cursor,
    )


@schedule(
    job=model_audit_job,
    cron_schedule=get_settings().reaudit_cron,
    execution_timezone="UTC",
    default_status=DefaultScheduleStatus.RUNNING,
    description="Re-audits every registered release; unchanged shards are reused, not re-scored.",
)
def model_reaudit_schedule(context: ScheduleEvaluationContext, model_registry: RegistryResource):
    partitions = set(context.instance.get_dynamic_partitions(models_partitions.name))
    # NER releases are not re-audited on a schedule: a fine-tuned NER model is fixed (no shards to
    # refresh); register a new revision to audit it again.
    entries = [entry for entry in model_registry.registry().list()
               if entry.key in partitions and entry.task == Task.CAUSAL_LM and entry.access != GENERATION]
    if not entries:
        return SkipReason("no registered release has a partition yet")
    if not reference_data_ready(context.instance):
        return SkipReason("the reference data (groups data, canaries) was never materialized")
    when = context.scheduled_execution_time
    stamp = when.strftime("%Y-%m-%dT%H:%M") if when else "manual"
    return [_audit_request(entry, model_audit_job.name, "schedule", run_key=f"{entry.key}:{stamp}") for entry in entries]


@run_failure_sensor(
    monitored_jobs=AUDIT_JOBS,
    minimum_interval_seconds=SENSOR_INTERVAL_SECONDS,
    default_status=DefaultSensorStatus.RUNNING,
    description="Marks a release 'failed' in the model registry when its audit run fails.",
)
def model_audit_failure_sensor(context: RunFailureSensorContext, model_registry: RegistryResource):
    run = context.dagster_run
    key = run.tags.get("wikimem/model") or run.tags.get("dagster/partition")
    if not key:
        return
    try:
        model_registry.registry().set_status(key, Status.FAILED)
    except KeyError:  # removed from the registry since the run started: nothing to mark
        context.log.info(f"{key}: audit run {run.run_id} failed, release no longer registered")
        return
    context.log.info(f"{key}: audit run {run.run_id} failed, marked failed in the registry")
