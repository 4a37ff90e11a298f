"""Forget and retain sets in the formats unlearning tools read.

A forget set names facts a model memorized (subject, property, the true value it prefers); the
retain set beside it names facts of *other* people the same model knows — same properties,
the same values, look-alike names first — because every unlearning method needs data whose
knowledge it must keep, and utility is measured on it. Formats:

- ``jsonl``: one fact per line (the forget-set columns of `forget_sets.forget_set`, forget facts with
  the invented-person controls' verdict where it was computed), forget.jsonl and retain.jsonl;
- ``tofu``: TOFU-style QA rows: ``question``, ``answer``, ``paraphrased_question`` (one per canary
  paraphrase whose value closes the sentence), ``perturbed_answer`` (the counterfactual values
  the model ranked highest), forget.jsonl and retain.jsonl;
- ``openunlearning``: the keys open-unlearning's QADataset (``question``/``answer``) and
  PretrainingDataset (``text``: the canary sentences stating the fact) read: forget_qa.jsonl,
  forget_text.jsonl, retain_qa.jsonl, retain_text.jsonl;
- ``rwku``: RWKU-style probes ``subject``, ``query``, ``answer``, ``level``, ``type`` (fill-in-the-blank,
  level 1, from every wording; question, level 2), forget_probes.jsonl and retain_probes.jsonl
  (RWKU's neighbour probes).

Every question and blank comes from the property's canary templates (a question shape per
property, `question_template`), never written per person. A fact found in another language (a
request in German, French or Polish names its `language`) is exported in that language: its
questions, texts and blanks come from the wordings the person was audited with there (agreeing
with them), its perturbed answers from that language's candidates — an unlearning tool must
forget the fact where the model holds it. A manifest.json beside the files records the format,
the source, the counts and the forget set's SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from wikimem_platform.canaries.languages import ENGLISH
from wikimem_platform.canaries.names import similar_names
from wikimem_platform.canaries.text import render, SUBJECT, unmarked_value, VALUE
from wikimem_platform.labels import fold
from wikimem_platform.reference.value_forms import without_forms
from wikimem_platform.storage import json_scalar
from wikimem_platform.unlearning.forget_sets import CONTROL_COLUMNS
from wikimem_platform.vocabulary import AT_THRESHOLD, CONTEXTUALIZED_KINDS, LANGUAGE, SCORED_KINDS
from wikimem_platform.wikimem.memorization import calibrated_score

FORMATS = ("jsonl", "tofu", "openunlearning", "rwku")
FACT_COLUMNS = ["subject_qid", "subject_label", "property", "property_label", "value", "value_label", "M"]
BLANK = "___"
N_PERTURBED = 5  # TOFU ships 5 perturbed answers per question
RETAIN_PER_FORGET = 4  # retain facts per forget fact (at least MIN_RETAIN)
MIN_RETAIN = 10
_CLOSING_VERBS = ("is", "was", "are", "were")
_QA_LABEL = re.compile(r"^[^\s:?]+ ?: *")  # "Q: ", "Question : ", "Frage: ", "Pytanie: "
MANIFEST = "manifest.json"


# --------------------------------------------------------------------------- questions from templates

def question_template(template: str, language: str = ENGLISH) -> str | None:
    """The question a wording asks for its value ({subject} and its markup kept), or None when the
    value does not close the wording.

    A wording that asks before its value gives that question in any language ("Q: Where was
    {subject} born? A: {value}." -> "Where was {subject} born?", "Wo wurde {subject} geboren?
    ⟦de:in⟧{value}." -> "Wo wurde {subject} geboren?"). An English statement is inverted:
    "{subject}'s occupation is {value}." -> "What is {subject}'s occupation?"; "The occupation of
    {subject} was {value}." -> "What was the occupation of {subject}?"; any other English
    statement ending in its value -> an echo question, "{subject} was educated at what?". Another
    language's statement gives None: no rule here inverts it, and its packs ask in other wordings.
    """
    text = unmarked_value(template.strip())
    if not text.endswith(VALUE + ".") and not text.endswith(VALUE):
        return None
    prefix = text[: text.rfind(VALUE)].rstrip()
    if "?" in prefix:
        asked = _QA_LABEL.sub("", prefix[: prefix.rfind("?") + 1].strip(), count=1)
        return asked[:1].upper() + asked[1:]  # "Pytanie: jaki zawód ma {subject}?" -> "Jaki zawód ..."
    if language != ENGLISH:
        return None
    words = prefix.split(" ")
    head = " ".join(words[:-1])
    # Invert only a plain noun phrase + verb: it opens with the subject or an article, one clause.
    plain = head.startswith((SUBJECT, "The ", "A ", "An ")) and "," not in head
    if len(words) >= 2 and words[-1] in _CLOSING_VERBS and plain and not any(w in _CLOSING_VERBS for w in words[:-1]):
        head = head[:1].lower() + head[1:] if head.startswith(("The ", "A ", "An ")) else head
        return f"What {words[-1]} {head}?"
    return f"{prefix} what?"


def question_for(template: str, subject: str, language: str = ENGLISH) -> str | None:
    """`question_template` asked of `subject`."""
    question = question_template(template, language)
    return None if question is None else render(question, subject, None)


def blank_for(template: str, subject: str) -> str:
    """The canary with its value blanked out (RWKU's fill-in-the-blank)."""
    return render(template, subject, BLANK)


@dataclass(frozen=True)
class PropertyQuestions:
    question: str  # the baseline's question (a template with {subject})
    paraphrased: tuple[str, ...]  # the paraphrases' questions
    wordings: tuple[str, ...]  # every wording (baseline first), for texts and blanks


def property_questions(templates: pd.DataFrame, language: str = ENGLISH) -> dict[str, PropertyQuestions]:
    """Per property: the question shapes, from its baseline and paraphrase templates (written in
    `language`)."""
    out = {}
    plain = templates[templates["kind"].isin(SCORED_KINDS)].sort_values(["property", "variant_id"])
    for prop, rows in plain.groupby("property", sort=True):
        wordings = tuple(rows["template"])
        questions = [q for q in (question_template(t, language) for t in wordings) if q]
        if not questions:  # a blank to fill: English says so, another language shows the blank alone
            blank = unmarked_value(wordings[0]).replace(VALUE, BLANK)
            questions = [f"{blank} What fills the blank?" if language == ENGLISH else blank]
        out[prop] = PropertyQuestions(questions[0], tuple(dict.fromkeys(questions[1:])), wordings)
    return out


def person_questions(templates: pd.DataFrame) -> dict[tuple[str, str, str], PropertyQuestions]:
    """(subject_qid, language, property) -> the question shapes of a person's wordings in another
    language (`templates`: subject_qid, language, property, variant_id, kind, template — the
    wordings a request audited them with, agreeing with them)."""
    out = {}
    for (qid, language), rows in templates.groupby(["subject_qid", LANGUAGE], sort=True):
        for prop, shapes in property_questions(rows, language).items():
            out[(qid, language, prop)] = shapes
    return out


def fact_language(fact: Mapping) -> str:
    """The language a fact was found in (English where the row names none)."""
    language = fact.get(LANGUAGE)
    return language if isinstance(language, str) and language else ENGLISH


# --------------------------------------------------------------------------- the sets

def top_counterfactuals(scores: pd.DataFrame, n: int = N_PERTURBED, alpha: float = 1.0) -> dict[tuple[str, str, str], list[str]]:
    """Per (subject, property, language): the n counterfactual labels with the highest calibrated
    score, summed over the plain wordings — the wrong answers this model finds most plausible, in
    the language they were asked in (English where the scores name none)."""
    rows = without_forms(scores[~scores["is_true"].astype(bool)])  # a true value's other forms are not wrong answers
    if "kind" in rows:
        rows = rows[~rows["kind"].isin(CONTEXTUALIZED_KINDS)]
    language = rows[LANGUAGE].fillna(ENGLISH) if LANGUAGE in rows else ENGLISH
    rows = rows.assign(s=calibrated_score(rows["nll_h"], rows["nll_h0"], rows["nll_similar_mean"], alpha),
                       **{LANGUAGE: language})
    keys = ["subject_qid", "property", LANGUAGE]
    summed = rows.groupby([*keys, "value_label"], sort=False)["s"].sum().reset_index()
    summed = summed.sort_values([*keys, "s"], ascending=[True, True, True, False], kind="stable")
    return {key: list(block["value_label"].head(n)) for key, block in summed.groupby(keys, sort=False)}


def choose_retain(forget: pd.DataFrame, known: pd.DataFrame, limit: int | None = None) -> pd.DataFrame:
    """Facts of other people the model knows, most alike to the forget set first.

    known: FACT_COLUMNS rows the same model memorized (e.g. its memorized cohort pairs). Order:
    same value as a forgotten fact, then a name sharing a word with a forgotten person's name
    (look-alikes), then the same property, then the strongest (M) first.
    """
    limit = limit or max(MIN_RETAIN, RETAIN_PER_FORGET * len(forget))
    others = known[~known["subject_qid"].isin(forget["subject_qid"])].copy()
    if others.empty:
        return others.reindex(columns=FACT_COLUMNS)
    forget_values = set(zip(forget["property"], forget["value_label"].map(fold)))
    forget_words = {w for name in forget["subject_label"] for w in fold(name).split()}
    others["_value"] = [(p, fold(v)) in forget_values for p, v in zip(others["property"], others["value_label"])]
    others["_name"] = [bool(forget_words & set(fold(n).split())) for n in others["subject_label"]]
    others["_property"] = others["property"].isin(forget["property"])
    others = others.sort_values(["_value", "_name", "_property", "M", "subject_qid", "property"],
                                ascending=[False, False, False, False, True, True], kind="stable")
    return others.head(limit)[FACT_COLUMNS].reset_index(drop=True)


@dataclass
class ExportSets:
    """Forget and retain facts with what the formats need (questions, perturbed answers)."""

    forget: pd.DataFrame  # FACT_COLUMNS (the controls' verdict, CONTROL_COLUMNS, and the language, where the forget set has them)
    retain: pd.DataFrame  # FACT_COLUMNS
    questions: dict[str, PropertyQuestions]  # property -> its English question shapes
    perturbed: dict[tuple[str, str, str], list[str]]  # (subject_qid, property, language) -> wrong answers
    source: dict  # what the sets were derived from (model, request, criterion)
    person_questions: dict[tuple[str, str, str], PropertyQuestions] = field(default_factory=dict)
    """(subject_qid, language, property) -> the shapes of a fact found in another language."""

    def shapes(self, fact: Mapping) -> PropertyQuestions | None:
        """The question shapes a fact is exported with: the property's English ones for a fact
        found in English, its person's own wordings for one found in another language (None when
        those are not known: the fact is left out rather than asked in English)."""
        language = fact_language(fact)
        if language == ENGLISH:
            return self.questions.get(fact["property"])
        return self.person_questions.get((fact["subject_qid"], language, fact["property"]))

    def perturbed_for(self, fact: Mapping) -> list[str]:
        return self.perturbed.get((fact["subject_qid"], fact["property"], fact_language(fact)), [])

    def forget_hash(self) -> str:
        """SHA-256 of the forget facts (what an unlearning manifest records)."""
        keys = sorted(zip(self.forget["subject_qid"], self.forget["property"], self.forget["value_label"].astype(str)))
        return hashlib.sha256(json.dumps(keys, ensure_ascii=False).encode()).hexdigest()


def export_sets(forget: pd.DataFrame, known: pd.DataFrame, templates: pd.DataFrame,
                scores: pd.DataFrame | None = None, source: Mapping | None = None,
                retain_limit: int | None = None, person_templates: pd.DataFrame | None = None) -> ExportSets:
    """The sets behind every format: forget facts, chosen retain facts, question shapes, perturbed answers.
    Forget facts keep the invented-person controls' verdict where the forget set has it
    (`forget_sets.CONTROL_COLUMNS`: the jsonl format writes it; the others have no place for it)
    and the language they were found in. person_templates: the wordings in other languages the
    forget set's people were audited with (`person_questions`); a fact found in a language
    without them is left out of the question and text formats, never asked in English."""
    verdict = [c for c in CONTROL_COLUMNS if c in forget.columns]
    found_in = [LANGUAGE] if LANGUAGE in forget.columns else []
    forget = forget.reindex(columns=[*FACT_COLUMNS, *verdict, *found_in]).reset_index(drop=True)
    retain = choose_retain(forget, known.reindex(columns=FACT_COLUMNS), retain_limit)
    questions = property_questions(templates[templates["property"].isin({*forget["property"], *retain["property"]})])
    perturbed = top_counterfactuals(scores) if scores is not None and len(scores) else {}
    own = person_questions(person_templates) if person_templates is not None and len(person_templates) else {}
    return ExportSets(forget, retain, questions, perturbed, dict(source or {}), own)


def _qa_rows(facts: pd.DataFrame, sets: ExportSets) -> list[dict]:
    rows = []
    for fact in facts.to_dict("records"):
        shapes = sets.shapes(fact)
        if shapes is None:
            continue
        name = fact["subject_label"]
        rows.append({
            "question": render(shapes.question, name, None),
            "answer": fact["value_label"],
            "paraphrased_question": [render(q, name, None) for q in shapes.paraphrased],
            "perturbed_answer": sets.perturbed_for(fact),
            "subject": name, "subject_qid": fact["subject_qid"], "property": fact["property"],
            LANGUAGE: fact_language(fact),
        })
    return rows


def _text_rows(facts: pd.DataFrame, sets: ExportSets) -> list[dict]:
    rows = []
    for fact in facts.to_dict("records"):
        shapes = sets.shapes(fact)
        for wording in shapes.wordings if shapes else ():
            rows.append({"text": render(wording, fact["subject_label"], fact["value_label"]),
                         "subject_qid": fact["subject_qid"], "property": fact["property"],
                         LANGUAGE: fact_language(fact)})
    return rows


def _probe_rows(facts: pd.DataFrame, sets: ExportSets) -> list[dict]:
    rows = []
    for fact in facts.to_dict("records"):
        shapes = sets.shapes(fact)
        if shapes is None:
            continue
        name, answer = fact["subject_label"], fact["value_label"]
        where = {"subject_qid": fact["subject_qid"], "property": fact["property"], LANGUAGE: fact_language(fact)}
        for wording in shapes.wordings:
            rows.append({"subject": name, "query": blank_for(wording, name), "answer": answer, "level": "1",
                         "type": "fill-in-the-blank", **where})
        for question in (shapes.question, *shapes.paraphrased):
            rows.append({"subject": name, "query": render(question, name, None), "answer": answer, "level": "2",
                         "type": "question", **where})
    return rows


def _fact_rows(facts: pd.DataFrame, sets: ExportSets) -> list[dict]:
    return [{k: (None if v is pd.NA else json_scalar(v)) for k, v in row.items()} for row in facts.to_dict("records")]


# format -> [(file name, which set, row builder)]
_LAYOUT = {
    "jsonl": [("forget.jsonl", "forget", _fact_rows), ("retain.jsonl", "retain", _fact_rows)],
    "tofu": [("forget.jsonl", "forget", _qa_rows), ("retain.jsonl", "retain", _qa_rows)],
    "openunlearning": [("forget_qa.jsonl", "forget", _qa_rows), ("forget_text.jsonl", "forget", _text_rows),
                       ("retain_qa.jsonl", "retain", _qa_rows), ("retain_text.jsonl", "retain", _text_rows)],
    "rwku": [("forget_probes.jsonl", "forget", _probe_rows), ("retain_probes.jsonl", "retain", _probe_rows)],
}
_OPENUNLEARNING_KEYS = {"forget_qa.jsonl": ("question", "answer"), "retain_qa.jsonl": ("question", "answer")}


def export_rows(sets: ExportSets, fmt: str) -> dict[str, list[dict]]:
    """file name -> rows, for one format."""
    if fmt not in _LAYOUT:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    out = {}
    for name, which, build in _LAYOUT[fmt]:
        rows = build(getattr(sets, which), sets)
        if fmt == "openunlearning" and name in _OPENUNLEARNING_KEYS:
            rows = [{k: r[k] for k in _OPENUNLEARNING_KEYS[name]} for r in rows]  # the dataset's keys only
        out[name] = rows
    return out


def write_export(sets: ExportSets, fmt: str, out_dir: str | os.PathLike) -> list[Path]:
    """Write one format's files and a manifest.json; returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = export_rows(sets, fmt)
    paths = []
    for name, rows in files.items():
        path = out / name
        with open(path, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        paths.append(path)
    manifest = {"format": fmt, "source": sets.source, "forget_sha256": sets.forget_hash(),
                "forget_facts": len(sets.forget), "retain_facts": len(sets.retain),
                "files": {name: len(rows) for name, rows in files.items()}}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    return [*paths, out / MANIFEST]


def read_export(out_dir: str | os.PathLike) -> tuple[dict, dict[str, list[dict]]]:
    """(manifest, file name -> rows) of a written export."""
    out = Path(out_dir)
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    files = {}
    for name in manifest["files"]:
        with open(out / name, encoding="utf-8") as handle:
            files[name] = [json.loads(line) for line in handle if line.strip()]
    return manifest, files


def texts_for_training(sets: ExportSets) -> tuple[list[str], list[str]]:
    """(forget texts, retain texts): the canary sentences stating each fact, for unlearning."""
    return ([r["text"] for r in _text_rows(sets.forget, sets)], [r["text"] for r in _text_rows(sets.retain, sets)])


def ranking_texts(sets: ExportSets) -> list[str]:
    """What an audit ranks for each retain fact: every wording filled with each value of the
    property the sets name (the fact's own, the other people's, the perturbed answers), for the
    person and for their look-alike names S(h) — the sentences whose NLLs decide whether the fact
    still ranks first after WikiMem's calibration. Reference unlearning keeps the model's
    distributions on them (`methods.unlearn`, retain_loss "nll+kl")."""
    values: dict[str, set[str]] = {}
    for frame in (sets.forget, sets.retain):  # the retain facts are English: so are the values ranked with them
        for fact in frame.to_dict("records"):
            if fact_language(fact) == ENGLISH:
                values.setdefault(fact["property"], set()).add(str(fact["value_label"]))
    for (_, prop, language), answers in sets.perturbed.items():
        if language == ENGLISH:
            values.setdefault(prop, set()).update(map(str, answers))
    texts = []
    for fact in sets.retain.to_dict("records"):
        shapes = sets.questions.get(fact["property"])
        names = [fact["subject_label"], *similar_names(fact["subject_label"])]
        for wording in shapes.wordings if shapes else ():
            texts += [render(wording, name, value) for value in sorted(values[fact["property"]]) for name in names]
    return texts


def known_facts(pairs: pd.DataFrame, best_values: pd.DataFrame, property_labels: Mapping[str, str],
                criterion: str = AT_THRESHOLD, subject_labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """FACT_COLUMNS rows of the facts a release memorized under `criterion` (retain candidates)."""
    chosen = pairs[pairs[criterion].astype(bool)]
    out = chosen.merge(best_values[["subject_qid", "property", "value", "value_label"]], on=["subject_qid", "property"], how="inner")
    labels = subject_labels or {}
    out["subject_label"] = out["subject"] if "subject" in out else out["subject_qid"].map(labels)
    out["property_label"] = out["property"].map(lambda p: property_labels.get(p, p))
    return out.reindex(columns=FACT_COLUMNS).reset_index(drop=True)

