"""The answer document's shape (`answer.compose_answer`'s output, stored as answer.json), as
pydantic models.

Why: a bad value (a NaN count, a probability above 1, a count without what it counts out of)
once reached the letter and crashed it after a finished audit. Checked here, where the answer is
composed, it fails there, naming the field (`models[2].facts[0].p_value: must be in [0, 1], got
nan`). Everything downstream still reads the plain dict; readers of answer.json may check it with
`AnswerDocument.model_validate` (or `check_answer`, for the one-line error).

Strict types (no "3" for 3, no 3.0 for a count, no 1 for True), no NaN or infinity anywhere, and
unknown keys refused (a typo is caught); the lineage is open-ended JSON (finite numbers still).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, model_validator, ValidationError

from wikimem_platform.canaries.languages.packs import LETTER_LANGUAGES, REQUEST_LANGUAGES
from wikimem_platform.lm.endpoint import ACCESS_LEVELS, GENERATION, WEIGHTS
from wikimem_platform.subject_requests.controller import Controller
from wikimem_platform.subject_requests.intake import RequestKind, RequestStatus
from wikimem_platform.vocabulary import CRITERIA

# The vocabularies (answer.py's constants; tests/unit/subject_requests/test_answer_schema.py holds them equal).
VERDICTS = ("memorized", "weakly associated", "says it", "not memorized")
OUTCOMES = ("forgotten", "still memorized", "newly memorized", "not memorized")
ACCESSES = (WEIGHTS, *ACCESS_LEVELS)
COVERAGES = ("audited", "template built on demand", "not covered", "not personal data")
CONTROLS_VERDICTS = ("memorized", "weakly associated", "says it",
                     "no evidence beyond what the model would say of anyone with these facts")


class AnswerSchemaError(ValueError):
    """An answer document does not have the answer's shape; the one-line message names each field."""


def _unit(value: float) -> float:
    if not 0 <= value <= 1:  # False for NaN too
        raise ValueError(f"must be in [0, 1], got {value}")
    return value


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError(f"must be a finite number, got {value}")
    return value


def _timestamp(value: str) -> str:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"must be an ISO 8601 date and time, got {value!r}") from None
    if moment.tzinfo is None:
        raise ValueError(f"must name its time zone (UTC: +00:00), got {value!r}")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


# allow_inf_nan: NaN reaches the validator, which names the range it is not in
Probability = Annotated[float, Field(allow_inf_nan=True), AfterValidator(_unit)]
Finite = Annotated[float, Field(allow_inf_nan=True), AfterValidator(_finite)]
Count = Annotated[int, Field(ge=0)]
Rank = Annotated[int, Field(ge=1)]
Timestamp = Annotated[str, AfterValidator(_timestamp)]
Text = Annotated[str, AfterValidator(_not_blank)]
Verdict = Literal[VERDICTS]
Access = Literal[ACCESSES]
Language = Literal[REQUEST_LANGUAGES]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


def _counted(owner: BaseModel, pairs: Mapping[str, str]) -> None:
    """Each count with what it counts out of: both given or both None, and 0 <= k <= n."""
    for count, total in pairs.items():
        k, n = getattr(owner, count), getattr(owner, total)
        if (k is None) != (n is None):
            raise ValueError(f"{count} is {k!r} but {total} is {n!r}: a count and what it counts out of are given "
                             "together or not at all")
        if k is not None and k > n:
            raise ValueError(f"{count} ({k}) must be at most {total} ({n})")


class Completion(_Model):
    prompt: str
    output: str


class Extraction(_Model):
    """A record-prompt extraction that named the value, against the controls' (`answer._extraction`)."""

    prompt: str
    output: str
    probe: Text
    cue: Probability
    controls: Count | None
    control_hits: Count | None
    p_value: Probability | None
    evidence: bool

    @model_validator(mode="after")
    def _counts(self):
        _counted(self, {"control_hits": "controls"})
        if (self.p_value is None) != (self.controls is None):
            raise ValueError(f"p_value is {self.p_value!r} but controls is {self.controls!r}: given together")
        if self.controls is None and not self.evidence:
            raise ValueError("an extraction not compared with the controls is evidence (evidence: true)")
        return self


class LeftOut(_Model):
    """A wording left out because its own text gives the value away (`crm.giveaways`)."""

    variant_id: Count
    kind: Text
    rule: Literal["shown", "implied"]
    detail: Text


# A fact's counts and what each counts out of (`answer.COUNTS`).
FACT_COUNTS = {"n_memorized": "n_variants", "completion_control_hits": "completion_controls",
               "controls_as_extreme": "n_controls", "wordings_said": "wordings_asked"}


class Fact(_Model):
    """One (release, property[, language]) of the answer: `answer.ANSWER_COLUMNS`, its phrase and sentence."""

    model: Text
    property: Text
    property_label: Text
    values: list[str]
    verdict: Verdict
    access: Access
    M: Probability | None
    n_memorized: Count
    n_variants: Count
    z_star: Finite | None
    truth_rank: Rank | None
    n_candidates: Count | None
    wordings_left_out: list[LeftOut]
    untestable: bool
    completion: Completion | None
    completion_hit: bool | None
    cue: Probability | None
    cue_flag: bool | None
    completion_controls: Count | None
    completion_control_hits: Count | None
    completion_p_value: Probability | None
    completion_evidence: bool | None
    extraction: Extraction | None
    emitted: bool
    control_names: list[str] | None
    n_controls: Count | None
    n_controls_planned: Count | None
    controls_as_extreme: Count | None
    p_value: Probability | None
    control_alpha: Probability | None
    controls_M_mean: Probability | None
    controls_M_max: Probability | None
    p_ci_low: Probability | None
    p_ci_high: Probability | None
    p_family: Probability | None
    family: Count | None
    family_reading: Literal["holds", "fails"] | None
    name_prior: Finite | None
    n_kin: Count | None
    name_prior_share_below: Probability | None
    name_prior_p: Probability | None
    # whether the name prior can be the name's bearers' (`controls.name_prior_backing`); absent from
    # answers composed before it was recorded
    name_prior_backed: bool | None = None
    name_suggests: bool | None
    wordings_asked: Count | None
    wordings_said: Count | None
    controls_said_share: Probability | None
    phrase: Text
    sentence: Text
    # a request in several languages: the language asked in, and whether a true value had no label in it
    language: Language | None = None
    label_fallback: bool | None = None

    @model_validator(mode="after")
    def _consistent(self):
        _counted(self, FACT_COUNTS)
        if (self.completion is None) != (self.completion_hit is None):
            raise ValueError("completion and completion_hit are given together or not at all")
        if self.p_ci_low is not None and self.p_ci_high is not None and self.p_ci_low > self.p_ci_high:
            raise ValueError(f"p_ci_low ({self.p_ci_low}) must be at most p_ci_high ({self.p_ci_high})")
        for group in (COMPLETION_COMPARED, NAME_PRIOR):
            given = {name: getattr(self, name) for name in group}
            if len({v is None for v in given.values()}) > 1:
                raise ValueError(f"{', '.join(group)} are given together or not at all, got "
                                 + ", ".join(f"{k} {v!r}" for k, v in given.items()))
        if self.name_suggests and self.name_prior_backed is False:
            raise ValueError("name_suggests is true only for a name prior the name's bearers back (name_prior_backed)")
        if self.family_reading is not None and (self.family is None or self.p_family is None):
            raise ValueError(f"family_reading {self.family_reading!r} gives its family and p_family, got {self.family!r} "
                             f"and {self.p_family!r}")
        compared = {name: getattr(self, name) for name in COMPARED}
        if self.n_controls is None and any(v is not None for v in compared.values()) \
                or self.n_controls is not None and any(v is None for v in compared.values()):
            given = ", ".join(f"{k} {f'{len(v)} names' if isinstance(v, list) else repr(v)}" for k, v in compared.items())
            raise ValueError(f"n_controls is {self.n_controls!r}: the comparison with the controls ({', '.join(COMPARED)}) "
                             f"is given whole or not at all, got {given}")
        if self.access == GENERATION:
            if self.M is not None or self.wordings_asked is None:
                raise ValueError(f"a fact audited through completions only has no M and gives wordings_asked, got M "
                                 f"{self.M!r} and wordings_asked {self.wordings_asked!r}")
        elif self.M is None or self.n_candidates is None:
            raise ValueError(f"a fact audited on {self.access} gives its M and n_candidates, got {self.M!r} and "
                             f"{self.n_candidates!r}")
        elif self.n_controls is not None and self.family is None:
            raise ValueError("a ranked fact compared with controls gives its family (the facts compared)")
        return self


# What a fact compared with the controls gives, all of it (None: not compared).
COMPARED = ("n_controls_planned", "p_value", "control_alpha", "p_ci_low", "p_ci_high", "control_names")
# A completion compared with the controls' completions; what the name alone tells the model.
COMPLETION_COMPARED = ("completion_controls", "completion_p_value")
NAME_PRIOR = ("name_prior", "n_kin", "name_prior_share_below", "name_prior_p", "name_suggests")


class Release(_Model):
    """A registered release: its registry fields, and its facts, or why it could not be audited."""

    model: Text
    audited: bool
    error: str | None
    facts: list[Fact]
    # registry fields (`answer.ENTRY_FIELDS`; absent where the release is no longer registered)
    source: str | None = None
    variant: str | None = None
    family: str | None = None
    revision: str | None = None
    display_name: str | None = None
    purposes: str | None = None
    recipients: str | None = None
    retention: str | None = None
    training_data: str | None = None
    transfers: str | None = None
    # how the person's scores were computed (`answer.SCORING_FIELDS`)
    precision: str | None = None
    sentences_rescored: Count | None = None
    share_rescored: Probability | None = None
    continuations: Count | None = None
    continuations_censored: Count | None = None
    # an audited release's
    fingerprint: str | None = None
    access: Access | None = None
    n_facts: Count | None = None
    n_memorized: Count | None = None
    n_weak: Count | None = None
    n_said: Count | None = None

    @model_validator(mode="after")
    def _consistent(self):
        if not self.audited:
            if self.facts:
                raise ValueError("a release that could not be audited has no facts")
            if not self.error:
                raise ValueError("a release that could not be audited says why (error)")
            return self
        if self.error is not None:
            raise ValueError(f"an audited release has no error, got {self.error!r}")
        tallies = {"n_facts": len(self.facts), "n_memorized": sum(f.verdict == "memorized" for f in self.facts),
                   "n_weak": sum(f.verdict == "weakly associated" for f in self.facts),
                   "n_said": sum(f.verdict == "says it" for f in self.facts)}
        for name, expected in tallies.items():
            if getattr(self, name) != expected:
                raise ValueError(f"{name} must be {expected} (its facts), got {getattr(self, name)!r}")
        if self.access is None:
            raise ValueError("an audited release names its access")
        for i, fact in enumerate(self.facts):
            if (fact.model, fact.access) != (self.model, self.access):
                raise ValueError(f"facts[{i}] is of {fact.model} at {fact.access} access, its release {self.model} at "
                                 f"{self.access}")
        _counted(self, {"continuations_censored": "continuations"})
        return self


class Request(_Model):
    """`intake.SubjectRequest.summary()`: the request's record, without the person's facts."""

    id: Text
    kind: Literal[tuple(k.value for k in RequestKind)]
    subject_key: Text
    subject_qid: str | None
    subject_label: str
    requester_reference: str | None
    received_at: Timestamp
    due_at: Timestamp
    status: Literal[tuple(s.value for s in RequestStatus)]
    answered_at: Timestamp | None
    error: str | None
    languages: str | None
    letter_language: Literal[LETTER_LANGUAGES] | None
    purged_at: Timestamp | None
    purged_by: str | None
    in_wikidata: bool


class Subject(_Model):
    key: Text
    label: str
    qid: str | None
    in_wikidata: bool
    aliases: list[str]
    deceased: bool
    date_of_death: Text | None  # as the extract or the facts file wrote it ("11 May 2001", "19th century")

    @model_validator(mode="after")
    def _consistent(self):
        if self.deceased != (self.date_of_death is not None):
            raise ValueError(f"deceased is {self.deceased} but date_of_death is "
                             f"{'None' if self.date_of_death is None else 'given'}")
        if self.in_wikidata != (self.qid is not None):
            raise ValueError(f"in_wikidata is {self.in_wikidata} but qid is {'None' if self.qid is None else 'given'}")
        return self


class Method(_Model):
    """The thresholds the verdicts were read at, and what each verdict means."""

    m_threshold: Probability
    alpha: Finite
    cue_tau: Probability
    n_controls: Count
    verdicts: dict[Verdict, Text]
    control_alpha: Probability | None = None
    compared_on: str | None = None
    control_rounds: list[Count] | None = None
    shortlist: Count | None = None

    @model_validator(mode="after")
    def _consistent(self):
        if self.n_controls and self.control_alpha is None:
            raise ValueError(f"a method with {self.n_controls} controls gives its control_alpha")
        return self


class CoverageRow(_Model):
    property: Text
    property_label: str
    coverage: Literal[COVERAGES]
    reason: str | None = None
    language: Language | None = None


class ForgetEntry(_Model):
    """One fact to forget (`unlearning.forget_sets.FORGET_COLUMNS`, and its language)."""

    model: Text
    subject_qid: str | None
    subject_label: str
    property: Text
    property_label: str
    value: str | None
    value_label: str | None
    M: Probability | None
    z_star: Finite | None
    cohort: str | None
    strict: bool | None
    at_threshold: bool | None
    cue: Probability | None
    cue_flag: bool | None
    controls_verdict: Literal[CONTROLS_VERDICTS] | None
    p_controls: Probability | None
    n_controls: Count | None
    controls_alpha: Probability | None
    beats_controls: bool | None
    language: Language | None = None


class VerifiedFact(_Model):
    property: Text
    property_label: str
    values: list[str]
    before: Verdict
    after: Verdict
    M_before: Probability | None
    M_after: Probability | None
    outcome: Literal[OUTCOMES]
    language: Language | None = None


class Retain(_Model):
    """The retain set's utility after the revision (`unlearning.verify.retain_utility`)."""

    retain_facts: Count | None
    still_memorized: Count | None
    utility: Probability | None
    completions_only: bool | None = None

    @model_validator(mode="after")
    def _counts(self):
        if self.still_memorized is not None and (self.retain_facts is None or self.still_memorized > self.retain_facts):
            raise ValueError(f"still_memorized ({self.still_memorized}) must be at most retain_facts ({self.retain_facts})")
        return self


class Verification(_Model):
    """A revision against the one before it, fact by fact (`answer.verify_revisions`)."""

    model: Text
    before: Text
    after: Text
    access: Access | None
    facts: list[VerifiedFact]
    counts: dict[Literal[OUTCOMES], Count]
    erased: bool
    retain: Retain
    privleak_auroc_before: Probability | None
    privleak_auroc_after: Probability | None
    verified_at: Timestamp

    @model_validator(mode="after")
    def _consistent(self):
        if set(self.counts) != set(OUTCOMES):
            raise ValueError(f"counts must have every outcome ({', '.join(OUTCOMES)}), got {', '.join(self.counts)}")
        if sum(self.counts.values()) != len(self.facts):
            raise ValueError(f"counts add up to {sum(self.counts.values())}, but {len(self.facts)} facts were compared")
        if (self.privleak_auroc_before is None) != (self.privleak_auroc_after is None):
            raise ValueError(f"privleak_auroc_before is {self.privleak_auroc_before!r} but privleak_auroc_after is "
                             f"{self.privleak_auroc_after!r}: a before/after comparison gives both or neither")
        if self.erased != (self.counts["still memorized"] == 0 and self.counts["newly memorized"] == 0):
            raise ValueError(f"erased is {self.erased} but counts are {self.counts}")
        return self


class AnswerDocument(_Model):
    """The answer to a data-subject request, as `answer.compose_answer` composes it."""

    request: Request
    subject: Subject
    controller: Controller | None
    generated_at: Timestamp
    method: Method
    headline: Text
    languages: list[Language] = Field(min_length=1)
    letter_language: Literal[LETTER_LANGUAGES]
    coverage: list[CoverageRow]
    not_covered: list[CoverageRow]
    models: list[Release]
    forget_set: list[ForgetEntry] | None
    forget_criterion: Literal[CRITERIA] | None
    verification: list[Verification]
    lineage: dict[str, JsonValue]

    @model_validator(mode="after")
    def _consistent(self):
        erasure = self.request.kind == RequestKind.ERASURE.value
        if erasure != (self.forget_set is not None) or erasure != (self.forget_criterion is not None):
            given = "a list" if self.forget_set is not None else "None"  # the forget set holds the person's values
            raise ValueError(f"an {self.request.kind} request {'has' if erasure else 'has no'} forget_set and "
                             f"forget_criterion, got {given} and {self.forget_criterion!r}")
        if self.verification and not erasure:
            raise ValueError("only an erasure request verifies revisions")
        return self


def _path(loc: tuple) -> str:
    """("models", 2, "facts", 0, "p_value") -> models[2].facts[0].p_value (the union members' names left out)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _is_member(part):
            out += f".{part}" if out else str(part)
    return out


def _is_member(part: str) -> bool:
    """A union member or constrained type pydantic names in a location (`float`, `function-after[...]`)."""
    return part in ("int", "float", "str", "bool", "list", "dict", "none") or "[" in part


def _message(error: Mapping) -> str:
    """One field's problem. Text the person's data may be in (names, values, completions) is not
    repeated: the message reaches the run's log; an enumeration's wrong word is."""
    where = _path(error["loc"]) or "answer"
    if error["type"] == "value_error":  # ours: already says what it got
        return f"{where}: {str(error['msg']).removeprefix('Value error, ')}"
    if error["type"] == "missing":
        return f"{where}: missing"
    text = str(error["msg"])
    text = text[0].lower() + text[1:]
    if error["type"] == "extra_forbidden":
        return f"{where}: {text}"
    value = error["input"]
    shown = repr(value) if not isinstance(value, (str, dict, list)) or error["type"] == "literal_error" \
        else f"a {type(value).__name__}"
    return f"{where}: {text}, got {shown}"


def check_answer(document: Mapping) -> AnswerDocument:
    """The document as an `AnswerDocument`; AnswerSchemaError (one line, every field path) where it is not one."""
    try:
        return AnswerDocument.model_validate(document)
    except ValidationError as error:
        problems = list(dict.fromkeys(_message(e) for e in _useful(error.errors(include_url=False))))
        raise AnswerSchemaError("answer: " + "; ".join(problems)) from None


def _useful(errors: list[dict]) -> list[dict]:
    """For a value that fits no member of `X | None`, the error of X alone (not "should be None" too)."""
    by_path: dict[str, list[dict]] = {}
    for e in errors:
        by_path.setdefault(_path(e["loc"]), []).append(e)
    out = []
    for group in by_path.values():
        kept = [e for e in group if e["type"] != "none_required"]
        out.extend(kept or group)
    return out
