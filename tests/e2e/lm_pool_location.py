"""A second code location for tests/e2e/test_sensor_to_report.py: one job whose single op is in the
`lm` pool and loads nothing. The instance's pool limit (dagster.yaml: `default_limit: 1`, run
granularity) is instance-wide, so a run of it takes the slot a model run takes, and waits in the
queue behind one as a model run does. Its op holds the slot until the test lets it go (a file named
by the run's id in `release_dir`): the test sees the queue at a moment it chooses, from the runs'
states, without loading a model or timing anything.

The pool's name is written out: `resources.placement` would import the `resources` package, torch
with it (about 10 s of each run's start); the test checks it equals `LM_POOL`."""

import time
from pathlib import Path

from dagster import Config, Definitions, Failure, job, op, OpExecutionContext

POOL = "lm"  # resources.placement.LM_POOL
POLL_SECONDS = 0.2


class HoldConfig(Config):
    release_dir: str
    timeout_s: float = 600


@op(pool=POOL)
def hold_the_lm_slot(context: OpExecutionContext, config: HoldConfig) -> None:
    """Wait for `<release_dir>/<run id>`; a test that never writes it fails the run (no run is left hanging)."""
    release = Path(config.release_dir) / context.run_id
    deadline = time.monotonic() + config.timeout_s
    while not release.exists():
        if time.monotonic() > deadline:
            raise Failure(f"{release} not written in {config.timeout_s:.0f} s")
        time.sleep(POLL_SECONDS)
    context.log.info(f"released by {release}")


@job(description="Holds one slot of the lm pool until released (tests only).")
def lm_pool_probe():
    hold_the_lm_slot()


defs = Definitions(jobs=[lm_pool_probe])
