#!/usr/bin/env bash
# Start the platform: the Dagster daemon and the UI behind sign-in (`python -m webserver`, never a
# bare `dagster dev`/`dagster-webserver`) on http://127.0.0.1:${PORT:-3000}, with a persistent
# instance in ${DAGSTER_HOME:-./.dagster_home} (runs, schedules, sensor state, data).
# Sign-in is on; add users with `.venv/bin/wikimem users add NAME --role admin`.
# WIKIMEM_DEV_NO_AUTH=1 starts the UI without sign-in (loopback only, local development).
# Stops on SIGTERM (and SIGINT where the shell lets it through), with every process it started.
set -euo pipefail
cd "$(dirname "$0")/.."
# Files only the service can read (folders 0700, files 0600): the daemon, the UI and every run they
# start inherit it; 027 where a deployment shares a group on purpose (WIKIMEM_ALLOW_GROUP_ACCESS=1).
if [ "${WIKIMEM_ALLOW_GROUP_ACCESS:-}" = "1" ]; then umask 027; else umask 077; fi
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}"
mkdir -p "$DAGSTER_HOME"
[ -f "$DAGSTER_HOME/dagster.yaml" ] || cp dagster.yaml "$DAGSTER_HOME/dagster.yaml"
# The model pool gets its limit before any run is queued (resources/placement.py: ensure_lm_pool).
.venv/bin/python -c 'from dagster import DagsterInstance
from resources.placement import ensure_lm_pool
with DagsterInstance.get() as instance:
    ensure_lm_pool(instance)'
auth=()
if [ "${WIKIMEM_DEV_NO_AUTH:-}" = "1" ]; then
    echo "WARNING: WIKIMEM_DEV_NO_AUTH=1: the UI starts WITHOUT SIGN-IN (anyone on this machine can use it)" >&2
    auth=(--no-auth)
fi
# The daemon and the UI in one process group of their own, signal handlers reset first: a background
# job of a non-interactive shell starts with SIGINT ignored, and Dagster stops with SIGINT, so without
# the reset `./scripts/dev.sh &` could only be stopped with SIGKILL. The group's shell forwards
# SIGTERM to both and waits for them.
.venv/bin/python -c 'import os, signal, sys
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, signal.SIG_DFL)
os.setpgrp()
os.execv(sys.argv[1], sys.argv[1:])' /bin/bash -c '
.venv/bin/dagster-daemon run -w workspace.yaml & daemon=$!
.venv/bin/python -m webserver -h 127.0.0.1 -p "$1" -w workspace.yaml "${@:2}" & web=$!
trap "kill -TERM $daemon $web 2>/dev/null" TERM INT HUP
wait $web; kill -TERM $daemon 2>/dev/null; wait' dev "${PORT:-3000}" "${auth[@]}" &
dagster=$!
stop() {
    kill -TERM -- "-$dagster" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 -- "-$dagster" 2>/dev/null || exit 0; sleep 0.5; done
    kill -KILL -- "-$dagster" 2>/dev/null || true  # the group's stragglers (code servers)
    exit 0
}
trap stop TERM INT HUP
wait "$dagster"
