"""data -> canaries -> scores -> memorization for one model partition, in-process, on the sample."""

import pytest
from dagster import DagsterInstance

from tests.support.scoring_setup import materialize_scores, materialize_upstream
from wikimem_platform.registry import Registry

MODEL = "smollm2-135m-instruct"


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    """Real model: the shipped SmolLM2 as a release is audited (its GGUF dequantized to float32, the
    precision the scores' metadata states)."""
    tmp_path = tmp_path_factory.mktemp("audit")
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    entry = Registry(url).register(name=MODEL, source_kind="shipped", source=MODEL, variant="instruct")
    with DagsterInstance.ephemeral() as instance:
        upstream = materialize_upstream(instance, tmp_path, url)
        instance.add_dynamic_partitions("models", [entry.key])
        first = materialize_scores(instance, tmp_path, url, entry.key)
        again = materialize_scores(instance, tmp_path, url, entry.key)
        yield upstream, first, again


@pytest.mark.slow
def test_scores_and_memorization_pass_all_checks(audit):
    upstream, first, _ = audit
    evaluations = [*upstream.get_asset_check_evaluations(), *first.get_asset_check_evaluations()]
    assert {"scores_check", "memorization_check"} <= {e.check_name for e in evaluations}
    failed = [(e.check_name, e.metadata) for e in evaluations if not e.passed]
    assert not failed, failed
    scores = first.asset_value("scores")
    per_variant = scores.groupby(["subject_qid", "variant_id"])["is_true"].agg(["sum", "size"])
    assert (per_variant["sum"] >= 1).all() and (per_variant["size"] > per_variant["sum"]).all()
    assert scores["nll_similar"].map(len).eq(2).all()
    pairs = first.asset_value("memorization")
    assert len(pairs) == 2 and set(pairs["cohort"]) == {"well-known", "lesser-known"}
    # The run states its precision; a float32 run re-scores nothing.
    meta = {e.materialization.asset_key.to_user_string(): e.materialization.metadata for e in first.get_asset_materialization_events()}
    assert meta["scores"]["precision"].value == "float32"
    assert meta["scores"]["sentences_distinct"].value > 0 and meta["scores"]["sentences_rescored"].value == 0
    assert meta["scores"]["share_rescored_float32"].value == 0.0


@pytest.mark.slow
def test_rematerializing_reuses_finished_shards(audit):
    _, first, again = audit
    meta = {e.materialization.asset_key.to_user_string(): e.materialization.metadata for e in again.get_asset_materialization_events()}
    assert meta["scores"]["shards_reused"].value == meta["scores"]["shards_total"].value == 1
    assert meta["scores"]["shards_scored"].value == 0
    assert again.asset_value("scores").equals(first.asset_value("scores"))


def test_collecting_refuses_a_scores_table_with_a_planned_shard_missing():
    """A scoring step lost with its worker leaves no trace in the run; the fan-in must not turn
    the shards that remain into a scores table that silently lacks a property."""
    import pandas as pd
    from dagster import build_op_context, Failure

    from assets.scoring import collect_scores

    planned = pd.DataFrame({"property": ["P106", "P27"]})
    report = pd.DataFrame([{"property": "P106", "shard_path": "/nowhere.parquet"}])
    with pytest.raises(Failure, match=r"1 of 2 planned property shard\(s\) were not scored: P27.*Re-execute all steps"):
        collect_scores(build_op_context(partition_key="m@1"), [report], planned)
