"""End to end on one `dagster dev` (webserver + daemon, sensors ticking every 5 s) on loopback,
started once for this module and shared by its tests, each one scenario:

- a model registered through the CLI: the registry sensor's run observed over GraphQL until it
  succeeds, the report on disk and in headless Chromium;
- a data-subject request taken in through the CLI: the request sensor's run observed until it
  succeeds, the answer on disk and the registry saying answered; later sensor ticks audit neither
  again;
- the `lm` pool (limit 1 in the default dagster.yaml): two runs launched at once, the second seen
  waiting in the queue until the first has ended — light runs of a second code location
  (tests/e2e/lm_pool_location.py) that hold the pool's slot until the test lets them go, not two
  model audits: the pool is the instance's and treats every run in it alike;
- three requests taken in within one sensor tick: their runs (real request audits) launched by
  that tick together and run one at a time;
- the daemon stopped: a request audited from the CLI (`wikimem request run`). This test stops
  `dagster dev` and so comes last.

Every process started here is stopped (tests/support/dagster_process.py)."""

import contextlib
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from resources.placement import LM_POOL
from tests.e2e import lm_pool_location
from tests.support.dagster_process import dagster_dev, graphql, REPO
from wikimem_platform.reports import compliance as reports

pytestmark = pytest.mark.slow

MODEL = "smollm2-135m-instruct"
KEY = f"{MODEL}@1"
WIKIMEM = Path(sys.executable).parent / "wikimem"
TERMINAL = ("SUCCESS", "FAILURE", "CANCELED")
ACTIVE = ("STARTING", "STARTED")


def run_to_files(command: list[str], stem: Path, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run a CLI command with its stdout and stderr in files, not pipes. A command that
    materializes in-process has Dagster mirror its compute logs through `tail -F` children; one
    of those left behind (its orphan watcher lost) keeps a pipe open after the command has exited,
    and reading the pipe to its end then never returns (seen once in CI: the CLI a zombie, the
    test waiting 15 minutes). A file needs no end."""
    out, err = stem.with_suffix(".out"), stem.with_suffix(".err")
    with out.open("w") as stdout, err.open("w") as stderr:
        code = subprocess.run(command, stdout=stdout, stderr=stderr, timeout=timeout or RUN_TIMEOUT).returncode
    return subprocess.CompletedProcess(command, code, out.read_text(), err.read_text())


RUN_TIMEOUT = 20 * 60  # the run imports torch, builds the reference tables and scores 2 pairs on a shared CPU
# The audit config the sensor's runs take from DAGSTER_HOME: the smallest audit that still runs
# every asset (4 properties, 2 + 2 subjects, 20 counterfactuals, one property scored for 1 + 1
# subjects, 3 invented people per audited person: the 19 of the default, whose verdicts are
# checked in tests/dagster/test_summary_assets.py, took 5 of this run's 14 minutes on a loaded machine).
TINY_AUDIT = """\
ops:
  property_table: {config: {min_humans: 2000}}
  subjects: {config: {size: 2}}
  counterfactuals: {config: {per_property: 20}}
  scores: {config: {properties: [P106], max_subjects_per_cohort: 1}}
  controlled_memorization: {config: {n_controls: 3}}
  crm_summary: {config: {paradigms: [canary], max_examples: 4, max_new_tokens: 8}}
  mia_summary: {config: {max_per_class: 4, n_neighbours: 0, n_bootstrap: 50}}
  eme_probe: {config: {prefix_lengths: [2], training_data: [real], control: none, epochs: 1, max_eval_people: 2, max_training_people: 3, text_prompts: [record]}}
  request_canaries: {config: {properties: [P106, P27]}}
"""
# A person who is not in Wikidata, as a privacy officer would type them in.
PERSON = """\
name: Ilse Marwitz
facts:
  occupation: [journalist]
  country of citizenship: {label: Germany, qid: Q183}
languages: [en]
"""
RUNS = """query($key: String!, $value: String!) {
  runsOrError(filter: {tags: [{key: $key, value: $value}]}) {
    __typename ... on Runs { results { runId status jobName startTime endTime tags { key value } } }
  }
}"""
REPORT = """query($partition: String!) {
  assetOrError(assetKey: {path: ["compliance_report"]}) {
    ... on Asset { assetMaterializations(partitions: [$partition], limit: 1) {
      runId partition metadataEntries { label ... on PathMetadataEntry { path } ... on IntMetadataEntry { intValue } }
    } }
  }
}"""
LAUNCH = """mutation($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}"""
RUN_TIMES = """query($runId: ID!) {
  runOrError(runId: $runId) { ... on Run { status startTime endTime } }
}"""
# A sensor's latest evaluations (`$statuses`: only those, e.g. the ones that launched runs).
SENSOR_TICKS = """query($selector: SensorSelector!, $statuses: [InstigationTickStatus!]) {
  sensorOrError(sensorSelector: $selector) {
    __typename ... on Sensor { sensorState { ticks(limit: 20, statuses: $statuses) { timestamp status runIds } } }
  }
}"""
# `wikimem request add` for each facts file given, in one process (so within one sensor tick);
# `main` imported as the installed `wikimem` script imports it, wherever its module lives.
ADD_REQUESTS = """
import re, sys
from pathlib import Path
exec(re.search(r"^from \\S+ import main$", (Path(sys.executable).parent / "wikimem").read_text(), re.M).group(0))
for facts in sys.argv[2:]:
    assert main(["--home", sys.argv[1], "request", "add", "--facts", facts]) in (0, None)
"""


@dataclass
class Dev:
    """The module's `dagster dev`: its instance folder, port, and where the pool probe's runs wait
    for their release. `stop()` ends it (and every process it started) before the module does."""

    home: Path
    tmp: Path
    port: int | None
    releases: Path
    stack: contextlib.ExitStack = field(repr=False)

    def stop(self) -> None:
        self.stack.close()
        self.port = None

    def live_port(self) -> int:
        assert self.port is not None, "dagster dev was stopped by an earlier test of this module"
        return self.port


def workspace(home: Path) -> Path:
    """The repository's code location and the pool probe's, from any working directory."""
    [location] = yaml.safe_load((REPO / "workspace.yaml").read_text())["load_from"]
    probe = {"python_module": {"module_name": lm_pool_location.__name__, "location_name": "lm_pool_probe",
                               "working_directory": str(REPO)}}
    path = home / "workspace.yaml"
    path.write_text(yaml.safe_dump({"load_from": [location, probe]}))
    return path


@pytest.fixture(scope="module")
def dev(tmp_path_factory) -> Iterator[Dev]:
    tmp = tmp_path_factory.mktemp("sensor_to_report")
    home, releases = tmp / "home", tmp / "releases"
    home.mkdir()
    releases.mkdir()
    (home / "wikimem_audit.yaml").write_text(TINY_AUDIT)
    with contextlib.ExitStack() as stack:
        # up once both code locations have loaded (the repository's imports torch: minutes on a loaded machine)
        port = stack.enter_context(dagster_dev(home, env={"WIKIMEM_SENSOR_INTERVAL": "5", "HF_HUB_OFFLINE": "1"},
                                               workspace=workspace(home), startup_timeout=600))
        yield Dev(home, tmp, port, releases, stack)


def runs_for(port: int, key: str, tag: str = "wikimem/model") -> list[dict]:
    return graphql(port, RUNS, {"key": tag, "value": key})["runsOrError"]["results"]


def wait_for_run(port: int, key: str, tag: str) -> list[dict]:
    deadline = time.monotonic() + RUN_TIMEOUT
    while True:
        runs = runs_for(port, key, tag)
        if runs and runs[0]["status"] in TERMINAL:
            return runs
        if time.monotonic() > deadline:
            pytest.fail(f"no finished sensor run for {key} after {RUN_TIMEOUT}s: {runs}")
        time.sleep(2)


def ticks(port: int, sensor: str, statuses: list[str] | None = None) -> list[dict]:
    selector = {"repositoryLocationName": "wikimem", "repositoryName": "__repository__", "sensorName": sensor}
    found = graphql(port, SENSOR_TICKS, {"selector": selector, "statuses": statuses})["sensorOrError"]
    assert found["__typename"] == "Sensor", found
    return found["sensorState"]["ticks"]


def wait_for_ticks(port: int, sensors: tuple[str, ...], n: int, after: float) -> None:
    """Until each sensor has ended `n` evaluations begun after `after` (the daemon's ticks, not a sleep)."""
    deadline = time.monotonic() + 300
    while not all(sum(t["timestamp"] > after and t["status"] != "STARTED" for t in ticks(port, s)) >= n for s in sensors):
        assert time.monotonic() < deadline, {s: ticks(port, s)[:3] for s in sensors}
        time.sleep(1)


def wait_for(condition, what: str, timeout: float = 300):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"{what}: not seen in {timeout:.0f} s"
        time.sleep(0.5)
    return value


def add_request(home: Path, facts: Path, *options: str) -> str:
    added = subprocess.run([str(WIKIMEM), "--home", str(home), "request", "add", "--facts", str(facts), *options],
                           capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    return re.search(r"received (dsr-\S+):", added.stdout).group(1)


@pytest.fixture(scope="module")
def audited_release(dev) -> dict:
    """Real model: the shipped SmolLM2 registered as a user does, so that its audit run (reference
    tables, scores, CRM, MIA, EME summaries) writes the report a release gets; the one model run of
    this module, which also builds the reference data every request below reads."""
    registered = subprocess.run([str(WIKIMEM), "--home", str(dev.home), "models", "register", MODEL],
                                capture_output=True, text=True, timeout=120)
    [run] = wait_for_run(dev.live_port(), KEY, "wikimem/model") if registered.returncode == 0 else [None]
    return {"registered": registered, "run": run}


@pytest.fixture(scope="module")
def answered_request(dev, audited_release) -> dict:
    """A request for a person not in Wikidata, taken in through the CLI; the request sensor's run
    audits it on the registered release."""
    facts = dev.tmp / "person.yaml"
    facts.write_text(PERSON, encoding="utf-8")
    request_id = add_request(dev.home, facts, "--kind", "erasure")
    [run] = wait_for_run(dev.live_port(), request_id, "wikimem/request")
    return {"id": request_id, "run": run}


def report_of(dev: Dev) -> Path:
    [materialization] = graphql(dev.live_port(), REPORT, {"partition": KEY})["assetOrError"]["assetMaterializations"]
    entries = {e["label"]: e for e in materialization["metadataEntries"]}
    return Path(entries["report"]["path"])


def test_registering_a_model_launches_one_successful_audit_with_a_report(dev, audited_release):
    registered, run = audited_release["registered"], audited_release["run"]
    assert registered.returncode == 0, registered.stderr
    assert f"registered {KEY}" in registered.stdout
    tags = {t["key"]: t["value"] for t in run["tags"]}
    assert run["status"] == "SUCCESS", f"run {run['runId']} ended {run['status']}; see {dev.home}/dagster-dev.log"
    assert tags["dagster/sensor_name"] == "model_registry_sensor" and tags["dagster/partition"] == KEY
    assert run["jobName"] == "model_audit_with_reference_data"  # fresh instance: reference tables built first

    [materialization] = graphql(dev.live_port(), REPORT, {"partition": KEY})["assetOrError"]["assetMaterializations"]
    assert materialization["runId"] == run["runId"]
    entries = {e["label"]: e for e in materialization["metadataEntries"]}
    report = Path(entries["report"]["path"])
    assert report.is_file() and report.parent == dev.home / "storage" / "reports" / KEY
    assert entries["pairs"]["intValue"] == 2  # P106 for one subject per cohort
    assert (report.parent / "forget_set.jsonl").is_file() and (report.parent / "lineage.json").is_file()


def test_the_report_has_every_summary_and_renders_in_chromium(dev, audited_release, tmp_path):
    """Real browser: the report as a reader's Chromium draws it (skipped only where none is installed)."""
    assert audited_release["run"]["status"] == "SUCCESS", audited_release["run"]
    report = report_of(dev)
    page = report.read_text()
    assert "Lineage" in page and "Not computed" not in page  # CRM and MIA summaries ran in the same run
    if reports.find_chromium():
        check = reports.check_rendering(report, screenshot=tmp_path / "report.png")
        assert check.ok and check.figures >= 5, check


def test_a_request_is_audited_by_the_request_sensor_and_answered(dev, answered_request):
    request_id, request_run = answered_request["id"], answered_request["run"]
    tags = {t["key"]: t["value"] for t in request_run["tags"]}
    assert request_run["status"] == "SUCCESS", f"run {request_run['runId']} ended {request_run['status']}; see {dev.home}/dagster-dev.log"
    assert tags["dagster/sensor_name"] == "subject_request_sensor" and tags["dagster/partition"] == request_id
    assert request_run["jobName"] == "request_audit"
    shown = subprocess.run([str(WIKIMEM), "--home", str(dev.home), "request", "show", request_id, "--json"],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    assert body["request"]["status"] == "answered" and body["request"]["answered_at"]
    [model] = body["answer"]["models"]
    assert model["model"] == KEY and {f["property"] for f in model["facts"]} == {"P106", "P27"}
    assert all(f["completion"]["output"] is not None for f in model["facts"])
    answer_dir = dev.home / "storage" / "requests" / request_id
    assert (answer_dir / "answer.html").is_file() and (answer_dir / "answer.json").is_file()


def test_later_sensor_ticks_audit_the_release_and_the_request_once(dev, audited_release, answered_request):
    port = dev.live_port()
    wait_for_ticks(port, ("model_registry_sensor", "subject_request_sensor"), n=2, after=time.time())
    assert len(runs_for(port, KEY)) == 1
    assert len(runs_for(port, answered_request["id"], "wikimem/request")) == 1


def launch_probe_run(port: int, releases: Path, marker: str) -> str:
    """A run of the pool probe (tests/e2e/lm_pool_location.py), holding the lm slot until released."""
    params = {
        "selector": {"repositoryLocationName": "lm_pool_probe", "repositoryName": "__repository__", "jobName": "lm_pool_probe"},
        "runConfigData": {"ops": {"hold_the_lm_slot": {"config": {"release_dir": str(releases)}}}},
        "executionMetadata": {"tags": [{"key": "wikimem/pool-test", "value": marker}]},
    }
    launched = graphql(port, LAUNCH, {"params": params})["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    return launched["run"]["runId"]


def test_two_runs_in_the_lm_pool_run_one_at_a_time(dev, audited_release):
    """Two runs launched together; each holds the lm slot until the test lets it go, which it does
    once the other run is seen waiting in the queue (the first) or has ended (the second). So the
    queue is seen for certain if the pool holds, and both would be seen running if it did not.
    Nothing lost against two model audits: the run queue reads a run's pools from its plan, not
    what its ops load (the real request audits queue in the pool in the next test)."""
    port = dev.live_port()
    assert lm_pool_location.POOL == LM_POOL
    with DagsterInstance.from_config(str(dev.home)) as instance:  # the limit the sensors set before their first run
        assert instance.event_log_storage.get_concurrency_info(LM_POOL).slot_count == 1
        # an earlier test's run still in the pool (a slow machine) would hold the slot past this test's limit
        busy, deadline = DagsterRunStatus.QUEUED, time.monotonic() + RUN_TIMEOUT
        while instance.get_runs(RunsFilter(statuses=[busy, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED])):
            assert time.monotonic() < deadline, "an earlier test's run still holds the lm pool"
            time.sleep(2)
    runs = [launch_probe_run(port, dev.releases, marker) for marker in ("first", "second")]
    seen_waiting, deadline = False, time.monotonic() + RUN_TIMEOUT
    while True:
        states = {run_id: graphql(port, RUN_TIMES, {"runId": run_id})["runOrError"] for run_id in runs}
        statuses = {state["status"] for state in states.values()}
        active = [run_id for run_id, state in states.items() if state["status"] in ACTIVE]
        assert len(active) <= 1, f"both pool runs started at once: {states}"
        seen_waiting |= "QUEUED" in statuses and bool(active)
        for run_id in active:
            if seen_waiting or all(states[other]["status"] in TERMINAL for other in runs if other != run_id):
                (dev.releases / run_id).touch()
        if statuses <= set(TERMINAL):
            break
        assert time.monotonic() < deadline, f"pool runs not finished after {RUN_TIMEOUT}s: {states}"
        time.sleep(0.5)
    assert statuses == {"SUCCESS"}, f"{states}; see {dev.home}/dagster-dev.log"
    assert seen_waiting, f"no run was seen waiting in the queue: {states}"
    earlier, later = sorted(states.values(), key=lambda state: state["startTime"])
    assert later["startTime"] >= earlier["endTime"], f"the pool runs overlapped: {states}"


@contextlib.contextmanager
def audit_config(home: Path, text: str) -> Iterator[None]:
    """The sensors' audit config replaced while the block runs (they read it at every tick)."""
    path = home / "wikimem_audit.yaml"
    before = path.read_text()
    path.write_text(text)
    try:
        yield
    finally:
        path.write_text(before)


def test_three_requests_in_one_tick_are_launched_together_and_run_one_at_a_time(dev, audited_release):
    """Real model: the runs are the request sensor's own (request_audit on the registered release),
    launched by one tick as in issue 38, where three such runs loaded three models at once. They
    audit without invented controls (the first request's run has them): what is shown is the queue."""
    port = dev.live_port()
    files = []
    for name in ("Jonas Albrecht", "Frieda Lenz", "Ottilie Brandt"):
        files.append(dev.tmp / f"{name.split()[0].lower()}.yaml")
        files[-1].write_text(PERSON.replace("Ilse Marwitz", name), encoding="utf-8")
    light = TINY_AUDIT.replace("request_canaries: {config: {properties: [P106, P27]}}",
                               "request_canaries: {config: {properties: [P106, P27], n_controls: 0}}")
    assert light != TINY_AUDIT
    with audit_config(dev.home, light):
        added = subprocess.run([sys.executable, "-c", ADD_REQUESTS, str(dev.home), *map(str, files)],
                               capture_output=True, text=True, timeout=120)
        assert added.returncode == 0, added.stderr
        ids = re.findall(r"received (dsr-\S+):", added.stdout)
        assert len(ids) == 3, added.stdout
        wait_for(lambda: all(runs_for(port, request, "wikimem/request") for request in ids), "the three request runs launched")
    most_waiting, deadline = 0, time.monotonic() + RUN_TIMEOUT
    while True:
        runs = [(runs_for(port, request, "wikimem/request") or [{"status": "NOT LAUNCHED"}])[0] for request in ids]
        statuses = [run["status"] for run in runs]
        active = [status for status in statuses if status in ACTIVE]
        assert len(active) <= 1, f"request runs started together: {dict(zip(ids, statuses))}"
        if active:
            most_waiting = max(most_waiting, statuses.count("QUEUED"))
        if all(status in TERMINAL for status in statuses):
            break
        assert time.monotonic() < deadline, f"request runs not finished after {RUN_TIMEOUT}s: {statuses}"
        time.sleep(1)
    assert statuses == ["SUCCESS"] * 3, f"{dict(zip(ids, statuses))}; see {dev.home}/dagster-dev.log"
    assert most_waiting == 2, "the three request runs were never seen queued together behind a running one"
    launched_by = [tick for tick in ticks(port, "subject_request_sensor", ["SUCCESS"]) if {r["runId"] for r in runs} <= set(tick["runIds"])]
    assert len(launched_by) == 1, "the three request runs were not launched by one sensor tick"
    spans = sorted((run["startTime"], run["endTime"]) for run in runs)
    assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:])), f"request runs overlapped: {spans}"


def test_without_the_daemon_request_run_audits_a_request(dev, audited_release):
    """`wikimem request run` audits a request through Dagster's Python API on the same instance,
    and `request show` reads its run from the event log. Stops `dagster dev` first: the last test."""
    assert audited_release["run"]["status"] == "SUCCESS", audited_release["run"]
    dev.stop()
    facts = dev.tmp / "henrike.yaml"
    facts.write_text(PERSON.replace("Ilse Marwitz", "Henrike Dossow"), encoding="utf-8")
    request_id = add_request(dev.home, facts)
    listed = subprocess.run([str(WIKIMEM), "--home", str(dev.home), "request", "list", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert {r["id"]: r["status"] for r in json.loads(listed.stdout)}[request_id] == "received"
    ran = run_to_files([str(WIKIMEM), "--home", str(dev.home), "request", "run", request_id], dev.tmp / "request-run")
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-3000:]
    assert re.search(r"run \S+: success, \d+ step\(s\) done", ran.stdout), ran.stdout
    assert re.search(rf"request {request_id}: 100%.* (\d+)/\1 ", ran.stderr), ran.stderr[-2000:]  # a bar with its total
    assert f"access request {request_id} about Henrike Dossow, answered" in ran.stdout
    assert (dev.home / "storage" / "requests" / request_id / "answer.html").is_file()
    unknown = subprocess.run([str(WIKIMEM), "--home", str(dev.home), "request", "run", "dsr-nope"],
                             capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2 and "dsr-nope" in unknown.stderr and "Traceback" not in unknown.stderr
