"""A data-subject request on a release served with *generation* access only (issue 36): no
probabilities, so the verdict is what the model says. The planted model is served by a real local
HTTP server (`tests.support.endpoint_server`, its own `generate`, as vLLM serves a model) with
generation access: every wording that names the person before the value is completed, for the
person and for 19 invented people with the same facts. A member's facts (read 16 times in
training) are said in more wordings than any invented person's (p = 1/20); a non-member's are
not; every fact says the access that produced it and carries no M."""

import pytest

from tests.fixtures.planted import Release
from tests.support.endpoint_server import ScriptedServer
from wikimem_platform.lm.endpoint import EndpointConfig, EndpointModel
from wikimem_platform.lm.generation import greedy_generate
from wikimem_platform.lm.loading import load_model
from wikimem_platform.planted import load_manifest
from wikimem_platform.subject_requests.answer import (
    ModelOutcome,
    compose_answer,
    model_verdicts,
    NOT_MEMORIZED,
    plain_sentence,
    release_outcomes,
    SAID,
)
from wikimem_platform.subject_requests.letter import write_answer
from wikimem_platform.subject_requests.audit import audit_person_on_releases, CONTROL_PROBE_PREFIX, WORDING_PROBE
from wikimem_platform.subject_requests import intake

KEY = "planted-said@1"
N_CONTROLS = 19  # the fewest with which p can reach 0.05
# A fact that all 19 leave behind is at the floor (p = 0.05, no control's margin): it gets 20 more
# before it is called (`controls.has_room`), and none of the 39 names it as often: p = 1/40.
EXTENDED = 39


@pytest.fixture(scope="module")
def said(planted_model, planted_reference, tmp_path_factory):
    """A member read 16 times and a non-member, each audited on the served planted model."""
    people = load_manifest(planted_model)["people"]
    chosen = {"member": next(p["qid"] for p in people if p["member"] and p["repetitions"] == 16),
              "non-member": next(p["qid"] for p in people if not p["member"])}
    lm = load_model(str(planted_model), device="cpu")
    tmp = tmp_path_factory.mktemp("generation_request")
    out = {}
    with ScriptedServer(model=lm) as server:
        endpoint = EndpointModel(EndpointConfig(url=f"{server.url}/v1", served_model="toy", tokenizer=str(planted_model),
                                                access="generation", concurrency=2, prompts_per_request=32),
                                 name="planted-said", tokenizer=lm.tokenizer)
        for who, qid in chosen.items():
            plan = planted_reference.plan(qid, n_properties=2, n_controls=N_CONTROLS)
            messages = []
            before = len(server.requests)
            result = audit_person_on_releases(
                [Release(KEY, source=server.url)], lambda r: endpoint, plan,
                shards_for=lambda key: tmp / key, sentence_cache=lambda m: None, label="dsr-1", log=messages.append)
            [outcome] = release_outcomes(result.audits, result.scores, result.completions, result.control_scores,
                                         {KEY: Release(KEY)})
            labels = dict(zip(plan.canaries["property"], plan.canaries["property_label"]))
            table, _ = model_verdicts(outcome.audit, plan, labels)
            out[who] = {"plan": plan, "result": result, "outcome": outcome, "table": table, "labels": labels,
                        "messages": messages, "sent": server.requests[before:]}
    out["lm"] = lm
    return out


def test_a_member_says_its_facts_more_readily_than_invented_people_and_a_non_member_does_not(said):
    member, other = said["member"]["table"], said["non-member"]["table"]
    print(member[["property", "verdict", "wordings_said", "wordings_asked", "n_controls", "controls_as_extreme",
                  "p_value", "controls_said_share"]].to_string())
    print(other[["property", "verdict", "wordings_said", "wordings_asked", "n_controls", "controls_as_extreme",
                 "p_value"]].to_string())
    assert len(member) == len(other) == 2
    assert list(member["verdict"]) == [SAID, SAID]
    assert (member["n_controls"] == EXTENDED).all() and (member["controls_as_extreme"] == 0).all()
    assert (member["n_controls_planned"] == N_CONTROLS).all()
    assert member["p_value"].tolist() == pytest.approx([1 / (EXTENDED + 1)] * 2)
    assert (member["wordings_said"] > 0.5 * member["wordings_asked"]).all()
    assert (member["controls_said_share"] < 0.5).all()
    assert (other["verdict"] == NOT_MEMORIZED).all()
    assert set(member["access"]) == set(other["access"]) == {"generation"}
    assert member["M"].isna().all() and member["truth_rank"].isna().all()  # no probabilities: no M, no rank


def test_every_completion_comes_from_the_server_greedily_as_the_local_model_completes(said):
    for who in ("member", "non-member"):
        result, sent = said[who]["result"], said[who]["sent"]
        audits = result.audits.set_index("model")
        assert audits.loc[KEY, "audited"] and audits.loc[KEY, "access"] == "generation"
        assert audits.loc[KEY, "sentences_computed"] == 0 and result.scores.drop(columns="model").empty
        generated = [p for path, p, _ in sent if path == "/v1/completions"]
        assert generated and all(not p.get("echo") and p["temperature"] == 0 for p in generated)
        assert sum(len(p["prompt"]) for p in generated) == len(result.completions) > 0
    completions = said["member"]["result"].completions
    mine = completions[completions["probe"] == WORDING_PROBE]
    assert mine["completion"].tolist() == greedy_generate(said["lm"], mine["prompt"].tolist())
    theirs = completions[completions["probe"] == CONTROL_PROBE_PREFIX + WORDING_PROBE]
    assert theirs["subject_qid"].nunique() == EXTENDED and set(theirs["variant_id"]) <= set(mine["variant_id"])


def test_the_letter_says_what_the_model_said_and_how_it_was_asked(said, planted_reference, tmp_path):
    member = said["member"]
    for row in member["table"].to_dict("records"):
        sentence = plain_sentence(row, "you")
        assert sentence.startswith("The model says ") and f"named it in {row['wordings_said']}" in sentence
        assert f"Of {EXTENDED} invented people given the same facts, 0 had it named in at least as many (p = 0.03, " \
               "95 % interval 0.00–0.09" in sentence
        assert "generation access: the server's completions only" in sentence and "M =" not in sentence
    for row in said["non-member"]["table"].to_dict("records"):
        assert not plain_sentence(row, "you").startswith("The model says ")
    plan, outcome = member["plan"], member["outcome"]
    store = intake.RequestStore(f"sqlite:///{tmp_path / 'requests.db'}")
    request = store.add(intake.resolve_qid(str(plan.subject["qid"].iloc[0]), planted_reference.extract.humans), "access")
    document, _ = compose_answer(request, plan, [ModelOutcome(KEY, {}, audit=outcome.audit)], member["labels"], {})
    [model] = document["models"]
    assert model["access"] == "generation" and model["n_said"] == 2 and model["n_memorized"] == 0
    assert "(completions only): says " in document["headline"] and "(2 of 2 facts)" in document["headline"]
    files = write_answer(document, tmp_path / "answer")
    html = files.html.read_text() + files.annex.read_text()
    for fact in model["facts"]:  # the evidence table: the wordings that named it, no M
        assert f"said in {fact['wordings_said']} of {fact['wordings_asked']}" in html
    assert "<td class='says'>says it</td>" in html
    letter = files.html.read_text()
    assert "prefers the true value over" not in letter  # nothing was ranked on this release
    assert "we asked it to complete each of those sentences and counted how often it named the value" in letter


def test_an_erasure_request_forgets_what_the_served_model_said(said, planted_reference, tmp_path):
    """Nothing is ranked at generation access, so the forget set holds the facts the completions
    named (in at least one wording), each with the controls' verdict: the member's two facts beat
    the invented people (p = 1/40, 39 of them: all 19 beaten, so 20 more); the letter lists them without an M."""
    store = intake.RequestStore(f"sqlite:///{tmp_path / 'requests.db'}")
    forgets, documents = {}, {}
    for who in ("member", "non-member"):
        entry = said[who]
        request = store.add(intake.resolve_qid(str(entry["plan"].subject["qid"].iloc[0]), planted_reference.extract.humans),
                            "erasure")
        document, _ = compose_answer(request, entry["plan"], [ModelOutcome(KEY, {}, audit=entry["outcome"].audit)],
                                     entry["labels"], {})
        forgets[who] = document["forget_set"]
        documents[who] = document
        named = entry["table"][entry["table"]["wordings_said"] > 0]
        assert sorted(f["property"] for f in forgets[who]) == sorted(named["property"])
    member = forgets["member"]
    assert len(member) == 2 and all(f["model"] == KEY and f["M"] is None for f in member)
    assert all(f["controls_verdict"] == SAID and f["beats_controls"] is True and f["n_controls"] == EXTENDED
               and f["p_controls"] == pytest.approx(1 / (EXTENDED + 1)) for f in member)
    truths = said["member"]["plan"].candidates
    assert {f["value_label"] for f in member} <= set(truths[truths["is_true"]]["value_label"])
    shown = {row["property"]: row["completion"]["output"] for row in said["member"]["table"].to_dict("records")}
    assert all(f["value_label"] in shown[f["property"]] for f in member)  # the value the completion named
    assert all(not f["beats_controls"] for f in forgets["non-member"])
    letter = write_answer(documents["member"], tmp_path / "erasure").html.read_text()
    for fact in member:
        assert fact["property_label"] in letter
    assert letter.count("beats invented people (p = 0.03, 39 controls)") == 2


def test_an_erasure_is_not_verified_while_a_new_revision_still_says_the_facts(said, planted_reference, tmp_path):
    """Two revisions of the served release that say the same: the verification counts both facts
    as still held (said), so the erasure is not verified; nothing is ranked, so the letter shows
    no M and says why the other people's facts cannot be compared."""
    from wikimem_platform.subject_requests.answer import erasure_outcome, FORGOTTEN, STILL

    assert erasure_outcome(SAID, NOT_MEMORIZED) == FORGOTTEN and erasure_outcome(SAID, SAID) == STILL
    member = said["member"]
    store = intake.RequestStore(f"sqlite:///{tmp_path / 'requests.db'}")
    request = store.add(intake.resolve_qid(str(member["plan"].subject["qid"].iloc[0]), planted_reference.extract.humans),
                        "erasure")
    audit = member["outcome"].audit
    document, _ = compose_answer(request, member["plan"], [ModelOutcome(KEY, {}, audit=audit),
                                                           ModelOutcome("planted-said@2", {}, audit=audit)],
                                 member["labels"], {})
    [check] = document["verification"]
    assert (check["before"], check["after"], check["erased"]) == (KEY, "planted-said@2", False)
    assert check["counts"][STILL] == 2 and check["retain"]["completions_only"]
    letter = write_answer(document, tmp_path / "verified").html.read_text()
    assert "2 still memorized (or said), 0 newly so" in letter
    assert "cannot be compared: this release is audited through its completions only" in letter
