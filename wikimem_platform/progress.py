"""Progress of long work in run logs: one place for how often and in what words."""

from __future__ import annotations

import time
from collections.abc import Callable

LOG_EVERY_SECONDS = 20  # run logs at least this often during long steps (scoring, training)


def throttled(log: Callable[[str], None], label: str, unit: str = "sentences",
              every: float = LOG_EVERY_SECONDS) -> Callable[[int, int], None]:
    """A progress(done, total) callback that logs `label: done/total unit, rate, ETA` at most
    every `every` seconds, and once at the end."""
    start = last = time.monotonic()

    def progress(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= every or done == total:
            last = now
            rate = done / max(now - start, 1e-9)
            eta = f", ETA {(total - done) / rate:.0f} s" if rate else ""
            log(f"{label}: {done:,}/{total:,} {unit}, {rate:.1f}/s{eta}")

    return progress
