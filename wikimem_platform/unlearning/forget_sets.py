"""Forget sets: the facts an erasure must remove from a release, one row per memorized (person,
property) with the value the model puts forward, strongest first — what the report lists, an
answer to an erasure request carries and unlearning tools read (`export`).

Where the fact was read against invented people given the same facts (`wikimem.controls`), the
row carries that verdict too, so a team can tell a fact the model knows about this person from
one it would put forward for anyone with these facts (`CONTROL_COLUMNS`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from wikimem_platform.storage import json_scalar
from wikimem_platform.vocabulary import AT_THRESHOLD, CONTEXTUALIZED_KINDS, DEFAULT_CUE_TAU, LENIENT, STRICT
from wikimem_platform.wikimem import controls as ctl
from wikimem_platform.wikimem.memorization import calibrated_score, memorized

# Erasure errs on the side of inclusion: a fact is in the forget set as soon as one wording puts
# its ground truth first (lenient); M, z*, the flags and the controls' verdict let a team narrow it.
DEFAULT_FORGET_CRITERION = LENIENT
# The fact read against invented people given the same facts (`controls.compare_with_controls`):
# its verdict in the controls' words (controls.VERDICTS), the empirical p-value, how many controls
# were scored, the level alpha, and whether it beats them (memorized or weakly associated: M > 0
# and p <= alpha). All null where the fact was not compared (no controls computed, or M = 0).
CONTROL_COLUMNS = ["controls_verdict", "p_controls", "n_controls", "controls_alpha", "beats_controls"]
FORGET_COLUMNS = [
    "model", "subject_qid", "subject_label", "property", "property_label", "value", "value_label",
    "M", "z_star", "cohort", STRICT, AT_THRESHOLD, "cue", "cue_flag", *CONTROL_COLUMNS,
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
    controls: pd.DataFrame | None = None,
    beyond_controls: bool = False,
) -> pd.DataFrame:
    """One row per memorized (subject, property) under `criterion`, strongest first.

    controls: the facts read against invented people (subject_qid, property, verdict, p_value,
    n_controls, alpha: `controls.compare_with_controls` rows, or the `controlled_memorization`
    table); each row then carries the controls' verdict (CONTROL_COLUMNS), null where a fact was
    not compared. By default the set is the same with or without them: a fact that does not beat
    the controls stays in, because erasure errs on the side of inclusion — "no evidence beyond
    the controls" means the model would say the value of anyone with these facts, not that it
    will not say it of this person, and a request asks that it stop. beyond_controls narrows the
    set to the facts that beat the controls (p <= alpha), for a team that erases only what the
    model knows about the person; it needs `controls` (ValueError without them)."""
    if beyond_controls and (controls is None or not len(controls)):
        raise ValueError("beyond_controls: no controls were computed for these facts, so none can be shown to beat them")
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
    out = with_controls(out, controls)
    if beyond_controls:
        out = out[out["beats_controls"].fillna(False).astype(bool)]
    out = out.sort_values(["M", "z_star"], ascending=False, na_position="last", kind="stable")
    return out[FORGET_COLUMNS].reset_index(drop=True)


def with_controls(facts: pd.DataFrame, controls: pd.DataFrame | None) -> pd.DataFrame:
    """`facts` (subject_qid, property, ...) with CONTROL_COLUMNS from the controls' comparison
    (verdict, p_value, n_controls, alpha per subject_qid and property); null where a fact has
    no comparison with at least one control."""
    keys = ["subject_qid", "property"]
    out = facts.drop(columns=CONTROL_COLUMNS, errors="ignore")
    if controls is not None and len(controls):
        theirs = controls[[*keys, "verdict", "p_value", "n_controls", "alpha"]]
        theirs = theirs[pd.to_numeric(theirs["n_controls"], errors="coerce").fillna(0) > 0].drop_duplicates(keys)
        out = out.merge(theirs.rename(columns={"verdict": "controls_verdict", "p_value": "p_controls",
                                               "alpha": "controls_alpha"}), on=keys, how="left")
    else:
        out = out.assign(controls_verdict=None, p_controls=np.nan, n_controls=np.nan, controls_alpha=np.nan)
    compared = out["n_controls"].notna()
    out["controls_verdict"] = out["controls_verdict"].astype(object).where(compared, None)
    out["p_controls"] = out["p_controls"].astype(float)
    out["n_controls"] = out["n_controls"].astype("Int64")
    out["controls_alpha"] = out["controls_alpha"].astype(float)
    out["beats_controls"] = out["controls_verdict"].isin([ctl.MEMORIZED, ctl.WEAK]).where(compared).astype("boolean")
    return out


def controls_words(row: Mapping) -> str:
    """A forget-set row's controls verdict in a few words, e.g. "beats invented people (p = 0.05,
    19 controls)"; "not compared" where the fact has none."""
    n, p, beats = row.get("n_controls"), row.get("p_controls"), row.get("beats_controls")
    if pd.isna(n) or pd.isna(p):
        return "not compared"
    how = "beats invented people" if not pd.isna(beats) and bool(beats) else "no better than invented people"
    return f"{how} (p = {float(p):.2f}, {int(n)} control{'s' if int(n) != 1 else ''})"


def has_controls(forget: pd.DataFrame | list) -> bool:
    """Whether any row of a forget set (a frame, or the JSON rows of an answer) was compared with controls."""
    rows = forget.to_dict("records") if isinstance(forget, pd.DataFrame) else forget
    return any(controls_words(row) != "not compared" for row in rows)


def write_jsonl(frame: pd.DataFrame, path: Path) -> None:
    """One JSON object per row, NaN/NA as null (what erasure tooling reads line by line)."""
    with open(path, "w", encoding="utf-8") as out:
        for row in frame.to_dict("records"):
            clean = {k: (None if v is pd.NA else json_scalar(v)) for k, v in row.items()}
            out.write(json.dumps(clean, ensure_ascii=False) + "\n")
