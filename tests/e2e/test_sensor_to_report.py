"""End to end: `dagster dev` (webserver + daemon) on loopback, a model registered through the CLI,
the registry sensor's run observed over GraphQL until it succeeds, the report checked on disk
and in headless Chromium; then a data-subject request taken in through the CLI, the request
sensor's run observed until it succeeds, the answer on disk and the registry saying answered;
then two model runs launched at once, the second seen waiting in the queue for the `lm` pool
(limit 1 in the default dagster.yaml) until the first has ended; three requests taken in within
one sensor tick, their runs launched together and run one at a time; then, the daemon stopped, a
request audited from the CLI (`wikimem request run`). Every process started here is stopped (tests/support/dagster_process.py)."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.dagster_process import dagster_dev, graphql
from wikimem_platform.reports import compliance as reports

MODEL = "smollm2-135m-instruct"
KEY = f"{MODEL}@1"
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
# every asset (4 properties, 2 + 2 subjects, 20 counterfactuals, one property scored for 1 + 1 subjects).
TINY_AUDIT = """\
ops:
  property_table: {config: {min_humans: 2000}}
  subjects: {config: {size: 2}}
  counterfactuals: {config: {per_property: 20}}
  scores: {config: {properties: [P106], max_subjects_per_cohort: 1}}
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
    __typename ... on Runs { results { runId status jobName tags { key value } } }
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
# `wikimem request add` for each facts file given, in one process (so within one sensor tick).
ADD_REQUESTS = """
import sys
from cli.main import main
for facts in sys.argv[2:]:
    assert main(["--home", sys.argv[1], "request", "add", "--facts", facts]) in (0, None)
"""
# A run of one model-loading asset (mia_summary, pool "lm"), as small as it gets.
POOL_RUN_CONFIG = {
    "execution": {"config": {"in_process": {}}},
    "ops": {"mia_summary": {"config": {"max_per_class": 4, "n_neighbours": 0, "n_bootstrap": 20}}},
}


def launch_model_run(port: int, key: str, marker: str) -> str:
    params = {
        "selector": {"repositoryLocationName": "wikimem", "repositoryName": "__repository__",
                     "jobName": "model_audit", "assetSelection": [{"path": ["mia_summary"]}]},
        "runConfigData": POOL_RUN_CONFIG,
        "executionMetadata": {"tags": [{"key": "dagster/partition", "value": key}, {"key": "wikimem/pool-test", "value": marker}]},
    }
    launched = graphql(port, LAUNCH, {"params": params})["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    return launched["run"]["runId"]


def runs_for(port: int, key: str, tag: str = "wikimem/model") -> list[dict]:
    return graphql(port, RUNS, {"key": tag, "value": key})["runsOrError"]["results"]


def wait_for_run(port: int, key: str, tag: str) -> dict:
    deadline = time.monotonic() + RUN_TIMEOUT
    while True:
        runs = runs_for(port, key, tag)
        if runs and runs[0]["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
            return runs
        if time.monotonic() > deadline:
            pytest.fail(f"no finished sensor run for {key} after {RUN_TIMEOUT}s: {runs}")
        time.sleep(5)


@pytest.mark.slow
def test_registering_a_model_launches_one_successful_audit_with_a_report(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "wikimem_audit.yaml").write_text(TINY_AUDIT)
    wikimem = Path(sys.executable).parent / "wikimem"
    with dagster_dev(home, env={"WIKIMEM_SENSOR_INTERVAL": "5", "HF_HUB_OFFLINE": "1"}) as port:
        registered = subprocess.run([str(wikimem), "--home", str(home), "models", "register", MODEL],
                                    capture_output=True, text=True, timeout=120)
        assert registered.returncode == 0, registered.stderr
        assert f"registered {KEY}" in registered.stdout

        [run] = wait_for_run(port, KEY, "wikimem/model")
        tags = {t["key"]: t["value"] for t in run["tags"]}
        assert run["status"] == "SUCCESS", f"run {run['runId']} ended {run['status']}; see {home}/dagster-dev.log"
        assert tags["dagster/sensor_name"] == "model_registry_sensor" and tags["dagster/partition"] == KEY
        assert run["jobName"] == "model_audit_with_reference_data"  # fresh instance: reference tables built first

        [materialization] = graphql(port, REPORT, {"partition": KEY})["assetOrError"]["assetMaterializations"]
        assert materialization["runId"] == run["runId"]
        entries = {e["label"]: e for e in materialization["metadataEntries"]}
        report = Path(entries["report"]["path"])
        assert report.is_file() and report.parent == home / "storage" / "reports" / KEY
        assert entries["pairs"]["intValue"] == 2  # P106 for one subject per cohort
        assert (report.parent / "forget_set.jsonl").is_file() and (report.parent / "lineage.json").is_file()

        # A data-subject request for a person not in Wikidata, taken in through the CLI.
        facts = tmp_path / "person.yaml"
        facts.write_text(PERSON, encoding="utf-8")
        added = subprocess.run([str(wikimem), "--home", str(home), "request", "add", "--facts", str(facts),
                                "--kind", "erasure"], capture_output=True, text=True, timeout=120)
        assert added.returncode == 0, added.stderr
        request_id = re.search(r"received (dsr-\S+):", added.stdout).group(1)
        [request_run] = wait_for_run(port, request_id, "wikimem/request")
        tags = {t["key"]: t["value"] for t in request_run["tags"]}
        assert request_run["status"] == "SUCCESS", f"run {request_run['runId']} ended {request_run['status']}; see {home}/dagster-dev.log"
        assert tags["dagster/sensor_name"] == "subject_request_sensor" and tags["dagster/partition"] == request_id
        assert request_run["jobName"] == "request_audit"
        shown = subprocess.run([str(wikimem), "--home", str(home), "request", "show", request_id, "--json"],
                               capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0, shown.stderr
        body = json.loads(shown.stdout)
        assert body["request"]["status"] == "answered" and body["request"]["answered_at"]
        [model] = body["answer"]["models"]
        assert model["model"] == KEY and {f["property"] for f in model["facts"]} == {"P106", "P27"}
        assert all(f["completion"]["output"] is not None for f in model["facts"])
        answer_dir = home / "storage" / "requests" / request_id
        assert (answer_dir / "answer.html").is_file() and (answer_dir / "answer.json").is_file()

        time.sleep(12)  # two more sensor ticks: the release and the request are audited exactly once
        assert len(runs_for(port, KEY)) == 1
        assert len(runs_for(port, request_id, "wikimem/request")) == 1

        # The lm pool: two model runs launched together; the second waits in the queue until the
        # first has ended (one language model in memory at a time on this instance).
        first, second = (launch_model_run(port, KEY, marker) for marker in ("first", "second"))
        seen_waiting, deadline = False, time.monotonic() + RUN_TIMEOUT
        while True:
            states = {run_id: graphql(port, RUN_TIMES, {"runId": run_id})["runOrError"] for run_id in (first, second)}
            statuses = {state["status"] for state in states.values()}
            active = [state for state in states.values() if state["status"] in ("STARTING", "STARTED")]
            assert len(active) <= 1, f"both model runs started at once: {states}"
            seen_waiting |= "QUEUED" in statuses and bool(active)
            if statuses <= {"SUCCESS", "FAILURE", "CANCELED"}:
                break
            assert time.monotonic() < deadline, f"pool runs not finished after {RUN_TIMEOUT}s: {states}"
            time.sleep(1)
        assert statuses == {"SUCCESS"}, f"{states}; see {home}/dagster-dev.log"
        assert seen_waiting, f"no run was seen waiting in the queue: {states}"
        earlier, later = sorted(states.values(), key=lambda state: state["startTime"])
        assert later["startTime"] >= earlier["endTime"], f"the model runs overlapped: {states}"

        # Three requests taken in at once (one process, within one sensor tick): the sensor
        # launches their runs together, and the lm pool still lets one model run in at a time.
        files = []
        for name in ("Jonas Albrecht", "Frieda Lenz", "Ottilie Brandt"):
            files.append(tmp_path / f"{name.split()[0].lower()}.yaml")
            files[-1].write_text(PERSON.replace("Ilse Marwitz", name), encoding="utf-8")
        added = subprocess.run([sys.executable, "-c", ADD_REQUESTS, str(home), *map(str, files)],
                               capture_output=True, text=True, timeout=120)
        assert added.returncode == 0, added.stderr
        ids = re.findall(r"received (dsr-\S+):", added.stdout)
        assert len(ids) == 3, added.stdout
        most_waiting, deadline = 0, time.monotonic() + RUN_TIMEOUT
        while True:
            statuses = [(runs_for(port, request, "wikimem/request") or [{"status": "NOT LAUNCHED"}])[0]["status"] for request in ids]
            active = [status for status in statuses if status in ("STARTING", "STARTED")]
            assert len(active) <= 1, f"request runs started together: {dict(zip(ids, statuses))}"
            if active:
                most_waiting = max(most_waiting, statuses.count("QUEUED"))
            if all(status in ("SUCCESS", "FAILURE", "CANCELED") for status in statuses):
                break
            assert time.monotonic() < deadline, f"request runs not finished after {RUN_TIMEOUT}s: {statuses}"
            time.sleep(1)
        assert statuses == ["SUCCESS"] * 3, f"{dict(zip(ids, statuses))}; see {home}/dagster-dev.log"
        assert most_waiting == 2, "the three request runs were never seen queued together behind a running one"

    # Without the daemon: `wikimem request run` audits a request through Dagster's Python API on
    # the same instance, and `request show` reads its run from the event log.
    facts.write_text(PERSON.replace("Ilse Marwitz", "Henrike Dossow"), encoding="utf-8")
    added = subprocess.run([str(wikimem), "--home", str(home), "request", "add", "--facts", str(facts)],
                           capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    request_id = re.search(r"received (dsr-\S+):", added.stdout).group(1)
    listed = subprocess.run([str(wikimem), "--home", str(home), "request", "list", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert {r["id"]: r["status"] for r in json.loads(listed.stdout)}[request_id] == "received"
    ran = run_to_files([str(wikimem), "--home", str(home), "request", "run", request_id], tmp_path / "request-run")
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-3000:]
    assert re.search(r"run \S+: success, \d+ step\(s\) done", ran.stdout), ran.stdout
    assert re.search(rf"request {request_id}: 100%.* (\d+)/\1 ", ran.stderr), ran.stderr[-2000:]  # a bar with its total
    assert f"access request {request_id} about Henrike Dossow, answered" in ran.stdout
    assert (home / "storage" / "requests" / request_id / "answer.html").is_file()
    unknown = subprocess.run([str(wikimem), "--home", str(home), "request", "run", "dsr-nope"],
                             capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2 and "dsr-nope" in unknown.stderr and "Traceback" not in unknown.stderr

    page = report.read_text()
    assert "Lineage" in page and "Not computed" not in page  # CRM and MIA summaries ran in the same run
    if reports.find_chromium():
        check = reports.check_rendering(report, screenshot=tmp_path / "report.png")
        assert check.ok and check.figures >= 5, check
