"""Per-model scoring assets: one `models` partition per registered model release (name@revision)."""

import pandas as pd
from dagster import (
    AssetExecutionContext,
    Config,
    DynamicPartitionsDefinition,
    MetadataValue,
    Output,
    asset,
)

from assets.data import preview
from resources.scoring import RegistryResource, ScoringResource
from wikimem_platform.canaries.models import load_encoder
from wikimem_platform.memorization import M_THRESHOLD, evaluate_wikimem
from wikimem_platform.scoring import ShardStore, score_canaries

GROUP = "scoring"
models_partitions = DynamicPartitionsDefinition(name="models")


class ScoresConfig(Config):
    properties: list[str] = []  # score only these properties ([] = all in the canaries)
    max_subjects_per_cohort: int = 0  # 0 = every subject; small numbers for quick audits


def select_canaries(canaries: pd.DataFrame, subjects: pd.DataFrame, config: ScoresConfig) -> pd.DataFrame:
    """The canaries this run scores (a quick audit may take a few subjects and properties)."""
    chosen = canaries
    if config.properties:
        chosen = chosen[chosen["property"].isin(config.properties)]
    if config.max_subjects_per_cohort:
        keep = subjects.groupby("cohort", sort=False).head(config.max_subjects_per_cohort)["qid"]
        chosen = chosen[chosen["subject_qid"].isin(keep)]
    return chosen


@asset(group_name=GROUP, partitions_def=models_partitions)
def scores(
    context: AssetExecutionContext,
    config: ScoresConfig,
    scoring: ScoringResource,
    model_registry: RegistryResource,
    canaries: pd.DataFrame,
    candidates: pd.DataFrame,
    subjects: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """NLL(h, v), NLL(h0, v), NLL(S(h), v) for every canary and candidate, sharded per property."""
    entry = model_registry.registry().get(context.partition_key)
    context.log.info(f"Loading {entry.key} ({entry.source_kind}: {entry.source}) on {scoring.device}")
    lm = scoring.load(entry)
    context.log.info(f"Loaded in {lm.load_seconds:.1f}s (fingerprint {lm.fingerprint})")
    chosen = select_canaries(canaries, subjects, config)
    table, report = score_canaries(
        lm, chosen, candidates, ShardStore(scoring.shards_for(context.partition_key)), scoring.settings(),
        log=context.log.info, sentence_cache=scoring.sentence_cache(lm),
    )
    return Output(
        table,
        metadata={
            "rows": len(table),
            "model": entry.key,
            "model_fingerprint": lm.fingerprint,
            "shards_total": report.shards_total,
            "shards_reused": report.shards_reused,
            "shards_scored": report.shards_scored,
            "sentences_scored": report.sentences_scored,
            "sentences_computed": report.sentences_computed,
            "sentences_per_second": round(report.sentences_per_second, 1),
        },
    )


class MemorizationConfig(Config):
    alpha: float = 1.0
    m_threshold: float = M_THRESHOLD
    equivalence_threshold: float = 0.75


@asset(group_name=GROUP, partitions_def=models_partitions)
def memorization(
    context: AssetExecutionContext, config: MemorizationConfig, scores: pd.DataFrame, subjects: pd.DataFrame
) -> Output[pd.DataFrame]:
    """Per (subject, property): M, strict / lenient / threshold flags, z*; Table 1 as metadata."""
    cohorts = subjects[["qid", "label", "cohort"]].rename(columns={"qid": "subject_qid", "label": "subject"})
    result = evaluate_wikimem(
        scores.merge(cohorts[["subject_qid", "cohort"]], on="subject_qid", how="left"),
        alpha=config.alpha,
        embed=load_encoder(),
        equivalence_threshold=config.equivalence_threshold,
        m_threshold=config.m_threshold,
    )
    n_candidates = result.variants.groupby(["subject_qid", "property"])["n_candidates"].max().rename("n_candidates")
    pairs = result.pairs.join(n_candidates, on=["subject_qid", "property"]).merge(
        cohorts[["subject_qid", "subject"]], on="subject_qid", how="left"
    )
    table1 = result.cohorts.reset_index()
    numbers = {}
    for row in table1.to_dict("records"):
        cohort = row.get("cohort", "all")
        numbers[f"M_bar_pct_{cohort}"] = float(row["M_bar_pct"])
        if pd.notna(row["z_star_mean"]):  # undefined when no pair of the cohort is memorized
            numbers[f"z_star_mean_{cohort}"] = float(row["z_star_mean"])
        numbers[f"H_M0_{cohort}"] = int(row["H_M0"])
    context.log.info(f"Table 1 for {context.partition_key}: {numbers}")
    return Output(
        pairs,
        metadata={
            "rows": len(pairs),
            **numbers,
            "lenient_pairs": int(pairs["lenient"].sum()),
            "table_1": MetadataValue.md(table1.round(3).to_markdown(index=False)),
            "top_memorized": preview(pairs.sort_values(["M", "z_star"], ascending=False)[["subject", "property", "M", "z_star", "cohort"]]),
        },
    )
