"""Forget sets: the facts an erasure must remove from a release, one row per memorized (person,
property) with the value the model puts forward, strongest first — what the report lists, an
answer to an erasure request carries and unlearning tools read (`export`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from wikimem_platform.storage import json_scalar
from wikimem_platform.vocabulary import AT_THRESHOLD, CONTEXTUALIZED_KINDS, DEFAULT_CUE_TAU, LENIENT, STRICT
from wikimem_platform.wikimem.memorization import calibrated_score, memorized

# Erasure errs on the side of inclusion: a fact is in the forget set as soon as one wording puts
# its ground truth first (lenient); M, z* and the flags let a team narrow it.
DEFAULT_FORGET_CRITERION = LENIENT
FORGET_COLUMNS = [
    "model", "subject_qid", "subject_label", "property", "property_label", "value", "value_label",
    "M", "z_star", "cohort", STRICT, AT_THRESHOLD, "cue", "cue_flag",
]


def best_true_values(scores: pd.DataFrame, alpha: float = 1.0) -> pd.DataFrame:
    """Per (subject, property): the ground truth the model prefers (highest s summed over wordings).

    A person may have several true values (occupations); the forget set names the one the model
    actually puts forward. Contextualized canaries are left out, as in M.
    """
    rows = scores[scores["is_true"].astype(bool)]
    if "kind" in rows.columns:
        rows = rows[~rows["kind"].isin(CONTEXTUALIZED_KINDS)]
    rows = rows.assign(s=calibrated_score(rows["nll_h"], rows["nll_h0"], rows["nll_similar_mean"], alpha))
    summed = rows.groupby(["subject_qid", "property", "value", "value_label"], sort=True)["s"].sum().reset_index()
    best = summed.sort_values("s", ascending=False, kind="stable").drop_duplicates(["subject_qid", "property"])
    return best.drop(columns="s").sort_values(["subject_qid", "property"]).reset_index(drop=True)


def forget_set(
    model_key: str,
    pairs: pd.DataFrame,
    best_values: pd.DataFrame,
    cues: pd.DataFrame | None = None,
    property_labels: Mapping[str, str] | None = None,
    criterion: str = DEFAULT_FORGET_CRITERION,
    cue_tau: float = DEFAULT_CUE_TAU,
) -> pd.DataFrame:
    """One row per memorized (subject, property) under `criterion`, strongest first."""
    chosen = pairs[memorized(pairs, criterion)]
    out = chosen.merge(best_values[["subject_qid", "property", "value", "value_label"]], on=["subject_qid", "property"], how="left")
    if cues is not None and len(cues):
        out = out.merge(cues[["subject_qid", "property", "cue"]], on=["subject_qid", "property"], how="left")
    else:
        out["cue"] = np.nan
    out["cue"] = out["cue"].astype(float)
    out["cue_flag"] = (out["cue"] >= cue_tau).where(out["cue"].notna()).astype("boolean")
    out["model"] = model_key
    out["subject_label"] = out["subject"] if "subject" in out.columns else None
    labels = property_labels or {}
    out["property_label"] = out["property"].map(lambda p: labels.get(p, p))
    if "cohort" not in out.columns:
        out["cohort"] = None
    out = out.sort_values(["M", "z_star"], ascending=False, na_position="last", kind="stable")
    return out[FORGET_COLUMNS].reset_index(drop=True)


def write_jsonl(frame: pd.DataFrame, path: Path) -> None:
    """One JSON object per row, NaN/NA as null (what erasure tooling reads line by line)."""
    with open(path, "w", encoding="utf-8") as out:
        for row in frame.to_dict("records"):
            clean = {k: (None if v is pd.NA else json_scalar(v)) for k, v in row.items()}
            out.write(json.dumps(clean, ensure_ascii=False) + "\n")
