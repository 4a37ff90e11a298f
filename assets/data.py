"""Data assets: the Wikidata extract, the property table, cohorts, counterfactuals, candidates.

Thin wiring over wikimem_platform: configuration, logging and UI metadata live here, every
computation lives in the domain library.
"""

import contextlib
import os
import shutil
from pathlib import Path

import pandas as pd
from dagster import (
    AssetExecutionContext,
    AssetOut,
    Config,
    DynamicOut,
    DynamicOutput,
    MetadataValue,
    OpExecutionContext,
    Out,
    Output,
    asset,
    config_mapping,
    graph_multi_asset,
    op,
)

from assets.metadata import preview
from wikimem_platform.reference import bundled
from wikimem_platform.reference.cohorts import add_web_presence, draw_cohorts
from wikimem_platform.reference.counterfactuals import build_candidates, draw_counterfactuals
from wikimem_platform.reference.properties import (
    build_property_table,
    DEFAULT_MIN_HUMANS,
    DUMP_SOURCE,
    merge_property_metadata,
    metadata_sources,
    SIDE_FILE_SOURCE,
)
from wikimem_platform.versions import source_version
from wikimem_platform.wikidata.dump_reader import (
    DEFAULT_CHUNK_BYTES,
    DumpChunk,
    plan_chunks,
    read_chunk,
    SpilledExtract,
)
from wikimem_platform.wikidata.entities import check_languages, DEFAULT_LANGUAGES
from wikimem_platform.wikidata.extract import ALLOWED_DATATYPES, assemble_chunks, load_property_metadata, ParseStats

GROUP = "data"

class ExtractConfig(Config):
    dump_path: str = str(bundled.SAMPLE_DUMP)
    web_presence_path: str | None = str(bundled.SAMPLE_WEB_PRESENCE)
    max_malformed_share: float = 0.01
    datatypes: list[str] = list(ALLOWED_DATATYPES)
    # Languages whose labels, descriptions and aliases `entity_terms` keeps (Wikidata codes: "pl",
    # "pt-br"); [] keeps the English columns only.
    languages: list[str] = list(DEFAULT_LANGUAGES)
    # Steps: the dump is cut into chunks of about chunk_bytes of the file, one step each (an executor
    # spreads them over processes or machines): plain JSON at line starts, .bz2 at its compressed
    # blocks; a .gz dump is one chunk (dump_reader.plan_chunks).
    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    # Processes parsing one chunk's blocks, the step's own included: 1 (the sample), N, or 0 = one per CPU core.
    workers: int = 1


EXTRACT_VERSION = source_version("wikimem_platform.wikidata.extract")


def _record_frame(chunk: int, record: DumpChunk | SpilledExtract) -> pd.DataFrame:
    """A small record passed between the extract's steps (a chunk; its counts and part paths) as a
    one-row frame, which the run's IO manager stores like the assets (under the instance storage,
    where every step of a multiprocess or k8s run can read it)."""
    return pd.DataFrame({"chunk": [chunk], "record": [record.to_json()]})


def _parts_root(context: OpExecutionContext) -> Path:
    """The chunks' Parquet parts live under the instance storage, shared by the run's steps."""
    return Path(context.instance.storage_directory()) / "wikidata_extract" / context.run_id


@op(out=DynamicOut(pd.DataFrame))
def plan_dump_chunks(context: OpExecutionContext, config: ExtractConfig):
    """Cut the dump into the chunks that the next step reads one per step."""
    if config.workers < 0:
        raise ValueError(f"workers must be >= 0 (0 = one per CPU core), got {config.workers}")
    check_languages(config.languages)  # refused before any chunk is read
    chunks = plan_chunks(config.dump_path, config.chunk_bytes)
    context.log.info(f"{config.dump_path}: {len(chunks)} chunk(s) of about {config.chunk_bytes:,} bytes of the file")
    for chunk in chunks:
        yield DynamicOutput(_record_frame(chunk.index, chunk), mapping_key=f"chunk_{chunk.index}")


@op(out=Out(pd.DataFrame))
def parse_dump_chunk(context: OpExecutionContext, config: ExtractConfig, planned: pd.DataFrame) -> pd.DataFrame:
    """Read one chunk with `workers` processes, its rows spilled to Parquet parts; pass on paths and counts."""
    chunk = DumpChunk.from_json(planned["record"].iloc[0])
    work_dir = _parts_root(context) / f"chunk_{chunk.index}"
    work_dir.mkdir(parents=True, exist_ok=True)

    def log_progress(stats: ParseStats) -> None:
        context.log.info(f"chunk {chunk.index}: {stats.lines:,} lines read, {stats.humans:,} humans kept, "
                         f"{stats.malformed:,} malformed")

    try:
        spilled = read_chunk(chunk, work_dir, tuple(config.datatypes), workers=config.workers or os.cpu_count() or 1,
                             progress=log_progress, languages=config.languages)
    except BaseException:
        shutil.rmtree(work_dir, ignore_errors=True)
        raise
    context.log.info(f"chunk {chunk.index} ({chunk.describe()}): "
                     f"{spilled.stats.as_dict()}")
    return _record_frame(chunk.index, spilled)


@op(out={name: Out() for name in ("humans", "claims", "value_aliases", "dump_properties", "entity_terms")})
def collect_dump_chunks(context: OpExecutionContext, config: ExtractConfig, read: list[pd.DataFrame]):
    """Merge the chunks (counts, malformed threshold over all lines, value labels) into the extract."""
    in_file_order = sorted(read, key=lambda frame: int(frame["chunk"].iloc[0]))
    chunks = [SpilledExtract.from_json(frame["record"].iloc[0]) for frame in in_file_order]
    extract = assemble_chunks(chunks, config.dump_path, config.max_malformed_share)
    signals = pd.read_csv(config.web_presence_path) if config.web_presence_path else None
    humans = add_web_presence(extract.humans, signals)
    stats = extract.stats
    context.log.info(f"Extract done ({len(chunks)} chunk(s)): {stats.as_dict()}")
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
            "chunks": len(chunks),
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
    yield Output(
        extract.properties,
        "dump_properties",
        metadata={"rows": len(extract.properties), "preview": preview(extract.properties)},
    )
    terms = extract.terms
    yield Output(
        terms,
        "entity_terms",
        metadata={
            "rows": len(terms),
            "languages": MetadataValue.json(list(config.languages)),
            "rows_per_language": MetadataValue.json(terms["language"].value_counts().to_dict()),
            "preview": preview(terms),
        },
    )
    for chunk in chunks:  # the extract is stored: its parts are not needed again
        chunk_dir = next(iter(chunk.parts.values())).parent
        shutil.rmtree(chunk_dir, ignore_errors=True)
        with contextlib.suppress(OSError):  # the run's directory, once its last chunk is gone
            chunk_dir.parent.rmdir()


@config_mapping
def _extract_config(config: ExtractConfig) -> dict:
    """One config for the whole extract, as before it was a graph: every step reads the same."""
    ops_config = {"config": config.model_dump()}
    return {name: ops_config for name in ("plan_dump_chunks", "parse_dump_chunk", "collect_dump_chunks")}


@graph_multi_asset(
    outs={
        "humans": AssetOut(group_name=GROUP, kinds={"pandas"}, code_version=EXTRACT_VERSION, description="Humans (P31 = Q5) with English label, aliases and web presence."),
        "claims": AssetOut(group_name=GROUP, kinds={"pandas"}, code_version=EXTRACT_VERSION, description="Their claims of the selected datatypes, values labelled in English."),
        "value_aliases": AssetOut(group_name=GROUP, kinds={"pandas"}, code_version=EXTRACT_VERSION, description="English aliases of the entities cited as claim values, one row per value that has any."),
        "dump_properties": AssetOut(group_name=GROUP, kinds={"pandas"}, code_version=EXTRACT_VERSION, description="The dump's property entities (label, description, aliases, datatype); none in the bundled sample."),
        "entity_terms": AssetOut(group_name=GROUP, kinds={"pandas"}, code_version=EXTRACT_VERSION, description="Labels, descriptions and aliases of the humans and of the item values they cite in the configured languages: one row per (qid, language) with any."),
    },
    group_name=GROUP,  # graph_multi_asset reads the group here, not from each AssetOut
    config=_extract_config,
)
def wikidata_extract():
    """The dump read in chunks, one step each (plain JSON cut at line starts, .bz2 at its blocks; a
    .gz is one chunk), each spilling Parquet parts under the instance storage; one step merges them."""
    chunks = plan_dump_chunks().map(parse_dump_chunk)
    humans, claims, value_aliases, dump_properties, entity_terms = collect_dump_chunks(chunks.collect())
    return {"humans": humans, "claims": claims, "value_aliases": value_aliases, "dump_properties": dump_properties,
            "entity_terms": entity_terms}


class PropertyTableConfig(Config):
    metadata_path: str = str(bundled.SAMPLE_PROPERTIES)
    min_humans: int = DEFAULT_MIN_HUMANS

@asset(group_name=GROUP, kinds={"pandas"}, code_version=source_version("wikimem_platform.reference.properties"))
def property_table(
    context: AssetExecutionContext, config: PropertyTableConfig, claims: pd.DataFrame, dump_properties: pd.DataFrame
) -> Output[pd.DataFrame]:
    """Person properties worth probing: allowed datatype, used by at least min_humans humans; labels
    from the dump's property entities, else from the metadata_path side file."""
    metadata = merge_property_metadata(dump_properties, load_property_metadata(config.metadata_path))
    table = build_property_table(claims, metadata, min_humans=config.min_humans)
    sources = metadata_sources(table, metadata)
    context.log.info(f"{len(table)} properties kept (min_humans={config.min_humans}), metadata from {sources}")
    return Output(
        table,
        metadata={
            "rows": len(table),
            "metadata_from_dump": sources[DUMP_SOURCE],
            "metadata_from_side_file": sources[SIDE_FILE_SOURCE],
            "datatypes": MetadataValue.json(table["datatype"].value_counts().to_dict()),
            "preview": preview(table, rows=30),
        },
    )

class CohortConfig(Config):
    size: int = 100
    seed: int = 0
    pool_factor: float = 1.0

@asset(group_name=GROUP, kinds={"pandas"}, code_version=source_version("wikimem_platform.reference.cohorts"))
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

@asset(group_name=GROUP, kinds={"pandas"}, code_version=source_version("wikimem_platform.reference.counterfactuals"))
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

@asset(group_name=GROUP, kinds={"pandas"}, code_version=source_version("wikimem_platform.reference.counterfactuals"))
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
