#!/usr/bin/env bash
# Start the platform: Dagster webserver + daemon on http://127.0.0.1:${PORT:-3000}, with a
# persistent instance in ${DAGSTER_HOME:-./.dagster_home} (runs, schedules, sensor state, data).
set -euo pipefail
cd "$(dirname "$0")/.."
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}"
mkdir -p "$DAGSTER_HOME"
[ -f "$DAGSTER_HOME/dagster.yaml" ] || cp dagster.yaml "$DAGSTER_HOME/dagster.yaml"
exec .venv/bin/dagster dev -h 127.0.0.1 -p "${PORT:-3000}" -w workspace.yaml
