"""How well an attack separates members from non-members: AUROC with a bootstrap CI and TPR at
low FPRs, per attack column of a score frame. Scores follow the package's convention (higher =
member), so no attack needs a sign flip here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

TARGET_FPRS = (0.001, 0.01)


def tpr_column(target_fpr: float) -> str:
    """The result column holding TPR at one target FPR."""
    return f"tpr_at_fpr_{target_fpr:g}"


def min_nonmembers(target_fpr: float) -> int:
    """Non-members needed before TPR at this FPR means anything: 1 / FPR (1,000 for 0.1 %). With
    fewer, FPR <= target allows no false positive at all and the TPR is that of a single
    threshold above every non-member (LiRA's and the SoK's point about low-FPR reporting)."""
    return math.ceil(1 / target_fpr - 1e-9)


def too_few_nonmembers(target_fpr: float) -> str:
    """What a report shows instead of a TPR that `min_nonmembers` rules out."""
    return f"n/a: too few non-members (< {min_nonmembers(target_fpr):,})"


# Result columns that are rates in [0, 1] (what a check on an evaluation table bounds).
RATE_COLUMNS = ("auroc", "auroc_ci_low", "auroc_ci_high", "auroc_normalized", *map(tpr_column, TARGET_FPRS))


def normalized_auroc(auroc: float) -> float:
    """max(AUROC, 1 - AUROC), the CRM paper's normalized AUROC (after DPMLBench, Wei et al.
    2023): 0.5 is chance, and an attack whose sign is wrong for a model still counts as leakage.
    (Our copy of the CRM text lost the formula; this is DPMLBench's definition.)"""
    return float(max(auroc, 1.0 - auroc))


def _bootstrap_auroc(scores: np.ndarray, labels: np.ndarray, n_bootstrap: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Stratified bootstrap AUROCs via Mann-Whitney counts on tie groups (ties count 1/2)."""
    _, group = np.unique(scores, return_inverse=True)
    n_groups = int(group.max()) + 1
    pos, neg = group[labels], group[~labels]
    n1, n0 = pos.size, neg.size
    chunk = max(1, min(n_bootstrap, 5_000_000 // max(n_groups, n1, n0)))
    out = []
    for start in range(0, n_bootstrap, chunk):
        b = min(chunk, n_bootstrap - start)
        offset = (np.arange(b) * n_groups)[:, None]
        pg = pos[rng.integers(0, n1, size=(b, n1))] + offset
        ng = neg[rng.integers(0, n0, size=(b, n0))] + offset
        c1 = np.bincount(pg.ravel(), minlength=b * n_groups).reshape(b, n_groups)
        c0 = np.bincount(ng.ravel(), minlength=b * n_groups).reshape(b, n_groups)
        below = np.cumsum(c0, axis=1) - c0
        out.append((c1 * (below + 0.5 * c0)).sum(axis=1) / (n1 * n0))
    return np.concatenate(out) if out else np.empty(0)


def tpr_at_fpr(scores, labels, target_fpr: float) -> float:
    """The highest TPR among ROC points with FPR <= target_fpr."""
    from sklearn.metrics import roc_curve  # imported where used: see wikimem_platform/__init__.py

    fpr, tpr, _ = roc_curve(np.asarray(labels, dtype=bool), np.asarray(scores, dtype=float),
                            drop_intermediate=False)
    return float(tpr[fpr <= target_fpr].max())


def evaluate_attack(scores, labels, n_bootstrap: int = 1000, seed: int = 0,
                    target_fprs: Sequence[float] = TARGET_FPRS) -> dict:
    """AUROC with a stratified percentile-bootstrap 95% CI, TPR at low FPRs, class counts.

    labels: True / 1 = member. Scores follow the package's convention (higher = member), so an
    attack with no signal gives 0.5 and flipping the labels gives 1 - AUROC. The bootstrap
    resamples members and non-members separately (class sizes fixed, so every replicate is
    defined). NaN scores raise: dropping them silently would bias the comparison.
    TPR at a target FPR is NaN with fewer than `min_nonmembers(t)` non-members.
    Keys: auroc, auroc_ci_low, auroc_ci_high, auroc_normalized, tpr_at_fpr_<t> for each t, n_members,
    n_nonmembers, n_bootstrap.
    """
    scores = np.asarray(scores, dtype=float)
    labels = np.asarray(labels).astype(bool)
    if scores.shape != labels.shape:
        raise ValueError("scores and labels differ in length")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    n1, n0 = int(labels.sum()), int((~labels).sum())
    if n1 == 0 or n0 == 0:
        raise ValueError("need members and non-members")
    from sklearn.metrics import roc_auc_score

    result = {"auroc": float(roc_auc_score(labels, scores))}
    result["auroc_normalized"] = normalized_auroc(result["auroc"])
    boots = _bootstrap_auroc(scores, labels, n_bootstrap, np.random.default_rng(seed))
    low, high = (np.percentile(boots, [2.5, 97.5]) if boots.size else (np.nan, np.nan))
    result.update(auroc_ci_low=float(low), auroc_ci_high=float(high))
    for target in target_fprs:
        enough = n0 >= min_nonmembers(target)
        result[tpr_column(target)] = tpr_at_fpr(scores, labels, target) if enough else float("nan")
    result.update(n_members=n1, n_nonmembers=n0, n_bootstrap=int(n_bootstrap))
    return result


def evaluate_attacks(score_frame: pd.DataFrame, labels, attacks: Sequence[str] | None = None,
                     n_bootstrap: int = 1000, seed: int = 0) -> pd.DataFrame:
    """`evaluate_attack` for every attack column of `attack_scores` output; one row per attack."""
    attacks = attacks or [c for c in score_frame.columns if c != "mean_nll"]
    rows = [{"attack": a, **evaluate_attack(score_frame[a].to_numpy(), labels, n_bootstrap, seed)}
            for a in attacks]
    return pd.DataFrame(rows)


def evaluate_available(score_frame: pd.DataFrame, labels, n_bootstrap: int = 1000, seed: int = 0,
                       ) -> pd.DataFrame:
    """`evaluate_attack` per attack column on the texts that attack could score; the rows left
    out (NaN: e.g. no neighbour for a one-word text) are counted in `n_unscored`, not hidden."""
    labels = np.asarray(labels).astype(bool)
    rows = []
    for attack in [c for c in score_frame.columns if c != "mean_nll"]:
        scores = score_frame[attack].to_numpy(dtype=float)
        ok = ~np.isnan(scores)
        if labels[ok].all() or not labels[ok].any():
            continue  # no members or no non-members left: nothing to evaluate
        rows.append({"attack": attack, **evaluate_attack(scores[ok], labels[ok], n_bootstrap, seed),
                     "n_unscored": int((~ok).sum())})
    return pd.DataFrame(rows)


def auroc_figure(table: pd.DataFrame, title: str = "Membership inference"):
    """Plotly bar chart: AUROC per attack with its bootstrap CI, chance (0.5) marked."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(
        x=table["attack"], y=table["auroc"],
        error_y=dict(type="data", symmetric=False, array=table["auroc_ci_high"] - table["auroc"],
                     arrayminus=table["auroc"] - table["auroc_ci_low"])))
    fig.add_hline(y=0.5, line_dash="dash", annotation_text="chance")
    fig.update_layout(title=title, yaxis_title="AUROC (95% bootstrap CI)", yaxis_range=[0, 1])
    return fig
