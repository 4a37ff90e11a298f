"""`wikimem request run` stopped mid-run (issue 61): Ctrl-C (SIGINT) and SIGTERM sent to a real
`wikimem request run` process on the planted model once its run has started, and the request removed
(`wikimem request remove`) while its run runs. Each ends in one line on stderr, no traceback, the
Dagster run CANCELED (not STARTED forever), and the request in a state `request list` names:
"interrupted" (run it again), or gone.

The reference data is built once for the module (the planted world's, in seconds); each
test then starts one `request run` and stops it after its first step (SIGINT: after its first
stored score shard, and a re-run then ends answered with that shard read back, not rewritten). A
sensor-launched run canceled from the UI marks its request interrupted too (the canceled sensor).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from sensors.registry import AUDIT_CONFIG_FILE
from tests.e2e.test_planted_pipeline import planted_data_config
from tests.support.dagster_process import REPO
from wikimem_platform.planted import registry_fields
from wikimem_platform.registry import Registry
from wikimem_platform.subject_requests.intake import RequestStatus as intake_status, RequestStore

WIKIMEM = Path(sys.executable).parent / "wikimem"
# The reference data of the planted model's world (a few seconds; the bundled sample takes ~40).
BUILD_REFERENCE = """
import json, os, sys
os.umask(0o077)  # as `wikimem` starts: the instance's files private before Dagster writes them
from sensors.materialize import materialize
assert materialize("group:data,group:canaries", "reference data", run_config=json.loads(sys.argv[1])).success
"""
STARTED_TIMEOUT = 60  # seconds from the command's start to its request's first step
STOP_TIMEOUT = 60  # seconds from the signal to the command's exit


def _env(home: Path) -> dict:
    return {**os.environ, "DAGSTER_HOME": str(home)}


def _files(stem: Path):
    """stdout and stderr in files, not pipes (see tests/e2e/test_sensor_to_report.py `run_to_files`)."""
    return stem.with_suffix(".out").open("w"), stem.with_suffix(".err").open("w")


@pytest.fixture(scope="module")
def home(tmp_path_factory, planted_model):
    """An instance with the planted model registered and the reference data built."""
    root = tmp_path_factory.mktemp("interrupt")
    home = root / "home"
    home.mkdir(mode=0o700)
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    # The request audit's own config: two properties, two score shards per release (the re-run
    # after an interruption finds the first one stored).
    (home / AUDIT_CONFIG_FILE).write_text(yaml.safe_dump({"ops": {"request_canaries": {"config": {"properties": ["P106", "P27"]}}}}))
    Registry(f"sqlite:///{home / 'wikimem_registry.db'}").register(**registry_fields(planted_model))
    built = subprocess.run([sys.executable, "-c", BUILD_REFERENCE, json.dumps(planted_data_config(planted_model))],
                           cwd=REPO, env=_env(home), capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    for path in [home, *home.rglob("*")]:
        path.chmod(0o700 if path.is_dir() else 0o600)
    return home


def _add(home: Path, name: str) -> str:
    facts = home.parent / f"{name}.yaml"
    facts.write_text(yaml.safe_dump({"name": name, "facts": {"occupation": ["journalist"], "P27": {"label": "Germany", "qid": "Q183"}},
                                     "languages": ["en"]}))
    added = subprocess.run([str(WIKIMEM), "--home", str(home), "request", "add", "--facts", str(facts)],
                           capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    return re.search(r"received (dsr-\S+):", added.stdout).group(1)


def _shards(home: Path, request_id: str) -> dict[Path, int]:
    """The request's stored score shards and when each was written."""
    return {path: path.stat().st_mtime_ns for path in (home / "storage" / "score_shards" / "requests" / request_id).rglob("*.parquet")}


def _start_and_wait(home: Path, request_id: str, stem: Path, shard: bool = False) -> subprocess.Popen:
    """`wikimem request run ID`, returned once the request's run has marked it auditing (`shard`:
    and has stored a score shard)."""
    out, err = _files(stem)
    child = subprocess.Popen([str(WIKIMEM), "--home", str(home), "request", "run", request_id], stdout=out, stderr=err,
                             env=_env(home), preexec_fn=_as_foreground)
    store = RequestStore(f"sqlite:///{home / 'wikimem_registry.db'}")
    deadline = time.monotonic() + STARTED_TIMEOUT
    while store.get(request_id).status != "auditing" or (shard and not _shards(home, request_id)):
        assert child.poll() is None, f"the command ended before its run started: {stem.with_suffix('.err').read_text()[-2000:]}"
        assert time.monotonic() < deadline, "the request's run did not start"
        time.sleep(0.2)
    return child


def _as_foreground() -> None:
    """Ctrl-C reaches the command as it does at a terminal, even where this suite itself was
    started in the background (`cmd &`, nohup), which leaves SIGINT ignored in every child."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run_of(home: Path, request_id: str):
    with DagsterInstance.from_config(str(home)) as instance:
        [run] = instance.get_runs(RunsFilter(tags={"dagster/partition": request_id}))
        return run


def _stopped(child: subprocess.Popen, stem: Path) -> tuple[int, str]:
    code = child.wait(timeout=STOP_TIMEOUT)
    return code, stem.with_suffix(".err").read_text()


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


@pytest.mark.slow
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_cancels_the_run_and_marks_the_request_interrupted(home, tmp_path, signum, status):
    """SIGINT once the first score shard is stored, then a re-run that resumes from it; SIGTERM
    right after the first step."""
    resume = signum == signal.SIGINT
    request_id = _add(home, f"Ottilie Brannwitz {signum.name}")
    child = _start_and_wait(home, request_id, tmp_path / "run", shard=resume)
    child.send_signal(signum)
    code, stderr = _stopped(child, tmp_path / "run")
    assert "Traceback" not in stderr and "Stack Trace" not in stderr, stderr[-3000:]
    assert code == status, stderr[-2000:]
    [line] = _error_lines(stderr)
    assert f"interrupted ({signum.name}) and is canceled" in line and "marked interrupted" in line, line
    assert stderr.rstrip().endswith(line)  # the last thing said
    assert _run_of(home, request_id).status == DagsterRunStatus.CANCELED
    listed = subprocess.run([str(WIKIMEM), "--home", str(home), "request", "list", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert {r["id"]: r["status"] for r in json.loads(listed.stdout)}[request_id] == "interrupted"
    if not resume:
        return
    stored = _shards(home, request_id)
    assert stored
    out, err = _files(tmp_path / "rerun")
    rerun = subprocess.run([str(WIKIMEM), "--home", str(home), "request", "run", request_id], stdout=out, stderr=err,
                           env=_env(home), timeout=600)
    assert rerun.returncode == 0, (tmp_path / "rerun.err").read_text()[-3000:]
    assert RequestStore(f"sqlite:///{home / 'wikimem_registry.db'}").get(request_id).status == "answered"
    after = _shards(home, request_id)
    assert {path: after.get(path) for path in stored} == stored  # read back, not scored again
    assert len(after) == 2 * len(stored) or len(after) > len(stored) or len(stored) == 2, (stored, after)


@pytest.mark.slow
def test_a_request_removed_during_its_run_ends_the_run_in_one_line(home, tmp_path):
    request_id = _add(home, "Ottilie Brannwitz removed")
    child = _start_and_wait(home, request_id, tmp_path / "run")
    removed = subprocess.run([str(WIKIMEM), "--home", str(home), "request", "remove", request_id],
                             capture_output=True, text=True, timeout=120)
    assert removed.returncode == 0, removed.stderr
    code, stderr = _stopped(child, tmp_path / "run")
    assert not re.search("Traceback|Stack Trace|KeyError", stderr), stderr[-3000:]
    assert code == 2
    [line] = _error_lines(stderr)
    assert f"request {request_id!r} was removed while its audit run" in line, line
    assert _run_of(home, request_id).status == DagsterRunStatus.CANCELED


def test_a_canceled_sensor_run_marks_its_request_interrupted(tmp_path):
    """A run the sensor launched, terminated from the UI: the request is "interrupted", not
    "auditing" forever; an answered request whose re-audit is canceled keeps its answer."""
    from dagster import DagsterEventType, build_run_status_sensor_context, instance_for_test, job, op

    from resources import RegistryResource
    from sensors import requests as request_sensors
    from wikimem_platform.subject_requests.intake import ResolvedSubject

    url = f"sqlite:///{tmp_path / 'registry.db'}"
    store = RequestStore(url)
    auditing = store.add(ResolvedSubject("Q42", "Douglas Adams", "Q42"), "access")
    store.set_status(auditing.id, intake_status.AUDITING)
    answered = store.add(ResolvedSubject("Q1035", "Charles Darwin", "Q1035"), "access")
    store.set_status(answered.id, intake_status.ANSWERED)

    @op
    def audit():
        pass

    @job(name="request_audit")
    def request_audit():
        audit()

    with instance_for_test() as instance:
        for request in (auditing, answered):
            run = instance.create_run_for_job(request_audit, tags={"wikimem/request": request.id})
            instance.report_run_canceled(run)
            [record] = instance.get_records_for_run(run.run_id, of_type=DagsterEventType.RUN_CANCELED).records
            context = build_run_status_sensor_context(
                sensor_name=request_sensors.request_audit_canceled_sensor.name, dagster_instance=instance,
                dagster_run=instance.get_run_by_id(run.run_id), dagster_event=record.event_log_entry.dagster_event,
                resources={"model_registry": RegistryResource(url=url)})
            request_sensors.request_audit_canceled_sensor(context)
    interrupted = store.get(auditing.id)
    assert interrupted.status == "interrupted" and interrupted.is_open and "canceled" in interrupted.error
    assert store.get(answered.id).status == "answered"
