"""A ``.bz2`` dump cut at its compressed blocks, so that separate steps (processes, machines) read it.

bzip2 compresses its input in runs of 100-900 kB into blocks that decode on their own. Each block
starts with the 48-bit magic 0x314159265359 at any bit offset (blocks are not byte-aligned) and a
stream ends with 0x177245385090 and the stream's CRC. So a run of whole blocks can be read without
the rest of the file: the blocks' starts are found by scanning the compressed bytes for the magics
at each of the eight bit alignments (numpy shifts, ``bytes.find``), and each block is decoded by
the standard library's bzip2 as a one-block stream of its own (its bits shifted to a byte
boundary between a stream header and an end marker whose CRC is the block's: the block's CRC is
still checked). indexed_bzip2 decodes blocks in parallel too, but inside one process, and learns
their offsets only by decoding the whole file, so it cannot hand out chunks before a full read.

Lines straddle blocks. A chunk owns the lines that start after a newline inside its own bytes
(the first chunk also the file's first line), and reads on into the next chunk's blocks to finish
its last one; the next chunk skips to its first newline. Every line is owned exactly once.
"""

from __future__ import annotations

import bz2
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

BLOCK_MAGIC = 0x314159265359
"""Starts every compressed block (the BCD digits of pi)."""
END_MAGIC = 0x177245385090
"""Ends every stream, followed by its CRC (the BCD digits of sqrt(pi))."""
MAGIC_BITS = 48
BLOCK_CRC_BITS = 32
MAX_BLOCK_BYTES = 900_000
"""Level 9's block size: a real block's ``origPtr`` (24 bits after its CRC and one flag bit) is below it."""
SCAN_BYTES = 4 << 20
"""Compressed bytes scanned for magics at a time while reading."""
PLAN_SCAN_BYTES = 256 << 10
"""... while looking for the next block start at a cut (a real dump's blocks are ~60 kB compressed)."""
STREAM_HEADER = b"BZh9"  # the largest block size, so that any block fits
DAMAGED_BLOCK_ADVICE = ("a damaged or incomplete download? If `bzip2 -t` finds the file intact, a chance "
                        "start mark was taken for a block: read it as one chunk, chunk_bytes above the file's size")
"""What a block that fails to decode, or ends early, may mean (a real damage, or a magic that split a block)."""


class Bzip2BlockError(OSError):
    """A block that does not decode: a damaged file, or a magic that was not a block start."""


def _magic_positions(data: np.ndarray, magic: int, limit: int) -> list[int]:
    """Bit offsets below ``limit`` bytes * 8 where ``magic`` starts in ``data`` (each alignment)."""
    pattern = magic.to_bytes(MAGIC_BITS // 8, "big")
    pairs = (data[:-1].astype(np.uint16) << 8) | data[1:]  # bits [8i, 8i + 16)
    found = []
    for shift in range(8):
        aligned = ((pairs >> (8 - shift)) & 0xFF).astype(np.uint8).tobytes()  # bits [8i + shift, 8i + shift + 8)
        index = aligned.find(pattern)
        while 0 <= index < limit:
            found.append(8 * index + shift)
            index = aligned.find(pattern, index + 1)
    return found


def _bits(data: bytes, first_bit: int, count: int) -> int:
    """``count`` bits of ``data`` from ``first_bit`` (0 = the first byte's highest bit), as an int."""
    return (int.from_bytes(data, "big") >> (8 * len(data) - first_bit - count)) & ((1 << count) - 1)


def _is_block_header(data: bytes, bit: int) -> bool:
    """A block magic at ``bit`` is followed by its CRC, a 'randomised' flag that bzip2 has not set
    since 0.9.5, and ``origPtr`` below the block size: that turns away all but ~1 in 37 of the
    magics compressed data spells by chance (one per 2^48 bit positions, ~35 TB; with the check,
    one per ~1.3 PB, so ~1 in 16,000 full 76 GiB dumps; a chance one left makes its block fail
    to decode, with the block's offset in the error)."""
    start = bit + MAGIC_BITS + BLOCK_CRC_BITS
    end = (start + 25 + 7) // 8
    if end > len(data):
        return True  # the header runs past the data scanned; decoding will tell
    return _bits(data[start // 8: end], start % 8, 25) < MAX_BLOCK_BYTES  # flag 0 and origPtr small


def _is_stream_end(data: bytes, bit: int, at_end_of_file: bool) -> bool:
    """An end marker at ``bit`` is followed by the stream CRC, padding to a byte, and then the end
    of the file or the next stream's header: a chance match passes 1 in 2^24 times."""
    after = (bit + MAGIC_BITS + BLOCK_CRC_BITS + 7) // 8
    if after == len(data) and at_end_of_file:
        return True
    return data[after: after + 3] == STREAM_HEADER[:3]


def block_bounds(path: str | Path, start_bit: int = 0, scan_bytes: int = SCAN_BYTES) -> Iterator[tuple[int, bool]]:
    """The bit offsets from ``start_bit`` on where a block starts (True) or a stream ends (False),
    in file order, read ``scan_bytes`` at a time."""
    tail = 16  # bytes past the window that a magic starting in it and its checks may need
    with open(path, "rb") as handle:
        offset = start_bit // 8
        while True:
            handle.seek(offset)
            window = handle.read(scan_bytes + tail)
            last = len(window) < scan_bytes + tail
            limit = len(window) if last else scan_bytes
            array = np.frombuffer(window + bytes(tail), np.uint8)
            bounds = [(bit, True) for bit in _magic_positions(array, BLOCK_MAGIC, limit)
                      if _is_block_header(window, bit)]
            bounds += [(bit, False) for bit in _magic_positions(array, END_MAGIC, limit)
                       if _is_stream_end(window, bit, last)]
            for bit, is_block in sorted(bounds):
                if 8 * offset + bit >= start_bit:
                    yield 8 * offset + bit, is_block
            if last:
                return
            offset += scan_bytes


def block_spans(path: str | Path, start_bit: int = 0) -> Iterator[tuple[int, int]]:
    """Each block from ``start_bit`` on as [start, end) in bits: from its magic to the next block's
    or to its stream's end marker (across the streams of a multi-stream file)."""
    start = None
    for bit, is_block in block_bounds(path, start_bit):
        if start is not None:
            yield start, bit
        start = bit if is_block else None
    if start is not None:
        raise Bzip2BlockError(f"{path}: the bzip2 stream ends without its end-of-stream marker "
                              f"(a damaged or incomplete download?)")


def decode_block(path: str | Path, start: int, end: int, handle: int | None = None) -> bytes:
    """The block whose bits are [start, end) of the file, decompressed and its CRC checked."""
    first, last = start // 8, (end + 7) // 8
    if handle is None:
        with open(path, "rb") as file:
            file.seek(first)
            raw = file.read(last - first)
    else:
        raw = os.pread(handle, last - first, first)
    count = end - start
    if len(raw) < last - first or count < MAGIC_BITS + BLOCK_CRC_BITS:
        raise Bzip2BlockError(f"{path}: the bzip2 block at bit {start:,} is cut short")
    block = _bits(raw, start - 8 * first, count)
    crc = (block >> (count - MAGIC_BITS - BLOCK_CRC_BITS)) & 0xFFFFFFFF
    stream = (((block << MAGIC_BITS) | END_MAGIC) << BLOCK_CRC_BITS) | crc  # one block: the stream CRC is its CRC
    count += MAGIC_BITS + BLOCK_CRC_BITS
    padding = -count % 8
    decompressor = bz2.BZ2Decompressor()
    try:
        data = decompressor.decompress(STREAM_HEADER + (stream << padding).to_bytes((count + padding) // 8, "big"))
    except OSError as error:
        raise Bzip2BlockError(f"{path}: the bzip2 block at bit {start:,} does not decode ({error}; "
                              f"{DAMAGED_BLOCK_ADVICE})") from error
    if not decompressor.eof:
        raise Bzip2BlockError(f"{path}: the bzip2 block at bit {start:,} is cut short ({DAMAGED_BLOCK_ADVICE})")
    return data


def decoded_blocks(path: str | Path, start_bit: int, ahead_until: int, threads: int = 1) -> Iterator[tuple[int, bytes]]:
    """(start bit, decompressed bytes) of each block from ``start_bit`` on, in file order. Blocks
    starting before ``ahead_until`` are decoded ``threads`` at a time ahead of the reader (bzip2
    decompression releases the GIL); later ones one at a time, as they are asked for."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        with ThreadPoolExecutor(max(1, threads)) as pool:
            pending: deque = deque()
            for start, end in block_spans(path, start_bit):
                if start >= ahead_until:
                    while pending:
                        bit, future = pending.popleft()
                        yield bit, future.result()
                    yield start, decode_block(path, start, end, descriptor)
                    continue
                pending.append((start, pool.submit(decode_block, path, start, end, descriptor)))
                if len(pending) > 2 * max(1, threads):
                    bit, future = pending.popleft()
                    yield bit, future.result()
            while pending:
                bit, future = pending.popleft()
                yield bit, future.result()
    finally:
        os.close(descriptor)


def chunk_pieces(path: str | Path, start_bit: int, end_bit: int, first: bool, threads: int = 1) -> Iterator[bytes]:
    """The decompressed bytes of the lines a chunk owns: those starting after a newline in its
    blocks [start_bit, end_bit) (``first``: also the file's first line), the last one finished
    from the next blocks."""
    skipping = not first
    for bit, data in decoded_blocks(path, start_bit, end_bit, threads):
        if bit >= end_bit:  # past the chunk's blocks: only to finish its last line, if it has lines
            if skipping:
                return
            newline = data.find(b"\n")
            if newline < 0:
                yield data
                continue
            yield data[: newline + 1]
            return
        if skipping:
            newline = data.find(b"\n")
            if newline < 0:
                continue  # no line starts in this block
            skipping, data = False, data[newline + 1:]
        if data:
            yield data
    # the end of the file: the last line needs no finishing


def plan_cuts(path: str | Path, chunk_bytes: int) -> list[int]:
    """Bit offsets where chunks of about ``chunk_bytes`` compressed bytes start: the file's first
    block, then the first block at or after each multiple of ``chunk_bytes``."""
    size = Path(path).stat().st_size
    cuts: list[int] = []
    target = 0
    while target < size:
        start = next((bit for bit, is_block in block_bounds(path, 8 * target, PLAN_SCAN_BYTES) if is_block), None)
        if start is None:
            break  # no block starts after target
        if not cuts:
            decode_block(path, *next(block_spans(path, start)))  # a damaged file fails here, clearly
        cuts.append(start)
        target = start // 8 + chunk_bytes
    if not cuts:
        raise Bzip2BlockError(f"{path}: no bzip2 block found (not a .bz2 file?)")
    return cuts
