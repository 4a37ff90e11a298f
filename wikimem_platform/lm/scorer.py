"""One interface for every model an audit scores: weights loaded here (`loading.LoadedModel`) and
a release served at prompt-logprobs, top-logprobs or generation access (`endpoint.EndpointModel`).

The audits (WikiMem ranking, CRM, MIA, EME, data-subject requests) take a `Scorer` and ask it
what its access level allows (`capabilities`, one table in `lm.access`) instead of testing which
kind of model they hold. `CachingScorer` puts a persistent sentence store in front of any scorer
(lm-evaluation-harness's `CachingLM`); `tests/support/fake_scorer.py` scripts one for tests.

Conventions every implementation keeps: an NLL is in nats over every token after the start
token (`encode`'s rule), `cache` arguments are sentence -> NLL dicts read first and filled in
(a continuation censored at top-logprobs access is kept negated: `censored`; the rule is
`lm.cache_rule`), and `progress`
is called as (done, total).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

# The scorers themselves: imported so that every caller's code version (`versions.source_version`
# follows imports) covers the code its scores come from, whichever access level it is run at.
from wikimem_platform.lm import endpoint, loading  # noqa: F401
from wikimem_platform.lm.access import Capabilities

Progress = Callable[[int, int], None]
# Per text: log p of each scored token, their ids, and the next-token distribution's mean and
# variance of log p at each (None where the access level gives no distribution).
TokenLogprobs = tuple[np.ndarray, list[int], "np.ndarray | None", "np.ndarray | None"]


class Scorer(Protocol):
    """A model as the audits use it. Attributes: `name`, `fingerprint` (what its scores are keyed
    by), `details` (for the run metadata), `tokenizer` and `start_token_ids` (the start-token rule),
    `access` (`lm.access`: weights, prompt-logprobs, top-logprobs or generation)."""

    name: str
    fingerprint: str
    details: dict[str, Any]
    tokenizer: Any
    start_token_ids: list[int]
    access: str

    @property
    def capabilities(self) -> Capabilities:
        """What this scorer's access level can and cannot give (`lm.access.CAPABILITIES`)."""
        ...

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, start token first."""
        ...

    def sentence_nlls(self, sentences: Sequence[str], *, cache: dict[str, float] | None = None,
                      progress: Progress | None = None, prefixes: Mapping[str, str] | None = None) -> np.ndarray:
        """The ranking's NLL of each sentence: the whole sentence's, or where
        `capabilities.reads_continuations` its NLL after `prefixes[sentence]`."""
        ...

    def score_sentences(self, sentences: Sequence[str], *, cache: dict[str, float] | None = None,
                        progress: Progress | None = None) -> np.ndarray:
        """Each whole sentence's NLL (`capabilities.scores_text`)."""
        ...

    def score_token_ids(self, token_ids: Sequence[Sequence[int]], *, progress: Progress | None = None) -> np.ndarray:
        """NLL of each token-id sequence, start token first (`capabilities.scores_token_ids`)."""
        ...

    def token_logprobs(self, texts: Sequence[str], *, with_distribution: bool = True, batch_tokens: int | None = None,
                       progress: Progress | None = None) -> list[TokenLogprobs]:
        """Per text, one pass: what every membership attack reads (`capabilities.scores_text`;
        the distribution where `capabilities.has_distribution` and asked)."""
        ...

    def complete_greedy(self, prompts: Sequence[str], max_new_tokens: int, *, batch_size: int | None = None,
                        progress: Progress | None = None, unpadded: bool = False) -> list[str]:
        """The greedy continuation of each prompt, new text only (`capabilities.generates`)."""
        ...

    def censored(self, sentences: Sequence[str], cache: Mapping[str, float]) -> np.ndarray:
        """Whether each sentence's continuation (in `cache`, as `sentence_nlls` left it) was censored."""
        ...

    def context_length(self) -> int | None:
        """The most tokens one sequence may have (None: not said)."""
        ...

    def rescoring_plan(self, settings: dict | None) -> tuple[str, Any]:
        """(the precision its scores are stated in, the float32 re-scoring config or None)."""
        ...

    def usage(self) -> dict[str, int]:
        """Requests and tokens sent so far (empty for weights loaded here)."""
        ...


class SentenceStore(Protocol):
    """Where sentence NLLs persist across runs (`wikimem.scoring.SentenceNllCache`)."""

    def get_many(self, sentences: Sequence[str]) -> dict[str, float]: ...

    def put_many(self, values: dict[str, float]) -> None: ...


class CachingScorer:
    """Any scorer behind a persistent sentence store: `sentence_nlls` reads the store for what the
    run's `cache` lacks, sends only the rest to the scorer and writes what came back; everything
    else is the scorer's own. persist_every: send the rest in chunks of this many sentences and
    write each chunk as soon as it is back (a served model: a run killed mid-shard re-sends at
    most one chunk; requests cost money and quota); None: one call, written after it (the local
    engine shares work across all the sentences of a call). `computed` counts the distinct
    sentences the scorer was asked for. store None: nothing persisted, only counted."""

    def __init__(self, inner: Scorer, store: SentenceStore | None, persist_every: int | None = None):
        self.inner, self.store, self.persist_every = inner, store, persist_every
        self.computed = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"CachingScorer({self.inner!r})"

    def sentence_nlls(self, sentences: Sequence[str], *, cache: dict[str, float] | None = None,
                      progress: Progress | None = None, prefixes: Mapping[str, str] | None = None) -> np.ndarray:
        sentences = list(sentences)
        cache = {} if cache is None else cache
        missing = [s for s in dict.fromkeys(sentences) if s not in cache]
        if missing and self.store is not None:
            cache.update(self.store.get_many(missing))
        todo = [s for s in missing if s not in cache]
        self.computed += len(todo)
        if todo and self.store is not None and self.persist_every:
            for start in range(0, len(todo), self.persist_every):
                chunk = todo[start:start + self.persist_every]
                self.inner.sentence_nlls(chunk, cache=cache, prefixes=prefixes)
                self.store.put_many({s: cache[s] for s in chunk})
                if progress is not None:
                    progress(start + len(chunk), len(todo))
        elif todo:
            self.inner.sentence_nlls(todo, cache=cache, progress=progress, prefixes=prefixes)
            if self.store is not None:
                self.store.put_many({s: cache[s] for s in todo})
        return self.inner.sentence_nlls(sentences, cache=cache, prefixes=prefixes)
