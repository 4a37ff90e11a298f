#!/usr/bin/env bash
# The demo's reports and two requests' answers made by CHECKOUT's code, into OUT, to compare a
# refactor's output with the code before it (scripts/compare_snapshots.py BEFORE AFTER):
#   scripts/output_snapshot.sh CHECKOUT OUT    (about 10 min on 2 cores; needs this checkout's .venv)
set -euo pipefail
umask 077  # the instance refuses to start on group- or world-readable folders (security/files.py)
CHECKOUT=$(realpath "$1"); OUT=$(realpath -m "$2")
rm -rf "$OUT"; mkdir -p "$OUT/home"
export PYTHONPATH="$CHECKOUT" DAGSTER_HOME="$OUT/home" WIKIMEM_REGISTRY_URL="sqlite:///$OUT/registry.db"
PY="$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python"
cd "$CHECKOUT"
$PY -c "import wikimem_platform, sys; print(wikimem_platform.__file__)"
# The command line of CHECKOUT: the package cli/ since issue 62, wikimem_platform/cli.py before it.
if [ -f cli/__main__.py ]; then WIKIMEM=(-m cli); else WIKIMEM=(-m wikimem_platform.cli); fi
$PY "${WIKIMEM[@]}" --home "$OUT/home" demo > "$OUT/demo.log" 2>&1
cat > "$OUT/facts.yaml" <<'YAML'
name: Ilse Marwitz
aliases: [I. Marwitz]
facts:
  occupation: [journalist, translator]
  P27: {label: Germany, qid: Q183}
  place of birth: Tübingen
YAML
$PY "${WIKIMEM[@]}" controller set --name "Musterfirma KI GmbH" --address "Beispielweg 5, 10115 Berlin" \
  --contact datenschutz@musterfirma.example --dpo "Dr. Lena Vogt" --supervisory-authority "BlnBDI" >> "$OUT/demo.log" 2>&1
$PY "${WIKIMEM[@]}" request add --qid "Q42" --kind access >> "$OUT/demo.log" 2>&1 || true
$PY "${WIKIMEM[@]}" request add --facts "$OUT/facts.yaml" --kind erasure >> "$OUT/demo.log" 2>&1
$PY - >> "$OUT/demo.log" 2>&1 <<'PYEOF'
import json, os
from dagster import DagsterInstance
from sensors.materialize import materialize_on
from wikimem_platform.subject_requests import intake
store = intake.RequestStore(os.environ["WIKIMEM_REGISTRY_URL"])
with DagsterInstance.get() as instance:
    for request in store.list():
        instance.add_dynamic_partitions("requests", [request.id])
        config = {"ops": {"request_canaries": {"config": {"properties": ["P106", "P27"], "n_controls": 19}}}}
        outcome = materialize_on(instance, "group:requests", request.id, partition_key=request.id, run_config=config)
        print(request.id, outcome.success, outcome.failures)
PYEOF
find "$OUT/home/storage" -name "*.html" -o -name "answer.json" -o -name "*.pdf" -o -name "forget_set.jsonl" | sort > "$OUT/files.txt"
