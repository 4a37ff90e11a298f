"""The Dagster instance's share of a request's purge (`wikimem_platform.security.purge`): the
request's runs, their event logs (materializations with their metadata, run logs shown in the UI),
asset-check results, run tags, captured stdout/stderr, the assets' cached last materialization, its
dynamic partition, and the free pages of the instance's SQLite files that held them.

Dagster has `delete_run` (runs and their events) but keeps the rest: this module deletes those rows
by run id through the storages' own connections.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from dagster import DagsterInstance, DagsterRunStatus, RunsFilter
from sqlalchemy import text

from assets.partitions import requests_partitions

ACTIVE = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED,
          DagsterRunStatus.CANCELING]
CANCEL_WAIT_SECONDS = 120


def request_runs(instance: DagsterInstance, request_id: str) -> list:
    """Every run of the request: by partition, and by the sensor's tag (a run of several steps)."""
    runs = {run.run_id: run for tags in ({"dagster/partition": request_id}, {"wikimem/request": request_id})
            for run in instance.get_runs(RunsFilter(tags=tags))}
    return list(runs.values())


def _stop_active(instance: DagsterInstance, request_id: str, wait_seconds: float) -> None:
    """Cancel the request's queued and running runs and wait until none writes any more."""
    for run in request_runs(instance, request_id):
        if run.status in ACTIVE and run.status != DagsterRunStatus.CANCELING:
            try:
                instance.run_coordinator.cancel_run(run.run_id)
            except Exception:  # noqa: BLE001 - a run no launcher can reach is waited for, then marked canceled
                pass
    deadline = time.monotonic() + wait_seconds
    while any(r.status in ACTIVE for r in request_runs(instance, request_id)):
        if time.monotonic() > deadline:
            for run in request_runs(instance, request_id):
                if run.status in ACTIVE:  # its process is gone or stuck: recorded as canceled
                    instance.report_run_canceled(run, message="canceled for a purge")
            break
        time.sleep(0.5)


def _delete_by_run(conn, table: str, column: str, run_ids: list[str]) -> None:
    for run_id in run_ids:
        conn.execute(text(f"DELETE FROM {table} WHERE {column} = :run_id"), {"run_id": run_id})


def _clean_index(instance: DagsterInstance, run_ids: list[str]) -> None:
    """Rows that `delete_run` leaves: asset-check executions, run tags, the asset index's cached
    last materialization of a request asset (its metadata)."""
    events = instance.event_log_storage
    if hasattr(events, "index_connection"):
        with events.index_connection() as conn:
            _delete_by_run(conn, "asset_check_executions", "run_id", run_ids)
            for run_id in run_ids:
                conn.execute(text("UPDATE asset_keys SET last_materialization = NULL, last_run_id = NULL, "
                                  "cached_status_data = NULL WHERE last_run_id = :run_id"), {"run_id": run_id})
    runs = instance.run_storage
    if hasattr(runs, "connect"):
        with runs.connect() as conn:
            _delete_by_run(conn, "run_tags", "run_id", run_ids)


def _compact_sqlite(storage: Path) -> None:
    """VACUUM every SQLite file of the instance's storage (Dagster's run, index, schedule and event
    databases): deleted rows stay in free pages until then."""
    for path in [*storage.glob("*.db"), *storage.glob("schedules/*.db")]:
        conn = sqlite3.connect(path, timeout=60)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
        finally:
            conn.close()


def erase_request_runs(request_id: str, wait_seconds: float = CANCEL_WAIT_SECONDS,
                       instance: DagsterInstance | None = None) -> int:
    """Delete the request's runs and everything the instance keeps of them (the given one, else
    that of $DAGSTER_HOME); how many runs went. Active runs are canceled first and waited for."""
    if instance is None:
        with DagsterInstance.get() as own:
            return erase_request_runs(request_id, wait_seconds, own)
    _stop_active(instance, request_id, wait_seconds)
    run_ids = [run.run_id for run in request_runs(instance, request_id)]
    _clean_index(instance, run_ids)
    storage = Path(instance.storage_directory())
    for run_id in run_ids:
        try:
            instance.compute_log_manager.delete_logs(prefix=[run_id])
        except NotImplementedError:
            pass
        instance.delete_run(run_id)
        (storage / f"{run_id}.db").unlink(missing_ok=True)  # SQLite's per-run event log
    if instance.has_dynamic_partition(requests_partitions.name, request_id):
        instance.delete_dynamic_partition(requests_partitions.name, request_id)
    _compact_sqlite(storage)
    return len(run_ids)
