"""Forget sets carry the invented-person controls' verdict: by hand on the compliance tests'
scores and pairs, from a hand-built comparison, a stored controlled_memorization table and a
request answer's per-fact table."""

import json
import math

import pandas as pd
import pytest

from tests.unit.reports.test_compliance import SCORES
from tests.unit.subject_requests.test_inquiry import OLD, storage  # noqa: F401  (fixture: hand-made stored results)
from wikimem_platform.storage import json_scalar, StoredResults
from wikimem_platform.subject_requests.answer_files import answer_dir, DOCUMENT
from wikimem_platform.subject_requests.answer import forget_controls, NOT_MEMORIZED, WEAK
from wikimem_platform.unlearning import stored as unlearning_stored
from wikimem_platform.unlearning.export import write_export
from wikimem_platform.unlearning.forget_sets import (
    CONTROL_COLUMNS,
    controls_words,
    FORGET_COLUMNS,
    best_true_values,
    forget_set,
    write_jsonl,
)
from wikimem_platform.wikimem import controlled_rates, controls


def comparison() -> pd.DataFrame:
    """OLD (lenient forget set: Q1 P106 10/11, Q2 P27 2/11, Q2 P106 1/11) read against controls:
    Q1 P106 beats all 19 (p = 1/20), Q2 P27 is matched by 1 of 3 (settled: p = 2/4), Q2 P106 has
    no comparison (as if its controls had not been computed); Q1 P27 (M = 0) is never compared."""
    return pd.DataFrame({
        "subject_qid": ["Q1", "Q2"], "property": ["P106", "P27"], "verdict": [controls.MEMORIZED, controls.NO_EVIDENCE],
        "p_value": [0.05, 0.5], "n_controls": [19, 3], "controls_as_extreme": [0, 1], "alpha": 0.05,
        "controls_M_mean": [0.1, 0.3], "controls_M_max": [0.2, 0.4], "M_compared": [0.9, 0.2]})


def controlled_table() -> pd.DataFrame:
    """What the controlled_memorization asset stores for OLD: every pair, uncompared ones as
    "no evidence" with no controls."""
    return controlled_rates.controlled_pairs(pd.DataFrame(OLD), comparison()).assign(control_names=[[]] * 4)


def keyed(frame: pd.DataFrame) -> dict:
    return {(r["subject_qid"], r["property"]): r for r in frame.to_dict("records")}


def test_forget_set_rows_carry_the_controls_verdict_and_stay_the_same_set():
    pairs, best = pd.DataFrame(OLD), best_true_values(SCORES)
    bare = forget_set("a@1", pairs, best)
    checked = forget_set("a@1", pairs, best, controls=controlled_table())
    assert list(checked.columns) == FORGET_COLUMNS and set(CONTROL_COLUMNS) <= set(FORGET_COLUMNS)
    # erasure errs on inclusion: the fact no better than its controls stays, in the same order
    assert checked.drop(columns=CONTROL_COLUMNS).equals(bare.drop(columns=CONTROL_COLUMNS))
    rows = keyed(checked)
    beats, matched, absent = rows[("Q1", "P106")], rows[("Q2", "P27")], rows[("Q2", "P106")]
    assert beats["controls_verdict"] == controls.MEMORIZED and beats["beats_controls"] is True
    assert math.isclose(beats["p_controls"], 0.05) and beats["n_controls"] == 19 and beats["controls_alpha"] == 0.05
    assert matched["controls_verdict"] == controls.NO_EVIDENCE and matched["beats_controls"] is False
    assert matched["n_controls"] == 3 and math.isclose(matched["p_controls"], 0.5)
    # not compared: null, not False (the controlled table says "no evidence" with no controls)
    assert absent["controls_verdict"] is None and pd.isna(absent["beats_controls"]) and pd.isna(absent["n_controls"])
    assert checked["beats_controls"].dtype == "boolean" and checked["beats_controls"].isna().tolist() == [False, False, True]
    assert math.isnan(absent["p_controls"]) and math.isnan(absent["controls_alpha"])
    # no controls at all: every control column null, for every row
    assert bare[CONTROL_COLUMNS].isna().all().all()
    assert bare["controls_verdict"].tolist() == [None] * 3


def test_the_forget_set_narrows_to_the_facts_beyond_the_controls_only_when_asked():
    pairs, best = pd.DataFrame(OLD), best_true_values(SCORES)
    narrow = forget_set("a@1", pairs, best, controls=comparison(), beyond_controls=True)
    assert list(zip(narrow["subject_qid"], narrow["property"])) == [("Q1", "P106")]
    assert list(narrow.columns) == FORGET_COLUMNS
    # weakly associated beats them too (p <= alpha below the threshold)
    weak = comparison().assign(verdict=[controls.MEMORIZED, controls.WEAK], p_value=[0.05, 0.05])
    assert len(forget_set("a@1", pairs, best, controls=weak, beyond_controls=True)) == 2
    with pytest.raises(ValueError, match="no controls were computed"):
        forget_set("a@1", pairs, best, beyond_controls=True)
    with pytest.raises(ValueError, match="no controls were computed"):
        forget_set("a@1", pairs, best, controls=comparison().iloc[:0], beyond_controls=True)


def test_jsonl_writes_missing_controls_as_null_and_the_words_say_it(tmp_path):
    frame = forget_set("a@1", pd.DataFrame(OLD), best_true_values(SCORES), controls=controlled_table())
    write_jsonl(frame, tmp_path / "f.jsonl")
    lines = {(r["subject_qid"], r["property"]): r for r in map(json.loads, (tmp_path / "f.jsonl").read_text().splitlines())}
    assert lines[("Q1", "P106")]["n_controls"] == 19 and lines[("Q1", "P106")]["beats_controls"] is True
    assert lines[("Q2", "P27")]["beats_controls"] is False
    assert all(lines[("Q2", "P106")][c] is None for c in CONTROL_COLUMNS)
    assert [controls_words(r) for r in frame.to_dict("records")] == [
        "beats invented people (p = 0.05, 19 controls)", "no better than invented people (p = 0.50, 3 controls)",
        "not compared"]
    assert controls_words({"n_controls": 1, "p_controls": 1.0, "beats_controls": False}) == \
        "no better than invented people (p = 1.00, 1 control)"
    assert controls_words({"n_controls": None, "p_controls": None, "beats_controls": None}) == "not compared"


def _scores(storage):
    (storage / "parquet" / "scores").mkdir()
    SCORES.to_parquet(storage / "parquet" / "scores" / "a@1.parquet")


def test_release_forget_set_reads_the_stored_controlled_table(storage):  # noqa: F811
    _scores(storage)
    stored = StoredResults(storage)
    without = unlearning_stored.release_forget_set(stored, "a@1", "lenient")
    assert len(without) == 3 and without[CONTROL_COLUMNS].isna().all().all()
    with pytest.raises(FileNotFoundError, match="no stored controlled_memorization for a@1"):
        unlearning_stored.release_forget_set(stored, "a@1", "lenient", beyond_controls=True)
    (storage / "parquet" / "controlled_memorization").mkdir()
    controlled_table().to_parquet(storage / "parquet" / "controlled_memorization" / "a@1.parquet")
    full = unlearning_stored.release_forget_set(stored, "a@1", "lenient")
    rows = keyed(full)
    assert len(full) == 3 and rows[("Q1", "P106")]["beats_controls"] is True and rows[("Q1", "P106")]["n_controls"] == 19
    assert rows[("Q2", "P27")]["beats_controls"] is False and pd.isna(rows[("Q2", "P106")]["beats_controls"])
    narrow = unlearning_stored.release_forget_set(stored, "a@1", "lenient", beyond_controls=True)
    assert narrow["value_label"].tolist() == ["mathematician"] and narrow["subject_qid"].tolist() == ["Q1"]


def test_an_erasure_answer_passes_its_per_fact_controls_to_the_forget_set():
    """model_verdicts' table (the answer's words, controls per fact) -> forget_set's controls: an
    untestable fact the answer calls "not memorized" does not beat them, whatever its p."""
    table = pd.DataFrame({"property": ["P106", "P27", "P19"], "verdict": [WEAK, NOT_MEMORIZED, NOT_MEMORIZED],
                          "p_value": [0.05, 0.05, None], "n_controls": [19, 19, None], "control_alpha": [0.05, 0.05, None]})
    pairs = pd.DataFrame({"subject_qid": ["person-x"] * 3, "property": ["P106", "P27", "P19"], "M": [0.5, 0.9, 0.2],
                          "z_star": [1.0, 2.0, 0.5], "lenient": True, "strict": False, "at_threshold": [False, True, False],
                          "subject": "Ilse Marwitz"})
    best = pd.DataFrame({"subject_qid": ["person-x"] * 3, "property": ["P106", "P27", "P19"], "value": ["Q1", "Q2", "Q3"],
                         "value_label": ["journalist", "Germany", "Tübingen"]})
    frame = forget_set("dsr@1", pairs, best, controls=forget_controls(table, pairs))
    rows = {r["property"]: r for r in frame.to_dict("records")}
    assert rows["P106"]["controls_verdict"] == controls.WEAK and rows["P106"]["beats_controls"] is True
    assert rows["P27"]["controls_verdict"] == controls.NO_EVIDENCE and rows["P27"]["beats_controls"] is False
    assert rows["P19"]["controls_verdict"] is None and pd.isna(rows["P19"]["beats_controls"])
    assert forget_controls(table.iloc[:0], pairs).empty


def _templates(storage):
    pd.DataFrame({"property": ["P106", "P27"], "kind": "baseline", "variant_id": 0,
                  "template": ["{subject} worked as a {value}.", "{subject} is a citizen of {value}."]}
                 ).to_parquet(storage / "parquet" / "canary_templates.parquet")


def test_a_release_export_in_jsonl_carries_the_controls_verdict(storage, tmp_path):  # noqa: F811
    _scores(storage)
    _templates(storage)
    (storage / "parquet" / "controlled_memorization").mkdir()
    controlled_table().to_parquet(storage / "parquet" / "controlled_memorization" / "a@1.parquet")
    sets = unlearning_stored.release_export(StoredResults(storage), "a@1", "lenient")
    write_export(sets, "jsonl", tmp_path / "out")
    forget = [json.loads(line) for line in (tmp_path / "out" / "forget.jsonl").read_text().splitlines()]
    assert [(f["property"], f["beats_controls"], f["n_controls"]) for f in forget] == [
        ("P106", True, 19), ("P27", False, 3), ("P106", None, None)]
    retain = (tmp_path / "out" / "retain.jsonl").read_text().splitlines()
    assert all("beats_controls" not in json.loads(line) for line in retain)
    tofu = write_export(sets, "tofu", tmp_path / "tofu")  # the QA formats have no place for it
    assert "beats_controls" not in tofu[0].read_text()
    narrow = unlearning_stored.release_export(StoredResults(storage), "a@1", "lenient", beyond_controls=True)
    assert len(narrow.forget) == 1 and narrow.source == {"model": "a@1", "criterion": "lenient", "beyond_controls": True}


def test_a_request_export_narrows_to_the_entries_beyond_the_controls(storage):  # noqa: F811
    _scores(storage)
    _templates(storage)
    frame = forget_set("a@1", pd.DataFrame(OLD), best_true_values(SCORES), controls=controlled_table())
    rows = [{k: (None if v is pd.NA else json_scalar(v)) for k, v in r.items()} for r in frame.to_dict("records")]
    folder = answer_dir(storage, "dsr-1")
    folder.mkdir(parents=True)
    document = {"request": {"kind": "erasure"}, "forget_set": rows, "forget_criterion": "lenient"}
    (folder / DOCUMENT).write_text(json.dumps(document))
    stored = StoredResults(storage)
    assert len(unlearning_stored.request_export(stored, "dsr-1").forget) == 3  # every entry by default
    narrow = unlearning_stored.request_export(stored, "dsr-1", beyond_controls=True)
    assert list(zip(narrow.forget["subject_qid"], narrow.forget["property"])) == [("Q1", "P106")]
    assert narrow.source["beyond_controls"] is True
    # an answer stored before forget sets carried the controls' verdict: nothing to narrow on
    (folder / DOCUMENT).write_text(json.dumps({**document, "forget_set": [
        {k: v for k, v in row.items() if k not in CONTROL_COLUMNS} for row in rows]}))
    assert len(unlearning_stored.request_export(stored, "dsr-1").forget) == 3
    with pytest.raises(ValueError, match="no entry of the forget set was compared with invented people"):
        unlearning_stored.request_export(stored, "dsr-1", beyond_controls=True)


def test_a_request_export_keeps_each_entrys_language_and_asks_in_it(storage):  # noqa: F811
    """An erasure answered in German and English: the stored forget set names each entry's
    language, the request's stored canaries hold the German wordings it was asked with, and the
    export asks the German entry in German — the English one in English."""
    from wikimem_platform.canaries.languages.localize import agreed_templates, language_templates
    from wikimem_platform.unlearning.export import export_rows
    from wikimem_platform.vocabulary import FEMALE, LANGUAGE

    _templates(storage)
    base = {"model": "a@1", "subject_qid": "Q438662", "subject_label": "Emily Ruete", "property": "P106",
            "property_label": "occupation", "value": "Q36180", "M": 1.0}
    rows = [{**base, "value_label": "Schriftstellerin", LANGUAGE: "de"}, {**base, "value_label": "writer", LANGUAGE: "en"}]
    folder = answer_dir(storage, "dsr-de")
    folder.mkdir(parents=True)
    (folder / DOCUMENT).write_text(json.dumps({"request": {"kind": "erasure"}, "forget_set": rows,
                                               "forget_criterion": "lenient"}))
    german = agreed_templates(language_templates("de", ["P106"]), FEMALE).assign(subject_qid="Q438662")
    canaries = pd.concat([german, pd.DataFrame([{"subject_qid": "Q438662", "property": "P106", "variant_id": 0,
                                                 "kind": "baseline", "template": "{subject} worked as a {value}.",
                                                 LANGUAGE: "en"}])], ignore_index=True)
    (storage / "parquet" / "request_canaries").mkdir(parents=True)
    canaries.to_parquet(storage / "parquet" / "request_canaries" / "dsr-de.parquet")
    sets = unlearning_stored.request_export(StoredResults(storage), "dsr-de")
    assert sorted(sets.forget[LANGUAGE]) == ["de", "en"]  # the same fact in two languages: two entries
    qa = {r[LANGUAGE]: r for r in export_rows(sets, "tofu")["forget.jsonl"]}
    assert qa["de"]["question"] == "Was ist Emily Ruete von Beruf?" and qa["de"]["answer"] == "Schriftstellerin"
    assert qa["en"]["question"] == "Emily Ruete worked as a what?" and qa["en"]["answer"] == "writer"
