"""The paper's ensemble of soft-prompt methods (Zhou et al. 2024, "integrate the results").

Per prompt: take the entity each method's output names (`extracted_entity`: the answer up to the
end of the record field). If two or more methods name the same entity (normalized), that entity
is the answer ("agreement"). Otherwise each method's entity is put back after the prompt and the
base model scores the whole input; the entity whose input has the lowest perplexity wins
("perplexity"). Empty answers never win; with none left, the answer is empty ("none").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from wikimem_platform.eme.records import FIELD_END
from wikimem_platform.labels import normalize_label

# A record field ends at the field separator or a line break; the first field is the answer.
_FIELD_BREAK = re.compile(rf"[{re.escape(FIELD_END)}\n]")
AGREEMENT, PERPLEXITY, NONE = "agreement", "perplexity", "none"


def extracted_entity(output: str) -> str:
    """The entity an output names: its text up to the end of the first record field, without
    surrounding spaces and a closing full stop."""
    head = _FIELD_BREAK.split(output, maxsplit=1)[0].strip()
    return head[:-1].rstrip() if head.endswith(".") else head


def ensemble_choice(candidates: Sequence[Sequence[str]], prompts: Sequence[str], joiners: Sequence[str],
                    log_perplexity: Callable[[list[str]], np.ndarray]) -> tuple[list[str], list[str]]:
    """(chosen entity, rule) per prompt. `candidates[i]`: each method's entity for prompt i;
    `log_perplexity(texts)`: mean per-token NLL of each text under the base model (called once,
    for every prompt that needs it)."""
    chosen: list[str] = [""] * len(candidates)
    rules: list[str] = [NONE] * len(candidates)
    pending: list[tuple[int, str]] = []
    for i, entities in enumerate(candidates):
        entities = [e for e in entities if isinstance(e, str) and normalize_label(e)]
        if not entities:
            continue
        votes = Counter(normalize_label(e) for e in entities)
        top, count = votes.most_common(1)[0]
        if count >= 2:
            chosen[i] = next(e for e in entities if normalize_label(e) == top)
            rules[i] = AGREEMENT
        else:
            pending.extend((i, e) for e in entities)
    if pending:
        scores = np.asarray(log_perplexity([prompts[i] + joiners[i] + e for i, e in pending]), dtype=float)
        best: dict[int, tuple[float, str]] = {}
        for (i, entity), score in zip(pending, scores):
            if i not in best or score < best[i][0]:
                best[i] = (score, entity)
        for i, (_, entity) in best.items():
            chosen[i], rules[i] = entity, PERPLEXITY
    return chosen, rules
