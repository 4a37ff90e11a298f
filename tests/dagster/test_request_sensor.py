"""The data-subject request sensor against a real SQLite registry: one run per new request (run key =
request id), nothing twice, requests wait for a model and for the reference data, open requests
audited again when a release is registered; the failure sensor marks a request failed."""

from datetime import UTC, datetime

import pytest
from dagster import AssetMaterialization, SensorResult, build_run_status_sensor_context, build_sensor_context, instance_for_test, job, op

from resources import RegistryResource
from resources.placement import ENDPOINT_TAG
from sensors import requests as request_sensors
from sensors.registry import AUDIT_CONFIG_ENV
from tests.dagster.test_sensors import SMOL, apply, mark_reference_data_ready
from wikimem_platform.registry import Registry
from wikimem_platform.subject_requests import intake


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.delenv(AUDIT_CONFIG_ENV, raising=False)
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with instance_for_test() as instance:
        yield Registry(url), intake.RequestStore(url), instance, {"model_registry": RegistryResource(url=url)}


def tick(instance, resources, cursor=None) -> SensorResult:
    with build_sensor_context(instance=instance, resources=resources, cursor=cursor) as context:
        result = request_sensors.subject_request_sensor(context)
    assert isinstance(result, SensorResult)
    return result


def subject(qid: str, label: str) -> intake.ResolvedSubject:
    return intake.ResolvedSubject(qid, label, qid)


def test_each_new_request_is_one_run_then_nothing(setup):
    registry, store, instance, resources = setup
    first = store.add(subject("Q42", "Douglas Adams"), "access")

    waiting = tick(instance, resources)  # no model registered: the request waits, still "received"
    assert not waiting.run_requests and "no registered model" in waiting.skip_reason.skip_message
    registry.register(name="smol", **SMOL)
    not_ready = tick(instance, resources, waiting.cursor)
    assert not not_ready.run_requests and "reference data" in not_ready.skip_reason.skip_message
    assert store.get(first.id).status == "received"

    mark_reference_data_ready(instance)
    launched = tick(instance, resources, not_ready.cursor)
    [run] = launched.run_requests
    assert (run.run_key, run.partition_key, run.job_name) == (first.id, first.id, "request_audit")
    assert run.tags["wikimem/request"] == first.id
    assert list(launched.dynamic_partitions_requests[0].partition_keys) == [first.id]
    assert store.get(first.id).status == "queued"  # "auditing" once its run starts
    apply(instance, launched)
    assert instance.get_dynamic_partitions("requests") == [first.id]

    again = tick(instance, resources, launched.cursor)  # exactly one run per request
    assert not again.run_requests and again.skip_reason

    second = store.add(subject("Q1035", "Charles Darwin"), "erasure")
    later = tick(instance, resources, again.cursor)
    assert [r.run_key for r in later.run_requests] == [second.id]


def test_open_requests_are_audited_on_a_new_release(setup):
    registry, store, instance, resources = setup
    mark_reference_data_ready(instance)
    registry.register(name="smol", **SMOL)
    open_request = store.add(subject("Q42", "Douglas Adams"), "access")
    answered = store.add(subject("Q1035", "Charles Darwin"), "access")
    first = tick(instance, resources)
    apply(instance, first)
    store.set_status(answered.id, intake.RequestStatus.ANSWERED, when=datetime.now(UTC))

    assert ENDPOINT_TAG not in first.run_requests[0].tags  # weights loaded here: no server to spare
    registry.register(name="smol", revision="2", **SMOL)
    registry.register_endpoint("served", "http://10.0.0.7:8000/v1", "m", probe=False)
    registry.register_endpoint("said", "http://127.0.0.1:8001/v1", "m", access="generation", probe=False)
    on_new_release = tick(instance, resources, first.cursor)
    [run] = on_new_release.run_requests  # the answered request is closed; the open one runs again
    assert run.partition_key == open_request.id and run.run_key == f"{open_request.id}+said@1+served@1+smol@2"
    assert run.tags["wikimem/trigger"] == "new release"
    # it audits every release: its run waits for any other run on the same servers
    assert run.tags[ENDPOINT_TAG] == "10.0.0.7:8000,127.0.0.1:8001"
    assert not on_new_release.dynamic_partitions_requests  # its partition exists already
    assert not tick(instance, resources, on_new_release.cursor).run_requests


def test_run_config_file_is_split_between_jobs(setup, tmp_path, monkeypatch):
    config = tmp_path / "audit.yaml"
    config.write_text("ops:\n  scores: {config: {properties: [P106]}}\n  request_canaries: {config: {properties: [P27]}}\n"
                      "  subjects: {config: {size: 2}}\n")
    monkeypatch.setenv(AUDIT_CONFIG_ENV, str(config))
    from resources.placement import IN_PROCESS_EXECUTION
    from sensors.registry import run_config_for

    assert run_config_for("request_audit") == {**IN_PROCESS_EXECUTION, "ops": {"request_canaries": {"config": {"properties": ["P27"]}}}}
    assert set(run_config_for("model_audit")["ops"]) == {"scores"}
    assert set(run_config_for("model_audit_with_reference_data")["ops"]) == {"scores", "subjects"}


def test_failed_run_marks_the_request_failed(setup):
    registry, store, instance, resources = setup
    request = store.add(subject("Q42", "Douglas Adams"), "access")

    @op
    def fails():
        raise RuntimeError("boom")

    @job(name="request_audit", tags={"wikimem/request": request.id})
    def request_audit():
        fails()

    result = request_audit.execute_in_process(instance=instance, raise_on_error=False)
    assert not result.success
    with build_run_status_sensor_context(
        sensor_name=request_sensors.request_audit_failure_sensor.name, dagster_instance=instance,
        dagster_run=result.dagster_run, dagster_event=result.get_run_failure_event(), resources=resources,
    ).for_run_failure() as context:
        request_sensors.request_audit_failure_sensor(context)
    failed = store.get(request.id)
    assert failed.status == "failed" and result.run_id in failed.error and failed.is_open


def test_answered_erasure_requests_are_verified_on_a_new_revision(setup):
    registry, store, instance, resources = setup
    mark_reference_data_ready(instance)
    registry.register(name="smol", **SMOL)
    erasure = store.add(subject("Q42", "Douglas Adams"), "erasure")
    access = store.add(subject("Q1035", "Charles Darwin"), "access")
    purged = store.add(subject("Q7251", "Alan Turing"), "erasure")
    first = tick(instance, resources)
    apply(instance, first)
    for request in (erasure, access, purged):
        store.set_status(request.id, intake.RequestStatus.ANSWERED, when=datetime.now(UTC))
    store.keep_record_only(purged.id, "dpo")  # purged: nothing of the person is left to audit

    registry.register(name="other", **SMOL)  # another model: nothing answered is re-audited
    other = tick(instance, resources, first.cursor)
    assert not other.run_requests
    registry.register(name="smol", revision="2-npo-abcdef12", **SMOL)  # a new revision of an audited model
    waiting = tick(instance, resources, other.cursor)
    assert not waiting.run_requests  # its own audit has not finished: the verification waits
    instance.report_runless_asset_event(AssetMaterialization("memorization", partition="smol@2-npo-abcdef12"))
    revision = tick(instance, resources, waiting.cursor)
    [run] = revision.run_requests  # the erasure request, not the access request nor the purged one
    assert run.partition_key == erasure.id and run.run_key == f"{erasure.id}+verify+smol@2-npo-abcdef12"
    assert run.tags["wikimem/trigger"] == "erasure verification"
    assert store.get(erasure.id).status == "answered"
    assert not tick(instance, resources, revision.cursor).run_requests
