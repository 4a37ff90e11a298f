"""Scoring the invented-person controls: for one person (a request) or a whole cohort at once.

`controls` says what a control is and how a person is read against them; this module spends the
model's time on them. The same exact savings serve a request and a cohort audit (one home):

- only facts the person's own scores leave something to test are compared (M > 0 with WikiMem's
  calibration, giveaway wordings removed: `controls.facts_to_compare`, `crm.giveaways`);
- controls come in doubling rounds (`controls.rounds`) and a fact gets no more once its outcome
  is settled (`controls.settled`);
- after the first round (one control per fact, every value), each control is first scored on a
  shortlist of values (`controls.shortlist`) and gets every value only when the shortlist cannot
  show it less extreme than its person.

In a cohort every round scores the controls of all people at once (one batch through the engine:
shared prefixes and the sentence cache work across people, as for the people themselves).
`audit_cohort` adds what a cohort audit needs around it: names for every person (drawn once from
the extract), the controls' rows, and one comparison row per audited fact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from wikimem_platform.crm.giveaways import find_giveaways, Giveaways
from wikimem_platform.wikimem import controls
from wikimem_platform.wikimem.memorization import evaluate_wikimem
from wikimem_platform.wikimem.scoring import score_canaries, ScoringReport, SentenceNllCache, ShardStore


@dataclass
class ControlScores:
    """What scoring the controls produced."""

    scores: pd.DataFrame  # the controls' score rows; `shortlisted`: scored on the shortlist only (M an upper bound)
    people: pd.DataFrame  # the people's `compared_people` (giveaways left out): what the controls are read against
    pairs: pd.DataFrame  # their compared statistic (`controls.compared`, giveaways left out), one row per (control, property)
    report: ScoringReport  # what it cost (sentences computed, shards reused)
    compared: tuple[tuple[str, str], ...]  # (person qid, property) of the facts compared with controls


def drop_giveaways(scores: pd.DataFrame, giveaways: Mapping[str, Giveaways], of: Mapping[str, str] | None = None) -> pd.DataFrame:
    """`scores` without each person's giveaway wordings (`Giveaways.drop`), for the person's rows
    and — through `of` (control qid -> person) — their controls' rows."""
    if scores is None or not len(scores) or not giveaways:
        return scores
    person = scores["subject_qid"].map(of).fillna(scores["subject_qid"]) if of else scores["subject_qid"]
    parts = [giveaways[who].drop(block) if who in giveaways else block for who, block in scores.groupby(person, sort=False)]
    return pd.concat(parts).sort_index()


def compared_people(scores: pd.DataFrame, giveaways: Mapping[str, Giveaways], embed=None, value_aliases=None,
                    m_threshold: float = controls.M_THRESHOLD) -> pd.DataFrame:
    """The people's `pair_metrics` on the wordings left once giveaways are removed: M with
    WikiMem's calibration (the verdict's level) and the compared statistic (`controls.with_compared`)."""
    kept = drop_giveaways(scores, giveaways)
    levels = evaluate_wikimem(kept, embed=embed, value_aliases=value_aliases, m_threshold=m_threshold).pairs
    return controls.with_compared(levels, controls.compared(kept, embed, value_aliases).pairs)


def cohort_giveaways(canaries: pd.DataFrame, value_aliases=None) -> dict[str, Giveaways]:
    """Each person's giveaway wordings (`crm.giveaways.find_giveaways`, one person at a time)."""
    return {qid: find_giveaways(block, value_aliases) for qid, block in canaries.groupby("subject_qid")}


def score_controls(lm, person_scores: pd.DataFrame, control_canaries: pd.DataFrame, control_candidates: pd.DataFrame,
                   store: ShardStore, settings: dict | None = None, sentence_cache: SentenceNllCache | None = None, *,
                   giveaways: Mapping[str, Giveaways], n_controls: int, alpha: float = controls.DEFAULT_ALPHA,
                   embed=None, value_aliases=None, shortlist_size: int = controls.SHORTLIST,
                   log: Callable[[str], None] = print, progress=None, max_controls: int | None = None,
                   shortlist: Mapping[tuple[str, str], set] | None = None) -> ControlScores:
    """The controls (`controls.control_rows`: rows with `control_of` and `control_rank`) of the
    facts the people's scores leave something to test, in rounds, on shortlists where they settle.
    A fact that beats the n_controls without a control's margin (`controls.has_room`) gets more in
    further rounds (`controls.extension_rounds`) up to max_controls (None: n_controls, no more) —
    as many as the control rows hold. shortlist: per (person, property), the values every control
    is scored on first (None: the truth and the values the first control, scored on every value,
    puts highest: `controls.shortlist`).

    person_scores: the people's scores (any number of people); giveaways: per person, the wordings
    that give the answer away (left out of every comparison; a fact with none left is untestable)."""
    of = controls.controls_of(control_canaries)
    # compared on the wordings the answer reads
    levels = compared_people(person_scores, giveaways, embed, value_aliases)
    has_controls = set(of.values())
    testable = levels[[s in has_controls and p not in (giveaways[s].untestable if s in giveaways else ())
                       for s, p in zip(levels["subject_qid"], levels["property"])]]
    to_compare = {(s, p) for s in testable["subject_qid"].unique()
                  for p in controls.facts_to_compare(testable[testable["subject_qid"] == s])}
    person = levels[[k in to_compare for k in zip(levels["subject_qid"], levels["property"])]]
    log(f"controls: {len(to_compare)} of {len(levels)} facts ranked first in some wording are compared with up to "
        f"{n_controls} invented people" + (f" each ({len(has_controls)} people)" if len(has_controls) > 1 else ""))
    canaries, candidates = control_canaries, control_candidates
    canary_fact = list(zip(canaries["control_of"], canaries["property"]))
    candidate_fact = list(zip(candidates["control_of"], candidates["property"]))
    candidate_keys = list(zip(candidates["subject_qid"], candidates["property"]))
    canary_keys = list(zip(canaries["subject_qid"], canaries["property"]))
    n_values = candidates.groupby(["subject_qid", "control_of", "property"]).size().groupby(["control_of", "property"]).max().to_dict()
    total, frames, pairs, short = ScoringReport(), [], [], dict(shortlist or {})

    def score(rows: pd.Series, values: pd.Series) -> pd.DataFrame:
        keys = set(zip(canaries.loc[rows, "subject_qid"], canaries.loc[rows, "property"]))
        wanted = pd.Series([k in keys for k in candidate_keys], index=candidates.index, dtype=bool) & values
        out, report = score_canaries(lm, canaries[rows], candidates[wanted], store, settings, log=log,
                                     progress=progress, sentence_cache=sentence_cache)
        total.add(report)
        return out

    def compared(frame: pd.DataFrame):
        return controls.compared(drop_giveaways(frame, giveaways, of), embed, value_aliases)

    open_facts, done, rank = set(to_compare), 0, canaries["control_rank"].to_numpy()
    held = int(rank.max()) + 1 if len(rank) else 0
    schedule = controls.rounds(n_controls) + controls.extension_rounds(n_controls, min(max_controls or n_controls, held))
    for upto in schedule if to_compare else []:
        if not open_facts:
            break
        rows = pd.Series((rank >= done) & (rank < upto) & np.array([k in open_facts for k in canary_fact], dtype=bool),
                         index=canaries.index)
        on_shortlist = pd.Series([k not in short or v in short[k] for k, v in zip(candidate_fact, candidates["value"])],
                                 index=candidates.index, dtype=bool)
        first = score(rows, on_shortlist)
        first_result = compared(first)
        unsettled = first_result.pairs[controls.as_extreme(person, first_result.pairs, of)]
        keys = {k for k in zip(unsettled["subject_qid"], unsettled["property"]) if (of[k[0]], k[1]) in short}
        full_rows = rows & pd.Series([k in keys for k in canary_keys], index=canaries.index, dtype=bool)
        full = score(full_rows, pd.Series(True, index=candidates.index)) if full_rows.any() else first.iloc[:0]
        kept_first = first[[k not in keys for k in zip(first["subject_qid"], first["property"])]]
        kept_first = kept_first.assign(shortlisted=[(of[s], p) in short for s, p in zip(kept_first["subject_qid"], kept_first["property"])])
        frames += [kept_first, full.assign(shortlisted=False)]
        settled_pairs = first_result.pairs[[k not in keys for k in zip(first_result.pairs["subject_qid"],
                                                                        first_result.pairs["property"])]]
        pairs += [settled_pairs, compared(full).pairs] if len(full) else [settled_pairs]
        if not short and sentence_cache is not None:  # the first control, every value: the shortlist
            # (pays only when short, and when the cache keeps its sentences for a full pass)
            short = {k: values for k, values in controls.shortlist(first_result, of, shortlist_size).items()
                     if len(values) < n_values.get(k, 0)}
        so_far = pd.concat(pairs, ignore_index=True)
        hits = so_far[controls.as_extreme(person, so_far, of)]
        counts = hits.groupby([hits["subject_qid"].map(of), hits["property"]]).size()
        open_facts -= {k for k in open_facts if decided(int(counts.get(k, 0)), upto, n_controls, alpha)}
        done = upto
    control_scores = (pd.concat(frames, ignore_index=True) if frames
                      else pd.DataFrame(columns=[*person_scores.columns, "shortlisted"]))
    control_pairs = (pd.concat(pairs, ignore_index=True) if pairs
                     else pd.DataFrame(columns=["subject_qid", "property", "M", "summed_truth_rank"]))
    return ControlScores(control_scores, levels, control_pairs, total, tuple(sorted(to_compare)))


def decided(as_extreme: int, scored: int, n_controls: int, alpha: float) -> bool:
    """Whether a fact needs no more controls: before all n_controls are scored, once settled
    (p above alpha whatever the rest do); after, once p is above alpha or below it with a control's
    margin (`controls.has_room`)."""
    if scored < n_controls:
        return controls.settled(as_extreme, n_controls, alpha)
    return controls.p_value(as_extreme, scored) > alpha or controls.has_room(as_extreme, scored, alpha)


# --------------------------------------------------------------------------- a cohort

# One row per audited (person, property) of a cohort: controls.COMPARISON_COLUMNS and the person's cohort.
COHORT_COMPARISON_COLUMNS = [*controls.COMPARISON_COLUMNS, "cohort"]


@dataclass
class CohortControls:
    comparison: pd.DataFrame  # COHORT_COMPARISON_COLUMNS
    scored: ControlScores
    names: dict[str, list[str]]  # person qid -> the invented names drawn for them


def cohort_control_names(subjects: pd.DataFrame, claims: pd.DataFrame, humans: pd.DataFrame, n: int, seed: int = 0
                         ) -> dict[str, list[str]]:
    """n invented names per subject (`controls.control_names`): the extract's name parts, each
    person's claims and the name pools of each (shape, origin) built once for the cohort."""
    parts, taken, memo = controls.name_parts(humans, claims), controls.taken_names(humans), {}
    people = set(subjects["qid"])
    own_claims = dict(iter(claims[claims["qid"].isin(people)].groupby("qid")))
    empty = claims.iloc[:0]
    return {row["qid"]: controls.control_names(pd.DataFrame([row]), own_claims.get(row["qid"], empty), humans, claims,
                                               n, seed, parts=parts, taken=taken, memo=memo)
            for row in subjects.to_dict("records")}


def audit_cohort(lm, scores: pd.DataFrame, canaries: pd.DataFrame, candidates: pd.DataFrame, subjects: pd.DataFrame,
                 claims: pd.DataFrame, humans: pd.DataFrame, store: ShardStore, settings: dict | None = None,
                 sentence_cache: SentenceNllCache | None = None, *, n_controls: int = controls.DEFAULT_N_CONTROLS,
                 alpha: float = controls.DEFAULT_ALPHA, m_threshold: float = controls.M_THRESHOLD, seed: int = 0,
                 embed=None, value_aliases: Mapping[str, Sequence[str]] | None = None,
                 log: Callable[[str], None] = print, progress=None) -> CohortControls:
    """Every audited fact of a cohort against invented people with the same facts.

    scores / canaries / candidates: the cohort audit's (only the scored people are compared);
    subjects: with `cohort`. Returns one comparison row per (person, property) scored — facts
    with M = 0 are "no evidence" without controls — with the verdict at level alpha."""
    if n_controls < 1:
        raise ValueError(f"n_controls must be at least 1 (19 lets a p-value reach 0.05), got {n_controls}")
    people = subjects[subjects["qid"].isin(set(scores["subject_qid"]))]
    scored_canaries = canaries[canaries["subject_qid"].isin(set(scores["subject_qid"]))]
    giveaways = cohort_giveaways(scored_canaries, value_aliases)
    names = cohort_control_names(people, claims, humans, n_controls, seed)
    control_canaries, control_candidates = controls.control_rows(scored_canaries, candidates, names, per_person_ids=True)
    scored = score_controls(lm, scores, control_canaries, control_candidates, store, settings, sentence_cache,
                            giveaways=giveaways, n_controls=n_controls, alpha=alpha, embed=embed,
                            value_aliases=value_aliases, log=log, progress=progress)
    comparison = controls.compare_with_controls(scored.people, scored.pairs, alpha=alpha, m_threshold=m_threshold,
                                                of=controls.controls_of(control_canaries))
    comparison["cohort"] = comparison["subject_qid"].map(dict(zip(subjects["qid"], subjects.get("cohort", pd.Series(dtype=str)))))
    return CohortControls(comparison[COHORT_COMPARISON_COLUMNS], scored, names)
