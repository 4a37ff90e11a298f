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
from tests.unit.unlearning.test_forget_sets import controlled_table
from cli.main import CliError, main
from wikimem_platform.registry import Registry
from wikimem_platform.reports import compliance as reports
from wikimem_platform.subject_requests.controller import CONTROLLER_FILE
from wikimem_platform.subject_requests.intake import RequestStore


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
    # No stored controlled_memorization: every fact with null controls; narrowing to them is an error
    assert all(f["beats_controls"] is None and f["n_controls"] is None for f in facts)
    capsys.readouterr()
    assert main([*base, "forget-set", "a@1", "--beyond-controls"]) == 2
    assert "error: no stored controlled_memorization for a@1" in capsys.readouterr().err
    (storage / "parquet" / "controlled_memorization").mkdir()
    controlled_table().to_parquet(storage / "parquet" / "controlled_memorization" / "a@1.parquet")
    assert main([*base, "forget-set", "a@1"]) == 0  # the same three facts, Q1 P106 beating its 19 controls
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(f["subject_qid"], f["property"], f["beats_controls"], f["n_controls"]) for f in lines] == [
        ("Q1", "P106", True, 19), ("Q2", "P27", False, 3), ("Q2", "P106", None, None)]
    assert main([*base, "forget-set", "a@1", "--beyond-controls", "--out", str(out)]) == 0
    assert [json.loads(line)["property"] for line in out.read_text().splitlines()] == ["P106"]
    assert "1 facts for a@1 (lenient, beating the controls)" in capsys.readouterr().err


# Every user error goes through one type (CliError) handled in `main`: exit 2, `error: <message>` (and
# any extra line) on stderr, nothing on stdout, no traceback, and nothing written.
USER_ERRORS = [
    (["models", "remove", "nobody@1"], "error: no registered model 'nobody@1'\n"),
    (["models", "edit", "nobody@1", "--purposes", "x"], "error: no registered model 'nobody@1'\n"),
    (["models", "edit", "a@1"], "error: nothing to change: give at least one of --display-name, --purposes, "
                                "--recipients, --retention, --training-data, --transfers\n"),
    (["models", "edit", "a@1", "--purposes", " "], "error: purposes: must be text of 1 to 2000 characters (or left out)\n"),
    (["models", "register", "gpt-5"], "error: source: 'gpt-5' is neither a shipped model (gemma-3-270m, "
                                      "smollm2-135m-instruct), a path, nor a hub id 'org/name'\nnothing was registered\n"),
    (["request", "show", "dsr-nope"], "error: no request 'dsr-nope'\n"),
    (["request", "remove", "dsr-nope"], "error: no request 'dsr-nope'\n"),
    (["request", "verify", "dsr-nope", "--release", "a@1"], "error: no request 'dsr-nope'\n"),
    (["forget-set", "--request", "dsr-nope"], "error: no request 'dsr-nope'\n"),
    (["request", "add", "--facts", "{tmp}/missing.yaml"], "error: facts: file {tmp}/missing.yaml does not exist\nnothing was stored\n"),
    (["controller", "set", "--name", "Musterfirma KI GmbH"],
     "error: address, contact, dpo, supervisory_authority: missing (required: name, address, contact, dpo, "
     "supervisory_authority); nothing was stored\n"),
    (["forget-set"], "error: give a release (name@revision) or --request ID\n"),
    (["forget-set", "a@2"], "error: no stored scores/memorization for a@2: audit it first\n"),
    (["unlearn", "a", "--request", "dsr-1"], "error: give a release (name@revision) or --request ID\n"),
    (["unlearn", "nobody@1"], "error: no registered model 'nobody@1'\n"),
    (["diff", "a", "a@1"], "error: 'a': give releases as name@revision\n"),
    (["diff", "a@1", "a@9"], "error: no stored memorization for a@1\n"),
]


@pytest.mark.parametrize("argv, expected", USER_ERRORS, ids=[" ".join(argv) for argv, _ in USER_ERRORS])
def test_user_errors_exit_2_with_one_error_line(argv, expected, tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    results = tmp_path / "storage"
    results.mkdir()
    base = ["--registry-url", url, "--storage", str(results)]
    assert main([*base, "models", "register", "smollm2-135m-instruct", "--name", "a"]) == 0
    before = Registry(url).list()
    capsys.readouterr()
    assert main([*base, *[a.format(tmp=tmp_path) for a in argv]]) == 2
    captured = capsys.readouterr()
    assert captured.err == expected.format(tmp=tmp_path) and captured.out == ""
    assert Registry(url).list() == before  # the registry is as it was
    assert RequestStore(url).list() == [] and not (results / CONTROLLER_FILE).exists()


def test_a_bad_facts_file_or_controller_file_is_reported_not_raised(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    results = tmp_path / "storage"
    results.mkdir()
    base = ["--registry-url", url, "--storage", str(results)]
    facts = tmp_path / "person.yaml"
    facts.write_text("name: Ilse Marwitz\nfacts:\n  shoe size: ['42']\n", encoding="utf-8")
    assert main([*base, "request", "add", "--facts", str(facts)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: facts.shoe size: unknown property 'shoe size'; supported: P106 (occupation)")
    assert err.endswith("\nnothing was stored\n") and err.count("\n") == 2 and RequestStore(url).list() == []
    (results / CONTROLLER_FILE).write_text("name: x\nmotto: y\n", encoding="utf-8")
    assert main([*base, "controller", "show"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and "motto: unknown field" in captured.err and captured.out == ""


def test_main_prints_a_cli_error_with_its_extra_lines(monkeypatch, capsys):
    def refuse(args):
        raise CliError.of(KeyError("no request 'dsr-x'"), "first hint", "second hint")

    monkeypatch.setattr("cli.commands.cmd_request_list", refuse)
    assert main(["--registry-url", "sqlite://", "request", "list"]) == 2
    assert capsys.readouterr().err == "error: no request 'dsr-x'\nfirst hint\nsecond hint\n"
    assert CliError.of(ValueError("bad")).message == "bad" and CliError("x").status == 2


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


def test_a_release_is_registered_only_when_its_weights_can_be_found(tmp_path, monkeypatch, capsys):
    """A hub id on a machine without hub access, a folder with a config but no weights: a clear
    error and nothing stored, unless --defer-check (issue 38)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty Hugging Face cache
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    base = ["--registry-url", url, "models", "register"]
    assert main([*base, "org/no-such-model", "--kind", "hub"]) == 2
    err = capsys.readouterr().err
    assert "error: source: 'org/no-such-model' is not in this machine's Hugging Face cache" in err
    assert "HF_HUB_OFFLINE=1" in err and "nothing was registered" in err and "Traceback" not in err
    folder = tmp_path / "only-config"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    assert main([*base, str(folder)]) == 2
    assert "holds no weights" in capsys.readouterr().err
    assert Registry(url).list() == []
    assert main([*base, "org/no-such-model", "--kind", "hub", "--defer-check"]) == 0
    (folder / "model.safetensors").write_bytes(b"")
    assert main([*base, str(folder)]) == 0
    assert [e.source_kind for e in Registry(url).list()] == ["hub", "hf-dir"]
