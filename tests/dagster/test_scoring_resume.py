"""A scoring run killed (SIGKILL) after its first shard resumes from that shard when re-run."""

import os
import signal
import time

import pytest
from dagster import AssetKey, DagsterInstance

from tests.support.dagster_process import dagster_materialize, REPO
from tests.support.scoring_setup import UPSTREAM_CONFIG, scores_config
from wikimem_platform.registry import Registry

MODEL = "smollm2-135m-instruct"
UPSTREAM = "humans,claims,value_aliases,dump_properties,entity_terms,property_table,subjects,counterfactuals,candidates,canary_templates,canaries"


@pytest.mark.slow
def test_killed_scoring_run_resumes_from_finished_shards(tmp_path):
    """Real model: SmolLM2's shard steps last long enough for the kill to land after the first
    shard is stored and before the second (a tiny model's two steps can end within one poll)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    entry = Registry(f"sqlite:///{home / 'wikimem_registry.db'}").register(name=MODEL, source_kind="shipped", source=MODEL)
    # The reference tables in one process (their steps take milliseconds; the scoring run below
    # keeps the default multiprocess executor, whose step processes are what the kill tests).
    upstream = {**UPSTREAM_CONFIG, "execution": {"config": {"in_process": {}}}}
    assert dagster_materialize(home, UPSTREAM, upstream).wait(timeout=600) == 0
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with DagsterInstance.get() as instance:
            instance.add_dynamic_partitions("models", [entry.key])
    finally:
        del os.environ["DAGSTER_HOME"]

    shards = home / "storage" / "score_shards" / entry.key
    config = scores_config(properties=("P106", "P27"), per_cohort=1)
    run = dagster_materialize(home, "scores", config, entry.key)
    deadline = time.monotonic() + 600
    while not list(shards.glob("*.parquet")):
        assert run.poll() is None, "the scoring run ended before its first shard was written"
        assert time.monotonic() < deadline
        time.sleep(0.5)
    os.killpg(run.pid, signal.SIGKILL)  # no clean-up of any kind
    run.wait(timeout=30)
    finished = {p.name for p in shards.glob("*.parquet")}
    assert len(finished) == 1

    assert dagster_materialize(home, "scores", config, entry.key).wait(timeout=600) == 0
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with DagsterInstance.get() as instance:
            event = instance.get_latest_materialization_event(AssetKey("scores"))
    finally:
        del os.environ["DAGSTER_HOME"]
    metadata = event.asset_materialization.metadata
    assert metadata["shards_total"].value == 2
    assert metadata["shards_reused"].value == 1  # the shard finished before the kill
    assert metadata["shards_scored"].value == 1
    assert finished < {p.name for p in shards.glob("*.parquet")}
