"""The audit against exact ground truth: the planted model through the same assets as any model.

data (the bundled planted extract) -> canaries -> scores -> memorization -> planted_validation,
in-process, for the `planted-tiny` partition. Flag used for the acceptance: `at_threshold`
(M >= 0.8: at least 9 of the 11 canary wordings rank a true value first after calibration).
"""

import filecmp
import sys
from pathlib import Path

import pandas as pd
import pytest
from dagster import DagsterInstance, materialize

from assets import data as data_assets
from assets import probes as probe_assets
from assets import scoring as scoring_assets
from assets import validation as validation_assets
from tests.support.checks import PROBE_CHECKS, SCORING_CHECKS
from tests.support.criteria import criterion, observe
from tests.support.scoring_setup import UPSTREAM, resources
from tests.support.checks import CANARY_CHECKS
from tests.support.checks import DATA_CHECKS
from wikimem_platform.reference import bundled
from wikimem_platform.wikidata import extract as wikidata
from wikimem_platform.planted import PlantedConfig, generate_world, load_manifest, registry_fields
from wikimem_platform.registry import Registry
from wikimem_platform.vocabulary import CONTEXTUALIZED
from wikimem_platform.wikimem.wording import ALL_PROPERTIES, BEST_WORDING, wording_sensitivity

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import build_planted_sample  # noqa: E402
import validate_planted  # noqa: E402


def planted_data_config(model_dir: Path) -> dict:
    """The data assets on the planted model's own people. Top 44 by web presence = the most-repeated
    members (all 11 read 16 times, 33 of the 44 read 4 times), bottom 44 = all the non-members;
    every candidate value of the world (11 per property)."""
    return validate_planted.planted_data_config(cohort_size=44, per_property=20, model_dir=model_dir)


def test_bundled_planted_extract_is_the_default_world(tmp_path):
    dump, web = build_planted_sample.build(tmp_path)
    assert filecmp.cmp(dump, bundled.PLANTED_DUMP, shallow=False), "rebuild: scripts/build_planted_sample.py"
    assert filecmp.cmp(web, bundled.PLANTED_WEB_PRESENCE, shallow=False), "rebuild: scripts/build_planted_sample.py"
    extract = wikidata.read_dump(bundled.PLANTED_DUMP)
    people = generate_world(PlantedConfig()).people
    assert set(extract.humans["qid"]) == {p.qid for p in people}


# One soft prompt (prefix tuning, 5 tokens) on members' records, probing the 50-epoch model (as
# tests/unit/eme/test_eme_planted.py does, where the control is tested): on the fully trained one the
# record prompt already extracts every fact read 16 times, leaving the soft prompt nothing to show.
PROBE_CONFIG = {"ops": {"eme_probe": {"config": {
    "prefix_lengths": [5], "training_data": ["real"], "control": "none", "epochs": 40, "max_eval_people": 0}}}}


@pytest.fixture(scope="module")
def planted_audit_dir(tmp_path_factory):
    """Where the planted audit keeps its shards and sentence cache (a test scoring more reads it)."""
    return tmp_path_factory.mktemp("planted_audit")


@pytest.fixture(scope="module")
def planted_audit(planted_model, planted_audit_dir):
    tmp_path = planted_audit_dir
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    entry = Registry(url).register(**registry_fields(planted_model))
    with DagsterInstance.ephemeral() as instance:
        upstream = materialize([*UPSTREAM, *DATA_CHECKS, *CANARY_CHECKS], instance=instance,
                               resources=resources(tmp_path, url), run_config=planted_data_config(planted_model))
        instance.add_dynamic_partitions("models", [entry.key])
        scored = materialize(
            [*UPSTREAM, scoring_assets.scores, scoring_assets.memorization, scoring_assets.controlled_memorization,
             validation_assets.planted_validation, *SCORING_CHECKS],
            selection=[scoring_assets.scores, scoring_assets.memorization, scoring_assets.controlled_memorization,
                       validation_assets.planted_validation],
            instance=instance, partition_key=entry.key, resources=resources(tmp_path, url),
        )
        yield upstream, scored, planted_model


@pytest.fixture(scope="module")
def planted_probe(short_planted_model, tmp_path_factory):
    """eme_probe on the 50-epoch model, in an instance of its own: it reads the world's extract (the
    same people as the full model's, in the short model's directory), not the full model's audit."""
    tmp_path = tmp_path_factory.mktemp("planted_probe")
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    entry = Registry(url).register(**registry_fields(short_planted_model))
    data = [data_assets.wikidata_extract, data_assets.property_table, data_assets.subjects]
    data_config = planted_data_config(short_planted_model)
    data_config["ops"].pop("counterfactuals")  # not selected: eme_probe reads no candidates
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("models", [entry.key])
        materialize(UPSTREAM, selection=data, instance=instance, resources=resources(tmp_path, url),
                    run_config=data_config)
        yield materialize([*UPSTREAM, probe_assets.eme_probe, *PROBE_CHECKS], selection=[probe_assets.eme_probe],
                          instance=instance, partition_key=entry.key, resources=resources(tmp_path, url),
                          run_config=PROBE_CONFIG)


@pytest.mark.slow
def test_eme_probe_on_the_planted_model(planted_probe):
    """The probes asset finds the planted ground truth of the 50-epoch model and the soft prompt
    beats the same record prompt without it on the members read 16 times; non-members' facts are
    not emitted."""
    assert planted_probe.success
    evaluations = planted_probe.get_asset_check_evaluations()
    assert [e.check_name for e in evaluations] == ["eme_probe_check"] and evaluations[0].passed
    meta = planted_probe.get_asset_materialization_events()[0].materialization.metadata
    assert meta["ground_truth"].value == "planted"
    examples = planted_probe.asset_value("eme_probe")
    rates = examples[examples["repetitions"] > 0].groupby(["prompt_method", "repetitions"])["hit"].mean()
    criterion("eme_probe asset: prefix - record hit rate, r = 16", rates[("prefix", 16)] - rates[("record", 16)], ">", 0.2)
    non_members = examples.loc[examples["repetitions"] == 0, "hit"]
    criterion("eme_probe asset: non-members' hit rate", non_members.mean(), "<=", 0.05, n=len(non_members))
    assert Path(meta["plot"].value).is_file()


@pytest.mark.slow
def test_planted_pipeline_passes_every_check(planted_audit):
    upstream, scored, _ = planted_audit
    evaluations = [*upstream.get_asset_check_evaluations(), *scored.get_asset_check_evaluations()]
    failed = [(e.check_name, e.metadata) for e in evaluations if not e.passed]
    assert not failed, failed
    subjects = upstream.asset_value("subjects")
    manifest = load_manifest(planted_audit[2])
    repetitions = {p["qid"]: p["repetitions"] for p in manifest["people"]}
    cohorts = subjects.assign(reps=subjects["qid"].map(repetitions)).groupby("cohort")["reps"]
    assert cohorts.min()["well-known"] >= 4 and cohorts.max()["lesser-known"] == 0


def _validation_numbers(scored) -> dict:
    meta = {e.materialization.asset_key.to_user_string(): e.materialization.metadata
            for e in scored.get_asset_materialization_events()}["planted_validation"]
    return {key: value.value for key, value in meta.items() if isinstance(value.value, (int, float))}


@pytest.mark.slow
def test_audit_finds_what_was_planted_and_nothing_else(planted_audit):
    """The acceptance, on the threshold flag (M >= 0.8): precision >= 0.95, recall >= 0.90 on
    facts read >= 4 times per epoch, false-positive rate <= 2 % on non-members' facts, and the
    loss attack's AUROC >= 0.95 on held-out biographies of members vs non-members."""
    numbers = _validation_numbers(planted_audit[1])
    flagged, strong, negatives = (int(numbers[k]) for k in (
        "at_threshold_flagged", "at_threshold_planted_facts_r4plus_scored", "at_threshold_non_member_facts_scored"))
    criterion("audit: precision at M >= 0.8", numbers["at_threshold_precision"], ">=", 0.95, n=flagged, context=numbers)
    criterion("audit: recall at M >= 0.8, facts read >= 4 times", numbers["at_threshold_recall_r4plus"], ">=", 0.90,
              n=strong, context=numbers)
    criterion("audit: false-positive rate on non-members' facts", numbers["at_threshold_false_positive_rate"], "<=", 0.02,
              n=negatives, context=numbers)
    criterion("audit: loss attack AUROC, held-out biographies", numbers["loss_mia_auroc"], ">=", 0.95, context=numbers)


@pytest.mark.slow
def test_recall_grows_with_repetitions_and_non_members_stay_below_chance(planted_audit):
    """By repetition count: more reading, more facts flagged; a non-member's mean M stays below
    1 / (number of candidates), i.e. the audit does not confuse them with anybody."""
    scored = planted_audit[1]
    table = scored.asset_value("planted_validation").set_index("repetitions")
    assert set(table.index) == {0, 4, 16}
    rate = table["at_threshold_rate"]
    criterion("audit: flagged share, r = 16 minus r = 4", rate[16] - rate[4], ">=", 0)
    criterion("audit: flagged share, r = 4 minus non-members", rate[4] - rate[0], ">", 0)
    pairs = scored.asset_value("memorization")
    criterion("audit: non-members' mean M below chance (1 / candidates)", table.loc[0, "mean_M"], "<",
              1 / pairs["n_candidates"].min())


@pytest.mark.slow
def test_only_planted_directories_have_ground_truth(planted_audit, tmp_path):
    """The validation asset writes nothing for a model without a planted manifest."""
    from wikimem_platform.mia.membership import is_planted_model

    assert is_planted_model(planted_audit[2])
    assert not is_planted_model(tmp_path)
    assert not is_planted_model("smollm2-135m-instruct")


@pytest.mark.slow
def test_most_wordings_tell_members_from_non_members_and_the_best_on_dev_holds_on_test(planted_audit):
    """Wording sensitivity on the planted audit (wikimem_platform.wikimem.wording): each canary wording's
    member-vs-non-member AUC (pair confidence = the share of counterfactuals the best truth beats)
    is mostly above chance, and the wording chosen on the dev half of the subjects stays above
    chance on the test half, per property and averaged."""
    upstream, scored, model_dir = planted_audit
    membership = {person["qid"]: person["member"] for person in load_manifest(model_dir)["people"]}
    result = wording_sensitivity(scored.asset_value("scores"), upstream.asset_value("canary_templates"), membership)
    wordings = result.wordings
    assert wordings["member_auc"].notna().all() and wordings["template"].notna().all()
    assert set(wordings.loc[wordings["kind"] == CONTEXTUALIZED, "variant_id"]) == {wordings["variant_id"].max()}
    above = wordings["member_auc"] > 0.5
    criterion("wording: share of wordings with member AUC > 0.5", above.mean(), ">=", 0.9, n=len(above))
    best = result.strategies[result.strategies["strategy"] == BEST_WORDING].set_index("property")["member_auc_test"]
    criterion("wording: member AUC on test of the best dev wording (all properties)", best[ALL_PROPERTIES], ">", 0.5)
    criterion("wording: member AUC on test of the best dev wording (worst property)", best.min(), ">", 0.5)


@pytest.mark.slow
def test_planted_model_audited_on_real_subjects_writes_nothing(planted_model, tmp_path):
    """No planted person among the audited subjects (the real sample was the data source): no
    ground truth, so nothing is written, with a warning; a mix of planted and real subjects is an error."""
    import pandas as pd
    from dagster import build_asset_context

    url = f"sqlite:///{tmp_path / 'registry.db'}"
    entry = Registry(url).register(**registry_fields(planted_model))
    real = pd.DataFrame({"subject_qid": ["Q42", "Q42"], "property": ["P106", "P27"], "M": [1.0, 0.0]})
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("models", [entry.key])
        with build_asset_context(partition_key=entry.key, instance=instance,
                                 resources=resources(tmp_path, url)) as context:
            config = validation_assets.PlantedValidationConfig()
            assert list(validation_assets.planted_validation(context, config, memorization=real)) == []
            planted_qid = load_manifest(planted_model)["people"][0]["qid"]
            mixed = pd.concat([real, real.head(1).assign(subject_qid=planted_qid)], ignore_index=True)
            with pytest.raises(ValueError, match="not planted facts"):
                list(validation_assets.planted_validation(context, config, memorization=mixed))


@pytest.mark.slow
def test_calibration_study_on_the_planted_model(planted_audit, tmp_path):
    """The calibration_study asset (issue 17.5) on the planted audit's own scores, members vs
    non-members: only the all-part look-alike sentences are scored (tiny model, 5 + 5 subjects),
    every setting separates members from non-members, and the paper's default does not beat the
    best one. Measured 2026-11-24 on 44 + 44 subjects (176 + 176 pairs): AUROC of M 1.000 in every
    setting but alpha=1 all-parts (0.999); members' rank-1 rate 0.885 (alpha=1 all-parts) to 0.988
    (NLL(h) alone), non-members' 0.003 to 0.015."""
    from dagster import build_asset_context

    from assets import calibration as calibration_assets
    from wikimem_platform.wikimem import calibration

    upstream, scored, model_dir = planted_audit
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    entry = Registry(url).register(**registry_fields(model_dir))
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("models", [entry.key])
        with build_asset_context(partition_key=entry.key, instance=instance,
                                 resources=resources(tmp_path, url)) as context:
            output = calibration_assets.calibration_study(
                context, calibration_assets.CalibrationStudyConfig(max_subjects_per_cohort=5),
                scores=scored.asset_value("scores"), canaries=upstream.asset_value("canaries"),
                candidates=upstream.asset_value("candidates"), subjects=upstream.asset_value("subjects"),
                value_aliases=upstream.asset_value("value_aliases"))
            meta = {key: getattr(value, "value", value) for key, value in output.metadata.items()}
            assert Path(meta["plot"]).is_file()  # under the instance's storage, gone with it
    table = output.value.set_index("setting")
    assert meta["groups"] == "member (positive) vs non-member" and meta["n_subjects"] == 10
    assert meta["sentences_computed"] > 0
    assert list(table.index) == [setting.name for setting in calibration.SETTINGS]
    assert table["n_pairs_positive"].gt(0).all() and table["n_pairs_negative"].gt(0).all()
    criterion("calibration study: lowest separation over settings", table[calibration.SEPARATION_TIEBREAK].min(), ">", 0.8)
    criterion("calibration study: rank-1 rate, members minus non-members (lowest setting)",
              (table["rank1_rate_positive"] - table["rank1_rate_negative"]).min(), ">", 0)
    assert table.loc[meta["best_setting"], calibration.SEPARATION] >= table.loc[calibration.PAPER_SETTING, calibration.SEPARATION]


@pytest.mark.slow
def test_controls_separate_what_was_planted_from_what_anyone_would_get(planted_audit, planted_audit_dir, tmp_path):
    """The cohort audit's `controlled_memorization`: each planted person against 19 invented people
    with the same facts (names from the bundled sample's labels, never a planted person), scored in
    rounds and on shortlists. Recomputed here the long way (every control on every value) with 19
    more invented people per member read >= 4 times, held out and read against the controls as the
    person is: the asset's verdicts equal the long way's; the held-out people reach *memorized* in
    at most alpha of cases; members' facts read >= 4 times stay *memorized* (recall >= 0.90);
    non-members have no *memorized* fact and *weakly associated* ones at most at rate alpha; the
    members-minus-non-members gap (well-known minus lesser-known here) keeps a CI above 0 with
    controls."""
    from wikimem_platform.wikimem import controls, control_scoring, controlled_rates
    from wikimem_platform.canaries.build import build_canaries
    from wikimem_platform.canaries.encoders import load_encoder
    from wikimem_platform.reference.counterfactuals import build_candidates
    from wikimem_platform.wikimem.memorization import aliases_by_value, evaluate_wikimem
    from wikimem_platform.lm.loading import load_model
    from wikimem_platform.wikimem.scoring import ShardStore, score_canaries

    upstream, scored, planted_model = planted_audit
    subjects, claims = upstream.asset_value("subjects"), upstream.asset_value("claims")
    table, templates = upstream.asset_value("property_table"), upstream.asset_value("canary_templates")
    canaries, candidates = upstream.asset_value("canaries"), upstream.asset_value("candidates")
    counterfactuals, humans = upstream.asset_value("counterfactuals"), upstream.asset_value("humans")
    asset = scored.asset_value("controlled_memorization")
    reps = {p["qid"]: p["repetitions"] for p in load_manifest(planted_model)["people"]}
    n = controls.DEFAULT_N_CONTROLS
    names = asset.drop_duplicates("subject_qid").set_index("subject_qid")["control_names"].map(list).to_dict()
    assert set(names) == set(subjects["qid"]) and all(len(set(chosen)) == n for chosen in names.values())
    # the held-out people: more invented names of the same draw, none a control
    more = control_scoring.cohort_control_names(subjects, claims, humans, 3 * n)
    held_out = {q: [name for name in more[q] if name not in names[q]][:n] for q in names}
    assert all(len(chosen) == n for chosen in held_out.values())
    embed, aliases = load_encoder(), aliases_by_value(upstream.asset_value("value_aliases"))
    giveaways = control_scoring.cohort_giveaways(canaries, aliases)
    person_pairs = control_scoring.compared_people(scored.asset_value("scores"), giveaways, embed, aliases)
    # the long way: every control on every value (the person's own rows under each name, as the
    # asset scores them), for every fact with something to test (M > 0; the others need no control)
    control_canaries, control_candidates = controls.control_rows(canaries, candidates, names, per_person_ids=True)
    tested = set(zip(person_pairs.loc[person_pairs["M"] > 0, "subject_qid"], person_pairs.loc[person_pairs["M"] > 0, "property"]))
    control_canaries = control_canaries[[k in tested for k in zip(control_canaries["control_of"], control_canaries["property"])]]
    of = controls.controls_of(control_canaries)
    # probes for the members' facts (what the model knows about someone could leak to anyone given
    # the same facts; non-members' facts know no one), read as a person is: with look-alike names
    probe_subjects, probe_facts = [], []
    for person in subjects.to_dict("records"):
        if reps[person["qid"]] >= 4:
            people, copied = controls.control_people(pd.DataFrame([person]), claims[claims["qid"] == person["qid"]],
                                                     held_out[person["qid"]])
            probe_subjects.append(people.assign(qid=people["qid"] + "-probe-" + person["qid"]))
            probe_facts.append(copied.assign(qid=copied["qid"] + "-probe-" + person["qid"]))
    probe_people, probe_claims = pd.concat(probe_subjects, ignore_index=True), pd.concat(probe_facts, ignore_index=True)
    of.update(dict(zip(probe_people["qid"], probe_people["control_of"])))
    probe_canaries = build_canaries(probe_people, probe_claims, table, templates, n_context=4, seed=0, n_similar=2)
    lm = load_model(str(planted_model), device="cpu")
    scoring = resources(planted_audit_dir, "sqlite://")["scoring"]
    everything, _ = score_canaries(
        lm, pd.concat([control_canaries, probe_canaries], ignore_index=True),
        pd.concat([control_candidates, build_candidates(probe_people, probe_claims, counterfactuals)], ignore_index=True),
        ShardStore(tmp_path / "shards"), scoring.settings(), log=lambda m: None,
        sentence_cache=scoring.sentence_cache(lm))  # the asset's cache: its controls' sentences are read back
    kept = control_scoring.drop_giveaways(everything, giveaways, of)
    is_probe = kept["subject_qid"].str.contains("-probe-")
    control_pairs = controls.compared(kept[~is_probe], embed, aliases).pairs
    probe_scores = kept[is_probe]
    probes = controls.with_compared(evaluate_wikimem(probe_scores, embed=embed, value_aliases=aliases).pairs,
                                    controls.compared(probe_scores, embed, aliases).pairs)
    out = controls.compare_with_controls(person_pairs, control_pairs, probes, of=of)
    compared = out[out["M"] > 0]
    assert (compared["n_controls"] == n).all()
    # rounds and shortlists change no verdict
    merged = out.merge(asset[["subject_qid", "property", "verdict"]], on=["subject_qid", "property"], suffixes=("", "_asset"))
    assert len(merged) == len(asset) and (merged["verdict"] == merged["verdict_asset"]).all(), \
        merged.loc[merged["verdict"] != merged["verdict_asset"], ["subject_qid", "property", "M", "p_value", "verdict", "verdict_asset"]]
    out["repetitions"] = out["subject_qid"].map(reps)
    assert (out.loc[(out["repetitions"] >= 4) & (out["M"] > 0), "n_probes"] == controls.DEFAULT_N_PROBES).all()
    print(out.groupby(["repetitions", "verdict"]).size().unstack(fill_value=0).to_string())
    print(out[["fpr_memorized", "fpr_weak", "controls_M_mean", "controls_M_max"]].describe().round(3).to_string())
    read_4 = out[out["repetitions"] >= 4]
    criterion("controls: members' facts read >= 4 times, memorized", (read_4["verdict"] == controls.MEMORIZED).mean(),
              ">=", 0.90, n=len(read_4))
    non = out[out["repetitions"] == 0]
    criterion("controls: non-members' memorized facts", int((non["verdict"] == controls.MEMORIZED).sum()), "==", 0)
    criterion("controls: non-members' weakly associated rate", (non["verdict"] == controls.WEAK).mean(), "<=", 0.05, n=len(non))
    probed = out[out["n_probes"] > 0]
    criterion("controls: held-out invented people with members' facts reaching memorized", probed["fpr_memorized"].mean(),
              "<=", 0.05, n=int(probed["n_probes"].sum()))
    # Their weakly-associated rate is alpha by design (a probe beats all 19 controls 1 time in 20
    # when nothing ties), so it is reported, not asserted.
    observe("controls: held-out invented people with members' facts, weakly associated", probed["fpr_weak"].mean())
    # the asset's Table 1 both ways, and the cohort gap with its CI both ways
    rates = controlled_rates.rates(asset).set_index("cohort")
    print(rates.round(2).to_string())
    gaps = controlled_rates.cohort_gap(asset).set_index("measure")
    print(gaps.round(2).to_string())
    criterion("controls: members-minus-non-members gap with controls, CI low (%)",
              gaps.loc[controlled_rates.WITH, "ci_low_pct"], ">", 0)
