#!/usr/bin/env bash
# Start the platform: Dagster webserver + daemon on http://127.0.0.1:${PORT:-3000}, with a
# persistent instance in ${DAGSTER_HOME:-./.dagster_home} (runs, schedules, sensor state, data).
# Stops on SIGTERM (and SIGINT where the shell lets it through), with every process it started.
set -euo pipefail
cd "$(dirname "$0")/.."
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}"
mkdir -p "$DAGSTER_HOME"
[ -f "$DAGSTER_HOME/dagster.yaml" ] || cp dagster.yaml "$DAGSTER_HOME/dagster.yaml"
# The model pool gets its limit before any run is queued (resources/placement.py: ensure_lm_pool).
.venv/bin/python -c 'from dagster import DagsterInstance
from resources.placement import ensure_lm_pool
with DagsterInstance.get() as instance:
    ensure_lm_pool(instance)'
# `dagster dev` in a process group of its own, its signal handlers reset first: a background job of
# a non-interactive shell starts with SIGINT ignored, and Dagster stops its webserver and daemon
# with SIGINT, so without the reset `./scripts/dev.sh &` could only be stopped with SIGKILL.
.venv/bin/python -c 'import os, signal, sys
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, signal.SIG_DFL)
os.setpgrp()
os.execv(sys.argv[1], sys.argv[1:])' .venv/bin/dagster dev -h 127.0.0.1 -p "${PORT:-3000}" -w workspace.yaml &
dagster=$!
stop() {
    kill -TERM -- "-$dagster" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 -- "-$dagster" 2>/dev/null || exit 0; sleep 0.5; done
    kill -KILL -- "-$dagster" 2>/dev/null || true  # the group's stragglers (code servers)
    exit 0
}
trap stop TERM INT HUP
wait "$dagster"
