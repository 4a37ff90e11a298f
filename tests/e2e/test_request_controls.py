"""A request read against invented people with the same facts, on the planted model (exact
ground truth): a member's facts read 16 times beat all 19 controls and are memorized; a
non-member's and an invented person's facts (the latter copied from a member) are not; the
letter says for each fact how many invented people got a result at least as strong."""

from types import SimpleNamespace

import pandas as pd
import pytest

from wikimem_platform.lm.loading import load_model
from wikimem_platform.planted import load_manifest
from wikimem_platform.subject_requests.answer import MEMORIZED, model_verdicts, NOT_MEMORIZED, plain_sentence
from wikimem_platform.subject_requests.audit import audit_person_on_model, plan_person_audit
from wikimem_platform.wikimem import controls
from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore


@pytest.fixture(scope="module")
def planted_world(planted_model, planted_reference):
    people = {p["qid"]: p for p in load_manifest(planted_model)["people"]}
    return SimpleNamespace(ref=planted_reference, people=people, lm=load_model(str(planted_model), device="cpu"))


def audit(world, subject, facts, tmp_path, plan_options=None, **options):
    ref, lm = world.ref, world.lm
    table = ref.table
    plan = plan_person_audit(subject, facts, property_table=table, templates=ref.templates, counterfactuals=ref.pool,
                             claims=ref.extract.claims, humans=ref.extract.humans, metadata=ref.metadata,
                             n_controls=controls.DEFAULT_N_CONTROLS, **(plan_options or {}))
    result = audit_person_on_model(lm, plan, ShardStore(tmp_path / "shards"), SentenceNllCache(tmp_path / "cache.sqlite"),
                                   {"dtype": "float32"}, log=lambda m: None, **options)
    labels = dict(zip(table["property"], table["label"]))
    verdicts, _ = model_verdicts(result, plan, labels)
    return plan, result, verdicts


def person(world, qid):
    return world.ref.person(qid)


@pytest.mark.slow
def test_member_read_16_times_beats_every_control(planted_world, tmp_path):
    people = planted_world.people
    qid = next(q for q, p in people.items() if p["member"] and p["repetitions"] == 16)
    plan, result, verdicts = audit(planted_world, *person(planted_world, qid), tmp_path)
    assert plan.n_controls == controls.DEFAULT_N_CONTROLS
    # controls never reach the person's completions or scores
    assert result.scores["subject_qid"].eq(qid).all() and not result.control_scores["subject_qid"].eq(qid).any()
    assert set(result.completions["subject_qid"]) == {qid}
    assert (verdicts["verdict"] == MEMORIZED).all(), verdicts[["property", "M", "p_value", "p_family", "n_controls", "name_suggests", "name_prior_share_below", "name_prior_p"]]
    # all 19 beaten leaves p at its floor (0.05) without a control's margin: 20 more, none as strong
    assert list(verdicts["p_value"]) == pytest.approx([1 / 40] * len(verdicts)) and (verdicts["n_controls"] == 39).all()
    assert (verdicts["n_controls_planned"] == 19).all()
    assert list(verdicts["p_ci_high"]) == pytest.approx([1 - 0.025 ** (1 / 39)] * len(verdicts))
    sentence = plain_sentence(verdicts.iloc[0].to_dict(), "x")
    assert "Of 39 invented people given the same facts, 0 got a result at least as strong (p = 0.03, 95 % interval " \
           "0.00–0.09" in sentence
    # the controls were chosen to share what the name tells the model: the name prior among them, no flag
    assert verdicts["name_prior"].notna().all() and not verdicts["name_suggests"].astype(bool).any()
    # a completion that names the value is read against the same wording completed for the 19
    # controls (kept apart from the person's completions)
    hits = verdicts[verdicts["completion_hit"].astype(bool)]
    assert len(hits), verdicts[["property", "completion"]]
    for row in hits.to_dict("records"):  # each fact's 19 planned controls (the matched ones)
        theirs = result.control_completions[(result.control_completions["property"] == row["property"])
                                            & (result.control_completions["probe"] == "invented: canary")]
        assert theirs["subject_qid"].nunique() == 19
        assert set(theirs["subject_qid"]) <= set(result.control_scores.loc[
            result.control_scores["property"] == row["property"], "subject_qid"])
        k = int(theirs["hit"].sum())
        assert (row["completion_controls"], row["completion_control_hits"]) == (19, k)
        assert row["completion_p_value"] == pytest.approx((1 + k) / 20)
        assert row["completion_evidence"] == (k == 0)
        assert f"Given the same facts under invented names, it named the value for {k} of 19 of them" \
            in plain_sentence(row, "x")


@pytest.mark.slow
def test_non_member_and_invented_person_get_no_verdict(planted_world, tmp_path):
    extract, people = planted_world.ref.extract, planted_world.people
    non_member = next(q for q, p in people.items() if not p["member"])
    _, _, verdicts = audit(planted_world, *person(planted_world, non_member), tmp_path)
    assert not (verdicts["verdict"] == MEMORIZED).any(), verdicts[["property", "M", "p_value"]]
    # an invented private person given a memorized member's facts: what the model says of them
    # is what it would say of anyone with these facts
    member = next(q for q, p in people.items() if p["member"] and p["repetitions"] == 16)
    facts = extract.claims[extract.claims["qid"] == member].assign(qid="dsr-invented")
    subject = pd.DataFrame([{"qid": "dsr-invented", "label": "Orla Quennell", "aliases": [], "description": None,
                             "in_wikidata": False}])
    _, _, verdicts = audit(planted_world, subject, facts, tmp_path)
    # never memorized; "weakly associated" comes by chance for about alpha of the facts (a fact
    # beats all 19 controls 1 time in 20), so one fact of four may be: it says so with its p
    assert not (verdicts["verdict"] == MEMORIZED).any(), verdicts[["property", "M", "p_value"]]
    for row in verdicts.to_dict("records"):
        sentence = plain_sentence(row, "x")
        if row["M"] > 0:  # ranked first somewhere: compared, and the letter says how it went
            n, k = int(row["n_controls"]), int(row["controls_as_extreme"])
            if n < 19:  # stopped once a control matched the person: p could no longer reach 0.05
                assert n in controls.rounds(19) and row["controls_as_extreme"] >= 1 and row["p_value"] > 0.05, row
                assert f"Of the first {n} of 19 invented people given the same facts (enough to settle it), " \
                       f"{k} got" in sentence
            else:
                assert f"Of 19 invented people given the same facts, {k} got" in sentence
            if row["verdict"] == NOT_MEMORIZED:
                assert "no evidence beyond what the model would say of anyone with these facts" in sentence
        else:  # ranked first nowhere: nothing to compare, no control scored
            assert pd.isna(row["n_controls"]) and row["verdict"] == NOT_MEMORIZED
            assert "in none of 11 phrasings does it rank it first" in sentence


@pytest.mark.slow
def test_controls_through_the_request_assets(planted_model, tmp_path):
    """`n_controls` on the request assets: the answer's facts and its letter carry the comparison."""
    from dagster import AssetSelection, materialize

    from tests.support.checks import REQUEST_CHECKS
    from tests.support.scoring_setup import UPSTREAM
    from tests.e2e.test_erasure_loop import MODEL_ASSETS, REQUEST_ASSETS, Loop
    from tests.e2e.test_planted_pipeline import planted_data_config
    from wikimem_platform.storage import StoredResults
    from wikimem_platform.planted import registry_fields
    from wikimem_platform.subject_requests import intake
    from wikimem_platform.subject_requests.answer_files import answer_dir, read_answer

    loop = Loop(tmp_path)
    loop.registry.register(**registry_fields(planted_model))
    assert materialize(UPSTREAM, instance=loop.instance, resources=loop.resources,
                       run_config=planted_data_config(planted_model)).success
    member = next(p["qid"] for p in load_manifest(planted_model)["people"] if p["member"] and p["repetitions"] == 16)
    request = loop.store.add(intake.resolve_qid(member, StoredResults(loop.storage).table("humans")), "access")
    loop.instance.add_dynamic_partitions("requests", [request.id])
    assert materialize([*UPSTREAM, *MODEL_ASSETS, *REQUEST_ASSETS, *REQUEST_CHECKS], selection=AssetSelection.groups("requests"),
                       instance=loop.instance, partition_key=request.id, resources=loop.resources,
                       run_config={"ops": {"request_canaries": {"config": {"n_controls": 19}}}}).success
    answer = read_answer(loop.storage, request.id)
    assert answer["method"]["n_controls"] == 19 and answer["method"]["control_alpha"] == 0.05
    facts = answer["models"][0]["facts"]
    # all 19 beaten: 20 more before the fact is called (p with a control's margin), none as strong
    assert facts and all(f["n_controls"] == 39 and f["verdict"] == MEMORIZED and f["p_value"] == 0.025 for f in facts), facts
    # the invented people stored with the answer: 39 names, none the person's
    assert all(len(set(f["control_names"])) == 39 and answer["subject"]["label"] not in f["control_names"] for f in facts)
    letter = answer_dir(loop.storage, request.id) / "answer.html"
    assert "invented people" in letter.read_text() and "0 of 39 (p = 0.03)" in letter.read_text()
    from wikimem_platform.reports import compliance as reports

    if reports.find_chromium() is not None:  # the layout with the extra column, in a real browser
        check = reports.check_rendering(letter, screenshot=tmp_path / "letter.png")
        assert check.screenshot_nonblank, check


@pytest.mark.slow
def test_rounds_and_shortlist_change_no_verdict(planted_world, tmp_path):
    """The audit scores controls in rounds and on a shortlist of values first; every control
    scored with every value, read the same way, gives the same verdicts, and where the audit
    went through all 19 the same count of controls as extreme — at a fraction of the sentences."""
    from wikimem_platform.canaries.encoders import load_encoder
    from wikimem_platform.wikimem.memorization import evaluate_wikimem
    from wikimem_platform.wikimem.scoring import score_canaries

    extract, people, lm = planted_world.ref.extract, planted_world.people, planted_world.lm
    member = next(q for q, p in people.items() if p["member"] and p["repetitions"] == 4)
    facts = extract.claims[extract.claims["qid"] == member].assign(qid="dsr-invented")
    invented = pd.DataFrame([{"qid": "dsr-invented", "label": "Orla Quennell", "aliases": [], "description": None,
                              "in_wikidata": False}])
    checked = 0
    for who, (subject, person_facts) in {"member read 4 times": person(planted_world, member),
                                         "invented person": (invented, facts)}.items():
        # a shortlist of 3 wrong values (of ~10 here; 10 of ~100 by default); the controls as drawn (no
        # kin names to match them to), so that every control on every value is the same 19
        plan, result, verdicts = audit(planted_world, subject, person_facts, tmp_path / who.replace(" ", "_"),
                                       plan_options={"kin_per_token": 0, "max_controls": 19}, shortlist_size=3)
        compared = list(result.compared)
        assert compared, f"{who}: no fact ranked first anywhere; pick another person"
        wanted = plan.control_canaries["property"].isin(compared)
        full, report = score_canaries(lm, plan.control_canaries[wanted],
                                      plan.control_candidates[plan.control_candidates["property"].isin(compared)],
                                      ShardStore(tmp_path / f"full_{who[:3]}"), {"dtype": "float32"}, log=lambda m: None,
                                      sentence_cache=SentenceNllCache(tmp_path / f"full_{who[:3]}.sqlite"))
        exact = controls.compare_with_controls(
            controls.with_compared(evaluate_wikimem(result.scores, embed=load_encoder()).pairs,
                                   controls.compared(result.scores, load_encoder()).pairs),
            controls.compared(full, load_encoder()).pairs).set_index("property")
        for row in verdicts[verdicts["property"].isin(compared)].to_dict("records"):
            want = exact.loc[row["property"]]
            level = {controls.MEMORIZED: MEMORIZED}.get(want["verdict"], row["verdict"] if want["verdict"] == controls.WEAK else NOT_MEMORIZED)
            assert row["verdict"] == level, (who, row, want.to_dict())
            if row["n_controls"] == 19:
                assert row["controls_as_extreme"] == want["controls_as_extreme"], (who, row, want.to_dict())
            checked += 1
        print(f"{who}: {len(compared)} facts compared; the controls' (wording, value) rows scored: {len(result.control_scores):,} "
              f"({int(result.control_scores['shortlisted'].sum()):,} on a shortlist), {len(full):,} with every control on every value")
        assert len(result.control_scores) < len(full) and result.control_scores["shortlisted"].any()
    assert checked >= 2
