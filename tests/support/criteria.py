"""Thresholds the suite asserts on models it trains itself, asserted and recorded in one call.

A threshold on a trained model must hold on any machine, so each one is also run under other
seeds and thread counts (`scripts/planted_margins.py` runs the same tests with
WIKIMEM_TEST_SEED / WIKIMEM_TEST_THREADS and builds the margin table of the README from what
they record). `criterion` asserts like a plain `assert` and, when WIKIMEM_CRITERIA_LOG names a
file, appends the value, the threshold and the margin to it as one JSON line.
"""

from __future__ import annotations

import json
import math
import operator
import os

from tests.support.trained import TEST_SEED, TEST_THREADS

_OPERATORS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq}
LOG_ENV = "WIKIMEM_CRITERIA_LOG"


def needed_count(op: str, threshold: float, n: int) -> int:
    """The fewest (>=, >) or most (<=, <) of n items a share may count and still pass."""
    if op == ">=":
        return math.ceil(threshold * n - 1e-9)
    if op == ">":
        return math.floor(threshold * n + 1e-9) + 1
    if op == "<=":
        return math.floor(threshold * n + 1e-9)
    if op == "<":
        return math.ceil(threshold * n - 1e-9) - 1
    raise ValueError(f"no count margin for {op!r}")


def criterion(name: str, value: float, op: str, threshold: float, *, n: int | None = None, context=None) -> None:
    """Assert `value op threshold` and record it. With `n`, `value` is a share of n items (facts,
    people) and the record also says how many items it is from failing (`spare`)."""
    if op not in _OPERATORS:
        raise ValueError(f"op must be one of {', '.join(_OPERATORS)}, got {op!r}")
    value = float(value)
    record = {"criterion": name, "value": value, "op": op, "threshold": threshold,
              "margin": value - threshold if op in (">=", ">") else threshold - value,
              "seed": TEST_SEED, "threads": TEST_THREADS}
    if n is not None:
        count = round(value * n)
        needed = needed_count(op, threshold, n)
        record.update(n=n, count=count, spare=count - needed if op in (">=", ">") else needed - count)
    _log(record)
    assert _OPERATORS[op](value, threshold), f"{name}: {value} not {op} {threshold}" + (f" ({context})" if context else "")


def observe(name: str, value: float) -> None:
    """Record a measured value that is reported, not asserted: a finding that does not hold for
    every seed of the model (the margin table shows it per run, with no threshold)."""
    _log({"criterion": name, "value": float(value), "op": "reported", "seed": TEST_SEED, "threads": TEST_THREADS})


def _log(record: dict) -> None:
    if path := os.environ.get(LOG_ENV):
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
