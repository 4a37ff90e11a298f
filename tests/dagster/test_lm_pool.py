"""Runs queued together keep the one-model limit (issue 38): three request runs launched by one
sensor tick on a fresh instance all started at once, each loading a model, while the UI showed
"lm: 0 / 1 slots". Dagster's run queue (1.13, `QueuedRunCoordinatorDaemon._get_runs_to_dequeue`)
reads the pools that have a limit *before* its counter sets a pool it has not seen to the default
limit, so the first pass over a new pool blocks nothing. `ensure_lm_pool`, which the sensors call
before launching runs, sets the limit first.

The pass is replayed here as the daemon runs it (concurrency keys and pool limits read first, then
`GlobalOpConcurrencyLimitsCounter` over the queued runs in order, each run counted once launched),
on a real instance with the repository's pool configuration and runs of the real request job."""

import pytest
import yaml
from dagster import DagsterRunStatus, instance_for_test
from dagster._core.execution.api import create_execution_plan
from dagster._core.instance.config import PoolGranularity
from dagster._core.op_concurrency_limits_counter import (
    compute_run_op_concurrency_info_for_snapshot,
    GlobalOpConcurrencyLimitsCounter,
)
from dagster._core.snap import snapshot_from_execution_plan
from dagster._core.storage.dagster_run import DagsterRun

from definitions import defs
from resources.placement import ensure_lm_pool, LM_POOL
from resources import RegistryResource
from sensors.registry import AUDIT_CONFIG_ENV
from tests.dagster.test_request_sensor import subject, tick
from wikimem_platform.registry import Registry
from wikimem_platform.subject_requests import intake
from tests.dagster.test_sensors import mark_reference_data_ready, SMOL
from tests.support.dagster_process import REPO


def repository_concurrency() -> dict:
    return yaml.safe_load((REPO / "dagster.yaml").read_text())["concurrency"]


def request_runs(instance, n: int) -> list[DagsterRun]:
    """`n` runs of the request job, as a sensor tick creates them (one partition each)."""
    job = defs.resolve_job_def("request_audit")
    plan = create_execution_plan(job, tags={"dagster/partition": "dsr-0"})
    pools = compute_run_op_concurrency_info_for_snapshot(snapshot_from_execution_plan(plan, job.get_job_snapshot_id()))
    assert pools is not None and LM_POOL in pools.all_pools
    return [DagsterRun(job_name=job.name, run_id=f"run-{i}", status=DagsterRunStatus.NOT_STARTED,
                       run_op_concurrency=pools, tags={"dagster/partition": f"dsr-{i}"}) for i in range(n)]


def first_pass(instance, runs: list[DagsterRun]) -> list[str]:
    """The runs the queue daemon's pass would start, in order."""
    keys = instance.event_log_storage.get_concurrency_keys()
    limits = instance.event_log_storage.get_pool_limits()
    granularity = PoolGranularity(repository_concurrency()["pools"]["granularity"])
    counter = GlobalOpConcurrencyLimitsCounter(instance, runs, [], concurrency_keys=keys, pool_limits=limits,
                                               pool_granularity=granularity)
    started = []
    for run in runs:
        if not counter.is_blocked(run):
            counter.update_counters_with_launched_item(run)
            started.append(run.run_id)
    return started


@pytest.fixture
def instance():
    overrides = {"run_coordinator": {"module": "dagster._core.run_coordinator", "class": "QueuedRunCoordinator"},
                 "concurrency": repository_concurrency()}
    with instance_for_test(overrides=overrides) as instance:
        yield instance


def test_without_the_pool_set_a_fresh_instance_starts_every_queued_run(instance):
    # Dagster's behaviour this guards against (if a release fixes it, this test says so)
    assert first_pass(instance, request_runs(instance, 3)) == ["run-0", "run-1", "run-2"]


def test_with_the_pool_set_one_model_run_starts_and_the_others_wait(instance):
    assert ensure_lm_pool(instance) is True
    assert instance.event_log_storage.get_concurrency_info(LM_POOL).slot_count == 1
    assert first_pass(instance, request_runs(instance, 3)) == ["run-0"]
    assert ensure_lm_pool(instance) is False  # idempotent


def test_a_limit_set_by_hand_is_kept(instance):
    instance.event_log_storage.set_concurrency_slots(LM_POOL, 2)  # `dagster instance concurrency set lm 2`
    assert ensure_lm_pool(instance) is False
    assert first_pass(instance, request_runs(instance, 3)) == ["run-0", "run-1"]


def test_the_request_sensor_sets_the_pool_before_its_first_runs(instance, tmp_path, monkeypatch):
    monkeypatch.delenv(AUDIT_CONFIG_ENV, raising=False)
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    registry, store, resources = Registry(url), intake.RequestStore(url), {"model_registry": RegistryResource(url=url)}
    for qid, label in (("Q42", "Douglas Adams"), ("Q7186", "Marie Curie"), ("Q937", "Albert Einstein")):
        store.add(subject(qid, label), "access")
    registry.register(name="smol", **SMOL)
    mark_reference_data_ready(instance)
    assert LM_POOL not in instance.event_log_storage.get_concurrency_keys()
    launched = tick(instance, resources)
    assert len(launched.run_requests) == 3  # one tick, three request runs
    assert LM_POOL in instance.event_log_storage.get_concurrency_keys()
    assert first_pass(instance, request_runs(instance, 3)) == ["run-0"]
