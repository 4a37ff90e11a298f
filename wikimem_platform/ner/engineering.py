"""Prompt engineering by token removal (paper §4.1 PTE, §5.5): widen the best-worst gap.

A token's importance in a prompt is the prompt's M-MEM minus the M-MEM without that token (on
dev names). From the best prompt the least important token is removed, again and again, from
the worst prompt the most important one, until one token besides MASK is left; the modified
prompts may be ungrammatical. Tokens are words ("don't" is one), "'s" and punctuation marks,
as the paper removes "'s" and "," on their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from wikimem_platform.ner.schema import MASK

_TOKEN = re.compile(rf"{MASK}|'\w+|\w+(?:'\w+)?|[^\w\s]")
STEP_COLUMNS = ["step", "prompt", "removed", "m_mem", "importance"]

# A scorer gives the M-MEM of each prompt text (on the names prompt engineering may use).
Scorer = Callable[[Sequence[str]], Sequence[float]]


def prompt_tokens(prompt: str) -> list[tuple[str, bool]]:
    """The prompt's tokens, each with whether whitespace stood before it (to write it back)."""
    return [(m.group(), m.start() > 0 and prompt[m.start() - 1].isspace()) for m in _TOKEN.finditer(prompt)]


def render(tokens: Sequence[tuple[str, bool]]) -> str:
    return "".join((" " if spaced else "") + token for token, spaced in tokens).strip()


def removals(prompt: str) -> list[tuple[str, str]]:
    """(removed token, prompt without it) for every token but MASK, in reading order."""
    tokens = prompt_tokens(prompt)
    return [(token, render(tokens[:i] + tokens[i + 1:])) for i, (token, _) in enumerate(tokens) if token != MASK]


def iterative_removal(prompt: str, scorer: Scorer, keep_high: bool) -> pd.DataFrame:
    """The chain of modified prompts: step 0 is the prompt, each next step removes the token
    whose removal leaves the highest M-MEM (`keep_high`: the least important token, for the
    best prompt) or the lowest (the most important token, for the worst prompt); ties go to
    the earlier token. Columns: step, prompt, removed, m_mem, importance (of the removed token)."""
    current_score = float(scorer([prompt])[0])
    rows = [{"step": 0, "prompt": prompt, "removed": None, "m_mem": current_score, "importance": np.nan}]
    current = prompt
    while len(candidates := removals(current)) > 1:
        scores = np.asarray(scorer([text for _, text in candidates]), dtype=float)
        pick = int(np.nanargmax(scores) if keep_high else np.nanargmin(scores))
        removed, current = candidates[pick]
        rows.append({"step": len(rows), "prompt": current, "removed": removed, "m_mem": float(scores[pick]),
                     "importance": current_score - float(scores[pick])})
        current_score = float(scores[pick])
    return pd.DataFrame(rows, columns=STEP_COLUMNS)
