"""End to end: `dagster dev` (webserver + daemon) on loopback, a model registered through the CLI,
the registry sensor's run observed over GraphQL until it succeeds, the report checked on disk
and in headless Chromium. Every process started here is stopped (tests/dagster_process.py)."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.dagster_process import dagster_dev, graphql
from wikimem_platform import reports

MODEL = "smollm2-135m-instruct"
KEY = f"{MODEL}@1"
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
"""
RUNS = """query($value: String!) {
  runsOrError(filter: {tags: [{key: "wikimem/model", value: $value}]}) {
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


def runs_for(port: int, key: str) -> list[dict]:
    return graphql(port, RUNS, {"value": key})["runsOrError"]["results"]


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

        deadline = time.monotonic() + RUN_TIMEOUT
        while True:
            runs = runs_for(port, KEY)
            if runs and runs[0]["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
                break
            if time.monotonic() > deadline:
                pytest.fail(f"no finished sensor run for {KEY} after {RUN_TIMEOUT}s: {runs}")
            time.sleep(5)
        [run] = runs
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

        time.sleep(12)  # two more sensor ticks: the release is audited exactly once
        assert len(runs_for(port, KEY)) == 1

    page = report.read_text()
    assert "Lineage" in page and "Not computed" not in page  # CRM and MIA summaries ran in the same run
    if reports.find_chromium():
        check = reports.check_rendering(report, screenshot=tmp_path / "report.png")
        assert check.ok and check.figures >= 5, check
