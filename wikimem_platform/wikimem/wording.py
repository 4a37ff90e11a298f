"""How much a causal model's audit depends on the wording of its canaries (NER prompt-sensitivity
paper, ../shared/papers/ner-prompt-memorization.txt §3.3 and §4.1, applied to WikiMem).

A *wording* is one canary template: (property, variant_id), of kind baseline, paraphrase or
contextualized. Two detection scores per wording, both AUCs (0.5 = chance), from the general math
in `prompt_sensitivity` (`m_mem`):

- ``truth_auc`` — truths vs counterfactuals: items are the candidate values of one ranking
  (subject, property, variant), in = a ground truth (G merged with its equivalents, as
  `memorization.prepare_scores` marks it), confidence = the calibrated score s; AUC within each
  ranking, mean over subjects. Needs no membership: it is what any audit can measure.
- ``member_auc`` — members vs non-members (only where membership is known, e.g. a planted model):
  items are the (subject, property) pairs, confidence = the pair's *truth confidence* under the
  wording (the share of counterfactuals its best truth beats, ties one half); the paper's M-MEM.

Every score is also given on two seeded halves of the subjects (`splits.halves`): a wording chosen
on the dev half is judged on the test half, so choosing is not rewarded by the same noise it chose
on. WikiMem's M and its verdicts (strict, lenient, at threshold, summed) come from
`memorization` unchanged and use only the scored kinds (baseline + paraphrases); the
contextualized wording is analysed beside them, flagged by its kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from wikimem_platform.splits import halves
from wikimem_platform.vocabulary import (
    CANARY_KINDS,
    CONTEXTUALIZED,
    CONTEXTUALIZED_KINDS,
    CRITERIA,
    M_THRESHOLD,
    SUMMED_MEMORIZED,
)
from wikimem_platform.wikimem.memorization import (
    EQUIVALENCE_THRESHOLD,
    KIND_COLUMNS,
    OUTER_KEYS,
    pair_metrics,
    prepare_scores,
    summed_candidates,
    VARIANT_KEYS,
    variant_metrics,
)
from wikimem_platform.wikimem.prompt_sensitivity import (
    auc_per_group,
    ensemble_scores,
    ENSEMBLES,
    kendall_matrix,
    kendall_tau,
    m_mem,
    sensitivity,
)

WORDING_KEYS = ["property", "variant_id"]
TRUTH_AUC = "truth_auc"  # truths vs counterfactuals within each ranking, mean over subjects
MEMBER_AUC = "member_auc"  # members vs non-members over pairs, confidence = truth confidence
DETECTIONS = (TRUTH_AUC, MEMBER_AUC)
HALVES = ("dev", "test")
ALL_PROPERTIES = "all"  # the pooled row of the per-property tables
BEST_WORDING = "best_wording"
WORST_WORDING = "worst_wording"
M_SCORE = "M"  # WikiMem's M itself, used as a membership score
RULES = (*CRITERIA, SUMMED_MEMORIZED)  # WikiMem's verdicts as strategies
WORDING_FAMILY, ENSEMBLE_FAMILY, RULE_FAMILY = "wording", "ensemble", "rule"
# Wording scores are ratios of small counts: equal ones must tie exactly for Kendall τ and for
# choosing the best wording, whatever order the floating-point sums ran in.
SCORE_DECIMALS = 12
RANK1_RATE = "rank1_rate"  # share of a wording's subjects whose truth ranks first (WikiMem's verdict)


# --------------------------------------------------------------------------- confidences

@dataclass
class WordingConfidences:
    """What the detection scores are computed from, one model or several (`model` column)."""
    candidates: pd.DataFrame  # [model,] subject_qid, property, variant_id, kind, value, is_g, s
    rankings: pd.DataFrame  # [model,] subject_qid, property, variant_id, kind, n_candidates,
    #                         n_counterfactuals, best_truth_s, truth_auc, truth_confidence


def _kind_series(frame: pd.DataFrame) -> pd.Series:
    column = next((c for c in KIND_COLUMNS if c in frame.columns), None)
    return frame[column] if column else pd.Series(None, index=frame.index, dtype=object)


def _confidences(prepared: pd.DataFrame) -> WordingConfidences:
    """Per-candidate s and per-ranking truth AUC and truth confidence from a `prepare_scores` frame
    (vectorized: ranks and sums per ranking, no loop over rankings)."""
    keys = [k for k in OUTER_KEYS if k in prepared.columns] + list(VARIANT_KEYS)
    candidates = prepared[keys].copy()
    candidates["kind"] = _kind_series(prepared).to_numpy()
    candidates["value"] = prepared["value"].to_numpy()
    candidates["is_g"] = prepared["is_g"].to_numpy(dtype=bool)
    candidates["s"] = prepared["s"].to_numpy(dtype=float)

    grouped = candidates.groupby(keys, sort=True, dropna=False)
    ranking_id = grouped.ngroup().to_numpy()  # numbers the rankings in the order of `grouped`
    n_rankings = int(ranking_id.max()) + 1 if len(ranking_id) else 0
    s, is_g = candidates["s"].to_numpy(), candidates["is_g"].to_numpy()
    n_truths = np.bincount(ranking_id, weights=is_g, minlength=n_rankings)
    n_counterfactuals = np.bincount(ranking_id, weights=~is_g, minlength=n_rankings)
    usable = (n_truths > 0) & (n_counterfactuals > 0)
    # Counterfactuals the best truth beats (ties one half): the truth confidence.
    best_truth = pd.Series(np.where(is_g, s, -np.inf)).groupby(ranking_id).transform("max").to_numpy()
    beaten = np.bincount(ranking_id, weights=np.where(is_g, 0.0, (s < best_truth) + 0.5 * (s == best_truth)),
                         minlength=n_rankings)
    best_per_ranking = pd.Series(best_truth).groupby(ranking_id).first().to_numpy()

    rankings = grouped.agg(kind=("kind", "first"), n_candidates=("s", "size")).reset_index()
    rankings["n_counterfactuals"] = n_counterfactuals.astype(int)
    rankings["best_truth_s"] = np.where(np.isneginf(best_per_ranking), np.nan, best_per_ranking)
    rankings["truth_auc"] = auc_per_group(s, is_g, ranking_id, n_rankings)
    with np.errstate(invalid="ignore", divide="ignore"):
        rankings["truth_confidence"] = np.where(usable, beaten / n_counterfactuals, np.nan)
    return WordingConfidences(candidates, rankings)


def wording_confidences(scores: pd.DataFrame, alpha: float = 1.0,
                        embed: Callable[[list[str]], np.ndarray] | None = None,
                        value_aliases: Mapping[str, Sequence[str]] | None = None,
                        equivalence_threshold: float = EQUIVALENCE_THRESHOLD) -> WordingConfidences:
    """The confidences both detection scores read, from a raw `scores` table.

    candidates: one row per (ranking, candidate) with s (calibrated, `prepare_scores`) and is_g
    (ground truth or equivalent) — the items of ``truth_auc``.
    rankings: one row per [model,] subject, property, variant with truth_auc = AUC of its truths
    vs its counterfactuals (ties one half; the per-ranking term of ``truth_auc``, equal to
    `m_mem` on that ranking) and truth_confidence = share of its counterfactuals that the best
    truth beats (ties one half) — the confidence of ``member_auc``, 1.0 exactly when the wording
    memorized the fact in WikiMem's sense (truth rank 1). Both NaN without a truth or a
    counterfactual; with one truth they are equal.
    """
    return _confidences(prepare_scores(scores, alpha, embed, value_aliases, equivalence_threshold))


# --------------------------------------------------------------------------- inputs

def _membership_series(membership: Mapping[str, bool] | pd.Series | pd.DataFrame | None) -> pd.Series | None:
    """subject_qid -> member (bool) from a mapping, a Series or a frame (subject_qid, member)."""
    if membership is None:
        return None
    if isinstance(membership, pd.DataFrame):
        series = membership.drop_duplicates("subject_qid").set_index("subject_qid")["member"]
    elif isinstance(membership, pd.Series):
        series = membership
    else:
        series = pd.Series(dict(membership), dtype=object)
    return series.astype(bool)


def _template_text(templates: pd.DataFrame | None, wordings: pd.DataFrame) -> pd.Series:
    """The template of each wording; the contextualized one differs per subject (its auxiliary
    facts), so it is shown as its closing sentence (the baseline's context form) after a marker."""
    if templates is None:
        return pd.Series(None, index=wordings.index, dtype=object)
    text = wordings[WORDING_KEYS].merge(templates[[*WORDING_KEYS, "template"]].drop_duplicates(WORDING_KEYS),
                                        on=WORDING_KEYS, how="left")["template"]
    text.index = wordings.index
    if "context_form" in templates.columns:
        baseline_ids = templates.groupby("property")["variant_id"].min()
        closing = templates.set_index(WORDING_KEYS)["context_form"]
        closing = {p: closing.get((p, v)) for p, v in baseline_ids.items()}
        closing = {p: sentence for p, sentence in closing.items() if isinstance(sentence, str)}
        contextual = wordings["kind"].eq(CONTEXTUALIZED) & text.isna()
        text[contextual] = [f"[auxiliary facts] {closing.get(p, '')}".strip()
                            for p in wordings.loc[contextual, "property"]]
    return text


# --------------------------------------------------------------------------- per wording

def _member_auc(block: pd.DataFrame) -> float:
    known = block[block["member"].notna()]
    return m_mem(known["truth_confidence"], known["member"].astype(bool))


def rank1_column(cohort: str | None = None) -> str:
    """The wordings-table column with the share of subjects (of a cohort) whose truth ranks first."""
    return RANK1_RATE if cohort is None else f"{RANK1_RATE}_{cohort}"


def _wording_table(conf: WordingConfidences, dev: set, test: set, member: pd.Series | None,
                   templates: pd.DataFrame | None, cohorts: pd.Series | None = None) -> pd.DataFrame:
    """One row per wording: both detection scores on all subjects and on each half (see module doc).

    truth_auc of a set of subjects = the mean of their rankings' truth AUCs, i.e.
    m_mem(s, is_g, groups=subject) over the wording's candidates, from the per-ranking terms."""
    rankings = conf.rankings.assign(member=conf.rankings["subject_qid"].map(member) if member is not None else np.nan)
    rows = []
    for (prop, variant), ranks in rankings.groupby(WORDING_KEYS, sort=True):
        scored = ranks[ranks["truth_auc"].notna()]
        row = {"property": prop, "variant_id": variant, "kind": ranks["kind"].iloc[0],
               "n_subjects": int(scored["subject_qid"].nunique())}
        subsets = {"": scored}
        subsets |= {f"_{name}": scored[scored["subject_qid"].isin(keep)] for name, keep in zip(HALVES, (dev, test))}
        for suffix, subset in subsets.items():
            row[f"{TRUTH_AUC}{suffix}"] = float(subset["truth_auc"].mean()) if len(subset) else np.nan
        # WikiMem's per-wording verdict (a truth at rank 1: it beats every counterfactual).
        first = scored["truth_confidence"] == 1.0
        row[rank1_column()] = float(first.mean()) if len(scored) else np.nan
        if cohorts is not None:
            cohort_of = scored["subject_qid"].map(cohorts)
            for cohort in sorted(cohorts.dropna().unique()):
                inside = cohort_of == cohort
                row[rank1_column(cohort)] = float(first[inside].mean()) if inside.any() else np.nan
        if member is not None:
            for suffix, subset in subsets.items():
                row[f"{MEMBER_AUC}{suffix}"] = _member_auc(subset)
            row["n_members"] = int(scored["member"].eq(True).sum())
            row["n_non_members"] = int(scored["member"].eq(False).sum())
        rows.append(row)
    wordings = pd.DataFrame(rows)
    score_columns = [column for d in DETECTIONS for column in (d, f"{d}_dev", f"{d}_test") if column in wordings]
    wordings[score_columns] = wordings[score_columns].round(SCORE_DECIMALS)
    wordings.insert(3, "template", _template_text(templates, wordings))
    return wordings


# --------------------------------------------------------------------------- per property, overall

def _detections(wordings: pd.DataFrame) -> list[str]:
    return [d for d in DETECTIONS if d in wordings.columns]


def kind_comparison(wordings: pd.DataFrame) -> pd.DataFrame:
    """The paper's §7 comparison: per property and canary kind (baseline, paraphrase,
    contextualized), the mean rank-1 rate of its wordings, overall and per cohort, from a
    `wordings` table alone (the report rebuilds it from the stored asset)."""
    rates = [c for c in wordings.columns if c == RANK1_RATE or c.startswith(f"{RANK1_RATE}_")]
    if not rates:
        return pd.DataFrame(columns=["property", "kind", "n_wordings"])
    table = wordings.groupby(["property", "kind"], sort=True).agg(
        n_wordings=("variant_id", "size"), **{c: (c, "mean") for c in rates}).reset_index()
    order = {kind: i for i, kind in enumerate(CANARY_KINDS)}
    return table.sort_values(["property", "kind"], key=lambda c: c.map(order) if c.name == "kind" else c,
                             ignore_index=True)


def property_table(wordings: pd.DataFrame) -> pd.DataFrame:
    """Per property and detection score: Δ, σ, mean, best and worst wording, τ dev vs test, from a
    `wordings` table alone (the report rebuilds it from the stored asset)."""
    n_subjects = wordings.groupby("property")["n_subjects"].max()
    rows = []
    for prop, block in wordings.groupby("property", sort=True):
        block = block.set_index("variant_id")
        for detection in _detections(wordings):
            summary = sensitivity(block[detection])
            row = {"property": prop, "detection": detection, **{k: summary[k] for k in ("delta", "sigma", "mean")}}
            for side in ("best", "worst"):
                variant = summary[side]
                row[f"{side}_variant"] = variant
                row[f"{side}_kind"] = None if variant is None else block.at[variant, "kind"]
                row[f"{side}_template"] = None if variant is None else block.at[variant, "template"]
                row[f"{side}_score"] = np.nan if variant is None else block.at[variant, detection]
            row["tau_dev_test"] = kendall_tau(block[f"{detection}_dev"], block[f"{detection}_test"])
            row["n_wordings"] = summary["n_prompts"]
            row["n_subjects"] = int(n_subjects.get(prop, 0))
            rows.append(row)
    return pd.DataFrame(rows)


def _overall_table(wordings: pd.DataFrame, properties: pd.DataFrame) -> pd.DataFrame:
    """Per detection score: Δ, σ across the variant slots (slot score = mean over properties:
    baseline, paraphrase 1, ... are the same slot in every property), the mean of the properties'
    Δ and σ, and τ dev vs test over every wording pooled."""
    rows = []
    indexed = wordings.set_index(WORDING_KEYS)
    for detection in _detections(wordings):
        slots = wordings.groupby("variant_id")[detection].mean()
        summary = sensitivity(slots)
        per_property = properties[properties["detection"] == detection]
        rows.append({
            "detection": detection, "delta": summary["delta"], "sigma": summary["sigma"], "mean": summary["mean"],
            "best_slot": summary["best"], "worst_slot": summary["worst"],
            "mean_property_delta": per_property["delta"].mean(), "mean_property_sigma": per_property["sigma"].mean(),
            "tau_dev_test": kendall_tau(indexed[f"{detection}_dev"], indexed[f"{detection}_test"]),
            "n_wordings": int(indexed[detection].notna().sum()),
            "n_properties": int(per_property["property"].nunique()),
        })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- strategies

def _chosen(dev_scores: pd.Series, test_scores: pd.Series, best: bool) -> tuple:
    """The wording chosen on dev (highest or lowest dev score) and its test score."""
    dev_scores = dev_scores.dropna()
    if dev_scores.empty:
        return None, np.nan
    variant = dev_scores.idxmax() if best else dev_scores.idxmin()
    return variant, float(test_scores.get(variant, np.nan))


def _property_strategies(prop: str, conf: WordingConfidences, wordings: pd.DataFrame, pairs: pd.DataFrame,
                         test: set, member: pd.Series | None) -> list[dict]:
    block = wordings[wordings["property"] == prop].set_index("variant_id")
    cands = conf.candidates[(conf.candidates["property"] == prop) & conf.candidates["subject_qid"].isin(test)]
    rows = {name: {"property": prop, "strategy": name} for name in (BEST_WORDING, WORST_WORDING, *ENSEMBLES,
                                                                     *RULES, M_SCORE)}
    for name, best in ((BEST_WORDING, True), (WORST_WORDING, False)):
        for detection in _detections(wordings):
            variant, score = _chosen(block[f"{detection}_dev"], block[f"{detection}_test"], best)
            rows[name][f"{detection}_variant"] = variant
            rows[name][f"{detection}_test"] = score

    # Truths vs counterfactuals: s per candidate across the wordings, candidates in all wordings only.
    wide = cands.set_index(["subject_qid", "value", "variant_id"])["s"].unstack("variant_id").dropna()
    if len(wide):
        is_g = cands.groupby(["subject_qid", "value"])["is_g"].any().reindex(wide.index).to_numpy()
        scores = ensemble_scores(wide, is_g, block[f"{TRUTH_AUC}_dev"], wide.index.get_level_values("subject_qid"))
        for name in ENSEMBLES:
            rows[name][f"{TRUTH_AUC}_test"] = scores[name]

    test_pairs = pairs[(pairs["property"] == prop) & pairs["subject_qid"].isin(test)]
    for name in RULES:
        if name in test_pairs.columns:
            rows[name]["flagged_share_test"] = float(test_pairs[name].mean()) if len(test_pairs) else np.nan
    if member is not None:
        ranks = conf.rankings[(conf.rankings["property"] == prop) & conf.rankings["subject_qid"].isin(test)]
        pair_conf = ranks.set_index(["subject_qid", "variant_id"])["truth_confidence"].unstack("variant_id").dropna()
        is_member = pair_conf.index.to_series().map(member)
        pair_conf, is_member = pair_conf[is_member.notna().to_numpy()], is_member.dropna().astype(bool)
        if len(pair_conf):
            scores = ensemble_scores(pair_conf, is_member.to_numpy(), block[f"{MEMBER_AUC}_dev"], None)
            for name in ENSEMBLES:
                rows[name][f"{MEMBER_AUC}_test"] = scores[name]
        known = test_pairs.assign(member=test_pairs["subject_qid"].map(member)).dropna(subset=["member"])
        is_member = known["member"].astype(bool).to_numpy()
        for name in (*RULES, M_SCORE):
            if name not in known.columns:
                continue
            rows[name][f"{MEMBER_AUC}_test"] = m_mem(known[name].astype(float), is_member)
            if name in RULES:
                rows[name]["flagged_share_members_test"] = float(known.loc[is_member, name].mean())
                rows[name]["flagged_share_non_members_test"] = float(known.loc[~is_member, name].mean())
    return list(rows.values())


def _family(strategy: str) -> str:
    if strategy in (BEST_WORDING, WORST_WORDING):
        return WORDING_FAMILY
    return ENSEMBLE_FAMILY if strategy in ENSEMBLES else RULE_FAMILY


def _strategy_table(conf: WordingConfidences, wordings: pd.DataFrame, pairs: pd.DataFrame, test: set,
                    member: pd.Series | None) -> pd.DataFrame:
    """Each way to use the wordings, judged on the test half (see `WordingSensitivity.strategies`)."""
    rows = [row for prop in sorted(wordings["property"].unique())
            for row in _property_strategies(prop, conf, wordings, pairs, test, member)]
    table = pd.DataFrame(rows)
    score_columns = [f"{d}_test" for d in _detections(wordings)]
    share_columns = ["flagged_share_test", "flagged_share_members_test", "flagged_share_non_members_test"]
    for column in [*score_columns, *share_columns]:
        if column not in table.columns:
            table[column] = np.nan
    pooled = table.groupby("strategy", sort=False)[score_columns].mean().reset_index()
    pooled.insert(0, "property", ALL_PROPERTIES)
    test_pairs = pairs[pairs["subject_qid"].isin(test)]
    if member is not None:
        test_pairs = test_pairs.assign(member=test_pairs["subject_qid"].map(member))
    for name in RULES:
        if name not in test_pairs.columns:
            continue
        at = pooled["strategy"] == name
        pooled.loc[at, "flagged_share_test"] = test_pairs[name].mean()
        if member is not None:
            for column, side in (("flagged_share_members_test", True), ("flagged_share_non_members_test", False)):
                pooled.loc[at, column] = test_pairs.loc[test_pairs["member"].eq(side), name].mean()
    table = pd.concat([table, pooled], ignore_index=True)
    table.insert(2, "family", table["strategy"].map(_family))
    variant_columns = [f"{d}_variant" for d in _detections(wordings)]
    ordered = ["property", "strategy", "family", *score_columns, *share_columns, *variant_columns]
    table = table.reindex(columns=ordered)
    return table.astype({column: "Int64" for column in variant_columns})


# --------------------------------------------------------------------------- one model

@dataclass
class WordingSensitivity:
    """Prompt sensitivity of one model's audit.

    wordings: property, variant_id, kind, template, n_subjects, truth_auc, truth_auc_dev,
      truth_auc_test[, member_auc, member_auc_dev, member_auc_test, n_members, n_non_members] —
      truth_auc = truths vs counterfactuals (within each ranking, mean over subjects), member_auc =
      members vs non-members (pairs, confidence = truth confidence); _dev / _test: on that half.
    properties: per property and detection (truth_auc | member_auc): delta (best − worst wording),
      sigma (population std over wordings), mean, best_/worst_ variant, kind, template, score,
      tau_dev_test (Kendall τ-b of the wordings' dev-half vs test-half scores), n_wordings, n_subjects.
    overall: per detection: delta, sigma, mean, best_slot, worst_slot across the variant slots
      (slot score = mean over properties), mean_property_delta / _sigma, tau_dev_test over all
      wordings pooled, n_wordings, n_properties.
    strategies: per property (and ALL_PROPERTIES = mean of the properties' AUCs, flagged shares
      over all test pairs) and strategy, on the test half: truth_auc_test, member_auc_test,
      flagged_share_test (rules: share of pairs flagged), flagged_share_members_test (TPR) and
      flagged_share_non_members_test (FPR), truth_auc_variant / member_auc_variant (the wording
      chosen on dev by that score). Strategies: best_wording / worst_wording (chosen on dev), the
      five ensembles (weights: dev scores; truth_auc combines s per candidate, member_auc the
      pairs' truth confidences), WikiMem's rules strict / lenient / at_threshold /
      summed_memorized (0/1 verdicts, scored kinds only) and M (the share itself as a score).
    """
    wordings: pd.DataFrame
    properties: pd.DataFrame
    overall: pd.DataFrame
    strategies: pd.DataFrame
    dev_subjects: list[str]
    test_subjects: list[str]
    confidences: WordingConfidences
    pairs: pd.DataFrame  # WikiMem's per-pair M and verdicts (memorization.pair_metrics)


def wording_sensitivity(scores: pd.DataFrame, templates: pd.DataFrame | None = None,
                        membership: Mapping[str, bool] | pd.Series | pd.DataFrame | None = None,
                        seed: int = 0, include_contextualized: bool = True, *, alpha: float = 1.0,
                        m_threshold: float = M_THRESHOLD,
                        embed: Callable[[list[str]], np.ndarray] | None = None,
                        value_aliases: Mapping[str, Sequence[str]] | None = None,
                        cohorts: Mapping[str, str] | pd.Series | None = None) -> WordingSensitivity:
    """Every wording's detection scores, their spread per property and overall, and the ways to
    combine wordings judged on held-out subjects (see `WordingSensitivity`).

    scores: one model's scores table (memorization.py format); templates: the canary templates
    (for the text); membership: subject_qid -> member (mapping, Series or frame with subject_qid,
    member), enables member_auc; seed: the dev/test halves of the subjects; include_contextualized:
    whether the contextualized wording counts among the wordings (never in M); cohorts:
    subject_qid -> cohort, adds a rank-1 rate per cohort to every wording.
    """
    if "model" in scores.columns and scores["model"].nunique() > 1:
        raise ValueError("scores holds several models: run wording_sensitivity per model, then across_models")
    prepared = prepare_scores(scores, alpha, embed, value_aliases)
    kinds = _kind_series(prepared)
    used = prepared if include_contextualized else prepared[~kinds.isin(list(CONTEXTUALIZED_KINDS)).to_numpy()]
    conf = _confidences(used.reset_index(drop=True))
    if templates is not None and conf.candidates["kind"].isna().all():
        kind_of = templates.set_index(WORDING_KEYS)["kind"]
        for frame in (conf.candidates, conf.rankings):
            frame["kind"] = pd.MultiIndex.from_frame(frame[WORDING_KEYS]).map(kind_of)
    dev, test = halves(prepared["subject_qid"].astype(str), seed)
    member = _membership_series(membership)
    cohort_series = pd.Series(cohorts, dtype=object) if cohorts is not None else None
    wordings = _wording_table(conf, set(dev), set(test), member, templates, cohort_series)
    properties = property_table(wordings)
    overall = _overall_table(wordings, properties)
    _, variants = variant_metrics(prepared)
    _, summed_pairs = summed_candidates(prepared)
    pairs = pair_metrics(variants, summed_pairs, m_threshold)
    strategies = _strategy_table(conf, wordings, pairs, set(test), member)
    return WordingSensitivity(wordings, properties, overall, strategies, dev, test, conf, pairs)


# --------------------------------------------------------------------------- across models

@dataclass
class AcrossModels:
    """Do the same wordings reveal the most on every model?

    scores: index (property, variant_id), one column per model: the chosen detection score.
    wordings: property, variant_id, kind, template (the canary text, shared by the models).
    kendall: model × model τ-b over all wordings. kendall_by_property: property, model_a, model_b,
    tau (each unordered pair once). revealing: per property: most_ / least_ variant, kind,
    template, mean_score (mean over the models that scored the wording), mean_tau (mean τ between
    the models over that property's wordings), n_models.
    """
    scores: pd.DataFrame
    wordings: pd.DataFrame
    kendall: pd.DataFrame
    kendall_by_property: pd.DataFrame
    revealing: pd.DataFrame


WORDING_TEXT = ("kind", "template")  # the columns of the across-models table that are not a release


def release_kendall(scores: pd.DataFrame) -> pd.DataFrame:
    """Kendall τ-b of the wordings' scores between every two releases (release × release): the one
    place τ between releases is computed. `scores`: one row per wording and one column per release
    (`AcrossModels.scores`), or the stored across-models table (WORDING_KEYS, kind, template and one
    column per release)."""
    if set(WORDING_KEYS) <= set(scores.columns):
        scores = scores.set_index(WORDING_KEYS)
    return kendall_matrix(scores.drop(columns=[c for c in WORDING_TEXT if c in scores.columns]))


def kendall_between_releases(table: pd.DataFrame | None) -> pd.DataFrame | None:
    """`release_kendall` of a stored across-models table; None without two releases to compare."""
    if table is None or not len(table):
        return None
    matrix = release_kendall(table)
    return matrix if len(matrix) > 1 else None


def across_models(per_model_wordings: Mapping[str, pd.DataFrame], score: str = TRUTH_AUC) -> AcrossModels:
    """Wording × model table of `score` (a `WordingSensitivity.wordings` column, e.g. truth_auc or
    member_auc), Kendall τ between models overall and per property, and per property the wordings
    with the highest and lowest mean score across models."""
    columns = {model: frame.set_index(WORDING_KEYS)[score] for model, frame in per_model_wordings.items()}
    table = pd.DataFrame(columns).sort_index()
    table.columns.name = "model"
    text = pd.concat([frame[[*WORDING_KEYS, "kind", "template"]] for frame in per_model_wordings.values()]) \
        .sort_values("template", na_position="last", kind="stable").drop_duplicates(WORDING_KEYS) \
        .sort_values(WORDING_KEYS).reset_index(drop=True)
    models = list(table.columns)
    tau_rows = []
    for prop, block in table.groupby(level="property", sort=True):
        matrix = kendall_matrix(block)
        tau_rows += [{"property": prop, "model_a": a, "model_b": b, "tau": matrix.at[a, b]}
                     for i, a in enumerate(models) for b in models[i + 1:]]
    by_property = pd.DataFrame(tau_rows, columns=["property", "model_a", "model_b", "tau"])
    mean = table.mean(axis=1).rename("mean_score").to_frame().join(text.set_index(WORDING_KEYS))
    revealing = []
    for prop, block in mean.groupby(level="property", sort=True):
        block = block.droplevel("property")
        row = {"property": prop}
        for side, pick in (("most", block["mean_score"].idxmax), ("least", block["mean_score"].idxmin)):
            variant = pick() if block["mean_score"].notna().any() else None
            row[f"{side}_variant"] = variant
            for field in ("kind", "template", "mean_score"):
                row[f"{side}_{field}"] = None if variant is None else block.at[variant, field]
        row["mean_tau"] = by_property.loc[by_property["property"] == prop, "tau"].mean()
        row["n_models"] = int(table.loc[prop].notna().any().sum())
        revealing.append(row)
    return AcrossModels(table, text, release_kendall(table), by_property, pd.DataFrame(revealing))


# --------------------------------------------------------------------------- figures

def wording_figure(wordings: pd.DataFrame, score: str = TRUTH_AUC, title: str | None = None):
    """One model's wordings as points per property (hover: the template), the best wording a green
    star, the worst a red cross, chance (0.5) dashed."""
    import plotly.graph_objects as go

    fig = go.Figure()
    data = wordings.dropna(subset=[score])
    best = data.loc[data.groupby("property")[score].idxmax()]
    worst = data.loc[data.groupby("property")[score].idxmin()]
    styles = (("wordings", data, dict(size=8, color="#7f8c8d", opacity=0.7)),
              ("best", best, dict(size=15, color="#1e8449", symbol="star")),
              ("worst", worst, dict(size=13, color="#c0392b", symbol="x")))
    for name, frame, marker in styles:
        hover = [f"variant {v} ({k})<br>{t}" for v, k, t in zip(frame["variant_id"], frame["kind"], frame["template"])]
        fig.add_trace(go.Scatter(x=frame["property"], y=frame[score], mode="markers", name=name, marker=marker,
                                 text=hover, hovertemplate="%{x}: %{y:.3f}<br>%{text}<extra></extra>"))
    fig.add_hline(y=0.5, line_dash="dash", line_color="#95a5a6")
    fig.update_layout(title=title or f"{score} of every wording, per property", xaxis_title="property",
                      yaxis_title=f"{score} (0.5 = chance)", yaxis_range=[0, 1.02])
    return fig
