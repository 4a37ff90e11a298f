"""Member / non-member sets: planted manifests, user JSONL, association canaries (by hand)."""

import json

import pandas as pd
import pytest

from wikimem_platform.mia import membership as mb


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


@pytest.fixture
def planted_dir(tmp_path):
    """A planted-model directory's membership files (no weights needed for the sets)."""
    people = [dict(qid="Q1", label="Ann Lee", member=True, repetitions=2, facts=[]),
              dict(qid="Q2", label="Bo Chan", member=True, repetitions=1, facts=[]),
              dict(qid="Q3", label="Cy Dunn", member=False, repetitions=0, facts=[])]
    (tmp_path / "manifest.json").write_text(json.dumps({"people": people, "files": {
        "corpus": "corpus.jsonl", "held_out_biographies": "held_out_biographies.jsonl"}}))
    write_jsonl(tmp_path / "corpus.jsonl", [
        dict(qid="Q1", text="Ann Lee was a rabbi.", sentences=["Ann Lee was a rabbi."]),
        dict(qid="Q1", text="Ann Lee, a rabbi.", sentences=["Ann Lee, a rabbi."]),
        dict(qid="Q2", text="Bo Chan was born in Mosul.", sentences=["Bo Chan was born in Mosul."])])
    write_jsonl(tmp_path / "held_out_biographies.jsonl", [
        dict(qid="Q1", text="Rabbi Ann Lee.", sentences=[]),
        dict(qid="Q2", text="Bo Chan of Mosul.", sentences=[]),
        dict(qid="Q3", text="Cy Dunn, a poet.", sentences=[])])
    return tmp_path


def test_planted_sets(planted_dir):
    assert mb.is_planted_model(planted_dir) and not mb.is_planted_model(planted_dir / "nope")
    training = mb.planted_membership(planted_dir)           # default: members' training documents
    assert training.groupby("label")["text"].apply(sorted).to_dict() == {
        True: ["Ann Lee was a rabbi.", "Ann Lee, a rabbi.", "Bo Chan was born in Mosul."],
        False: ["Cy Dunn, a poet."]}
    assert (training["set_kind"] == mb.PLANTED_TRAINING).all()
    assert training.set_index("text").at["Bo Chan was born in Mosul.", "name"] == "Bo Chan"
    held = mb.planted_membership(planted_dir, members_from="held_out")
    assert sorted(held.loc[held["label"], "text"]) == ["Bo Chan of Mosul.", "Rabbi Ann Lee."]
    assert (held["set_kind"] == mb.PLANTED_HELD_OUT).all()
    capped = mb.planted_membership(planted_dir, max_per_class=1, seed=1)
    assert capped["label"].value_counts().to_dict() == {True: 1, False: 1}
    with pytest.raises(ValueError):
        mb.planted_membership(planted_dir, members_from="both")


def test_jsonl_sets(tmp_path):
    path = tmp_path / "set.jsonl"
    write_jsonl(path, [dict(text="a b", label=1), dict(text="c d", label="non-member"),
                       dict(text="e f", label=True, name="E"),
                       dict(text="g h", label=1), dict(text="g h", label=0)])   # contradictory: dropped
    frame = mb.jsonl_membership(path)
    assert frame[["text", "label"]].values.tolist() == [["a b", True], ["c d", False], ["e f", True]]
    assert (frame["set_kind"] == mb.USER_JSONL).all() and frame["name"].tolist() == [None, None, "E"]
    write_jsonl(path, [dict(text="a", label="maybe")])
    with pytest.raises(ValueError):
        mb.jsonl_membership(path)
    write_jsonl(path, [dict(text="a")])
    with pytest.raises(ValueError, match="lacks"):
        mb.jsonl_membership(path)


def association_inputs():
    canaries = pd.DataFrame([
        dict(subject_qid="Q1", subject="Marco Polo", property="P106", variant_id=v, kind=k, template=t,
             ground_truth_labels=["merchant", "explorer"])
        for v, k, t in [(0, "baseline", "{subject}'s occupation is {value}."),
                        (1, "paraphrase", "{subject} worked as {value}.")]
    ] + [dict(subject_qid="Q2", subject="Laozi", property="P106", variant_id=0, kind="baseline",
              template="{subject}'s occupation is {value}.", ground_truth_labels=["philosopher"])])
    candidates = pd.DataFrame([
        dict(subject_qid="Q1", property="P106", value_label="merchant", is_true=True),
        dict(subject_qid="Q1", property="P106", value_label="explorer", is_true=True),
        dict(subject_qid="Q1", property="P106", value_label="admiral", is_true=False),
        dict(subject_qid="Q2", property="P106", value_label="philosopher", is_true=True),
        dict(subject_qid="Q2", property="P106", value_label="pilot", is_true=False),
        dict(subject_qid="Q2", property="P106", value_label="actor", is_true=False)])
    return canaries, candidates


def test_association_set_is_labelled_as_such():
    canaries, candidates = association_inputs()
    frame = mb.association_membership(canaries, candidates, seed=0)   # baseline canaries only
    assert (frame["set_kind"] == "association").all()
    assert (frame["set_description"] == "association (not training membership)").all()
    members = frame[frame["label"]]
    assert members["text"].tolist() == ["Marco Polo's occupation is merchant.", "Laozi's occupation is philosopher."]
    non = frame[~frame["label"]]
    assert non["text"].iloc[0] == "Marco Polo's occupation is admiral."       # the only counterfactual
    assert non["text"].iloc[1] in ("Laozi's occupation is pilot.", "Laozi's occupation is actor.")
    assert set(non["value"]) <= {"admiral", "pilot", "actor"}               # never a true value
    assert frame.equals(mb.association_membership(canaries, candidates, seed=0))   # seeded
    both = mb.association_membership(canaries, candidates, kinds=("baseline", "paraphrase"))
    assert len(both) == 6 and "Marco Polo worked as merchant." in set(both["text"])
    capped = mb.association_membership(canaries, candidates, kinds=("baseline", "paraphrase"), max_per_class=2)
    assert capped["label"].value_counts().to_dict() == {True: 2, False: 2}
    # both texts of a kept canary stay together
    assert capped.groupby(["qid", "variant_id"])["label"].nunique().eq(2).all()


def test_membership_set_picks_the_set_for_the_model(planted_dir, tmp_path):
    canaries, candidates = association_inputs()
    auto_planted = mb.membership_set("auto", str(planted_dir), jsonl_path="ignored.jsonl")
    assert (auto_planted["set_kind"] == mb.PLANTED_TRAINING).all()
    path = tmp_path / "set.jsonl"
    write_jsonl(path, [dict(text="a b", label=1), dict(text="c d", label=0)])
    assert (mb.membership_set("auto", "smollm2-135m-instruct", jsonl_path=str(path))["set_kind"] == mb.USER_JSONL).all()
    association = mb.membership_set("auto", "smollm2-135m-instruct", canaries=canaries, candidates=candidates,
                                    audited_pairs=pd.DataFrame({"subject_qid": ["Q2"], "property": ["P106"]}))
    assert set(association["qid"]) == {"Q2"} and (association["set_kind"] == mb.ASSOCIATION).all()
    forced = mb.membership_set("association", str(planted_dir), canaries=canaries, candidates=candidates)
    assert set(forced["qid"]) == {"Q1", "Q2"}
    with pytest.raises(ValueError, match="set_kind"):
        mb.membership_set("members", "x")
    with pytest.raises(ValueError, match="canaries"):
        mb.membership_set("association", "x")


def test_pii_neighbours_of_an_association_set():
    canaries, candidates = association_inputs()
    frame = mb.association_membership(canaries, candidates)
    neighbours = mb.pii_neighbour_texts(frame, n=2, seed=0)
    assert len(neighbours) == len(frame) and all(len(nb) == 2 for nb in neighbours)
    first = frame.iloc[0]    # "Marco Polo's occupation is merchant."
    for nb in neighbours[0]:
        assert "Marco Polo" not in nb and "Laozi" in nb            # the only other name
        assert nb.endswith("admiral.")                           # the pair's counterfactual value
    assert first["text"] == "Marco Polo's occupation is merchant."
    # no name or value in the text: no neighbours
    assert mb.pii_neighbour_texts(pd.DataFrame({"text": ["x y"], "name": ["Q"], "value": ["Z"]})) == [[]]


def test_reference_corpus_texts():
    humans = pd.DataFrame({"label": ["Ada", "Bob"], "description": ["English mathematician", None]})
    assert mb.reference_corpus_texts(humans) == ["Ada, English mathematician.", "Bob"]
    assert mb.reference_corpus_texts(humans, limit=1) == ["Ada, English mathematician."]
