"""The answer document's schema (`answer_schema`): what `compose_answer` composes is an
`AnswerDocument`, and a bad value fails where the answer is composed, naming its field path —
not later, in the letter. Real documents come from `test_answer_document`'s scripted world (the
bundled sample, an invented person, 19 controls, scripted scores)."""

import copy
import math
import re
import typing

import pandas as pd
import pytest

from wikimem_platform.subject_requests import answer as answer_module
from wikimem_platform.subject_requests import answer_schema as schema
from wikimem_platform.subject_requests.answer import (
    ANSWER_COLUMNS, COUNTS, ENTRY_FIELDS, FORGOTTEN, ModelOutcome, NEVER, NEWLY, SAID, SCORING_FIELDS, STILL, VERDICT_ORDER,
    verify_revisions)
from wikimem_platform.subject_requests.answer_schema import AnswerDocument, AnswerSchemaError, check_answer
from wikimem_platform.subject_requests.audit import AUDITED, NOT_COVERED, NOT_PERSONAL, ON_DEMAND
from wikimem_platform.wikimem import controls

from tests.unit.subject_requests import test_answer_document as scripted
from tests.unit.subject_requests.test_answer_document import answer, FACTS, NAMED, world  # noqa: F401 (fixture)


@pytest.fixture(scope="module")
def composed(world, tmp_path_factory):  # noqa: F811
    """An erasure answer: three facts compared with 19 controls, one completion naming its value, a forget set."""
    return answer(world, tmp_path_factory.mktemp("composed"), FACTS, "erasure")


def test_the_schema_speaks_answer_pys_vocabulary():
    assert schema.VERDICTS == VERDICT_ORDER
    assert schema.OUTCOMES == (FORGOTTEN, STILL, NEWLY, NEVER)
    assert set(schema.COVERAGES) == {AUDITED, ON_DEMAND, NOT_COVERED, NOT_PERSONAL}
    assert set(schema.CONTROLS_VERDICTS) >= {controls.MEMORIZED, controls.WEAK, controls.NO_EVIDENCE}
    assert schema.FACT_COUNTS == COUNTS
    # every column of a fact, and only those with its phrase, sentence and language (extra="forbid")
    assert set(schema.Fact.model_fields) == {*ANSWER_COLUMNS, "phrase", "sentence", "language", "label_fallback"}
    assert set(schema.Release.model_fields) >= {*ENTRY_FIELDS, *SCORING_FIELDS}
    assert set(typing.get_args(schema.Fact.model_fields["verdict"].annotation)) == set(VERDICT_ORDER)


def test_a_composed_answer_is_an_answer_document_and_reads_back_the_same(composed):
    document = AnswerDocument.model_validate(composed)
    assert document.request.kind == "erasure" and document.forget_set and document.forget_criterion
    fact = next(f for f in document.models[0].facts if f.property == NAMED)
    assert (fact.completion_control_hits, fact.completion_controls) == (scripted.CONTROL_HITS, 19)
    # a reader of answer.json gets back exactly what was written
    assert document.model_dump(mode="json", exclude_unset=True) == composed


def _fact(document, prop=NAMED) -> int:
    return next(i for i, f in enumerate(document["models"][0]["facts"]) if f["property"] == prop)


def _set(path: str, value):
    """A change at a dotted path ("models.0.facts.{named}.p_value"); {named}: the fact compared."""
    def change(document):
        parts = path.format(named=_fact(document)).split(".")
        target = document
        for part in parts[:-1]:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(parts[-1]) if parts[-1].isdigit() else parts[-1]] = value
    return change


def _typo(document):
    fact = document["models"][0]["facts"][_fact(document)]
    fact["p_vaule"] = fact.pop("p_value")


@pytest.mark.parametrize("change, expected", [
    (_set("models.0.facts.{named}.p_value", math.nan), "models[0].facts[{named}].p_value: must be in [0, 1], got nan"),
    (_set("models.0.facts.{named}.p_value", 1.5), "models[0].facts[{named}].p_value: must be in [0, 1], got 1.5"),
    (_set("models.0.facts.{named}.M", -0.1), "models[0].facts[{named}].M: must be in [0, 1], got -0.1"),
    (_set("models.0.facts.{named}.z_star", math.inf), "models[0].facts[{named}].z_star: must be a finite number, got inf"),
    (_set("models.0.facts.{named}.truth_rank", 0), "models[0].facts[{named}].truth_rank: input should be greater than or equal to 1, got 0"),
    (_set("models.0.facts.{named}.n_variants", 3.0), "models[0].facts[{named}].n_variants: input should be a valid integer, got 3.0"),
    (_set("models.0.facts.{named}.n_memorized", 99), "models[0].facts[{named}]: n_memorized (99) must be at most n_variants"),
    (_set("models.0.facts.{named}.completion_controls", None),
     "models[0].facts[{named}]: completion_control_hits is 2 but completion_controls is None"),
    (_set("models.0.facts.{named}.verdict", "forgotten"), "models[0].facts[{named}].verdict: input should be 'memorized', "
                                                        "'weakly associated', 'says it' or 'not memorized', got 'forgotten'"),
    (_set("models.0.facts.{named}.emitted", 1), "models[0].facts[{named}].emitted: input should be a valid boolean, got 1"),
    (_typo, "models[0].facts[{named}].p_value: missing; models[0].facts[{named}].p_vaule: extra inputs are not permitted"),
    (_set("models.0.n_memorized", 99), "models[0]: n_memorized must be"),
    (_set("languages", ["en", "es"]), "languages[1]: input should be 'en', 'de', 'fr' or 'pl', got 'es'"),
    (_set("letter_language", "tlh"), "letter_language: input should be 'en', 'de', 'fr' or 'pl', got 'tlh'"),
    (_set("generated_at", "yesterday"), "generated_at: must be an ISO 8601 date and time, got 'yesterday'"),
    (_set("request.due_at", "2026-12-01T00:00:00"), "request.due_at: must name its time zone"),
    (_set("request.kind", "rectification"), "request.kind: input should be 'access' or 'erasure', got 'rectification'"),
    (_set("forget_set", None), "answer: an erasure request has forget_set and forget_criterion, got None and"),
    (_set("forget_set.0.p_controls", math.nan), "forget_set[0].p_controls: must be in [0, 1], got nan"),
    (_set("lineage", {"run": {"took_s": math.inf}}), "answer: lineage.run.took_s: input should be a finite number, got inf"),
    (_set("subject.deceased", True), "subject: deceased is True but date_of_death is None"),
])
def test_a_bad_value_is_refused_in_one_line_naming_its_field(composed, change, expected):
    document = copy.deepcopy(composed)
    change(document)
    with pytest.raises(AnswerSchemaError) as refused:
        check_answer(document)
    message = str(refused.value)
    assert "\n" not in message
    assert expected.format(named=_fact(composed)) in message


def test_composing_with_a_probability_above_one_fails_naming_the_field(world, tmp_path, monkeypatch):  # noqa: F811
    real = controls.compare_with_controls

    def p_above_one(*args, **kwargs):  # a p-value out of range, as a broken correction would give
        out = real(*args, **kwargs)
        return out.assign(p_value=out["p_value"].where(out["property"] != NAMED, 1.5))

    monkeypatch.setattr(controls, "compare_with_controls", p_above_one)
    with pytest.raises(AnswerSchemaError, match=r"answer: models\[0\]\.facts\[\d\]\.p_value: must be in \[0, 1\], got 1\.5"):
        answer(world, tmp_path, FACTS, "access")


def test_composing_with_a_nan_count_fails_naming_the_field(world, tmp_path, monkeypatch):  # noqa: F811
    # the scoring facts come from the stored audit row: a NaN there (a column missing from older rows)
    # leaves the count of censored continuations without what it counts out of
    scoring = {"precision": "float32", "continuations": math.nan, "continuations_censored": 3}
    monkeypatch.setattr(scripted, "ModelOutcome",
                        lambda key, entry, audit: ModelOutcome(key, entry, audit=audit, scoring=scoring))
    with pytest.raises(AnswerSchemaError, match=r"answer: models\[0\]: continuations_censored is 3 but continuations is None"):
        answer(world, tmp_path, FACTS, "access")


def test_composing_checks_the_document_it_returns(world, tmp_path, monkeypatch):  # noqa: F811
    checked = []
    monkeypatch.setattr(answer_module, "check_answer", lambda document: checked.append(document))
    document = answer(world, tmp_path, FACTS, "access")
    assert len(checked) == 1 and checked[0] is document  # the dict returned is the one checked, unchanged


def test_an_unaudited_release_says_why_and_has_no_facts(composed):
    document = copy.deepcopy(composed)
    document["models"].append({"model": "broken@2", "audited": False, "error": None, "facts": []})
    with pytest.raises(AnswerSchemaError, match=re.escape("models[1]: a release that could not be audited says why (error)")):
        check_answer(document)
    document["models"][1]["error"] = "the weights could not be loaded"
    assert check_answer(document).models[1].error == "the weights could not be loaded"


def test_a_revision_without_scores_gives_no_leak_comparison_at_all():
    # found by test_letters_property: a release served at generation access (no scores) before an
    # unlearned revision with scores gave the AUROC after without the one before, and the letter
    # (and `request verify`) formatted the missing one: TypeError: float() argument must be ... 'NoneType'
    fact = {"property": "P106", "property_label": "occupation", "values": ["journalist"], "M": None, "verdict": SAID}
    models = [{"model": "talker@1", "audited": True, "access": "generation", "facts": [fact]},
              {"model": "talker@2", "audited": True, "access": "weights", "facts": [{**fact, "M": 0.0, "verdict": NEVER}]}]
    scores = pd.DataFrame({"subject_qid": "Q1", "property": "P106", "value": ["Q2", "Q3"], "is_true": [True, False],
                           "nll_h": [3.0, 2.0]})
    [check] = verify_revisions(models, "Q1", {"talker@2": scores})
    assert (check["privleak_auroc_before"], check["privleak_auroc_after"]) == (None, None)
    assert verify_revisions(models, "Q1", {"talker@1": scores, "talker@2": scores})[0]["privleak_auroc_after"] == 0.0


def test_the_refusal_does_not_repeat_the_persons_data(composed):
    document = copy.deepcopy(composed)
    fact = document["models"][0]["facts"][0]
    fact["n_variants"] = "Halina Wierzbowska-Tarr, Kraków"  # a name where a count belongs
    fact["secret_note"] = "Kraków"
    with pytest.raises(AnswerSchemaError) as refused:
        check_answer(document)
    message = str(refused.value)
    assert "models[0].facts[0].n_variants: input should be a valid integer, got a str" in message
    assert "models[0].facts[0].secret_note: extra inputs are not permitted" in message
    assert "Kraków" not in message and "Halina" not in message
