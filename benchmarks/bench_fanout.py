"""Fan-out of the scoring steps: a multi-model, multi-property audit with Dagster's multiprocess
executor on 1 process vs N (default 2), in the same run of this script.

Each configuration gets a fresh instance (no shard or sentence cache carried over), materializes
the reference data (not timed), then the `scores` asset of every model partition, one run per
model (the `lm` pool runs models one after another); inside a run, each property shard is its own
step. Printed: wall time per configuration and the ratio (1 process / N processes).

    .venv/bin/python benchmarks/bench_fanout.py --models smollm2-135m-instruct gemma-3-270m
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]

REFERENCE_CONFIG = {"ops": {
    "property_table": {"config": {"min_humans": 2000}},  # P106, P27, P19, P20
    "subjects": {"config": {"size": 2}},
}}


def audit(home: Path, models: list[str], properties: list[str], per_cohort: int, processes: int) -> float:
    """Seconds to score every model's partition with `processes` step processes."""
    os.environ["DAGSTER_HOME"] = str(home)
    home.mkdir(parents=True)
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    from dagster import DagsterInstance

    from sensors import materialize
    from wikimem_platform.registry import Registry

    registry = Registry(None)
    keys = [registry.register_source(name).key for name in models]
    materialize.add_model_partitions(keys)
    with DagsterInstance.get() as instance:
        assert materialize.materialize_on(instance, "group:data,group:canaries", "reference data", run_config=REFERENCE_CONFIG).success
        execution = {"execution": {"config": {"multiprocess": {"max_concurrent": processes}}}}
        scores = {"ops": {"scores": {"config": {"properties": properties, "max_subjects_per_cohort": per_cohort}}}}
        started = time.perf_counter()
        for key in keys:
            outcome = materialize.materialize_on(instance, "scores", f"{key} x{processes}", partition_key=key,
                                                 run_config={**execution, **scores})
            assert outcome.success, outcome.failures
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["smollm2-135m-instruct", "gemma-3-270m"])
    parser.add_argument("--properties", nargs="+", default=["P106", "P27", "P19", "P20"])
    parser.add_argument("--subjects-per-cohort", type=int, default=1)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    from wikimem_platform.lm.loading import load_model

    for name in args.models:  # the shipped GGUF is dequantized once into the model cache: not timed
        load_model(name)
    root = Path(tempfile.mkdtemp(prefix="wikimem-fanout-"))
    seconds = {}
    for processes in (1, args.processes):
        seconds[processes] = audit(root / f"x{processes}", args.models, args.properties, args.subjects_per_cohort, processes)
        print(f"{processes} process(es): {seconds[processes]:.1f} s")
    print(f"{len(args.models)} models x {len(args.properties)} properties, {args.subjects_per_cohort} subject(s) per cohort, "
          f"{os.cpu_count()} CPUs: 1 process {seconds[1]:.1f} s, {args.processes} processes "
          f"{seconds[args.processes]:.1f} s, ratio {seconds[1] / seconds[args.processes]:.2f}x")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
