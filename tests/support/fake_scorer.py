"""A `Scorer` (`wikimem_platform.lm.scorer`) with scripted NLLs, at any access level: the audits'
logic tested without a model (lm-evaluation-harness's `DummyLM`).

Tokens are the words of a text (split on spaces), numbered as first seen, after one start token
(id 0); `tokenizer` does the same without the start token. A sentence's NLL is `nlls[sentence]`
(a dict, or a function of the sentence); at top-logprobs access the script is read as the NLL of
the sentence's continuation after its prefix (the prefix is shared within a wording and name, so
ranks are those of whole sentences), and a sentence in `censored` is kept negated in the cache,
as `EndpointModel.score_continuations` keeps it. Per-token log-probabilities spread a text's NLL
evenly over its tokens; at weights access the distribution's mean is 1 nat above each token's
log p with variance 1 (min-k%++ = 1 per token). What an access level cannot do is refused with
the served model's own message (`EndpointModel._require`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from wikimem_platform.lm.cache_rule import require_prefixes, through_cache
from wikimem_platform.lm.access import capabilities_of, GENERATION, PROMPT_LOGPROBS, TOP_LOGPROBS, WEIGHTS
from wikimem_platform.lm.endpoint import Censoring, EndpointError

FAKE_URL = "http://fake.invalid"


class FakeTokenizer:
    """Words as tokens: what `mia.model_pass` asks of a tokenizer (`tokenizer(texts, add_special_tokens=False)`, len)."""

    def __init__(self):
        self.vocabulary: dict[str, int] = {"<s>": 0}

    def ids(self, text: str) -> list[int]:
        return [self.vocabulary.setdefault(word, len(self.vocabulary)) for word in text.split()]

    def decode(self, ids: Sequence[int]) -> str:
        words = {i: w for w, i in self.vocabulary.items()}
        return " ".join(words[int(i)] for i in ids if int(i) != 0)

    def __call__(self, texts: Sequence[str], add_special_tokens: bool = True) -> dict[str, list[list[int]]]:
        return {"input_ids": [([0] if add_special_tokens else []) + self.ids(t) for t in texts]}

    def __len__(self) -> int:
        return len(self.vocabulary)


class FakeScorer:
    """Scripted NLLs behind the Scorer protocol. completions: prompt -> greedy completion (a dict
    or a function; "" where not given). calls: every batch of sentences the scorer was asked to
    score (a cache in front of it is seen here as what it did not send)."""

    def __init__(self, nlls: Mapping[str, float] | Callable[[str], float], access: str = WEIGHTS, *,
                 name: str = "fake", completions: Mapping[str, str] | Callable[[str], str] | None = None,
                 censored: Sequence[str] = (), context_length: int | None = None, prompt_mode: str = "token-ids",
                 top_k: int = 20):
        capabilities_of(access)  # an unknown level is refused here
        self._nll = nlls if callable(nlls) else nlls.__getitem__
        self._completion = completions if callable(completions) else (completions or {}).get
        self.access, self.name, self.prompt_mode = access, name, prompt_mode
        self.tokenizer = FakeTokenizer()
        self.start_token_ids = [0]
        self.fingerprint = f"fake:{name}:{access}"
        self.details = {"access": access, **({"top_k": top_k} if access == TOP_LOGPROBS else {})}
        self.censoring = Censoring()
        self.censored_sentences = set(censored)
        self._context_length = context_length
        self.calls: list[list[str]] = []
        self._usage = {"requests": 0, "retries": 0, "prompts": 0, "prompt_tokens": 0, "completion_tokens": 0}

    def __repr__(self) -> str:
        return f"FakeScorer({self.name!r}, {self.access})"

    @property
    def capabilities(self):
        can = capabilities_of(self.access)  # a prompt mode is a server's: weights take token ids
        return replace(can, scores_token_ids=False) if can.served and self.prompt_mode != "token-ids" else can

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of strings, not one string")
        return [[0, *self.tokenizer.ids(t)] for t in texts]

    def _require(self, access: str) -> None:
        if self.access != access and self.access != WEIGHTS:
            raise EndpointError(FAKE_URL, f"registered with access {self.access!r}: {access} is not available")

    def _sent(self, texts: Sequence[str]) -> None:
        self.calls.append(list(texts))
        if self.capabilities.served:
            self._usage["requests"] += 1
            self._usage["prompts"] += len(texts)
            self._usage["prompt_tokens"] += sum(map(len, self.encode(list(texts))))

    # ------------------------------------------------------------------ scores

    def sentence_nlls(self, sentences, *, cache=None, progress=None, prefixes=None) -> np.ndarray:
        if self.capabilities.reads_continuations:
            if prefixes is None:
                raise ValueError(f"{self.name} is served at top-logprobs access: its sentences need their prefixes")
            return self.score_continuations(sentences, prefixes, cache=cache, progress=progress)
        return self.score_sentences(sentences, cache=cache, progress=progress)

    def score_sentences(self, sentences, *, cache=None, progress=None, **_options) -> np.ndarray:
        def score(todo: list[str]) -> list[float]:
            self._require(PROMPT_LOGPROBS)
            self._sent(todo)
            if progress is not None:
                progress(len(todo), len(todo))
            return [float(self._nll(s)) for s in todo]

        return through_cache(sentences, cache, score)

    def score_continuations(self, sentences, prefixes, *, cache=None, progress=None) -> np.ndarray:
        self._require(TOP_LOGPROBS)

        def score(todo: list[str]) -> list[float]:
            require_prefixes(todo, prefixes)
            self._sent(todo)
            censored = [s in self.censored_sentences for s in todo]
            self.censoring.sentences += len(todo)
            self.censoring.censored += sum(censored)
            if progress is not None:
                progress(len(todo), len(todo))
            return [-float(self._nll(s)) if c else float(self._nll(s)) for s, c in zip(todo, censored)]

        return through_cache(sentences, cache, score, censorable=True)

    @staticmethod
    def censored(sentences, cache) -> np.ndarray:
        return np.array([cache[s] < 0 for s in sentences], dtype=bool)

    def score_token_ids(self, token_ids, *, progress=None, **_options) -> np.ndarray:
        if not self.capabilities.scores_token_ids:
            raise EndpointError(FAKE_URL, f"registered with access {self.access!r} (prompt mode {self.prompt_mode!r}): "
                                          "token-id sequences cannot be scored")
        texts = [self.tokenizer.decode(ids) for ids in token_ids]
        self._sent(texts)
        return np.array([float(self._nll(t)) if len(ids) > 1 else 0.0 for t, ids in zip(texts, token_ids)])

    def token_logprobs(self, texts, *, with_distribution=True, batch_tokens=None, progress=None) -> list:
        self._require(PROMPT_LOGPROBS)
        texts = list(texts)
        self._sent(texts)
        out = []
        distribution = with_distribution and self.capabilities.has_distribution
        for text, ids in zip(texts, self.encode(texts)):
            n = len(ids) - 1
            logprobs = np.full(n, -float(self._nll(text)) / n) if n else np.empty(0)
            out.append((logprobs, ids[1:], logprobs - 1.0 if distribution else None,
                        np.ones(n) if distribution else None))
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def complete_greedy(self, prompts, max_new_tokens, *, batch_size=None, progress=None, unpadded=False) -> list[str]:
        prompts = list(prompts)
        self._sent(prompts)
        outputs = [self._completion(p) or "" for p in prompts]
        if progress is not None:
            progress(len(outputs), len(outputs))
        return outputs

    # ------------------------------------------------------------------ the rest of the protocol

    def context_length(self) -> int | None:
        return self._context_length

    def rescoring_plan(self, settings):
        return ("float32", None) if self.access == WEIGHTS else (f"endpoint:{self.access}", None)

    def usage(self) -> dict[str, int]:
        return dict(self._usage) if self.capabilities.served else {}


__all__ = ["FakeScorer", "FakeTokenizer", "GENERATION", "PROMPT_LOGPROBS", "TOP_LOGPROBS", "WEIGHTS"]
