"""A model audit on a real Celery cluster on loopback (issue 38): Redis as broker and result
backend, a Postgres instance, `deploy/celery/`'s instance and run configs as shipped, and two
`dagster-celery` workers — one on the `gpu` queue (model-loading steps) with two slots, so only
the `lm` pool keeps its two scoring steps apart, and one on the default queue for the rest.

The failure drill of deploy/README.md is run too: the `gpu` worker is killed (SIGKILL) while it
scores the second property shard; the run, which can no longer finish, is force-terminated; a
new worker is started and the run is re-executed from failure: only the lost step runs again
(the finished shard's step is not re-run), and the memorization table equals the one an
in-process run computes from scratch.

Real model: SmolLM2's shard steps last long enough to kill the gpu worker while it scores the
second shard (a tiny model's two steps can end within one poll).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml
from dagster import AssetKey, DagsterEventType, DagsterInstance, DagsterRunStatus, EventRecordsFilter

from resources.placement import ensure_lm_pool, GPU_QUEUE, LM_POOL
from tests.fixtures.postgres import new_database
from tests.support.dagster_process import dagster_materialize, REPO
from tests.support.scoring_setup import scores_config, UPSTREAM_CONFIG
from wikimem_platform.registry import Registry

pytestmark = pytest.mark.slow

MODEL = "smollm2-135m-instruct"
UPSTREAM = "humans,claims,value_aliases,dump_properties,entity_terms,property_table,subjects,counterfactuals,candidates,canary_templates,canaries"
AUDIT = "scores,memorization"
PROPERTIES = ("P106", "P27")  # two property shards: two steps that each load the model
DEFAULT_QUEUE = "dagster"  # deploy/celery/run_config.yaml's task_default_queue
BIN = Path(sys.executable).parent


@contextlib.contextmanager
def celery_worker(home: Path, env: dict, queue: str, name: str, concurrency: int):
    """`dagster-celery worker start` as deploy/README.md says, in its own process group; yields
    the process once the worker is ready; killed with its children (prefork pool) at the end."""
    log_path = home / f"worker-{name}.log"
    log = open(log_path, "a")
    process = subprocess.Popen(
        [str(BIN / "dagster-celery"), "worker", "start", "-A", "dagster_celery.app",
         "-y", str(REPO / "deploy" / "celery" / "run_config.yaml"), "-q", queue, "-n", name,
         "--", f"--concurrency={concurrency}"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while " ready." not in log_path.read_text():
            assert process.poll() is None, f"worker {name} exited:\n{log_path.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"worker {name} not ready in 180 s:\n{log_path.read_text()[-3000:]}"
            time.sleep(0.5)
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        log.close()


def kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def step_workers(instance: DagsterInstance, run_id: str) -> dict[str, str]:
    """{step key: the Celery worker that executed it}, from the worker's engine event."""
    workers = {}
    for entry in instance.all_logs(run_id, of_type=DagsterEventType.ENGINE_EVENT):
        metadata = entry.dagster_event.event_specific_data.metadata or {}
        if "Celery worker" in metadata:
            workers[entry.step_key] = metadata["Celery worker"].value
    return workers


def step_intervals(instance: DagsterInstance, run_id: str, prefix: str) -> list[tuple[float, float]]:
    """(start, end) of every step whose key starts with `prefix` that succeeded in the run."""
    starts = {e.step_key: e.timestamp for e in instance.all_logs(run_id, of_type=DagsterEventType.STEP_START)}
    ends = {e.step_key: e.timestamp for e in instance.all_logs(run_id, of_type=DagsterEventType.STEP_SUCCESS)}
    return sorted((starts[k], ends[k]) for k in ends if k.startswith(prefix))


def latest_run(instance: DagsterInstance) -> str:
    return instance.get_runs(limit=1)[0].run_id


def failures(instance: DagsterInstance, run_id: str) -> str:
    """The run's step and run failure messages (with their errors), for an assertion's message."""
    lines = []
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event and event.event_type in (DagsterEventType.STEP_FAILURE, DagsterEventType.RUN_FAILURE, DagsterEventType.ENGINE_EVENT):
            error = getattr(event.event_specific_data, "error", None)
            lines.append(f"{entry.step_key}: {entry.message} {error.to_string() if error else ''}")
    return "\n".join(lines)[-6000:]


def memorization_table(home: Path, partition: str) -> pd.DataFrame:
    return pd.read_parquet(home / "storage" / "parquet" / "memorization" / f"{partition}.parquet")


def test_a_model_audit_runs_on_a_celery_cluster_and_resumes_after_a_worker_dies(tmp_path, postgres_server, redis_server):
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text((REPO / "deploy" / "celery" / "dagster.yaml").read_text())
    pg_url = new_database(postgres_server).replace("postgresql://", "postgresql+psycopg2://", 1)
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # `celery` for dagster-celery
        "DAGSTER_HOME": str(home),
        "WIKIMEM_DAGSTER_PG_URL": pg_url,
        "WIKIMEM_STORAGE_DIR": str(home),  # instance storage: home/storage, as the shards
        "DAGSTER_CELERY_BROKER_URL": f"{redis_server}/0",
        "DAGSTER_CELERY_BACKEND_URL": f"{redis_server}/1",
    }
    celery_env = {**env, "WIKIMEM_EXECUTOR": "celery"}
    entry = Registry(f"sqlite:///{home / 'wikimem_registry.db'}").register(name=MODEL, source_kind="shipped", source=MODEL)
    upstream = {**UPSTREAM_CONFIG, "execution": {"config": {"in_process": {}}}}
    assert dagster_materialize(home, UPSTREAM, upstream, env=env).wait(timeout=600) == 0, (home / "humans.log").read_text()[-3000:]

    os.environ.update({k: env[k] for k in ("DAGSTER_HOME", "WIKIMEM_DAGSTER_PG_URL", "WIKIMEM_STORAGE_DIR")})
    try:
        instance = DagsterInstance.get()
        instance.add_dynamic_partitions("models", [entry.key])
        assert ensure_lm_pool(instance)  # as the sensors and dev.sh do: one model step at a time
        assert instance.event_log_storage.get_concurrency_info(LM_POOL).slot_count == 1

        execution = yaml.safe_load((REPO / "deploy" / "celery" / "run_config.yaml").read_text())
        config = {**scores_config(properties=PROPERTIES, per_cohort=1), **execution}
        shards = home / "storage" / "score_shards" / entry.key
        with celery_worker(home, celery_env, DEFAULT_QUEUE, "cpu", 1):
            with celery_worker(home, celery_env, GPU_QUEUE, "gpu", 2) as gpu:
                began = time.monotonic()
                run = dagster_materialize(home, AUDIT, config, entry.key, env=celery_env)
                # Kill the gpu worker once one scoring step has succeeded (its events are in the
                # run) and the worker has taken the other one.
                deadline = time.monotonic() + 600
                while not (len(step_intervals(instance, latest_run(instance), "scores.score_shard")) == 1
                           and len(step_workers(instance, latest_run(instance))) >= 3):  # plan + 2 shards
                    assert run.poll() is None, (home / "scores.log").read_text()[-3000:]
                    assert time.monotonic() < deadline
                    time.sleep(0.5)
                started = step_workers(instance, latest_run(instance))
                (done_step,) = {k for k in started if k.startswith("scores.score_shard")} & {
                    e.step_key for e in instance.all_logs(latest_run(instance), of_type=DagsterEventType.STEP_SUCCESS)}
                (lost_step,) = {k for k in started if k.startswith("scores.score_shard")} - {done_step}
                kill_group(gpu)  # the worker dies with the step it runs
                until_kill = time.monotonic() - began
            finished = {p.name for p in shards.glob("*.parquet")}
            assert len(finished) == 1
            time.sleep(5)
            assert run.poll() is None  # the run waits for a step no worker will finish
            kill_group(run)
            first = instance.get_runs(limit=1)[0]  # the audit run (the reference tables' run is older)
            assert first.status == DagsterRunStatus.STARTED
            # "Terminate" → "Force termination" in the UI: the run is marked failed, and the run
            # monitoring daemon (run_monitoring.free_slots_after_run_end_seconds in the instance
            # config) frees the pool slot the dead step held, as done here.
            instance.report_run_failed(first)
            instance.event_log_storage.free_concurrency_slots_for_run(first.run_id)

            with celery_worker(home, celery_env, GPU_QUEUE, "gpu2", 2):
                # "Re-execute from failure": the step that died with the worker is run again (its
                # start is in the run's log), the finished one is not.
                began = time.monotonic()
                second_id = reexecute_from_failure(first.run_id, celery_env)
                reexecution = time.monotonic() - began

        second = instance.get_run_by_id(second_id)
        assert second.status == DagsterRunStatus.SUCCESS, failures(instance, second_id)
        assert second.parent_run_id == first.run_id and second.run_config == first.run_config
        # The lost shard was scored by the new worker; the finished one was not run again.
        event = instance.get_latest_materialization_event(AssetKey("scores"))
        assert event.run_id == second_id
        metadata = event.asset_materialization.metadata
        assert (metadata["shards_total"].value, metadata["shards_scored"].value) == (2, 2)  # one per run
        assert {k for k in step_workers(instance, second_id) if k.startswith("scores.score_shard")} == {lost_step}
        assert finished < {p.name for p in shards.glob("*.parquet")}

        # Steps were spread over the workers by queue: model steps on the gpu workers only.
        workers = {**step_workers(instance, first.run_id), **step_workers(instance, second_id)}
        on_gpu = {k for k, w in workers.items() if w.startswith("gpu")}
        assert on_gpu and all(k.startswith("scores.score_shard") for k in on_gpu), workers
        assert any(w.startswith("cpu") for w in workers.values()), workers
        # The pool kept the two scoring steps apart although the gpu worker had two slots: the
        # second started only after the first had succeeded.
        (done_start, done_end), = step_intervals(instance, first.run_id, "scores.score_shard")
        lost_start = min(e.timestamp for e in instance.all_logs(first.run_id, of_type=DagsterEventType.STEP_START)
                         if e.step_key == lost_step)
        assert done_end <= lost_start, "two model steps ran at once: the lm pool did not hold"
        celery_memorization = memorization_table(home, entry.key)
        written_by = {r.event_log_entry.run_id for r in instance.get_event_records(
            EventRecordsFilter(DagsterEventType.ASSET_MATERIALIZATION, asset_key=AssetKey("memorization")))}
        assert written_by == {second_id}
    finally:
        for key in ("DAGSTER_HOME", "WIKIMEM_DAGSTER_PG_URL", "WIKIMEM_STORAGE_DIR"):
            os.environ.pop(key, None)

    # The same audit in one process, from scratch (own shard store and sentence cache).
    local = {**scores_config(properties=PROPERTIES, per_cohort=1), "execution": {"config": {"in_process": {}}},
             "resources": {"scoring": {"config": {"shard_dir": str(tmp_path / "local-shards"),
                                                  "nll_cache_dir": str(tmp_path / "local-nll")}}}}
    began = time.monotonic()
    assert dagster_materialize(home, AUDIT, local, entry.key, env=env).wait(timeout=600) == 0, (home / "scores.log").read_text()[-3000:]
    in_process = time.monotonic() - began
    pd.testing.assert_frame_equal(celery_memorization, memorization_table(home, entry.key))
    print(f"celery cluster: steps per worker {dict(Counter(w.split('@')[0] for w in workers.values()))}; "
          f"run until the kill {until_kill:.0f} s, re-execution from failure {reexecution:.0f} s, "
          f"the same audit in one process {in_process:.0f} s")


def reexecute_from_failure(run_id: str, env: dict) -> str:
    """Re-execute a run from failure with the code location's executor, as the UI's button does
    (the parent's run config and tags, its partition among them); the new run's id."""
    done = subprocess.run([sys.executable, "-c", REEXECUTE, run_id], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])["run_id"]


REEXECUTE = """
import json, sys
from dagster import DagsterInstance, ReexecutionOptions, execute_job
from dagster._utils.hosted_user_process import recon_job_from_origin

instance = DagsterInstance.get()
parent = instance.get_run_by_id(sys.argv[1])
job = recon_job_from_origin(parent.job_code_origin)  # the code the parent ran: module `definitions`
result = execute_job(job, instance, run_config=parent.run_config, tags=parent.tags,
                     reexecution_options=ReexecutionOptions.from_failure(parent.run_id, instance))
print(json.dumps({"run_id": result.run_id, "success": result.success}))
"""
