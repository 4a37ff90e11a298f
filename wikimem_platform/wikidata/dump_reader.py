"""The fast Wikidata dump reader: one pass, typed partial decoding, worker processes, Parquet spill.

Every line of a dump must be decoded anyway: a malformed line has to be counted exactly as the
full parse counts it, and the English label and aliases of every entity may be needed later as a
value label (values come before or after the humans citing them), as may its terms in the
extract's languages. So the floor is one cheap decode per line. msgspec's typed decoding is that
floor: a Struct that names only ``id``, the entries of labels and aliases (and descriptions) in
the extract's languages and ``claims.P31`` validates the whole line but skips the rest
(qualifiers, references, sitelinks, other languages) without building objects, at about 1 GB/s of
CPU, four times orjson's full parse and eight times ``json.loads`` on these lines. The structs
are built per set of languages (`decoders`); with none, only English is decoded.

Lines are routed from their raw bytes first: a line holding the dump's own serialization of the
P31 = Q5 value (``"id":"Q5"``) goes straight to the human decoder (claims' main snaks); every
other line gets the light decoder, whose ``P31`` statements are checked exactly with
`entities.is_human`, so a human written in another encoding (escapes, an old-format
``numeric-id`` only, whitespace) is still caught. The byte test only saves work, it never
decides alone that a line is not a human: a byte test that could (every JSON spelling of "Q5"
and of the number 5) costs several scans of each line, more than the typed decode it would
spare, since every line is decoded anyway. Anything the typed decoders do not expect (a type
mismatch, NaN, a lone surrogate) falls back to ``json.loads`` and the reference functions of
`entities`, so results and malformed-line accounting are those of the full parse.

Parallel: ``workers`` processes parse, this one included (``workers - 1`` helpers are
spawned, each fed through its own pipe by this process's one thread): a block goes to a helper
while one of the helpers' tickets is free, otherwise this process parses it itself rather than
wait, so on 2 cores 2 processes parse and none idles (nor waits while a helper starts); at the
end, blocks no helper has started are taken back. An uncompressed dump is split into byte
ranges that the helpers read themselves; a ``.json.gz`` is decompressed in one stream (ISA-L's
inflate, ~4.7x zlib's speed) in this process (gzip cannot be entered in the middle) and its
blocks reach the helpers through shared-memory slots, where they are parsed in place; a
``.json.bz2`` is decompressed on several threads by indexed_bzip2, or, cut into chunks at its
blocks for separate steps (`plan_chunks`, `bzip2_blocks`), block by block on several threads.
Results come back in file order, so the first malformed lines and "the last label of an id wins"
are those of one pass.

Memory: blocks of whole lines (``block_bytes``) read into one reused buffer per process, at most
four in flight per helper; rows are written to Parquet parts in a work directory as they arrive
(a row group per SPILL_ROWS rows of a kind, so that writing them is spread over the pass too).
The English labels and the terms of all entities go to disk, not to memory; only the ids cited by
humans' claims are held to resolve them at the end.
"""

from __future__ import annotations

import bz2
import gc
import gzip
import json
import threading
import traceback
from contextlib import contextmanager
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory
from mmap import mmap
from pathlib import Path
from typing import Any

import msgspec
from isal import isal_zlib

from wikimem_platform.wikidata import bzip2_blocks
from wikimem_platform.wikidata.entities import (
    alias_texts,
    ALLOWED_DATATYPES,
    check_languages,
    DEFAULT_LANGUAGES,
    english_aliases,
    english_description,
    english_label,
    is_human,
    label_text,
    parse_claims,
    ParseStats,
    PID_PATTERN,
    sitelink_count,
    states_human,
)

DEFAULT_BLOCK_BYTES = 8 << 20
"""Lines are handed to helpers in blocks of about this many (uncompressed) bytes."""
BLOCKS_IN_FLIGHT_PER_HELPER = 4
"""Tickets (and, for a compressed dump, shared slots) per helper: enough that a helper never waits
for its next block while this process parses one of its own."""
RESULTS_HELD_PER_TICKET = 8
"""Results held in file order behind a helper's unanswered block: enough that this process goes
on parsing (rather than waiting) while a spawned helper starts."""
MAX_MALFORMED_EXAMPLES = 5
SPILL_ROWS = 32_768
"""Rows of one kind buffered before they are written as a Parquet row group: small enough that
the writing happens during the pass (where the helpers take up the slack), not all at its end."""
SPILL_TERMS_BYTES = 4 << 20
"""Bytes of terms maps buffered before they are written (a map is ~0.7 KB on average, up to
~12 KB on the benchmark's dump: 32,768 rows of them would hold up to ~400 MB)."""

HUMAN_HINT = b'"id":"Q5"'
"""The P31 = Q5 value as the dump serializes it: lines holding it go straight to the human decoder."""

_UNSET = msgspec.UNSET


class _TermsMap(msgspec.Struct):
    """Base of the terms-map structs `decoders` builds: a labels / descriptions / aliases map with
    only the entries of the extract's languages decoded (English first, as attribute ``t0``)."""


class _InstanceOf(msgspec.Struct):
    P31: Any = _UNSET


class _Statement(msgspec.Struct):
    mainsnak: Any = _UNSET
    rank: Any = _UNSET


@dataclass(frozen=True)
class Decoders:
    """The typed decoders for one set of term languages (`decoders`)."""

    languages: tuple[str, ...]
    """The languages of the terms table; empty: the English columns only (nothing else decoded)."""
    terms: type
    """The terms-map struct: entries of "en" (``t0``) and of ``languages``."""
    light: msgspec.json.Decoder
    """What every line needs: its id, its terms (value labels, value aliases, value terms) and its
    P31 statements (a human in an encoding the byte test does not know)."""
    light_keys: tuple[str, ...]
    human: msgspec.json.Decoder
    """Humans (and properties): terms, every statement's main snak and rank, sitelinks."""


_HUMAN_KEYS = ("labels", "descriptions", "aliases", "datatype", "sitelinks")


@lru_cache(maxsize=8)
def decoders(languages: tuple[str, ...] = ()) -> Decoders:
    """The decoders reading the terms of "en" and of ``languages``, built once per process. With
    no languages the light decoder skips descriptions as before (the English-only reader)."""
    codes = ("en", *(code for code in languages if code != "en"))
    fields = [(f"t{index}", Any, msgspec.field(default=_UNSET, name=code)) for index, code in enumerate(codes)]
    terms = msgspec.defstruct("_Terms", fields, bases=(_TermsMap,))
    union = terms | list | None
    light_keys = ("labels", "aliases", "descriptions") if languages else ("labels", "aliases")
    light = msgspec.defstruct("_LightEntity", [("id", str), *((key, union, _UNSET) for key in light_keys),
                                               ("claims", _InstanceOf | list | None, _UNSET)])
    human = msgspec.defstruct("_HumanEntity", [
        ("id", str), *((key, union, _UNSET) for key in ("labels", "descriptions", "aliases")),
        ("datatype", Any, _UNSET), ("claims", dict[str, list[_Statement]] | list | None, _UNSET),
        ("sitelinks", dict[str, msgspec.Raw] | list | None, _UNSET)])
    return Decoders(languages, terms, msgspec.json.Decoder(light), light_keys, msgspec.json.Decoder(human))


class _TermMaps(msgspec.Struct):
    """An entity's terms maps restricted to the extract's languages, as spilled (`terms_blob`)."""

    labels: Any = _UNSET
    descriptions: Any = _UNSET
    aliases: Any = _UNSET


def terms_blob(labels: Any = _UNSET, descriptions: Any = _UNSET, aliases: Any = _UNSET) -> bytes:
    """An entity's terms maps (decoded terms-map structs, or dicts already cut to the extract's
    languages) as JSON for the spill. `entities.entity_terms` reads them at the end, for the few
    entities that turn out to be humans or cited values: done here for every line, its Python
    work per language doubled the reader's CPU time. Text UTF-8 cannot encode (a lone surrogate,
    which ``json.loads`` lets through) is written as a JSON escape."""
    try:
        return msgspec.json.encode(_TermMaps(labels, descriptions, aliases))
    except UnicodeEncodeError:
        maps = {key: _terms(value) for key, value in zip(_TERM_KEYS, (labels, descriptions, aliases)) if value is not _UNSET}
        return json.dumps(maps, ensure_ascii=True).encode()


_TERM_KEYS = ("labels", "descriptions", "aliases")


def _terms(value: Any) -> Any:
    """A terms map as the reference functions read it ({"en": ..., "de": ...} or {}); other values as they are."""
    if isinstance(value, _TermsMap):
        return {code: entry for code, entry in zip(type(value).__struct_encode_fields__, msgspec.structs.astuple(value))
                if entry is not _UNSET}
    return value


def _as_entity(decoded: Any, keys: tuple[str, ...]) -> dict:
    """The decoded fields as the dict the reference functions of `entities` read (same values)."""
    entity: dict[str, Any] = {"id": decoded.id}
    for key in keys:
        value = getattr(decoded, key)
        if value is not _UNSET:
            entity[key] = _terms(value)
    claims = decoded.claims
    if isinstance(claims, _InstanceOf):
        entity["claims"] = {} if claims.P31 is _UNSET else {"P31": claims.P31}
    elif isinstance(claims, dict):
        entity["claims"] = {
            prop: [
                {k: v for k, v in (("mainsnak", s.mainsnak), ("rank", s.rank)) if v is not _UNSET}
                for s in statements
            ]
            for prop, statements in claims.items()
        }
    elif claims is not _UNSET:
        entity["claims"] = claims
    return entity


def _reference_entity(line: bytes) -> dict:
    """The full parse of one line, as `wikidata.iter_dump_entities` does it (ValueError if malformed)."""
    entity = json.loads(line.decode("utf-8"))
    if not isinstance(entity, dict) or not isinstance(entity.get("id"), str):
        raise ValueError("not an entity object with an 'id'")
    return entity


@dataclass
class BlockResult:
    """What one block of lines yields: counts, the first malformed lines, rows for the spill."""

    physical_lines: int = 0
    lines: int = 0
    malformed: int = 0
    entities: int = 0
    humans: int = 0
    humans_without_english_label: int = 0
    claims_other_datatype: int = 0
    properties: int = 0
    malformed_examples: list[tuple[int, str]] = field(default_factory=list)
    rows: dict[str, list] = field(default_factory=lambda: {kind: [] for kind in SPILL_KINDS})
    """Rows (tuples) while the block is parsed, then its columns (`columnize`) for the spill."""

    def columnize(self) -> BlockResult:
        """Rows to columns, in the worker, so that the main process only extends its buffers."""
        self.rows = {kind: [list(column) for column in zip(*rows)] for kind, rows in self.rows.items()}
        return self


SPILL_KINDS = ("humans", "claims", "labels", "aliases", "properties", "terms")


def _parse_line(data: bytes, view: memoryview, start: int, end: int, line_number: int,
                datatypes: tuple[str, ...], out: BlockResult, typed: Decoders) -> None:
    """One line, ``data[start:end]`` (stripped, without its comma), decoded without copying it."""
    entity: dict | None = None
    line = view[start:end]
    human: bool | None = None
    try:
        if data.find(HUMAN_HINT, start, end) >= 0:
            entity = _as_entity(typed.human.decode(line), _HUMAN_KEYS)
        else:
            light = typed.light.decode(line)
            if _record_light(light, out, typed):
                out.entities += 1
                return
            entity = _as_entity(light, typed.light_keys)
            human = bool(entity.get("claims")) and is_human(entity)
            if human or PID_PATTERN.match(light.id):  # a human in another encoding, or a property
                entity = _as_entity(typed.human.decode(line), _HUMAN_KEYS)
    except (msgspec.DecodeError, msgspec.ValidationError):
        human = None
        try:
            entity = _reference_entity(bytes(line))
        except ValueError as err:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
            out.malformed += 1
            if len(out.malformed_examples) < MAX_MALFORMED_EXAMPLES:
                out.malformed_examples.append((line_number, str(err)[:120]))
            return
    out.entities += 1
    record_entity(entity, datatypes, out, human, typed.languages)


def _record_light(light: Any, out: BlockResult, typed: Decoders) -> bool:
    """The common line, a non-human item of the usual shape: its English label and aliases, read
    with the reference functions' own term helpers, and its terms maps (`terms_blob`). False when
    the line needs the general path."""
    labels, aliases, claims, terms = light.labels, light.aliases, light.claims, typed.terms
    if type(labels) is not terms or type(aliases) is not terms or PID_PATTERN.match(light.id):
        return False
    if typed.languages:
        descriptions = light.descriptions
        if descriptions is not _UNSET and type(descriptions) is not terms:
            return False
    if type(claims) is _InstanceOf:
        if claims.P31 is not _UNSET and states_human(claims.P31):
            return False
    elif claims is not _UNSET:
        return False
    label = label_text({} if labels.t0 is _UNSET else labels.t0)
    if label is not None:
        out.rows["labels"].append((light.id, label))
    english = [] if aliases.t0 is _UNSET else alias_texts(aliases.t0)
    if english:
        out.rows["aliases"].append((light.id, english))
    if typed.languages:
        out.rows["terms"].append((light.id, terms_blob(labels, descriptions, aliases)))
    return True


def record_entity(entity: dict, datatypes: tuple[str, ...], out: BlockResult, human: bool | None = None,
                  languages: tuple[str, ...] = ()) -> None:
    """One valid entity's rows, with the reference functions; ``human`` if already known. The terms
    maps of ``languages`` are kept for every entity: which ones are cited values is known only at the end."""
    entity_id = entity["id"]
    if languages:
        maps = {key: _in_languages(entity[key], languages) for key in _TERM_KEYS if key in entity}
        out.rows["terms"].append((entity_id, terms_blob(**maps)))
    label = english_label(entity)
    if label is not None:
        out.rows["labels"].append((entity_id, label))
    aliases = english_aliases(entity)
    if aliases:
        out.rows["aliases"].append((entity_id, aliases))
    if PID_PATTERN.match(entity_id):
        out.properties += 1
        datatype = entity.get("datatype")
        out.rows["properties"].append(
            (entity_id, label, _text(english_description(entity)), aliases, datatype if isinstance(datatype, str) else None)
        )
    if not (is_human(entity) if human is None else human):
        return
    if label is None:
        out.humans_without_english_label += 1
        return
    out.humans += 1
    out.rows["humans"].append(
        (entity_id, label, _text(english_description(entity)), aliases, sitelink_count(entity))
    )
    stats = ParseStats()
    claims = parse_claims(entity, datatypes, stats)
    out.claims_other_datatype += stats.claims_other_datatype
    out.rows["claims"].extend(
        (r["qid"], r["property"], r["datatype"], r["value"], r["value_label"], r.get("unit")) for r in claims
    )


def _in_languages(terms: Any, languages: tuple[str, ...]) -> Any:
    """A terms map cut to ``languages``; anything else as it is (`entity_terms` judges it)."""
    return {language: terms[language] for language in languages if language in terms} if isinstance(terms, dict) else terms


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_WHITESPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() strips
_BRACKETS = frozenset(b"[]")
_COMMA = ord(",")
_NEWLINE = ord("\n")


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: while rows are built (tuples, no cycles) it would
    rescan every one of them again and again."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def parse_block(data: bytes | bytearray | mmap, datatypes: tuple[str, ...] = ALLOWED_DATATYPES,
                size: int | None = None, languages: tuple[str, ...] = ()) -> BlockResult:
    """Parse whole dump lines: the first ``size`` bytes of ``data`` (all of it by default; the
    block ends at a line end or at the end of the file); terms kept in ``languages``.

    Lines are found with ``find`` and decoded from a memoryview, never copied, with the garbage
    collector paused.
    """
    out = BlockResult()
    typed = decoders(languages)
    view = memoryview(data)
    with paused_gc():
        position, size, number = 0, len(data) if size is None else size, 0
        while position < size:
            end = data.find(b"\n", position, size)
            if end < 0:
                end = size
            start, number = position, number + 1
            position = end + 1
            while start < end and data[start] in _WHITESPACE:
                start += 1
            while end > start and data[end - 1] in _WHITESPACE:
                end -= 1
            if end == start or (end - start == 1 and data[start] in _BRACKETS):
                continue
            out.lines += 1
            if data[end - 1] == _COMMA:
                end -= 1
            _parse_line(data, view, start, end, number, datatypes, out, typed)
        out.physical_lines = number
        out.columnize()
    return out


_BUFFERS = threading.local()


def _scratch(size: int, keep: int = 0) -> bytearray:
    """This thread's reusable block buffer, at least ``size`` bytes (its first ``keep`` kept when
    it grows). A fresh 8 MB bytes object per block cost ~2,000 page faults (the allocator hands
    the pages back between blocks): a third of the parse's CPU time on plain JSON ranges."""
    buffer = getattr(_BUFFERS, "block", None)
    if buffer is None or len(buffer) < size:
        grown = bytearray(max(size, len(buffer) + len(buffer) // 2 if buffer is not None else 0))
        if buffer is not None and keep:
            grown[:keep] = buffer[:keep]
        buffer = _BUFFERS.block = grown
    return buffer


def _copy_pieces(pieces: Sequence[bytes], target: bytearray | memoryview) -> None:
    """A block's pieces (`iter_block_pieces`) written one after another at the start of ``target``."""
    offset = 0
    for piece in pieces:
        target[offset: offset + len(piece)] = piece
        offset += len(piece)


def parse_pieces(pieces: Sequence[bytes], datatypes: tuple[str, ...] = ALLOWED_DATATYPES,
                 languages: tuple[str, ...] = ()) -> BlockResult:
    """Parse a block given as pieces (`iter_block_pieces`), copied once into the block buffer."""
    size = sum(map(len, pieces))
    data = _scratch(size)
    _copy_pieces(pieces, data)
    return parse_block(data, datatypes, size, languages)


def parse_file_range(path: str, start: int, end: int, datatypes: tuple[str, ...],
                     languages: tuple[str, ...] = ()) -> BlockResult:
    """Parse the lines of an uncompressed dump that start in [start, end) (a helper's task), read
    into the block buffer."""
    with open(path, "rb") as handle:
        if start > 0:
            handle.seek(start - 1)
            if handle.read(1) != b"\n":
                handle.readline()  # the line under way belongs to the previous range
        begin = handle.tell()
        if begin >= end:
            return parse_block(b"", datatypes, languages=languages)
        data = _scratch(end - begin)
        with memoryview(data) as target:
            size = handle.readinto(target[: end - begin])
        if size and data[size - 1] != _NEWLINE:
            tail = handle.readline()  # finish the last line started before `end`
            data = _scratch(size + len(tail), keep=size)
            data[size: size + len(tail)] = tail
            size += len(tail)
    return parse_block(data, datatypes, size, languages)


# --------------------------------------------------------------------------- input


READ_BYTES = 1 << 18
"""Compressed bytes read at a time."""
PIECE_BYTES = 1 << 21
"""At most this many decompressed bytes per inflate call (a highly compressed stretch stays small)."""


def open_binary(path: str | Path, threads: int = 1):
    """A dump's decompressed bytes as a file. ``.bz2``: indexed_bzip2 on ``threads`` threads (bzip2
    blocks decompress independently), else the standard library; ``.gz``: the standard library
    (`iter_block_pieces` reads gzip with ISA-L's inflate directly, which is faster)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Wikidata dump not found: {path}")
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    if path.suffix == ".bz2":
        try:
            import indexed_bzip2
        except ImportError:
            return bz2.open(path, "rb")
        return indexed_bzip2.open(str(path), parallelization=max(1, threads))
    return open(path, "rb")


def _gzip_pieces(path: Path) -> Iterator[bytes]:
    """Decompressed pieces of a gzip file, member after member; each member's CRC is checked.

    One stream, as ``gzip`` reads it, without its Python layers and its second pass for the CRC,
    inflated by ISA-L (`isal_zlib`, zlib's interface): 4.7x zlib's speed on the benchmark dump
    (0.43 vs 2.0 CPU s for 1 GB), so the one stream a gzip file allows stops being the bottleneck.
    rapidgzip was slower on one thread here and its memory grew with the file (750 MB for 1 GB).
    """
    with open(path, "rb") as raw:
        decompressor, fed = isal_zlib.decompressobj(wbits=31), False
        while compressed := raw.read(READ_BYTES):
            while compressed:
                fed = True
                try:
                    piece = decompressor.decompress(compressed, PIECE_BYTES)
                except isal_zlib.error as error:  # as the gzip module says it, with the file
                    raise gzip.BadGzipFile(f"{path}: {error} (a damaged or incomplete download?)") from error
                if piece:
                    yield piece
                if not decompressor.eof:
                    compressed = decompressor.unconsumed_tail  # output was capped: more to come
                    continue
                compressed = decompressor.unused_data  # the next member, if any
                decompressor, fed = isal_zlib.decompressobj(wbits=31), False
        if fed and not decompressor.eof:
            raise EOFError(f"{path}: compressed file ended before the end-of-stream marker was reached")


def decompressed_pieces(path: Path, block_bytes: int = DEFAULT_BLOCK_BYTES, threads: int = 1) -> Iterator[bytes]:
    """The dump's decompressed bytes, piece by piece, as the reader gets them (decompression alone)."""
    if path.suffix == ".gz":
        if not path.exists():
            raise FileNotFoundError(f"Wikidata dump not found: {path}")
        yield from _gzip_pieces(path)
        return
    with open_binary(path, threads) as handle:
        while chunk := handle.read(block_bytes):
            yield chunk


def iter_block_pieces(path: str | Path, block_bytes: int = DEFAULT_BLOCK_BYTES, threads: int = 1) -> Iterator[list[bytes]]:
    """The decompressed dump in blocks of whole lines (`blocks_of_lines`), one stream."""
    return blocks_of_lines(decompressed_pieces(Path(path), block_bytes, threads), block_bytes)


def blocks_of_lines(pieces: Iterable[bytes], block_bytes: int = DEFAULT_BLOCK_BYTES) -> Iterator[list[bytes]]:
    """Decompressed pieces regrouped in blocks of whole lines of about ``block_bytes``, each a list
    of pieces to be joined or copied once (a line is never split, so a line longer than a block
    makes a longer block)."""
    pieces_in_block: list[bytes] = []
    size = 0
    for piece in pieces:
        pieces_in_block.append(piece)
        size += len(piece)
        if size < block_bytes:
            continue
        for index in range(len(pieces_in_block) - 1, -1, -1):  # the last line end, most often in the last piece
            cut = pieces_in_block[index].rfind(b"\n") + 1
            if cut:
                head, tail = pieces_in_block[index][:cut], pieces_in_block[index][cut:]
                yield pieces_in_block[:index] + [head]
                rest = pieces_in_block[index + 1:]
                pieces_in_block, size = ([tail] if tail else []) + rest, len(tail) + sum(map(len, rest))
                break
    if size:
        yield pieces_in_block


def file_ranges(path: str | Path, block_bytes: int = DEFAULT_BLOCK_BYTES, start: int = 0,
                end: int | None = None) -> list[tuple[int, int]]:
    """Byte ranges of an uncompressed dump (of its stretch [start, end)); whoever reads a range
    finds its first line start itself (`parse_file_range`)."""
    end = Path(path).stat().st_size if end is None else end
    return [(begin, min(begin + block_bytes, end)) for begin in range(start, end, block_bytes)] or [(start, start)]


def is_compressed(path: str | Path) -> bool:
    return Path(path).suffix in (".gz", ".bz2")


DEFAULT_CHUNK_BYTES = 256 << 20
"""A dump is split into chunks of about this many bytes of the file as stored (compressed bytes for
a ``.json.bz2``; the bundled sample: one chunk)."""


@dataclass(frozen=True)
class DumpChunk:
    """A stretch of a dump that one step reads. Plain JSON: bytes [start, end), both at line
    starts. ``.json.bz2`` cut in several: bits [start, end) of the compressed file, both at block
    starts (`bzip2_blocks`). ``end`` None: the whole file (a ``.json.gz``, or a small ``.bz2``)."""

    path: str
    index: int
    start: int = 0
    end: int | None = None

    def describe(self) -> str:
        """Where the chunk lies, for run logs."""
        if self.end is None:
            return "the whole file"
        unit = "bits (bzip2 blocks)" if Path(self.path).suffix == ".bz2" else "bytes"
        return f"{unit} {self.start:,}-{self.end:,}"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> DumpChunk:
        return cls(**json.loads(text))


def plan_chunks(path: str | Path, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> list[DumpChunk]:
    """The chunks that separate steps (processes, machines) can read independently.

    Plain JSON: byte ranges of about ``chunk_bytes`` cut at line starts (a seek and one line read
    per cut). ``.json.bz2``: runs of whole bzip2 blocks of about ``chunk_bytes`` compressed bytes
    (a seek and a scan of about one block per cut; lines straddling two chunks are read by the
    first, `bzip2_blocks.chunk_pieces`), each decompressed on ``workers`` threads in its step.
    ``.json.gz``: one chunk, since a gzip stream cannot be entered in the middle without an index
    built by decompressing it all (what rapidgzip does); within its step it is still decompressed
    once and parsed by ``workers`` processes.
    """
    if chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be >= 1, got {chunk_bytes}")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Wikidata dump not found: {path}")
    size = path.stat().st_size
    if path.suffix == ".bz2" and size > chunk_bytes:
        starts = bzip2_blocks.plan_cuts(path, chunk_bytes)
        if len(starts) > 1:
            return [DumpChunk(str(path), index, start, end)
                    for index, (start, end) in enumerate(zip(starts, starts[1:] + [8 * size]))]
    if is_compressed(path):
        return [DumpChunk(str(path), 0)]
    cuts = [0]
    with open(path, "rb") as handle:
        target = chunk_bytes
        while target < size:
            handle.seek(target - 1)
            handle.readline()  # to the end of the line holding byte target - 1
            cut = handle.tell()
            if cut >= size:
                break
            cuts.append(cut)
            target = max(cut, target) + chunk_bytes
    cuts.append(size)
    return [DumpChunk(str(path), index, start, end) for index, (start, end) in enumerate(zip(cuts, cuts[1:]))]


# --------------------------------------------------------------------------- spill


class PartsWriter:
    """Rows of each kind appended in file order to one Parquet file per kind, a row group at a time."""

    def __init__(self, directory: Path):
        import pyarrow as pa

        string, strings = pa.string(), pa.list_(pa.string())
        self.schemas = {
            "humans": pa.schema([("qid", string), ("label", string), ("description", string),
                                 ("aliases", strings), ("sitelinks", pa.int64())]),
            "claims": pa.schema([("qid", string), ("property", string), ("datatype", string),
                                 ("value", string), ("value_label", string), ("unit", string)]),
            "labels": pa.schema([("id", string), ("label", string)]),
            "aliases": pa.schema([("id", string), ("aliases", strings)]),
            "properties": pa.schema([("property", string), ("label", string), ("description", string),
                                     ("aliases", strings), ("datatype", string)]),
            "terms": pa.schema([("id", string), ("terms", pa.binary())]),
        }
        self.directory = directory
        self.buffers: dict[str, list[list]] = {kind: [[] for _ in self.schemas[kind]] for kind in SPILL_KINDS}
        self.writers: dict[str, Any] = {}
        self.terms_bytes = 0

    def path(self, kind: str) -> Path:
        return self.directory / f"{kind}.parquet"

    def add(self, columns: dict[str, list[list]]) -> None:
        """A block's columns (`BlockResult.columnize`), appended in file order."""
        for kind, new in columns.items():
            buffer = self.buffers[kind]
            for column, values in zip(buffer, new):
                column.extend(values)
            if kind == "terms" and new:
                self.terms_bytes += sum(map(len, new[1]))
            if len(buffer[0]) >= SPILL_ROWS or (kind == "terms" and self.terms_bytes >= SPILL_TERMS_BYTES):
                self._flush(kind)

    def _flush(self, kind: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = self.schemas[kind]
        buffer = self.buffers[kind]
        table = pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(buffer, schema)], schema=schema)
        if kind not in self.writers:
            self.writers[kind] = pq.ParquetWriter(self.path(kind), schema)
        self.writers[kind].write_table(table)
        for column in buffer:
            column.clear()
        if kind == "terms":
            self.terms_bytes = 0

    def close(self) -> dict[str, Path]:
        for kind in SPILL_KINDS:
            if self.buffers[kind][0] or kind not in self.writers:
                self._flush(kind)
            self.writers[kind].close()
        return {kind: self.path(kind) for kind in SPILL_KINDS}


# --------------------------------------------------------------------------- driver


@dataclass
class SpilledExtract:
    """One pass over a dump (or one chunk of it): the counts and the Parquet parts holding its rows
    in file order; small, so that a step can hand it to the next one."""

    stats: ParseStats
    parts: dict[str, Path]
    physical_lines: int = 0
    """Lines of the file read (brackets and blank lines included): the next chunk's line offset."""
    malformed_lines: list[tuple[int, str]] = field(default_factory=list)
    """The first malformed lines: (line number within the chunk, error)."""
    languages: tuple[str, ...] = ()
    """The languages whose terms maps the ``terms`` part holds, in the order the terms table lists them."""

    def to_json(self) -> str:
        """Paths and counts as text, for a store that takes any JSON (a step's output)."""
        return json.dumps({"stats": asdict(self.stats), "parts": {k: str(v) for k, v in self.parts.items()},
                           "physical_lines": self.physical_lines, "malformed_lines": self.malformed_lines,
                           "languages": list(self.languages)})

    @classmethod
    def from_json(cls, text: str) -> SpilledExtract:
        record = json.loads(text)
        return cls(stats=ParseStats(**record["stats"]), parts={k: Path(v) for k, v in record["parts"].items()},
                   physical_lines=record["physical_lines"],
                   malformed_lines=[(number, message) for number, message in record["malformed_lines"]],
                   languages=tuple(record.get("languages", ())))


# The counts a block, a chunk and the whole read share (BlockResult and ParseStats fields of the same name).
SUMMED_COUNTS = ("lines", "malformed", "entities", "humans", "humans_without_english_label",
                 "claims_other_datatype", "properties")


def merge_counts(stats: ParseStats, part: BlockResult | ParseStats, malformed_lines: Sequence[tuple[int, str]],
                 lines_before: int) -> None:
    """Add a block's or a chunk's counts to ``stats``; its malformed lines (numbered within it) are
    numbered in the whole file, the first MAX_MALFORMED_EXAMPLES kept."""
    for name in SUMMED_COUNTS:
        setattr(stats, name, getattr(stats, name) + getattr(part, name))
    for number, message in malformed_lines:
        if len(stats.malformed_examples) < MAX_MALFORMED_EXAMPLES:
            stats.malformed_examples.append(malformed_example(lines_before + number, message))


def malformed_example(line_number: int, message: str) -> str:
    return f"line {line_number}: {message}"


_ATTACHED: dict[str, SharedMemory] = {}


def parse_shared_block(name: str, length: int, datatypes: tuple[str, ...], languages: tuple[str, ...] = ()) -> BlockResult:
    """A helper's task for a compressed dump: the block the main process wrote to a shared slot,
    parsed where it lies (the slot's mmap, ``buf.obj``, finds and indexes as bytes do)."""
    memory = _ATTACHED.get(name)
    if memory is None:  # registered again with the main process's resource tracker: a no-op
        memory = _ATTACHED[name] = SharedMemory(name=name)
    return parse_block(memory.buf.obj, datatypes, length, languages)


def _parse_shared_here(memory: SharedMemory, length: int, datatypes: tuple[str, ...],
                       languages: tuple[str, ...]) -> BlockResult:
    """A block taken back from a shared slot, copied into this process's block buffer first (no
    view of the slot outlives the parse, so the slot can be closed even after an error)."""
    data = _scratch(length)
    data[:length] = memory.buf[:length]
    return parse_block(data, datatypes, length, languages)


STOP_SECONDS = 5.0
"""How long a helper may take to answer or exit when stopped before it is terminated."""
_QUEUED, _CLAIMED, _TAKEN_BACK = 0, 1, 2
"""A ticket's state in `_Helpers.claims`: sent, started by a helper, or parsed by the main process."""


@dataclass
class _HelperFailure:
    traceback: str


def _helper_main(connection: Connection, claims: Any) -> None:
    """A helper process: runs the tasks that arrive on ``connection`` and answers each, in order,
    with (ticket, result), None if the main process took the task back first, or a traceback.
    Ends at a None, or quietly when the main process is gone (its end of the pipe closed)."""
    while True:
        try:
            task = connection.recv()
        except EOFError:
            return
        if task is None:
            return
        ticket, function, args = task
        with claims.get_lock():
            mine = claims[ticket] == _QUEUED
            if mine:
                claims[ticket] = _CLAIMED
        if not mine:
            connection.send((ticket, None))
            continue
        try:
            answer: Any = function(*args)
        except Exception:  # raised in the main process, which then stops this loop
            answer = _HelperFailure(traceback.format_exc())
        connection.send((ticket, answer))


class _Helpers:
    """``count`` spawned helper processes, each fed through its own pipe by this thread, which
    also reads the answers. (ProcessPoolExecutor relays tasks and results through two threads of
    this process; while this thread parsed they waited for the GIL, and the helper sat idle for
    ~8 % of the pass with its next block already submitted.)

    A task holds one of ``tickets`` numbers until its answer is read; a task no helper has
    started yet can be taken back (`take_back`), so that at the end this process parses the
    queued blocks itself instead of waiting for them.
    """

    def __init__(self, count: int, tickets: int):
        context = get_context("spawn")
        self.claims = context.Array("b", tickets)  # a ticket's state, under the array's lock
        self.connections: list[Connection] = []
        self.processes = []
        for _ in range(count):
            ours, theirs = context.Pipe()
            process = context.Process(target=_helper_main, args=(theirs, self.claims), daemon=True,
                                      name="wikidata-dump-helper")
            process.start()
            theirs.close()
            self.connections.append(ours)
            self.processes.append(process)
        self.sent: list[deque[int]] = [deque() for _ in range(count)]  # each helper's unanswered tickets
        self.answers: dict[int, Any] = {}
        self.taken_back: set[int] = set()  # tickets not to be sent again: their answers are still to come
        self.stopped = False

    def send(self, ticket: int, function: Callable[..., BlockResult], *args: Any) -> None:
        """Queue ``function(*args)`` with the helper that has the fewest unanswered tasks."""
        self.claims[ticket] = _QUEUED
        helper = min(range(len(self.sent)), key=lambda index: len(self.sent[index]))
        self.connections[helper].send((ticket, function, args))
        self.sent[helper].append(ticket)

    def answered(self, ticket: int) -> bool:
        """Whether the ticket's answer is in (read without waiting)."""
        if ticket not in self.answers:
            for helper, connection in enumerate(self.connections):
                while self.sent[helper] and connection.poll():
                    self._receive(helper)
        return ticket in self.answers

    def answer(self, ticket: int) -> Any:
        """The ticket's answer, waited for."""
        while ticket not in self.answers:
            helper = next(index for index, sent in enumerate(self.sent) if ticket in sent)
            self._receive(helper)
        return self.answers.pop(ticket)

    def _receive(self, helper: int) -> None:
        try:
            ticket, answer = self.connections[helper].recv()
        except EOFError:
            process = self.processes[helper]
            process.join(1)
            raise RuntimeError(f"a dump reader helper process died (exit code {process.exitcode})") from None
        if isinstance(answer, _HelperFailure):
            raise RuntimeError(f"a dump reader helper process failed:\n{answer.traceback}")
        self.sent[helper].remove(ticket)
        if ticket in self.taken_back:  # the helper's None for a task parsed here
            self.taken_back.discard(ticket)
        else:
            self.answers[ticket] = answer

    def take_back(self, ticket: int) -> bool:
        """Claim a sent task for this process: True if no helper had started it."""
        with self.claims.get_lock():
            if self.claims[ticket] != _QUEUED:
                return False
            self.claims[ticket] = _TAKEN_BACK
        self.taken_back.add(ticket)
        return True

    def stop(self) -> None:
        """Tell the helpers to exit after their queued tasks (`close` waits for them)."""
        self.stopped = True
        for connection in self.connections:
            try:
                connection.send(None)
            except OSError:  # a helper that died or was told already
                pass

    def close(self) -> None:
        """Stop the helpers and wait for them; answers not read by now are dropped (read, so that
        no helper blocks on a full pipe)."""
        if not self.stopped:
            self.stop()
        for connection, process in zip(self.connections, self.processes):
            try:
                while connection.poll(STOP_SECONDS):  # until the helper exits (EOF)
                    connection.recv()
            except (EOFError, OSError):
                pass
            process.join(STOP_SECONDS)
            if process.is_alive():
                process.terminate()
                process.join()
            connection.close()


class _SharedWork:
    """Blocks parsed by this process and by the helpers, results in file order.

    A block goes to a helper while one of the helpers' tickets is free; otherwise this process
    parses it itself instead of waiting, so ``workers`` processes parse, this one included, and
    none idles (on 2 cores: 2 processes, not 3 fighting over them; and this process is not
    stalled while a spawned helper starts). At the end, blocks the helpers have not started are
    taken back and parsed here. At most RESULTS_HELD_PER_TICKET results per ticket are held.
    """

    def __init__(self, helpers: _Helpers, tickets: int):
        self.helpers = helpers
        self.max_pending = RESULTS_HELD_PER_TICKET * tickets
        self.free = list(range(tickets))
        # (result parsed here, or the helper's ticket and how to parse the block here instead)
        self.pending: deque[tuple[BlockResult | None, int | None, Callable[[], BlockResult] | None]] = deque()

    def _head_done(self) -> bool:
        result, ticket, _ = self.pending[0]
        return result is not None or self.helpers.answered(ticket)

    def _pop(self) -> BlockResult:
        """The head's result: parsed here, or the helper's (waited for)."""
        result, ticket, _ = self.pending.popleft()
        if ticket is None:
            return result
        self.free.append(ticket)
        return self.helpers.answer(ticket)

    def ready(self) -> Iterator[BlockResult]:
        """The results at the head that are done (and the head's, waited for, while too many are held)."""
        while self.pending and (len(self.pending) >= self.max_pending or self._head_done()):
            yield self._pop()

    def take_ticket(self) -> int | None:
        """A free helper ticket, or None: this process should parse the block itself."""
        return self.free.pop() if self.free else None

    def add_here(self, result: BlockResult) -> None:
        self.pending.append((result, None, None))

    def add(self, ticket: int, here: Callable[[], BlockResult]) -> None:
        """A block sent to a helper under ``ticket``; ``here`` parses it in this process instead."""
        self.pending.append((None, ticket, here))

    def drain(self) -> Iterator[BlockResult]:
        """The remaining results in order. While the head is not answered, the last block no
        helper has started is taken back and parsed here (the helpers go on from the front)."""
        while self.pending:
            if self._head_done() or not self._take_back_last():
                yield self._pop()

    def _take_back_last(self) -> bool:
        for index in range(len(self.pending) - 1, -1, -1):
            result, ticket, here = self.pending[index]
            if result is None and here is not None and self.helpers.take_back(ticket):
                self.pending[index] = (here(), None, None)  # the ticket is not freed (`_Helpers.taken_back`)
                return True
        return False


def _shared_stream(helpers: _Helpers, blocks: Iterator[list[bytes]], datatypes: tuple[str, ...],
                   block_bytes: int, tickets: int, languages: tuple[str, ...]) -> Iterator[BlockResult]:
    """Decompressed blocks parsed here and by the helpers (`_SharedWork`), which get theirs
    through shared-memory slots, one per ticket, not through pipes (pickling 1 GB through pipes
    cost this process more CPU than decompressing it); results in file order."""
    slots = [SharedMemory(create=True, size=block_bytes + block_bytes // 2) for _ in range(tickets)]
    work = _SharedWork(helpers, tickets)
    try:
        for pieces in blocks:
            yield from work.ready()
            size = sum(map(len, pieces))
            ticket = work.take_ticket() if size <= slots[0].size else None
            if ticket is None:
                work.add_here(parse_pieces(pieces, datatypes, languages))
                continue
            memory = slots[ticket]
            _copy_pieces(pieces, memory.buf)  # the one copy of these bytes in this process
            helpers.send(ticket, parse_shared_block, memory.name, size, datatypes, languages)
            work.add(ticket, lambda memory=memory, size=size: _parse_shared_here(memory, size, datatypes, languages))
        yield from work.drain()
    finally:
        for memory in slots:
            memory.close()
            memory.unlink()


def _ranged_stream(helpers: _Helpers, path: str, ranges: Sequence[tuple[int, int]],
                   datatypes: tuple[str, ...], tickets: int, languages: tuple[str, ...]) -> Iterator[BlockResult]:
    """Byte ranges of an uncompressed dump parsed here and by the helpers (`_SharedWork`, each
    helper reading its range itself); results in file order."""
    work = _SharedWork(helpers, tickets)
    for start, end in ranges:
        yield from work.ready()
        ticket = work.take_ticket()
        if ticket is None:
            work.add_here(parse_file_range(path, start, end, datatypes, languages))
        else:
            helpers.send(ticket, parse_file_range, path, start, end, datatypes, languages)
            work.add(ticket, lambda start=start, end=end: parse_file_range(path, start, end, datatypes, languages))
    yield from work.drain()


def spill_dump(
    path: str | Path,
    work_dir: Path,
    datatypes: tuple[str, ...] = ALLOWED_DATATYPES,
    workers: int = 1,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    progress: Callable[[ParseStats], None] | None = None,
    progress_every: int = 100_000,
    chunk: DumpChunk | None = None,
    languages: Sequence[str] = DEFAULT_LANGUAGES,
) -> SpilledExtract:
    """Read the dump once, ``workers`` processes parsing (this one and ``workers - 1`` helpers),
    writing its rows to Parquet parts in ``work_dir``.

    Uncompressed dumps are split into byte ranges that the helpers read themselves; compressed
    ones are decompressed here (``.bz2`` on ``workers`` threads) and handed to the helpers in
    blocks of whole lines. ``chunk``: only that stretch of the dump (`plan_chunks`). The terms of
    every entity in ``languages`` are spilled too (`entities.check_languages`; empty: none).
    """
    languages = check_languages(languages)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if block_bytes < 1:
        raise ValueError(f"block_bytes must be >= 1, got {block_bytes}")
    if not Path(path).exists():
        raise FileNotFoundError(f"Wikidata dump not found: {path}")
    stats = ParseStats(workers=workers)
    writer = PartsWriter(work_dir)
    bzip2 = Path(path).suffix == ".bz2"
    threads = workers if bzip2 else 1
    helpers = None
    ranged = chunk is not None and chunk.end is not None
    if ranged and is_compressed(path) and not bzip2:
        raise ValueError(f"a .gz dump is read whole, got the range {chunk.start}-{chunk.end} of {path}")
    start, end = (chunk.start, chunk.end) if ranged else (0, None)
    blocks: Iterator[list[bytes]] | None = None
    if ranged and bzip2:  # whole bzip2 blocks, bits [start, end)
        blocks = blocks_of_lines(bzip2_blocks.chunk_pieces(path, start, end, chunk.index == 0, threads), block_bytes)
    elif is_compressed(path):
        blocks = iter_block_pieces(path, block_bytes, threads)
    if workers == 1 and blocks is not None:
        results: Iterator[BlockResult] = (parse_pieces(pieces, datatypes, languages) for pieces in blocks)
    elif workers == 1:  # an uncompressed dump is read range by range into the block buffer
        results = (parse_file_range(str(path), a, b, datatypes, languages)
                   for a, b in file_ranges(path, block_bytes, start, end))
    else:
        tickets = BLOCKS_IN_FLIGHT_PER_HELPER * (workers - 1)
        helpers = _Helpers(workers - 1, tickets)  # this process parses too
        if blocks is not None:
            results = _shared_stream(helpers, blocks, datatypes, block_bytes, tickets, languages)
        else:
            results = _ranged_stream(helpers, str(path), file_ranges(path, block_bytes, start, end), datatypes,
                                     tickets, languages)
    lines_before = 0
    malformed_lines: list[tuple[int, str]] = []
    try:
        for result in results:
            before = stats.lines
            merge_counts(stats, result, result.malformed_examples, lines_before)
            malformed_lines.extend((lines_before + number, message) for number, message in result.malformed_examples)
            del malformed_lines[MAX_MALFORMED_EXAMPLES:]
            lines_before += result.physical_lines
            writer.add(result.rows)
            if progress is not None and stats.lines // progress_every > before // progress_every:
                progress(stats)
    finally:
        results.close()  # unlinks the shared slots and closes the dump, also on an error
        if helpers is not None:
            helpers.stop()  # they exit while the parts are closed
    try:
        parts = writer.close()
    finally:
        if helpers is not None:
            helpers.close()
    return SpilledExtract(stats=stats, parts=parts, physical_lines=lines_before, malformed_lines=malformed_lines,
                          languages=languages)


def read_chunk(
    chunk: DumpChunk,
    work_dir: Path,
    datatypes: tuple[str, ...] = ALLOWED_DATATYPES,
    workers: int = 1,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    progress: Callable[[ParseStats], None] | None = None,
    languages: Sequence[str] = DEFAULT_LANGUAGES,
) -> SpilledExtract:
    """One chunk of `plan_chunks` read to Parquet parts in ``work_dir`` (one step of a fanned-out
    extract); `wikidata.assemble_chunks` merges the chunks."""
    return spill_dump(chunk.path, work_dir, datatypes, workers=workers, block_bytes=block_bytes, progress=progress,
                      chunk=chunk, languages=languages)
