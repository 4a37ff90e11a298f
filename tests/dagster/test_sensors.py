"""The registry sensor and the re-audit schedule against a real SQLite registry (tmp path)."""

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dagster import (
    AssetMaterialization,
    instance_for_test,
    DagsterRun,
    DagsterRunStatus,
    SensorResult,
    SkipReason,
    build_schedule_context,
    build_sensor_context,
)

from resources import RegistryResource
from resources.placement import ENDPOINT_TAG
from sensors import registry as sensors
from wikimem_platform.registry import Registry

SMOL = dict(source_kind="shipped", source="smollm2-135m-instruct", variant="instruct")


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.delenv(sensors.AUDIT_CONFIG_ENV, raising=False)
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with instance_for_test() as instance:  # sets DAGSTER_HOME to its own temporary directory
        yield Registry(url), instance, {"model_registry": RegistryResource(url=url)}, Path(os.environ["DAGSTER_HOME"])


def tick(instance, resources, cursor=None):
    # Used as a context manager: an evaluation context left open keeps Dagster's "current
    # defs-state storage" context variable, which a later garbage collection resets to this
    # (by then closed) instance in the middle of another test's run.
    with build_sensor_context(instance=instance, resources=resources, cursor=cursor) as context:
        result = sensors.model_registry_sensor(context)
    assert isinstance(result, SensorResult)
    return result


def apply(instance, result):
    """What the daemon does with a tick's result: add the partitions (runs are not executed here)."""
    for request in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))


def mark_reference_data_ready(instance):
    for key in sensors.REFERENCE_KEYS:
        instance.report_runless_asset_event(AssetMaterialization(key))


def test_new_release_then_nothing_then_new_revision(setup):
    registry, instance, resources, _ = setup
    mark_reference_data_ready(instance)
    registry.register(name="smol", **SMOL)
    first = tick(instance, resources)
    assert len(first.dynamic_partitions_requests) == 1
    assert list(first.dynamic_partitions_requests[0].partition_keys) == ["smol@1"]
    [run] = first.run_requests
    assert (run.run_key, run.partition_key, run.job_name) == ("smol@1", "smol@1", "model_audit")
    assert run.tags["wikimem/model"] == "smol@1"
    apply(instance, first)

    second = tick(instance, resources, first.cursor)
    assert not second.run_requests and not second.dynamic_partitions_requests and second.skip_reason

    registry.register(name="smol", revision="2", **SMOL)
    third = tick(instance, resources, second.cursor)
    assert [r.run_key for r in third.run_requests] == ["smol@2"]
    assert list(third.dynamic_partitions_requests[0].partition_keys) == ["smol@2"]
    apply(instance, third)
    assert sorted(instance.get_dynamic_partitions("models")) == ["smol@1", "smol@2"]

    # A removed release is kept as it is (no delete request, no run) and leaves the cursor.
    registry.remove("smol@1")
    fourth = tick(instance, resources, third.cursor)
    assert not fourth.run_requests and not fourth.dynamic_partitions_requests
    assert fourth.cursor == '["smol@2"]'


def test_fresh_instance_builds_reference_data_once_and_others_wait(setup, tmp_path):
    registry, instance, resources, home = setup
    (home / sensors.AUDIT_CONFIG_FILE).write_text(
        "ops:\n  subjects: {config: {size: 2}}\n  scores: {config: {properties: [P106], max_subjects_per_cohort: 1}}\n"
    )
    registry.register(name="smol", **SMOL)
    registry.register(name="gemma", source_kind="shipped", source="gemma-3-270m")
    first = tick(instance, resources)
    [run] = first.run_requests
    assert run.job_name == "model_audit_with_reference_data" and run.partition_key == "smol@1"
    assert run.run_config["ops"]["subjects"] == {"config": {"size": 2}}  # the reference ops' config is kept
    assert list(first.dynamic_partitions_requests[0].partition_keys) == ["smol@1"]  # gemma waits
    apply(instance, first)
    # the reference run is in flight: gemma keeps waiting
    instance.add_run(DagsterRun(job_name="model_audit_with_reference_data", run_id="r1", status=DagsterRunStatus.STARTED))
    waiting = tick(instance, resources, first.cursor)
    assert not waiting.run_requests and "waiting" in waiting.skip_reason.skip_message
    # the reference tables exist now: gemma is audited by the per-model job, without reference config
    mark_reference_data_ready(instance)
    later = tick(instance, resources, waiting.cursor)
    [run] = later.run_requests
    assert (run.job_name, run.partition_key) == ("model_audit", "gemma@1")
    assert set(run.run_config["ops"]) == {"scores"}


def test_existing_partition_is_adopted_without_a_run(setup):
    registry, instance, resources, _ = setup
    mark_reference_data_ready(instance)
    registry.register(name="smol", **SMOL)
    instance.add_dynamic_partitions("models", ["smol@1"])  # e.g. `wikimem demo` audited it already
    result = tick(instance, resources)
    assert not result.run_requests and result.cursor == '["smol@1"]'


def test_a_release_served_at_generation_access_gets_a_partition_but_no_cohort_audit(setup):
    """Completions only, no log-probabilities: nothing to rank candidates by, so no model audit run
    (and no re-audit); requests audit it through its completions. Its prompt-logprobs sibling is
    audited like a local release."""
    registry, instance, resources, _ = setup
    mark_reference_data_ready(instance)
    registry.register_endpoint("served", "http://127.0.0.1:8000/v1", "m", probe=False)
    registry.register_endpoint("said", "http://127.0.0.1:8000/v1", "m", access="generation", probe=False)
    assert (registry.get("served").access, registry.get("said").access) == ("prompt-logprobs", "generation")
    result = tick(instance, resources)
    assert [r.partition_key for r in result.run_requests] == ["served@1"]
    assert result.run_requests[0].tags[ENDPOINT_TAG] == "127.0.0.1:8000"  # one run at a time per server
    assert sorted(result.dynamic_partitions_requests[0].partition_keys) == ["said@1", "served@1"]
    apply(instance, result)
    again = tick(instance, resources, result.cursor)
    assert not again.run_requests and again.cursor == '["said@1", "served@1"]'
    with build_schedule_context(instance=instance, resources=resources,
                                scheduled_execution_time=datetime(2026, 11, 23, 3, tzinfo=UTC)) as context:
        [reaudit] = sensors.model_reaudit_schedule(context)
        assert (reaudit.partition_key, reaudit.tags[ENDPOINT_TAG]) == ("served@1", "127.0.0.1:8000")


@pytest.mark.parametrize("instance_file", ["dagster.yaml", "deploy/docker/dagster.yaml", "deploy/k8s/dagster.yaml",
                                           "deploy/celery/dagster.yaml"])
def test_every_instance_queues_a_second_run_for_the_same_server(instance_file):
    """Each shipped instance config limits runs per unique wikimem/endpoint value to one: with a
    run on one server in progress, the run queue's own counter holds back a second run for that
    server, not one for another server nor a run that loads weights here."""
    import yaml
    from dagster._utils.tags import TagConcurrencyLimitsCounter

    root = Path(__file__).resolve().parents[2]
    concurrency = yaml.safe_load((root / instance_file).read_text())["concurrency"]
    with instance_for_test(overrides={"concurrency": concurrency}) as instance:
        limits = instance.get_concurrency_config().run_queue_config.tag_concurrency_limits
    running = [DagsterRun(job_name="model_audit", run_id="a", status=DagsterRunStatus.STARTED,
                          tags={ENDPOINT_TAG: "127.0.0.1:8000"})]
    queue = TagConcurrencyLimitsCounter(limits, running)
    waiting = lambda tags: queue.is_blocked(DagsterRun(job_name="request_audit", run_id="b", tags=tags))  # noqa: E731
    assert waiting({ENDPOINT_TAG: "127.0.0.1:8000"})
    assert not waiting({ENDPOINT_TAG: "10.0.0.2:8000"}) and not waiting({})


def test_schedule_reaudits_every_registered_release(setup):
    registry, instance, resources, _ = setup
    with build_schedule_context(instance=instance, resources=resources,
                                scheduled_execution_time=datetime(2026, 11, 23, 3, tzinfo=UTC)) as context:
        _check_reaudit(registry, instance, context)


def _check_reaudit(registry, instance, context):
    assert isinstance(sensors.model_reaudit_schedule(context), SkipReason)  # nothing registered
    registry.register(name="smol", **SMOL)
    registry.register(name="smol", revision="2", **SMOL)
    registry.register(name="gemma", source_kind="shipped", source="gemma-3-270m")
    instance.add_dynamic_partitions("models", ["smol@1", "smol@2"])  # gemma not added by the sensor yet
    mark_reference_data_ready(instance)
    requests = sensors.model_reaudit_schedule(context)
    assert [(r.partition_key, r.run_key) for r in requests] == [
        ("smol@1", "smol@1:2026-11-23T03:00"), ("smol@2", "smol@2:2026-11-23T03:00")]
    assert all(r.tags["wikimem/trigger"] == "schedule" for r in requests)
    assert sensors.model_reaudit_schedule.cron_schedule == sensors.DEFAULT_REAUDIT_CRON  # weekly, Mondays 03:00 UTC


def test_missing_config_file_named_by_env_is_an_error(setup, monkeypatch, tmp_path):
    monkeypatch.setenv(sensors.AUDIT_CONFIG_ENV, str(tmp_path / "nope.yaml"))
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        sensors.run_config_for("model_audit")


def test_failed_audit_run_marks_the_release_failed(setup):
    from dagster import build_run_status_sensor_context, job, op

    from wikimem_platform.registry import Status

    registry, instance, resources, _ = setup
    registry.register(name="smol", **SMOL)

    @op
    def cannot_load_model():
        raise RuntimeError("weights missing")

    @job(tags={"wikimem/model": "smol@1"})
    def failing_audit():
        cannot_load_model()

    result = failing_audit.execute_in_process(instance=instance, raise_on_error=False)
    assert not result.success
    with build_run_status_sensor_context(
        sensor_name=sensors.model_audit_failure_sensor.name, dagster_instance=instance,
        dagster_run=result.dagster_run, dagster_event=result.get_run_failure_event(), resources=resources,
    ).for_run_failure() as context:
        assert registry.get("smol@1").status == Status.REGISTERED.value
        sensors.model_audit_failure_sensor(context)
        assert registry.get("smol@1").status == Status.FAILED.value
        registry.remove("smol@1")
        sensors.model_audit_failure_sensor(context)  # a release removed meanwhile: nothing to mark, no error
