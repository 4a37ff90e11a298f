"""The command line's one door to the Dagster layer: what runs on, or cleans up, the Dagster
instance (`wikimem demo`, `request run`, the runs of a removed release or request, a purge's runs
and event logs, a request's run progress), through `sensors.materialize` and
`sensors.instance_purge`.

Dagster finds its instance folder in $DAGSTER_HOME alone (`DagsterInstance.get()`, here and in the
run it executes in this process): `dagster_home(home)` exports it for as long as a call into the
Dagster layer lasts, the command line's only write to DAGSTER_HOME. Both modules are imported on
first use: they load dagster and every asset module, which the other commands never need.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from wikimem_platform.settings import instance_paths, Settings

DAGSTER_HOME_ENV = Settings.env_name("dagster_home")


def repo_root() -> Path | None:
    """The checkout holding the default instance config (dagster.yaml), if this runs from one."""
    for candidate in (Path.cwd(), Path(__file__).resolve().parent.parent):
        if (candidate / "definitions.py").is_file() and (candidate / "dagster.yaml").is_file():
            return candidate
    return None


def runner():
    """`sensors.materialize`: runs through Dagster's Python API (RunInterrupted, process_request, ...)."""
    from sensors import materialize  # lazy: loads dagster and every asset module (seconds); only commands on the instance need it

    return materialize


def instance_purge():
    """`sensors.instance_purge`: the Dagster instance's share of a purge (runs, event logs)."""
    from sensors import instance_purge  # lazy: loads dagster (seconds); only a purge on an existing instance needs it

    return instance_purge


@contextmanager
def dagster_home(home: Path) -> Iterator[Path]:
    """$DAGSTER_HOME set to `home` while the block runs (Dagster reads it from the environment
    only), then as it was."""
    previous = os.environ.get(DAGSTER_HOME_ENV)
    os.environ[DAGSTER_HOME_ENV] = str(home)
    try:
        yield home
    finally:
        if previous is None:
            os.environ.pop(DAGSTER_HOME_ENV, None)
        else:
            os.environ[DAGSTER_HOME_ENV] = previous


def prepared_home(home: str | os.PathLike | None = None) -> Path:
    """The Dagster instance folder (the one `instance_paths` resolves), created, with the checkout's
    default dagster.yaml on first use."""
    path = instance_paths(home).home
    path.mkdir(parents=True, exist_ok=True)
    checkout = repo_root()
    if not (path / "dagster.yaml").exists() and checkout is not None:
        shutil.copy(checkout / "dagster.yaml", path / "dagster.yaml")
    return path


def existing_home() -> Path | None:
    """The instance folder when a Dagster instance lives there (a dagster.yaml), else None:
    commands that only read or clean up on it do nothing without one."""
    home = instance_paths().home
    return home if (home / "dagster.yaml").is_file() else None


def withdraw_partition(partitions: str, key: str) -> tuple[list[str], bool] | None:
    """Cancel the queued and running runs of a removed release or request and delete its partition,
    on the instance when there is one: (canceled run ids, whether the partition existed), or None."""
    home = existing_home()
    if home is None:
        return None
    with dagster_home(home):
        return runner().withdraw_partition(partitions, key)


def request_run_progress(request_id: str) -> dict | None | bool:
    """The request's newest run on the instance (`sensors.materialize.request_run_progress`), or
    False when there is no instance."""
    home = existing_home()
    if home is None:
        return False
    with dagster_home(home):
        return runner().request_run_progress(request_id)


def run_eraser() -> Callable[[str], int] | None:
    """What deletes a request's runs and event logs on the instance (None without an instance)."""
    home = existing_home()
    if home is None:
        return None
    erase = instance_purge().erase_request_runs

    def erase_runs(request_id: str) -> int:
        with dagster_home(home):
            return erase(request_id)

    return erase_runs
