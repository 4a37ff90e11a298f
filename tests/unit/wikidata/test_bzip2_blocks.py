"""A .bz2 dump cut at its compressed blocks: every block found and decoded alone, every line owned by
exactly one chunk wherever the blocks cut it, chunks read the extract of the full parse, damage
reported with the file and the block.

bzip2 at level 1 cuts its input every ~100 kB, so the bundled sample (10 MB) makes ~100 blocks; a
multi-stream file (what pbzip2 writes, and concatenated .bz2 files) has blocks of several streams.
"""

from __future__ import annotations

import bz2
import gzip
import random
from pathlib import Path

import pytest

from tests.unit.wikidata.test_dump_reader import assert_same_extract, read_chunks
from wikimem_platform.reference import bundled
from wikimem_platform.wikidata.bzip2_blocks import (
    block_bounds,
    block_spans,
    Bzip2BlockError,
    chunk_pieces,
    decode_block,
)
from wikimem_platform.wikidata.dump_reader import DumpChunk, plan_chunks
from wikimem_platform.wikidata.extract import assemble_chunks, read_dump


def write_bz2_streams(path: Path, data: bytes, streams: int = 1, level: int = 1) -> Path:
    """``data`` bzip2-compressed as ``streams`` streams one after another (pbzip2's layout)."""
    cuts = [len(data) * i // streams for i in range(streams + 1)]
    path.write_bytes(b"".join(bz2.compress(data[a:b], level) for a, b in zip(cuts, cuts[1:])))
    return path


def chunk_bytes_of(path: Path, chunk_bytes: int) -> list[bytes]:
    """The bytes each chunk owns, through the library's chunk plan (level-1 blocks)."""
    return [b"".join(chunk_pieces(path, chunk.start, chunk.end, first=chunk.index == 0))
            for chunk in plan_chunks(path, chunk_bytes)]


@pytest.fixture(scope="module")
def sample_text() -> bytes:
    return gzip.decompress(bundled.SAMPLE_DUMP.read_bytes())


def test_every_block_is_found_and_decodes_alone(sample_text, tmp_path):
    for streams in (1, 3):
        path = write_bz2_streams(tmp_path / f"sample-{streams}.json.bz2", sample_text, streams)
        spans = list(block_spans(path))
        assert len(spans) >= 100  # 10.5 MB in ~100 kB blocks
        assert spans[0][0] == 32  # after the 4-byte stream header
        assert b"".join(decode_block(path, start, end) for start, end in spans) == sample_text
        assert sum(start % 8 != 0 for start, _ in spans) > len(spans) // 2  # blocks are not byte-aligned
        small_windows = list(block_bounds(path, scan_bytes=997))  # magics across the scan's window edges
        assert small_windows == list(block_bounds(path))
        assert [bit for bit, is_block in small_windows if not is_block] == [end for _, end in spans if end not in dict(spans)]


def test_each_line_belongs_to_one_chunk_wherever_the_blocks_cut_it(tmp_path):
    """One chunk per block (chunk_bytes 1): a newline as a block's last byte and as its first, a
    line over several blocks (chunks that own no line), no newline at the end of the file."""
    letters = random.Random(0)
    body = bytes(letters.choice(b"abcdefghij") for _ in range(400_000))
    probe = write_bz2_streams(tmp_path / "probe.bz2", body)
    first_block = len(decode_block(probe, *next(block_spans(probe))))  # ~100 kB
    cases = {
        "newline ends a block": (first_block - 1,),
        "newline starts a block": (first_block,),
        "newlines on both sides of a cut": (first_block - 1, first_block),
        "a line over three blocks": (10, 330_000),
        "no newline at all": (),
    }
    for name, newlines in cases.items():
        text = bytearray(body)
        for position in newlines:
            text[position] = ord("\n")
        for trailing in (b"\n", b""):
            path = write_bz2_streams(tmp_path / "cut.bz2", bytes(text) + trailing)
            owned = chunk_bytes_of(path, chunk_bytes=1)
            assert len(owned) >= 4, name
            assert b"".join(owned) == bytes(text) + trailing, name
            for index, piece in enumerate(owned):  # whole lines; one without a newline ends the file
                assert not piece or piece.endswith(b"\n") or not any(owned[index + 1:]), name
    owned = chunk_bytes_of(write_bz2_streams(tmp_path / "cut.bz2", b"x" * 10 + b"\n" + body[:330_000]), 1)
    assert owned[0] == b"x" * 10 + b"\n" + body[:330_000] and not any(owned[1:])  # the long last line: chunk 0's


@pytest.mark.parametrize("streams", [1, 3])
def test_bzip2_chunks_assemble_to_the_full_parse(sample_text, tmp_path, streams):
    path = write_bz2_streams(tmp_path / "sample.json.bz2", sample_text, streams)
    chunks = plan_chunks(path, path.stat().st_size // 5)
    assert len(chunks) >= 5 and chunks[0].start == 32 and chunks[-1].end == 8 * path.stat().st_size
    spans = dict(block_spans(path))
    assert all(a.end == b.start and b.start in spans for a, b in zip(chunks, chunks[1:]))  # cut at block starts
    assert all(DumpChunk.from_json(chunk.to_json()) == chunk for chunk in chunks)
    reference = read_dump(bundled.SAMPLE_DUMP, mode="full")
    assert_same_extract(reference, assemble_chunks(read_chunks(chunks, tmp_path / "one", block_bytes=256 << 10), path))
    assert_same_extract(reference, assemble_chunks(read_chunks(chunks[:2], tmp_path / "two", workers=2, block_bytes=64 << 10)
                                                   + read_chunks(chunks[2:], tmp_path / "rest"), path))
    assert [(c.start, c.end) for c in plan_chunks(path, path.stat().st_size)] == [(0, None)]  # small: read whole


def test_damaged_or_foreign_bzip2_files_are_clear_errors(sample_text, tmp_path):
    path = write_bz2_streams(tmp_path / "sample.json.bz2", sample_text[:1_000_000])
    spans = list(block_spans(path))
    data = bytearray(path.read_bytes())
    middle = (spans[3][0] + spans[3][1]) // 16  # a byte inside the fourth block
    data[middle] ^= 0xFF
    damaged = tmp_path / "damaged.json.bz2"
    damaged.write_bytes(bytes(data))
    with pytest.raises(Bzip2BlockError, match=rf"damaged\.json\.bz2: the bzip2 block at bit {spans[3][0]:,} .*read it as one chunk"):
        chunk_bytes_of(damaged, chunk_bytes=1)
    truncated = tmp_path / "truncated.json.bz2"
    truncated.write_bytes(path.read_bytes()[: len(data) // 2])
    with pytest.raises(Bzip2BlockError, match="ends without its end-of-stream marker"):
        chunk_bytes_of(truncated, chunk_bytes=1)
    foreign = tmp_path / "not-bzip2.json.bz2"
    foreign.write_bytes(sample_text[:100_000])
    with pytest.raises(Bzip2BlockError, match="no bzip2 block found"):
        plan_chunks(foreign, 1000)
