"""data -> canaries -> scores -> memorization -> crm_summary, mia_summary for one model
partition, in-process, on the bundled sample with a small config (real model, few examples)."""

import logging
from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from assets import across_models as across_assets
from wikimem_platform.wikimem import controls
from assets import probes as probe_assets
from assets import scoring as scoring_assets
from assets import summaries as summary_assets
from assets import wording as wording_assets
from tests.support.checks import SCORING_CHECKS
from tests.support.checks import ACROSS_CHECKS, PROBE_CHECKS, SUMMARY_CHECKS
from tests.support.scoring_setup import UPSTREAM, materialize_upstream, resources, scores_config
from wikimem_platform.crm.metrics import TAUS
from wikimem_platform.mia.membership import ASSOCIATION_DESCRIPTION
from wikimem_platform.registry import Registry

MODEL = "smollm2-135m-instruct"
NOT_AUDITED = "not-audited@1"
SUMMARY_CONFIG = {
    "crm_summary": {"config": {"max_examples": 3}},
    "mia_summary": {"config": {"max_per_class": 6, "n_neighbours": 2, "n_bootstrap": 50}},
    # one optimizer step of a 2-token prefix on a handful of records: the wiring, not the numbers
    "eme_probe": {"config": {"prefix_lengths": [2], "training_data": ["real"], "control": "none", "epochs": 1,
                             "max_eval_people": 3, "max_training_people": 4, "text_prompts": ["record"]}},
}


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    """Real model: what the summaries check is read off a model of language on real people (CRM
    generations, MIA on SmolLM2 with Gemma 3 as the reference model, EME on real records, wording AUCs)."""
    tmp_path = tmp_path_factory.mktemp("summaries")
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    entry = Registry(url).register(name=MODEL, source_kind="shipped", source=MODEL, variant="instruct")
    run_config = scores_config()
    run_config["ops"].update(SUMMARY_CONFIG)
    with DagsterInstance.ephemeral() as instance:
        materialize_upstream(instance, tmp_path, url)
        instance.add_dynamic_partitions("models", [entry.key])
        targets = [scoring_assets.scores, scoring_assets.memorization, scoring_assets.controlled_memorization,
                   summary_assets.crm_summary, summary_assets.mia_summary, probe_assets.eme_probe,
                   wording_assets.wording_sensitivity]
        result = materialize(
            [*UPSTREAM, *targets, *SCORING_CHECKS, *SUMMARY_CHECKS, *PROBE_CHECKS], selection=targets,
            instance=instance, partition_key=entry.key,
            resources=resources(tmp_path, url), run_config=run_config,
        )
        # A second release registered but never audited: the cross-release tables leave it out.
        instance.add_dynamic_partitions("models", [NOT_AUDITED])
        across_targets = [wording_assets.wording_sensitivity_across_models, across_assets.memorization_across_models,
                          across_assets.across_models_report]
        across = materialize(
            [*UPSTREAM, *targets, *across_targets, *ACROSS_CHECKS], selection=across_targets, instance=instance,
            resources=resources(tmp_path, url),
        )
        across.logs = [(e.level, e.user_message) for e in instance.all_logs(across.run_id) if not e.is_dagster_event]
        yield result, across


def _metadata(result) -> dict:
    """Each materialized asset's metadata by asset name."""
    return {e.materialization.asset_key.to_user_string(): e.materialization.metadata
            for e in result.get_asset_materialization_events()}


@pytest.mark.slow
def test_summaries_materialize_and_pass_their_checks(summaries):
    summaries, _ = summaries
    evaluations = summaries.get_asset_check_evaluations()
    assert {"crm_summary_check", "mia_summary_check", "eme_probe_check", "wording_sensitivity_check",
            "controlled_memorization_check"} <= {
        e.check_name for e in evaluations}
    failed = [(e.check_name, e.metadata) for e in evaluations if not e.passed]
    assert not failed, failed


@pytest.mark.slow
def test_crm_summary_rows_and_metadata(summaries):
    summaries, _ = summaries
    rates = summaries.asset_value("crm_summary")
    # per paradigm: the overall row and one per tau; the four generation paradigms ran (the
    # small audit has one property, P106, so triplets need a context fact from another one)
    assert {"canary", "twin", "extraction", "wikimem"} <= set(rates["paradigm"])
    per_paradigm = rates.groupby("paradigm")["subset"].apply(list)
    assert all(subsets == ["all", *[f"cue<{t:g}" for t in TAUS]] for subsets in per_paradigm)
    generated = rates[(rates["paradigm"] != "wikimem") & (rates["subset"] == "all")]
    assert (generated["n"] <= 3).all() and (generated["n"] >= 1).all()   # max_examples = 3
    # restricting by cue never adds examples; cue < 1 keeps at most all of them
    for _, block in rates.groupby("paradigm"):
        assert block["n"].iloc[1:].is_monotonic_increasing and block["n"].iloc[-1] <= block["n"].iloc[0]
    meta = _metadata(summaries)
    crm_meta = meta["crm_summary"]
    assert 0 <= crm_meta["hit_rate_canary_all"].value <= 1
    assert "hit_rate_wikimem_cue_lt_0_5" in crm_meta or rates.query("paradigm == 'wikimem' and subset == 'cue<0.5'")["n"].iloc[0] == 0
    assert Path(crm_meta["plot"].value).is_file()


@pytest.mark.slow
def test_mia_summary_one_row_per_attack_labelled_association(summaries):
    summaries, _ = summaries
    table = summaries.asset_value("mia_summary")
    # 2 memorized pairs and 2 others here: too few for ReCaLL's 3-text prefixes (tested on the planted model).
    assert set(table["attack"]) == {"loss", "zlib", "zlib_total", "min_k", "min_k_pp", "dc_pdd", "neighbourhood",
                                    "neighbourhood_pii", "lowercase", "gradient_norm", "samia", "bag_of_words", "reference"}
    assert table["attack"].is_unique
    assert (table["set_kind"] == "association").all()
    assert (table["set_description"] == ASSOCIATION_DESCRIPTION).all()
    assert (table["n_members"] + table["n_unscored"] <= 6).all() and (table["n_members"] >= 1).all()
    meta = _metadata(summaries)["mia_summary"]
    assert meta["set_description"].value == ASSOCIATION_DESCRIPTION
    assert meta["reference_model"].value == "gemma-3-270m"  # by default the other shipped model
    assert meta["auroc_loss"].value == pytest.approx(table.set_index("attack").at["loss", "auroc"])
    assert Path(meta["plot"].value).is_file()


@pytest.mark.slow
def test_eme_probe_on_real_people(summaries):
    """Real people: the audited cohorts are evaluated, other people of the extract train the
    prompt, and the stored prompt's training texts name none of the evaluated people."""
    summaries, _ = summaries
    import json

    examples = summaries.asset_value("eme_probe")
    assert set(examples["prompt_method"]) == {"record", "prefix"} and set(examples["cohort"].dropna()) <= {"well-known", "lesser-known"}
    assert examples["subject_qid"].nunique() <= 3
    meta = _metadata(summaries)["eme_probe"]
    assert meta["ground_truth"].value == "none (real people)" and meta["training_people"].value == 4
    assert Path(meta["plot"].value).is_file()
    store = Path(meta["plot"].value).parents[2] / "soft_prompts"  # <storage>/probes/<partition>/eme_rates.html
    trained = [json.loads(line) for path in store.rglob("training.jsonl") for line in path.read_text().splitlines()]
    assert len(trained) >= 4
    evaluated_names = {p.split(";")[0].removeprefix("name: ") for p in examples["prompt"]}
    assert not any(name in t["prompt"] for t in trained for name in evaluated_names)


@pytest.mark.slow
def test_wording_sensitivity_per_release_and_across_releases(summaries):
    """One row per scored wording of the audited property with AUCs in [0, 1]; Δ is the spread of
    those AUCs; the cross-release table holds this release's column."""
    from wikimem_platform.wikimem import prompt_sensitivity as ps
    from wikimem_platform.wikimem.wording import TRUTH_AUC

    summaries, across = summaries
    wordings = summaries.asset_value("wording_sensitivity")
    assert set(wordings["property"]) == {"P106"} and wordings["variant_id"].is_unique
    assert wordings[TRUTH_AUC].between(0, 1).all() and wordings["template"].str.contains("{value}").all()
    meta = _metadata(summaries)["wording_sensitivity"]
    assert meta["truth_auc_delta"].value == pytest.approx(ps.sensitivity(wordings[TRUTH_AUC])["delta"])
    assert meta["membership_known"].value is False and Path(meta["plot"].value).is_file()
    table = across.asset_value("wording_sensitivity_across_models")
    assert len(table) == len(wordings) and table.filter(like="@").shape[1] == 1
    across_meta = _metadata(across)["wording_sensitivity_across_models"]
    assert across_meta["releases"].value == 1 and Path(across_meta["plot"].value).is_file()


@pytest.mark.slow
def test_table1_and_fig1_across_releases_and_the_cross_model_report(summaries):
    """With one release audited: Table 1 has its cohorts and `all`, the checks pass, and the report
    file exists with both figures."""
    summaries, across = summaries
    pairs = summaries.asset_value("memorization")
    table = across.asset_value("memorization_across_models")
    release = pairs.assign(model="x")
    assert set(table["cohort"]) == {*pairs["cohort"].dropna(), "all"} and table["model"].nunique() == 1
    overall = table[table["cohort"] == "all"].iloc[0]
    assert overall["M_bar_pct"] == pytest.approx(100 * release["M"].mean()) and overall["n_pairs"] == len(pairs)
    assert overall["variant"] == "instruct"                         # from the registry
    # the same rows with controls, from the release's controlled_memorization
    controlled = summaries.asset_value("controlled_memorization")
    assert overall["memorized_with_controls_pct"] == pytest.approx(100 * controlled["memorized_with_controls"].mean())
    gaps = across.asset_value("cohort_gap_across_models")
    assert list(gaps["measure"]) == ["memorized_without_controls", "memorized_with_controls", "ranked_first_without_controls",
                                     "beats_controls"] and set(gaps["model"]) == {table["model"].iloc[0]}
    rates = across.asset_value("memorization_by_property_across_models")
    assert set(rates["property"]) == set(pairs["property"]) and rates["M_bar_pct"].between(0, 100).all()
    failed = [(e.check_name, e.metadata) for e in across.get_asset_check_evaluations() if not e.passed]
    assert {e.check_name for e in across.get_asset_check_evaluations()} >= {
        "memorization_across_models_check", "memorization_by_property_across_models_check"} and not failed, failed
    meta = _metadata(across)
    assert Path(meta["memorization_by_property_across_models"]["plot"].value).is_file()
    html = Path(meta["across_models_report"]["report"].value).read_text()
    assert "Table 1 (paper layout)" in html and html.count("plotly-graph-div") >= 2
    # The release without an audit is said to be left out, in plain words, never as a warning.
    assert not [m for level, m in across.logs if level >= logging.WARNING], across.logs
    assert any(m.startswith(f"{NOT_AUDITED}: no stored memorization yet") for _, m in across.logs), across.logs


@pytest.mark.slow
def test_controlled_memorization_reads_every_fact_against_invented_people(summaries):
    """Every audited fact has the controls' verdict beside the paper's flag; a fact ranked first in
    no wording is "no evidence" without any control; a compared one has 1..19 controls and its
    p-value; the invented names are stored with the table, none the person's."""
    summaries, _ = summaries
    pairs = summaries.asset_value("memorization")
    controlled = summaries.asset_value("controlled_memorization")
    assert len(controlled) == len(pairs) and set(controlled["verdict"]) <= set(controls.VERDICTS)
    compared = controlled[controlled["n_controls"].fillna(0) > 0]
    assert compared["n_controls"].between(1, controls.DEFAULT_N_CONTROLS).all()
    assert compared["p_value"].between(1 / (controls.DEFAULT_N_CONTROLS + 1), 1).all()
    not_compared = controlled[controlled["n_controls"].fillna(0) == 0]
    assert (not_compared["verdict"] == controls.NO_EVIDENCE).all() and not_compared["p_value"].isna().all()
    assert (controlled[controlled["M"] == 0]["verdict"] == controls.NO_EVIDENCE).all()
    for row in controlled.to_dict("records"):
        assert len(set(row["control_names"])) == controls.DEFAULT_N_CONTROLS and row["subject"] not in list(row["control_names"])
    meta = _metadata(summaries)["controlled_memorization"]
    assert meta["controls_per_person"].value == controls.DEFAULT_N_CONTROLS and "table_1_with_and_without_controls" in meta
