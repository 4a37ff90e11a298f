"""Generation for audits that ask whether the model *says* a fact (CRM, EME, requests).

- Greedy decoding exactly as the paper's code (xiaoyuluoit97/pii_crm): no sampling, one beam,
  15 new tokens; prompts batched with LEFT padding (a peer pitfall: right-padded batches make
  the model continue after pad tokens). The start-token rule is `LoadedModel.encode`'s.
- Hit: a target (or one of its aliases) occurs in the output. Matching is on normalized text
  (`labels.fold`: NFKC, casefold, accents of Latin and Greek letters ignored, words split
  on non-word characters: "Krakow" names "Kraków") and at word boundaries, so "male" is not found in "female" nor "1" in "1954"; phone targets compare
  digits only (the peer's rule).
- Reconstruction log-likelihood log p(target | prompt) comes from the shared-prefix NLL engine
  (`nll.score_token_ids`): NLL(prompt tokens) - NLL(prompt + target tokens). The split is made
  on the token ids of the whole text (lm-eval's rule: the text is tokenized whole and cut where
  the prompt's tokens end), never by tokenizing the target alone (a peer pitfall: BPE merges
  across the boundary). If a merge crosses the boundary, the cut falls at the longest common
  token prefix and `boundary_exact` is False.
- The paradigms' prompts are `crm.examples`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from wikimem_platform.labels import fold, normalize_label
from wikimem_platform.lm.batching import padded_batches
from wikimem_platform.vocabulary import MAX_NEW_TOKENS

if TYPE_CHECKING:  # LoadedModel imports this module where it generates (no cycle at run time)
    from wikimem_platform.lm.loading import LoadedModel
    from wikimem_platform.lm.scorer import Scorer

GENERATION_AUTO_BATCH = 32  # prompts per generate call when the batch size is automatic


# --------------------------------------------------------------------------- decoding

def greedy_generate(lm: Scorer, prompts: Sequence[str], max_new_tokens: int = MAX_NEW_TOKENS,
                    batch_size: int | None = None,
                    progress: Callable[[int, int], None] | None = None,
                    unpadded: bool = False) -> list[str]:
    """Greedy continuation (do_sample=False, one beam) of each prompt, new text only.

    Prompts are sorted by token length and batched with left padding; the output is cut at the
    first end-of-sequence token and decoded without special tokens. `unpadded`: batch only
    prompts of the same token length, for a model that ignores position ids (peft's prompt and
    p-tuning wrappers drop them, so a left-padded row would start at the wrong position).
    A release served behind an endpoint completes on its server (`EndpointModel.complete_greedy`:
    temperature 0, token-id prompts with the same start-token rule; the server batches and pads
    itself, so `batch_size` and `unpadded` do not apply): the same text as the local model.
    Any scorer completes through its own `complete_greedy` (weights loaded here: `local_greedy`).
    """
    return lm.complete_greedy(prompts, max_new_tokens, batch_size=batch_size, progress=progress, unpadded=unpadded)


def local_greedy(lm: LoadedModel, prompts: Sequence[str], max_new_tokens: int = MAX_NEW_TOKENS,
                 batch_size: int | None = None, progress: Callable[[int, int], None] | None = None,
                 unpadded: bool = False) -> list[str]:
    """`greedy_generate` on weights loaded here (`LoadedModel.complete_greedy`)."""
    return _generate(lm, prompts, max_new_tokens, batch_size, progress, unpadded, sampling=None)


def sample_generate(lm: LoadedModel, prompts: Sequence[str], n_samples: int, max_new_tokens: int = MAX_NEW_TOKENS,
                    temperature: float = 1.0, top_k: int = 50, seed: int = 0,
                    batch_size: int | None = None, progress: Callable[[int, int], None] | None = None) -> list[list[str]]:
    """`n_samples` sampled continuations of each prompt (temperature, top-k), seeded: the same
    batching as `greedy_generate`; one list of new texts per prompt."""
    import torch

    torch.manual_seed(seed)
    repeated = [prompt for prompt in prompts for _ in range(n_samples)]
    flat = _generate(lm, repeated, max_new_tokens, batch_size, progress, False,
                     sampling={"do_sample": True, "temperature": temperature, "top_k": top_k, "top_p": None})
    return [flat[i * n_samples:(i + 1) * n_samples] for i in range(len(prompts))]


def _generate(lm: LoadedModel, prompts: Sequence[str], max_new_tokens: int, batch_size: int | None,
              progress: Callable[[int, int], None] | None, unpadded: bool, sampling: dict | None) -> list[str]:
    import torch

    prompts = list(prompts)
    if not prompts:
        return []
    encoded = lm.encode(prompts)
    tokenizer = lm.tokenizer
    eos_ids = _eos_ids(lm)
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = eos_ids[0] if eos_ids else 0
    batch_size = batch_size or generation_batch_size(lm)
    outputs: list[str] = [""] * len(prompts)
    done = 0
    if unpadded:
        by_length: dict[int, list[int]] = {}
        for i, ids in enumerate(encoded):
            by_length.setdefault(len(ids), []).append(i)
        groups = list(by_length.values())
    else:
        groups = [list(range(len(encoded)))]
    batches = ((group, batch) for group in groups for batch in padded_batches(
        [encoded[i] for i in group], batch_size=batch_size, pad_id=pad_id, left_pad=True))
    with torch.inference_mode():
        for group, batch in batches:
            generated = lm.model.generate(
                input_ids=batch.input_ids.to(lm.device), attention_mask=batch.attention_mask.to(lm.device),
                max_new_tokens=max_new_tokens, num_beams=1,
                **(sampling or {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}),
                pad_token_id=pad_id, eos_token_id=eos_ids or None,
            )
            for row, i in enumerate(batch.indices):
                new = generated[row, batch.width:].tolist()
                cut = next((j for j, t in enumerate(new) if t in eos_ids), len(new))
                outputs[group[i]] = tokenizer.decode(new[:cut], skip_special_tokens=True)
            done += len(batch.indices)
            if progress is not None:
                progress(done, len(prompts))
    return outputs


def generation_batch_size(lm: LoadedModel) -> int:
    """Prompts per `generate` call: the batch size the model was loaded with when it was given
    explicitly (the scoring resource's `batch_size`), else the automatic one capped at
    GENERATION_AUTO_BATCH (left-padded rows decode in lockstep: a longer batch waits on its
    longest continuation)."""
    if lm.details.get("batch_size_requested", "auto") != "auto":
        return lm.batch_size
    return max(1, min(lm.batch_size, GENERATION_AUTO_BATCH))


def _eos_ids(lm: LoadedModel) -> list[int]:
    """Every id the model's generation config or tokenizer treats as end of sequence."""
    ids = getattr(getattr(lm.model, "generation_config", None), "eos_token_id", None)
    ids = [ids] if isinstance(ids, int) else list(ids or [])
    if lm.tokenizer.eos_token_id is not None:
        ids.append(lm.tokenizer.eos_token_id)
    return list(dict.fromkeys(int(i) for i in ids))


# --------------------------------------------------------------------------- hits

def _digits(text: str) -> str:
    return re.sub(r"\D", "", normalize_label(text))


def substring_hit(output: str, targets: Sequence[str] | str, kind: str = "text") -> bool:
    """Whether some target occurs in the output (`labels.fold`, at word boundaries; phone: digits).

    Empty targets (nothing left after normalization) never hit.
    """
    if isinstance(targets, str):
        targets = [targets]
    if kind == "phone":
        out = _digits(output)
        return any(t and t in out for t in map(_digits, targets))
    out = f" {fold(output)} "
    return any(t and f" {t} " in out for t in map(fold, targets))


# --------------------------------------------------------------------------- reconstruction

def reconstruction_loglik(lm: Scorer, prompts: Sequence[str], continuations: Sequence[str],
                          ) -> pd.DataFrame:
    """log p(continuation | prompt) for each pair, from the NLL engine (one call for all).

    Columns: recon_ll (nats, <= 0), recon_tokens (tokens after the cut), boundary_exact (the
    prompt's tokens are a prefix of the whole text's tokens, so the cut is exact).
    """
    prompts, continuations = list(prompts), list(continuations)
    if len(prompts) != len(continuations):
        raise ValueError("prompts and continuations differ in length")
    if not prompts:
        return pd.DataFrame({"recon_ll": [], "recon_tokens": [], "boundary_exact": []})
    whole = lm.encode([p + c for p, c in zip(prompts, continuations)])
    context = lm.encode(prompts)
    cuts = [prompt_cut(w, c) for w, c in zip(whole, context)]
    nll = lm.score_token_ids([*whole, *[w[:cut] for w, cut in zip(whole, cuts)]])
    n = len(prompts)
    return pd.DataFrame({
        "recon_ll": nll[n:] - nll[:n],
        "recon_tokens": [len(w) - cut for w, cut in zip(whole, cuts)],
        "boundary_exact": [cut == len(c) for c, cut in zip(context, cuts)],
    })


def prompt_cut(a: Sequence[int], b: Sequence[int]) -> int:
    """Where the continuation starts in the whole text's ids `a`: after the longest prefix shared
    with the prompt's ids `b` (never before the first token)."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return max(i, 1)  # the start token is always shared and never scored


