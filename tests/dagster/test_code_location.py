"""The code location as Dagster's own tools see it: `dg check defs` / `dg list defs` from the
repository root, the installed module `definitions` from any other directory, and runs driven
through Dagster's Python API (sensors/materialize.py, what `wikimem demo` uses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from dagster import DagsterInstance

from tests.support.dagster_process import REPO

BIN = Path(sys.executable).parent
MODEL_JOBS = {"model_audit", "model_audit_with_reference_data", "request_audit"}
SENSORS = {"model_registry_sensor", "model_audit_failure_sensor", "subject_request_sensor", "request_audit_failure_sensor"}
LM_ASSETS = {"scores", "controlled_memorization", "calibration_study", "crm_summary", "mia_summary", "eme_probe", "planted_validation", "request_scores", "ner_memorization"}


def _env(home: Path) -> dict:
    """No PYTHONPATH: the code location must be importable as installed, not through the checkout."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return {**env, "DAGSTER_HOME": str(home)}


def _run(command: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=_env(home), capture_output=True, text=True, timeout=300)


def test_dg_check_defs_and_list_defs(tmp_path):
    checked = _run([str(BIN / "dg"), "check", "defs"], REPO, tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "All definitions loaded successfully" in checked.stdout

    listed = _run([str(BIN / "dg"), "list", "defs", "--json"], REPO, tmp_path)
    assert listed.returncode == 0, listed.stderr
    defs = json.loads(listed.stdout)
    assets = {asset["key"] if "key" in asset else asset["asset_key"]: asset for asset in defs["assets"]}
    assert {"humans", "canaries", "scores", "memorization", "compliance_report", "request_answer"} <= set(assets)
    assert MODEL_JOBS <= {job["name"] for job in defs["jobs"]}
    assert SENSORS <= {sensor["name"] for sensor in defs["sensors"]}
    assert {schedule["name"] for schedule in defs["schedules"]} == {"model_reaudit_schedule", "request_retention_schedule"}
    assert len(defs["asset_checks"]) >= 16


def test_definitions_load_from_another_directory(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    validated = _run([str(BIN / "dagster"), "definitions", "validate", "-m", "definitions"], elsewhere, tmp_path)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "All code locations passed validation" in validated.stdout + validated.stderr

    probe = ("import json, definitions; graph = definitions.defs.resolve_asset_graph(); "
             "print(json.dumps({'file': definitions.__file__, "
             "'pools': {k.to_user_string(): sorted(graph.get(k).pools) for k in graph.get_all_asset_keys()}}))")
    loaded = _run([sys.executable, "-c", probe], elsewhere, tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    found = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert Path(found["file"]).resolve() == (REPO / "definitions.py").resolve()
    # Every asset that loads a language model runs in the lm pool, and only those.
    assert {key for key, pools in found["pools"].items() if pools == ["lm"]} == LM_ASSETS | {"request_completions", "request_model_audits", "request_control_scores"}


def test_materialize_through_the_python_api(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    (tmp_path / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    from sensors import materialize

    assert materialize.add_model_partitions(["a@1", "b@1"]) == ["a@1", "b@1"]
    assert materialize.add_model_partitions(["a@1", "c@1"]) == ["c@1"]
    # Not a terminal (captured): the bar shows itself when it opens and closes, and on a timer
    # (LOG_EVERY_SECONDS), never at each step event or poll. The timer set past the run's end, the
    # lines are counted against the run's step events, not against seconds of a shared machine.
    monkeypatch.setattr(materialize, "LOG_EVERY_SECONDS", 10**6)
    outcome = materialize.materialize("group:data,subjects", "data")  # comma = union, as on the CLI
    assert outcome.success and not outcome.failures
    shown = capsys.readouterr().err.count("data: ")
    with DagsterInstance.get() as instance:
        assert set(instance.get_dynamic_partitions("models")) == {"a@1", "b@1", "c@1"}
        run = instance.get_run_by_id(outcome.run_id)
        assert run.is_success
        records = instance.get_records_for_run(outcome.run_id, of_type=materialize.STEP_EVENTS).records
        steps = {record.event_log_entry.dagster_event.step_key for record in records}
        assert 1 <= shown <= 2 < len(records), (shown, len(records))  # open and close, of 2 x 9+ step events
        # The extract is a graph: plan the dump's chunks, one step per chunk, merge.
        assert {"wikidata_extract.plan_dump_chunks", "wikidata_extract.parse_dump_chunk[chunk_0]",
                "wikidata_extract.collect_dump_chunks", "property_table", "subjects", "counterfactuals", "candidates"} <= steps

    failed = materialize.materialize("group:data", "bad data", run_config={
        "ops": {"wikidata_extract": {"config": {"dump_path": str(tmp_path / "missing.json.gz")}}}})
    assert not failed.success and any(failure.startswith("wikidata_extract") for failure in failed.failures)
