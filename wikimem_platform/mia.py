"""Membership-inference scores and their evaluation (CRM §3.3, §4.4; mimir's attacks).

One shared model pass (`token_stats`) fills a `TokenStats` per text, every attack reads it;
`run_attacks` runs the pass once over the texts and all their neighbours and scores every
attack whose inputs are given. The rest of the module is math on TokenStats.
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

import random
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import xlogy
from sklearn.metrics import roc_auc_score, roc_curve

DEFAULT_K = 0.2
DC_PDD_CAP = 0.01
TARGET_FPRS = (0.001, 0.01)


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

    Columns: mean_nll, loss, min_k, and if available zlib (all texts given), min_k_pp (mu/var),
    reference (reference_mean_nll), neighbourhood (neighbour_mean_nlls), dc_pdd (token_freq and
    token ids).
    """
    out = pd.DataFrame({"mean_nll": [st.mean_nll for st in stats]})
    out["loss"] = -out["mean_nll"]
    if all(st.text is not None for st in stats):
        out["zlib"] = [zlib_score(st) for st in stats]
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


# --------------------------------------------------------------------------- neighbours

def pii_neighbours(text: str, name: str | None, value: str | None,
                   counterfactual_names: Sequence[str], counterfactual_values: Sequence[str],
                   n: int = 10, seed: int = 0) -> list[str]:
    """PII-aware neighbours (CRM App. C.1): the person's name and the PII value swapped for others.

    Every occurrence (exact, case-sensitive) of `name` and of `value` is replaced in one pass, the
    longer string first, so a name inside the value is not replaced twice. Counterfactuals equal
    to the original are skipped; they are drawn without replacement while enough remain.
    """
    rng = np.random.default_rng(seed)
    present = {s for s in (name, value) if s and s in text}
    if not present:
        raise ValueError("neither the name nor the value occurs in the text")

    def draws(original, pool):
        pool = [c for c in dict.fromkeys(pool) if c != original]
        if original not in present:
            return [original] * n
        if not pool:
            raise ValueError(f"no counterfactual differs from {original!r}")
        picks = rng.choice(len(pool), size=n, replace=n > len(pool))
        return [pool[i] for i in picks]

    names, values = draws(name, counterfactual_names), draws(value, counterfactual_values)
    pattern = re.compile("|".join(re.escape(s) for s in sorted(present, key=len, reverse=True)))
    out = []
    for new_name, new_value in zip(names, values):
        table = {name: new_name, value: new_value}
        out.append(pattern.sub(lambda m, t=table: t[m.group(0)], text))
    return out


def perturb_words(text: str, n: int = 10, seed: int = 0, pct: float = 0.2,
                  fill_words: Sequence[str] | None = None) -> list[str]:
    """Generic neighbours: edit about pct of the words (at least one) by adjacent swap, deletion
    or, when `fill_words` is given, replacement with a random fill word (mimir's random-fill
    neighbours, without a mask-filling model). Seeded; words are split on single spaces as mimir
    does. Raises for texts of fewer than 2 words."""
    words = text.split(" ")
    if len(words) < 2:
        raise ValueError("need at least two words to perturb")
    rng = random.Random(seed)
    ops = ["swap", "delete"] + (["replace"] if fill_words else [])
    n_edits = max(1, round(pct * len(words)))
    out = []
    for _ in range(n):
        for _attempt in range(20):
            w = list(words)
            for _edit in range(n_edits):
                if len(w) < 2:
                    break
                i = rng.randrange(len(w))
                op = rng.choice(ops)
                if op == "swap":
                    j = i + 1 if i + 1 < len(w) else i - 1
                    w[i], w[j] = w[j], w[i]
                elif op == "delete":
                    del w[i]
                else:
                    w[i] = rng.choice(list(fill_words))
            candidate = " ".join(w)
            if candidate != text:
                break
        out.append(candidate)
    return out


# --------------------------------------------------------------------------- evaluation

def _bootstrap_auroc(scores: np.ndarray, labels: np.ndarray, n_bootstrap: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Stratified bootstrap AUROCs via Mann-Whitney counts on tie groups (ties count 1/2)."""
    _, group = np.unique(scores, return_inverse=True)
    n_groups = int(group.max()) + 1
    pos, neg = group[labels], group[~labels]
    n1, n0 = pos.size, neg.size
    chunk = max(1, min(n_bootstrap, 5_000_000 // max(n_groups, n1, n0)))
    out = []
    for start in range(0, n_bootstrap, chunk):
        b = min(chunk, n_bootstrap - start)
        offset = (np.arange(b) * n_groups)[:, None]
        pg = pos[rng.integers(0, n1, size=(b, n1))] + offset
        ng = neg[rng.integers(0, n0, size=(b, n0))] + offset
        c1 = np.bincount(pg.ravel(), minlength=b * n_groups).reshape(b, n_groups)
        c0 = np.bincount(ng.ravel(), minlength=b * n_groups).reshape(b, n_groups)
        below = np.cumsum(c0, axis=1) - c0
        out.append((c1 * (below + 0.5 * c0)).sum(axis=1) / (n1 * n0))
    return np.concatenate(out) if out else np.empty(0)


def tpr_at_fpr(scores, labels, target_fpr: float) -> float:
    """The highest TPR among ROC points with FPR <= target_fpr."""
    fpr, tpr, _ = roc_curve(np.asarray(labels, dtype=bool), np.asarray(scores, dtype=float),
                            drop_intermediate=False)
    return float(tpr[fpr <= target_fpr].max())


def evaluate_attack(scores, labels, n_bootstrap: int = 1000, seed: int = 0,
                    target_fprs: Sequence[float] = TARGET_FPRS) -> dict:
    """AUROC with a stratified percentile-bootstrap 95% CI, TPR at low FPRs, class counts.

    labels: True / 1 = member. Scores follow the module's convention (higher = member), so an
    attack with no signal gives 0.5 and flipping the labels gives 1 - AUROC. The bootstrap
    resamples members and non-members separately (class sizes fixed, so every replicate is
    defined). NaN scores raise: dropping them silently would bias the comparison.
    Keys: auroc, auroc_ci_low, auroc_ci_high, tpr_at_fpr_<t> for each t, n_members,
    n_nonmembers, n_bootstrap.
    """
    scores = np.asarray(scores, dtype=float)
    labels = np.asarray(labels).astype(bool)
    if scores.shape != labels.shape:
        raise ValueError("scores and labels differ in length")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    n1, n0 = int(labels.sum()), int((~labels).sum())
    if n1 == 0 or n0 == 0:
        raise ValueError("need members and non-members")
    result = {"auroc": float(roc_auc_score(labels, scores))}
    boots = _bootstrap_auroc(scores, labels, n_bootstrap, np.random.default_rng(seed))
    low, high = (np.percentile(boots, [2.5, 97.5]) if boots.size else (np.nan, np.nan))
    result.update(auroc_ci_low=float(low), auroc_ci_high=float(high))
    for target in target_fprs:
        result[f"tpr_at_fpr_{target:g}"] = tpr_at_fpr(scores, labels, target)
    result.update(n_members=n1, n_nonmembers=n0, n_bootstrap=int(n_bootstrap))
    return result


def evaluate_attacks(score_frame: pd.DataFrame, labels, attacks: Sequence[str] | None = None,
                     n_bootstrap: int = 1000, seed: int = 0) -> pd.DataFrame:
    """`evaluate_attack` for every attack column of `attack_scores` output; one row per attack."""
    attacks = attacks or [c for c in score_frame.columns if c != "mean_nll"]
    rows = [{"attack": a, **evaluate_attack(score_frame[a].to_numpy(), labels, n_bootstrap, seed)}
            for a in attacks]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the shared model pass

def token_stats(lm, texts: Sequence[str], *, batch_tokens: int | None = None,
                with_distribution: bool = True, progress=None) -> list[TokenStats]:
    """TokenStats of every text from ONE pass of `lm` (a `models.LoadedModel`): what every attack reads.

    Texts are encoded with `lm.encode` (start token first, the models module's rule), sorted by
    length (longest first, so a memory error shows at once) and run in right-padded batches of
    about `batch_tokens` tokens (default lm.batch_size * 32, as the NLL engine). Per scored token:
    log p of the actual token, and with_distribution the mean and variance of log p under the
    full next-token distribution (min-k%++). Log-probabilities are taken in float32 as
    logit - logsumexp, the output projection applied in slices of rows (Gemma's 262k vocabulary).
    Identical texts are run once.
    """
    import torch

    from wikimem_platform.nll import LOGIT_ROWS, TOKENS_PER_SENTENCE, _logits

    texts = list(texts)
    distinct = list(dict.fromkeys(texts))
    encoded = lm.encode(distinct) if distinct else []
    budget = batch_tokens or lm.batch_size * TOKENS_PER_SENTENCE
    order = sorted(range(len(distinct)), key=lambda i: -len(encoded[i]))
    results: dict[int, TokenStats] = {}
    done = 0
    with torch.inference_mode():
        start = 0
        while start < len(order):
            width = len(encoded[order[start]])
            size = max(1, budget // max(width, 1))
            batch = order[start:start + size]
            start += len(batch)
            if width < 2:
                for i in batch:
                    results[i] = TokenStats(token_logprobs=np.empty(0), token_ids=np.empty(0, np.int64),
                                            mu=np.empty(0) if with_distribution else None,
                                            var=np.empty(0) if with_distribution else None,
                                            text=distinct[i])
                continue
            input_ids = torch.zeros((len(batch), width), dtype=torch.long)
            attention = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):
                input_ids[row, :len(encoded[i])] = torch.tensor(encoded[i])
                attention[row, :len(encoded[i])] = 1
            hidden = lm.model.base_model(input_ids=input_ids.to(lm.device),
                                         attention_mask=attention.to(lm.device),
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
                results[i] = TokenStats(token_logprobs=lp_rows[row],
                                        token_ids=np.asarray(encoded[i][1:], dtype=np.int64),
                                        mu=mu_rows[row], var=var_rows[row], text=distinct[i])
            done += len(batch)
            if progress is not None:
                progress(done, len(distinct))
    index = {t: i for i, t in enumerate(distinct)}
    return [results[index[t]] for t in texts]


def mean_nlls(lm, texts: Sequence[str]) -> np.ndarray:
    """Mean NLL per scored token of each text under `lm`, from the shared-prefix NLL engine
    (what a reference model needs: no full distribution). NaN for a text with no scored token."""
    from wikimem_platform.nll import score_token_ids

    ids = lm.encode(list(texts))
    total = score_token_ids(lm, ids)
    counts = np.array([len(i) - 1 for i in ids], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, total / counts, np.nan)


def dc_pdd_frequencies(lm, corpus: Iterable[str]) -> np.ndarray:
    """Laplace-smoothed token frequencies of a reference corpus under `lm`'s tokenizer."""
    corpus = list(corpus)
    ids = lm.tokenizer(corpus, add_special_tokens=False)["input_ids"] if corpus else []
    vocab = int(lm.details.get("vocab_size") or len(lm.tokenizer))
    vocab = max([vocab, len(lm.tokenizer), *[max(i) + 1 for i in ids if i]])
    return token_frequencies(ids, vocab)


def word_neighbours(texts: Sequence[str], n: int = 5, seed: int = 0,
                    fill_words: Sequence[str] | None = None) -> list[list[str]]:
    """`perturb_words` neighbours per text (seeded per text); [] for one-word texts."""
    return [perturb_words(t, n=n, seed=seed + i, fill_words=fill_words) if len(t.split(" ")) >= 2 else []
            for i, t in enumerate(texts)]


def run_attacks(lm, texts: Sequence[str], *, k: float = DEFAULT_K, reference_lm=None,
                neighbours: Sequence[Sequence[str]] | None = None,
                pii_neighbours_: Sequence[Sequence[str]] | None = None,
                reference_corpus: Sequence[str] | None = None,
                dc_pdd_cap: float | None = DC_PDD_CAP, progress=None) -> pd.DataFrame:
    """Every attack's score per text (higher = member) from one `token_stats` pass of `lm`.

    The texts and all their neighbours go through the same pass; a reference model (another
    LoadedModel) adds `reference` (its mean NLL per token of its own tokens minus the target's,
    as mimir); `reference_corpus` adds `dc_pdd`. `neighbours` give `neighbourhood`,
    `pii_neighbours_` (names and values swapped) `neighbourhood_pii`; a text without neighbours
    scores NaN there.
    """
    texts = list(texts)
    flat = [t for group in (neighbours or []) for t in group]
    flat_pii = [t for group in (pii_neighbours_ or []) for t in group]
    stats = token_stats(lm, [*texts, *flat, *flat_pii], progress=progress)
    own, rest = stats[:len(texts)], stats[len(texts):]

    def group_nlls(groups):
        nonlocal rest
        out = []
        for group in groups:
            out.append([st.mean_nll for st in rest[:len(group)]])
            rest = rest[len(group):]
        return out

    neighbour_nlls = group_nlls(neighbours) if neighbours is not None else None
    pii_nlls = group_nlls(pii_neighbours_) if pii_neighbours_ is not None else None
    token_freq = dc_pdd_frequencies(lm, reference_corpus) if reference_corpus else None
    frame = attack_scores(own, k=k, token_freq=token_freq, dc_pdd_cap=dc_pdd_cap,
                          reference_mean_nll=mean_nlls(reference_lm, texts) if reference_lm is not None else None)

    def neighbourhood(nlls):
        return [neighbourhood_score(t, nb) if len(nb) else np.nan for t, nb in zip(frame["mean_nll"], nlls)]

    if neighbour_nlls is not None:
        frame["neighbourhood"] = neighbourhood(neighbour_nlls)
    if pii_nlls is not None:
        frame["neighbourhood_pii"] = neighbourhood(pii_nlls)
    return frame


def evaluate_available(score_frame: pd.DataFrame, labels, n_bootstrap: int = 1000, seed: int = 0,
                       ) -> pd.DataFrame:
    """`evaluate_attack` per attack column on the texts that attack could score; the rows left
    out (NaN: e.g. no neighbour for a one-word text) are counted in `n_unscored`, not hidden."""
    labels = np.asarray(labels).astype(bool)
    rows = []
    for attack in [c for c in score_frame.columns if c != "mean_nll"]:
        scores = score_frame[attack].to_numpy(dtype=float)
        ok = ~np.isnan(scores)
        if labels[ok].all() or not labels[ok].any():
            continue  # no members or no non-members left: nothing to evaluate
        rows.append({"attack": attack, **evaluate_attack(scores[ok], labels[ok], n_bootstrap, seed),
                     "n_unscored": int((~ok).sum())})
    return pd.DataFrame(rows)


def auroc_figure(table: pd.DataFrame, title: str = "Membership inference"):
    """Plotly bar chart: AUROC per attack with its bootstrap CI, chance (0.5) marked."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(
        x=table["attack"], y=table["auroc"],
        error_y=dict(type="data", symmetric=False, array=table["auroc_ci_high"] - table["auroc"],
                     arrayminus=table["auroc"] - table["auroc_ci_low"])))
    fig.add_hline(y=0.5, line_dash="dash", annotation_text="chance")
    fig.update_layout(title=title, yaxis_title="AUROC (95% bootstrap CI)", yaxis_range=[0, 1])
    return fig
