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

The model is split by job: `endpoint_client` (the bounded HTTP client, its retry policy and usage
counts, payloads and the parsing of answers), `endpoint_probe` (the registration probe and its
report), and this module (the configuration the registry stores and `EndpointModel`, the
`lm.scorer.Scorer` of a served release at each access level; what a level can and cannot do is
`lm.access`'s table). The names of all three are importable from here. Never imports dagster or
torch (a tokenizer is loaded from a local directory through transformers, lazily).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from wikimem_platform.lm.access import (
    ACCESS_LEVELS,
    Capabilities,
    capabilities_of,
    GENERATION,
    NO_TEXT_PROBABILITY,
    PROMPT_LOGPROBS,
    RANKING_ACCESS,
    TOP_LOGPROBS,
    WEIGHTS,
)
from wikimem_platform.lm.cache_rule import require_prefixes, through_cache
from wikimem_platform.lm.endpoint_client import (
    common_prefix_length,
    DEFAULT_MAX_RESPONSE_BYTES,
    EndpointClient,
    EndpointError,
    generated_count,
    kv_cache_tokens,
    MAX_REDIRECTS,
    MAX_RESPONSE_BYTES_LIMIT,
    MAX_SERVER_CONCURRENCY,
    MAX_TIMEOUT_SECONDS,
    ordered_choices,
    prompt_logprobs,
    prompt_nll,
    RETRY_STATUSES,
    RetryPolicy,
    TOKEN_ID_KEY,
    top_k_options,
    top_logprobs,
    Usage,
)
from wikimem_platform.lm.endpoint_probe import (
    check_probe,
    EndpointProbe,
    ORDER_CONTEXT,
    ORDER_CONTEXT_REPEATS,
    ORDER_ENDINGS,
    ORDER_FIX,
    ORDER_TOLERANCE,
    PROBE_NLL_TOLERANCE,
    PROBE_SENTENCE,
    ProbeReport,
    PROMPT_MODES,
)
from wikimem_platform.lm.loading import encode_texts, start_token_ids_for
from wikimem_platform.security.urls import redact_url

__all__ = [  # the names callers import from here, wherever they are defined
    "ACCESS_LEVELS", "access_of", "Capabilities", "Censoring", "check_probe", "common_prefix_length",
    "DEFAULT_CONCURRENCY", "DEFAULT_MAX_RESPONSE_BYTES", "DEFAULT_TOP_K", "EndpointClient", "EndpointConfig",
    "EndpointError", "EndpointModel", "GENERATION", "kv_cache_tokens", "MAX_REDIRECTS", "MAX_RESPONSE_BYTES_LIMIT",
    "MAX_SERVER_CONCURRENCY", "MAX_TIMEOUT_SECONDS", "NO_TEXT_PROBABILITY", "ORDER_CONTEXT", "ORDER_CONTEXT_REPEATS",
    "ORDER_ENDINGS", "ORDER_FIX", "ORDER_TOLERANCE", "ordered_choices", "PROBE_NLL_TOLERANCE", "PROBE_SENTENCE",
    "ProbeReport", "PROMPT_LOGPROBS", "prompt_logprobs", "PROMPT_MODES", "prompt_nll", "RANKING_ACCESS",
    "RETRY_STATUSES", "RetryPolicy", "scores_token_ids", "TOKEN_ID_KEY", "token_id_nlls", "TOKENS_PER_PROMPT",
    "TOP_LOGPROBS", "top_k_options", "top_logprobs", "TOP_NODES_KEPT", "Usage", "WEIGHTS",
]

DEFAULT_TOP_K = 20  # top log-probabilities asked per position: vLLM's default max_logprobs and OpenAI's cap
TOP_NODES_KEPT = 200_000  # top-logprobs answers an EndpointModel keeps (about 20 floats each)
ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
# Requests in flight when neither the configuration nor the server says (`server_concurrency`).
DEFAULT_CONCURRENCY = 8
TOKENS_PER_PROMPT = 32  # a canary sentence's tokens, about: what one prompt holds of a server's KV cache

Progress = Callable[[int, int], None]


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


@dataclass
class Censoring:
    """What top-logprobs continuations saw, for the run metadata and the answer's annex."""

    sentences: int = 0  # continuations read
    censored: int = 0  # of them, stopped at a token outside the server's top k
    tokens_read: int = 0  # continuation tokens found in a top k
    nodes_asked: int = 0  # distinct prefixes whose top k was asked (one prompt each)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class EndpointModel(EndpointProbe):
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

    # ---------------------------------------------------------------- the Scorer protocol (lm.scorer)

    @property
    def capabilities(self) -> Capabilities:
        """What this access level can give (`lm.access`'s table); a server that takes text prompts
        only cannot be sent a token-id sequence."""
        can = capabilities_of(self.access)
        if self.config.prompt_mode != "token-ids":
            can = replace(can, scores_token_ids=False)
        return can

    def usage(self) -> dict[str, int]:
        """What was sent to the server so far (requests, retries, prompts, tokens)."""
        return self.client.usage.as_dict()

    def rescoring_plan(self, settings: dict | None) -> tuple[str, None]:
        """The server's precision is its own: stated, never re-scored here."""
        return f"endpoint:{self.access}", None

    def sentence_nlls(self, sentences: Sequence[str], *, cache: dict[str, float] | None = None,
                      progress: Progress | None = None, prefixes: Mapping[str, str] | None = None) -> np.ndarray:
        """The ranking's NLLs: each whole sentence's through the prompt log-probabilities, or at
        top-logprobs access its NLL after `prefixes[sentence]` (`score_continuations`)."""
        if self.capabilities.reads_continuations:
            if prefixes is None:
                raise ValueError(f"{self.name} is served at top-logprobs access: its sentences need their prefixes")
            return self.score_continuations(sentences, prefixes, cache=cache, progress=progress)
        return self.score_sentences(sentences, cache=cache, progress=progress)

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
        """`nll.score_sentences` through the server: same cache rule (`lm.cache_rule`), same NLLs."""
        def score(todo: list[str]) -> np.ndarray:
            self._require(PROMPT_LOGPROBS)
            ids = self.encode(todo)
            return self._score(self._sent_as(todo, ids), [len(i) for i in ids], progress)

        return through_cache(sentences, cache, score)

    def score_texts(self, texts: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        """NLLs of TEXT prompts (the server tokenizes) and how many tokens it made of each: what
        the probe compares; never used for scoring when token-id prompts are accepted."""
        self._require(PROMPT_LOGPROBS)
        counts: list[int] = []
        nll = []
        for choice in self._completion_batches(list(texts), echo=True, logprobs=0, max_tokens=1):
            values = choice.get("logprobs", {}).get("token_logprobs") if isinstance(choice.get("logprobs"), dict) else None
            n_prompt = len(values) - generated_count(choice) if isinstance(values, list) else 0
            counts.append(n_prompt)
            nll.append(prompt_nll(choice, n_prompt, self.config.url))
        return np.array(nll, dtype=np.float64), counts

    def token_logprobs(self, texts: Sequence[str], progress: Progress | None = None, *, with_distribution: bool = True,
                       batch_tokens: int | None = None) -> list[tuple[np.ndarray, list[int], None, None]]:
        """Per text: log p of each token after the first (start-token rule, as `encode`), those
        tokens' ids, and no distribution (None, None: a server gives the tokens' own log p only),
        through the server's prompt log-probabilities (token ids, or aligned text)."""
        self._require(PROMPT_LOGPROBS)
        texts = list(texts)
        ids = self.encode(texts)
        values = self._prompt_logprobs(self._sent_as(texts, ids), [len(i) for i in ids], progress)
        return [(v, list(i[1:]), None, None) for v, i in zip(values, ids)]

    # ---------------------------------------------------------------- top log-probabilities

    def score_continuations(self, sentences: Sequence[str], prefixes: Mapping[str, str], *,
                            cache: dict[str, float] | None = None, progress: Progress | None = None) -> np.ndarray:
        """top-logprobs: each sentence's NLL after the tokens it shares with `prefixes[sentence]`
        (the text before its value), read from the server's top k (`continuation_nlls`); same
        cache semantics as `score_sentences`. Within one wording and name every candidate has the
        same prefix, so ranks and score differences are those of the whole sentence's NLL."""
        self._require(TOP_LOGPROBS)

        def score(todo: list[str]) -> np.ndarray:
            require_prefixes(todo, prefixes)
            ids = self.encode(todo)
            heads = self.encode([prefixes[s] for s in todo])
            splits = [max(1, common_prefix_length(a, b)) for a, b in zip(ids, heads)]
            values, censored = self.continuation_nlls(ids, splits, progress)
            return np.where(censored, -values, values)  # the cache keeps a censored NLL negated

        return through_cache(sentences, cache, score, censorable=True)

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
            if echoed and echoed - generated_count(choice) != n:
                kind = "text prompt tokenized locally into" if isinstance(distinct[i], str) else "token-id prompt of"
                raise EndpointError(url, f"the server echoed {echoed - generated_count(choice)} prompt tokens for a "
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

    def complete_greedy(self, prompts: Sequence[str], max_new_tokens: int, *, batch_size: int | None = None,
                        progress: Progress | None = None, unpadded: bool = False) -> list[str]:
        """Greedy continuation (temperature 0) of each prompt, new text only; prompts as token ids
        with the start-token rule when a local tokenizer is known, else as text. The server batches
        and pads itself: `batch_size` and `unpadded` do not apply."""
        prompts = list(prompts)
        sent = prompts if self.tokenizer is None else self._sent_as(prompts, self.encode(prompts))
        choices = self._completion_batches(sent, max_tokens=int(max_new_tokens), temperature=0)
        texts = [c.get("text") for c in choices]
        if any(not isinstance(t, str) for t in texts):
            raise EndpointError(self.config.url, "malformed completions response: a choice without text")
        if progress is not None:
            progress(len(texts), len(texts))
        return texts

    # ---------------------------------------------------------------- registration probe

    def _require(self, access: str) -> None:
        if self.access != access:
            raise EndpointError(self.config.url, f"registered with access {self.access!r}: {access} is not available")


def access_of(model: Any) -> str:
    """The access a model's results were obtained with (`Scorer.access`): the endpoint's level for
    a served model, WEIGHTS for one loaded here."""
    return model.access


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
    """Whether `token_id_nlls` works for lm (`Capabilities.scores_token_ids`): a model loaded here,
    or a served one at prompt-logprobs access that takes token-id prompts (top-logprobs gives no
    whole-sequence NLL)."""
    return lm.capabilities.scores_token_ids


def token_id_nlls(lm: Any, token_ids: Sequence[Sequence[int]]) -> np.ndarray:
    """NLL of token-id sequences (start token first, never scored) on any scorer
    (`Scorer.score_token_ids`: the prefix-tree engine here, a served model's prompt
    log-probabilities there): the seam the code that builds its own token ids (ReCaLL prefixes,
    CRM reconstruction) scores through."""
    return lm.score_token_ids(token_ids)
