"""Materializing from Python, for `wikimem demo` and any command that materializes.

Runs go through Dagster's API against the instance of $DAGSTER_HOME: `execute_job` on the code
location's asset job (the same code a launched run executes, recorded in the same event log the UI
shows), partitions are added with `instance.add_dynamic_partitions`, and progress is read from the
run's event stream on the instance (one tick per finished step).

A run is stopped, not abandoned: Ctrl-C (SIGINT), SIGTERM, or a termination from the UI (or by
`wikimem request remove`: the run is then CANCELING) marks the run canceling, interrupts the
execution between two Python instructions of its step (Dagster records the step as interrupted
and the run as CANCELED), and raises `RunInterrupted`, a one-line message. What the steps stored
before (the score shards) stays: the next run resumes from them.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import operator
import signal
import sys
import threading
import time
import uuid
import warnings
from dataclasses import dataclass
from functools import reduce

from dagster import (
    AssetSelection,
    BetaWarning,
    DagsterEventType,
    DagsterInstance,
    DagsterRunStatus,
    RunsFilter,
    execute_job,
)
from dagster._core.errors import DagsterExecutionInterruptedError
from dagster._core.definitions.reconstruct import (
    ReconstructableJob,
    ReconstructableRepository,
)
from dagster._core.execution.api import create_execution_plan
from dagster._core.execution.plan.step import StepKind
from tqdm import tqdm

from assets.partitions import models_partitions, requests_partitions
from resources.placement import ensure_lm_pool, IN_PROCESS_EXECUTION
from sensors.registry import reference_data_ready, REQUEST_JOB_NAME, run_config_for
from wikimem_platform.progress import LOG_EVERY_SECONDS

# The terminal shows a progress bar and warnings; every event is in the instance's run log.
QUIET_CONSOLE = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
STEP_EVENTS = {DagsterEventType.STEP_START, DagsterEventType.STEP_SUCCESS, DagsterEventType.STEP_FAILURE}
POLL_SECONDS = 0.5
RUN_TAG = "wikimem/materialize"
# How long a stopped run's step may take to reach its next Python instruction (a model's forward
# pass is one C call) before the run is recorded canceled without it; a second Ctrl-C stops waiting.
STOP_GRACE_SECONDS = 30.0
STOPPING = {DagsterRunStatus.CANCELING, DagsterRunStatus.CANCELED}
INTERRUPT_AGAIN_SECONDS = 5.0  # a step that caught the interruption is interrupted again


class RunInterrupted(Exception):
    """A run stopped before its end (a signal, or terminated): recorded CANCELED on the instance.
    `running`: its execution had not ended within STOP_GRACE_SECONDS (a step inside one long C
    call): the process should then leave at once (os._exit), not wait for it at interpreter exit."""

    def __init__(self, run_id: str | None, reason: str, running: bool = False):
        super().__init__(f"run {run_id or '(not started)'} {reason}")
        self.run_id, self.reason, self.running = run_id, reason, running


class _Signalled(BaseException):
    """SIGTERM in the waiting thread, as KeyboardInterrupt is SIGINT."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_signalled(signum, _frame) -> None:
    raise _Signalled(signum)


def _interrupt_thread(thread: threading.Thread) -> None:
    """Raise DagsterExecutionInterruptedError in `thread` at its next Python instruction: what
    Dagster's own run worker raises on SIGINT, handled by the executor (the step fails as
    interrupted, a CANCELING run ends CANCELED)."""
    if thread.ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident),
                                                   ctypes.py_object(DagsterExecutionInterruptedError))


def _stop_run(instance: DagsterInstance, marker: str, worker: threading.Thread, reason: str) -> str | None:
    """Mark the run canceling, interrupt its execution, wait for it (STOP_GRACE_SECONDS), and make
    sure the instance records it CANCELED; returns the run id (None when it never started)."""
    def current():
        records = instance.get_run_records(RunsFilter(tags={RUN_TAG: marker}), limit=1)
        return records[0].dagster_run if records else None

    def endings(run_id: str | None) -> int:
        ended = {DagsterEventType.STEP_FAILURE, DagsterEventType.RUN_CANCELED}
        return len(instance.get_records_for_run(run_id, of_type=ended).records) if run_id else 0

    run = current()
    if run is not None and not run.is_finished and run.status != DagsterRunStatus.CANCELING:
        instance.report_run_canceling(run, message=f"Stopping: {reason}.")
    run_id = run.run_id if run is not None else None
    before = endings(run_id)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    # The interrupted step's failure and its stack trace go to the run's event log, not the
    # terminal (Dagster's console handler writes to sys.stderr as it is at each message).
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            _interrupt_thread(worker)
            while worker.is_alive() and time.monotonic() < deadline:
                worker.join(INTERRUPT_AGAIN_SECONDS)
                # Once the step has failed as interrupted, Dagster is ending the run: leave it be.
                if worker.is_alive() and endings(run_id) == before:
                    _interrupt_thread(worker)
        except (KeyboardInterrupt, _Signalled):
            pass  # a second signal: stop waiting
    run = current()
    if run is not None and not run.is_finished:
        instance.report_run_canceled(run, message=f"Canceled: {reason}.")
    return run.run_id if run is not None else None


def asset_job() -> ReconstructableJob:
    """The code location's asset job (every asset), by module and name, so step processes of a
    multiprocess run rebuild it from the installed `definitions` module."""
    from definitions import defs  # lazy: definitions imports this module (the sensors' runner)

    repository = ReconstructableRepository.for_module("definitions", "defs")
    return repository.get_reconstructable_job(defs.resolve_implicit_global_asset_job_def().name)


def step_count(keys) -> int | None:
    """How many steps a run of these assets executes, for the progress bar's total; None when a
    step fans out only at run time (the scoring shards' dynamic outputs) or the plan cannot be
    made without the run's config."""
    try:
        plan = create_execution_plan(asset_job().get_definition().get_subset(asset_selection=set(keys)))
    except Exception:  # noqa: BLE001 - a total is a nicety: without it the bar counts up
        return None
    if any(step.kind in (StepKind.UNRESOLVED_MAPPED, StepKind.UNRESOLVED_COLLECT) for step in plan.steps):
        return None
    return len(plan.steps)


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

    # Comma-separated like `dagster asset materialize --select`: the union of the parts. Parsing
    # "group:x" warns that a parameter Dagster itself passes is in beta: not the user's concern.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BetaWarning)
        parts = [AssetSelection.from_string(part.strip()) for part in selection.split(",")]
    keys = reduce(operator.or_, parts).resolve(defs.resolve_asset_graph())
    total = step_count(keys)
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

    # A daemon: a step that never reaches its next Python instruction cannot keep the process alive.
    worker = threading.Thread(target=execute, name=f"materialize {label}", daemon=True)
    on_main = threading.current_thread() is threading.main_thread()
    previous_term = signal.signal(signal.SIGTERM, _raise_signalled) if on_main else None
    worker.start()
    try:
        _follow(instance, worker, marker, label, total)
    except (KeyboardInterrupt, _Signalled) as signalled:
        reason = f"interrupted ({'SIGINT' if isinstance(signalled, KeyboardInterrupt) else signalled})"
        raise RunInterrupted(_stop_run(instance, marker, worker, reason), reason, worker.is_alive()) from None
    except _Terminated:
        raise RunInterrupted(_stop_run(instance, marker, worker, "terminated"), "terminated", worker.is_alive()) from None
    finally:
        if on_main:
            signal.signal(signal.SIGTERM, previous_term)
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


class _Terminated(Exception):
    """The run was marked canceling from outside (the UI's Terminate, `wikimem request remove`)."""


def _follow(instance: DagsterInstance, worker: threading.Thread, marker: str, label: str, total: int | None) -> None:
    """Show the run's progress until its execution ends; _Terminated when the run is canceled from outside."""
    # On a terminal the bar redraws as time passes; in a log file (no TTY) a line every LOG_EVERY_SECONDS.
    interactive = sys.stderr.isatty()
    with tqdm(desc=label, unit="step", total=total, mininterval=0.1 if interactive else LOG_EVERY_SECONDS) as bar:
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
            if run_id is not None and instance.get_run_by_id(run_id).status in STOPPING:
                raise _Terminated(run_id)
            if interactive or time.monotonic() - shown >= LOG_EVERY_SECONDS:
                bar.refresh()  # the elapsed time keeps moving during a long step
                shown = time.monotonic()
            worker.join(POLL_SECONDS)


def process_request(request_id: str, reference_selection: str) -> RunOutcome:
    """Audit one data-subject request now, without the daemon (`wikimem request run`): its
    `requests` partition, the reference data when it was never materialized, then the request
    group for that partition with a progress bar, configured from the audit config file as the
    sensor's runs are (in process: the terminal shows the progress). The request's status moves
    to "auditing" when its first step runs and to "answered" with the answer, as in a launched run."""
    with DagsterInstance.get() as instance:
        ensure_lm_pool(instance)
        if request_id not in set(instance.get_dynamic_partitions(requests_partitions.name)):
            instance.add_dynamic_partitions(requests_partitions.name, [request_id])
        if not reference_data_ready(instance):
            outcome = materialize_on(instance, reference_selection, "reference data")
            if not outcome.success:
                return outcome
        config = {k: v for k, v in run_config_for(REQUEST_JOB_NAME).items() if k != "execution"}
        return materialize_on(instance, "group:requests", f"request {request_id}", partition_key=request_id,
                              run_config=config)


def request_run_progress(request_id: str) -> dict | None:
    """The newest run of a request on the instance of $DAGSTER_HOME, for `wikimem request show`:
    run id, status, steps finished, and its newest progress line (`progress.throttled`: done/total
    sentences, rate, ETA); None when it never ran there."""
    with DagsterInstance.get() as instance:
        records = instance.get_run_records(RunsFilter(tags={"dagster/partition": request_id}), limit=1)
        if not records:
            return None
        run = records[0].dagster_run
        logs = instance.all_logs(run.run_id)
        steps_done = sum(1 for e in logs if e.dagster_event and e.dagster_event.event_type == DagsterEventType.STEP_SUCCESS)
        progress = [e.user_message for e in logs if not e.is_dagster_event and " ETA " in (e.user_message or "")]
        return {"run_id": run.run_id, "status": run.status.value, "steps_done": steps_done,
                "progress": progress[-1] if progress else None}


def withdraw_partition(partitions_name: str, key: str) -> tuple[list[str], bool]:
    """A removed release or request on the instance of $DAGSTER_HOME: its queued and running runs
    canceled (through the instance's run coordinator: a queued run is marked canceled, a running one
    terminated) and its dynamic partition deleted, so the UI shows no partition that is "missing"
    forever; its materializations stay in the event log. Returns (canceled run ids, whether the
    partition existed)."""
    with DagsterInstance.get() as instance:
        active = instance.get_runs(RunsFilter(tags={"dagster/partition": key}, statuses=[
            DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]))
        for run in active:
            instance.run_coordinator.cancel_run(run.run_id)
        existed = instance.has_dynamic_partition(partitions_name, key)
        if existed:
            instance.delete_dynamic_partition(partitions_name, key)
        return [run.run_id for run in active], existed
