"""The one model pass every attack reads: `token_stats` runs a model once over texts and their
neighbours, `run_attacks` turns that pass into every attack's score per text.

Any scorer (`lm.scorer.Scorer`) runs it; what its access level cannot give is asked of its
capabilities. A release served behind an endpoint at prompt-logprobs access gives each token's
log p but not the next-token distribution nor gradients: the attacks read from log p run through
the server (loss, zlib, min-k%, lowercase, neighbourhood, DC-PDD, ReCaLL / Con-ReCall with
token-id prompts, reference with a local reference model); min-k%++, the gradient norm and SaMIA
are not (`ENDPOINT_UNAVAILABLE`: SaMIA samples with the model's own generator, which a server does
not reproduce), and `run_attacks` refuses them by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from wikimem_platform.lm.generation import sample_generate
from wikimem_platform.lm.scorer import Scorer
from wikimem_platform.mia.attacks import (
    attack_scores,
    con_recall_score,
    DC_PDD_CAP,
    DEFAULT_K,
    lowercase_score,
    neighbourhood_score,
    recall_score,
    samia_score,
    token_frequencies,
    TokenStats,
)


# Attacks a served model cannot give, and why (`run_attacks` on a scorer without these capabilities).
ENDPOINT_UNAVAILABLE = {
    "min_k_pp": "it needs the whole next-token distribution; a server returns the tokens' own log p",
    "gradient_norm": "it needs the model's weights for a backward pass",
    "samia": "it samples with the model's own generator and seed",
}
NO_TOKEN_ID_PREFIXES = "its prefixes are built as token ids, which this server refuses"


def unavailable_attacks(lm: Scorer) -> dict[str, str]:
    """The attacks `lm` cannot give, each with why (from its capabilities): none for a model loaded here."""
    can = lm.capabilities
    out = {name: why for name, why, has in zip(ENDPOINT_UNAVAILABLE, ENDPOINT_UNAVAILABLE.values(),
                                               (can.has_distribution, can.has_gradients, can.samples)) if not has}
    if not can.scores_token_ids:
        out["recall"] = out["con_recall"] = NO_TOKEN_ID_PREFIXES
    return out


def served_unavailable(prompt_mode: str = "token-ids") -> dict[str, str]:
    """The attacks a release served at prompt-logprobs access cannot give, each with why."""
    out = dict(ENDPOINT_UNAVAILABLE)
    if prompt_mode != "token-ids":
        out["recall"] = out["con_recall"] = NO_TOKEN_ID_PREFIXES
    return out


def token_stats(lm: Scorer, texts: Sequence[str], *, batch_tokens: int | None = None,
                with_distribution: bool = True, progress=None) -> list[TokenStats]:
    """TokenStats of every text from ONE pass of `lm` (`Scorer.token_logprobs`): what every attack reads.

    Identical texts are run once. Weights loaded here give per scored token log p of the actual
    token and with_distribution the mean and variance of log p under the full next-token
    distribution (min-k%++; `lm.token_pass`: batches of about `batch_tokens` tokens, default
    lm.batch_size * 32); a served model gives log p only (min-k%++ is left out).
    """
    texts = list(texts)
    distinct = list(dict.fromkeys(texts))
    passed = lm.token_logprobs(distinct, with_distribution=with_distribution, batch_tokens=batch_tokens,
                               progress=progress)
    by_text = {t: TokenStats(token_logprobs=lp, token_ids=np.asarray(ids, dtype=np.int64), mu=mu, var=var, text=t)
               for t, (lp, ids, mu, var) in zip(distinct, passed)}
    return [by_text[t] for t in texts]


def mean_nlls(lm: Scorer, texts: Sequence[str]) -> np.ndarray:
    """Mean NLL per scored token of each text under `lm`, from the shared-prefix NLL engine
    (what a reference model needs: no full distribution). NaN for a text with no scored token."""

    ids = lm.encode(list(texts))
    # the engine on these texts' ids; a served model scores them as it was registered to (token ids, or aligned text)
    total = lm.score_sentences(list(texts))
    counts = np.array([len(i) - 1 for i in ids], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, total / counts, np.nan)


def context_length(lm: Scorer) -> int | None:
    """The most positions the model takes (None when its config does not say; a served model's
    from its server's model list where it says)."""
    return lm.context_length()


def prefixed_mean_nlls(lm, texts: Sequence[str], shots: Sequence[str]) -> np.ndarray:
    """Mean NLL per token of each text's own tokens after a prefix of `shots` (ReCaLL's
    LL(x | P), as a loss): the prefix's ids (start token first) then the text's ids, as
    ruoyuxie/recall concatenates them; through the prefix-tree engine, so the prefix is run once
    for all texts. Like mimir, only the last shots that fit the context with the longest text
    are kept; when not even one does, the shortest shot alone, and a text that does not fit
    after it scores NaN."""

    own = lm.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    limit, longest = context_length(lm), max((len(ids) for ids in own), default=0)
    for kept in range(len(shots), 0, -1):
        prefix_ids = lm.encode([" ".join(shots[-kept:])])[0]
        if limit is None or len(prefix_ids) + longest <= limit:
            break
    else:  # a small context (the planted model's 128): the shortest shot, and the texts that fit after it
        prefix_ids = min(lm.encode(list(shots)), key=len) if shots else []
    fits = [bool(prefix_ids) and len(ids) > 0 and (limit is None or len(prefix_ids) + len(ids) <= limit)
            for ids in own]
    scored = [prefix_ids + list(ids) for ids, ok in zip(own, fits) if ok]
    result = np.full(len(own), np.nan)
    if scored:
        totals = lm.score_token_ids([prefix_ids, *scored])
        result[np.flatnonzero(fits)] = (totals[1:] - totals[0]) / np.array([len(s) - len(prefix_ids) for s in scored])
    return result


def gradient_norms(lm, texts: Sequence[str], p: float = 2.0) -> np.ndarray:
    """Per text: the mean over parameter tensors of the p-norm of the gradient of its mean NLL
    (mimir's GradNorm aggregation). One backward pass per text; the weights are not changed."""
    import torch

    model = lm.model
    was_training = model.training
    needed_grad = [param.requires_grad for param in model.parameters()]  # scoring loads them frozen
    model.eval()
    for param in model.parameters():
        if param.is_floating_point():  # 4-bit (NF4) weights are packed integers: no gradient of their own
            param.requires_grad_(True)
    norms = []
    try:
        with torch.enable_grad():
            for ids in lm.encode(list(texts)):
                if len(ids) < 2:
                    norms.append(np.nan)
                    continue
                model.zero_grad(set_to_none=True)
                input_ids = torch.tensor([ids], device=lm.device)
                logits = model(input_ids=input_ids).logits[0, :-1].float()
                nll = torch.nn.functional.cross_entropy(logits, input_ids[0, 1:])
                nll.backward()
                per_tensor = [param.grad.detach().norm(p) for param in model.parameters() if param.grad is not None]
                norms.append(float(torch.stack(per_tensor).mean()))
    finally:
        model.zero_grad(set_to_none=True)
        model.train(was_training)
        for param, needed in zip(model.parameters(), needed_grad):
            param.requires_grad_(needed)
    return np.asarray(norms, dtype=float)


SAMIA_MAX_NEW_TOKENS = 64


def samia_scores(lm, texts: Sequence[str], n_samples: int = 5, seed: int = 0, progress=None) -> np.ndarray:
    """SaMIA per text: `n_samples` continuations of its first half (by words; temperature 1,
    top-k 50, seeded) against its second half; NaN for a text under 4 words."""

    halves = []
    for text in texts:
        words = text.split()
        cut = len(words) // 2
        halves.append((" ".join(words[:cut]), " ".join(words[cut:])) if len(words) >= 4 else None)
    usable = [i for i, pair in enumerate(halves) if pair is not None]
    result = np.full(len(texts), np.nan)
    if not usable:
        return result
    longest = max(len(ids) for ids in lm.tokenizer([halves[i][1] for i in usable], add_special_tokens=False)["input_ids"])
    samples = sample_generate(lm, [halves[i][0] for i in usable], n_samples, seed=seed, progress=progress,
                              max_new_tokens=min(SAMIA_MAX_NEW_TOKENS, longest))
    for i, drawn in zip(usable, samples):
        result[i] = samia_score(drawn, halves[i][1])
    return result


def dc_pdd_frequencies(lm, corpus: Iterable[str]) -> np.ndarray:
    """Laplace-smoothed token frequencies of a reference corpus under `lm`'s tokenizer."""
    corpus = list(corpus)
    ids = lm.tokenizer(corpus, add_special_tokens=False)["input_ids"] if corpus else []
    vocab = int(lm.details.get("vocab_size") or len(lm.tokenizer))
    vocab = max([vocab, len(lm.tokenizer), *[max(i) + 1 for i in ids if i]])
    return token_frequencies(ids, vocab)


def run_attacks(lm, texts: Sequence[str], *, k: float = DEFAULT_K, reference_lm=None,
                neighbours: Sequence[Sequence[str]] | None = None,
                pii_neighbours_: Sequence[Sequence[str]] | None = None,
                reference_corpus: Sequence[str] | None = None,
                dc_pdd_cap: float | None = DC_PDD_CAP, lowercase: bool = True,
                nonmember_shots: Sequence[str] = (), member_shots: Sequence[str] = (),
                con_recall_gamma: float = 1.0, gradient_norm: bool = False, samia_samples: int = 0,
                seed: int = 0, progress=None) -> pd.DataFrame:
    """Every attack's score per text (higher = member) from one `token_stats` pass of `lm`.

    The texts, their lowercased forms and all their neighbours go through the same pass; a
    reference model (another LoadedModel) adds `reference` (its mean NLL per token of its own
    tokens minus the target's, as mimir); `reference_corpus` adds `dc_pdd`. `neighbours` give
    `neighbourhood`, `pii_neighbours_` (names and values swapped) `neighbourhood_pii`; a text
    without neighbours scores NaN there. `nonmember_shots` (texts known not to be members) add
    `recall` (ReCaLL), with `member_shots` also `con_recall`; `gradient_norm` one backward pass
    per text; `samia_samples` > 0 adds `samia` (that many sampled continuations per text).
    """
    texts = list(texts)
    unavailable = unavailable_attacks(lm)
    asked = [name for name, on in (("gradient_norm", gradient_norm), ("samia", samia_samples),
                                   ("recall", nonmember_shots)) if on and name in unavailable]
    if asked:
        raise ValueError(f"{', '.join(asked)}: not available for {lm.name}, served at an endpoint "
                         f"({unavailable[asked[0]]}); run without them")
    lowered = [t.lower() for t in texts] if lowercase else []
    flat = [t for group in (neighbours or []) for t in group]
    flat_pii = [t for group in (pii_neighbours_ or []) for t in group]
    stats = token_stats(lm, [*texts, *lowered, *flat, *flat_pii], progress=progress)
    own, lowered_stats = stats[:len(texts)], stats[len(texts):len(texts) + len(lowered)]
    rest = stats[len(texts) + len(lowered):]

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
    if lowercase:
        frame["lowercase"] = lowercase_score(frame["mean_nll"], [st.mean_nll for st in lowered_stats])
    if nonmember_shots:
        nonmember_nlls = prefixed_mean_nlls(lm, texts, nonmember_shots)
        frame["recall"] = recall_score(frame["mean_nll"], nonmember_nlls)
        if member_shots:
            frame["con_recall"] = con_recall_score(frame["mean_nll"], nonmember_nlls,
                                                   prefixed_mean_nlls(lm, texts, member_shots), con_recall_gamma)
    if gradient_norm:
        frame["gradient_norm"] = -gradient_norms(lm, texts)
    if samia_samples:
        frame["samia"] = samia_scores(lm, texts, samia_samples, seed=seed)
    return frame
