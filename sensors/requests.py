"""The data-subject request sensor, the job it launches and the failure sensor.

- `subject_request_sensor` (default running, every $WIKIMEM_SENSOR_INTERVAL seconds) turns each
  new request into one `requests` partition and one run of `request_audit` (run key = the
  request id) and marks the request "queued" (its first step marks it "auditing" once the run
  starts). Requests wait (status "received") while no
  model is registered or the reference data (groups data, canaries) was never materialized.
  "New" is what the cursor has not recorded, "received" or "queued": a daemon killed after an
  evaluation marked requests "queued" but before it stored that tick's cursor and runs leaves
  them "queued" with no run; the next evaluation asks again and Dagster's run-key check keeps
  the ones whose run was created to that one run.
- When a new release is registered, every open request (not yet answered) is audited again,
  on every release, unless its run still waits in the queue (it reads the registry when it
  starts, so it audits the new release already: a second run would answer it twice): the older releases' scores come back from the shards and sentence cache.
  When it is a new revision of a model already registered (e.g. after unlearning), answered
  erasure requests are audited again too: their answer then verifies the erasure.
- `request_audit_failure_sensor` marks a request "failed" when its run fails; the answer asset
  marks it "answered"; `request_audit_canceled_sensor` marks it "interrupted" when its run is
  canceled (Terminate in the UI, `wikimem request remove`): `wikimem request run ID` audits it again.
"""

import json

from dagster import (
    AssetKey,
    AssetRecordsFilter,
    AssetSelection,
    DagsterRunStatus,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunFailureSensorContext,
    RunStatusSensorContext,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SensorResult,
    define_asset_job,
    run_failure_sensor,
    run_status_sensor,
    sensor,
)

from assets.partitions import requests_partitions
from assets.requests import GROUP
from resources.placement import endpoint_tags, ensure_lm_pool, LM_POOL
from resources.scoring import RegistryResource
from sensors.registry import (
    REQUEST_JOB_NAME,
    SENSOR_INTERVAL_SECONDS,
    reference_data_ready,
    run_config_for,
)
from wikimem_platform.registry import split_key
from wikimem_platform.subject_requests.intake import RequestKind, RequestStatus

# The tag Dagster's run retries put on a failed run it will launch again (dagster._core.storage.tags).
WILL_RETRY_TAG = "dagster/will_retry"

request_audit_job = define_asset_job(
    REQUEST_JOB_NAME,
    selection=AssetSelection.groups(GROUP),
    partitions_def=requests_partitions,
    description="Audit one data-subject request on every registered release and write the answer.",
)


def cohort_audit_done(instance, release_key: str) -> bool:
    """Whether the release's memorization (its cohort audit) has been materialized."""
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey("memorization"), asset_partitions=[release_key]), limit=1
    ).records
    return bool(records)


def queued_request_ids(instance) -> set[str]:
    """Requests whose audit run has not started yet (it will read every release registered by then)."""
    runs = instance.get_runs(RunsFilter(job_name=REQUEST_JOB_NAME, statuses=[DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED]))
    return {run.tags["wikimem/request"] for run in runs if "wikimem/request" in run.tags}


def _request_run(request_id: str, run_key: str, trigger: str, servers: dict[str, str]) -> RunRequest:
    """servers: `endpoint_tags` of the registry (the run audits every release)."""
    return RunRequest(
        run_key=run_key,
        partition_key=request_id,
        job_name=request_audit_job.name,
        run_config=run_config_for(request_audit_job.name),
        tags={"wikimem/request": request_id, "wikimem/trigger": trigger, **servers},
    )


@sensor(
    jobs=[request_audit_job],
    minimum_interval_seconds=SENSOR_INTERVAL_SECONDS,
    default_status=DefaultSensorStatus.RUNNING,
    description="One `requests` partition and one audit run per new data-subject request; open requests again on each new release.",
)
def subject_request_sensor(context: SensorEvaluationContext, model_registry: RegistryResource):
    state = {"requests": [], "models": [], "verified": [], **(json.loads(context.cursor) if context.cursor else {})}
    handled, seen_models, verified = set(state["requests"]), set(state["models"]), set(state["verified"])
    store = model_registry.requests()
    entries = model_registry.registry().list()
    models = [entry.key for entry in entries]
    servers = endpoint_tags(entries)
    open_requests = store.open()
    if not models:
        return SensorResult(skip_reason=f"no registered model: {len(open_requests)} open request(s) wait", cursor=context.cursor)
    if not reference_data_ready(context.instance):
        return SensorResult(skip_reason="waiting for the reference data (groups data, canaries)", cursor=context.cursor)
    new = [r for r in open_requests if r.id not in handled and r.status in (RequestStatus.RECEIVED, RequestStatus.QUEUED)]
    runs = [_request_run(r.id, r.id, "request", servers) for r in new]
    new_models = sorted(set(models) - seen_models)
    if new_models and seen_models:  # not the first tick: these releases were registered since
        waiting_runs = queued_request_ids(context.instance)
        again = [r for r in open_requests if r.id in handled and r.id not in waiting_runs]
        runs += [_request_run(r.id, f"{r.id}+{'+'.join(new_models)}", "new release", servers) for r in again]
        for r in again:
            context.log.info(f"{r.id}: re-audited on the new release(s) {', '.join(new_models)}")
    # A new revision of a model already audited (e.g. after unlearning): answered erasure requests
    # are audited again once the revision's own audit has finished (the retain utility needs its
    # memorization); their answer then verifies the erasure fact by fact.
    earlier_names = {split_key(key)[0] for key in seen_models}
    revisions = [key for key in new_models if seen_models and split_key(key)[0] in earlier_names]
    pending = [key for key in dict.fromkeys([*state.get("pending", []), *revisions]) if key in models and key not in verified]
    ready = [key for key in pending if cohort_audit_done(context.instance, key)]
    if ready:
        erasures = [r for r in store.list(RequestStatus.ANSWERED.value)  # a purged one has nothing left to audit
                    if r.kind == RequestKind.ERASURE and r.id in handled and not r.is_purged]
        runs += [_request_run(r.id, f"{r.id}+verify+{'+'.join(ready)}", "erasure verification", servers)
                 for r in erasures]
        for r in erasures:
            context.log.info(f"{r.id}: erasure verified on {', '.join(ready)}")
    waiting = [key for key in pending if key not in ready]
    if waiting:
        context.log.info(f"verifying erasures on {', '.join(waiting)} once its audit has finished")
    for request in new:
        if request.status == RequestStatus.RECEIVED:  # a "queued" one may have a run that set it since
            store.set_status(request.id, RequestStatus.QUEUED)
    cursor = json.dumps({"requests": sorted(handled | {r.id for r in new}), "models": sorted(set(models)),
                         "verified": sorted(verified | set(ready)), "pending": waiting})
    if not runs:
        return SensorResult(skip_reason="no new request and no new release", cursor=cursor)
    partitions = set(context.instance.get_dynamic_partitions(requests_partitions.name))
    missing = [r.id for r in new if r.id not in partitions]
    if ensure_lm_pool(context.instance):  # before these runs are queued: one model at a time
        context.log.info(f"pool '{LM_POOL}' given the instance's default limit")
    return SensorResult(
        run_requests=runs,
        dynamic_partitions_requests=[requests_partitions.build_add_request(missing)] if missing else [],
        cursor=cursor,
    )


def will_be_retried(instance, run_id: str) -> bool:
    """Whether Dagster's run retries will launch this failed run again (dagster.yaml `run_retries`:
    only a run the machinery failed, e.g. one left STARTING by a killed daemon); the tag is read
    fresh, as the retry daemon may set it after the failure event."""
    run = instance.get_run_by_id(run_id)
    return bool(run) and run.tags.get(WILL_RETRY_TAG, "").lower() == "true"


@run_failure_sensor(
    monitored_jobs=[request_audit_job],
    minimum_interval_seconds=SENSOR_INTERVAL_SECONDS,
    default_status=DefaultSensorStatus.RUNNING,
    description="Marks a data-subject request 'failed' when its audit run fails.",
)
def request_audit_failure_sensor(context: RunFailureSensorContext, model_registry: RegistryResource):
    run = context.dagster_run
    request_id = run.tags.get("wikimem/request") or run.tags.get("dagster/partition")
    if not request_id:
        return
    if will_be_retried(context.instance, run.run_id):  # it never started (a daemon killed mid-launch)
        context.log.info(f"{request_id}: run {run.run_id} did not start, launched again (run retries)")
        return
    try:
        model_registry.requests().set_status(request_id, RequestStatus.FAILED, error=f"audit run {run.run_id} failed")
    except KeyError:
        context.log.info(f"{request_id}: run {run.run_id} failed, request no longer stored")
        return
    context.log.info(f"{request_id}: run {run.run_id} failed, marked failed")




@run_status_sensor(
    run_status=DagsterRunStatus.CANCELED,
    monitored_jobs=[request_audit_job],
    minimum_interval_seconds=SENSOR_INTERVAL_SECONDS,
    default_status=DefaultSensorStatus.RUNNING,
    description="Marks a data-subject request 'interrupted' when its audit run is canceled (terminated).",
)
def request_audit_canceled_sensor(context: RunStatusSensorContext, model_registry: RegistryResource):
    """A canceled run leaves no request "auditing" forever; an answered request (a re-audit
    canceled) keeps its answer."""
    run = context.dagster_run
    request_id = run.tags.get("wikimem/request") or run.tags.get("dagster/partition")
    if not request_id:
        return
    store = model_registry.requests()
    try:
        request = store.get(request_id)
    except KeyError:
        context.log.info(f"{request_id}: run {run.run_id} canceled, request no longer stored")
        return
    if request.status in (RequestStatus.QUEUED, RequestStatus.AUDITING):
        store.set_status(request_id, RequestStatus.INTERRUPTED, error=f"audit run {run.run_id} canceled")
        context.log.info(f"{request_id}: run {run.run_id} canceled, marked interrupted")
