"""Verdicts equal to float32's when scoring in bfloat16, float16 or NF4 (issue 37).

Low precision moves a sentence's NLL by up to ~0.9 nats in bfloat16 and ~13 nats in NF4 on the
models measured (`shared/notes/gpu-measured.md`), and so it changes which candidate ranks first
(1.3 % of groups in bfloat16, 9.7 % in NF4 on the planted model). Only the candidates that could
be first matter for a verdict, so those are re-scored in float32 and the rest keep their
low-precision NLLs:

- Every ranking a verdict reads is a linear form in sentence NLLs, per group of candidates:
  s(h, v) for each alpha (memorization: alpha = 1; the controls' compared score: alpha = 0;
  calibration: alpha = 0.5) per (subject, property, wording); each name form alone (-NLL(h, v),
  -NLL(h0, v), -NLL(h~_i, v): calibration's look-alike ranking and "NLL(h) alone") per wording
  and name form; and s summed over a pair's wordings (`summed_memorized`) per pair.
- With each sentence's error below its bound e(x), a candidate's score is off by at most
  sum |coefficient| * e(x) over its sentences x not yet in float32: its slack.
- Per group, the current leader is re-scored in float32 first (exact score L); then every
  candidate whose score plus slack reaches L is re-scored too, and so on until none can: a
  candidate left in low precision is below L both in float32 and in the table handed on, so the
  top of every ranking (rank-1, ties included), hence memorized / M / every verdict, is float32's.
  A sentence re-scored for one candidate is float32 for every candidate that shares it.
- e(x) = max(absolute, relative * NLL(x)) (`NLL_ERROR_BOUND`, per precision, configurable).
  bfloat16 rounds relative to magnitude, and its NLL error grows with the NLL: on the planted
  model on CPU (25,762 sentences, NLL 15-376 nats) the largest |bf16 - float32| was 1.26 nats and
  1.1 % of the sentence's NLL (0.5 % below 20 nats, 0.65 % above 80), on one H100 0.87 nats at
  most (random Llama-3.1-8B shape, NLLs ~150 nats; 0.71 planted-tiny, 0.09 SmolLM2-135M shape).
  So bfloat16: 2 % of the NLL (1.8x the largest ratio seen), no absolute floor; float16 has 3
  more mantissa bits, bfloat16's bound covers it. NF4 quantizes the weights, an error not
  relative to the NLL: 13 nats absolute (largest measured 12.6 on planted-tiny, 2.5 on its twin).
  Every re-scored sentence checks its bound: if one is off by more, both parts are widened by
  `WIDEN` times the worst excess and the rounds go on, so a model less precise than those
  measured gets a wider margin instead of a wrong verdict (`max_error_seen`, the final bound).

Cost on the planted model (`benchmarks/results/bench_precision_planted-tiny.txt`, 25,762
distinct sentences, 21 candidates a wording): bfloat16 alone gets 29-39 rank-1s / verdicts
wrong, re-scoring 32 % of the sentences in float32 gets none wrong (CPU and H200 alike; 14 % if
only s at alpha = 1 is kept exact, `Float32Verdicts(alphas=(1.0,), name_forms=False,
summed=False)`); NF4's 13-nat bound re-scores 99.8 %: on a model this small NF4 saves nothing.

Float32 NLLs depend on batch composition at the ~1e-5 nat level (on CUDA kernels up to ~4e-4),
so two candidates tied that closely can order differently in two float32 runs as well; that is
float32's own noise, not this module's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from wikimem_platform.lm.nll import score_sentences

if TYPE_CHECKING:  # LoadedModel imports this module where it plans re-scoring (no cycle at run time)
    from wikimem_platform.lm.loading import LoadedModel

FLOAT32 = "float32"
NF4 = "nf4"
# Per-sentence |NLL - float32 NLL| bound: (absolute nats, share of the NLL), from the
# measurements in the module docstring; a sentence's bound is the larger of the two.
NLL_ERROR_BOUND = {"bfloat16": (0.0, 0.02), "float16": (0.0, 0.02), NF4: (13.0, 0.0)}
WIDEN = 1.5  # a re-scored sentence off by more than its bound widens it WIDEN x the excess
# s(h, v) for these alphas: 1 (the audit), 0 (the controls' compared score), 0.5 (calibration).
DEFAULT_ALPHAS = (0.0, 0.5, 1.0)
CONTEXTUALIZED_KINDS = ("contextualized",)  # wordings left out of M and of the summed ranking
MAX_ROUNDS = 50  # each round re-scores at least one sentence; two or three rounds are typical


def precision_of(lm: LoadedModel) -> str:
    """'nf4' for a 4-bit model, else the weights' dtype name ('float32', 'bfloat16', ...)."""
    if lm.details.get("load_in_4bit"):
        return NF4
    return str(lm.dtype).removeprefix("torch.")


@dataclass(frozen=True)
class Float32Verdicts:
    """How low-precision scores are brought to float32's verdicts.

    enabled: re-score at all (a float32 model never needs it). nll_error, nll_error_relative: the
    per-sentence bound's absolute (nats) and relative (share of the NLL) parts (both None:
    `NLL_ERROR_BOUND` of the model's precision; one given: the other 0). alphas: the s(h, v) rankings to
    keep exact. name_forms: also each name form's own NLL ranking. summed: also s summed over a
    pair's wordings (per alpha).
    """

    enabled: bool = True
    nll_error: float | None = None
    nll_error_relative: float | None = None
    alphas: tuple[float, ...] = DEFAULT_ALPHAS
    name_forms: bool = True
    summed: bool = True

    @classmethod
    def from_settings(cls, settings: dict | None) -> Float32Verdicts:
        """From a scoring settings dict's optional "float32_verdicts" entry (part of the shard
        key, so a different margin never reuses a shard scored with another)."""
        given = dict((settings or {}).get("float32_verdicts") or {})
        if "alphas" in given:
            given["alphas"] = tuple(float(a) for a in given["alphas"])
        return cls(**given)

    def bound_for(self, precision: str) -> tuple[float, float]:
        """(absolute nats, share of the NLL) of the per-sentence error bound."""
        if self.nll_error is not None or self.nll_error_relative is not None:
            return float(self.nll_error or 0.0), float(self.nll_error_relative or 0.0)
        if precision not in NLL_ERROR_BOUND:
            raise ValueError(f"no measured NLL error bound for precision {precision!r}: pass nll_error")
        return NLL_ERROR_BOUND[precision]


@dataclass
class RescoreReport:
    """What re-scoring cost and what it assumed, for one call."""

    precision: str = FLOAT32
    nll_error_bound: tuple[float, float] = (0.0, 0.0)  # final (absolute, relative) bound, widened
    # if a re-scored sentence exceeded it
    sentences: int = 0  # distinct sentences of the rows
    sentences_rescored: int = 0  # of those, how many now carry a float32 NLL
    rounds: int = 0
    max_error_seen: float = 0.0  # largest |low-precision - float32| among the re-scored sentences

    @property
    def share_rescored(self) -> float:
        return self.sentences_rescored / self.sentences if self.sentences else 0.0


@dataclass
class _Ranking:
    """A linear form over sentence NLLs per candidate, ranked (higher first) within groups."""

    name: str
    cand: np.ndarray  # per term: candidate index
    sent: np.ndarray  # per term: sentence index
    coef: np.ndarray  # per term: coefficient
    group: np.ndarray  # per candidate: group index
    n_cand: int


def _sentence_index(rows: pd.DataFrame) -> tuple[pd.Index, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct sentences, and per row the index of its h and h0 sentence; per look-alike
    sentence its row and index (rows in order)."""
    n = len(rows)
    similar = rows["sentences_similar"].tolist()
    counts = np.fromiter((len(group) for group in similar), dtype=np.int64, count=n)
    flat = [s for group in similar for s in group]
    codes, uniques = pd.factorize(pd.Series([*rows["sentence_h"], *rows["sentence_h0"], *flat], dtype=object))
    return pd.Index(uniques), codes[:n], codes[n:2 * n], codes[2 * n:], counts


def _alpha_terms(alpha: float, h: np.ndarray, h0: np.ndarray, sim: np.ndarray, sim_row: np.ndarray,
                 counts: np.ndarray, cand_of_row: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Terms of s(h, v) = -NLL(h) + (1 - alpha) NLL(h0) + alpha mean NLL(h~), row -> candidate."""
    cand, sent, coef = [cand_of_row], [h], [np.full(len(h), -1.0)]
    if alpha != 1.0:
        cand.append(cand_of_row), sent.append(h0), coef.append(np.full(len(h), 1.0 - alpha))
    if alpha != 0.0 and len(sim):
        cand.append(cand_of_row[sim_row]), sent.append(sim), coef.append(alpha / counts[sim_row])
    return np.concatenate(cand), np.concatenate(sent), np.concatenate(coef)


def _rankings(rows: pd.DataFrame, h: np.ndarray, h0: np.ndarray, sim: np.ndarray, counts: np.ndarray,
              config: Float32Verdicts) -> list[_Ranking]:
    n = len(rows)
    sim_row = np.repeat(np.arange(n), counts)
    variant = rows.groupby(["subject_qid", "property", "variant_id"], sort=False).ngroup().to_numpy()
    rankings = []
    for alpha in config.alphas:
        # s is undefined (NaN, dropped by memorization) without look-alikes unless alpha = 0.
        usable = np.ones(n, dtype=bool) if alpha == 0.0 else counts > 0
        cand, sent, coef = _alpha_terms(alpha, h, h0, sim, sim_row, counts, np.arange(n))
        keep = usable[cand]
        rankings.append(_Ranking(f"s(alpha={alpha:g})", cand[keep], sent[keep], coef[keep], variant, n))
        if config.summed:
            kinds = rows["kind"] if "kind" in rows.columns else pd.Series("", index=rows.index)
            included = usable & ~kinds.isin(CONTEXTUALIZED_KINDS).to_numpy()
            pair_value = rows.groupby(["subject_qid", "property", "value"], sort=False).ngroup().to_numpy()
            pair = rows.groupby(["subject_qid", "property"], sort=False).ngroup().to_numpy()
            keep = included[cand]
            n_pv = int(pair_value.max()) + 1 if n else 0
            group = np.zeros(n_pv, dtype=np.int64)
            group[pair_value] = pair
            rankings.append(_Ranking(f"summed s(alpha={alpha:g})", pair_value[cand[keep]], sent[keep],
                                     coef[keep], group, n_pv))
    if config.name_forms:
        n_variants = int(variant.max()) + 1 if n else 0
        rankings.append(_Ranking("NLL(h)", np.arange(n), h, np.full(n, -1.0), variant, n))
        rankings.append(_Ranking("NLL(h0)", np.arange(n), h0, np.full(n, -1.0), variant, n))
        if len(sim):
            position = np.arange(len(sim)) - np.repeat(np.cumsum(counts) - counts, counts)
            rankings.append(_Ranking("NLL(h~)", np.arange(len(sim)), sim, np.full(len(sim), -1.0),
                                     variant[sim_row] + n_variants * position, len(sim)))
    return rankings


def _needed(ranking: _Ranking, value: np.ndarray, exact: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Sentences (indices) to re-score so that this ranking's top is settled; empty when it is."""
    present = np.bincount(ranking.cand, minlength=ranking.n_cand) > 0
    score = np.bincount(ranking.cand, weights=ranking.coef * value[ranking.sent], minlength=ranking.n_cand)
    loose = ~exact[ranking.sent]
    slack = np.bincount(ranking.cand, weights=np.abs(ranking.coef) * bound[ranking.sent] * loose,
                        minlength=ranking.n_cand)
    is_exact = present & (np.bincount(ranking.cand, weights=loose, minlength=ranking.n_cand) == 0)
    n_groups = int(ranking.group.max()) + 1 if ranking.n_cand else 0
    leader = np.full(n_groups, -np.inf)
    np.maximum.at(leader, ranking.group[is_exact], score[is_exact])
    # A group with no float32 candidate yet: its current leader first (then the rest is judged
    # against its exact score); otherwise every candidate that could reach the exact leader.
    settled = np.isfinite(leader)
    wanted = present & ~is_exact & settled[ranking.group] & (score + slack >= leader[ranking.group])
    open_groups = present & ~settled[ranking.group]
    if open_groups.any():
        candidates = np.flatnonzero(open_groups)
        order = np.lexsort((-score[candidates], ranking.group[candidates]))
        ordered = candidates[order]
        first = np.ones(len(ordered), dtype=bool)
        first[1:] = ranking.group[ordered[1:]] != ranking.group[ordered[:-1]]
        wanted[ordered[first]] = True
    terms = wanted[ranking.cand] & loose
    return np.unique(ranking.sent[terms])


def refine_to_float32(
    rows: pd.DataFrame,
    scores: pd.DataFrame,
    reference: LoadedModel,
    precision: str,
    config: Float32Verdicts = Float32Verdicts(),
    cache: dict[str, float] | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[pd.DataFrame, RescoreReport]:
    """`scores` (score_expanded's output for `rows`, scored at `precision`) with the sentences
    that could decide a rank-1 re-scored by `reference` (the same weights in float32).

    cache: sentence -> float32 NLL, read first and filled in (keep it across shards).
    Returns a new scores table (same rows and columns) and what was re-scored.
    """
    absolute, relative = config.bound_for(precision)
    report = RescoreReport(precision=precision, nll_error_bound=(absolute, relative))
    if len(rows) != len(scores):
        raise ValueError(f"rows ({len(rows)}) and scores ({len(scores)}) differ in length")
    if len(rows) == 0:
        return scores.copy(), report
    rows = rows.reset_index(drop=True)
    sentences, h, h0, sim, counts = _sentence_index(rows)
    low = np.zeros(len(sentences))
    low[h] = scores["nll_h"].to_numpy(dtype=float)
    low[h0] = scores["nll_h0"].to_numpy(dtype=float)
    if len(sim):
        low[sim] = np.concatenate([np.asarray(v, dtype=float) for v in scores["nll_similar"] if len(v)])
    value, exact = low.copy(), np.zeros(len(sentences), dtype=bool)
    rankings = _rankings(rows, h, h0, sim, counts, config)
    cache = {} if cache is None else cache
    report.sentences = len(sentences)
    while report.rounds < MAX_ROUNDS:
        bound = np.maximum(absolute, relative * np.abs(low))
        wanted = np.unique(np.concatenate([_needed(r, value, exact, bound) for r in rankings]))
        if not len(wanted):
            break
        report.rounds += 1
        value[wanted] = score_sentences(reference, sentences[wanted].tolist(), cache=cache)
        exact[wanted] = True
        errors = np.abs(value[wanted] - low[wanted])
        report.max_error_seen = max(report.max_error_seen, float(errors.max()))
        excess = errors / np.maximum(bound[wanted], 1e-12)
        if excess.max() > 1.0:
            absolute, relative = WIDEN * excess.max() * absolute, WIDEN * excess.max() * relative
            if absolute == relative == 0.0:
                absolute = WIDEN * float(errors.max())
            if log is not None:
                log(f"a {precision} NLL was {excess.max():.2f}x its error bound off float32's; bound "
                    f"widened to {absolute:.3g} nats or {100 * relative:.3g}% of the NLL")
    else:
        raise RuntimeError(f"re-scoring did not settle in {MAX_ROUNDS} rounds")
    report.nll_error_bound = (absolute, relative)
    report.sentences_rescored = int(exact.sum())
    out = scores.copy()
    out["nll_h"] = value[h]
    out["nll_h0"] = value[h0]
    similar = np.split(value[sim], np.cumsum(counts)[:-1])
    out["nll_similar"] = [s.tolist() for s in similar]
    out["nll_similar_mean"] = [float(s.mean()) if len(s) else np.nan for s in similar]
    return out, report


def float32_reference(lm: LoadedModel) -> LoadedModel:
    """The same weights in float32 on the same device, loaded once per LoadedModel (kept on it):
    on CUDA the float32 body beside the bfloat16 / NF4 one, on CPU the same path."""
    return lm.float32_twin()


def rescoring_plan(lm: LoadedModel, settings: dict | None) -> tuple[str, Float32Verdicts | None]:
    """(precision, the re-scoring config or None when the scores are float32 already / it is off)."""
    precision = precision_of(lm)
    config = Float32Verdicts.from_settings(settings)
    if precision == FLOAT32 or not config.enabled:
        return precision, None
    return precision, config


def describe(report: RescoreReport) -> dict[str, Any]:
    """The numbers an answer or a run's metadata states about precision."""
    return {
        "precision": report.precision,
        "sentences_rescored_float32": report.sentences_rescored,
        "share_rescored_float32": round(report.share_rescored, 4),
        "nll_error_bound_nats": report.nll_error_bound[0],
        "nll_error_bound_share_of_nll": report.nll_error_bound[1],
        "max_error_seen": round(report.max_error_seen, 4),
    }


__all__: Sequence[str] = (
    "DEFAULT_ALPHAS", "FLOAT32", "Float32Verdicts", "NF4", "NLL_ERROR_BOUND", "RescoreReport", "describe",
    "float32_reference", "precision_of", "refine_to_float32", "rescoring_plan",
)
