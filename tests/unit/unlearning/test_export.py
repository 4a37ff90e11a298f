"""Forget/retain exports: every format written, read back, keys and counts checked; questions
come from the templates, name the subject and never contain the answer; the retain set holds
other people's facts, most alike first."""

import pandas as pd
import pytest

from wikimem_platform.unlearning.export import (
    choose_retain,
    FORMATS,
    export_sets,
    question_for,
    question_template,
    read_export,
    texts_for_training,
    write_export,
)

TEMPLATES = pd.DataFrame(
    [("P106", 0, "baseline", "{subject}'s occupation is {value}."),
     ("P106", 1, "paraphrase", "The occupation of {subject} was {value}."),
     ("P106", 2, "paraphrase", "It is {value} that is {subject}'s occupation."),
     ("P106", 3, "paraphrase", "According to public records, {subject}'s occupation is {value}."),
     ("P19", 0, "baseline", "{subject} was born in {value}."),
     ("P19", 1, "paraphrase", "The birthplace of {subject} is {value}."),
     ("P19", 2, "contextualized", "Ilse lives. Their place of birth is {value}.")],
    columns=["property", "variant_id", "kind", "template"],
)
FACTS = ["subject_qid", "subject_label", "property", "property_label", "value", "value_label", "M"]
FORGET = pd.DataFrame([("Q1", "Ilse Marwitz", "P106", "occupation", "Q1930187", "journalist", 1.0),
                       ("Q1", "Ilse Marwitz", "P19", "place of birth", "Q3806", "Tübingen", 0.9)], columns=FACTS)
KNOWN = pd.DataFrame([("Q1", "Ilse Marwitz", "P27", "citizenship", "Q183", "Germany", 1.0),  # the same person: never retained
                      ("Q2", "Otto Brandt", "P106", "occupation", "Q1930187", "journalist", 0.8),  # same value
                      ("Q3", "Vera Marwitz", "P19", "place of birth", "Q64", "Berlin", 0.85),  # look-alike name
                      ("Q4", "Ana Ruiz", "P106", "occupation", "Q33999", "actor", 1.0),  # same property
                      ("Q5", "Li Wei", "P27", "citizenship", "Q148", "China", 1.0)], columns=FACTS)
SCORES = pd.DataFrame(
    [("Q1", "P106", v, k, lab, t, h, 10.0, 9.0) for v, k, lab, t, h in [
        (0, "baseline", "journalist", True, 5.0), (0, "baseline", "baker", False, 6.0), (0, "baseline", "pilot", False, 8.0),
        (1, "paraphrase", "journalist", True, 5.0), (1, "paraphrase", "baker", False, 6.5), (1, "paraphrase", "pilot", False, 7.0)]],
    columns=["subject_qid", "property", "variant_id", "kind", "value_label", "is_true", "nll_h", "nll_h0", "nll_similar_mean"],
)


def test_questions_from_templates():
    assert question_for("{subject}'s occupation is {value}.", "Ilse Marwitz") == "What is Ilse Marwitz's occupation?"
    assert question_for("The occupation of {subject} was {value}.", "Ilse") == "What was the occupation of Ilse?"
    assert question_for("{subject} was born in {value}.", "Ilse") == "Ilse was born in what?"
    assert question_for("According to records, {subject}'s job is {value}.", "Ilse") == "According to records, Ilse's job is what?"
    assert question_for("It is {value} that is {subject}'s occupation.", "Ilse") is None  # the value does not close it


@pytest.fixture
def sets():
    return export_sets(FORGET, KNOWN, TEMPLATES, SCORES, source={"model": "m@1"}, retain_limit=3)


def test_retain_set_is_other_people_most_alike_first(sets):
    assert list(sets.retain["subject_qid"]) == ["Q2", "Q3", "Q4"]  # same value, look-alike name, same property
    assert "Q1" not in set(sets.retain["subject_qid"])
    # Perturbed answers: the counterfactuals by summed calibrated score (s = nll_h0 - nll_h - (nll_h0 - nll_sim)).
    assert sets.perturbed[("Q1", "P106", "en")] == ["baker", "pilot"]


def test_retain_order_ignores_accents():
    """"Tubingen" is the forgotten "Tübingen" and "Marwitz" the forgotten person's surname, however
    the accents are written: those facts come first."""
    forget = pd.DataFrame([("Q1", "Ilse Märwitz", "P19", "place of birth", "Q3806", "Tübingen", 0.9)], columns=FACTS)
    known = pd.DataFrame([("Q7", "Ada Berg", "P19", "place of birth", "Q64", "Berlin", 1.0),
                          ("Q8", "Otto Marwitz", "P19", "place of birth", "Q1055", "Hamburg", 0.5),
                          ("Q9", "Eva Roth", "P19", "place of birth", "Q999", "Tubingen", 0.4)], columns=FACTS)
    assert choose_retain(forget, known)["subject_qid"].tolist() == ["Q9", "Q8", "Q7"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_round_trips(sets, fmt, tmp_path):
    paths = write_export(sets, fmt, tmp_path / fmt)
    manifest, files = read_export(tmp_path / fmt)
    assert manifest["format"] == fmt and manifest["forget_facts"] == 2 and manifest["retain_facts"] == 3
    assert manifest["forget_sha256"] == sets.forget_hash() and manifest["source"] == {"model": "m@1"}
    assert {p.name for p in paths} == {*files, "manifest.json"}
    assert all(len(rows) == manifest["files"][name] for name, rows in files.items())
    forget = {n: rows for n, rows in files.items() if n.startswith("forget")}
    retain = {n: rows for n, rows in files.items() if n.startswith("retain")}
    assert forget and retain
    if fmt == "jsonl":
        assert [r["value_label"] for r in files["forget.jsonl"]] == ["journalist", "Tübingen"]
        assert len(files["retain.jsonl"]) == 3
    if fmt == "tofu":
        [occupation, birth] = files["forget.jsonl"]
        assert set(occupation) >= {"question", "answer", "paraphrased_question", "perturbed_answer"}
        assert occupation["question"] == "What is Ilse Marwitz's occupation?" and occupation["answer"] == "journalist"
        assert occupation["paraphrased_question"] == ["What was the occupation of Ilse Marwitz?",
                                                      "According to public records, Ilse Marwitz's occupation is what?"]
        assert occupation["perturbed_answer"] == ["baker", "pilot"] and birth["perturbed_answer"] == []
        assert len(files["retain.jsonl"]) == 3
    if fmt == "openunlearning":
        assert all(set(r) == {"question", "answer"} for r in files["forget_qa.jsonl"] + files["retain_qa.jsonl"])
        assert all("text" in r for r in files["forget_text.jsonl"])
        # Every plain wording of each fact (4 for P106, 2 for P19), never the contextualized one.
        assert len(files["forget_text.jsonl"]) == 6
        assert "Ilse Marwitz was born in Tübingen." in [r["text"] for r in files["forget_text.jsonl"]]
    if fmt == "rwku":
        probes = files["forget_probes.jsonl"]
        assert {r["type"] for r in probes} == {"fill-in-the-blank", "question"}
        assert all(set(r) >= {"subject", "query", "answer", "level", "type"} for r in probes)
        assert sum(r["type"] == "fill-in-the-blank" for r in probes) == 6
        assert all("___" in r["query"] for r in probes if r["type"] == "fill-in-the-blank")
    for rows in forget.values():
        for row in rows:
            query = row.get("question") or row.get("query")
            if query is None:
                continue
            answer = row["answer"]
            assert answer.lower() not in query.lower()
            subject = row.get("subject") or next(f for f in ("Ilse Marwitz",) if f in query)
            assert subject in query


def test_training_texts_and_unknown_format(sets, tmp_path):
    forget, retain = texts_for_training(sets)
    assert "Ilse Marwitz's occupation is journalist." in forget and len(forget) == 6
    assert all("Ilse Marwitz" not in text for text in retain)
    with pytest.raises(ValueError, match="jsonl, tofu, openunlearning, rwku"):
        write_export(sets, "csv", tmp_path)


def test_questions_in_every_language_from_the_wordings_that_ask():
    """A wording that asks before its value gives its question in any language (label and marker
    dropped, the subject's markup kept for rendering); an English statement is inverted; a
    statement in another language gives no question rather than an English one."""
    assert question_template("Q: What is {subject}'s occupation? A: {value}.") == "What is {subject}'s occupation?"
    assert question_template("Frage: Wo kam {subject} zur Welt? Antwort: ⟦de:in⟧{value}.", "de") == "Wo kam {subject} zur Welt?"
    assert question_template("Pytanie: jaki zawód ma {subject}? Odpowiedź: {value}.", "pl") == "Jaki zawód ma {subject}?"
    assert question_for("Quelle est la profession ⟦fr:d'⟧{subject} ? {value}.", "Antoine Dupont", "fr") == \
        "Quelle est la profession d'Antoine Dupont ?"
    assert question_template("{subject} ist von Beruf {value}.", "de") is None
    assert question_template("{subject} wurde ⟦de:in⟧{value} geboren.", "de") is None  # the value does not close it


def _german_sets():
    """Emily Ruete's occupation found in German and in English, her place of birth in German only;
    the request's German wordings agree with her (feminine)."""
    from wikimem_platform.canaries.languages.localize import agreed_templates, language_templates
    from wikimem_platform.vocabulary import FEMALE

    columns = [*FACTS, "language"]
    forget = pd.DataFrame([("Q438662", "Emily Ruete", "P106", "occupation", "Q36180", "Schriftstellerin", 1.0, "de"),
                           ("Q438662", "Emily Ruete", "P106", "occupation", "Q36180", "writer", 0.9, "en"),
                           ("Q438662", "Emily Ruete", "P19", "place of birth", "Q1774", "Sansibar", 0.8, "de"),
                           ("Q438662", "Emily Ruete", "P27", "citizenship", "Q183", "Deutschland", 0.8, "pl")],
                          columns=columns)
    wordings = agreed_templates(language_templates("de", ["P106", "P19"]), FEMALE).assign(subject_qid="Q438662")
    scores = pd.DataFrame(
        [("Q438662", "P106", 0, "baseline", lab, t, h, 10.0, 9.0, lang) for lab, t, h, lang in [
            ("Schriftstellerin", True, 5.0, "de"), ("Lehrerin", False, 6.0, "de"), ("Malerin", False, 7.0, "de"),
            ("writer", True, 5.0, "en"), ("painter", False, 6.0, "en")]],
        columns=[*SCORES.columns, "language"])
    return export_sets(forget, KNOWN, TEMPLATES, scores, retain_limit=3, person_templates=wordings)


def test_a_fact_found_in_german_is_exported_in_german(tmp_path):
    sets = _german_sets()
    write_export(sets, "tofu", tmp_path / "tofu")
    _, files = read_export(tmp_path / "tofu")
    rows = {(r["property"], r["language"]): r for r in files["forget.jsonl"]}
    # The Polish citizenship has no Polish wordings in the sets: left out, never asked in English.
    assert set(rows) == {("P106", "de"), ("P106", "en"), ("P19", "de")}
    german = rows[("P106", "de")]
    assert german["question"] == "Was ist Emily Ruete von Beruf?" and german["answer"] == "Schriftstellerin"
    assert german["paraphrased_question"] == ["Welchen Beruf hat Emily Ruete?"]
    assert german["perturbed_answer"] == ["Lehrerin", "Malerin"]  # German candidates only
    assert rows[("P19", "de")]["question"] == "Wo wurde Emily Ruete geboren?"
    english = rows[("P106", "en")]
    assert english["question"] == "What is Emily Ruete's occupation?" and english["perturbed_answer"] == ["painter"]

    forget_texts, _ = texts_for_training(sets)
    assert "Emily Ruete ist von Beruf Schriftstellerin." in forget_texts  # the baseline, in German
    assert "Emily Ruete wurde auf Sansibar geboren." in forget_texts  # the marker inflected (an island)
    assert "Emily Ruete's occupation is writer." in forget_texts
    assert len(forget_texts) == 11 + 11 + 4  # every German wording of both German facts, the English one's 4

    write_export(sets, "rwku", tmp_path / "rwku")
    _, probes = read_export(tmp_path / "rwku")
    german_blanks = [r["query"] for r in probes["forget_probes.jsonl"] if r["language"] == "de" and r["level"] == "1"]
    assert "Emily Ruete ist von Beruf ___." in german_blanks and len(german_blanks) == 22
    assert not any("⟦" in r["query"] for r in probes["forget_probes.jsonl"])  # every marker resolved
