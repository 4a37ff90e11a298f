"""A throwaway PostgreSQL server for the tests (the platform's "Postgres when configured").

Started once per session from Debian's server binaries (`initdb`, `pg_ctl`; `scripts/setup.sh`
installs the `postgresql` package where apt is available) in a temporary directory, on a free
loopback port, trust authentication for one user; stopped and deleted at the end. As root it
runs as the `postgres` system user (the server refuses to run as root). Without the binaries
the Postgres tests are skipped, saying so.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

PG_USER = "wikimem"


def _server_binary(name: str) -> str | None:
    """`name` on PATH, else the newest Debian install (/usr/lib/postgresql/<version>/bin)."""
    found = shutil.which(name)
    if found:
        return found
    installed = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(Path(p).parts[-3]))
    return installed[-1] if installed else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_server():
    """The base URL (postgresql://wikimem@127.0.0.1:PORT) of a running throwaway server."""
    initdb, pg_ctl = _server_binary("initdb"), _server_binary("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    as_user: list[str] = []
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no `postgres` user to run the server as")
        as_user = ["runuser", "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="wikimem-pg-"))
    if as_user:
        shutil.chown(root, "postgres", "postgres")
    data, port = root / "data", _free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, timeout=120)

    try:
        run(initdb, "-D", str(data), "-U", PG_USER, "--auth=trust", "-E", "UTF8", "--locale=C")
        run(pg_ctl, "-D", str(data), "-l", str(root / "server.log"), "-w", "-t", "60", "start",
            "-o", f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off")
    except subprocess.CalledProcessError as error:
        log = (root / "server.log").read_text() if (root / "server.log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"could not start PostgreSQL: {error.stderr.decode()} {log}") from error
    try:
        yield f"postgresql://{PG_USER}@127.0.0.1:{port}"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"], capture_output=True, timeout=120)
        shutil.rmtree(root, ignore_errors=True)


def new_database(server_url: str) -> str:
    """Create an empty database on the server; returns its URL."""
    import psycopg2

    name = f"test_{uuid.uuid4().hex[:12]}"
    connection = psycopg2.connect(f"{server_url}/postgres")
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
    finally:
        connection.close()
    return f"{server_url}/{name}"


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A fresh, empty database on the session's server."""
    return new_database(postgres_server)
