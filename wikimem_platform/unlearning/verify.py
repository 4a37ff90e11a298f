"""Is the person forgotten, and nobody else? Figures for an erasure checked on a new revision.

- utility on the retain set: of the retain facts (other people's facts the base revision
  memorized at threshold), the share the new revision still memorizes at threshold;
- PrivLeak-style loss attack (MUSE's idea): AUROC of the forgotten facts' true canaries against
  the same canaries with the other candidate values, by the loss (NLL) alone. Before unlearning
  the truth reads as more likely (AUROC well above 0.5); near 0.5 means no trace of it is left.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from wikimem_platform.reference.value_forms import without_forms
from wikimem_platform.unlearning.methods import UNLEARNING_MANIFEST
from wikimem_platform.vocabulary import AT_THRESHOLD, CONTEXTUALIZED_KINDS

# Retain facts: what a release memorized at threshold (clearly known, worth keeping).
RETAIN_CRITERION = AT_THRESHOLD


def memorized_keys(pairs: pd.DataFrame, criterion: str = RETAIN_CRITERION, exclude: Iterable[str] = ()) -> set[tuple[str, str]]:
    chosen = pairs[pairs[criterion].astype(bool) & ~pairs["subject_qid"].isin(list(exclude))]
    return set(zip(chosen["subject_qid"], chosen["property"]))


def retain_utility(before: pd.DataFrame, after: pd.DataFrame | None, retain: Iterable[tuple[str, str]] | None = None,
                   exclude: Iterable[str] = (), criterion: str = RETAIN_CRITERION) -> dict:
    """Share of the retain facts memorized before that the new revision still memorizes.

    retain: the (subject, property) keys of the retain set (default: every fact of another
    person the base revision memorized). None figures when the new revision has no audit yet.
    """
    known = memorized_keys(before, criterion, exclude)
    keys = known & set(map(tuple, retain)) if retain is not None else known
    if after is None:
        return {"retain_facts": len(keys), "still_memorized": None, "utility": None}
    kept = keys & memorized_keys(after, criterion)
    return {"retain_facts": len(keys), "still_memorized": len(kept), "utility": len(kept) / len(keys) if keys else None}


def privleak_auroc(scores: pd.DataFrame, facts: Iterable[tuple[str, str]]) -> float | None:
    """Loss-attack AUROC of the true canaries of `facts` against their counterfactual canaries."""
    wanted = set(map(tuple, facts))
    if scores is None or scores.empty or not wanted:
        return None
    keys = list(zip(scores["subject_qid"], scores["property"]))
    rows = without_forms(scores[[k in wanted for k in keys]])  # a true value's other forms are neither side
    if "kind" in rows:
        rows = rows[~rows["kind"].isin(CONTEXTUALIZED_KINDS)]
    labels = rows["is_true"].astype(bool)
    if labels.nunique() < 2:
        return None
    from sklearn.metrics import roc_auc_score  # imported where used: see wikimem_platform/__init__.py

    return float(roc_auc_score(labels, -rows["nll_h"].astype(float)))


def unlearning_manifest(model_dir: str | Path | None) -> dict | None:
    """The reference-unlearning manifest of a model directory, if it was made by `unlearn`."""
    if not model_dir:
        return None
    path = Path(model_dir) / UNLEARNING_MANIFEST
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
