"""One lineage shape for the compliance report and the request answer (`compliance.lineage`)."""

import json

from wikimem_platform.reports import compliance


def test_lineage_puts_subject_code_data_run_config_and_its_hash_in_order():
    settings = {"run_config": {}, "report": {"alpha": 1.0}}
    data = [{"asset": "scores", "partition": "m@main", "run_id": "r0"}]
    lineage = compliance.lineage({"model": {"key": "m@main"}}, repo_dir=None, data_assets=data,
                                 run={"run_id": "r1", "job": "j"}, config=settings, tools={"dagster_version": "1.13"})
    assert list(lineage) == ["model", "code", "data_assets", "run", "config", "config_hash"]
    assert lineage["model"] == {"key": "m@main"} and lineage["data_assets"] is data
    assert lineage["code"] == {**compliance.code_version(None), "dagster_version": "1.13"}
    assert lineage["code"]["git_commit"] is None  # no repository given: no commit
    assert lineage["run"] == {"run_id": "r1", "job": "j"} and lineage["config"] is settings
    # the hash of the settings as sorted JSON, whatever the key order
    assert lineage["config_hash"] == compliance.config_hash({"report": {"alpha": 1.0}, "run_config": {}})
    assert len(lineage["config_hash"]) == 64
    json.dumps(lineage)  # JSON as written


def test_an_answer_lists_its_releases_and_needs_no_tools():
    lineage = compliance.lineage({"models": []}, repo_dir=None, data_assets=[], run={"run_id": "r"}, config={})
    assert list(lineage) == ["models", "code", "data_assets", "run", "config", "config_hash"]
    assert "dagster_version" not in lineage["code"] and lineage["models"] == []
    assert lineage["config_hash"] == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"  # sha256("{}")
