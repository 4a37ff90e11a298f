"""Start `dagster dev` on loopback for a test, and always stop every process it started."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def graphql(port: int, query: str, variables: dict | None = None, timeout: float = 30) -> dict:
    response = requests.post(
        f"http://127.0.0.1:{port}/graphql", json={"query": query, "variables": variables or {}}, timeout=timeout
    )
    response.raise_for_status()
    body = response.json()
    if body.get("errors"):
        raise RuntimeError(body["errors"])
    return body["data"]


def dagster_materialize(home: Path, select: str, config: dict, partition: str | None = None,
                        env: dict | None = None) -> subprocess.Popen:
    """`dagster asset materialize` of `select` with DAGSTER_HOME=home, in its own process group
    (so a test can kill it and every step process it started); its output goes to home/<asset>.log."""
    name = select.split(",")[0]
    config_path = home / f"config-{name}.json"
    config_path.write_text(json.dumps(config))
    command = [str(Path(sys.executable).parent / "dagster"), "asset", "materialize", "-m", "definitions",
               "--select", select, "-c", str(config_path)]
    if partition:
        command += ["--partition", partition]
    return subprocess.Popen(
        command, cwd=REPO, env={**os.environ, "DAGSTER_HOME": str(home), **(env or {})},
        stdout=open(home / f"{name}.log", "a"), stderr=subprocess.STDOUT, start_new_session=True,
    )


def _reset_signals() -> None:
    # A background shell starts children with SIGINT/SIGTERM ignored; dagster dev would then
    # ignore our stop request. Restore the defaults before exec.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _wait_until_serving(process: subprocess.Popen, port: int, log: Path, what: str, timeout: float) -> None:
    """Until the webserver on `port` answers GraphQL; an early exit or a time-out shows the log's end."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited early:\n{log.read_text()[-3000:]}")
        try:
            graphql(port, "{ version }", timeout=5)
            return
        except (requests.RequestException, RuntimeError):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} not up in {timeout}s:\n{log.read_text()[-3000:]}")
            time.sleep(1)


@contextlib.contextmanager
def dagster_dev(home: Path, port: int | None = None, startup_timeout: float = 180, env: dict | None = None,
                workspace: Path | None = None) -> Iterator[int]:
    """Run `dagster dev` (webserver + daemon) with DAGSTER_HOME=home, on the repository's
    workspace.yaml or `workspace`; yield its port."""
    port = port or free_port()
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    log = open(home / "dagster-dev.log", "w")
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster"), "dev", "-h", "127.0.0.1", "-p", str(port), "-w", str(workspace or "workspace.yaml")],
        cwd=REPO,
        env={**os.environ, "DAGSTER_HOME": str(home), **(env or {})},
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=_reset_signals,
        start_new_session=True,  # one process group: the webserver, daemon and code servers
    )
    try:
        _wait_until_serving(process, port, home / "dagster-dev.log", "dagster dev", startup_timeout)
        yield port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # stragglers of the group (code servers)
        log.close()


def _as_background_job() -> None:
    # What `./scripts/dev.sh &` gets from a non-interactive shell: SIGINT ignored.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def processes_of(home: Path) -> list[int]:
    """Live processes whose environment names this DAGSTER_HOME (dev.sh, dagster dev and its children)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if f"DAGSTER_HOME={home}".encode() in (proc / "environ").read_bytes().split(b"\0") \
                    and (proc / "stat").read_text().split()[2] != "Z":
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@contextlib.contextmanager
def dev_sh(home: Path, port: int | None = None, startup_timeout: float = 180) -> Iterator[tuple[int, subprocess.Popen]]:
    """Run `scripts/dev.sh` as a background job of a script would (SIGINT ignored); yield (port,
    process). The caller stops it with SIGTERM to the script alone, as `kill %1` does; whatever is
    left afterwards is killed here (and the caller can see it with `processes_of`)."""
    port = port or free_port()
    home.mkdir(parents=True, exist_ok=True)
    log = open(home / "dev-sh.log", "w")
    process = subprocess.Popen(["bash", str(REPO / "scripts" / "dev.sh")], cwd=REPO,
                               # the wait polls GraphQL anonymously: the UI without sign-in (loopback)
                               env={**os.environ, "DAGSTER_HOME": str(home), "PORT": str(port), "WIKIMEM_DEV_NO_AUTH": "1"},
                               stdout=log, stderr=subprocess.STDOUT, preexec_fn=_as_background_job)
    try:
        _wait_until_serving(process, port, home / "dev-sh.log", "dev.sh", startup_timeout)
        yield port, process
    finally:
        for pid in processes_of(home):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        log.close()
