"""Membership-inference attacks as math on per-token statistics (CRM §3.3, §4.4; mimir's attacks).

The shared model pass (`mia.model_pass.token_stats`) fills a `TokenStats` per text; every attack
here reads it and nothing else, so the attacks are testable without a model.
One sign convention everywhere: HIGHER score = MORE LIKELY A MEMBER. (mimir's attacks return
loss-like values where lower means member and flip the sign when computing the ROC; a peer bug
returned the wrong sign for one attack. Here no attack needs a flip.)

Definitions (mimir = iamgroot42/mimir, mimir/attacks/*.py, read for this module):
- loss       = -mean NLL = mean token log-prob (mimir LOSS: get_ll = -mean(log p), negated).
- zlib       = -mean NLL / len(zlib.compress(text.encode("utf-8"))). mimir divides the *mean*
               NLL (its `loss`, Carlini et al.'s log-perplexity) by the zlib length, not the
               total NLL; we follow mimir, negated.
- min_k      = mean of the lowest k% token log-probs (k = 0.2); mimir returns its negation.
               The count is int(n * k) as in mimir, but at least 1 (mimir would average an empty
               list, i.e. NaN, for texts under 1/k tokens; short PII texts are common here).
- min_k_pp   = min-k% over (log p_t - mu_t) / sqrt(var_t), mu_t = sum_v p log p,
               var_t = sum_v p (log p)^2 - mu_t^2 under the model's next-token distribution
               (mimir min_k_plus_plus; negated). Positions with var_t = 0 contribute 0.
- reference  = reference-model mean NLL - target-model mean NLL (mimir: ref_loss - loss).
- neighbourhood = mean over neighbours of their mean NLL - the text's mean NLL
               (mimir: loss - mean neighbour loss, negated); `neighbourhood_pii` the same
               with PII-aware neighbours (names and values swapped, CRM App. C.1).
- zlib_total = -(total NLL in bits) / (zlib-compressed length in bits): the model's code length
               against zlib's for the whole text (the mean-NLL zlib above divides a per-token
               figure by a whole-text one).
- lowercase  = mean NLL of the lowercased text - mean NLL of the text (Carlini et al. 2021's
               perplexity ratio, in log space): a memorized text loses more when its casing goes.
- recall     = ReCaLL (Xie et al. 2024; ruoyuxie/recall's run.py): LL(x | P) / LL(x) with P a
               prefix of known non-member texts and LL the mean token log-likelihood; that repo
               scores it higher = member, as here. = mean NLL(x | P) / mean NLL(x).
- con_recall = Con-ReCall (Wang et al. 2024): (LL(x | P_non) - gamma * LL(x | P_mem)) / LL(x),
               P_mem a prefix of known member texts: = (NLL(x|P_non) - gamma * NLL(x|P_mem)) / NLL(x).
- gradient_norm = -(mean over parameter tensors of the p-norm of d mean NLL / d tensor) (mimir's
               GradNorm aggregation, p = 2 here; mimir's default is inf): members sit where the
               loss is flat. mimir returns +norm in its lower-is-member convention, i.e. it
               calls a large gradient a member; the Pandora paper (arXiv 2402.17012) and this
               module call a small one a member.
- samia      = SaMIA (Kaneko et al. 2024): sample continuations of the text's first half and
               score their word overlap with the true second half (ROUGE-1 F1, lowercased
               words, counts clipped), averaged over the samples: a model that saw the text
               tends to write it again. The sampling runs through the shared generator.
- dc_pdd     = DC-PDD (Zhang et al. 2024, as in mimir/attacks/dc_pdd.py): at the first occurrence
               of each distinct token id, alpha_i = p(x_i) * log(1 / f(x_i)) with f the
               Laplace-smoothed token frequency of a reference corpus, f = (1 + count) /
               (total + V); alpha_i = min(alpha_i, cap) (cap a = 0.01 as in mimir);
               score = mean(alpha_i) (mimir returns -mean in its lower-is-member convention;
               the DC-PDD paper's beta is the mean itself, higher = member).

Alignment contract for the shared pass: token_logprobs[i] = log p(token_ids[i] | prefix) where
the prefix starts with the model's start token (BOS, or EOS as mimir's DC-PDD does), so every
token of the text is scored; mu[i], var[i] are taken from the same distribution.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import xlogy

DEFAULT_K = 0.2
DC_PDD_CAP = 0.01


@dataclass(frozen=True)
class TokenStats:
    """Per-text inputs of every attack (see the module docstring for the alignment contract)."""

    token_logprobs: np.ndarray
    token_ids: np.ndarray | None = None
    mu: np.ndarray | None = None
    var: np.ndarray | None = None
    text: str | None = None

    def __post_init__(self):
        lp = np.asarray(self.token_logprobs, dtype=float)
        object.__setattr__(self, "token_logprobs", lp)
        for name, dtype in (("token_ids", np.int64), ("mu", float), ("var", float)):
            value = getattr(self, name)
            if value is not None:
                value = np.asarray(value, dtype=dtype)
                if value.shape != lp.shape:
                    raise ValueError(f"{name} has shape {value.shape}, token_logprobs {lp.shape}")
                object.__setattr__(self, name, value)

    @property
    def mean_nll(self) -> float:
        return float(-self.token_logprobs.mean()) if self.token_logprobs.size else np.nan

    @property
    def total_nll(self) -> float:
        return float(-self.token_logprobs.sum())


def token_stats_from_logprobs(full_logprobs: np.ndarray, token_ids: Sequence[int],
                              text: str | None = None) -> TokenStats:
    """Build TokenStats from the log-softmax rows that predict each token ([T, V], row i -> id i)."""
    full_logprobs = np.asarray(full_logprobs, dtype=float)
    ids = np.asarray(token_ids, dtype=np.int64)
    probs = np.exp(full_logprobs)
    mu = xlogy(probs, probs).sum(axis=1)
    second = (probs * np.where(probs > 0, full_logprobs, 0.0) ** 2).sum(axis=1)
    return TokenStats(token_logprobs=full_logprobs[np.arange(len(ids)), ids], token_ids=ids,
                      mu=mu, var=np.maximum(second - mu ** 2, 0.0), text=text)


# --------------------------------------------------------------------------- attacks

def _k_count(n: int, k: float) -> int:
    if not 0 < k <= 1:
        raise ValueError(f"k must be in (0, 1], got {k}")
    return max(1, int(n * k))


def loss_score(stats: TokenStats) -> float:
    """-mean NLL: members are predicted better."""
    return -stats.mean_nll


def zlib_score(stats: TokenStats) -> float:
    """-mean NLL / zlib-compressed byte length of the text (mimir's ZLIB, negated)."""
    if stats.text is None:
        raise ValueError("zlib needs the text")
    return -stats.mean_nll / len(zlib.compress(stats.text.encode("utf-8")))


def zlib_total_score(stats: TokenStats) -> float:
    """-(total NLL in bits) / (zlib length in bits): the model's compression against zlib's."""
    if stats.text is None:
        raise ValueError("zlib_total needs the text")
    return -(stats.total_nll / np.log(2)) / (8 * len(zlib.compress(stats.text.encode("utf-8"))))


def lowercase_score(mean_nll, lowercase_mean_nll):
    """Mean NLL of the lowercased text minus the text's (arrays or floats)."""
    return np.asarray(lowercase_mean_nll, dtype=float) - np.asarray(mean_nll, dtype=float)


def recall_score(mean_nll, nonmember_prefixed_mean_nll):
    """ReCaLL: NLL(x | non-member prefix) / NLL(x), per-token means (= LL(x|P) / LL(x))."""
    return np.asarray(nonmember_prefixed_mean_nll, dtype=float) / np.asarray(mean_nll, dtype=float)


def con_recall_score(mean_nll, nonmember_prefixed_mean_nll, member_prefixed_mean_nll, gamma: float = 1.0):
    """Con-ReCall: (NLL(x | P_non) - gamma * NLL(x | P_mem)) / NLL(x), per-token means."""
    return ((np.asarray(nonmember_prefixed_mean_nll, dtype=float) - gamma * np.asarray(member_prefixed_mean_nll, dtype=float))
            / np.asarray(mean_nll, dtype=float))


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def rouge1_f1(candidate: str, reference: str) -> float:
    """ROUGE-1 F1: unigram overlap of lowercased words, each counted at most as often as it occurs
    in both; 0 when either side has no word."""
    cand, ref = Counter(_words(candidate)), Counter(_words(reference))
    overlap = sum((cand & ref).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(cand.values()), overlap / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def samia_score(samples: Sequence[str], reference: str) -> float:
    """Mean ROUGE-1 F1 of sampled continuations against the true continuation."""
    return float(np.mean([rouge1_f1(sample, reference) for sample in samples])) if len(samples) else np.nan


def min_k_score(stats: TokenStats, k: float = DEFAULT_K) -> float:
    """Mean of the lowest k% token log-probs."""
    lp = stats.token_logprobs
    if lp.size == 0:
        return np.nan
    return float(np.sort(lp)[:_k_count(lp.size, k)].mean())


def min_k_plus_plus_score(stats: TokenStats, k: float = DEFAULT_K) -> float:
    """Mean of the lowest k% standardized token log-probs (log p - mu) / sqrt(var)."""
    if stats.mu is None or stats.var is None:
        raise ValueError("min-k%++ needs mu and var")
    lp = stats.token_logprobs
    if lp.size == 0:
        return np.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(stats.var > 0, (lp - stats.mu) / np.sqrt(stats.var), 0.0)
    return float(np.sort(z)[:_k_count(lp.size, k)].mean())


def reference_score(target_mean_nll, reference_mean_nll):
    """Reference-model loss minus target-model loss (arrays or floats)."""
    return np.asarray(reference_mean_nll, dtype=float) - np.asarray(target_mean_nll, dtype=float)


def neighbourhood_score(target_mean_nll: float, neighbour_mean_nlls: Sequence[float]) -> float:
    """Mean neighbour loss minus the text's loss: members sit in a dip of the loss."""
    neighbours = np.asarray(neighbour_mean_nlls, dtype=float)
    if neighbours.size == 0:
        raise ValueError("neighbourhood needs at least one neighbour")
    return float(neighbours.mean() - target_mean_nll)


def token_frequencies(corpus: Iterable[Sequence[int]], vocab_size: int) -> np.ndarray:
    """Laplace-smoothed token frequencies f = (1 + count) / (total + V) of a reference corpus."""
    counts = np.zeros(vocab_size, dtype=np.int64)
    for ids in corpus:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size:
            counts += np.bincount(ids, minlength=vocab_size)[:vocab_size]
    return (1.0 + counts) / (counts.sum() + vocab_size)


def dc_pdd_score(stats: TokenStats, token_freq: np.ndarray, cap: float | None = DC_PDD_CAP,
                 ) -> float:
    """DC-PDD: mean over first occurrences of min(p(x_i) * log(1/f(x_i)), cap)."""
    if stats.token_ids is None:
        raise ValueError("DC-PDD needs token ids")
    if stats.token_ids.size == 0:
        return np.nan
    _, first = np.unique(stats.token_ids, return_index=True)
    first.sort()
    p = np.exp(stats.token_logprobs[first])
    alpha = p * -np.log(np.asarray(token_freq, dtype=float)[stats.token_ids[first]])
    if cap is not None:
        alpha = np.minimum(alpha, cap)
    return float(alpha.mean())


def attack_scores(stats: Sequence[TokenStats], k: float = DEFAULT_K,
                  reference_mean_nll: Sequence[float] | None = None,
                  neighbour_mean_nlls: Sequence[Sequence[float]] | None = None,
                  token_freq: np.ndarray | None = None,
                  dc_pdd_cap: float | None = DC_PDD_CAP) -> pd.DataFrame:
    """One row per text, one column per attack whose inputs are present (higher = member).

    Columns: mean_nll, loss, min_k, and if available zlib and zlib_total (all texts given), min_k_pp (mu/var),
    reference (reference_mean_nll), neighbourhood (neighbour_mean_nlls), dc_pdd (token_freq and
    token ids).
    """
    out = pd.DataFrame({"mean_nll": [st.mean_nll for st in stats]})
    out["loss"] = -out["mean_nll"]
    if all(st.text is not None for st in stats):
        out["zlib"] = [zlib_score(st) for st in stats]
        out["zlib_total"] = [zlib_total_score(st) for st in stats]
    out["min_k"] = [min_k_score(st, k) for st in stats]
    if all(st.mu is not None and st.var is not None for st in stats):
        out["min_k_pp"] = [min_k_plus_plus_score(st, k) for st in stats]
    if reference_mean_nll is not None:
        out["reference"] = reference_score(out["mean_nll"].to_numpy(), reference_mean_nll)
    if neighbour_mean_nlls is not None:
        out["neighbourhood"] = [neighbourhood_score(t, nb) for t, nb in
                                zip(out["mean_nll"], neighbour_mean_nlls, strict=True)]
    if token_freq is not None and all(st.token_ids is not None for st in stats):
        out["dc_pdd"] = [dc_pdd_score(st, token_freq, dc_pdd_cap) for st in stats]
    return out
