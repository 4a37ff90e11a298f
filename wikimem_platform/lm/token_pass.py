"""One forward pass over texts that gives, per scored token, log p of the actual token and the
next-token distribution's mean and variance of log p: what every membership attack reads
(`mia.model_pass.token_stats`), for weights loaded here (`LoadedModel.token_logprobs`; a served
model's prompt log-probabilities give the first only).

Texts are encoded with `lm.encode` (start token first), sorted by length (longest first, so a
memory error shows at once) and run in right-padded batches of about `batch_tokens` tokens
(default lm.batch_size * 32, as the NLL engine). Log-probabilities are taken in float32 as
logit - logsumexp, the output projection applied in slices of rows (Gemma's 262k vocabulary).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from wikimem_platform.lm.batching import padded_batches
from wikimem_platform.lm.nll import _logits, LOGIT_ROWS, TOKENS_PER_SENTENCE

if TYPE_CHECKING:
    from wikimem_platform.lm.loading import LoadedModel


def token_logprobs(lm: LoadedModel, texts: Sequence[str], *, with_distribution: bool = True,
                   batch_tokens: int | None = None, progress: Callable[[int, int], None] | None = None,
                   ) -> list[tuple[np.ndarray, list[int] | np.ndarray, np.ndarray | None, np.ndarray | None]]:
    """Per text of `texts` (each run once: pass distinct texts): (log p of each token after the
    first, those tokens' ids, and with_distribution the mean and variance of log p under the full
    next-token distribution (min-k%++), else None, None)."""
    import torch

    distinct = list(texts)
    encoded = lm.encode(distinct) if distinct else []
    budget = batch_tokens or lm.batch_size * TOKENS_PER_SENTENCE
    results: dict[int, tuple] = {}
    done = 0
    with torch.inference_mode():
        for padded in padded_batches(encoded, batch_tokens=budget):
            batch, input_ids = padded.indices, padded.input_ids
            if padded.width < 2:
                for i in batch:
                    results[i] = (np.empty(0), np.empty(0, np.int64),
                                  np.empty(0) if with_distribution else None,
                                  np.empty(0) if with_distribution else None)
                continue
            hidden = lm.model.base_model(input_ids=input_ids.to(lm.device),
                                         attention_mask=padded.attention_mask.to(lm.device),
                                         use_cache=False).last_hidden_state
            # every scored position of the batch, flattened: row r predicts token j+1 from j
            lengths = [len(encoded[i]) - 1 for i in batch]
            rows_idx = torch.cat([torch.full((n,), r) for r, n in enumerate(lengths)])
            cols_idx = torch.cat([torch.arange(n) for n in lengths])
            flat_hidden = hidden[rows_idx.to(lm.device), cols_idx.to(lm.device)]
            targets = input_ids[rows_idx, cols_idx + 1].to(lm.device)
            picked, mus, vars_ = [], [], []
            for lo in range(0, len(targets), LOGIT_ROWS):
                logits = _logits(lm.model, flat_hidden[lo:lo + LOGIT_ROWS]).float()
                logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
                picked.append(logp.gather(-1, targets[lo:lo + LOGIT_ROWS, None]).squeeze(-1))
                if with_distribution:
                    p = logp.exp()
                    mu = (p * logp).sum(-1)
                    mus.append(mu)
                    vars_.append(((p * logp.square()).sum(-1) - mu.square()).clamp_min(0.0))
            splits = np.cumsum(lengths)[:-1]

            def per_row(parts):
                return np.split(torch.cat(parts).double().cpu().numpy(), splits)

            lp_rows = per_row(picked)
            mu_rows = per_row(mus) if with_distribution else [None] * len(batch)
            var_rows = per_row(vars_) if with_distribution else [None] * len(batch)
            for row, i in enumerate(batch):
                results[i] = (lp_rows[row], np.asarray(encoded[i][1:], dtype=np.int64), mu_rows[row], var_rows[row])
            done += len(batch)
            if progress is not None:
                progress(done, len(distinct))
    return [results[i] for i in range(len(distinct))]
