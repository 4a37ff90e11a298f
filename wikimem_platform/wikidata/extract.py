"""Streaming reader for the Wikidata JSON dump format.

The dump is one entity per line between a leading ``[`` and a trailing ``]``, each line ending
in a comma. `read_dump` reads it in one of two modes:

* ``mode="fast"`` (default, `wikimem_platform.wikidata.dump_reader`): one pass, typed partial decoding of
  each line, ``workers`` processes, rows spilled to Parquet parts so memory does not grow with
  the dump;
* ``mode="full"``: the reference, kept to check the fast path against: every line fully parsed
  with ``json.loads``, labels of all entities held in memory, a second pass for value labels that
  come after the humans citing them.

Both give the same extract (tests/unit/wikidata/test_dump_reader.py); the functions below are the one place
where an entity's fields are read, used by both.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import pandas as pd

from wikimem_platform.wikidata import dump_reader
from wikimem_platform.wikidata.dump_reader import merge_counts, paused_gc
from wikimem_platform.wikidata.entities import (
    ALLOWED_DATATYPES,
    check_languages,
    DEFAULT_LANGUAGES,
    english_aliases,
    english_description,
    english_label,
    entity_terms,
    format_time,
    HUMAN_QID,
    INSTANCE_OF,
    is_human,
    MalformedDumpError,
    parse_claims,
    ParseStats,
    PID_PATTERN,
    QID_PATTERN,
    sitelink_count,
    TERMS_COLUMNS,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from wikimem_platform.wikidata.dump_reader import SpilledExtract

logger = logging.getLogger(__name__)

HUMANS_COLUMNS = ["qid", "label", "description", "aliases", "sitelinks"]
CLAIMS_COLUMNS = ["qid", "property", "datatype", "value", "value_label"]
RAW_CLAIMS_COLUMNS = [*CLAIMS_COLUMNS, "unit"]
"""A claim as read, before its value is labelled: a quantity's unit is an item id."""
VALUE_ALIASES_COLUMNS = ["value", "aliases"]
PROPERTIES_COLUMNS = ["property", "label", "description", "aliases", "datatype"]
READ_MODES = ("fast", "full")


@dataclass
class WikidataExtract:
    """Humans and their claims with labelled values; the English aliases of those values (one row
    per cited value that has any); the property entities of the dump (none in the bundled sample);
    the terms of humans and cited values in the extract's languages (`TERMS_COLUMNS`)."""

    humans: pd.DataFrame
    claims: pd.DataFrame
    stats: ParseStats
    value_aliases: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=VALUE_ALIASES_COLUMNS))
    properties: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PROPERTIES_COLUMNS))
    terms: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=TERMS_COLUMNS))
    """Labels, descriptions and aliases per language: one row per (qid, language) with any, for the
    humans and the item values their kept claims cite. A long table, not a column of dicts, so that
    it stays flat in Parquet whatever the languages; the English columns above are unchanged."""


def open_dump(path: str | Path) -> TextIO:
    """Open a dump as UTF-8 text, decompressing .gz / .bz2 on the fly (streaming)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Wikidata dump not found: {path}")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    if path.suffix == ".bz2":
        return bz2.open(path, "rt", encoding="utf-8")
    return io.open(path, "rt", encoding="utf-8")


def iter_dump_entities(
    path: str | Path,
    stats: ParseStats | None = None,
    progress: Callable[[ParseStats], None] | None = None,
    progress_every: int = 100_000,
) -> Iterator[dict]:
    """Yield each entity of a dump; count (and skip) lines that are not one JSON entity."""
    stats = stats if stats is not None else ParseStats()
    with open_dump(path) as handle:
        for line_number, raw in enumerate(handle, start=1):
            line = raw.strip()
            if line in ("", "[", "]"):
                continue
            stats.lines += 1
            if line.endswith(","):
                line = line[:-1]
            try:
                entity = json.loads(line)
                if not isinstance(entity, dict) or not isinstance(entity.get("id"), str):
                    raise ValueError("not an entity object with an 'id'")
            except ValueError as err:  # json.JSONDecodeError is a ValueError
                stats.malformed += 1
                if len(stats.malformed_examples) < 5:
                    stats.malformed_examples.append(f"line {line_number}: {str(err)[:120]}")
                continue
            stats.entities += 1
            if progress is not None and stats.lines % progress_every == 0:
                progress(stats)
            yield entity


def read_dump(
    path: str | Path,
    datatypes: tuple[str, ...] = ALLOWED_DATATYPES,
    max_malformed_share: float = 0.01,
    progress: Callable[[ParseStats], None] | None = None,
    progress_every: int = 100_000,
    mode: str = "fast",
    workers: int = 1,
    block_bytes: int | None = None,
    work_dir: str | Path | None = None,
    languages: Sequence[str] = DEFAULT_LANGUAGES,
) -> WikidataExtract:
    """Extract humans (P31 = Q5) with English label, aliases, sitelinks and labelled claims, and
    the terms in ``languages`` of the humans and their claims' item values (empty: none).

    Raises MalformedDumpError if more than ``max_malformed_share`` of the lines are malformed:
    a few broken lines are normal in a multi-GB download, many mean the wrong file. ``mode``,
    ``workers`` and ``block_bytes`` choose how (module docstring), never what is extracted;
    ``work_dir`` holds the fast mode's Parquet parts (a temporary directory by default). Workers
    are spawned processes: in a script, call this under ``if __name__ == "__main__":``.
    """
    if mode not in READ_MODES:
        raise ValueError(f"mode must be one of {READ_MODES}, got {mode!r}")
    languages = check_languages(languages)
    if mode == "full":
        if workers != 1:
            raise ValueError(f"mode='full' reads in one process, got workers={workers}")
        return _read_dump_full(path, datatypes, max_malformed_share, progress, progress_every, languages)
    import tempfile


    with tempfile.TemporaryDirectory(prefix="wikidata-extract-", dir=work_dir) as directory:
        spilled = dump_reader.spill_dump(
            path, Path(directory), datatypes, workers=workers,
            block_bytes=block_bytes or dump_reader.DEFAULT_BLOCK_BYTES,
            progress=progress, progress_every=progress_every, languages=languages,
        )
        return assemble_chunks([spilled], path, max_malformed_share)


def assemble_chunks(chunks: Sequence[SpilledExtract], path: str | Path, max_malformed_share: float = 0.01) -> WikidataExtract:
    """The extract from the fast reader's chunks (`dump_reader.plan_chunks`, `read_chunk`), given in
    file order: counts summed, malformed lines numbered in the whole file and held to
    ``max_malformed_share`` over all lines (one bad chunk fails only if the dump as a whole does),
    value labels resolved in one filtered read of every chunk's labels (the last one wins)."""

    if not chunks:
        raise ValueError(f"no chunks read from {path}")
    languages = chunks[0].languages
    if any(chunk.languages != languages for chunk in chunks):
        raise ValueError(f"the chunks of {path} were read for different languages: "
                         f"{sorted({chunk.languages for chunk in chunks})}")
    stats = ParseStats(workers=max(chunk.stats.workers for chunk in chunks))
    lines_before = 0
    for chunk in chunks:
        merge_counts(stats, chunk.stats, chunk.malformed_lines, lines_before)
        lines_before += chunk.physical_lines
    _check_malformed(stats, max_malformed_share, path)
    return _extract_from_parts([chunk.parts for chunk in chunks], stats, path, languages)


def _read_dump_full(
    path: str | Path,
    datatypes: tuple[str, ...],
    max_malformed_share: float,
    progress: Callable[[ParseStats], None] | None,
    progress_every: int,
    languages: tuple[str, ...],
) -> WikidataExtract:
    """The reference: every line through ``json.loads``, every label in memory, two passes at most."""
    stats = ParseStats()
    humans: list[tuple] = []
    claim_rows: list[dict] = []
    labels: dict[str, str] = {}
    aliases_by_id: dict[str, list[str]] = {}
    properties: list[tuple] = []
    terms: dict[tuple[str, str], tuple] = {}  # (id, language) -> its row; the last line's wins

    for entity in iter_dump_entities(path, stats, progress, progress_every):
        entity_id = entity["id"]
        for row in entity_terms(entity, languages):
            terms[entity_id, row[0]] = (entity_id, *row)
        label = english_label(entity)
        if label is not None:
            labels[entity_id] = label
        aliases = english_aliases(entity)
        if aliases:
            aliases_by_id[entity_id] = aliases
        if PID_PATTERN.match(entity_id):
            stats.properties += 1
            description, datatype = english_description(entity), entity.get("datatype")
            properties.append((entity_id, label, description if isinstance(description, str) else None, aliases,
                               datatype if isinstance(datatype, str) else None))
        if not is_human(entity):
            continue
        if label is None:
            stats.humans_without_english_label += 1
            continue
        stats.humans += 1
        description = english_description(entity)
        humans.append((entity_id, label, description if isinstance(description, str) else None, aliases,
                       sitelink_count(entity)))
        claim_rows.extend(parse_claims(entity, datatypes, stats))

    _check_malformed(stats, max_malformed_share, path)

    needed = {r["value"] for r in claim_rows if r["datatype"] == "wikibase-item"}
    needed |= {r["unit"] for r in claim_rows if r.get("unit")}
    missing = needed - labels.keys()
    if missing:
        # Values that appear before the human who cites them were kept in pass 1; a second
        # streaming pass picks up the rest.
        stats.label_passes = 2
        for entity in iter_dump_entities(path, ParseStats()):
            if entity["id"] in missing:
                label = english_label(entity)
                if label is not None:
                    labels[entity["id"]] = label

    import pyarrow as pa

    raw_claims = pa.table({c: pa.array([r.get(c) for r in claim_rows], pa.string()) for c in RAW_CLAIMS_COLUMNS})
    claims, kept_values = _label_claims(raw_claims, labels, stats)
    value_aliases = [(v, aliases_by_id[v]) for v in kept_values if v in aliases_by_id]
    described = kept_values | {row[0] for row in humans}
    kept_terms = [row for (entity_id, _), row in terms.items() if entity_id in described]
    return _assemble(humans, claims, value_aliases, properties, stats, path, kept_terms, languages)


def _extract_from_parts(parts: Sequence[dict[str, Path]], stats: ParseStats, path: str | Path,
                        languages: tuple[str, ...]) -> WikidataExtract:
    """The extract from the fast mode's Parquet parts, one set per chunk in file order (rows in
    file order, as the full parse sees them). It runs after the parallel pass, alone on one core:
    claims are labelled with Arrow compute, the few Python rows are built with the collector paused;
    the terms maps of the humans and cited values only are read (`entity_terms`)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq


    with paused_gc():
        raw_claims = pa.concat_tables([pq.ParquetFile(p["claims"]).read(columns=RAW_CLAIMS_COLUMNS) for p in parts])
        cited = pc.if_else(pc.equal(raw_claims["datatype"], "wikibase-item"), raw_claims["value"], raw_claims["unit"])
        needed = set(pc.unique(cited).drop_null().to_pylist())
        labels = dict(row for p in parts for row in _rows_with_ids(p["labels"], "id", needed))  # the last label wins
        claims, kept_values = _label_claims(raw_claims, labels, stats)
        value_aliases = list(dict(row for p in parts for row in _rows_with_ids(p["aliases"], "id", kept_values)).items())
        humans = [row for p in parts for row in _table_rows(pq.ParquetFile(p["humans"]).read())]
        properties = [row for p in parts for row in _table_rows(pq.ParquetFile(p["properties"]).read())]
        described = kept_values | {row[0] for row in humans}
        terms: dict[tuple[str, str], tuple] = {}  # (id, language) -> its row; the last line's wins
        for p in parts:
            for entity_id, blob in _rows_with_ids(p["terms"], "id", described):
                for row in entity_terms(json.loads(blob), languages):
                    terms[entity_id, row[0]] = (entity_id, *row)
        return _assemble(humans, claims, value_aliases, properties, stats, path, list(terms.values()), languages)


def _table_rows(table) -> list[tuple]:
    return list(zip(*(column.to_pylist() for column in table.columns)))


def _rows_with_ids(path: Path, id_column: str, ids: set[str]) -> Iterator[tuple]:
    """Rows (id first) of a part whose id is in ``ids``, read one row group (one spill) at a time on
    this thread. The ids are looked up in the Python set: Arrow's `is_in` rebuilds its hash table of
    ``ids`` on every call (1.3 s for 5 M ids), and the batch reader's threads held several row groups
    at once (+85 MB on the benchmark's terms maps)."""
    import pyarrow.parquet as pq

    if not ids:
        return
    part = pq.ParquetFile(path)
    for index in range(part.num_row_groups):
        group = part.read_row_group(index, use_threads=False)
        rows = [row for row, entity_id in enumerate(group.column(id_column).to_pylist()) if entity_id in ids]
        if rows:
            kept = group.take(rows)
            yield from zip(*(column.to_pylist() for column in kept.columns))


def _assemble(
    humans: list[tuple], claims: pd.DataFrame, value_aliases: list[tuple], properties: list[tuple],
    stats: ParseStats, path: str | Path, terms: list[tuple] = (), languages: tuple[str, ...] = (),
) -> WikidataExtract:
    """The frames of an extract from its rows (one constructor for both modes)."""
    logger.info(
        "Read %s: %d lines, %d humans, %d claims, %d malformed (%.3f%%)",
        path, stats.lines, stats.humans, stats.claims_kept, stats.malformed, 100 * stats.malformed_share,
    )
    humans_frame = pd.DataFrame(humans, columns=HUMANS_COLUMNS)
    humans_frame["aliases"] = humans_frame["aliases"].map(list)
    humans_frame["sitelinks"] = humans_frame["sitelinks"].astype("Int64")
    humans_frame = humans_frame.drop_duplicates("qid").sort_values("qid", key=_qid_sort_key, ignore_index=True)
    aliases_frame = pd.DataFrame(value_aliases, columns=VALUE_ALIASES_COLUMNS)
    aliases_frame["aliases"] = aliases_frame["aliases"].map(list)
    aliases_frame = aliases_frame.sort_values("value", key=_id_sort_key, ignore_index=True)
    properties_frame = pd.DataFrame(properties, columns=PROPERTIES_COLUMNS)
    properties_frame["aliases"] = properties_frame["aliases"].map(list)
    properties_frame = (
        properties_frame.drop_duplicates("property", keep="last")
        .sort_values("property", key=_qid_sort_key, ignore_index=True)
    )
    terms_frame = pd.DataFrame(terms, columns=TERMS_COLUMNS)
    terms_frame["aliases"] = terms_frame["aliases"].map(list)
    order = pd.DataFrame({"entity": _id_sort_key(terms_frame["qid"]),
                          "language": terms_frame["language"].map({code: i for i, code in enumerate(languages)})})
    terms_frame = terms_frame.loc[order.sort_values(["entity", "language"], kind="stable").index].reset_index(drop=True)
    return WikidataExtract(humans=humans_frame, claims=claims, stats=stats,
                           value_aliases=aliases_frame, properties=properties_frame, terms=terms_frame)


def _check_malformed(stats: ParseStats, max_malformed_share: float, path: str | Path) -> None:
    if stats.lines and stats.malformed_share > max_malformed_share:
        raise MalformedDumpError(
            f"{stats.malformed} of {stats.lines} lines of {path} are malformed "
            f"({100 * stats.malformed_share:.2f}% > allowed {100 * max_malformed_share:.2f}%). "
            f"First errors: {'; '.join(stats.malformed_examples)}"
        )


def _label_claims(raw: pa.Table, labels: dict[str, str], stats: ParseStats) -> tuple[pd.DataFrame, set[str]]:
    """Item values take their English label, quantities their unit's; claims left without a label
    are dropped and counted. ``raw``: RAW_CLAIMS_COLUMNS, rows in file order. Arrow compute, not a
    Python object per claim: in the fast mode this runs after the parallel pass, on one core.
    Returns the claims, sorted by entity number (`_qid_sort_key`'s order), property number and
    value, and the item values they keep (whose aliases the extract carries)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = pa.array(list(labels), pa.string())
    texts = pa.array(list(labels.values()), pa.string())

    def label_of(column: pa.ChunkedArray) -> pa.ChunkedArray:
        return pc.take(texts, pc.index_in(column, value_set=ids))

    items = pc.equal(raw["datatype"], "wikibase-item")
    with_unit = pc.binary_join_element_wise(raw["value"], label_of(raw["unit"]), " ")  # null without a unit label
    value_label = pc.if_else(items, label_of(raw["value"]), pc.coalesce(with_unit, raw["value_label"]))
    resolved = pc.fill_null(pc.not_equal(value_label, ""), False)
    claims = raw.select(CLAIMS_COLUMNS[:-1]).append_column("value_label", value_label).filter(resolved)
    stats.claims_kept = claims.num_rows
    stats.claims_unresolved_value = raw.num_rows - claims.num_rows
    kept_items = claims.filter(pc.equal(claims["datatype"], "wikibase-item"))["value"]
    by_id = [pc.cast(pc.utf8_slice_codeunits(claims[column], 1), pa.int64()) for column in ("qid", "property")]
    order = pc.sort_indices(pa.table({"qid": by_id[0], "property": by_id[1], "value": claims["value"]}),
                            sort_keys=[("qid", "ascending"), ("property", "ascending"), ("value", "ascending")])
    frame = claims.take(order).to_pandas() if claims.num_rows else pd.DataFrame([], columns=CLAIMS_COLUMNS)
    return frame, set(pc.unique(kept_items).to_pylist())


def _qid_sort_key(column: pd.Series) -> pd.Series:
    """Sort Q/P ids numerically (Q42 before Q100) and other columns as they are."""
    if column.name in ("qid", "property"):
        return column.str[1:].astype("int64")
    return column


def _id_sort_key(column: pd.Series) -> pd.Series:
    """Entity ids by number (Q42 before Q100); an id that is not letter + digits sorts last."""
    return pd.to_numeric(column.astype("string").str[1:], errors="coerce").fillna(float("inf"))


def load_property_metadata(path: str | Path) -> pd.DataFrame:
    """Property metadata (id, label, description, aliases, datatype) from a JSON-lines file."""
    with open_dump(path) as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    frame = pd.DataFrame(records)
    frame = frame.rename(columns={"id": "property"})
    frame["aliases"] = frame["aliases"].apply(lambda a: list(a) if isinstance(a, list) else [])
    return frame[["property", "label", "description", "aliases", "datatype"] + (["usage_count"] if "usage_count" in frame else [])]
