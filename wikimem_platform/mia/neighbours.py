"""Neighbour texts for the neighbourhood attack: PII-aware swaps (CRM App. C.1) and generic word
perturbations (mimir's random-fill neighbours without a mask-filling model). Seeded, model-free.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

import numpy as np


def pii_neighbours(text: str, name: str | None, value: str | None,
                   counterfactual_names: Sequence[str], counterfactual_values: Sequence[str],
                   n: int = 10, seed: int = 0) -> list[str]:
    """PII-aware neighbours (CRM App. C.1): the person's name and the PII value swapped for others.

    Every occurrence (exact, case-sensitive) of `name` and of `value` is replaced in one pass, the
    longer string first, so a name inside the value is not replaced twice. Counterfactuals equal
    to the original are skipped; they are drawn without replacement while enough remain.
    """
    rng = np.random.default_rng(seed)
    present = {s for s in (name, value) if s and s in text}
    if not present:
        raise ValueError("neither the name nor the value occurs in the text")

    def draws(original, pool):
        pool = [c for c in dict.fromkeys(pool) if c != original]
        if original not in present:
            return [original] * n
        if not pool:
            raise ValueError(f"no counterfactual differs from {original!r}")
        picks = rng.choice(len(pool), size=n, replace=n > len(pool))
        return [pool[i] for i in picks]

    names, values = draws(name, counterfactual_names), draws(value, counterfactual_values)
    pattern = re.compile("|".join(re.escape(s) for s in sorted(present, key=len, reverse=True)))
    out = []
    for new_name, new_value in zip(names, values):
        table = {name: new_name, value: new_value}
        out.append(pattern.sub(lambda m, t=table: t[m.group(0)], text))
    return out


def perturb_words(text: str, n: int = 10, seed: int = 0, pct: float = 0.2,
                  fill_words: Sequence[str] | None = None) -> list[str]:
    """Generic neighbours: edit about pct of the words (at least one) by adjacent swap, deletion
    or, when `fill_words` is given, replacement with a random fill word (mimir's random-fill
    neighbours, without a mask-filling model). Seeded; words are split on single spaces as mimir
    does. Raises for texts of fewer than 2 words."""
    words = text.split(" ")
    if len(words) < 2:
        raise ValueError("need at least two words to perturb")
    rng = random.Random(seed)
    ops = ["swap", "delete"] + (["replace"] if fill_words else [])
    n_edits = max(1, round(pct * len(words)))
    out = []
    for _ in range(n):
        for _attempt in range(20):
            w = list(words)
            for _edit in range(n_edits):
                if len(w) < 2:
                    break
                i = rng.randrange(len(w))
                op = rng.choice(ops)
                if op == "swap":
                    j = i + 1 if i + 1 < len(w) else i - 1
                    w[i], w[j] = w[j], w[i]
                elif op == "delete":
                    del w[i]
                else:
                    w[i] = rng.choice(list(fill_words))
            candidate = " ".join(w)
            if candidate != text:
                break
        out.append(candidate)
    return out


def word_neighbours(texts: Sequence[str], n: int = 5, seed: int = 0,
                    fill_words: Sequence[str] | None = None) -> list[list[str]]:
    """`perturb_words` neighbours per text (seeded per text); [] for one-word texts."""
    return [perturb_words(t, n=n, seed=seed + i, fill_words=fill_words) if len(t.split(" ")) >= 2 else []
            for i, t in enumerate(texts)]
