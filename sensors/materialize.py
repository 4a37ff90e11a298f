"""Materializing from Python, for `wikimem demo` and any command that materializes.

Runs go through Dagster's API against the instance of $DAGSTER_HOME: `execute_job` on the code
location's asset job (the same code a launched run executes, recorded in the same event log the UI
shows), partitions are added with `instance.add_dynamic_partitions`, and progress is read from the
run's event stream on the instance (one tick per finished step).
"""

from __future__ import annotations

import operator
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from functools import reduce

from dagster import (
    AssetSelection,
    DagsterEventType,
    DagsterInstance,
    RunsFilter,
    execute_job,
)
from dagster._core.definitions.reconstruct import (
    ReconstructableJob,
    ReconstructableRepository,
)
from tqdm import tqdm

from assets.partitions import models_partitions
from resources.placement import IN_PROCESS_EXECUTION
from wikimem_platform.progress import LOG_EVERY_SECONDS

# The terminal shows a progress bar and warnings; every event is in the instance's run log.
QUIET_CONSOLE = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
STEP_EVENTS = {DagsterEventType.STEP_START, DagsterEventType.STEP_SUCCESS, DagsterEventType.STEP_FAILURE}
POLL_SECONDS = 0.5
RUN_TAG = "wikimem/materialize"


def asset_job() -> ReconstructableJob:
    """The code location's asset job (every asset), by module and name, so step processes of a
    multiprocess run rebuild it from the installed `definitions` module."""
    from definitions import defs  # lazy: definitions imports this module (the sensors' runner)

    repository = ReconstructableRepository.for_module("definitions", "defs")
    return repository.get_reconstructable_job(defs.resolve_implicit_global_asset_job_def().name)


def add_model_partitions(keys: list[str]) -> list[str]:
    """Add `models` partitions for these releases on the instance of $DAGSTER_HOME; returns the new ones."""
    with DagsterInstance.get() as instance:
        existing = set(instance.get_dynamic_partitions(models_partitions.name))
        new = [key for key in keys if key not in existing]
        if new:
            instance.add_dynamic_partitions(models_partitions.name, new)
        return new


@dataclass
class RunOutcome:
    run_id: str
    success: bool
    failures: list[str]


def materialize(
    selection: str,
    label: str,
    partition_key: str | None = None,
    run_config: dict | None = None,
) -> RunOutcome:
    """Materialize the assets of a selection (e.g. "group:data,group:canaries": comma = union) in one run,
    showing a progress bar fed by the run's step events. Runs in process unless `run_config`
    chooses another execution (e.g. `{"execution": {"config": {"multiprocess": {...}}}}`)."""
    with DagsterInstance.get() as instance:
        return materialize_on(instance, selection, label, partition_key, run_config)


def materialize_on(instance: DagsterInstance, selection: str, label: str,
                   partition_key: str | None = None, run_config: dict | None = None) -> RunOutcome:
    """`materialize` on a given instance (tests, benchmarks)."""
    from definitions import defs  # lazy: definitions imports this module (the sensors' runner)

    # Comma-separated like `dagster asset materialize --select`: the union of the parts.
    parts = [AssetSelection.from_string(part.strip()) for part in selection.split(",")]
    keys = reduce(operator.or_, parts).resolve(defs.resolve_asset_graph())
    marker = uuid.uuid4().hex
    tags = {RUN_TAG: marker, **({"dagster/partition": partition_key} if partition_key else {})}
    result: dict = {}

    def execute() -> None:
        try:
            result["run"] = execute_job(
                asset_job(),
                instance=instance,
                run_config={**IN_PROCESS_EXECUTION, **QUIET_CONSOLE, **(run_config or {})},
                tags=tags,
                asset_selection=sorted(keys, key=lambda key: key.to_user_string()),
            )
        except BaseException as error:  # surfaced in the caller's thread
            result["error"] = error

    worker = threading.Thread(target=execute, name=f"materialize {label}")
    worker.start()
    # On a terminal the bar redraws as time passes; in a log file (no TTY) a line every LOG_EVERY_SECONDS.
    interactive = sys.stderr.isatty()
    with tqdm(desc=label, unit="step", total=None, mininterval=0.1 if interactive else LOG_EVERY_SECONDS) as bar:
        run_id, cursor, shown = None, None, time.monotonic()
        while True:
            finished = not worker.is_alive()  # read before polling, so the last poll sees every event
            if run_id is None:
                runs = instance.get_run_records(RunsFilter(tags={RUN_TAG: marker}), limit=1)
                run_id = runs[0].dagster_run.run_id if runs else None
            if run_id is not None:
                page = instance.get_records_for_run(run_id, cursor=cursor, of_type=STEP_EVENTS)
                cursor = page.cursor
                for record in page.records:
                    event = record.event_log_entry.dagster_event
                    if event.event_type == DagsterEventType.STEP_START:
                        bar.set_postfix_str(event.step_key, refresh=interactive)
                    else:
                        bar.update(1)
            if finished:
                break
            if interactive or time.monotonic() - shown >= LOG_EVERY_SECONDS:
                bar.refresh()  # the elapsed time keeps moving during a long step
                shown = time.monotonic()
            worker.join(POLL_SECONDS)
    worker.join()
    if "error" in result:
        raise result["error"]
    run = result["run"]
    with run:
        failures = [
            f"{event.step_key}: {event.step_failure_data.error.message.strip()}" if event.step_failure_data.error else str(event.step_key)
            for event in run.all_events if event.event_type == DagsterEventType.STEP_FAILURE
        ]
        return RunOutcome(run.run_id, run.success, failures)
