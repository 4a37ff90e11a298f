"""Run the tests that assert thresholds on models the suite trains, under several seeds and thread
counts, and print the margin table (criterion, value per run, smallest margin).

    .venv/bin/python scripts/planted_margins.py                      # seeds 0, 1, 2 and seed 0 with 2 threads
    .venv/bin/python scripts/planted_margins.py --runs 1:1 --jobs 1  # one run (seed:threads)
    .venv/bin/python scripts/planted_margins.py --table docs/planted_margins.jsonl   # the table of a past run
    .venv/bin/python scripts/planted_margins.py --tests tests/unit/eme/test_eme_planted.py \
        --update docs/planted_margins.jsonl --replace EME eme_probe                  # re-measure some rows only

Each run is the suite's own tests (the planted pipeline, EME, MIA, the erasure loop, reference
unlearning, the NER model) with WIKIMEM_TEST_SEED and WIKIMEM_TEST_THREADS set: every model is
trained for that seed and thread count (the planted models, their soft prompts and the NER
model; cached beside the default ones, see tests/support/trained.py) and every threshold is recorded by
`tests.support.criteria.criterion`. A thread count changes the order of float sums as another CPU does.
A cold run trains three models (about 30 minutes of one core). The records are written to
--out (JSONL), the table to stdout as Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ["tests/e2e/test_planted_pipeline.py", "tests/unit/eme/test_eme_planted.py", "tests/unit/mia/test_mia_planted.py",
         "tests/e2e/test_erasure_loop.py", "tests/unit/unlearning/test_methods.py", "tests/unit/ner/test_ner_model.py",
         "tests/unit/subject_requests/test_top_logprobs_requests.py"]
DEFAULT_RUNS = ["0:1", "1:1", "2:1", "0:2"]


def run_tests(seed: int, threads: int, log_dir: Path, tests: list[str] = TESTS) -> tuple[str, int, Path]:
    """One run of the trained-model tests; returns (run name, pytest's exit code, records)."""
    name = f"seed {seed}, {threads} thread{'s' if threads > 1 else ''}"
    records = log_dir / f"criteria-s{seed}-t{threads}.jsonl"
    records.unlink(missing_ok=True)
    env = {**os.environ, "WIKIMEM_TEST_SEED": str(seed), "WIKIMEM_CRITERIA_LOG": str(records),
           "WIKIMEM_TEST_THREADS": str(threads) if threads != 1 else "0"}
    started = time.monotonic()
    with open(log_dir / f"pytest-s{seed}-t{threads}.log", "w", encoding="utf-8") as out:
        code = subprocess.call([sys.executable, "-m", "pytest", *tests, "-p", "no:cacheprovider", "-q"],
                               cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    print(f"{name}: pytest exit {code} in {(time.monotonic() - started) / 60:.0f} min", file=sys.stderr, flush=True)
    return name, code, records


def _cell(record: dict) -> str:
    value = f"{record['value']:.3f}"
    if "spare" in record:
        value += f" ({record['count']}/{record['n']}, {record['spare']:+d})"
    return value


def margin_table(records: list[dict]) -> str:
    """Markdown: one row per criterion, one column per run, the threshold and the smallest margin
    (in items where the criterion is a share of items, e.g. facts)."""
    runs = sorted({(r["seed"], r["threads"]) for r in records}, key=lambda run: (run[1] != 0, run))
    names = [f"seed {s}" + (f", {t} threads" if t else "") for s, t in runs]
    by_criterion: dict[str, dict] = {}
    for record in records:
        by_criterion.setdefault(record["criterion"], {})[(record["seed"], record["threads"])] = record
    lines = ["| criterion | threshold | " + " | ".join(names) + " | smallest margin |",
             "|---|---|" + "---|" * len(names) + "---|"]
    for criterion, per_run in by_criterion.items():
        first = next(iter(per_run.values()))
        cells = [_cell(per_run[run]) if run in per_run else "—" for run in runs]
        if first["op"] == "reported":  # tests.support.criteria.observe: measured, not asserted
            lines.append(f"| {criterion} | reported, not asserted | " + " | ".join(cells) + " | — |")
            continue
        if all("spare" in r for r in per_run.values()):
            smallest = f"{min(r['spare'] for r in per_run.values()):+d} items"
        else:
            smallest = f"{min(r['margin'] for r in per_run.values()):+.3f}"
        lines.append(f"| {criterion} | {first['op']} {first['threshold']:g} | " + " | ".join(cells) + f" | {smallest} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", nargs="+", default=DEFAULT_RUNS, help="seed:threads pairs (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2: one per core)")
    parser.add_argument("--out", type=Path, default=None, help="write every record here (JSONL)")
    parser.add_argument("--table", type=Path, default=None, help="print the table of records written before, run nothing")
    parser.add_argument("--tests", nargs="+", default=TESTS, help="the tests to run (default: every trained-model test)")
    parser.add_argument("--update", type=Path, default=None,
                        help="merge into this JSONL: its records of the criteria re-measured in these runs (and of --replace) give way")
    parser.add_argument("--replace", nargs="+", default=[],
                        help="with --update: also drop these runs' old criteria starting with these words (a run that stopped early)")
    args = parser.parse_args(argv)
    if args.table:
        records = [json.loads(line) for line in args.table.read_text(encoding="utf-8").splitlines() if line.strip()]
        print(margin_table(records))
        return 0
    runs = [tuple(int(part) for part in run.split(":")) for run in args.runs]
    log_dir = Path(tempfile.mkdtemp(prefix="planted-margins-"))
    print(f"logs in {log_dir}", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda run: run_tests(*run, log_dir, args.tests), runs))
    records = [json.loads(line) for _, _, path in results if path.exists()
               for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.update:
        def key(record: dict) -> tuple:
            return record["criterion"], record["seed"], record["threads"]

        measured = {key(r) for r in records}
        rerun = {(r["seed"], r["threads"]) for r in records}
        old = [json.loads(line) for line in args.update.read_text(encoding="utf-8").splitlines() if line.strip()]
        kept = [r for r in old if key(r) not in measured
                and not (r["criterion"].startswith(tuple(args.replace)) and (r["seed"], r["threads"]) in rerun)]
        order = list(dict.fromkeys(r["criterion"] for r in old + records))  # rows stay where they were
        records = sorted(kept + records, key=lambda r: order.index(r["criterion"]))
        args.update.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    print(margin_table(records))
    failed = [name for name, code, _ in results if code != 0]
    if failed:
        print(f"failed: {', '.join(failed)} (logs in {log_dir})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
