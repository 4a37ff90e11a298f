"""The answer to a data-subject request: per registered release and property, a verdict in plain
words with its evidence (M, z*, rank, what the model says, cue flags), the forget set for an
erasure request, the controller and what the registry says of each release, and the lineage —
one JSON document, from which `letter` renders the letter, its PDF and its technical annex.

Written under ``<storage>/requests/<request id>/`` (`answer_files`, the instance directory): the
person's data never leaves it, and nothing here logs it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from wikimem_platform.registry import RELEASE_FIELDS
from wikimem_platform.crm.giveaways import find_giveaways
from wikimem_platform.lm.endpoint import GENERATION, TOP_LOGPROBS, WEIGHTS
from wikimem_platform.lm.generation import substring_hit
from wikimem_platform.canaries.languages import ENGLISH, language_name
from wikimem_platform.canaries.languages.localize import LABEL_FALLBACK
from wikimem_platform.subject_requests.audit import (
    AUDITED,
    CANARY_PROBE,
    CONTROL_PROBE_PREFIX,
    ModelAudit,
    NOT_PERSONAL,
    ON_DEMAND,
    PersonPlan,
    WORDING_PROBE,
    wordings_said,
)
from wikimem_platform.subject_requests.answer_schema import check_answer
from wikimem_platform.subject_requests.inquiry import fact_cues
from wikimem_platform.storage import json_clean, json_scalar
from wikimem_platform.subject_requests.intake import RequestKind, SubjectRequest
from wikimem_platform.subject_requests.phrasing import Addressee, addressee
from wikimem_platform.unlearning.verify import privleak_auroc, retain_utility, unlearning_manifest
from wikimem_platform.unlearning.forget_sets import DEFAULT_FORGET_CRITERION, best_true_values, FORGET_COLUMNS, forget_set
from wikimem_platform.vocabulary import AT_THRESHOLD, DEFAULT_CUE_TAU, LANGUAGE, M_THRESHOLD, STRICT
from wikimem_platform.wikimem import controls
from wikimem_platform.reference.value_forms import with_form_aliases, without_forms
from wikimem_platform.wikimem.memorization import evaluate_wikimem
from wikimem_platform.security.urls import redact_url

MEMORIZED, WEAK, NOT_MEMORIZED = "memorized", "weakly associated", "not memorized"
# A release served with generation access only: the model *says* the value (its completions name
# it, more readily than invented people's with the same facts) — no probabilities, so no M.
SAID = "says it"
VERDICT_ORDER = (MEMORIZED, WEAK, SAID, NOT_MEMORIZED)
ANSWER_COLUMNS = [
    "model", "property", "property_label", "values", "verdict",
    # what produced the verdict: "weights" (a model loaded here) or a served endpoint's access level
    "access", "M", "n_memorized", "n_variants", "z_star",
    "truth_rank", "n_candidates",
    # wordings left out because their text shows or implies the value (`crm.giveaways`); untestable:
    # every scored wording does (the name shows it), so the ranking cannot be evidence
    "wordings_left_out", "untestable",
    "completion", "completion_hit", "cue", "cue_flag",
    # the invented people's completions of the same wording, where the person's named the value
    # (p-value with the +1 correction; evidence: it names the value and p <= alpha, or no controls)
    "completion_controls", "completion_control_hits", "completion_p_value", "completion_evidence",
    "extraction", "emitted",
    "control_names",  # the invented people the fact was compared with, in the order scored (None: not compared)
    # against invented people with the same facts (None when the fact was not compared: no
    # controls asked for, or M = 0); n_controls < n_controls_planned: stopped once settled
    "n_controls", "n_controls_planned", "controls_as_extreme", "p_value", "control_alpha", "controls_M_mean",
    "controls_M_max",
    # how uncertain p is: a Clopper-Pearson 95 % interval of the chance an invented person does as well
    "p_ci_low", "p_ci_high",
    # memorized is said of the facts read together (`controls.family_adjusted`, Benjamini-Hochberg over
    # the `family` facts compared): p_family, and family_reading "holds" (memorized with others compared)
    # / "fails" (M at the threshold, p <= alpha for the fact alone, p_family above: weakly associated) / None
    "p_family", "family", "family_reading",
    # what the name alone tells the model (`controls.name_priors`): the person's name prior (mean lift of
    # names sharing their first name or surname), the share of controls below it, its p among them, and
    # whether that prior can be the name's bearers' rather than the person's own memory (name_prior_backed),
    # and whether the name alone explains the result (then never memorized or weakly associated)
    "name_prior", "n_kin", "name_prior_share_below", "name_prior_p", "name_prior_backed", "name_suggests",
    # generation access (no M): wordings asked, and in how many the completion named the value;
    # the controls' mean share of wordings naming it (their M columns stay empty)
    "wordings_asked", "wordings_said", "controls_said_share",
]
# A fact's counts and what each counts out of: both given or both absent (None), never NaN.
COUNTS = {"n_memorized": "n_variants", "completion_control_hits": "completion_controls",
          "controls_as_extreme": "n_controls", "wordings_said": "wordings_asked"}
# "family" and "n_kin" too: a request in several languages concatenates tables where they mix with None (floats)
INTEGER_FIELDS = (*COUNTS, *COUNTS.values(), "truth_rank", "n_candidates", "n_controls_planned", "family", "n_kin")
# What each endpoint access level let us read, in the letter's words.
ACCESS_MEANS = {"prompt-logprobs": "the server's probabilities of our sentences and its completions",
                "top-logprobs": "the server's most likely next words with their probabilities (its top k), read word "
                                "by word after the person's name, and its completions",
                "generation": "the server's completions only"}
NO_EVIDENCE_SENTENCE = "no evidence beyond what the model would say of anyone with these facts"


def verdict(m: float, threshold: float = M_THRESHOLD) -> str:
    """memorized at threshold (M >= threshold) / weakly associated (some wording) / not memorized."""
    if m >= threshold:
        return MEMORIZED
    return WEAK if m > 0 else NOT_MEMORIZED


@dataclass
class ModelOutcome:
    """A registered release and what its audit for this person gave: results or an error."""

    key: str
    entry: dict  # registry fields (source, variant, family, revision, display_name, purposes, ...)
    audit: ModelAudit | None = None
    error: str | None = None
    scoring: dict = field(default_factory=dict)  # SCORING_FIELDS of the person's scores


# What the answer says of each release, from the registry (None where the release is gone).
ENTRY_FIELDS = ("source", "variant", "family", "revision", *RELEASE_FIELDS)
SCORING_FIELDS = ("precision", "sentences_rescored", "share_rescored", "continuations", "continuations_censored")


def release_outcomes(
    audits: pd.DataFrame,
    scores: pd.DataFrame,
    completions: pd.DataFrame,
    control_scores: pd.DataFrame,
    entries: Mapping[str, object],
) -> list[ModelOutcome]:
    """Each release's outcome back from what `audit.audit_person_on_releases` returned (its
    frames, as stored: every row of scores, completions and control scores names its release in
    `model`), in the order of `audits`; `entries` (registry entries by key) give the release's
    fields."""
    outcomes = []
    for row in audits.to_dict("records"):
        entry = entries.get(row["model"])
        fields = {name: getattr(entry, name, None) for name in ENTRY_FIELDS} | {"source": redact_url(getattr(entry, "source", None)) if entry is not None else None}
        if not row["audited"]:
            outcomes.append(ModelOutcome(row["model"], fields, error=row["error"]))
            continue
        mine = lambda frame: frame[frame["model"] == row["model"]].drop(columns="model").reset_index(drop=True)  # noqa: E731
        said = mine(completions)
        of_control = said["probe"].astype(str).str.startswith(CONTROL_PROBE_PREFIX) if "probe" in said \
            else pd.Series(False, index=said.index)
        theirs, kin, candidates = _controls_and_kin(mine(control_scores) if len(control_scores) else None)
        audit = ModelAudit(row["model"], mine(scores), said[~of_control].reset_index(drop=True), None, row["fingerprint"],
                           control_scores=theirs, control_completions=said[of_control].reset_index(drop=True),
                           access=_access(row.get("access")), kin_scores=kin, candidate_scores=candidates)
        scoring_facts = {name: row.get(name) for name in SCORING_FIELDS}
        outcomes.append(ModelOutcome(row["model"], fields, audit=audit, scoring=scoring_facts))
    return outcomes


def _controls_and_kin(stored: pd.DataFrame | None) -> tuple[pd.DataFrame | None, pd.DataFrame | None, pd.DataFrame | None]:
    """A release's stored control scores split by `control_role`: (the controls', the kin names',
    the candidate controls' screen scores); stored before the name prior: all controls."""
    if stored is None or controls.CONTROL_ROLE not in stored:
        return stored, None, None
    role = stored[controls.CONTROL_ROLE]
    frame = stored.drop(columns=controls.CONTROL_ROLE)
    return tuple(frame[role == r].reset_index(drop=True) for r in (controls.CONTROL, controls.KIN, controls.CANDIDATE))


def _access(value) -> str:
    """A stored audit row's access; audits stored before it was recorded were all of weights
    (endpoint releases were not audited for requests then)."""
    return value if isinstance(value, str) and value else WEIGHTS


def models_lineage(outcomes: Sequence[ModelOutcome], entries: Mapping[str, object]) -> list[dict]:
    """The lineage's releases: key, registry fields, the model's fingerprint (None where not
    audited) and when the release was registered (None where it is no longer registered)."""
    return [{"key": o.key, **o.entry, "fingerprint": o.audit.fingerprint if o.audit else None,
             "registered_at": entries[o.key].registered_at.isoformat(timespec="seconds") if o.key in entries else None}
            for o in outcomes]


def retain_by_release(entries: Mapping[str, object]) -> dict[str, list]:
    """The retain facts of every release that is an unlearned revision (a model directory with an
    unlearning manifest): what the erasure verification measures utility on."""
    return {key: manifest["retain_facts"] for key, entry in entries.items()
            if (manifest := unlearning_manifest(entry.source if entry.source_kind == "hf-dir" else None))}


def model_verdicts(
    audit: ModelAudit,
    plan: PersonPlan,
    property_labels: Mapping[str, str],
    embed: Callable[[list[str]], np.ndarray] | None = None,
    alpha: float = 1.0,
    m_threshold: float = M_THRESHOLD,
    cue_tau: float = DEFAULT_CUE_TAU,
    value_aliases: Mapping[str, Sequence[str]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per property: ANSWER_COLUMNS; WikiMem pairs) for one model's scores; a wrong value
    labelled as one of a true value's Wikidata aliases counts as that value (`value_aliases`).

    With controls (`audit.control_scores`), the verdict is the controls' (`controls.verdict`):
    memorized or weakly associated only where the person beats the invented people with the same
    facts at p <= the plan's control_alpha; without them, M alone decides (`verdict`)."""
    control_alpha = plan.control_alpha
    if audit.access == GENERATION:
        return generation_verdicts(audit, plan, property_labels, value_aliases), pd.DataFrame()
    if audit.scores.empty:
        return pd.DataFrame(columns=ANSWER_COLUMNS), pd.DataFrame()
    giveaways = find_giveaways(plan.canaries, with_form_aliases(value_aliases, plan.candidates), property_labels=property_labels)
    scores = giveaways.drop(audit.scores)
    result = evaluate_wikimem(scores, alpha=alpha, embed=embed, value_aliases=value_aliases,
                              m_threshold=m_threshold)
    pairs = result.pairs
    against, priors = pd.DataFrame(), pd.DataFrame(columns=controls.NAME_PRIOR_COLUMNS).set_index("property")
    if audit.control_scores is not None and len(audit.control_scores):
        person = controls.with_compared(pairs, controls.compared(scores, embed, value_aliases).pairs)
        against = controls.compare_with_controls(
            person, controls.compared(giveaways.drop(audit.control_scores), embed, value_aliases).pairs,
            alpha=control_alpha, m_threshold=m_threshold, family_wise=True).set_index("property")
        scored = audit.control_scores.groupby("property")["subject_qid"].agg(lambda q: list(dict.fromkeys(q))).to_dict()
        kin = plan.kin_canaries
        backed = kin.groupby("property")[controls.NAME_PRIOR_BACKED].first().astype(bool).to_dict() \
            if kin is not None and controls.NAME_PRIOR_BACKED in kin else None  # a plan stored before: all backed
        priors = controls.name_priors(scores, audit.kin_scores, audit.candidate_scores, scored,
                                      alpha=control_alpha, backed=backed).set_index("property")
    # possible values: a true value's other forms ("USA") are that value, not more values
    n_candidates = without_forms(audit.scores).groupby("property")["value"].nunique()
    truths = plan.candidates[plan.candidates["is_true"]].groupby("property")["value_label"].agg(list)
    probes = audit.completions["probe"] if "probe" in audit.completions else pd.Series(CANARY_PROBE, index=audit.completions.index)
    canary = audit.completions[probes == CANARY_PROBE]
    completions = canary.set_index("property") if len(canary) else pd.DataFrame()
    # entity-level extractions that named a true value, the record prompt before soft prompts
    extracted_all = audit.completions[(probes != CANARY_PROBE) & audit.completions["hit"].astype(bool)] \
        .set_index("property") if len(audit.completions) else pd.DataFrame()
    others_said = audit.control_completions if audit.control_completions is not None else pd.DataFrame()

    named_by_controls = functools.partial(_named_by_controls, others_said)
    extraction = functools.partial(_extraction, extracted_all, others_said, control_alpha)

    rows = []
    for pair in pairs.to_dict("records"):
        prop = pair["property"]
        said = completions.loc[prop] if prop in completions.index else None
        cue = float(said["cue"]) if said is not None else None
        vs = against.loc[prop] if prop in against.index and against.loc[prop, "n_controls"] else None
        prior = priors.loc[prop] if vs is not None and prop in priors.index else None
        name_suggests = prior is not None and bool(prior["name_suggests"])
        if prop in giveaways.untestable:
            level = NOT_MEMORIZED  # the prompt itself shows the value: beating the controls proves nothing
        elif vs is None:
            level = verdict(pair["M"], m_threshold)
        elif name_suggests:
            level = NOT_MEMORIZED  # the name alone puts the value where few controls' names do: no evidence
        else:
            level = {controls.MEMORIZED: MEMORIZED, controls.WEAK: WEAK}.get(vs["verdict"], NOT_MEMORIZED)
        low, high = controls.p_interval(int(vs["controls_as_extreme"]), int(vs["n_controls"])) if vs is not None \
            else (None, None)
        hit = said is not None and bool(said["hit"])
        # a completion naming the value is evidence only if invented people's completions do not
        # name it as readily (at the plan's level; without controls, as before)
        vs_said = named_by_controls(prop, CANARY_PROBE) if hit else None
        beats_controls = hit and (vs_said is None or vs_said[2] <= control_alpha)
        extracted = extraction(prop)
        rows.append({
            "model": audit.model, "property": prop, "property_label": property_labels.get(prop, prop),
            "values": list(truths.get(prop, [])), "verdict": level, "access": audit.access, "M": float(pair["M"]),
            "n_memorized": int(pair["n_memorized"]), "n_variants": int(pair["n_variants"]),
            "z_star": json_scalar(pair.get("z_star")), "truth_rank": _rank_value(pair.get("summed_truth_rank")),
            "n_candidates": int(n_candidates.get(prop, 0)),
            "wordings_left_out": giveaways.removed(prop), "untestable": prop in giveaways.untestable,
            "completion": None if said is None else {"prompt": said["prompt"], "output": said["completion"]},
            "completion_hit": None if said is None else bool(said["hit"]),
            "cue": cue, "cue_flag": None if cue is None else bool(cue >= cue_tau),
            "completion_controls": vs_said and vs_said[0], "completion_control_hits": vs_said and vs_said[1],
            "completion_p_value": vs_said and vs_said[2], "completion_evidence": None if said is None else beats_controls,
            "extraction": extracted,
            "emitted": beats_controls or bool(extracted and extracted["evidence"]),
            "control_names": None if vs is None else _control_names(plan, audit.control_scores, prop),
            "n_controls": None if vs is None else int(vs["n_controls"]),
            "n_controls_planned": None if vs is None else plan.n_controls,
            "controls_as_extreme": None if vs is None else int(vs["controls_as_extreme"]),
            "p_value": None if vs is None else float(vs["p_value"]),
            "control_alpha": None if vs is None else float(control_alpha),
            "controls_M_mean": None if vs is None else float(vs["controls_M_mean"]),
            "controls_M_max": None if vs is None else float(vs["controls_M_max"]),
            "p_ci_low": low, "p_ci_high": high,
            "p_family": None if vs is None or pd.isna(vs["p_family"]) else float(vs["p_family"]),
            "family": None if vs is None else int(vs["family"]),
            "family_reading": None if vs is None else _family_reading(vs, level, m_threshold, control_alpha),
            "name_prior": None if prior is None else float(prior["name_prior"]),
            "n_kin": None if prior is None else int(prior["n_kin"]),
            "name_prior_share_below": None if prior is None else float(prior["name_prior_share_below"]),
            "name_prior_p": None if prior is None else float(prior["name_prior_p"]),
            "name_prior_backed": None if prior is None else bool(prior["name_prior_backed"]),
            "name_suggests": None if prior is None else name_suggests,
        })
    return pd.DataFrame(rows, columns=ANSWER_COLUMNS), pairs.assign(subject=plan.subject["label"].iloc[0])


def fact_record(row: Mapping) -> dict:
    """One fact of the answer document from its table row (`model_verdicts`): JSON values only
    (a column that mixes counts and None holds NaN for the None, and NaN is truthy), counts as
    integers, each with its denominator (`COUNTS`). Raises ValueError naming the field where a
    count comes without what it counts out of."""
    fact = json_clean(dict(row))
    for name in INTEGER_FIELDS:
        if fact.get(name) is not None:
            fact[name] = int(fact[name])
    for count, total in COUNTS.items():
        if (fact.get(count) is None) != (fact.get(total) is None):
            raise ValueError(f"answer: fact {fact.get('property')}: {count} is {fact.get(count)!r} but {total} is "
                             f"{fact.get(total)!r}; a count and what it counts out of are given together or not at all")
    return fact


def forget_controls(table: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The request's per-fact comparison with the controls (`model_verdicts` rows) in the shape
    `forget_sets.forget_set` reads: subject_qid, property, verdict in the controls' words, p_value,
    n_controls, alpha. The verdict is the answer's (an untestable fact that beats the controls is
    still "no evidence": the prompt showed the value); facts not compared keep n_controls None."""
    if not len(table) or not len(pairs):
        return pd.DataFrame(columns=["subject_qid", "property", "verdict", "p_value", "n_controls", "alpha"])
    words = {MEMORIZED: controls.MEMORIZED, WEAK: controls.WEAK}
    return pd.DataFrame({
        "subject_qid": pairs["subject_qid"].iloc[0], "property": table["property"].to_numpy(),
        "verdict": [words.get(v, controls.NO_EVIDENCE) for v in table["verdict"]],
        "p_value": table["p_value"].to_numpy(dtype=float), "n_controls": table["n_controls"].to_numpy(dtype=float),
        "alpha": table["control_alpha"].to_numpy(dtype=float)})


def said_forget_set(model_key: str, table: pd.DataFrame, plan: PersonPlan) -> pd.DataFrame:
    """The forget set (FORGET_COLUMNS) of a release audited through its completions only
    (`generation_verdicts` rows): every fact its completions named in at least one wording, as
    the M > 0 facts of a ranked audit are — erasure errs on the side of inclusion — with the
    controls' verdict where they were compared ("says it" beats them). Nothing is ranked, so M,
    z* and the memorization flags stay empty; the value is the true value the shown completion
    names (the first true value where it names none of them by its label). In a request in
    several languages each entry keeps its `language`, and its value is the label in it."""
    said = table[pd.to_numeric(table["wordings_said"], errors="coerce").fillna(0) > 0] if len(table) else table
    truths = plan.candidates[plan.candidates["is_true"]]
    subject = plan.subject.iloc[0]
    rows = []
    for fact in said.to_dict("records"):
        compared = fact["n_controls"] is not None and not pd.isna(fact["n_controls"])
        own = truths[truths["property"] == fact["property"]]
        if LANGUAGE in fact and LANGUAGE in own:
            own = own[own[LANGUAGE] == fact[LANGUAGE]]
        output = (fact.get("completion") or {}).get("output") or ""
        named = own[[substring_hit(output, [label]) for label in own["value_label"]]] if len(own) else own
        value = (named if len(named) else own).head(1)
        rows.append({
            "model": model_key, "subject_qid": subject["qid"], "subject_label": subject["label"],
            "property": fact["property"], "property_label": fact["property_label"],
            "value": value["value"].iloc[0] if len(value) else None,
            "value_label": value["value_label"].iloc[0] if len(value) else None,
            "M": np.nan, "z_star": np.nan, "cohort": None, STRICT: None, AT_THRESHOLD: None,
            "cue": fact["cue"], "cue_flag": fact["cue_flag"],
            "controls_verdict": (SAID if fact["verdict"] == SAID else controls.NO_EVIDENCE) if compared else None,
            "p_controls": fact["p_value"] if compared else np.nan,
            "n_controls": fact["n_controls"] if compared else None,
            "controls_alpha": fact["control_alpha"] if compared else np.nan,
            "beats_controls": (fact["verdict"] == SAID) if compared else None,
            **({LANGUAGE: fact[LANGUAGE]} if LANGUAGE in fact else {}),
        })
    return pd.DataFrame(rows, columns=[*FORGET_COLUMNS, *([LANGUAGE] if LANGUAGE in said else [])])


def _named_by_controls(others_said: pd.DataFrame, prop: str, probe: str) -> tuple[int, int, float] | None:
    """(controls, how many of their completions named the value, p) for one of the person's
    prompts that named it; None without the controls' completions."""
    if not len(others_said):
        return None
    theirs = others_said[(others_said["property"] == prop) & (others_said["probe"] == CONTROL_PROBE_PREFIX + probe)]
    if not len(theirs):
        return None
    k = int(theirs["hit"].astype(bool).sum())
    return len(theirs), k, controls.p_value(k, len(theirs))


def _extraction(extracted: pd.DataFrame, others_said: pd.DataFrame, control_alpha: float, prop: str) -> dict | None:
    """The person's record-prompt extraction that named the value (`extracted`, by property), one
    that beats the controls first."""
    if prop not in extracted.index:
        return None
    found = []
    for row in extracted.loc[[prop]].to_dict("records"):
        vs = _named_by_controls(others_said, prop, row["probe"])
        found.append({"prompt": row["prompt"], "output": row["completion"], "probe": row["probe"], "cue": float(row["cue"]),
                      "controls": vs and vs[0], "control_hits": vs and vs[1], "p_value": vs and vs[2],
                      "evidence": vs is None or vs[2] <= control_alpha})
    return next((f for f in found if f["evidence"]), found[0])


def generation_verdicts(audit: ModelAudit, plan: PersonPlan, property_labels: Mapping[str, str],
                        value_aliases: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """One row per property (ANSWER_COLUMNS) for a release audited through its completions only
    (`audit.audit_person_by_generation`): *says it* where the person's completions name the value
    in more wordings than the invented people's do (p <= the plan's control_alpha; without
    controls, in any wording), otherwise not memorized (no evidence). M, z* and ranks stay empty."""
    giveaways = find_giveaways(plan.canaries, with_form_aliases(value_aliases, plan.candidates), property_labels=property_labels)
    probes = audit.completions["probe"] if len(audit.completions) else pd.Series(dtype=str)
    wordings = audit.completions[probes == WORDING_PROBE]
    person = wordings_said(wordings).set_index("property")
    others = audit.control_completions if audit.control_completions is not None else pd.DataFrame(columns=["probe"])
    theirs = wordings_said(others[others["probe"] == CONTROL_PROBE_PREFIX + WORDING_PROBE])
    extracted = audit.completions[(probes != WORDING_PROBE) & audit.completions["hit"].astype(bool)].set_index("property") \
        if len(audit.completions) else pd.DataFrame()
    truths = plan.candidates[plan.candidates["is_true"]].groupby("property")["value_label"].agg(list)
    names = dict(zip(plan.control_canaries["subject_qid"], plan.control_canaries["subject"])) \
        if plan.control_canaries is not None and len(plan.control_canaries) else {}
    rows = []
    for prop in sorted(set(plan.canaries["property"])) if len(plan.canaries) else []:
        asked = int(person.loc[prop, "wordings"]) if prop in person.index else 0
        said = int(person.loc[prop, "said"]) if prop in person.index else 0
        mine = wordings[wordings["property"] == prop].sort_values("variant_id", kind="stable")
        shown = mine[mine["hit"].astype(bool)] if said else mine  # a completion that names it, else the first
        vs = theirs[theirs["property"] == prop]
        n = len(vs) if said else 0
        k = int((vs["said"] >= said).sum()) if n else 0
        p = controls.p_value(k, n) if n else None
        untestable = prop in giveaways.untestable
        says = said > 0 and not untestable and (p is None and not plan.n_controls or p is not None and p <= plan.control_alpha)
        record = _extraction(extracted, others, plan.control_alpha, prop)
        rows.append({
            "model": audit.model, "property": prop, "property_label": property_labels.get(prop, prop),
            "values": list(truths.get(prop, [])), "verdict": SAID if says else NOT_MEMORIZED, "access": audit.access,
            "M": None, "n_memorized": said, "n_variants": asked, "z_star": None, "truth_rank": None, "n_candidates": None,
            "wordings_left_out": giveaways.removed(prop), "untestable": untestable,
            "completion": None if not len(shown) else {"prompt": shown["prompt"].iloc[0], "output": shown["completion"].iloc[0]},
            "completion_hit": None if not len(shown) else bool(shown["hit"].iloc[0]),
            "cue": None if not len(shown) else float(shown["cue"].iloc[0]),
            "cue_flag": None if not len(shown) else bool(float(shown["cue"].iloc[0]) >= DEFAULT_CUE_TAU),
            "completion_controls": None, "completion_control_hits": None, "completion_p_value": None,
            "completion_evidence": None if not len(shown) else says,
            "extraction": record,
            "emitted": says or bool(record and record["evidence"]),
            "control_names": [str(names.get(q, q)) for q in vs["subject_qid"]] if n else None,
            "n_controls": n or None, "n_controls_planned": plan.n_controls if n else None,
            "controls_as_extreme": k if n else None, "p_value": p, "control_alpha": float(plan.control_alpha) if n else None,
            "controls_M_mean": None, "controls_M_max": None,
            "p_ci_low": controls.p_interval(k, n)[0] if n else None, "p_ci_high": controls.p_interval(k, n)[1] if n else None,
            "wordings_asked": asked, "wordings_said": said,
            "controls_said_share": float((vs["said"] / vs["wordings"]).mean()) if n else None,
        })
    return pd.DataFrame(rows, columns=ANSWER_COLUMNS)


def _control_names(plan: PersonPlan, control_scores: pd.DataFrame, prop: str) -> list[str]:
    """The names of the controls a fact was compared with, in the order they were scored."""
    frame = plan.control_canaries
    names = dict(zip(frame["subject_qid"], frame["subject"])) if frame is not None and len(frame) else {}
    scored = dict.fromkeys(control_scores.loc[control_scores["property"] == prop, "subject_qid"])
    return [str(names.get(qid, qid)) for qid in scored]


def one_line(text: str) -> str:
    """A completion as one line of text (models continue across line breaks)."""
    return " ".join(str(text).split())


def release_name(model: Mapping) -> str:
    """A release as a person knows it: its display name (else its registry name) and revision."""
    name, _, revision = str(model["model"]).partition("@")
    shown = model.get("display_name") or name
    return f"{shown} (release {revision})" if revision else shown


def _family_reading(vs: Mapping, level: str, m_threshold: float, alpha: float) -> str | None:
    """"holds": memorized with other facts compared (adjusted p at most alpha); "fails": M at the
    threshold and p <= alpha for the fact alone, but not once the other compared facts are counted
    (weakly associated); None where the family changed nothing."""
    if level == MEMORIZED and int(vs["family"]) > 1:
        return "holds"
    if level == WEAK and float(vs["M"]) >= m_threshold and float(vs["p_value"]) <= alpha:
        return "fails"
    return None


def family_sentence(row: Mapping) -> str:
    """What counting the other compared facts did to a fact's verdict (`_family_reading`)."""
    reading, n, p, alpha = row.get("family_reading"), row.get("family"), row.get("p_family"), row.get("control_alpha")
    if reading == "holds":
        return (f" It holds with all {n} facts compared read together (p = {p:.2f} after the Benjamini–Hochberg "
                f"correction): of the facts called memorized, at most a share of {alpha:.2f} would be expected by "
                "chance.")
    if reading == "fails":
        return (f" The model ranks it first as often as a memorized fact, but with {n} facts compared, p after the "
                f"Benjamini–Hochberg correction is {p:.2f}, above {alpha:.2f}: memorized is said only where it holds "
                "with the facts compared read together.")
    return ""


def plain_sentence(row: Mapping, who: Addressee | str) -> str:
    """One fact's verdict as a sentence a person understands: the fact named by its phrase
    (`phrasing.PHRASES`), addressed to the person or, deceased, about them by name."""
    who = Addressee(who) if isinstance(who, str) else who
    values = " / ".join(row["values"]) or "the value given"
    what = f"{who.fact(row['property'], row['property_label'])} ({values})"
    out = (f"it ranks the true value first among {row['n_candidates']} possible values in {row['n_memorized']} of "
           f"{row['n_variants']} ways of phrasing it")
    n_controls = row.get("n_controls")
    n_controls = int(n_controls) if isinstance(n_controls, (int, float)) and n_controls == n_controls else 0
    left_out = row.get("wordings_left_out") or []
    why = "; ".join(dict.fromkeys(w["detail"] for w in left_out))
    if row.get("untestable"):
        text = (f"For {what} the model's answers cannot show what it knows: every way of asking already gives "
                f"the value away ({why}), so it is not counted as memorized.")
    elif row.get("access") == GENERATION:
        text = _generation_sentence(row, what, who)
    elif n_controls:
        if not row["n_memorized"]:
            out = f"it ranks the true value first in none of {row['n_variants']} ways of phrasing it"
        planned = int(row.get("n_controls_planned") or n_controls)
        pool = (f"Of {n_controls} invented people given the same facts" if planned <= n_controls else
                f"Of the first {n_controls} of {planned} invented people given the same facts (enough to settle it)")
        chance = (f"{pool}, {int(row['controls_as_extreme'])} got a result at "
                  f"least as strong (p = {row['p_value']:.2f}{_p_range(row)}; only p ≤ {row['control_alpha']:.2f} "
                  "counts as evidence)." + family_sentence(row))
        if row.get("name_suggests"):
            text = (f"For {what} the name alone suggests the value: names that share {who.possessive} first name or "
                    f"surname lead the model to it more than the names of {_share(row['name_prior_share_below'])} of "
                    f"the invented people do, so comparing with them cannot tell what the model knows of {who.who} from "
                    f"what the name suggests, and this is not counted as memorized: {out}. {chance}")
        elif row["verdict"] == MEMORIZED:
            text = f"The model has memorized {what}: {out}. {chance}"
        elif row["verdict"] == WEAK:
            text = f"The model associates {what} with {who.who} more than with anyone given the same facts, though not firmly: {out}. {chance}"
        else:
            text = f"For {what} there is {NO_EVIDENCE_SENTENCE}: {out}. {chance}"
    elif row["verdict"] == MEMORIZED:
        text = f"The model has memorized {what}: {out}."
    elif row["verdict"] == WEAK:
        text = f"The model weakly associates {what} with {who.who}: {out}."
    else:
        text = f"The model shows no memorization of {what}: in none of {row['n_variants']} phrasings does it rank it first."
    if left_out and not row.get("untestable"):
        n = len(left_out)
        text += (f" {n} wording{'s were' if n > 1 else ' was'} left out of this count because "
                 f"{'their' if n > 1 else 'its'} own text gives the value away ({why}).")
    completion = row.get("completion") if row.get("access") != GENERATION else None  # said above
    if completion:
        hit = bool(row.get("completion_hit"))
        said = "naming the true value" if hit else "not naming it"
        text += f" Asked to complete \u201c{completion['prompt']}\u201d, it wrote \u201c{one_line(completion['output'])}\u201d ({said})."
        k, n = row.get("completion_control_hits"), row.get("completion_controls")
        if hit and n:
            if not row.get("completion_evidence"):
                text += (f" Given the same facts under invented names, it named the value for {k} of {n} of them too "
                         f"(p = {row['completion_p_value']:.2f}): this completion shows what the model would say of anyone "
                         f"with these facts, not what it knows of {who.who}.")
            else:
                text += (f" Given the same facts under invented names, it named the value for {k} of {n} of them "
                         f"(p = {row['completion_p_value']:.2f}), so this answer is particular to {who.who}"
                         + (": one answer to one wording, which the ranking over every wording and value, the basis of "
                            "the verdict, does not confirm." if row["verdict"] == NOT_MEMORIZED else "."))
        elif hit and row["verdict"] == NOT_MEMORIZED:
            text += (" One completion is not evidence by itself: the value can be guessed from the other facts"
                     + ("; what counts is the ranking above, read against invented people with the same facts."
                        if n_controls else ", and in no phrasing does the model rank it first."))
        if row.get("cue_flag"):
            text += " The prompt itself already shows part of the value, so a match there proves less."
    extraction = row.get("extraction")
    if extraction:
        how = "as written" if extraction["probe"] == "record" else \
            f"through a soft prompt ({extraction['probe']}) trained only on other people's records"
        given = (f"given \u201c{extraction['prompt']}\u201d ({how}), it wrote "
                 f"\u201c{one_line(extraction['output'])}\u201d, naming the true value")
        n, k = extraction.get("controls"), extraction.get("control_hits")
        if extraction.get("evidence", True):
            against = f", which it did for {k} of {n} invented people given the same facts (p = {extraction['p_value']:.2f})" if n else ""
            text = f"The model says it: {given}{against}. " + text
        else:  # after the verdict: what the model says of anyone with these facts is no lead
            text += (f" Given a record of these facts, it wrote \u201c{one_line(extraction['output'])}\u201d, naming the "
                     f"true value, but it did so for {k} of {n} invented people given the same facts too "
                     f"(p = {extraction['p_value']:.2f}): it says this of anyone with these facts.")
    access = row.get("access") or WEIGHTS
    if access != WEIGHTS:
        text += (f" This verdict was obtained through the model as it is served (an OpenAI-compatible endpoint, "
                 f"{access} access: {ACCESS_MEANS.get(access, access)}), not from a copy of its weights.")
        if access == TOP_LOGPROBS and row.get("verdict") == NOT_MEMORIZED:
            text += (" At this access a value the model would not readily say next is not seen at all, so this "
                     "finds no evidence; it does not show that the model does not hold the fact.")
    return text


def _share(value) -> str:
    """A share as a reader reads it: "95%"."""
    return f"{float(value):.0%}"


def _p_range(row: Mapping) -> str:
    """", 95 % interval 0.00–0.18": how uncertain p is, where its interval is known."""
    low, high = row.get("p_ci_low"), row.get("p_ci_high")
    return "" if low is None or high is None else f", 95 % interval {low:.2f}–{high:.2f}"


def _generation_sentence(row: Mapping, what: str, who: Addressee) -> str:
    """A generation-access fact: what the model said when asked to complete sentences about the
    person, against what it said of invented people with the same facts (no probabilities)."""
    asked, said = int(row.get("wordings_asked") or 0), int(row.get("wordings_said") or 0)
    out = (f"asked to complete {asked} sentence{'s' if asked != 1 else ''} about {who.who} that stop before it, the "
           f"model named it in {said}")
    completion = row.get("completion")
    example = (f" (“{completion['prompt']}” → “{one_line(completion['output'])}”)"
               if completion and said else "")
    n = row.get("n_controls")
    n = int(n) if isinstance(n, (int, float)) and n == n else 0
    chance = (f" Of {n} invented people given the same facts, {int(row['controls_as_extreme'])} had it named in at "
              f"least as many (p = {row['p_value']:.2f}{_p_range(row)}; only p ≤ {row['control_alpha']:.2f} counts as evidence)."
              if n else "")
    if row["verdict"] == SAID:
        return f"The model says {what} of {who.who}: {out}{example}.{chance}"
    if said:
        return f"For {what} there is {NO_EVIDENCE_SENTENCE}: {out}{example}.{chance}"
    return f"The model did not say {what}: {out}."


def _verdicts_by_language(audit: ModelAudit, plan: PersonPlan, property_labels: Mapping[str, str], embed, alpha: float,
                          m_threshold: float, cue_tau: float, value_aliases: Mapping[str, Sequence[str]] | None,
                          ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, tuple[pd.DataFrame, pd.DataFrame]]]:
    """`model_verdicts` per language of the plan: (the rows of every language, tagged with it where
    the plan names languages; the WikiMem pairs likewise; each language's own (table, pairs))."""
    if plan.languages == [ENGLISH] and LANGUAGE not in plan.canaries:
        table, pairs = model_verdicts(audit, plan, property_labels, embed, alpha, m_threshold, cue_tau, value_aliases)
        return table, pairs, {ENGLISH: (table, pairs)}
    by_language = {}
    for code in plan.languages:
        own = plan.in_language(code)
        table, pairs = model_verdicts(audit.in_language(code), own, property_labels, embed, alpha, m_threshold,
                                      cue_tau, value_aliases)
        fallback = set(own.canaries.loc[own.canaries[LABEL_FALLBACK].astype(bool), "property"]) \
            if LABEL_FALLBACK in own.canaries else set()
        table = table.assign(**{LANGUAGE: code, LABEL_FALLBACK: table["property"].isin(fallback).astype(bool)})
        by_language[code] = (table, pairs.assign(**{LANGUAGE: code}) if len(pairs) else pairs)
    frames = [t for t, _ in by_language.values() if len(t)]
    pair_frames = [p for _, p in by_language.values() if len(p)]
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*ANSWER_COLUMNS, LANGUAGE]),
            pd.concat(pair_frames, ignore_index=True) if pair_frames else pd.DataFrame(), by_language)


def _asked_in(row: Mapping, several: bool) -> str:
    """"Asked in German: " before a fact's sentence, in a request in several languages."""
    return f"Asked in {language_name(row[LANGUAGE])}: " if several and row.get(LANGUAGE) else ""


def _tagged(entries: pd.DataFrame, code: str, several: bool) -> pd.DataFrame:
    return entries.assign(**{LANGUAGE: code}) if several else entries


def compose_answer(
    request: SubjectRequest,
    plan: PersonPlan,
    outcomes: Sequence[ModelOutcome],
    property_labels: Mapping[str, str],
    lineage: Mapping,
    embed: Callable[[list[str]], np.ndarray] | None = None,
    m_threshold: float = M_THRESHOLD,
    alpha: float = 1.0,
    cue_tau: float = DEFAULT_CUE_TAU,
    forget_criterion: str = DEFAULT_FORGET_CRITERION,
    now: datetime | None = None,
    controller: Mapping | None = None,
    release_pairs: Mapping[str, pd.DataFrame] | None = None,
    retain_by_model: Mapping[str, Sequence] | None = None,
    value_aliases: Mapping[str, Sequence[str]] | None = None,
    letter_language: str | None = None,
) -> tuple[dict, pd.DataFrame]:
    """The answer document and its per (model, property) table; in a request in several languages
    (`subject_requests.languages`) one row per (model, property, language), each naming its
    `language` and whether a true value had no label in it (`label_fallback`).

    release_pairs (memorization of the releases' cohort audits) and retain_by_model (retain
    facts of unlearned revisions) feed the erasure verification's utility figures; controller
    (`controller.Controller` fields, None: not configured) heads the letter."""
    subject = plan.subject.iloc[0]
    who = addressee(subject["label"], plan.facts)
    control_alpha = plan.control_alpha
    several = plan.languages != [ENGLISH]  # rows name their language
    models, tables, forget = [], [], []
    for outcome in outcomes:
        item = {"model": outcome.key, **{k: json_scalar(v) for k, v in outcome.entry.items()}}
        if outcome.audit is None:
            models.append({**item, "audited": False, "error": outcome.error, "facts": []})
            continue
        table, pairs, by_language = _verdicts_by_language(outcome.audit, plan, property_labels, embed, alpha,
                                                          m_threshold, cue_tau, value_aliases)
        table["model"] = outcome.key
        tables.append(table)
        facts = [fact_record(row) for row in table.to_dict("records")]
        facts = [{**fact, "phrase": who.fact(fact["property"], fact["property_label"]),
                  "sentence": _asked_in(fact, several) + plain_sentence(fact, who)} for fact in facts]
        facts.sort(key=lambda fact: not fact["emitted"])  # what the model says comes first (stable)
        models.append({**item, **{k: json_scalar(v) for k, v in outcome.scoring.items()},
                       "audited": True, "error": None, "fingerprint": outcome.audit.fingerprint,
                       "access": outcome.audit.access,
                       "n_facts": len(facts), "n_memorized": sum(f["verdict"] == MEMORIZED for f in facts),
                       "n_weak": sum(f["verdict"] == WEAK for f in facts),
                       "n_said": sum(f["verdict"] == SAID for f in facts), "facts": facts})
        entries = None
        if request.kind == RequestKind.ERASURE and outcome.audit.access == GENERATION:
            entries = said_forget_set(outcome.key, table, plan)
        elif request.kind == RequestKind.ERASURE and len(pairs):
            entries = pd.concat([
                _tagged(forget_set(outcome.key, own_pairs, best_true_values(outcome.audit.in_language(code).scores, alpha),
                                   fact_cues(plan.in_language(code).canaries), property_labels, forget_criterion, cue_tau,
                                   controls=forget_controls(own_table, own_pairs)), code, several)
                for code, (own_table, own_pairs) in by_language.items() if len(own_pairs)], ignore_index=True)
        if entries is not None:
            forget += [json_clean(r) for r in entries.to_dict("records")]
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=ANSWER_COLUMNS)
    verification = verify_revisions(
        models, request.subject_key, {o.key: o.audit.scores for o in outcomes if o.audit is not None},
        release_pairs, retain_by_model,
    ) if request.kind == RequestKind.ERASURE else []
    generated_at = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    for check in verification:
        check["verified_at"] = generated_at  # the date of the audit it reports (this answer's)
    document = {
        "request": request.summary(),
        "subject": {"key": request.subject_key, "label": str(subject["label"]), "qid": request.subject_qid,
                    "in_wikidata": request.subject_qid is not None, "aliases": _names(subject.get("aliases")),
                    "deceased": who.deceased, "date_of_death": who.date_of_death},
        "controller": dict(controller) if controller else None,
        "generated_at": generated_at,
        "method": {"m_threshold": m_threshold, "alpha": alpha, "cue_tau": cue_tau, **({
                   "n_controls": plan.n_controls, "control_alpha": control_alpha,
                   "compared_on": ("the score calibrated by the generic subject only (alpha 0), every wording; "
                                   "only facts ranked first in some wording (M > 0)"),
                   "control_rounds": controls.rounds(plan.n_controls), "shortlist": controls.SHORTLIST,
                   "verdicts": {MEMORIZED: (f"M >= {m_threshold} and p <= {control_alpha} against the controls, "
                                            "with the model's compared facts read together: the Benjamini-Hochberg "
                                            "adjusted p"),
                                WEAK: (f"M > 0 and p <= {control_alpha} against the controls for the fact alone, "
                                       f"with M < {m_threshold} or the adjusted p above {control_alpha}"),
                                NOT_MEMORIZED: NO_EVIDENCE_SENTENCE}} if plan.n_controls else {
                   "n_controls": 0,
                   "verdicts": {MEMORIZED: f"M >= {m_threshold}", WEAK: f"0 < M < {m_threshold}", NOT_MEMORIZED: "M = 0"}})},
        "headline": headline(models),
        "languages": plan.languages,
        "letter_language": letter_language or ENGLISH,
        "coverage": plan.coverage.to_dict("records"),
        "not_covered": plan.coverage[~plan.coverage["coverage"].isin([AUDITED, ON_DEMAND, NOT_PERSONAL])].to_dict("records"),
        "models": models,
        "forget_set": forget if request.kind == RequestKind.ERASURE else None,
        "forget_criterion": forget_criterion if request.kind == RequestKind.ERASURE else None,
        "verification": verification,
        "lineage": dict(lineage),
    }
    document = json_clean(document)
    check_answer(document)  # a bad value fails here, naming its field, not later in the letter
    return document, table


FORGOTTEN, STILL, NEWLY, NEVER = "forgotten", "still memorized", "newly memorized", "not memorized"


def erasure_outcome(before: str, after: str) -> str:
    """A fact's fate between two revisions: held = memorized at threshold, or, on a release
    audited through its completions only, said beyond the controls."""
    was, now = before in (MEMORIZED, SAID), after in (MEMORIZED, SAID)
    return {(True, False): FORGOTTEN, (True, True): STILL, (False, True): NEWLY}.get((was, now), NEVER)


def verify_revisions(
    models: Sequence[Mapping],
    subject_key: str | None = None,
    scores_by_model: Mapping[str, pd.DataFrame] | None = None,
    release_pairs: Mapping[str, pd.DataFrame] | None = None,
    retain_by_model: Mapping[str, Sequence] | None = None,
) -> list[dict]:
    """For every audited model with several revisions (in registration order): each revision
    against the one before it, fact by fact — forgotten, still memorized, newly memorized — with
    the retain set's utility (from the releases' cohort audits, `release_pairs`; on the unlearning
    manifest's retain facts where `retain_by_model` has them) and the PrivLeak-style AUROC of the
    facts in the forget set (this person's scores, `scores_by_model`), before and after."""
    scores_by_model, release_pairs, retain_by_model = scores_by_model or {}, release_pairs or {}, retain_by_model or {}
    by_name: dict[str, list[Mapping]] = {}
    for model in models:
        if model["audited"]:
            by_name.setdefault(model["model"].partition("@")[0], []).append(model)
    out = []
    for name, revisions in by_name.items():
        for before, after in zip(revisions, revisions[1:]):
            earlier = {(f["property"], f.get(LANGUAGE)): f for f in before["facts"]}
            facts = []
            for fact in after["facts"]:
                old = earlier.get((fact["property"], fact.get(LANGUAGE)))
                if old is None:
                    continue
                facts.append({"property": fact["property"], "property_label": fact["property_label"],
                              **({LANGUAGE: fact[LANGUAGE]} if LANGUAGE in fact else {}),
                              "values": fact["values"], "before": old["verdict"], "after": fact["verdict"],
                              "M_before": old["M"], "M_after": fact["M"],
                              "outcome": erasure_outcome(old["verdict"], fact["verdict"])})
            counts = {k: sum(f["outcome"] == k for f in facts) for k in (FORGOTTEN, STILL, NEWLY, NEVER)}
            forget_keys = [(subject_key, f["property"]) for f in before["facts"] if f["verdict"] != NOT_MEMORIZED]
            if before["model"] in release_pairs:
                utility = retain_utility(release_pairs[before["model"]], release_pairs.get(after["model"]),
                                         retain_by_model.get(after["model"]), exclude=[subject_key])
            else:  # no cohort audit of the revision before: finished later, or never (completions only)
                utility = {"retain_facts": None, "still_memorized": None, "utility": None,
                           "completions_only": before.get("access") == GENERATION}
            # a before/after comparison: both or neither (a revision served at generation access has no
            # scores, and the letter and the CLI once formatted the missing one)
            leak = [privleak_auroc(scores_by_model.get(m["model"]), forget_keys) for m in (before, after)]
            leak = leak if None not in leak else [None, None]
            out.append({"model": name, "before": before["model"], "after": after["model"], "facts": facts,
                        "access": after.get("access"),
                        "counts": counts, "erased": counts[STILL] == 0 and counts[NEWLY] == 0,
                        "retain": utility,
                        "privleak_auroc_before": leak[0], "privleak_auroc_after": leak[1]})
    return out


def _names(value) -> list[str]:
    """A list of names from a list, an array (Parquet) or nothing."""
    return [] if value is None or (isinstance(value, float) and np.isnan(value)) else [str(v) for v in value]


def headline(models: Sequence[Mapping]) -> str:
    """One line: how many audited releases memorized something, and what."""
    audited = [m for m in models if m["audited"]]
    if not audited:
        return "No registered model could be audited." if models else "No model is registered."
    parts = []
    several = len({f.get(LANGUAGE) for m in audited for f in m["facts"]}) > 1

    def named(fact: Mapping) -> str:  # "your occupation", "your occupation (in German)"
        name = fact.get("phrase") or fact["property_label"]
        return f"{name} (in {language_name(fact[LANGUAGE])})" if several else name

    for model in audited:
        if model.get("access") == GENERATION:  # no probabilities: what it says, not what it memorized
            said = [named(f) for f in model["facts"] if f["verdict"] == SAID]
            parts.append(f"{release_name(model)} (completions only): says {', '.join(said) if said else 'nothing'} "
                         f"({len(said)} of {model['n_facts']} fact{'' if model['n_facts'] == 1 else 's'})")
            continue
        memorized = [named(f) for f in model["facts"] if f["verdict"] == MEMORIZED]
        parts.append(f"{release_name(model)}: {', '.join(memorized) if memorized else 'nothing'} memorized "
                     f"({len(memorized)} of {model['n_facts']} fact{'' if model['n_facts'] == 1 else 's'}, "
                     f"{model['n_weak']} weakly associated)")
    failed = len(models) - len(audited)
    return "; ".join(parts) + (f"; {failed} release(s) could not be audited" if failed else "")


def _rank_value(value) -> int | None:
    value = json_scalar(value)
    return None if value is None else int(value)
