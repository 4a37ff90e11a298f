"""Canary assets: templates once per property, then one row per (subject, property, variant)."""

import pandas as pd
from dagster import AssetExecutionContext, Config, MetadataValue, Output, asset

from assets.metadata import preview
from wikimem_platform.canaries import build_canaries, build_template_tables, render
from wikimem_platform.versions import source_version
from wikimem_platform.vocabulary import BASELINE

GROUP = "canaries"


@asset(group_name=GROUP, kinds={"pandas"}, code_version=source_version("wikimem_platform.canaries"))
def canary_templates(context: AssetExecutionContext, property_table: pd.DataFrame) -> Output[pd.DataFrame]:
    """Baseline from a spaCy parse of the label + 10 paraphrases ranked by MiniLM similarity and
    diversity, from the candidates that state the same relation (the meaning filter's dropped
    candidates, with the rule and why, are in the metadata)."""
    templates, dropped = build_template_tables(property_table)
    context.log.info(
        f"{len(templates)} templates for {templates['property'].nunique()} properties; "
        f"{len(dropped)} pool candidates dropped by the meaning filter"
    )
    baselines = templates[templates["kind"] == BASELINE]
    per_rule = dropped.groupby(["property", "rule"]).size().unstack(fill_value=0) if len(dropped) else pd.DataFrame()
    examples = dropped.groupby(["property", "rule"], sort=False).head(2)
    return Output(
        templates,
        metadata={
            "rows": len(templates),
            "properties": int(templates["property"].nunique()),
            "baseline_shapes": MetadataValue.json(baselines["shape"].value_counts().to_dict()),
            "baselines": preview(baselines[["property", "shape", "template"]], rows=40),
            "dropped_paraphrases": len(dropped),
            "dropped_by_property_and_rule": MetadataValue.json(
                {prop: {rule: int(n) for rule, n in row.items() if n} for prop, row in per_rule.iterrows()}
            ),
            "dropped_examples": preview(examples[["property", "rule", "template", "detail", "similarity"]], rows=60),
        },
    )


class CanaryConfig(Config):
    n_context: int = 4  # auxiliary true facts prepended in the contextualized canary
    n_similar: int = 2  # similar-name variants S(h) per subject
    seed: int = 0


@asset(group_name=GROUP, kinds={"pandas", "pytorch"}, code_version=source_version("wikimem_platform.canaries"))
def canaries(
    config: CanaryConfig,
    subjects: pd.DataFrame,
    claims: pd.DataFrame,
    property_table: pd.DataFrame,
    canary_templates: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """Per (subject, property): the 11 scored variants (+ a contextualized one) with h, h0, S(h) and ground truths."""
    table = build_canaries(
        subjects, claims, property_table, canary_templates,
        n_context=config.n_context, seed=config.seed, n_similar=config.n_similar,
    )
    examples = table.groupby("kind", sort=False).head(3)
    examples = examples.assign(
        sentence=[render(t, s, labels[0]) for t, s, labels in zip(examples["template"], examples["subject"], examples["ground_truth_labels"])]
    )
    return Output(
        table,
        metadata={
            "rows": len(table),
            "subject_property_pairs": int(table[["subject_qid", "property"]].drop_duplicates().shape[0]),
            "per_kind": MetadataValue.json(table["kind"].value_counts().to_dict()),
            "examples": preview(examples[["kind", "property", "sentence", "subject_generic", "subject_similar"]], rows=9),
        },
    )
