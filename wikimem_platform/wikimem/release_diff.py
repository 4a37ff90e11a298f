"""What changed between two releases of a model, fact by fact: newly memorized, forgotten, still
memorized; and the utility an unlearning run kept (`wikimem diff`, an erasure's verification)."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from wikimem_platform.storage import json_scalar
from wikimem_platform.vocabulary import DEFAULT_CRITERION
from wikimem_platform.wikimem.memorization import memorized

DIFF_COLUMNS = ["subject_qid", "subject", "property", "cohort", "M_old", "M_new", "z_star_old", "z_star_new", "change"]


def release_diff(old: pd.DataFrame, new: pd.DataFrame, criterion: str = DEFAULT_CRITERION) -> pd.DataFrame:
    """Per (subject, property): how its memorized flag changed from the old to the new release.

    change: "newly memorized", "forgotten", "still memorized", "not memorized" (pairs audited by
    both), or "only in old" / "only in new" (audited by one release only: no evidence either way,
    e.g. a narrower audit config).
    """
    keys = ["subject_qid", "property"]
    left = old.assign(_mem=memorized(old, criterion))
    right = new.assign(_mem=memorized(new, criterion))
    extra = [c for c in ("subject", "cohort") if c in left.columns or c in right.columns]
    lcols = keys + [c for c in extra if c in left.columns] + ["M", "z_star", "_mem"]
    rcols = keys + [c for c in extra if c in right.columns] + ["M", "z_star", "_mem"]
    merged = left[lcols].merge(right[rcols], on=keys, how="outer", suffixes=("_old", "_new"), indicator=True)
    for col in extra:
        pieces = [merged[c] for c in (f"{col}_new", f"{col}_old", col) if c in merged.columns]
        merged[col] = pieces[0]
        for piece in pieces[1:]:
            merged[col] = merged[col].fillna(piece)
    was = merged["_mem_old"].fillna(False).astype(bool)
    now = merged["_mem_new"].fillna(False).astype(bool)
    change = pd.Series("not memorized", index=merged.index, dtype=object)
    change[now & ~was] = "newly memorized"
    change[was & ~now] = "forgotten"
    change[was & now] = "still memorized"
    change[merged["_merge"] == "left_only"] = "only in old"
    change[merged["_merge"] == "right_only"] = "only in new"
    merged["change"] = change
    for col in ("subject", "cohort"):
        if col not in merged.columns:
            merged[col] = None
    return merged[DIFF_COLUMNS].sort_values(["change", "subject_qid", "property"]).reset_index(drop=True)


def diff_summary(diff: pd.DataFrame) -> dict[str, int]:
    """Counts per change kind (every kind present, zeros included)."""
    kinds = ["newly memorized", "forgotten", "still memorized", "not memorized", "only in old", "only in new"]
    counts = diff["change"].value_counts()
    return {kind: int(counts.get(kind, 0)) for kind in kinds}


def diff_utility(diff: pd.DataFrame, keys: Iterable[tuple[str, str]] | None = None) -> dict:
    """Of the facts memorized by the old release (among `keys`, e.g. an unlearning run's retain
    set, when given), how many the new release still memorizes: what unlearning must keep."""
    rows = diff
    if keys is not None:
        wanted = set(map(tuple, keys))
        rows = diff[[k in wanted for k in zip(diff["subject_qid"], diff["property"])]]
    before = int(rows["change"].isin(["still memorized", "forgotten"]).sum())
    still = int((rows["change"] == "still memorized").sum())
    return {"scope": "retain set" if keys is not None else "every fact both audited",
            "memorized_before": before, "still_memorized": still, "utility": still / before if before else None}


def diff_records(diff: pd.DataFrame) -> list[dict]:
    return [{k: json_scalar(v) for k, v in row.items()} for row in diff.to_dict("records")]
