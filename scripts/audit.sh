#!/usr/bin/env bash
# The main job without the UI. With no argument: `wikimem demo` — register the shipped model and
# audit it on the embedded default (bundled Wikidata sample, SQLite instance in
# ${DAGSTER_HOME:-./.dagster_home}), writing the compliance report. With arguments: they are
# passed to `dagster asset materialize` (e.g. --select 'group:data').
set -euo pipefail
cd "$(dirname "$0")/.."
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}"
mkdir -p "$DAGSTER_HOME"
[ -f "$DAGSTER_HOME/dagster.yaml" ] || cp dagster.yaml "$DAGSTER_HOME/dagster.yaml"
if [ "$#" -eq 0 ]; then exec .venv/bin/wikimem demo; fi
exec .venv/bin/dagster asset materialize -m definitions "$@"
