"""Start `dagster dev` on loopback for a test, and always stop every process it started."""

from __future__ import annotations

import contextlib
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


def _reset_signals() -> None:
    # A background shell starts children with SIGINT/SIGTERM ignored; dagster dev would then
    # ignore our stop request. Restore the defaults before exec.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def dagster_dev(home: Path, port: int | None = None, startup_timeout: float = 180, env: dict | None = None) -> Iterator[int]:
    """Run `dagster dev` (webserver + daemon) with DAGSTER_HOME=home; yield its port."""
    port = port or free_port()
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    log = open(home / "dagster-dev.log", "w")
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster"), "dev", "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"],
        cwd=REPO,
        env={**os.environ, "DAGSTER_HOME": str(home), **(env or {})},
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=_reset_signals,
        start_new_session=True,  # one process group: the webserver, daemon and code servers
    )
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"dagster dev exited early:\n{(home / 'dagster-dev.log').read_text()[-3000:]}")
            try:
                graphql(port, "{ version }", timeout=5)
                break
            except (requests.RequestException, RuntimeError):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"dagster dev not up in {startup_timeout}s:\n{(home / 'dagster-dev.log').read_text()[-3000:]}")
                time.sleep(1)
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
