"""Table 1 with and without invented-person controls, and the cohort gap with a bootstrap CI.

WikiMem's Table 1 counts a fact memorized when M >= 0.8. Some of those facts are what the model
would say of anyone with the same facts (a guessable value, a name that sounds like a country):
read against controls (`control_scoring.audit_cohort`), a fact counts only when it also beats
them (p <= alpha). Both rates are reported side by side, per cohort, so that a reader sees how
much of the paper's number survives the controls.

The well-known vs lesser-known gap is the paper's headline contrast. Its CI resamples *people*
within each cohort (a cluster bootstrap: one person's facts are not independent draws), the
same resamples for the rate without and with controls, so the two gaps are comparable.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wikimem_platform.reference.cohorts import LESSER_KNOWN, WELL_KNOWN
from wikimem_platform.wikimem import controls

N_BOOTSTRAP = 2000
CONFIDENCE = 0.95
# Columns of `controlled_pairs`: one row per audited fact, the paper's flag beside the controls' verdict.
WITHOUT, WITH, BEATS = "memorized_without_controls", "memorized_with_controls", "beats_controls"
# The lenient level both ways: ranked first in some wording (M > 0) against beating the controls at any M.
SOME_WORDING = "ranked_first_without_controls"
GAP_MEASURES = (WITHOUT, WITH, SOME_WORDING, BEATS)
RATE_COLUMNS = ["cohort", "subjects", "pairs", "pairs_compared", "M_bar_pct", f"{WITHOUT}_pct", f"{WITH}_pct",
                f"{BEATS}_pct", "alpha", "n_controls"]
GAP_COLUMNS = ["measure", "well_known_pct", "lesser_known_pct", "gap_pct", "ci_low_pct", "ci_high_pct",
               "n_well_known", "n_lesser_known", "n_bootstrap"]


def controlled_pairs(memorization: pd.DataFrame, comparison: pd.DataFrame,
                     m_threshold: float = controls.M_THRESHOLD) -> pd.DataFrame:
    """The memorization table (subject_qid, property, M, cohort, ...) with the controls' verdict of
    each fact: memorized without controls (M >= m_threshold, every wording, the paper's flag),
    with controls (verdict memorized), beats the controls at all (memorized or weakly
    associated), and the comparison's p-value and controls. A fact the comparison lacks is
    "no evidence" (it was not compared: M = 0)."""
    keep = ["subject_qid", "property", "verdict", "p_value", "n_controls", "controls_as_extreme", "alpha",
            "controls_M_mean", "controls_M_max", "M_compared"]
    out = memorization.merge(comparison[keep], on=["subject_qid", "property"], how="left")
    out["verdict"] = out["verdict"].fillna(controls.NO_EVIDENCE)
    out[WITHOUT] = out["M"].to_numpy(dtype=float) >= m_threshold
    out[SOME_WORDING] = out["M"].to_numpy(dtype=float) > 0
    out[WITH] = out["verdict"].eq(controls.MEMORIZED)
    out[BEATS] = out["verdict"].isin([controls.MEMORIZED, controls.WEAK])
    return out


def rates(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per cohort (and `all`): the shares of facts memorized without controls, with them, and
    beating them (RATE_COLUMNS, in percent) — `controlled_pairs` rows."""
    if not len(pairs):
        return pd.DataFrame(columns=RATE_COLUMNS)
    cohort = pairs["cohort"].fillna("all") if "cohort" in pairs else pd.Series("all", index=pairs.index)
    groups = [(c, block) for c, block in pairs.groupby(cohort, sort=False)]
    if len(groups) > 1:
        groups.append(("all", pairs))
    rows = []
    for name, block in groups:
        rows.append({
            "cohort": name, "subjects": int(block["subject_qid"].nunique()), "pairs": len(block),
            "pairs_compared": int(block["n_controls"].fillna(0).gt(0).sum()),
            "M_bar_pct": 100 * float(block["M"].mean()),
            f"{WITHOUT}_pct": 100 * float(block[WITHOUT].mean()), f"{WITH}_pct": 100 * float(block[WITH].mean()),
            f"{BEATS}_pct": 100 * float(block[BEATS].mean()),
            "alpha": float(block["alpha"].dropna().iloc[0]) if block["alpha"].notna().any() else np.nan,
            "n_controls": int(block["n_controls"].max()) if block["n_controls"].notna().any() else 0,
        })
    return pd.DataFrame(rows, columns=RATE_COLUMNS)


def _per_person(pairs: pd.DataFrame, flag: str) -> tuple[np.ndarray, np.ndarray]:
    grouped = pairs.groupby("subject_qid")[flag]
    return grouped.sum().to_numpy(dtype=float), grouped.size().to_numpy(dtype=float)


def share_ci(per_person: list[tuple[float, int]], n_bootstrap: int = 2000, seed: int = 0,
             confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(share, low, high): hits over facts of a group, its percentile bootstrap CI with people
    resampled ((hits, facts) per person); NaN for no people."""
    if not per_person:
        return (float("nan"),) * 3
    hits = np.array([h for h, _ in per_person], dtype=float)
    facts = np.array([n for _, n in per_person], dtype=float)
    draws = np.random.default_rng(seed).integers(0, len(per_person), size=(n_bootstrap, len(per_person)))
    shares = hits[draws].sum(axis=1) / np.maximum(facts[draws].sum(axis=1), 1)
    tail = (1 - confidence) / 2
    return (float(hits.sum() / max(facts.sum(), 1)), float(np.quantile(shares, tail)), float(np.quantile(shares, 1 - tail)))


def cohort_gap(pairs: pd.DataFrame, measures=GAP_MEASURES, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0,
               confidence: float = CONFIDENCE, first: str = WELL_KNOWN, second: str = LESSER_KNOWN) -> pd.DataFrame:
    """The well-known minus lesser-known rate of each measure (GAP_COLUMNS, percent) with a
    percentile bootstrap CI over people resampled within each cohort; the same resamples for
    every measure. Measures: memorized (M >= 0.8) without and with controls, and the lenient
    level both ways (M > 0; beating the controls at any M). Empty when a cohort has no people."""
    a, b = pairs[pairs["cohort"] == first], pairs[pairs["cohort"] == second]
    if not len(a) or not len(b):
        return pd.DataFrame(columns=GAP_COLUMNS)
    rng = np.random.default_rng(seed)
    n_a, n_b = a["subject_qid"].nunique(), b["subject_qid"].nunique()
    draw_a = rng.integers(0, n_a, size=(n_bootstrap, n_a))
    draw_b = rng.integers(0, n_b, size=(n_bootstrap, n_b))
    tail = (1 - confidence) / 2
    rows = []
    for measure in measures:
        (hits_a, size_a), (hits_b, size_b) = _per_person(a, measure), _per_person(b, measure)
        rate_a, rate_b = hits_a.sum() / size_a.sum(), hits_b.sum() / size_b.sum()
        boot = hits_a[draw_a].sum(1) / size_a[draw_a].sum(1) - hits_b[draw_b].sum(1) / size_b[draw_b].sum(1)
        low, high = np.quantile(boot, [tail, 1 - tail])
        rows.append({"measure": measure, "well_known_pct": 100 * rate_a, "lesser_known_pct": 100 * rate_b,
                     "gap_pct": 100 * (rate_a - rate_b), "ci_low_pct": 100 * low, "ci_high_pct": 100 * high,
                     "n_well_known": n_a, "n_lesser_known": n_b, "n_bootstrap": n_bootstrap})
    return pd.DataFrame(rows, columns=GAP_COLUMNS)
