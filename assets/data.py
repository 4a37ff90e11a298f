"""Data assets: the Wikidata extract, the property table, cohorts, counterfactuals, candidates.

Thin wiring over wikimem_platform: configuration, logging and UI metadata live here, every
computation lives in the domain library.
"""

import os

import pandas as pd
from dagster import (
    AssetExecutionContext,
    AssetOut,
    Config,
    MetadataValue,
    Output,
    asset,
    multi_asset,
)

from assets.metadata import preview
from wikimem_platform import bundled
from wikimem_platform.cohorts import add_web_presence, draw_cohorts
from wikimem_platform.counterfactuals import build_candidates, draw_counterfactuals
from wikimem_platform.properties import DEFAULT_MIN_HUMANS, build_property_table
from wikimem_platform.versions import source_version
from wikimem_platform.wikidata import (
    ALLOWED_DATATYPES,
    ParseStats,
    load_property_metadata,
    read_dump,
)

GROUP = "data"

class ExtractConfig(Config):
    dump_path: str = str(bundled.SAMPLE_DUMP)
    web_presence_path: str | None = str(bundled.SAMPLE_WEB_PRESENCE)
    max_malformed_share: float = 0.01
    datatypes: list[str] = list(ALLOWED_DATATYPES)
    # Worker processes parsing the dump's blocks: 1 (the sample), N, or 0 = one per CPU core.
    workers: int = 1

@multi_asset(
    outs={
        "humans": AssetOut(group_name=GROUP, kinds={"pandas"}, description="Humans (P31 = Q5) with English label, aliases and web presence."),
        "claims": AssetOut(group_name=GROUP, kinds={"pandas"}, description="Their claims of the selected datatypes, values labelled in English."),
        "value_aliases": AssetOut(group_name=GROUP, kinds={"pandas"}, description="English aliases of the entities cited as claim values, one row per value that has any."),
    },
    code_version=source_version("wikimem_platform.wikidata", "wikimem_platform.entities", "wikimem_platform.dump_reader"),
)
def wikidata_extract(context: AssetExecutionContext, config: ExtractConfig):
    """Stream the dump once, its blocks parsed by `workers` processes, rows spilled to Parquet parts."""
    if config.workers < 0:
        raise ValueError(f"workers must be >= 0 (0 = one per CPU core), got {config.workers}")

    def log_progress(stats: ParseStats) -> None:
        context.log.info(f"{stats.lines:,} lines read, {stats.humans:,} humans kept, {stats.malformed:,} malformed")

    extract = read_dump(
        config.dump_path,
        datatypes=tuple(config.datatypes),
        max_malformed_share=config.max_malformed_share,
        progress=log_progress,
        workers=config.workers or os.cpu_count() or 1,
    )
    signals = pd.read_csv(config.web_presence_path) if config.web_presence_path else None
    humans = add_web_presence(extract.humans, signals)
    stats = extract.stats
    context.log.info(f"Extract done: {stats.as_dict()}")
    yield Output(
        humans,
        "humans",
        metadata={
            "rows": len(humans),
            "with_web_presence": int(humans["web_presence"].notna().sum()),
            "lines_read": stats.lines,
            "malformed_lines_skipped": stats.malformed,
            "malformed_share": stats.malformed_share,
            "humans_without_english_label": stats.humans_without_english_label,
            "workers": stats.workers,
            "source": MetadataValue.path(config.dump_path),
            "preview": preview(humans.sort_values("web_presence", ascending=False)),
        },
    )
    yield Output(
        extract.claims,
        "claims",
        metadata={
            "rows": len(extract.claims),
            "properties": int(extract.claims["property"].nunique()),
            "claims_unresolved_value_skipped": stats.claims_unresolved_value,
            "claims_other_datatype_skipped": stats.claims_other_datatype,
            "preview": preview(extract.claims),
        },
    )
    yield Output(
        extract.value_aliases,
        "value_aliases",
        metadata={"rows": len(extract.value_aliases), "preview": preview(extract.value_aliases)},
    )

class PropertyTableConfig(Config):
    metadata_path: str = str(bundled.SAMPLE_PROPERTIES)
    min_humans: int = DEFAULT_MIN_HUMANS

@asset(group_name=GROUP, kinds={"pandas"}, code_version=source_version("wikimem_platform.properties"))
def property_table(context: AssetExecutionContext, config: PropertyTableConfig, claims: pd.DataFrame) -> Output[pd.DataFrame]:
    """Person properties worth probing: allowed datatype, used by at least min_humans humans."""
    table = build_property_table(claims, load_property_metadata(config.metadata_path), min_humans=config.min_humans)
    context.log.info(f"{len(table)} properties kept (min_humans={config.min_humans})")
    return Output(
        table,
        metadata={
            "rows": len(table),
            "datatypes": MetadataValue.json(table["datatype"].value_counts().to_dict()),
            "preview": preview(table, rows=30),
        },
    )

class CohortConfig(Config):
    size: int = 100
    seed: int = 0
    pool_factor: float = 1.0

@asset(group_name=GROUP, kinds={"pandas"}, code_version=source_version("wikimem_platform.cohorts"))
def subjects(
    context: AssetExecutionContext, config: CohortConfig, humans: pd.DataFrame, claims: pd.DataFrame, property_table: pd.DataFrame
) -> Output[pd.DataFrame]:
    """Well-known and lesser-known cohorts by web presence, among humans with a probed property."""
    eligible = set(claims.loc[claims["property"].isin(property_table["property"]), "qid"])
    cohorts = draw_cohorts(humans, eligible, size=config.size, seed=config.seed, pool_factor=config.pool_factor)
    by_cohort = cohorts.groupby("cohort")["web_presence"]
    return Output(
        cohorts,
        metadata={
            "rows": len(cohorts),
            "eligible_humans": len(eligible),
            "web_presence_well_known_min": float(by_cohort.min().get("well-known", float("nan"))),
            "web_presence_lesser_known_max": float(by_cohort.max().get("lesser-known", float("nan"))),
            "preview": preview(pd.concat([cohorts.head(5), cohorts.tail(5)])),
        },
    )

class CounterfactualConfig(Config):
    per_property: int = 100
    seed: int = 0

@asset(group_name=GROUP, kinds={"pandas"}, code_version=source_version("wikimem_platform.counterfactuals"))
def counterfactuals(
    config: CounterfactualConfig,
    humans: pd.DataFrame,
    claims: pd.DataFrame,
    property_table: pd.DataFrame,
    subjects: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """Up to per_property (human, value) pairs per property, drawn from non-subjects."""
    table = draw_counterfactuals(
        claims,
        humans,
        list(property_table["property"]),
        per_property=config.per_property,
        seed=config.seed,
        exclude_humans=set(subjects["qid"]),
    )
    counts = table.groupby("property").size()
    return Output(
        table,
        metadata={
            "rows": len(table),
            "properties": len(counts),
            "min_per_property": int(counts.min()) if len(counts) else 0,
            "per_property": MetadataValue.json(counts.to_dict()),
            "preview": preview(table),
        },
    )

@asset(group_name=GROUP, kinds={"pandas"}, code_version=source_version("wikimem_platform.counterfactuals"))
def candidates(subjects: pd.DataFrame, claims: pd.DataFrame, counterfactuals: pd.DataFrame) -> Output[pd.DataFrame]:
    """Per (subject, property): ground truths plus counterfactual values that differ from them."""
    table = build_candidates(subjects, claims, counterfactuals)
    per_pair = table.groupby(["subject_qid", "property"]).size()
    return Output(
        table,
        metadata={
            "rows": len(table),
            "subject_property_pairs": len(per_pair),
            "mean_candidates_per_pair": float(per_pair.mean()) if len(per_pair) else 0.0,
            "preview": preview(table),
        },
    )
