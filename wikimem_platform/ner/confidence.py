"""Entity confidence C(e) (paper eq. 1): how sure the model is that a name has its type.

Per (sub)word token of the name, the larger of P(B-type) and P(I-type) (softmax over the seven
labels), averaged over the name's tokens. The name is found by character offsets (fast
tokenizer), so a prompt's other words, "'s" included, never count.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from wikimem_platform.ner.prompts import fill
from wikimem_platform.ner.schema import type_label_ids
from wikimem_platform.progress import throttled

logger = logging.getLogger(__name__)

SCORE_BATCH_SIZE = 64  # sentences per forward pass (sorted by length: little padding)
PAIR_COLUMNS = ["prompt", "name", "entity_type", "text", "confidence", "n_tokens"]


def span_tokens(offsets: np.ndarray, start: int, end: int) -> np.ndarray:
    """Which tokens overlap the character span [start, end) (special tokens, offset (0, 0), never)."""
    offsets = np.asarray(offsets).reshape(-1, 2)
    return (offsets[:, 1] > offsets[:, 0]) & (offsets[:, 0] < end) & (offsets[:, 1] > start)


def entity_confidence(probabilities: np.ndarray, offsets: np.ndarray, start: int, end: int,
                      entity_type: str, label2id: Mapping[str, int] | None = None) -> float:
    """C(e) from one sentence's per-token label probabilities (tokens × labels) and offsets;
    `label2id`: the model's label order (default: ours, `schema.LABELS`)."""
    tokens = span_tokens(offsets, start, end)
    if not tokens.any():
        return float("nan")
    b, i = type_label_ids(entity_type, label2id)
    probabilities = np.asarray(probabilities)
    return float(np.maximum(probabilities[tokens, b], probabilities[tokens, i]).mean())


def entity_confidences(ner, texts: Sequence[str], spans: Sequence[tuple[int, int]], entity_types: Sequence[str],
                       batch_size: int = SCORE_BATCH_SIZE,
                       progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """C(e) of the name at each span of each text, and its token count (`ner`: a `NerModel`)."""
    import torch

    texts = list(texts)
    confidences = np.full(len(texts), np.nan)
    n_tokens = np.zeros(len(texts), dtype=int)
    if not texts:
        return confidences, n_tokens
    encoded = ner.tokenizer(texts, return_offsets_mapping=True, truncation=True,
                            max_length=ner.tokenizer.model_max_length)
    lengths = np.array([len(ids) for ids in encoded["input_ids"]])
    order = np.argsort(lengths, kind="stable")
    pad = ner.tokenizer.pad_token_id
    label2id = getattr(ner.model.config, "label2id", None) or None  # a foreign model's label order
    done = 0
    with torch.inference_mode():
        for first in range(0, len(order), batch_size):
            rows = order[first : first + batch_size]
            width = int(lengths[rows].max())
            input_ids = np.full((len(rows), width), pad, dtype=np.int64)
            attention = np.zeros((len(rows), width), dtype=np.int64)
            for r, index in enumerate(rows):
                input_ids[r, : lengths[index]] = encoded["input_ids"][index]
                attention[r, : lengths[index]] = 1
            logits = ner.model(input_ids=torch.from_numpy(input_ids), attention_mask=torch.from_numpy(attention)).logits
            probabilities = torch.softmax(logits.float(), dim=-1).numpy()
            for r, index in enumerate(rows):
                offsets = np.asarray(encoded["offset_mapping"][index])
                start, end = spans[index]
                confidences[index] = entity_confidence(probabilities[r, : lengths[index]], offsets, start, end,
                                                       entity_types[index], label2id)
                n_tokens[index] = int(span_tokens(offsets, start, end).sum())
            done += len(rows)
            if progress is not None:
                progress(done, len(order))
    return confidences, n_tokens


def score_pairs(ner, pairs: pd.DataFrame, batch_size: int = SCORE_BATCH_SIZE,
                progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """C(e) of every (prompt, name, entity_type) row, each distinct one scored once: the pairs
    with columns prompt, name, entity_type, text, confidence, n_tokens (the name's tokens)."""
    frame = pairs[["prompt", "name", "entity_type"]].reset_index(drop=True)
    unique = frame.drop_duplicates(ignore_index=True)
    filled = [fill(p, n) for p, n in zip(unique["prompt"], unique["name"])]
    progress = progress or throttled(logger.info, "NER confidence")
    confidence, n_tokens = entity_confidences(ner, [f[0] for f in filled], [(f[1], f[2]) for f in filled],
                                              unique["entity_type"].tolist(), batch_size, progress)
    unique = unique.assign(text=[f[0] for f in filled], confidence=confidence, n_tokens=n_tokens)
    return frame.merge(unique, on=["prompt", "name", "entity_type"], how="left")[PAIR_COLUMNS]

