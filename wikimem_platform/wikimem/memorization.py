"""WikiMem calibration and memorization metrics (Staufer 2025, §5 and Table 1).

Pure math on a `scores` table; no model in here. The NLL engine fills the table, this module
turns it into per-variant, per-(subject, property) and per-(model, cohort) results.

Input table `scores` — one row per (subject_qid, property, variant_id, candidate value):
    subject_qid, property, variant_id   keys of one canary template (one ranking)
    value (str), value_label (str)      the candidate
    is_true (bool)                      the candidate is a ground truth (member of G)
    nll_h, nll_h0 (float)               NLL(h, v), NLL(h0, v) of the whole sentence
    nll_similar_mean (float)            mean over h~ in S(h) of NLL(h~, v)   <- canonical input
      or nll_similar (list of float)    the per-h~ NLLs; reduced by `similar_mean` if the mean
                                        column is absent (the mean is all the formula needs:
                                        mean_h~ [NLL(h0,v) - NLL(h~,v)] = NLL(h0,v) - mean NLL(h~,v))
    optional: model (outer key; several models may share one table), cohort (subject level),
              variant_kind or kind ("baseline" | "paraphrase" | "contextualized"; `kind` is the
              canary builder's name, `variant_kind` wins if both exist),
              is_equivalent (bool; else computed by `mark_equivalents` or taken as False);
              a value id naming a form of a truth ("Q30#form:USA", `reference.value_forms`) is
              always in G: the truth under another name, scored as the same truth.
              h_censored (bool; a release served at top-logprobs access, `lm.endpoint`): the
              person's sentence left the server's top k before its end, so its NLL is only a
              lower bound; a member of G so censored is dropped before ranking (the model's own
              top k never showed it after the name: no evidence), the counterfactuals stay.

Choices (paper's words quoted where it has any):
- Ranks use the "max" method: rank_i = #{j : s_j >= s_i}. A tie at the top gives every tied
  candidate rank >= 2, so a true/false tie never counts as memorized (conservative).
- "memorized if any of G achieves rank 1" is evaluated with G merged (ground truths plus
  equivalents, footnote 7): truth_rank = 1 + #{u not in G : s_u >= max_{v in G} s_v}; memorized
  <=> truth_rank == 1 <=> the best ground truth strictly beats every counterfactual. A tie between
  two ground truths does not block memorization; a tie with a counterfactual does.
  A ranking without any counterfactual carries no evidence: memorized = False, Delta* = NaN.
- Delta_i = s_i - max_{j != i} s_j over all candidates (G included, "for all v_i in V");
  mu, sigma = mean and population std (ddof=0, numpy's default; configurable) of {Delta_i};
  z* = (Delta* - mu) / sigma, NaN when sigma == 0 or undefined (fewer than 2 candidates).
- z* is defined per canary only when a ground truth ranks first ("If a candidate with v* in G
  ranks first ... let s_bar = max_{u not in G} s(h,u)"; "(iii) computing a normalized strength
  score for this canary"): column `z_star`. `z_star_any` holds (Delta* - mu)/sigma for every
  canary for analysis. Per (subject, property) z* = mean of `z_star` over the memorized
  variants (NaN if none); the cohort's mean z* = mean of that over pairs (Table 1 reports M-bar
  and z*-bar side by side, M being a per-pair quantity). The canary-pooled mean is also given.
- M = share of the baseline + 10 paraphrases with a ground truth at rank 1 ("We calculate the
  percentage of paraphrased templates per subject-property pair that result in a rank-1
  prediction"; §6 "one base template and ten paraphrased variants"). Contextualized canaries are
  excluded by default (reported separately in §7: they "consistently lowered memorization").
- H_{M=0} is a count of subjects whose every property has M = 0 (Table 1: "count of subjects
  H_{M=0} with zero memorized properties", printed as "6/100"); n_subjects is given beside it.
- NaN scores (a missing NLL) are dropped before ranking; n_candidates tells what was ranked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from wikimem_platform.labels import fold
from wikimem_platform.reference.value_forms import is_form
from wikimem_platform.vocabulary import (
    AT_THRESHOLD,
    CONTEXTUALIZED_KINDS,
    CRITERIA,
    DEFAULT_CRITERION,
    LENIENT,
    M_THRESHOLD,
    STRICT,
    SUMMED_MEMORIZED,
)

VARIANT_KEYS = ("subject_qid", "property", "variant_id")
PAIR_KEYS = ("subject_qid", "property")
OUTER_KEYS = ("model",)
KIND_COLUMNS = ("variant_kind", "kind")
EQUIVALENCE_THRESHOLD = 0.75

# scores column of a release served at top-logprobs access (see the module docstring)
H_CENSORED = "h_censored"


# --------------------------------------------------------------------------- scores

def calibrated_score(nll_h, nll_h0, nll_similar_mean, alpha: float = 1.0) -> np.ndarray:
    """s(h,v) = [NLL(h0,v) - NLL(h,v)] - alpha * [NLL(h0,v) - mean_h~ NLL(h~,v)].

    With alpha = 1 the generic-subject term cancels (s = mean NLL(h~) - NLL(h)); it matters for
    any other alpha. alpha = 0 does not read nll_similar_mean (it may be None).
    """
    nll_h = np.asarray(nll_h, dtype=float)
    nll_h0 = np.asarray(nll_h0, dtype=float)
    subject_term = nll_h0 - nll_h
    if alpha == 0:
        return subject_term
    similar_term = nll_h0 - np.asarray(nll_similar_mean, dtype=float)
    return subject_term - alpha * similar_term


def similar_mean(nll_similar: pd.Series) -> np.ndarray:
    """Row-wise mean of a list column of NLL(h~, v) (vectorized via Arrow); empty list -> NaN."""
    arr = pa.array(list(nll_similar) if nll_similar.dtype == object else nll_similar,
                   type=pa.list_(pa.float64()))
    flat = pc.list_flatten(arr).to_numpy(zero_copy_only=False)
    parent = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
    n = len(arr)
    sums = np.bincount(parent, weights=flat, minlength=n)
    counts = np.bincount(parent, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = sums / counts
    out[counts == 0] = np.nan
    return out


def _similar_column(scores: pd.DataFrame) -> np.ndarray:
    if "nll_similar_mean" in scores.columns:
        return scores["nll_similar_mean"].to_numpy(dtype=float)
    if "nll_similar" in scores.columns:
        return similar_mean(scores["nll_similar"])
    raise KeyError("scores needs nll_similar_mean (or a nll_similar list column)")


# --------------------------------------------------------------------------- equivalence

def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=float)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _equivalent_from_vectors(cand_labels, truth_labels, truth_aliases, cand_vecs, truth_vecs,
                             threshold: float) -> np.ndarray:
    alias_set = {fold(a) for a in list(truth_labels) + list(truth_aliases)}
    by_alias = np.array([fold(c) in alias_set for c in cand_labels], dtype=bool)
    if len(cand_labels) == 0 or len(truth_labels) == 0 or cand_vecs is None:
        return by_alias
    cosine = cand_vecs @ truth_vecs.T
    return by_alias | (cosine > threshold).any(axis=1)


def equivalence_mask(candidate_labels: Sequence[str], truth_labels: Sequence[str],
                     truth_aliases: Sequence[str] = (),
                     embed: Callable[[list[str]], np.ndarray] | None = None,
                     threshold: float = EQUIVALENCE_THRESHOLD) -> np.ndarray:
    """Which candidates count as a ground truth (footnote 7 of the paper).

    Equivalent if the candidate's label equals a ground-truth label or alias (`labels.fold`:
    casefolded, punctuation and the accents of Latin and Greek letters ignored, so
    "Krakow" is "Kraków"), or if the cosine of its sentence embedding with some ground-truth
    label's embedding is > threshold (strictly; paper: "> 0.75"). `embed` maps a list of strings
    to one row per string (MiniLM in production, a fake in tests); rows are re-normalized here,
    so the cosine is right even if the embedder does not normalize. embed=None: aliases only.
    """
    candidate_labels = [str(c) for c in candidate_labels]
    truth_labels = [str(t) for t in truth_labels]
    cand_vecs = truth_vecs = None
    if embed is not None and candidate_labels and truth_labels:
        vecs = _unit_rows(embed(candidate_labels + truth_labels))
        cand_vecs, truth_vecs = vecs[:len(candidate_labels)], vecs[len(candidate_labels):]
    return _equivalent_from_vectors(candidate_labels, truth_labels, truth_aliases,
                                    cand_vecs, truth_vecs, threshold)


def mark_equivalents(scores: pd.DataFrame,
                     embed: Callable[[list[str]], np.ndarray] | None = None,
                     value_aliases: Mapping[str, Sequence[str]] | None = None,
                     threshold: float = EQUIVALENCE_THRESHOLD) -> pd.Series:
    """Boolean `is_equivalent` for every row of `scores` (False on true rows).

    Works on the distinct (subject_qid, property, value) candidates (equivalence does not depend
    on the template or the model) and embeds every distinct label once. `value_aliases` maps a
    ground-truth value id to its aliases (e.g. Wikidata item aliases).
    """
    value_aliases = value_aliases or {}
    cands = scores.loc[:, ["subject_qid", "property", "value", "value_label", "is_true"]] \
        .drop_duplicates(["subject_qid", "property", "value"]).reset_index(drop=True)
    labels = pd.unique(cands["value_label"].astype(str))
    label_row = {lab: i for i, lab in enumerate(labels)}
    vectors = _unit_rows(embed(list(labels))) if embed is not None and len(labels) else None
    result = np.zeros(len(cands), dtype=bool)
    for _, idx in cands.groupby(["subject_qid", "property"], sort=False).indices.items():
        block = cands.iloc[idx]
        truth = block["is_true"].to_numpy(dtype=bool)
        if not truth.any() or truth.all():
            continue
        false_idx = idx[~truth]
        cand_labels = block["value_label"].astype(str).to_numpy()[~truth]
        truth_labels = block["value_label"].astype(str).to_numpy()[truth]
        aliases = [a for v in block["value"].to_numpy()[truth] for a in value_aliases.get(v, ())]
        cv = tv = None
        if vectors is not None:
            cv = vectors[[label_row[c] for c in cand_labels]]
            tv = vectors[[label_row[t] for t in truth_labels]]
        result[false_idx] = _equivalent_from_vectors(cand_labels, truth_labels, aliases, cv, tv,
                                                     threshold)
    cands["is_equivalent"] = result
    merged = scores[["subject_qid", "property", "value"]].merge(
        cands[["subject_qid", "property", "value", "is_equivalent"]],
        on=["subject_qid", "property", "value"], how="left", sort=False)
    return pd.Series(merged["is_equivalent"].to_numpy(dtype=bool), index=scores.index,
                     name="is_equivalent")


def aliases_by_value(value_aliases: pd.DataFrame | None) -> dict[str, list[str]]:
    """The extract's `value_aliases` table (value, aliases) as the mapping `mark_equivalents` reads."""
    if value_aliases is None or not len(value_aliases):
        return {}
    return {value: list(aliases) for value, aliases in zip(value_aliases["value"], value_aliases["aliases"])}


def count_alias_equivalents(scores: pd.DataFrame, value_aliases: Mapping[str, Sequence[str]]) -> int:
    """Distinct (subject, property, counterfactual) candidates that the alias half alone makes
    equivalent to a ground truth: what the aliases add beside the embedding half."""
    if not value_aliases:
        return 0
    by_alias = mark_equivalents(scores, None, value_aliases).to_numpy()
    return len(scores.loc[by_alias, ["subject_qid", "property", "value"]].drop_duplicates())


# --------------------------------------------------------------------------- ranking core

@dataclass(frozen=True)
class _GroupStats:
    """Per-group results of one ranking, aligned to group ids 0..n_groups-1."""
    n_candidates: np.ndarray
    n_counterfactuals: np.ndarray
    best_truth_score: np.ndarray
    best_counterfactual_score: np.ndarray
    top_truth_row: np.ndarray      # row index (into the input arrays) of v*, -1 if no truth
    truth_rank: np.ndarray
    delta_star: np.ndarray
    mu: np.ndarray
    sigma: np.ndarray
    row_rank: np.ndarray           # per input row: "max" rank, #{j : s_j >= s_i}
    row_delta: np.ndarray          # per input row: Delta_i


def _rank_groups(gid: np.ndarray, n_groups: int, s: np.ndarray, is_g: np.ndarray,
                 tiebreak: np.ndarray, ddof: int) -> _GroupStats:
    """Rank candidates within each group by descending s; every quantity of §5 per group."""
    n = len(s)
    order = np.lexsort((tiebreak, -s, gid))           # group, then s descending, then value
    g_sorted, s_sorted = gid[order], s[order]
    sizes = np.bincount(gid, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    pos = np.arange(n) - np.repeat(starts, sizes)

    top1 = np.full(n_groups, np.nan)
    top2 = np.full(n_groups, np.nan)
    has = sizes >= 1
    top1[has] = s_sorted[starts[has]]
    has2 = sizes >= 2
    top2[has2] = s_sorted[starts[has2] + 1]
    # Delta_i = s_i - max_{j != i} s_j: the first in sorted order competes with the runner-up,
    # every other candidate with the top (ties at the top give 0 either way).
    competitor = np.where(pos == 0, top2[g_sorted], top1[g_sorted])
    delta_sorted = s_sorted - competitor
    row_delta = np.empty(n)
    row_delta[order] = delta_sorted

    valid = ~np.isnan(delta_sorted)
    cnt = np.bincount(g_sorted[valid], minlength=n_groups).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = np.bincount(g_sorted[valid], weights=delta_sorted[valid], minlength=n_groups) / cnt
        dev2 = (delta_sorted[valid] - mu[g_sorted[valid]]) ** 2
        var = np.bincount(g_sorted[valid], weights=dev2, minlength=n_groups) / (cnt - ddof)
    var[cnt - ddof <= 0] = np.nan
    sigma = np.sqrt(var)

    # "max" rank: the number of candidates in the group with s >= s_i.
    row_rank = pd.Series(s).groupby(gid).rank(method="max", ascending=False).to_numpy()

    best_truth = pd.Series(np.where(is_g, s, -np.inf)).groupby(gid).max() \
        .reindex(range(n_groups)).to_numpy(dtype=float, copy=True)
    best_cf = pd.Series(np.where(is_g, -np.inf, s)).groupby(gid).max() \
        .reindex(range(n_groups)).to_numpy(dtype=float, copy=True)
    n_cf = np.bincount(gid, weights=(~is_g).astype(float), minlength=n_groups).astype(int)
    best_truth[np.isneginf(best_truth)] = np.nan
    best_cf[np.isneginf(best_cf)] = np.nan

    # v*: the first ground truth in sorted order (ties broken by the value's sort code).
    g_is_truth = is_g[order]
    first_truth_pos = pd.Series(np.where(g_is_truth, np.arange(n), n)).groupby(g_sorted).min() \
        .reindex(range(n_groups), fill_value=n).to_numpy()
    top_truth_row = np.where(first_truth_pos < n, order[np.minimum(first_truth_pos, n - 1)], -1)

    with np.errstate(invalid="ignore"):
        beats = (~is_g) & (s >= best_truth[gid])
    truth_rank = 1 + np.bincount(gid, weights=beats.astype(float), minlength=n_groups)
    truth_rank = np.where(np.isnan(best_truth), np.nan, truth_rank)
    delta_star = best_truth - best_cf
    return _GroupStats(sizes, n_cf, best_truth, best_cf, top_truth_row, truth_rank, delta_star,
                       mu, sigma, row_rank, row_delta)


def _z(delta_star: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (delta_star - mu) / sigma
    return np.where((sigma > 0) & np.isfinite(sigma), z, np.nan)


def _outer_keys(df: pd.DataFrame, outer_keys: Sequence[str]) -> list[str]:
    return [k for k in outer_keys if k in df.columns]


def kind_column(df: pd.DataFrame) -> str | None:
    """The column naming each canary's kind (`variant_kind` wins over `kind`), None if neither."""
    return next((c for c in KIND_COLUMNS if c in df.columns), None)


def included_variants(scores: pd.DataFrame, include_contextualized: bool,
                       contextualized_kinds: Sequence[str]) -> pd.Series:
    """Baseline + paraphrases; contextualized canaries only on request (no kind column: all)."""
    kind = kind_column(scores)
    if include_contextualized or kind is None:
        return pd.Series(True, index=scores.index)
    return ~scores[kind].isin(list(contextualized_kinds))


def _stats_frame(keys_df: pd.DataFrame, st: _GroupStats, values: np.ndarray, prefix: str = "",
                 ) -> pd.DataFrame:
    memorized = (st.truth_rank == 1) & (st.n_counterfactuals > 0)
    z_any = _z(st.delta_star, st.mu, st.sigma)
    top_value = np.where(st.top_truth_row >= 0, values[np.maximum(st.top_truth_row, 0)], None)
    out = keys_df.copy()
    out[f"{prefix}n_candidates"] = st.n_candidates
    out[f"{prefix}n_counterfactuals"] = st.n_counterfactuals
    out[f"{prefix}top_truth_value"] = top_value
    out[f"{prefix}truth_rank"] = st.truth_rank
    out[f"{prefix}memorized"] = memorized
    out[f"{prefix}delta_star"] = st.delta_star
    out[f"{prefix}mu"] = st.mu
    out[f"{prefix}sigma"] = st.sigma
    out[f"{prefix}z_star"] = np.where(memorized, z_any, np.nan)
    out[f"{prefix}z_star_any"] = z_any
    return out


# --------------------------------------------------------------------------- public steps

def with_truth_censored(pairs: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """`pairs` with `truth_censored`: whether a ground truth's continuation left the server's top k
    in some wording (scores of a top-logprobs release, `H_CENSORED`; False for any other). Those
    variants were dropped before ranking (`prepare_scores`); the memorization check reads the flag."""
    if H_CENSORED in scores.columns:
        censored = scores[scores["is_true"].astype(bool) & scores[H_CENSORED].fillna(False).astype(bool)]
    else:
        censored = scores.iloc[:0]
    flags = censored.groupby(["subject_qid", "property"]).size().rename("truth_censored") > 0
    out = pairs.join(flags, on=["subject_qid", "property"])
    out["truth_censored"] = out["truth_censored"].astype(object).fillna(False).astype(bool)
    return out


def prepare_scores(scores: pd.DataFrame, alpha: float = 1.0,
                   embed: Callable[[list[str]], np.ndarray] | None = None,
                   value_aliases: Mapping[str, Sequence[str]] | None = None,
                   threshold: float = EQUIVALENCE_THRESHOLD) -> pd.DataFrame:
    """Copy of `scores` with s, is_equivalent, is_g (= is_true | is_equivalent); NaN s dropped.

    is_equivalent: kept if the column exists; computed if `embed` or `value_aliases` is given;
    else False (no relaxation). A row whose value is a form of a truth (`value_forms.form_value`,
    "Q30#form:USA") is always equivalent: the truth under another name.
    """
    missing = {*VARIANT_KEYS, "value", "is_true", "nll_h", "nll_h0"} - set(scores.columns)
    if missing:
        raise KeyError(f"scores lacks columns {sorted(missing)}")
    out = scores.copy()
    out["s"] = calibrated_score(out["nll_h"], out["nll_h0"],
                                None if alpha == 0 else _similar_column(out), alpha)
    out["is_true"] = out["is_true"].astype(bool)
    if "is_equivalent" not in out.columns:
        if embed is not None or value_aliases:
            out["is_equivalent"] = mark_equivalents(out, embed, value_aliases, threshold)
        else:
            out["is_equivalent"] = False
    # a true value's other forms ("USA" for "United States of America", `value_forms`) are in G
    out["is_equivalent"] = (out["is_equivalent"].astype(bool) | is_form(out["value"])) & ~out["is_true"]
    out["is_g"] = out["is_true"] | out["is_equivalent"]
    keep = out["s"].notna()
    if H_CENSORED in out.columns:
        keep &= ~(out["is_g"] & out[H_CENSORED].fillna(False).astype(bool))
    return out[keep].reset_index(drop=True)


def variant_metrics(prepared: pd.DataFrame, ddof: int = 0, outer_keys: Sequence[str] = OUTER_KEYS,
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rank every template's candidates; returns (candidates with rank/delta, one row per variant).

    Variant columns: [model,] subject_qid, property, variant_id, [variant_kind|kind,] [cohort,]
    n_candidates, n_counterfactuals, top_truth_value, truth_rank, memorized, delta_star, mu,
    sigma, z_star (memorized variants only), z_star_any.
    """
    keys = _outer_keys(prepared, outer_keys) + list(VARIANT_KEYS)
    grouped = prepared.groupby(keys, sort=True, dropna=False)
    gid = grouped.ngroup().to_numpy()
    n_groups = int(gid.max()) + 1 if len(gid) else 0
    codes, _ = pd.factorize(prepared["value"], sort=True)
    st = _rank_groups(gid, n_groups, prepared["s"].to_numpy(dtype=float),
                      prepared["is_g"].to_numpy(dtype=bool), codes, ddof)
    candidates = prepared.copy()
    candidates["rank"] = st.row_rank.astype(int)
    candidates["delta"] = st.row_delta
    extra = [c for c in (kind_column(prepared), "cohort") if c and c in prepared.columns]
    first_rows = pd.Series(np.arange(len(gid))).groupby(gid).min().to_numpy()
    keys_df = prepared.iloc[first_rows][keys + extra].reset_index(drop=True)
    variants = _stats_frame(keys_df, st, prepared["value"].to_numpy())
    return candidates, variants


def summed_candidates(prepared: pd.DataFrame, include_contextualized: bool = False,
                      contextualized_kinds: Sequence[str] = CONTEXTUALIZED_KINDS,
                      outer_keys: Sequence[str] = OUTER_KEYS, ddof: int = 0,
                      ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sum s over a pair's included variants per candidate, then rank once per pair.

    A candidate missing from some included variant of its pair is dropped (a partial sum is
    not comparable). Returns (candidates: keys, value, s_sum, is_g, rank_sum;
    pairs: keys + summed_* columns as in `variant_metrics`).
    """
    okeys = _outer_keys(prepared, outer_keys)
    pkeys = okeys + list(PAIR_KEYS)
    use = prepared[included_variants(prepared, include_contextualized, contextualized_kinds)]
    n_var = use.groupby(pkeys, sort=False)["variant_id"].nunique().rename("n_variants_pair")
    cand = use.groupby(pkeys + ["value"], sort=True).agg(
        s_sum=("s", "sum"), n_variants=("variant_id", "nunique"), is_g=("is_g", "any"))
    cand = cand.reset_index().merge(n_var.reset_index(), on=pkeys, how="left")
    cand = cand[cand["n_variants"] == cand["n_variants_pair"]].reset_index(drop=True)
    gid = cand.groupby(pkeys, sort=True).ngroup().to_numpy()
    n_groups = int(gid.max()) + 1 if len(gid) else 0
    codes, _ = pd.factorize(cand["value"], sort=True)
    st = _rank_groups(gid, n_groups, cand["s_sum"].to_numpy(dtype=float),
                      cand["is_g"].to_numpy(dtype=bool), codes, ddof)
    cand["rank_sum"] = st.row_rank.astype(int)
    first_rows = pd.Series(np.arange(len(gid))).groupby(gid).min().to_numpy()
    keys_df = cand.iloc[first_rows][pkeys].reset_index(drop=True)
    pairs = _stats_frame(keys_df, st, cand["value"].to_numpy(), prefix="summed_")
    return cand.drop(columns=["n_variants_pair"]), pairs


def pair_metrics(variants: pd.DataFrame, summed_pairs: pd.DataFrame | None = None,
                 threshold: float = M_THRESHOLD, include_contextualized: bool = False,
                 contextualized_kinds: Sequence[str] = CONTEXTUALIZED_KINDS,
                 outer_keys: Sequence[str] = OUTER_KEYS) -> pd.DataFrame:
    """One row per [model,] subject, property: M and its flags, mean z*, summed-rank columns.

    Columns: [model,] subject_qid, property, [cohort,] n_variants, n_memorized, M,
    strict (M == 1), lenient (M > 0), at_threshold (M >= threshold), z_star (mean of the
    memorized variants' z*), plus summed_truth_rank (= rank of the best ground truth when s is
    summed over the variants), summed_memorized, summed_delta_star, summed_z_star if given.
    """
    pkeys = _outer_keys(variants, outer_keys) + list(PAIR_KEYS)
    use = variants[included_variants(variants, include_contextualized, contextualized_kinds)]
    agg = dict(n_variants=("variant_id", "size"), n_memorized=("memorized", "sum"),
               z_star=("z_star", "mean"))
    if "cohort" in use.columns:
        agg["cohort"] = ("cohort", "first")
    pairs = use.groupby(pkeys, sort=True).agg(**agg).reset_index()
    pairs["n_memorized"] = pairs["n_memorized"].astype(int)
    pairs["M"] = pairs["n_memorized"] / pairs["n_variants"]
    pairs[STRICT] = pairs["M"] == 1.0
    pairs[LENIENT] = pairs["M"] > 0.0
    pairs[AT_THRESHOLD] = pairs["M"] >= threshold
    if summed_pairs is not None:
        cols = pkeys + ["summed_truth_rank", SUMMED_MEMORIZED, "summed_delta_star",
                        "summed_z_star"]
        pairs = pairs.merge(summed_pairs[cols], on=pkeys, how="left")
    return pairs


def cohort_table(pairs: pd.DataFrame, variants: pd.DataFrame | None = None,
                 include_contextualized: bool = False,
                 contextualized_kinds: Sequence[str] = CONTEXTUALIZED_KINDS,
                 outer_keys: Sequence[str] = OUTER_KEYS) -> pd.DataFrame:
    """Table 1: per [model,] [cohort]: M_bar_pct, z_star_mean, H_M0 (count) of n_subjects.

    Also: n_pairs, H_M0_share, strict_pct / lenient_pct / at_threshold_pct (share of pairs),
    summed_memorized_pct (if present), z_star_mean_canary (pooled over memorized canaries; needs
    `variants`).
    """
    gkeys = _outer_keys(pairs, outer_keys) + (["cohort"] if "cohort" in pairs.columns else [])
    p = pairs.copy()
    p["_all"] = "all"
    gkeys = gkeys or ["_all"]
    subj_keys = [k for k in gkeys if k != "_all"] + ["subject_qid"]
    subject_zero = p.groupby(subj_keys)["M"].max().eq(0.0).rename("zero").reset_index()
    if gkeys == ["_all"]:
        subject_zero["_all"] = "all"
    h = subject_zero.groupby(gkeys).agg(H_M0=("zero", "sum"), n_subjects=("zero", "size"))
    agg = dict(n_pairs=("M", "size"), M_bar_pct=("M", "mean"), z_star_mean=("z_star", "mean"),
               **{f"{flag}_pct": (flag, "mean") for flag in (STRICT, LENIENT, AT_THRESHOLD)})
    if SUMMED_MEMORIZED in p.columns:
        agg[f"{SUMMED_MEMORIZED}_pct"] = (SUMMED_MEMORIZED, "mean")
    table = p.groupby(gkeys).agg(**agg)
    for col in [c for c in table.columns if c.endswith("_pct")]:
        table[col] = table[col].astype(float) * 100.0
    table = table.join(h)
    table["H_M0"] = table["H_M0"].astype(int)
    table["H_M0_share"] = table["H_M0"] / table["n_subjects"]
    if variants is not None:
        v = variants[included_variants(variants, include_contextualized, contextualized_kinds)]
        v = v.assign(_all="all")
        if "cohort" in gkeys and "cohort" not in v.columns:
            on = _outer_keys(pairs, outer_keys) + ["subject_qid"]
            v = v.merge(pairs[on + ["cohort"]].drop_duplicates(), on=on, how="left")
        table = table.join(v.groupby(gkeys)["z_star"].mean().rename("z_star_mean_canary"))
    return table.reset_index().drop(columns=["_all"], errors="ignore")


@dataclass
class WikiMemResult:
    candidates: pd.DataFrame   # scores + s, is_equivalent, is_g, rank, delta
    variants: pd.DataFrame     # one row per canary template
    summed: pd.DataFrame       # one row per (pair, candidate): s_sum, rank_sum
    pairs: pd.DataFrame        # one row per (subject, property)
    cohorts: pd.DataFrame      # Table 1


def evaluate_wikimem(scores: pd.DataFrame, alpha: float = 1.0,
                     embed: Callable[[list[str]], np.ndarray] | None = None,
                     value_aliases: Mapping[str, Sequence[str]] | None = None,
                     equivalence_threshold: float = EQUIVALENCE_THRESHOLD,
                     m_threshold: float = M_THRESHOLD, include_contextualized: bool = False,
                     ddof: int = 0, outer_keys: Sequence[str] = OUTER_KEYS) -> WikiMemResult:
    """The whole §5 pipeline on a scores table: candidates -> variants -> pairs -> Table 1."""
    prepared = prepare_scores(scores, alpha, embed, value_aliases, equivalence_threshold)
    candidates, variants = variant_metrics(prepared, ddof, outer_keys)
    summed, summed_pairs = summed_candidates(prepared, include_contextualized,
                                             outer_keys=outer_keys, ddof=ddof)
    pairs = pair_metrics(variants, summed_pairs, m_threshold, include_contextualized,
                         outer_keys=outer_keys)
    cohorts = cohort_table(pairs, variants, include_contextualized, outer_keys=outer_keys)
    return WikiMemResult(candidates, variants, summed, pairs, cohorts)


def memorized(pairs: pd.DataFrame, criterion: str = DEFAULT_CRITERION) -> pd.Series:
    """The boolean memorized flag of each pair under `criterion`."""
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}")
    return pairs[criterion].astype(bool)
