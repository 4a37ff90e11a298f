"""How much a memorization verdict depends on the wording of the prompt (NER prompt-sensitivity
paper, ../shared/papers/ner-prompt-memorization.txt, §3.3 and §4.1), in its general form.

A *prompt* k gives every *item* a confidence C_k(item); items are in-sample (positive) or
out-of-sample (negative). For a NER model the items are names and C is the entity confidence; for
a causal model's canaries the items are the candidate values of a ranking (in = a ground truth),
or the (subject, property) pairs of a planted world (in = a member's fact).

- M-MEM_k (eq. 2) = P(C_k(in) > C_k(out)) over all in × out pairs = the ROC AUC (scikit-learn);
  ties count one half (the paper's eq. 2 counts them as losses; with continuous confidences the two
  agree). With `groups`, in and out are only compared inside a group (one ranking) and the AUC is
  the mean over groups that hold both: pooling rankings would compare one subject's scores with
  another's, which sit at different levels.
- Sensitivity Δ = best − worst prompt score; robustness σ = population std over prompts (eq. 3).
- Kendall τ (τ-b, scipy) of two score vectors over the prompts they share: does a good prompt stay
  good on another model, or on another half of the names?
- Ensembles over prompts (§4.1 EPT): majority vote (each in × out comparison decided by the
  share of prompts that rank in above out; a tied vote counts one half), average, weighted (by
  each prompt's M-MEM on a dev split), max and min confidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

MAJORITY_VOTE = "majority_vote"
AVERAGE = "average"
WEIGHTED = "weighted"
MAXIMUM = "max"
MINIMUM = "min"
ENSEMBLES = (MAJORITY_VOTE, AVERAGE, WEIGHTED, MAXIMUM, MINIMUM)


def m_mem(confidence: Sequence[float], is_in: Sequence[bool], groups: Sequence | None = None) -> float:
    """AUC of in-sample vs out-of-sample confidences (NaN when a class is missing everywhere)."""
    confidence = np.asarray(confidence, dtype=float)
    is_in = np.asarray(is_in, dtype=bool)
    if groups is None:
        keep = ~np.isnan(confidence)
        confidence, is_in = confidence[keep], is_in[keep]
        if is_in.all() or not is_in.any():
            return float("nan")
        from sklearn.metrics import roc_auc_score  # imported where used: see wikimem_platform/__init__.py

        return float(roc_auc_score(is_in, confidence))
    keep = ~np.isnan(confidence)
    group_id, uniques = pd.factorize(pd.Series(list(groups))[keep])
    per_group = auc_per_group(confidence[keep], is_in[keep], group_id, len(uniques))
    return float(np.nanmean(per_group)) if np.isfinite(per_group).any() else float("nan")


def auc_per_group(confidence: np.ndarray, is_in: np.ndarray, group_id: np.ndarray, n_groups: int) -> np.ndarray:
    """AUC of in vs out inside each group (`group_id` numbers 0..n_groups-1): Mann-Whitney on
    mid-ranks, ties one half, NaN where a class is missing. Vectorized: a canary audit has 10^5
    rankings, and one scikit-learn call per ranking costs milliseconds each."""
    is_in = np.asarray(is_in, dtype=bool)
    n_in = np.bincount(group_id, weights=is_in, minlength=n_groups)
    n_out = np.bincount(group_id, weights=~is_in, minlength=n_groups)
    mid_rank = pd.Series(np.asarray(confidence, dtype=float)).groupby(group_id).rank(method="average").to_numpy()
    in_rank_sum = np.bincount(group_id, weights=np.where(is_in, mid_rank, 0.0), minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = (in_rank_sum - n_in * (n_in + 1) / 2) / (n_in * n_out)
    return np.where((n_in > 0) & (n_out > 0), auc, np.nan)


def prompt_scores(confidences: pd.DataFrame, is_in: Sequence[bool], groups: Sequence | None = None) -> pd.Series:
    """M-MEM of every prompt: `confidences` has one row per item and one column per prompt."""
    return pd.Series({prompt: m_mem(confidences[prompt], is_in, groups) for prompt in confidences.columns},
                     name="m_mem", dtype=float)


def sensitivity(scores: pd.Series) -> dict:
    """Δ (best − worst), σ (population std), mean, and the best and worst prompts."""
    scores = scores.dropna()
    if scores.empty:
        return {"delta": float("nan"), "sigma": float("nan"), "mean": float("nan"), "best": None, "worst": None,
                "n_prompts": 0}
    return {
        "delta": float(scores.max() - scores.min()),
        "sigma": float(scores.std(ddof=0)),
        "mean": float(scores.mean()),
        "best": scores.idxmax(),
        "worst": scores.idxmin(),
        "n_prompts": int(len(scores)),
    }


def kendall_tau(a: pd.Series, b: pd.Series) -> float:
    """Kendall τ-b over the prompts scored in both (NaN with fewer than 2, or a constant side)."""
    both = pd.concat([a, b], axis=1, join="inner").dropna()
    if len(both) < 2:
        return float("nan")
    from scipy.stats import kendalltau  # imported where used: see wikimem_platform/__init__.py

    tau = kendalltau(both.iloc[:, 0], both.iloc[:, 1]).statistic
    return float(tau)


def kendall_matrix(scores: pd.DataFrame) -> pd.DataFrame:
    """τ between every two columns (models, splits) of a prompt × column score table."""
    columns = list(scores.columns)
    return pd.DataFrame([[kendall_tau(scores[a], scores[b]) for b in columns] for a in columns],
                        index=columns, columns=columns)


def ensemble_confidence(confidences: pd.DataFrame, rule: str, weights: Mapping | pd.Series | None = None) -> pd.Series:
    """One confidence per item from every prompt's: average, weighted (normalized `weights` per
    prompt; prompts without a weight count zero), max or min. Majority vote is not a confidence:
    see `majority_vote_score`."""
    if rule == AVERAGE:
        return confidences.mean(axis=1)
    if rule == MAXIMUM:
        return confidences.max(axis=1)
    if rule == MINIMUM:
        return confidences.min(axis=1)
    if rule == WEIGHTED:
        if weights is None:
            raise ValueError("rule 'weighted' needs weights (each prompt's M-MEM on the dev split)")
        w = pd.Series(weights, dtype=float).reindex(confidences.columns).fillna(0.0)
        if w.sum() <= 0:
            raise ValueError("weights: every prompt's weight is zero or missing")
        return confidences.mul(w, axis=1).sum(axis=1) / w.sum()
    raise ValueError(f"rule: {rule!r} is not one of {', '.join(r for r in ENSEMBLES if r != MAJORITY_VOTE)}")


def majority_vote_score(confidences: pd.DataFrame, is_in: Sequence[bool], groups: Sequence | None = None) -> float:
    """MV (§4.1): each in × out comparison is won when more than half of the prompts rank the
    in-sample item higher (exactly half: one half); the score is the share won (mean over groups)."""
    values = confidences.to_numpy(dtype=float)
    is_in = np.asarray(is_in, dtype=bool)
    labels = np.zeros(len(values), dtype=int) if groups is None else pd.factorize(pd.Series(list(groups)))[0]
    shares = []
    for group in np.unique(labels):
        rows = labels == group
        inside, outside = values[rows & is_in], values[rows & ~is_in]
        if not len(inside) or not len(outside):
            continue
        votes = np.zeros((len(inside), len(outside)))
        for k in range(values.shape[1]):
            votes += np.sign(inside[:, k, None] - outside[None, :, k])  # +1 in above, -1 below, 0 tie
        shares.append(float(np.mean(np.where(votes > 0, 1.0, np.where(votes < 0, 0.0, 0.5)))))
    return float(np.mean(shares)) if shares else float("nan")


def ensemble_scores(confidences: pd.DataFrame, is_in: Sequence[bool], dev_scores: pd.Series,
                    groups: Sequence | None = None) -> pd.Series:
    """M-MEM of each of the five ensembles on these items (weights: the prompts' `dev_scores`;
    weighted is NaN when no prompt has a positive dev score)."""
    out = {MAJORITY_VOTE: majority_vote_score(confidences, is_in, groups)}
    weights = pd.Series(dev_scores, dtype=float).reindex(confidences.columns).fillna(0.0)
    for rule in (AVERAGE, WEIGHTED, MAXIMUM, MINIMUM):
        if rule == WEIGHTED and not weights.sum() > 0:
            out[rule] = float("nan")
            continue
        combined = ensemble_confidence(confidences, rule, dev_scores if rule == WEIGHTED else None)
        out[rule] = m_mem(combined, is_in, groups)
    return pd.Series(out, name="m_mem", dtype=float)


def kendall_heatmap(matrix: pd.DataFrame, title: str = "Kendall τ of prompt scores"):
    """τ between every two columns (models, halves): do the prompts rank alike?"""
    import plotly.graph_objects as go

    values = matrix.to_numpy(dtype=float)
    fig = go.Figure(go.Heatmap(z=values, x=list(map(str, matrix.columns)), y=list(map(str, matrix.index)),
                               zmin=-1, zmax=1, colorscale="RdBu", text=np.round(values, 2),
                               texttemplate="%{text}", hovertemplate="%{y} vs %{x}: τ = %{z:.3f}<extra></extra>"))
    fig.update_layout(title=title)
    return fig
