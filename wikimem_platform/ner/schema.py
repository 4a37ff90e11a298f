"""The NER audit's fixed vocabulary: entity types, BIO labels, sentence types, the placeholder.

One place for them, so the prompt grammar, the training corpus, the model head and the
confidence all agree on what "PER" and "B-PER" are and in which order the labels come.
"""

from __future__ import annotations

from collections.abc import Mapping

PER, LOC, ORG = "PER", "LOC", "ORG"
ENTITY_TYPES: tuple[str, ...] = (PER, LOC, ORG)

# The model's output order: O first, then B/I per type (the head has one logit per label).
OUTSIDE = "O"
LABELS: tuple[str, ...] = (OUTSIDE, *(f"{tag}-{t}" for t in ENTITY_TYPES for tag in ("B", "I")))
LABEL2ID = {label: i for i, label in enumerate(LABELS)}
ID2LABEL = dict(enumerate(LABELS))
IGNORE_LABEL = -100  # special and padding tokens: no loss

DECLARATIVE, EXCLAMATORY, IMPERATIVE, INTERROGATIVE = "declarative", "exclamatory", "imperative", "interrogative"
SENTENCE_TYPES: tuple[str, ...] = (DECLARATIVE, EXCLAMATORY, IMPERATIVE, INTERROGATIVE)

MASK = "MASK"  # where a prompt takes the name (the paper's placeholder)


def begin_label(entity_type: str) -> str:
    return f"B-{entity_type}"


def inside_label(entity_type: str) -> str:
    return f"I-{entity_type}"


def type_label_ids(entity_type: str, label2id: Mapping[str, int] | None = None) -> tuple[int, int]:
    """The (B, I) label ids of a type: C(e) takes the larger of the two per token. `label2id`:
    the audited model's own label order (a CoNLL model's differs from ours; default: LABELS)."""
    if entity_type not in ENTITY_TYPES:
        raise ValueError(f"entity_type must be one of {ENTITY_TYPES}, got {entity_type!r}")
    label2id = LABEL2ID if label2id is None else label2id
    missing = [label for label in (begin_label(entity_type), inside_label(entity_type)) if label not in label2id]
    if missing:
        raise ValueError(f"the model has no label {', '.join(missing)} (its labels: {sorted(label2id)})")
    return label2id[begin_label(entity_type)], label2id[inside_label(entity_type)]
