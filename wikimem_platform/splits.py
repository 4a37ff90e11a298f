"""Seeded splits by key (a person, a name): each key's side is fixed by (seed, key) alone, so adding
keys never moves anyone — the property a held-out set must have to stay held out."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def seeded_draw(key: str, seed: int) -> float:
    """A uniform number in [0, 1) fixed by (seed, key)."""
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def halves(keys: Iterable[str], seed: int = 0) -> tuple[list[str], list[str]]:
    """Two disjoint halves (dev, test) of the distinct keys, by seeded draw (sizes differ by chance,
    not by design: a key's side never depends on the others)."""
    keys = sorted(set(keys))
    dev = [key for key in keys if seeded_draw(key, seed) < 0.5]
    chosen = set(dev)
    return dev, [key for key in keys if key not in chosen]
