"""The sentence-cache rule every scorer keeps (`lm.scorer`'s conventions), in one place.

A `cache` argument is a sentence -> NLL dict, read first and filled in: only the distinct
sentences it lacks are scored, in first-seen order. A continuation censored at top-logprobs
access is stored negated (an NLL is never negative), so the flag travels with the number
through every cache; `score_continuations` hands back their absolute values (`censorable`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np


def through_cache(sentences: Iterable[str], cache: dict[str, float] | None,
                  score_missing: Callable[[list[str]], Sequence[float]], *, censorable: bool = False) -> np.ndarray:
    """Each sentence's NLL from `cache`, after `score_missing` scored (once each) those it lacked;
    `censorable`: the cache may hold censored continuations negated (absolute values returned)."""
    sentences = list(sentences)
    cache = {} if cache is None else cache
    todo = list(dict.fromkeys(s for s in sentences if s not in cache))
    if todo:
        cache.update(zip(todo, (float(value) for value in score_missing(todo))))
    values = np.array([cache[s] for s in sentences], dtype=np.float64)
    return np.abs(values) if censorable else values


def require_prefixes(sentences: Sequence[str], prefixes: Mapping[str, str]) -> None:
    """A continuation is scored after its prefix: every sentence must have one."""
    missing = [s for s in sentences if s not in prefixes]
    if missing:
        raise ValueError(f"no prefix given for {len(missing)} sentence(s), e.g. {missing[0]!r}")
