"""The answer document has no NaN and every letter renders from it.

A request's facts table mixes facts whose completion named the value (compared with the invented
people's completions: counts) and facts whose completion did not (no counts): in a DataFrame
the missing counts become NaN, and NaN is truthy. Reproduced here on a real plan (the bundled
sample, an invented person given by a facts file, 19 controls) with scripted scores and
completions: one fact's completion names its value, the other two do not — as in the four
requests that once failed in the letter with "cannot convert float NaN to integer"."""

import hashlib
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.crm.examples import canary_examples
from wikimem_platform.reference import bundled
from wikimem_platform.reference.counterfactuals import draw_counterfactuals
from wikimem_platform.reference.properties import build_property_table, DEFAULT_MIN_HUMANS
from wikimem_platform.subject_requests import intake
from wikimem_platform.subject_requests.answer import compose_answer, COUNTS, fact_record, ModelOutcome
from wikimem_platform.subject_requests.audit import (
    CANARY_PROBE, COMPLETION_COLUMNS, CONTROL_PROBE_PREFIX, ModelAudit, person_subject, plan_person_audit)
from wikimem_platform.subject_requests.letter import annex_html, answer_html, write_answer
from wikimem_platform.subject_requests.reference import property_metadata
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem.scoring import expand_canaries, SCORE_COLUMNS

PROPERTIES = ["P106", "P27", "P19"]
NAMED = "P106"  # the one fact whose completion names its value
FACTS = {"name": "Halina Wierzbowska-Tarr", "facts": {"occupation": "journalist", "country of citizenship": "Poland",
                                                      "place of birth": "Kraków"}}
DECEASED_FACTS = {**FACTS, "facts": {**FACTS["facts"], "date of death": "1999-04-02"}}
CONTROL_HITS = 2  # of 19 controls' completions name the value too


def _noise(sentence: str) -> float:
    """A scripted NLL: the same number for the same sentence, on any machine."""
    return 20.0 + int.from_bytes(hashlib.sha256(sentence.encode()).digest()[:4], "little") / 2**32 * 4.0


def scripted_scores(canaries: pd.DataFrame, candidates: pd.DataFrame, boosted: str | None) -> pd.DataFrame:
    """SCORE_COLUMNS rows as `score_canaries` returns them, with scripted NLLs; `boosted` (a subject
    qid): its true value of NAMED is made likelier in every wording (ranked first: M > 0)."""
    rows = expand_canaries(canaries, candidates)
    out = rows[["subject_qid", "property", "variant_id", "kind", "value", "value_label", "is_true"]].copy()
    boost = ((rows["subject_qid"] == boosted) & (rows["property"] == NAMED) & rows["is_true"]).to_numpy() * 6.0
    out["nll_h"] = np.array([_noise(s) for s in rows["sentence_h"]]) - boost
    out["nll_h0"] = [_noise(s) for s in rows["sentence_h0"]]
    out["nll_similar"] = [[_noise(s) for s in similar] for similar in rows["sentences_similar"]]
    out["nll_similar_mean"] = [float(np.mean(s)) if len(s) else np.nan for s in out["nll_similar"]]
    return out[SCORE_COLUMNS]


def completions(canaries: pd.DataFrame, hit: dict[str, bool], probe: str) -> pd.DataFrame:
    """COMPLETION_COLUMNS of each property's first wording naming the subject before the value."""
    examples = canary_examples(canaries).sort_values("variant_id", kind="stable")
    first = examples.drop_duplicates(["subject_qid", "property"]).reset_index(drop=True)
    named = [hit.get((q, p), False) for q, p in zip(first["subject_qid"], first["property"])]
    first["completion"] = [" " + list(t)[0] + "." if h else " a quiet life." for t, h in zip(first["targets"], named)]
    first["hit"], first["cue"], first["probe"] = named, 0.0, probe
    return first[COMPLETION_COLUMNS]


@pytest.fixture(scope="module")
def world(canary_templates):
    extract = read_dump(bundled.SAMPLE_DUMP)
    metadata = property_metadata()
    table = build_property_table(extract.claims, metadata, min_humans=DEFAULT_MIN_HUMANS)
    table = table[table["property"].isin(PROPERTIES)]
    pool = draw_counterfactuals(extract.claims, extract.humans, PROPERTIES, per_property=20, seed=0)
    return extract, metadata, table, canary_templates[canary_templates["property"].isin(PROPERTIES)], pool


def answer(world, tmp_path, document, kind, letter_language="en"):
    extract, metadata, table, templates, pool = world
    store = intake.RequestStore(f"sqlite:///{tmp_path / 'registry.db'}")
    person = intake.parse_person_facts(document, metadata, list(table["property"]))
    request = store.add(intake.resolve_person(person), kind)
    subject, facts = person_subject(request, extract.humans, extract.claims, metadata)
    plan = plan_person_audit(subject, facts, property_table=table, templates=templates, counterfactuals=pool,
                             claims=extract.claims, humans=extract.humans, metadata=metadata, n_controls=19,
                             properties=PROPERTIES)
    me = subject["qid"].iloc[0]
    planned = plan.control_ids[:plan.n_controls]  # the 19 planned controls of the candidates drawn
    canaries = plan.control_canaries[plan.control_canaries["subject_qid"].isin(planned)]
    said = completions(plan.canaries, {(me, NAMED): True}, CANARY_PROBE)
    theirs = completions(canaries[canaries["property"] == NAMED],
                         {(q, NAMED): i < CONTROL_HITS for i, q in enumerate(planned)}, CONTROL_PROBE_PREFIX + CANARY_PROBE)
    audit = ModelAudit("scripted@1", scripted_scores(plan.canaries, plan.candidates, me), said, None, "f00",
                       control_scores=scripted_scores(canaries, plan.control_candidates, None),
                       control_completions=theirs)
    labels = dict(zip(table["property"], table["label"]))
    document, _ = compose_answer(request, plan, [ModelOutcome("scripted@1", {}, audit=audit)], labels, {},
                                 letter_language=letter_language)
    return document


def _nan_paths(obj, path: str = "") -> list[str]:
    """Where in a document a NaN sits (a float that is not a number)."""
    if isinstance(obj, float) and math.isnan(obj):
        return [path]
    if isinstance(obj, dict):
        return [p for key, value in obj.items() for p in _nan_paths(value, f"{path}.{key}")]
    if isinstance(obj, list):
        return [p for i, value in enumerate(obj) for p in _nan_paths(value, f"{path}[{i}]")]
    return []


@pytest.mark.parametrize("kind, document", [("access", FACTS), ("erasure", FACTS), ("access", DECEASED_FACTS)],
                         ids=["access", "erasure", "deceased"])
@pytest.mark.parametrize("language", ["en", "de", "fr", "pl"])
def test_an_answer_where_one_completion_named_its_value_has_no_nan_and_every_letter_renders(
        world, tmp_path, kind, document, language):
    composed = answer(world, tmp_path, document, kind, language)
    assert _nan_paths(composed) == []
    facts = {f["property"]: f for f in composed["models"][0]["facts"]}
    assert set(facts) == set(PROPERTIES)
    named = facts[NAMED]
    assert named["completion_hit"] is True
    assert (named["completion_controls"], named["completion_control_hits"]) == (19, CONTROL_HITS)
    assert all(type(named[k]) is int for k in ("completion_controls", "completion_control_hits"))
    for prop in set(PROPERTIES) - {NAMED}:  # not named: no counts (absent, not NaN)
        assert facts[prop]["completion_hit"] is False
        assert facts[prop]["completion_controls"] is None and facts[prop]["completion_control_hits"] is None
    for fact in facts.values():  # every count with what it counts out of
        for count, total in COUNTS.items():
            assert (fact[count] is None) == (fact[total] is None), (fact["property"], count)
    letter, annex = answer_html(composed), annex_html(composed)
    assert not any(re.search(r"\bnan\b", page, re.I) for page in (letter, annex))
    if language == "en":
        assert f"named the value for {CONTROL_HITS} of 19 invented people too" in letter
        assert f"for {CONTROL_HITS} of 19 of them" in named["sentence"]  # counts, not "2.0 of 19.0"
    assert annex
    files = write_answer(composed, tmp_path / "out")
    assert json.loads(files.json.read_text(encoding="utf-8"))["models"][0]["facts"]


def test_a_count_without_what_it_counts_out_of_is_refused_naming_the_field():
    with pytest.raises(ValueError, match="completion_control_hits .* completion_controls"):
        fact_record({"property": "P106", "completion_control_hits": 2, "completion_controls": float("nan")})
    record = fact_record({"property": "P106", "completion_control_hits": float("nan"),
                          "completion_controls": float("nan"), "n_memorized": np.int64(3), "n_variants": 11.0})
    assert record == {"property": "P106", "completion_control_hits": None, "completion_controls": None,
                      "n_memorized": 3, "n_variants": 11}
    assert type(record["n_variants"]) is int
