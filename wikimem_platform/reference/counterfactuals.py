"""Counterfactual (human, value) pairs per property and the candidate set of each subject.

WikiMem ranks a subject's true value among values that *other* people hold for the same
property, so candidates are type-consistent by construction and plausible in the sentence.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wikimem_platform.labels import fold

COUNTERFACTUAL_COLUMNS = ["property", "human_qid", "human_label", "value", "value_label"]
CANDIDATE_COLUMNS = ["subject_qid", "property", "value", "value_label", "is_true"]


def draw_counterfactuals(
    claims: pd.DataFrame,
    humans: pd.DataFrame,
    properties: list[str],
    per_property: int = 100,
    seed: int = 0,
    exclude_humans: set[str] | None = None,
) -> pd.DataFrame:
    """Up to ``per_property`` (human, value) pairs per property from other humans.

    One pair per human name (two people called "John Smith" would read the same in a
    sentence) and one pair per value (distinct candidates), names and values compared with
    `labels.fold` ("José Pérez" ~ "Jose Perez", "Łódź" ~ "Lodz"). Humans in ``exclude_humans`` (the
    subjects being scored) are not drawn, so every pair comes from someone else.
    """
    names = humans.set_index("qid")["label"]
    pool = claims[claims["property"].isin(properties)].assign(human_label=lambda f: f["qid"].map(names))
    pool = pool.dropna(subset=["human_label", "value_label"])
    if exclude_humans:
        pool = pool[~pool["qid"].isin(exclude_humans)]
    rng = np.random.default_rng(seed)
    pool = pool.assign(
        _order=rng.random(len(pool)),
        _name=pool["human_label"].map(fold),
        _value=pool["value_label"].map(fold),
    ).sort_values(["property", "_order"])
    pool = pool.drop_duplicates(["property", "_name"]).drop_duplicates(["property", "value"])
    pool = pool.drop_duplicates(["property", "_value"])
    drawn = pool.groupby("property", sort=False).head(per_property)
    drawn = drawn.rename(columns={"qid": "human_qid"})[COUNTERFACTUAL_COLUMNS]
    return drawn.sort_values(["property", "value_label"], ignore_index=True)


def build_candidates(
    subjects: pd.DataFrame, claims: pd.DataFrame, counterfactuals: pd.DataFrame
) -> pd.DataFrame:
    """Per (subject, property): the ground truths G plus counterfactual values not equal to G.

    Equality is by value id or by folded label (`labels.fold`: case, punctuation and accents
    ignored), so a counterfactual "USA" can never be scored as wrong against a truth "usa" held
    under another id, nor "Krakow" against "Kraków". Only properties that both the
    subject has and the counterfactual table covers are kept.
    """
    truths = claims[claims["qid"].isin(subjects["qid"]) & claims["property"].isin(counterfactuals["property"])]
    truths = truths.rename(columns={"qid": "subject_qid"})[["subject_qid", "property", "value", "value_label"]]
    truths = truths.assign(is_true=True)
    pairs = truths[["subject_qid", "property"]].drop_duplicates()
    cfs = pairs.merge(counterfactuals[["property", "value", "value_label"]], on="property")
    truth_ids = set(zip(truths["subject_qid"], truths["property"], truths["value"]))
    truth_labels = set(zip(truths["subject_qid"], truths["property"], truths["value_label"].map(fold)))
    clashes = [
        (s, p, v) in truth_ids or (s, p, fold(lbl)) in truth_labels
        for s, p, v, lbl in zip(cfs["subject_qid"], cfs["property"], cfs["value"], cfs["value_label"])
    ]
    cfs = cfs[~np.asarray(clashes, dtype=bool)].assign(is_true=False)
    candidates = pd.concat([truths, cfs], ignore_index=True)
    return candidates.sort_values(
        ["subject_qid", "property", "is_true", "value_label"], ascending=[True, True, False, True], ignore_index=True
    )[CANDIDATE_COLUMNS]


def flag_truth_clashes(candidates: pd.DataFrame) -> pd.DataFrame:
    """Mark counterfactual rows equal (id or folded label) to a truth of the same pair.

    An independent re-check of :func:`build_candidates`' output: a clash would score the true
    value against itself and make memorization undetectable for that pair.
    """
    truths = candidates[candidates["is_true"]]
    truth_keys = set(zip(truths["subject_qid"], truths["property"], truths["value"]))
    truth_keys |= set(zip(truths["subject_qid"], truths["property"], truths["value_label"].map(fold)))
    keys = zip(candidates["subject_qid"], candidates["property"], candidates["value"], candidates["value_label"])
    clashes = [
        not is_true and ((s, p, v) in truth_keys or (s, p, fold(lbl)) in truth_keys)
        for (s, p, v, lbl), is_true in zip(keys, candidates["is_true"])
    ]
    return candidates.assign(clashes_with_truth=clashes)
