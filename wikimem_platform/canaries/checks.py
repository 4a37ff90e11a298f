"""Frames that make the canary table's invariants checkable row by row (for GX suites)."""

from __future__ import annotations

import pandas as pd

from wikimem_platform.canaries.text import count_placeholders, mentions, render
from wikimem_platform.vocabulary import SCORED_KINDS


def canary_rows_for_checks(canaries: pd.DataFrame) -> pd.DataFrame:
    """Per canary: placeholder counts and whether the sentence rendered with the subject and its
    first ground truth really contains both (a template that swallowed a placeholder, or a
    rendering bug, would score sentences that assert nothing about the person)."""
    counts = canaries["template"].map(count_placeholders)
    rendered = [
        render(template, subject, labels[0] if len(labels) else "")
        for template, subject, labels in zip(canaries["template"], canaries["subject"], canaries["ground_truth_labels"])
    ]
    return pd.DataFrame(
        {
            "subject_qid": canaries["subject_qid"],
            "property": canaries["property"],
            "kind": canaries["kind"],
            "template": canaries["template"],
            "subject": canaries["subject"],
            "subject_generic": canaries["subject_generic"],
            "subject_placeholders": counts.map(lambda c: c[0]),
            "value_placeholders": counts.map(lambda c: c[1]),
            "n_similar": canaries["subject_similar"].map(len),
            "similar_equals_subject": [s in list(sim) for s, sim in zip(canaries["subject"], canaries["subject_similar"])],
            "n_ground_truth": canaries["ground_truth_labels"].map(len),
            "sentence": rendered,
            "contains_subject": [subject.casefold() in text.casefold() for subject, text in zip(canaries["subject"], rendered)],
            "contains_value": [
                mentions(text, labels[0]) if len(labels) else False
                for text, labels in zip(rendered, canaries["ground_truth_labels"])
            ],
        }
    )


def variants_per_pair(canaries: pd.DataFrame) -> pd.DataFrame:
    """Baseline + paraphrase variants per (subject, property): WikiMem's M is a share of 11."""
    scored = canaries[canaries["kind"].isin(SCORED_KINDS)]
    return scored.groupby(["subject_qid", "property"]).size().rename("n_variants").reset_index()
