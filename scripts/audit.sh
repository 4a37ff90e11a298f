#!/usr/bin/env bash
# The main job on the embedded default: materialize the audit (bundled Wikidata sample, SQLite
# instance in ${DAGSTER_HOME:-./.dagster_home}) without starting the UI. Extra arguments are
# passed to `dagster asset materialize` (e.g. --select 'group:data').
set -euo pipefail
cd "$(dirname "$0")/.."
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}"
mkdir -p "$DAGSTER_HOME"
[ -f "$DAGSTER_HOME/dagster.yaml" ] || cp dagster.yaml "$DAGSTER_HOME/dagster.yaml"
if [ "$#" -eq 0 ]; then set -- --select 'group:data'; fi
exec .venv/bin/dagster asset materialize -f definitions.py "$@"
