"""Count test functions and assertions per area of the suite, so that making the suite faster can
be shown to drop no test and no assertion (issue 62: before/after table in the closing note).

An area is a test folder (tests/unit/<area>, tests/e2e, tests/dagster, ...). Counted statically with
`ast`: a test is a `test_*` function or method (parametrized cases count once: the ids are data);
assertions are `assert` statements plus `pytest.raises`/`pytest.warns` contexts and calls, in test
files and in the helpers under tests/ they import.

    python scripts/test_inventory.py              # a table
    python scripts/test_inventory.py --json out   # also write the counts, to compare later
    python scripts/test_inventory.py --against benchmarks/results/test_inventory_before.json
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


def area_of(path: Path) -> str:
    parts = path.relative_to(TESTS).parts
    if len(parts) == 1:
        return "tests (top)"
    if parts[0] == "unit" and len(parts) > 2:
        return f"unit/{parts[1]}"
    return parts[0]


def count_file(path: Path) -> Counter:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    counts: Counter = Counter()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
            counts["tests"] += 1
        elif isinstance(node, ast.Assert):
            counts["asserts"] += 1
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in {"raises", "warns"}
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest"):
            counts["asserts"] += 1
    return counts


def inventory() -> dict[str, dict[str, int]]:
    areas: dict[str, Counter] = {}
    for path in sorted(TESTS.rglob("*.py")):
        areas.setdefault(area_of(path), Counter()).update(count_file(path))
    return {area: {"tests": c["tests"], "asserts": c["asserts"]} for area, c in sorted(areas.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the counts to this file")
    parser.add_argument("--against", help="a counts file from before: print both and fail if an area lost any")
    args = parser.parse_args(argv)
    now = inventory()
    before = json.loads(Path(args.against).read_text()) if args.against else None
    lost = []
    header = f"{'area':<24}{'tests':>7}{'asserts':>9}" + (f"{'tests before':>14}{'asserts before':>16}" if before else "")
    print(header)
    for area in sorted(set(now) | set(before or {})):
        n = now.get(area, {"tests": 0, "asserts": 0})
        line = f"{area:<24}{n['tests']:>7}{n['asserts']:>9}"
        if before is not None:
            b = before.get(area, {"tests": 0, "asserts": 0})
            line += f"{b['tests']:>14}{b['asserts']:>16}"
        print(line)
    total = {k: sum(v[k] for v in now.values()) for k in ("tests", "asserts")}
    line = f"{'total':<24}{total['tests']:>7}{total['asserts']:>9}"
    if before is not None:
        tb = {k: sum(v[k] for v in before.values()) for k in ("tests", "asserts")}
        line += f"{tb['tests']:>14}{tb['asserts']:>16}"
        lost = [k for k in ("tests", "asserts") if total[k] < tb[k]]
    print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(now, indent=1) + "\n")
    if lost:
        print(f"fewer {' and '.join(lost)} than before (moved tests keep their asserts; a dropped one is a lost check)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
