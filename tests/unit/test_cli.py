"""The `wikimem` command line: registry commands, inquiry, diff and forget set on hand-made stored
results (tests/unit/subject_requests/test_inquiry.py), the installed console script, and (opt-in, ~10 min) the demo."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.subject_requests.test_inquiry import storage  # noqa: F401  (fixture: hand-made stored results)
from tests.unit.reports.test_compliance import SCORES
from wikimem_platform.cli import main
from wikimem_platform.registry import Registry
from wikimem_platform.reports import compliance as reports


def test_cli_inquiry_diff_and_models(storage, tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    base = ["--registry-url", url, "--storage", str(storage)]
    assert main([*base, "models", "register", "smollm2-135m-instruct", "--name", "a", "--revision", "1"]) == 0
    assert main([*base, "models", "register", "smollm2-135m-instruct", "--name", "a", "--revision", "2"]) == 0
    assert main([*base, "models", "register", "gpt-5"]) == 2  # neither shipped, path nor hub id
    entries = Registry(url).list()
    assert [(e.key, e.family, e.variant, e.parameter_count) for e in entries] == [
        ("a@1", "smollm2", "instruct", 134_515_008), ("a@2", "smollm2", "instruct", 134_515_008)]
    capsys.readouterr()
    assert main([*base, "diff", "a@1", "a@2", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["summary"]["newly memorized"] == 1 and body["summary"]["forgotten"] == 1
    # Utility: of the facts memorized by the old release, the share the new one still memorizes.
    still = body["summary"]["still memorized"]
    assert body["utility"] == {"scope": "every fact both audited", "memorized_before": still + 1, "still_memorized": still,
                               "utility": still / (still + 1)}
    assert main([*base, "inquiry", "Q1", "--json", "--html", str(tmp_path / "q1.html")]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert [m["model"] for m in answer["models"]] == ["a@1", "a@2"]
    assert "mathematician; writer" in (tmp_path / "q1.html").read_text()
    assert main([*base, "inquiry", "Nobody Known"]) == 1
    assert main([*base, "diff", "a@1", "a@9"]) == 2
    assert main([*base, "models", "remove", "a@1"]) == 0
    assert [e.key for e in Registry(url).list()] == ["a@2"]


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "wikimem"
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "forget-set" in result.stdout and "demo" in result.stdout


def test_cli_forget_set(storage, tmp_path, capsys):  # noqa: F811
    (storage / "parquet" / "scores").mkdir()
    SCORES.to_parquet(storage / "parquet" / "scores" / "a@1.parquet")
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    base = ["--registry-url", url, "--storage", str(storage)]
    assert main([*base, "models", "register", "smollm2-135m-instruct", "--name", "a"]) == 0
    out = tmp_path / "forget.jsonl"
    assert main([*base, "forget-set", "a", "--out", str(out)]) == 0  # bare name: newest revision, a@1
    facts = [json.loads(line) for line in out.read_text().splitlines()]
    # lenient: Q1 P106 (10/11), Q2 P27 (2/11), Q2 P106 (1/11); Q1's preferred occupation is mathematician
    assert [(f["subject_qid"], f["property"], f["value_label"]) for f in facts] == [
        ("Q1", "P106", "mathematician"), ("Q2", "P27", "Example"), ("Q2", "P106", "mathematician")]
    assert facts[1]["cue_flag"] is True and facts[0]["cue_flag"] is False
    capsys.readouterr()
    assert main([*base, "forget-set", "a@1", "--criterion", "at_threshold"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["subject_label"] for line in lines] == ["Ada Lovelace"]
    assert main([*base, "forget-set", "a@2"]) == 2  # no stored scores for a@2


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("WIKIMEM_DEMO_TEST") != "1",
                    reason="the demo takes ~10 min on 2 cores; set WIKIMEM_DEMO_TEST=1 to run it")
def test_demo_writes_a_report_that_renders(tmp_path):
    home = tmp_path / "home"
    script = Path(sys.executable).parent / "wikimem"
    result = subprocess.run([str(script), "--home", str(home), "demo"], capture_output=True, text=True, timeout=30 * 60)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    folder = home / "storage" / "reports" / "smollm2-135m-instruct@1"
    lineage = json.loads((folder / "lineage.json").read_text())
    assert lineage["summary"]["pairs"] == 4  # P106 and P27 for one subject per cohort
    assert {row["asset"] for row in lineage["data_assets"]} >= {"scores", "memorization", "crm_summary", "mia_summary"}
    if reports.find_chromium():
        check = reports.check_rendering(folder / "report.html", screenshot=tmp_path / "shot.png")
        assert check.ok and check.figures == 5, check  # no base vs instruct with one model
