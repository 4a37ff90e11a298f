"""Audit one person on one model: the person's canaries and candidates, scores, completions.

The person's canaries come from the reference templates (the property table's baseline and 10
paraphrases, the contextualized variant, h0, S(h)) exactly as for a cohort subject, so a person
who was in an audited cohort has the very same sentences — already in the model's sentence
cache — and costs no forward pass. Candidates come from the reference counterfactual pools; a
requester's value that is not in the pool enters as the truth, and pool values equal to it are
dropped (`counterfactuals.build_candidates`); a true value's common short forms and aliases join
it as the same truth (`value_forms`), the controls' identically. A property the reference data does not cover gets
its templates and a counterfactual pool built on demand from the extract, or a "not covered"
line saying why.

`audit_person_on_releases` runs that audit on every registered release, one model in memory at a
time; a release that fails to load or score is recorded as not audited and the others go on.

A release served behind an OpenAI-compatible endpoint (`lm.endpoint.EndpointModel`, access
prompt-logprobs or top-logprobs; any `lm.scorer.Scorer`, asked what its access allows) is audited the same way: its canaries (the person's and the controls') are
scored through the server's prompt log-probabilities (`wikimem.scoring.sentence_nlls`), its
completions and record-prompt extractions come from the server's greedy completions
(`lm.generation.greedy_generate`); soft prompts, which need the weights, are skipped and the log
says so. Every result names the access that produced it (`Scorer.access`).

A release served with *generation* access only (no probabilities) is audited by what it says
(`audit_person_by_generation`): the greedy completion of every wording that names the person
before the value, judged by value/alias match, against the same invented controls' completions.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from wikimem_platform import eme
from wikimem_platform.canaries.build import build_canaries, build_templates
from wikimem_platform.canaries.encoders import load_encoder
from wikimem_platform.crm import metrics as crm
from wikimem_platform.canaries.languages import ENGLISH
from wikimem_platform.crm.giveaways import find_giveaways
from wikimem_platform.crm.examples import canary_examples
from wikimem_platform.eme.soft_prompts import SoftPromptStore
from wikimem_platform.lm.access import GENERATION, RANKING_ACCESS, WEIGHTS
from wikimem_platform.lm.generation import greedy_generate, MAX_NEW_TOKENS, substring_hit
from wikimem_platform.lm.scorer import Scorer
from wikimem_platform.progress import throttled
from wikimem_platform.reference.counterfactuals import build_candidates, draw_counterfactuals
from wikimem_platform.reference.value_forms import (
    DEFAULT_MAX_FORMS, form_sources, is_form, with_form_aliases, with_truth_forms)
from wikimem_platform.security.scrub import Scrubber
from wikimem_platform.subject_requests.intake import SubjectRequest
from wikimem_platform.subject_requests.values import resolve_item_labels
from wikimem_platform.vocabulary import CONTEXTUALIZED_KINDS, LANGUAGE, N_SCORED_VARIANTS
from wikimem_platform.wikidata.extract import ALLOWED_DATATYPES
from wikimem_platform.wikimem import control_scoring, controls
from wikimem_platform.wikimem.memorization import aliases_by_value
from wikimem_platform.wikimem.scoring import score_canaries, ScoringReport, SentenceNllCache, ShardStore

# A property built on demand needs at least this many other values to rank the truth against.
MIN_ON_DEMAND_POOL = 10
DEFAULT_COUNTERFACTUALS_PER_PROPERTY = 100  # the counterfactuals asset's default (~100 + truths)
COVERAGE_COLUMNS = ["property", "property_label", "coverage", "reason"]
# One row per registered release in `audit_person_on_releases`: audited or why not, cache use, time.
RELEASE_AUDIT_COLUMNS = ["model", "audited", "error", "fingerprint", "access", "sentences_computed", "shards_reused",
                         "facts_compared", "control_sentences_computed", "precision", "sentences_rescored",
                         "share_rescored", "continuations", "continuations_censored", "seconds"]
COMPLETION_COLUMNS = ["subject_qid", "property", "variant_id", "prompt", "completion", "targets", "hit", "cue", "probe"]
# `probe` of a canary completion; entity-level extractions name their prompt ("record", "prefix 5").
CANARY_PROBE = "canary"
# `probe` of an invented control's completion of the same prompt is the person's with this before
# it ("invented: canary", "invented: record"): stored with the completions, read only as the
# controls' side of the person's (`answer.release_outcomes` keeps them apart).
CONTROL_PROBE_PREFIX = "invented: "
# `probe` of a generation-access audit's completions: every scored wording, not only the first.
WORDING_PROBE = "wording"
AUDITED, ON_DEMAND, NOT_COVERED = "audited", "template built on demand", "not covered"
# Statements Wikidata holds *about its pages and records*, not facts about the person: Wikimedia
# pages, categories, galleries and images, and every identifier in another database. They are
# not audited and a letter does not list them as facts we could not test.
NOT_PERSONAL = "not personal data"
NOT_PERSONAL_PROPERTIES = frozenset({"P373", "P935", "P1472", "P910", "P18", "P1612", "P1424", "P1151", "P1343", "P8989"})
NOT_PERSONAL_DATATYPES = frozenset({"external-id", "url", "commonsMedia"})


def person_subject(request: SubjectRequest, humans: pd.DataFrame, claims: pd.DataFrame,
                   metadata: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(subject row: qid, label, aliases, description, in_wikidata; facts as claims rows).

    The subject's id is its QID, or the request's subject key for a person not in Wikidata, whose
    item values given in words take the QID the extract knows them by (`values.resolve_item_labels`):
    the same candidates, forms and controls' origin as a Wikidata person with those facts.
    """
    person = request.person()
    if person is None:
        row = humans[humans["qid"] == request.subject_qid]
        if row.empty:
            raise KeyError(f"{request.id}: subject {request.subject_qid} is no longer in the extract")
        subject = row[["qid", "label", "aliases", "description"]].assign(in_wikidata=True).reset_index(drop=True)
        facts = claims[claims["qid"] == request.subject_qid].reset_index(drop=True)
        return subject, facts
    datatypes = dict(zip(metadata["property"], metadata["datatype"]))
    subject = pd.DataFrame([{"qid": request.subject_key, "label": person.name, "aliases": list(person.aliases),
                             "description": None, "in_wikidata": False}])
    return subject, resolve_item_labels(person.claims(request.subject_key, datatypes), claims)


@dataclass
class PersonPlan:
    """Everything scoring needs for one person, and what could not be audited (and why).

    control_canaries / control_candidates: the same canaries and candidates for invented people
    who carry the person's facts (`controls`), kept apart so that nothing meant for the person
    (completions, forget sets) ever reads a control's row; empty when no controls were asked for.
    They hold the planned controls (`n_controls`) and the further ones a fact that beats them all
    without margin gets (up to `max_controls`). kin_canaries / kin_candidates: the same for the
    person's kin names (`controls.kin_names`), which measure the person's name prior. Stored
    together (`stored_controls`, a `control_role` column) and split again here."""

    subject: pd.DataFrame
    facts: pd.DataFrame
    canaries: pd.DataFrame
    candidates: pd.DataFrame
    coverage: pd.DataFrame  # COVERAGE_COLUMNS, one row per property of the person's facts
    control_canaries: pd.DataFrame | None = None
    control_candidates: pd.DataFrame | None = None
    kin_canaries: pd.DataFrame | None = None
    kin_candidates: pd.DataFrame | None = None

    def __post_init__(self):
        for name in ("canaries", "candidates"):
            frame = getattr(self, f"control_{name}")
            if frame is not None and controls.CONTROL_ROLE in frame:
                kin = frame[controls.CONTROL_ROLE] == controls.KIN
                if kin.any() or getattr(self, f"kin_{name}") is None:
                    setattr(self, f"kin_{name}", frame[kin].drop(columns=controls.CONTROL_ROLE).reset_index(drop=True))
                setattr(self, f"control_{name}", frame[~kin].drop(columns=controls.CONTROL_ROLE).reset_index(drop=True))

    def stored_controls(self) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
        """(canaries, candidates) of the controls and the kin names together, each row naming its
        `control_role`: what the request's control assets store."""
        def joined(controls_frame, kin_frame):
            if controls_frame is None:
                return None
            parts = [controls_frame.assign(**{controls.CONTROL_ROLE: controls.CONTROL})]
            if kin_frame is not None and len(kin_frame):
                parts.append(kin_frame.assign(**{controls.CONTROL_ROLE: controls.KIN}))
            return pd.concat(parts, ignore_index=True)

        return (joined(self.control_canaries, self.kin_canaries),
                joined(self.control_candidates, self.kin_candidates))

    @property
    def n_controls(self) -> int:
        """Invented people planned per language (each language draws its own: a German or French
        sentence agrees with the person's gender, and so must their names); a fact that beats them
        all without margin gets more, up to `max_controls`."""
        frame = self.control_canaries
        if frame is None or frame.empty:
            return 0
        if "controls_planned" in frame:
            return int(frame["controls_planned"].max())
        return self.max_controls

    @property
    def max_controls(self) -> int:
        """The invented people a fact may be compared with per language: the planned ones and those
        held for facts that need more (`controls.has_room`); more are drawn, as candidates, where
        the controls are matched to the name prior (`controls.matched_controls`)."""
        frame = self.control_canaries
        if frame is None or frame.empty:
            return 0
        if "controls_max" in frame:
            return int(frame["controls_max"].max())
        if LANGUAGE in frame:
            return int(frame.groupby(LANGUAGE)["subject_qid"].nunique().max())
        return int(frame["subject_qid"].nunique())

    @property
    def control_ids(self) -> list[str]:
        """The controls in the order they were drawn (the order they are scored in), of the first language."""
        frame = self.control_canaries
        if frame is None or frame.empty:
            return []
        if LANGUAGE in frame:
            frame = frame[frame[LANGUAGE] == frame[LANGUAGE].iloc[0]]
        return list(dict.fromkeys(frame["subject_qid"]))

    @property
    def languages(self) -> list[str]:
        """The languages the person's canaries are written in, in the order asked (English where no
        language was named: plans made before languages, and English-only requests)."""
        if LANGUAGE not in self.canaries or not len(self.canaries):
            return [ENGLISH]
        return list(dict.fromkeys(self.canaries[LANGUAGE]))

    def in_language(self, code: str) -> PersonPlan:
        """The plan of one language: its canaries, candidates, coverage and controls."""
        if LANGUAGE not in self.canaries:
            return self

        def pick(frame: pd.DataFrame | None) -> pd.DataFrame | None:
            if frame is None or LANGUAGE not in frame:
                return frame
            return frame[frame[LANGUAGE] == code].reset_index(drop=True)

        return PersonPlan(self.subject, self.facts, pick(self.canaries), pick(self.candidates), pick(self.coverage),
                          pick(self.control_canaries), pick(self.control_candidates),
                          pick(self.kin_canaries), pick(self.kin_candidates))

    @property
    def control_alpha(self) -> float:
        """The level the person is compared at (stored with the controls' canaries, so the
        scoring, which stops a fact once its outcome is settled, and the answer read one value)."""
        frame = self.control_canaries
        if frame is None or frame.empty or "control_alpha" not in frame:
            return controls.DEFAULT_ALPHA
        return float(frame["control_alpha"].iloc[0])


def plan_person_audit(
    subject: pd.DataFrame,
    facts: pd.DataFrame,
    *,
    property_table: pd.DataFrame,
    templates: pd.DataFrame,
    counterfactuals: pd.DataFrame,
    claims: pd.DataFrame,
    humans: pd.DataFrame,
    metadata: pd.DataFrame,
    properties: Sequence[str] = (),
    on_demand: bool = True,
    n_context: int = 4,
    n_similar: int = 2,
    seed: int = 0,
    counterfactuals_per_property: int = DEFAULT_COUNTERFACTUALS_PER_PROPERTY,
    build_on_demand_templates: Callable[[pd.DataFrame], pd.DataFrame] = build_templates,
    n_controls: int = 0,
    control_alpha: float = controls.DEFAULT_ALPHA,
    max_controls: int = controls.MAX_CONTROLS,
    kin_per_token: int = controls.KIN_PER_TOKEN,
    value_aliases: Mapping[str, Sequence[str]] | None = None,
    truth_forms: int = DEFAULT_MAX_FORMS,
    shipped_forms: bool = True,
    generic: str | None = None,
    gender: str | None = None,
) -> PersonPlan:
    """Canaries and candidates of one person, covered properties exactly as in a cohort audit.

    properties: audit only these (ids; [] = every property of the person's facts).
    on_demand: build templates and counterfactual pools for properties the reference data lacks.
    n_controls: invented people with the person's facts, on the same templates and candidates
    (without look-alike names: see `controls`), compared at level control_alpha; max_controls: up to
    this many for a fact that beats all n without a control's margin (`controls.has_room`);
    kin_per_token: names keeping the person's first name, and as many keeping the surname, whose
    scores measure what the name alone tells the model (`controls.name_priors`; 0: none).
    truth_forms: up to this many other forms of each true value ("United States", "USA" for
    "United States of America": `value_forms`, from `value_aliases` — value id -> aliases, the
    extract's — and the shipped short forms) are scored as the same truth, for the person and,
    identically, for the controls; 0 scores each truth under its label only. shipped_forms: also the
    shipped (English) short forms. generic: h0 for every canary instead of English "this person"
    (a language's gendered demonstrative, `LanguagePack.generic_subject`). gender: the person's
    gender the canaries agree with; the invented controls are drawn of the same gender (a German
    sentence agreeing with a woman must not be scored for a man's name).
    """
    if not 0 < control_alpha < 1:
        raise ValueError(f"control_alpha must lie in (0, 1), got {control_alpha}")
    labels = {**dict(zip(metadata["property"], metadata["label"])), **dict(zip(property_table["property"], property_table["label"]))}
    datatypes = dict(zip(metadata["property"], metadata["datatype"]))
    wanted = [p for p in dict.fromkeys(facts["property"]) if not properties or p in properties]
    covered = set(property_table["property"]) & set(templates["property"]) & set(counterfactuals["property"])
    coverage, extra = [], []
    for prop in wanted:
        if prop in NOT_PERSONAL_PROPERTIES or datatypes.get(prop) in NOT_PERSONAL_DATATYPES:
            coverage.append((prop, labels.get(prop, prop), NOT_PERSONAL,
                             "a Wikimedia page or an identifier in another database, not a fact about the person"))
        elif prop in covered:
            coverage.append((prop, labels.get(prop, prop), AUDITED, ""))
        elif datatypes.get(prop) not in ALLOWED_DATATYPES or not isinstance(labels.get(prop), str):
            coverage.append((prop, labels.get(prop, prop), NOT_COVERED,
                             f"no English label or a datatype ({datatypes.get(prop)}) a sentence cannot state"))
        elif not on_demand:
            coverage.append((prop, labels.get(prop, prop), NOT_COVERED, "not among the audited properties"))
        else:
            extra.append(prop)

    sources = form_sources(value_aliases, shipped=shipped_forms) if truth_forms > 0 else {}
    ref = facts[facts["property"].isin(covered & set(wanted))]
    canaries = build_canaries(subject, ref, property_table, templates, n_context=n_context, seed=seed, n_similar=n_similar)
    candidates = with_truth_forms(build_candidates(subject, ref, counterfactuals), sources, truth_forms)

    if extra:
        pool = draw_counterfactuals(claims, humans, extra, per_property=counterfactuals_per_property, seed=seed,
                                    exclude_humans=set(subject["qid"]))
        sizes = pool.groupby("property").size()
        ready = [p for p in extra if sizes.get(p, 0) >= MIN_ON_DEMAND_POOL]
        for prop in extra:
            if prop not in ready:
                held = int(sizes.get(prop, 0))
                found = "no other person in the reference data has a value for it" if held == 0 else (
                    f"other people in the reference data hold only {held} other value{'s' if held > 1 else ''} of it")
                coverage.append((prop, labels.get(prop, prop), NOT_COVERED,
                                 f"{found}, and at least {MIN_ON_DEMAND_POOL} are needed to rank the true value against"))
        if ready:
            table = pd.DataFrame({
                "property": ready, "label": [labels[p] for p in ready],
                "description": [_first(metadata, p, "description") or "" for p in ready],
                "aliases": [_first(metadata, p, "aliases") or [] for p in ready],
                "datatype": [datatypes[p] for p in ready], "n_humans": [int(sizes[p]) for p in ready],
            })
            built, failed = _templates_on_demand(table, build_on_demand_templates)
            for prop, reason in failed.items():
                coverage.append((prop, labels.get(prop, prop), NOT_COVERED, reason))
            ok = [p for p in ready if p not in failed]
            if ok:
                coverage += [(p, labels[p], ON_DEMAND, "") for p in ok]
                both = pd.concat([property_table, table[table["property"].isin(ok)]], ignore_index=True)
                all_templates = pd.concat([templates, built], ignore_index=True)
                own = facts[facts["property"].isin((covered & set(wanted)) | set(ok))]
                more = build_canaries(subject, own, both, all_templates, n_context=n_context, seed=seed, n_similar=n_similar)
                more_candidates = with_truth_forms(build_candidates(subject, own[own["property"].isin(ok)], pool),
                                                   sources, truth_forms)
                canaries = pd.concat([canaries, more[more["property"].isin(ok)]], ignore_index=True)
                candidates = pd.concat([candidates, more_candidates], ignore_index=True)
    order = {p: i for i, p in enumerate(wanted)}
    coverage_frame = pd.DataFrame(coverage, columns=COVERAGE_COLUMNS)
    coverage_frame = coverage_frame.sort_values("property", key=lambda c: c.map(order), kind="stable", ignore_index=True)
    if generic is not None:
        canaries["subject_generic"] = generic
    plan = PersonPlan(subject, facts, canaries, candidates, coverage_frame)
    if n_controls and len(canaries):
        # the person's canaries and candidates under each invented name (controls.control_rows)
        most = max(n_controls, max_controls)
        # candidates for the controls: kin_per_token > 0 keeps those sharing the name's prior (`controls.matched_controls`)
        pool = max(controls.POOL_FACTOR * n_controls, most) if kin_per_token else most
        # the extract's name parts, taken names and pools, worked out once for the controls, the kin and the backing
        parts, taken, memo = controls.name_parts(humans, claims), controls.taken_names(humans), {}
        names = controls.control_names(subject, facts, humans, claims, pool, seed, gender=gender,
                                       parts=parts, taken=taken, memo=memo)
        person = subject["qid"].iloc[0]
        control_canaries, plan.control_candidates = controls.control_rows(canaries, candidates, {person: names})
        plan.control_canaries = control_canaries.assign(control_alpha=control_alpha, controls_planned=n_controls,
                                                        controls_max=most)
        first, last = controls.person_kin(subject, facts, humans, claims, kin_per_token, seed, gender=gender,
                                          parts=parts, taken=taken, memo=memo) if kin_per_token else ([], [])
        neutral = controls.screen(canaries[~canaries["kind"].isin(CONTEXTUALIZED_KINDS)])
        sides = [controls.control_rows(neutral, candidates, {person: names}, prefix=prefix)
                 for names, prefix in ((first, controls.KIN_FIRST_PREFIX), (last, controls.KIN_LAST_PREFIX))]
        backing = controls.name_prior_backing(subject, facts, humans, claims, parts=parts, memo=memo)
        plan.kin_canaries = pd.concat([c for c, _ in sides], ignore_index=True)
        if len(plan.kin_canaries):  # per fact: whether a name prior can be the name's bearers' (stored with the kin)
            plan.kin_canaries[controls.NAME_PRIOR_BACKED] = plan.kin_canaries["property"].map(backing).fillna(True)
        plan.kin_candidates = pd.concat([c for _, c in sides], ignore_index=True)
    return plan


def _first(frame: pd.DataFrame, prop: str, column: str):
    rows = frame.loc[frame["property"] == prop, column]
    return rows.iloc[0] if len(rows) else None


def _templates_on_demand(table: pd.DataFrame, build: Callable[[pd.DataFrame], pd.DataFrame]) -> tuple[pd.DataFrame, dict[str, str]]:
    """Templates for each property, one at a time so that one unworkable label fails alone."""
    frames, failed = [], {}
    for row in range(len(table)):
        try:
            frames.append(build(table.iloc[[row]]))
        except ValueError as error:  # too few paraphrases for the label
            failed[table.iloc[row]["property"]] = f"no {N_SCORED_VARIANTS} canary wordings could be written for it ({error})"
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()), failed


# --------------------------------------------------------------------------- one model

@dataclass
class ModelAudit:
    """One model's results for one person."""

    model: str
    scores: pd.DataFrame
    completions: pd.DataFrame
    report: ScoringReport | None
    fingerprint: str
    control_scores: pd.DataFrame | None = None  # the invented people's, same columns as scores
    control_report: ScoringReport | None = None  # what scoring the controls cost (cache reuse)
    compared: tuple[str, ...] = ()  # properties whose controls were scored (the person's M > 0)
    control_completions: pd.DataFrame | None = None  # the controls' completions where the person's named the value
    access: str = WEIGHTS  # what produced these results: "weights" (loaded here) or the endpoint's access level
    # the name-prior screen (`controls.name_priors`): the person's kin names' scores and the candidate
    # controls' (the controls were chosen among them), compared facts only
    kin_scores: pd.DataFrame | None = None
    candidate_scores: pd.DataFrame | None = None

    @property
    def control_sentences_computed(self) -> int:
        """Sentences that went through the model for the controls (the rest came from the cache)."""
        return self.control_report.sentences_computed if self.control_report is not None else 0

    def in_language(self, code: str) -> ModelAudit:
        """The results of one language's canaries (all of them where rows name no language)."""
        def pick(frame: pd.DataFrame | None) -> pd.DataFrame | None:
            if frame is None or LANGUAGE not in frame:
                return frame
            return frame[frame[LANGUAGE] == code].drop(columns=LANGUAGE).reset_index(drop=True)

        return dataclasses.replace(self, scores=pick(self.scores), completions=pick(self.completions),
                                   control_scores=pick(self.control_scores),
                                   control_completions=pick(self.control_completions), kin_scores=pick(self.kin_scores),
                                   candidate_scores=pick(self.candidate_scores))


def in_languages(audits: Mapping[str, ModelAudit]) -> ModelAudit:
    """One model's audits in several languages as one: every frame's rows name their `language`,
    the scoring reports are summed (`ScoringReport.add`)."""
    first = next(iter(audits.values()))
    if len(audits) == 1 and ENGLISH in audits:
        return first  # an English-only request: the frames as they always were

    def joined(name: str) -> pd.DataFrame | None:
        frames = [getattr(a, name).assign(**{LANGUAGE: code}) for code, a in audits.items()
                  if getattr(a, name) is not None]
        return pd.concat(frames, ignore_index=True) if frames else None

    def summed(name: str) -> ScoringReport | None:
        reports = [getattr(a, name) for a in audits.values() if getattr(a, name) is not None]
        if not reports:
            return None
        total = ScoringReport()
        for report in reports:
            total.add(report)
        return total

    compared = tuple(dict.fromkeys(p for a in audits.values() for p in a.compared))
    return dataclasses.replace(first, scores=joined("scores"), completions=joined("completions"),
                               report=summed("report"), control_scores=joined("control_scores"),
                               control_report=summed("control_report"), compared=compared,
                               control_completions=joined("control_completions"), kin_scores=joined("kin_scores"),
                               candidate_scores=joined("candidate_scores"))


def _completed(lm: Scorer, examples: pd.DataFrame, probe: str,
               max_new_tokens: int = MAX_NEW_TOKENS) -> pd.DataFrame:
    """`examples` (prompt, targets: `canary_examples`' rows) with the greedy completion of each
    prompt, whether it names a target (`hit`) and its CRM cue; COMPLETION_COLUMNS, `probe` given."""
    examples = examples.reset_index(drop=True)
    outputs = greedy_generate(lm, list(examples["prompt"]), max_new_tokens=max_new_tokens)
    examples["completion"] = outputs
    examples["hit"] = [substring_hit(out, list(t)) for out, t in zip(outputs, examples["targets"])]
    examples["cue"] = [crm.example_cue(prompt, list(t)) for prompt, t in zip(examples["prompt"], examples["targets"])]
    examples["probe"] = probe
    return examples[COMPLETION_COLUMNS]


def complete_baselines(lm: Scorer, canaries: pd.DataFrame, max_new_tokens: int = MAX_NEW_TOKENS) -> pd.DataFrame:
    """What the model says: the greedy continuation of each property's first canary wording that
    names the person before the value (the baseline where it does), with its CRM cue and whether
    it contains a true value."""
    examples = canary_examples(canaries)
    if examples.empty:
        return pd.DataFrame(columns=COMPLETION_COLUMNS)
    first = examples.sort_values("variant_id", kind="stable").drop_duplicates("property")
    return _completed(lm, first, CANARY_PROBE, max_new_tokens)


def entity_extractions(lm: Scorer, plan: PersonPlan, soft_prompts: SoftPromptStore | None,
                       max_new_tokens: int = MAX_NEW_TOKENS, targets: set[str] | None = None) -> pd.DataFrame:
    """What the model says when asked with the person's record ("name: ...; occupation: ...;
    employer:"), as written and through the release's stored soft prompts (trained on other
    people), in COMPLETION_COLUMNS with `probe` naming the prompt."""
    labels = dict(zip(plan.canaries["property"], plan.canaries["property_label"])) if len(plan.canaries) else {}
    facts = eme.facts_from_claims(plan.facts, plan.subject[["qid", "label"]], labels)
    if facts.empty:
        return pd.DataFrame(columns=COMPLETION_COLUMNS)
    found = eme.person_extractions(lm, facts, soft_prompts, max_new_tokens=max_new_tokens, targets=targets)
    if found.empty:
        return pd.DataFrame(columns=COMPLETION_COLUMNS)
    found["probe"] = [eme.arm_label(r) for r in found.to_dict("records")]
    found["variant_id"] = pd.NA
    return found.rename(columns={"output": "completion"})[COMPLETION_COLUMNS]


def audit_person_on_model(
    lm: Scorer,
    plan: PersonPlan,
    store: ShardStore,
    sentence_cache: SentenceNllCache | None,
    settings: dict | None = None,
    log: Callable[[str], None] = print,
    max_new_tokens: int = MAX_NEW_TOKENS,
    progress: Callable[[int, int], None] | None = None,
    soft_prompts: SoftPromptStore | None = None,
    embed: Callable[[list[str]], np.ndarray] | None = None,
    value_aliases: Mapping[str, Sequence[str]] | None = None,
    shortlist_size: int = controls.SHORTLIST,
    extract: bool = True,
) -> ModelAudit:
    """Scores through the shared engine, shards and sentence cache, then the completions: the
    canary prefixes and the entity-level record prompts (with any stored soft prompt).

    Controls are scored after the person, and only for the facts the person's scores leave
    something to test (M > 0 with WikiMem's calibration, equivalents found with `embed` and
    `value_aliases` as the answer finds them: `controls.facts_to_compare`); their sentences go
    through the same shards and sentence cache (controls of the same shape, origin and facts recur
    across requests).

    A served model (`lm.endpoint.EndpointModel`) is scored and completes through its server; a soft prompt
    needs the weights, so none is tried on it (logged). extract: ask the entity-level record
    prompts (written in English; a request in several languages asks them once)."""
    if not lm.capabilities.ranks and lm.capabilities.generates:
        return audit_person_by_generation(lm, plan, log, max_new_tokens, value_aliases, extract=extract)
    if not lm.capabilities.ranks:
        raise ValueError(f"{lm.name} is served with {lm.access} access: a request audit needs "
                         f"{', '.join(RANKING_ACCESS)} or {GENERATION} access")
    if soft_prompts is not None and not lm.capabilities.can_use_soft_prompts:
        log(f"soft prompts skipped: {lm.name} is served at an endpoint and a soft prompt needs the model's weights; "
            "the record prompts are asked as written only")
        soft_prompts = None
    scores, report = score_canaries(lm, plan.canaries, plan.candidates, store, settings, log=log,
                                    progress=progress, sentence_cache=sentence_cache)
    control_scores, control_report, compared, kin_scores, candidate_scores = None, None, (), None, None
    if plan.n_controls and len(scores):
        screen = ScoringReport()
        plan, kin_scores, candidate_scores, shortlist = _match_controls(
            lm, plan, scores, store, settings, sentence_cache, log, progress, embed, value_aliases, shortlist_size, screen)
        control_scores, control_report, compared = _score_controls(
            lm, plan, scores, store, settings, sentence_cache, log, progress, embed, value_aliases, shortlist_size,
            shortlist)
        control_report.add(screen)
    said = complete_baselines(lm, plan.canaries, max_new_tokens)
    extracted = entity_extractions(lm, plan, soft_prompts, max_new_tokens) if extract else \
        pd.DataFrame(columns=COMPLETION_COLUMNS)
    return ModelAudit(lm.name, scores, pd.concat([said, extracted], ignore_index=True), report, lm.fingerprint,
                      control_scores=control_scores, control_report=control_report, compared=compared,
                      control_completions=complete_controls(lm, plan, said, extracted, soft_prompts, max_new_tokens),
                      access=lm.access, kin_scores=kin_scores, candidate_scores=candidate_scores)


def wording_completions(lm: Scorer, canaries: pd.DataFrame, keep: Callable[[pd.DataFrame], pd.DataFrame],
                        value_aliases: Mapping[str, Sequence[str]] | None, max_new_tokens: int = MAX_NEW_TOKENS,
                        ) -> pd.DataFrame:
    """The greedy completion of every scored wording (baseline and paraphrases) of `canaries` that
    names the subject before the value, those `keep` lets through (the giveaways left out), each
    judged by value/alias match with its CRM cue. COMPLETION_COLUMNS, probe WORDING_PROBE."""
    examples = canary_examples(canaries, value_aliases) if len(canaries) else pd.DataFrame()
    examples = keep(examples) if len(examples) else examples
    if examples is None or not len(examples):
        return pd.DataFrame(columns=COMPLETION_COLUMNS)
    return _completed(lm, examples, WORDING_PROBE, max_new_tokens)


def wordings_said(completions: pd.DataFrame) -> pd.DataFrame:
    """Per (subject, property): how many wordings were asked and in how many the completion named
    the value (`said`) — the generation-access statistic, compared person against controls."""
    if not len(completions):
        return pd.DataFrame(columns=["subject_qid", "property", "wordings", "said"])
    return (completions.assign(hit=completions["hit"].astype(bool))
            .groupby(["subject_qid", "property"], sort=True)["hit"].agg(wordings="size", said="sum").reset_index())


def audit_person_by_generation(lm: Scorer, plan: PersonPlan, log: Callable[[str], None] = print,
                               max_new_tokens: int = MAX_NEW_TOKENS,
                               value_aliases: Mapping[str, Sequence[str]] | None = None,
                               extract: bool = True) -> ModelAudit:
    """A release that only generates (no probabilities): what it says of the person, against what
    it says of invented people with the same facts.

    Every scored wording that names the person before the value is completed greedily (the
    wordings that give the value away left out, for the person and the controls alike); a fact the
    person's completions name in k wordings is compared with the controls (in doubling rounds,
    stopped once settled, as the scored controls are): p = (1 + controls naming it in >= k
    wordings) / (1 + controls). The record prompts are asked as written, and the controls' where
    they named the value (`complete_controls`). Nothing is scored: the audit's scores are empty and
    its access is the release's."""
    aliases = with_form_aliases(value_aliases, plan.candidates)
    giveaways = find_giveaways(plan.canaries, aliases)
    mine = wording_completions(lm, plan.canaries, giveaways.drop, aliases, max_new_tokens)
    person = wordings_said(mine).set_index("property")
    to_compare = [p for p in person.index if person.loc[p, "said"] > 0 and p not in giveaways.untestable]
    log(f"generation access: {len(mine)} wordings completed; {len(to_compare)} of {len(person)} facts named in some "
        f"wording are compared with up to {plan.n_controls} invented people")
    theirs, open_facts, done = [], set(to_compare), 0
    schedule = controls.rounds(plan.n_controls) + controls.extension_rounds(plan.n_controls, plan.max_controls)
    for upto in schedule if plan.n_controls and to_compare else []:
        if not open_facts:
            break
        frame = plan.control_canaries
        rows = frame[frame["subject_qid"].isin(plan.control_ids[done:upto]) & frame["property"].isin(open_facts)]
        theirs.append(wording_completions(lm, rows, giveaways.drop, aliases, max_new_tokens))
        counts = wordings_said(pd.concat(theirs, ignore_index=True))
        for prop in list(open_facts):
            as_extreme = int((counts.loc[counts["property"] == prop, "said"] >= person.loc[prop, "said"]).sum())
            if control_scoring.decided(as_extreme, upto, plan.n_controls, plan.control_alpha):
                open_facts.discard(prop)
        done = upto
    extracted = entity_extractions(lm, plan, None, max_new_tokens) if extract else pd.DataFrame(columns=COMPLETION_COLUMNS)
    control_completions = pd.concat(
        [*(t.assign(probe=CONTROL_PROBE_PREFIX + WORDING_PROBE) for t in theirs),
         complete_controls(lm, plan, mine.iloc[:0], extracted, None, max_new_tokens)], ignore_index=True)
    return ModelAudit(lm.name, pd.DataFrame(), pd.concat([mine, extracted], ignore_index=True), ScoringReport(),
                      lm.fingerprint, compared=tuple(to_compare), control_completions=control_completions,
                      access=lm.access)


def complete_controls(lm: Scorer, plan: PersonPlan, said: pd.DataFrame, extracted: pd.DataFrame,
                      soft_prompts: SoftPromptStore | None = None, max_new_tokens: int = MAX_NEW_TOKENS) -> pd.DataFrame:
    """The invented people's completions of every prompt whose completion named a true value for
    the person (the canary wording, the record prompt as written or through a soft prompt): such a
    completion is evidence only if the model does not name the value as readily for anyone with
    these facts (a German-sounding employer makes "Germany" likely). The planned controls only
    (`n_controls`; the further ones serve ranked facts without margin). COMPLETION_COLUMNS with the
    person's probe behind CONTROL_PROBE_PREFIX; empty without controls or without a hit."""
    if not plan.n_controls:
        return pd.DataFrame(columns=COMPLETION_COLUMNS)
    parts = []
    # each fact's planned controls (matched to the name prior where compared), not the further ones
    frame = plan.control_canaries[plan.control_canaries["control_rank"] < plan.n_controls]
    hits = said[said["hit"].astype(bool)] if len(said) else said
    if len(hits):
        wanted = set(zip(hits["property"], hits["variant_id"].astype(int)))
        examples = canary_examples(frame[[(p, int(v)) in wanted for p, v in zip(frame["property"], frame["variant_id"])]])
        if len(examples):
            parts.append(_completed(lm, examples, CONTROL_PROBE_PREFIX + CANARY_PROBE, max_new_tokens))
    hits = extracted[extracted["hit"].astype(bool)] if len(extracted) else extracted
    if len(hits):
        names = dict(zip(frame["subject_qid"], frame["subject"]))
        wanted = set(zip(hits["property"], hits["probe"]))
        asked = frame[frame["property"].isin(hits["property"])]
        for qid, props in asked.groupby("subject_qid", sort=False)["property"]:  # each fact's own planned controls
            invented = PersonPlan(plan.subject.assign(qid=qid, label=names[qid]), plan.facts.assign(qid=qid),
                                  plan.canaries, plan.candidates, plan.coverage)
            theirs = entity_extractions(lm, invented, soft_prompts, max_new_tokens, targets=set(props))
            theirs = theirs[[k in wanted for k in zip(theirs["property"], theirs["probe"])]]
            parts.append(theirs.assign(probe=CONTROL_PROBE_PREFIX + theirs["probe"].astype(str)))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COMPLETION_COLUMNS)


def _score_controls(lm, plan: PersonPlan, scores: pd.DataFrame, store: ShardStore, settings, sentence_cache, log,
                    progress, embed, value_aliases, shortlist_size: int, shortlist=None,
                    ) -> tuple[pd.DataFrame, ScoringReport, tuple[str, ...]]:
    """The controls of the facts the person's scores leave something to test (M > 0), in rounds
    and on shortlists (`control_scoring.score_controls`, exact); the giveaway wordings are left
    out as the answer leaves them out. Returns the scores, their cost and the properties compared."""
    person = plan.subject["qid"].iloc[0]
    giveaways = find_giveaways(plan.canaries, with_form_aliases(value_aliases, plan.candidates))
    done = control_scoring.score_controls(
        lm, scores, plan.control_canaries, plan.control_candidates, store, settings, sentence_cache,
        giveaways={person: giveaways}, n_controls=plan.n_controls, alpha=plan.control_alpha, embed=embed,
        value_aliases=value_aliases, shortlist_size=shortlist_size, log=log, progress=progress,
        max_controls=plan.max_controls, shortlist=shortlist)
    return done.scores, done.report, tuple(p for _, p in done.compared)


def _match_controls(lm, plan: PersonPlan, scores: pd.DataFrame, store: ShardStore, settings, sentence_cache, log,
                    progress, embed, value_aliases, shortlist_size: int, report: ScoringReport,
                    ) -> tuple[PersonPlan, pd.DataFrame | None, pd.DataFrame | None, dict | None]:
    """The controls of each fact the person's scores leave something to test, chosen among the
    plan's candidate names to share what the person's name tells the model (`controls.matched_controls`).

    The kin names (`controls.kin_names`) and every candidate are read on the name-prior screen
    (`controls.screen`: the first wordings, on the truth with its forms and the SCREEN_VALUES wrong
    values likeliest for the generic subject "this person" — the same for everyone, so shared in the
    sentence cache across requests): the kin give the person's name prior (`controls.name_prior`),
    each candidate its own. Returns the plan with each compared fact's controls ranked in the matched
    order (the other candidates left out of it), the kin's and the candidates' screen scores (what the
    answer reads the name prior from, `controls.name_priors`), and the shortlist the controls are then
    scored on first (the truth and the `shortlist_size` likeliest values for the generic subject).
    Without kin names or a fact to compare: the plan as drawn and Nones."""
    kin = plan.kin_canaries
    person = plan.subject["qid"].iloc[0]
    giveaways = find_giveaways(plan.canaries, with_form_aliases(value_aliases, plan.candidates))
    levels = control_scoring.compared_people(scores, {person: giveaways}, embed, value_aliases)
    compared = controls.facts_to_compare(levels[~levels["property"].isin(giveaways.untestable)])
    if kin is None or not len(kin) or not compared:
        return plan, None, None, None
    mine = scores[scores["property"].isin(compared)]
    shortlist, screened = _generic_shortlist(mine, shortlist_size), _generic_shortlist(mine, controls.SCREEN_VALUES)

    def wordings(canaries: pd.DataFrame) -> pd.DataFrame:
        return controls.screen(canaries[canaries["property"].isin(compared)])

    def values(candidates: pd.DataFrame) -> pd.DataFrame:
        return candidates[[v in screened.get(p, ()) for p, v in zip(candidates["property"], candidates["value"])]]

    log(f"name prior: {kin['subject_qid'].nunique()} names sharing the person's first name or surname, and "
        f"{plan.control_canaries['subject_qid'].nunique()} candidate controls, on {len(compared)} compared facts")
    read = {}
    for role, canaries, candidates in (("kin", kin, plan.kin_candidates),
                                       ("candidates", plan.control_canaries, plan.control_candidates)):
        read[role], cost = score_canaries(lm, wordings(canaries), values(candidates), store, settings, log=log,
                                          progress=progress, sentence_cache=sentence_cache)
        report.add(cost)
    kin_lifts, pool_lifts = controls.name_lifts(read["kin"], screened), controls.name_lifts(read["candidates"], screened)
    ranks: dict[tuple[str, str], int] = {}
    for prop in compared:
        theirs = pool_lifts[pool_lifts["property"] == prop].set_index("subject_qid")["lift"]
        prior = controls.name_prior(kin_lifts[kin_lifts["property"] == prop], float(theirs.median()))
        order = controls.matched_controls(theirs.to_dict(), prior, plan.max_controls, plan.n_controls)
        ranks.update({(qid, prop): rank for rank, qid in enumerate(order)})
        log(f"name prior, {prop}: {prior:.2f} nats; the {len(theirs)} candidates' median {theirs.median():.2f}, the "
            f"{plan.n_controls} planned controls' {theirs.loc[order[:plan.n_controls]].median():.2f}")
    frame, candidates = plan.control_canaries, plan.control_candidates
    keys = list(zip(frame["subject_qid"], frame["property"]))
    keep = [p not in compared or k in ranks for k, p in zip(keys, frame["property"])]
    ranked = [ranks.get(k, r) for k, r, kept in zip(keys, frame["control_rank"], keep) if kept]
    candidate_keys = list(zip(candidates["subject_qid"], candidates["property"]))
    plan = dataclasses.replace(
        plan, control_canaries=frame[keep].assign(control_rank=ranked).reset_index(drop=True),
        control_candidates=candidates[[p not in compared or k in ranks for k, p in zip(candidate_keys, candidates["property"])]
                                      ].reset_index(drop=True))
    return plan, read["kin"], read["candidates"], {(person, prop): set(shortlist[prop]) for prop in compared}


def _generic_shortlist(scores: pd.DataFrame, k: int) -> dict[str, set]:
    """Per property of `scores` (the person's): the true values with their forms and the k wrong
    values likeliest for the generic subject (summed NLL(h0, v) over the neutral wordings, lowest
    first) — the same for every name with these facts."""
    neutral = scores[~scores["kind"].isin(CONTEXTUALIZED_KINDS)]
    out = {}
    for prop, block in neutral.groupby("property"):
        truth = block["is_true"].to_numpy(dtype=bool) | is_form(block["value"])
        generic = block[~truth].groupby("value")["nll_h0"].sum().sort_values(kind="stable")
        out[prop] = set(block.loc[truth, "value"]) | set(generic.index[:k])
    return out


# --------------------------------------------------------------------------- every release

@dataclass
class ReleaseAudits:
    """The person on every registered release: each audited release's rows carry its key (`model`)."""

    scores: pd.DataFrame  # the person's scores, every audited release (empty frame: none audited)
    completions: pd.DataFrame  # the completions likewise (the controls' ones with probe CONTROL_PROBE)
    control_scores: pd.DataFrame  # the invented controls' scores (empty without controls)
    audits: pd.DataFrame  # RELEASE_AUDIT_COLUMNS, one row per release in the order given


def _shortlisted_boolean(control_scores: pd.DataFrame) -> pd.DataFrame:
    """Only compared controls on a release with weights can have been scored on a shortlist of
    values: the kin names and candidates (scored on every value) and other releases' rows come
    without the column and are `shortlisted` False, so the stored column stays boolean."""
    if "shortlisted" in control_scores:
        control_scores["shortlisted"] = control_scores["shortlisted"].fillna(False).astype(bool)
    return control_scores


def _listed(value) -> list[str]:
    """A cell as a list of texts: one text, a list/array of them, or nothing (None, NaN)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple, set, np.ndarray, pd.Series)):
        return [str(v) for v in value if isinstance(v, str) or not pd.isna(v)]
    return [] if value is None or pd.isna(value) else [str(value)]


def person_scrubber(plan: PersonPlan) -> Scrubber:
    """What must not reach a log or a stored error text of this request (issue 60): the person's
    name and aliases (whole and part by part), their key, and their facts' values and labels (the
    true candidates' forms included), for `security.scrub`."""
    names, secrets = [], []
    for row in plan.subject.to_dict("records"):
        names += _listed(row.get("label")) + _listed(row.get("aliases"))
        secrets += _listed(row.get("qid"))
    truths = plan.candidates[plan.candidates["is_true"].astype(bool)] if "is_true" in plan.candidates else plan.candidates[:0]
    for frame in (plan.facts, truths):
        for column in ("value", "value_label"):
            if column in frame:
                secrets += [str(v) for v in frame[column].dropna()]
    return Scrubber(secrets, names=names)


def _not_audited(key: str, error: Exception, seconds: float) -> dict:
    return {"model": key, "audited": False, "error": f"{type(error).__name__}: {error}",
            "fingerprint": None, "access": None, "sentences_computed": 0, "shards_reused": 0, "facts_compared": 0,
            "control_sentences_computed": 0, "precision": None, "sentences_rescored": 0, "share_rescored": 0.0,
            "continuations": 0, "continuations_censored": 0, "seconds": seconds}


def _audited(key: str, audit: ModelAudit, seconds: float) -> dict:
    return {"model": key, "audited": True, "error": None, "fingerprint": audit.fingerprint, "access": audit.access,
            "sentences_computed": audit.report.sentences_computed, "shards_reused": audit.report.shards_reused,
            "facts_compared": len(audit.compared), "control_sentences_computed": audit.control_sentences_computed,
            # the person's scores: the precision scored in, and the sentences brought back to float32
            "precision": audit.report.precision or None, "sentences_rescored": audit.report.sentences_rescored,
            "share_rescored": audit.report.share_rescored,
            # top-logprobs access: the person's continuations read from the server's top k, and how many were censored
            "continuations": audit.report.continuations, "continuations_censored": audit.report.continuations_censored,
            "seconds": seconds}


def audit_person_on_releases(
    releases: Sequence,
    load: Callable[[object], Scorer],
    plan: PersonPlan,
    shards_for: Callable[[str], str | Path],
    sentence_cache: Callable[[Scorer], SentenceNllCache | None],
    settings: dict | None = None,
    label: str = "request",
    log: Callable[[str], None] = print,
    warn: Callable[[str], None] | None = None,
    max_new_tokens: int = MAX_NEW_TOKENS,
    value_aliases: pd.DataFrame | None = None,
) -> ReleaseAudits:
    """`audit_person_on_model` on every release (objects with a `key`, e.g. registry entries),
    one at a time: `load(release)` gives its model (loaded here, or served: an EndpointModel; any Scorer),
    `shards_for(key)` its shard folder and
    `sentence_cache(lm)` its sentence cache. A release that fails to load or score is logged
    through `warn` and recorded as not audited (`error` says why); the others go on. Each model
    is let go before the next is loaded. Messages start with `label` (the request id), never the
    person's name.

    With controls (plan.n_controls), which facts need them is read as the answer reads it: the
    sentence encoder and the `value_aliases` table (equivalent values)."""
    warn = warn or log
    scores, completions, audits, control_scores = [], [], [], []
    embed, aliases = (load_encoder(), aliases_by_value(value_aliases)) if plan.n_controls else (None, None)
    for release in releases:
        key = release.key
        started, lm = time.monotonic(), None
        try:
            lm = load(release)
            cache = sentence_cache(lm)
            by_language = {}
            for code in plan.languages:  # one model in memory, every language's canaries
                by_language[code] = audit_person_on_model(
                    lm, plan.in_language(code), ShardStore(shards_for(key)), cache,
                    None if settings is None else dict(settings),
                    log=lambda message, key=key, code=code: log(f"{label} on {key} ({code}): {message}"),
                    max_new_tokens=max_new_tokens, progress=throttled(log, f"{label} on {key} ({code})"),
                    embed=embed, value_aliases=aliases, extract=code == plan.languages[0],
                )
            audit = in_languages(by_language)
        except Exception as error:  # noqa: BLE001 - one release's failure must not sink the others
            # a server's error body may echo the prompt: the person's name and facts leave neither in the log nor stored
            reason = person_scrubber(plan).scrub(f"{type(error).__name__}: {error}")
            warn(f"{label}: {key} could not be audited: {reason}")
            audits.append({**_not_audited(key, error, time.monotonic() - started), "error": reason})
            continue
        finally:
            del lm  # one model in memory at a time
            gc.collect()
        scores.append(audit.scores.assign(model=key))
        completions.append(pd.concat([audit.completions, audit.control_completions], ignore_index=True).assign(model=key)
                           if audit.control_completions is not None and len(audit.control_completions)
                           else audit.completions.assign(model=key))
        if audit.control_scores is not None and len(audit.control_scores):
            roles = [(audit.control_scores, controls.CONTROL), (audit.kin_scores, controls.KIN),
                     (audit.candidate_scores, controls.CANDIDATE)]
            control_scores.append(pd.concat([frame.assign(**{controls.CONTROL_ROLE: role}) for frame, role in roles
                                             if frame is not None], ignore_index=True).assign(model=key))
        audits.append(_audited(key, audit, time.monotonic() - started))
        log(f"{label} on {key}: {audit.report.sentences_computed:,} sentences through the model "
            f"({audit.report.shards_reused} shards reused); {len(audit.compared)} facts compared with controls, "
            f"{audit.control_sentences_computed:,} sentences for them; {time.monotonic() - started:.1f}s")
    concat = lambda frames: pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()  # noqa: E731
    return ReleaseAudits(concat(scores), concat(completions), _shortlisted_boolean(concat(control_scores)),
                         pd.DataFrame(audits, columns=RELEASE_AUDIT_COLUMNS))
