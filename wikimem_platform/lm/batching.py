"""Padded, length-sorted batches of token ids: how every whole-sequence model call (the NLL
engine's naive reference, the MIA model pass, greedy generation) feeds the model.

Longest first, so a memory error shows in the first batch rather than after an hour; similar
lengths together, so little of each batch is padding.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class PaddedBatch:
    """Some sequences of the input, padded to the longest of them."""

    indices: list[int]  # where each row's sequence sits in the input
    input_ids: torch.Tensor  # [rows, width] long, pad_id on padding
    attention_mask: torch.Tensor  # [rows, width] long, 1 on the sequence's tokens, 0 on padding

    @property
    def width(self) -> int:
        return self.input_ids.shape[1]


def padded_batches(
    token_ids: Sequence[Sequence[int]],
    *,
    batch_size: int | None = None,
    batch_tokens: int | None = None,
    pad_id: int = 0,
    left_pad: bool = False,
) -> Iterator[PaddedBatch]:
    """The sequences sorted by length (longest first, ties in input order), cut into batches of
    `batch_size` sequences or, given `batch_tokens` instead, of as many sequences as fit in that
    many tokens at the batch's width (at least one). Right padding for scoring; `left_pad` for
    generation, where the model continues after each row's last position."""
    import torch

    if (batch_size is None) == (batch_tokens is None):
        raise ValueError("give exactly one of batch_size and batch_tokens")
    order = sorted(range(len(token_ids)), key=lambda i: -len(token_ids[i]))
    start = 0
    while start < len(order):
        width = len(token_ids[order[start]])
        size = batch_size if batch_size is not None else max(1, batch_tokens // max(width, 1))
        indices = order[start:start + size]
        start += len(indices)
        input_ids = torch.full((len(indices), width), pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(indices), width), dtype=torch.long)
        for row, i in enumerate(indices):
            ids = token_ids[i]
            columns = slice(width - len(ids), width) if left_pad else slice(0, len(ids))
            input_ids[row, columns] = torch.tensor(ids, dtype=torch.long)
            attention_mask[row, columns] = 1
        yield PaddedBatch(indices, input_ids, attention_mask)
