"""WikiMem scoring: every canary filled with every candidate value, for h, h0 and each S(h).

Turns the canary table and the candidate sets into sentences, scores them with the shared-prefix
engine (`wikimem_platform.lm.nll`) and returns one row per (subject, property, variant, candidate)
with NLL(h, v), NLL(h0, v) and NLL(h~, v) for every similar name — the input of
`wikimem_platform.wikimem.memorization`.

Scoring is cut into shards (one per property) stored as Parquet under a key derived from the
shard's content (its canaries, its candidates, the model fingerprint and the scoring settings):
a killed run resumes from the finished shards, and a re-audit reuses every shard whose inputs
did not change.

Below the shards, `SentenceNllCache` keeps every scored sentence's NLL per model fingerprint and
settings (SQLite, under the instance's storage): cohort audits and data-subject requests share
it, so the generic-subject (h0) sentences of a template and value are scored once per model, and
a person already audited in a cohort costs no forward pass when they write in.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from wikimem_platform.canaries.text import render, text_before_value, value_follows_subject
from wikimem_platform.lm.access import TOP_LOGPROBS
from wikimem_platform.lm.loading import LoadedModel
from wikimem_platform.lm.precision import refine_to_float32
from wikimem_platform.lm.scorer import CachingScorer, Scorer
from wikimem_platform.progress import LOG_EVERY_SECONDS, throttled
from wikimem_platform.security.keys import purpose_key
from wikimem_platform.storage import write_atomically
from wikimem_platform.vocabulary import CONTEXTUALIZED_KINDS
from wikimem_platform.wikimem.memorization import H_CENSORED
from wikimem_platform.versions import source_version

SCORE_COLUMNS = [
    "subject_qid", "property", "variant_id", "kind", "value", "value_label", "is_true",
    "nll_h", "nll_h0", "nll_similar", "nll_similar_mean",
]
# The version of the code a stored shard's numbers come from (sentence rendering here, and all it
# imports: the NLL engine, its batching, model loading and tokenization, precision re-scoring):
# part of every shard and sentence-cache key, and the scoring assets' Dagster code version, so
# the lineage of a report names it.
SCORING_VERSION = source_version(__name__)
SENTENCE_KEY_PURPOSE = "sentence-nll-cache"  # the sentence cache's share of the instance secret


def expand_canaries(canaries: pd.DataFrame, candidates: pd.DataFrame) -> pd.DataFrame:
    """One row per (canary variant, candidate value) with the sentences to score.

    Columns: the keys, ``sentence_h``, ``sentence_h0`` and ``sentences_similar`` (a list, one
    per name in S(h)).
    """
    keys = ["subject_qid", "property"]
    rows = canaries[[*keys, "variant_id", "kind", "template", "subject", "subject_generic", "subject_similar"]].merge(
        candidates[[*keys, "value", "value_label", "is_true"]], on=keys, how="inner"
    )
    templates, labels = rows["template"].tolist(), rows["value_label"].tolist()
    rows["sentence_h"] = [render(t, h, v) for t, h, v in zip(templates, rows["subject"], labels)]
    rows["sentence_h0"] = [render(t, h0, v) for t, h0, v in zip(templates, rows["subject_generic"], labels)]
    rows["sentences_similar"] = [
        [render(t, name, v) for name in similar] for t, similar, v in zip(templates, rows["subject_similar"], labels)
    ]
    return rows


def reads_continuations(lm: Scorer) -> bool:
    """Whether `lm` gives each sentence's NLL after its prefix only (a release served at
    top-logprobs access) rather than the whole sentence's."""
    return lm.capabilities.reads_continuations


def scorable_canaries(lm: Scorer, canaries: pd.DataFrame) -> pd.DataFrame:
    """The canary variants `lm` can rank: all of them, except at top-logprobs access the wordings
    that put the value before the person ("Paris is where Ada Lovelace was born"): there the text
    before the value does not name the person, and the name's tokens, read after the value, are
    almost never in a server's top k."""
    if not reads_continuations(lm) or canaries.empty:
        return canaries
    return canaries[canaries["template"].map(value_follows_subject)]


def planned_variants(canaries: pd.DataFrame, top_logprobs: bool) -> pd.Series:
    """Per (subject_qid, property): the wordings M is taken over that a release at this access
    scores (all N_SCORED_VARIANTS, or at top-logprobs those naming the person before the value):
    what the memorization check holds each pair's n_variants to."""
    use = canaries[~canaries["kind"].isin(CONTEXTUALIZED_KINDS)]
    if top_logprobs:
        use = use[use["template"].map(value_follows_subject)]
    return use.groupby(["subject_qid", "property"])["variant_id"].nunique().rename("n_variants_planned")


def sentence_prefixes(rows: pd.DataFrame) -> dict[str, str]:
    """Each sentence of `expand_canaries` rows -> the text before its value (`text_before_value`):
    what a top-logprobs continuation starts after."""
    out: dict[str, str] = {}
    for template, h, h0, similar, s_h, s_h0, s_similar in zip(
            rows["template"], rows["subject"], rows["subject_generic"], rows["subject_similar"],
            rows["sentence_h"], rows["sentence_h0"], rows["sentences_similar"]):
        for name, sentence in ((h, s_h), (h0, s_h0), *zip(similar, s_similar)):
            if sentence not in out:
                out[sentence] = text_before_value(template, name)
    return out


def sentence_nlls(
    lm: Scorer,
    sentences: list[str],
    cache: dict[str, float] | None = None,
    progress: Callable[[int, int], None] | None = None,
    prefixes: dict[str, str] | None = None,
) -> np.ndarray:
    """The one place a release's sentence NLLs are computed: the local prefix-tree engine, or, for
    a release served behind an OpenAI-compatible endpoint, the server's prompt log-probabilities
    of the same token ids (same NLL, same cache semantics). At top-logprobs access, the NLL after
    each sentence's prefix (`prefixes`, from `sentence_prefixes`): the same ranks and score
    differences within a wording and name, read from the server's top k (`Scorer.sentence_nlls`)."""
    return lm.sentence_nlls(sentences, cache=cache, progress=progress, prefixes=prefixes)


def score_expanded(
    lm: Scorer,
    rows: pd.DataFrame,
    cache: dict[str, float] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """NLLs for the sentences of `expand_canaries` rows, every distinct sentence scored once.

    h0 sentences are the same string for every subject (same template and value), so the dedup
    in the engine and ``cache`` compute them once per (template, value) across subjects and shards.
    """
    similar_counts = rows["sentences_similar"].map(len).to_numpy()
    similar_flat = [s for group in rows["sentences_similar"] for s in group]
    sentences = [*rows["sentence_h"], *rows["sentence_h0"], *similar_flat]
    prefixes = sentence_prefixes(rows) if reads_continuations(lm) else None
    cache = {} if cache is None else cache
    nll = sentence_nlls(lm, sentences, cache=cache, progress=progress, prefixes=prefixes)
    n = len(rows)
    out = rows[["subject_qid", "property", "variant_id", "kind", "value", "value_label", "is_true"]].copy()
    out["nll_h"] = nll[:n]
    out["nll_h0"] = nll[n : 2 * n]
    splits = np.cumsum(similar_counts)[:-1]
    similar = np.split(nll[2 * n :], splits) if n else []
    out["nll_similar"] = [s.tolist() for s in similar]
    out["nll_similar_mean"] = [float(s.mean()) if len(s) else np.nan for s in similar]
    if prefixes is not None:  # top-logprobs: whether the person's continuation left the server's top k
        out[H_CENSORED] = lm.censored(rows["sentence_h"], cache)
        return out.reset_index(drop=True)[[*SCORE_COLUMNS, H_CENSORED]]
    return out.reset_index(drop=True)[SCORE_COLUMNS]


# What a shard's scores depend on, besides the model and the settings.
_CANARY_INPUTS = ["subject_qid", "variant_id", "kind", "template", "subject", "subject_generic", "subject_similar"]
_CANDIDATE_INPUTS = ["subject_qid", "value", "value_label", "is_true"]


def _frame_digest(frame: pd.DataFrame) -> str:
    ordered = frame.sort_values(list(frame.columns[:3]), kind="stable")
    return hashlib.sha256(ordered.to_json(orient="values", force_ascii=False).encode()).hexdigest()


@dataclass(frozen=True)
class Shard:
    property: str
    key: str  # content hash: same key <=> same canaries, candidates, model and settings
    canaries: pd.DataFrame
    candidates: pd.DataFrame


def plan_shards(
    canaries: pd.DataFrame, candidates: pd.DataFrame, model_fingerprint: str, settings: dict | None = None
) -> list[Shard]:
    """One shard per property, keyed by everything its scores depend on."""
    common = json.dumps({"model": model_fingerprint, "settings": settings or {}, "version": SCORING_VERSION}, sort_keys=True)
    shards = []
    for prop, shard_canaries in canaries.groupby("property", sort=True):
        shard_candidates = candidates[
            (candidates["property"] == prop) & candidates["subject_qid"].isin(shard_canaries["subject_qid"])
        ]
        digest = hashlib.sha256(
            "|".join(
                [common, _frame_digest(shard_canaries[_CANARY_INPUTS]), _frame_digest(shard_candidates[_CANDIDATE_INPUTS])]
            ).encode()
        ).hexdigest()[:20]
        shards.append(Shard(prop, f"{prop}-{digest}", shard_canaries, shard_candidates))
    return shards


class ShardStore:
    """Finished shards as Parquet files, written atomically (a killed run leaves no half file)."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def path(self, shard: Shard) -> Path:
        return self.directory / f"{shard.key}.parquet"

    def has(self, shard: Shard) -> bool:
        return self.path(shard).exists()

    def read(self, shard: Shard) -> pd.DataFrame:
        return pd.read_parquet(self.path(shard))

    def write(self, shard: Shard, scores: pd.DataFrame) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path(shard), lambda tmp: scores.to_parquet(tmp, index=False))


class SentenceNllCache:
    """sentence -> NLL for one model fingerprint and scoring settings, persisted in SQLite.

    Keys are 16-byte keyed BLAKE2b digests of the sentence under the instance secret
    (`security.keys`): no sentence is stored, and a guessed one ("X's occupation is journalist.")
    cannot be confirmed from the file; `forget` deletes a purged person's own sentences. WAL mode
    lets several runs of the same model (a cohort audit, requests) read and write at once.
    """

    LOOKUP_CHUNK = 500  # SQLite's bound-parameter limit is 999 on old builds

    def __init__(self, path: str | os.PathLike, secret: bytes | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._mac_key = purpose_key(SENTENCE_KEY_PURPOSE, secret)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS nll (key BLOB PRIMARY KEY, nll REAL NOT NULL) WITHOUT ROWID")

    @classmethod
    def for_model(cls, root: str | os.PathLike, model_fingerprint: str, settings: dict | None = None) -> SentenceNllCache:
        """The cache file of one model and settings under ``root``."""
        digest = hashlib.sha256(
            json.dumps({"model": model_fingerprint, "settings": settings or {}, "version": SCORING_VERSION,
                        "keys": SENTENCE_KEY_PURPOSE}, sort_keys=True).encode()
        ).hexdigest()[:20]
        return cls(Path(root) / f"{digest}.sqlite")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One connection per call, committed and closed (several processes share the file)."""
        conn = sqlite3.connect(self.path, timeout=120)
        try:
            with conn:
                yield conn
        finally:
            conn.close()

    def _key(self, sentence: str) -> bytes:
        return hashlib.blake2b(sentence.encode("utf-8"), key=self._mac_key, digest_size=16).digest()

    def forget(self, sentences) -> int:
        """Delete these sentences' entries and leave no trace of them in the file (secure_delete
        overwrites the freed cells, the checkpoint empties the write-ahead log); how many went."""
        keys = list({self._key(s) for s in sentences})
        gone = 0
        with self._connect() as conn:
            conn.execute("PRAGMA secure_delete=ON")
            for start in range(0, len(keys), self.LOOKUP_CHUNK):
                chunk = keys[start:start + self.LOOKUP_CHUNK]
                gone += conn.execute(f"DELETE FROM nll WHERE key IN ({','.join('?' * len(chunk))})", chunk).rowcount
        with self._connect() as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return gone

    def get_many(self, sentences) -> dict[str, float]:
        """The cached NLL of each of `sentences` that has one."""
        by_key = {self._key(s): s for s in dict.fromkeys(sentences)}
        keys, found = list(by_key), {}
        with self._connect() as conn:
            for start in range(0, len(keys), self.LOOKUP_CHUNK):
                chunk = keys[start:start + self.LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                for key, nll in conn.execute(f"SELECT key, nll FROM nll WHERE key IN ({marks})", chunk):
                    found[by_key[bytes(key)]] = nll
        return found

    def put_many(self, values: dict[str, float]) -> None:
        with self._connect() as conn:
            conn.executemany("INSERT OR IGNORE INTO nll (key, nll) VALUES (?, ?)",
                             ((self._key(s), float(v)) for s, v in values.items()))

    def __len__(self) -> int:
        with self._connect() as conn:
            return conn.execute("SELECT COUNT(*) FROM nll").fetchone()[0]


@dataclass
class ScoringReport:
    shards_total: int = 0
    shards_reused: int = 0
    shards_scored: int = 0
    sentences_scored: int = 0  # sentences of the scored shards (with repeats across subjects)
    sentences_computed: int = 0  # distinct sentences that went through the model (not cached)
    seconds: float = 0.0
    # Precision (`wikimem_platform.lm.precision`): the scored shards' distinct sentences, and how
    # many of them were re-scored in float32 so that every rank-1 is float32's (0 in float32).
    precision: str = ""  # "float32" | "bfloat16" | "float16" | "nf4" (several joined by "+"; "" before any)
    sentences_distinct: int = 0
    sentences_rescored: int = 0
    # The per-sentence error bound the re-scoring assumed: max(nats, share x NLL) (max over calls).
    nll_error_bound_nats: float = 0.0
    nll_error_bound_share: float = 0.0
    rescored_max_error: float = 0.0  # largest |low precision - float32| NLL seen among them
    # top-logprobs access: continuations read from the server's top k, and how many of them were
    # censored (a token outside the top k: their NLL is a lower bound)
    continuations: int = 0
    continuations_censored: int = 0
    # the shards this call planned, in order (each scored or reused): where its scores are stored
    shards: list[Shard] = dataclasses.field(default_factory=list)

    @property
    def sentences_per_second(self) -> float:
        return self.sentences_scored / self.seconds if self.seconds else 0.0

    @property
    def share_rescored(self) -> float:
        """Share of the scored shards' distinct sentences re-scored in float32."""
        return self.sentences_rescored / self.sentences_distinct if self.sentences_distinct else 0.0

    def add(self, other: ScoringReport) -> None:
        """Count another call's work in this one (a request's controls, scored in rounds)."""
        for field in dataclasses.fields(self):
            mine, theirs = getattr(self, field.name), getattr(other, field.name)
            if field.name == "precision":
                value = combined_precision([mine, theirs])
            elif field.name in ("nll_error_bound_nats", "nll_error_bound_share", "rescored_max_error"):
                value = max(mine, theirs)
            else:
                value = mine + theirs
            setattr(self, field.name, value)


def combined_precision(precisions) -> str:
    """Several reports' precisions as one ("bfloat16", "bfloat16+float32"; "" for none)."""
    return "+".join(sorted({part for p in precisions for part in str(p).split("+")} - {""}))


ENDPOINT_CHUNK_SENTENCES = 512  # a served model's NLLs are persisted every this many sentences


def cached_scorer(lm: Scorer, sentence_cache: SentenceNllCache | None) -> CachingScorer:
    """`lm` behind its persistent sentence cache (None: counted only); a served model's sentences
    go in chunks, each chunk's NLLs persisted as soon as it is back: a run killed or failed
    mid-shard re-sends at most one chunk (requests cost money and quota)."""
    return CachingScorer(lm, sentence_cache, ENDPOINT_CHUNK_SENTENCES if lm.capabilities.served else None)


def _shard_sentences(rows: pd.DataFrame) -> list[str]:
    """The distinct sentences of `expand_canaries` rows."""
    similar = (s for group in rows["sentences_similar"] for s in group)
    return list(dict.fromkeys([*rows["sentence_h"], *rows["sentence_h0"], *similar]))


def score_canaries(
    lm: Scorer,
    canaries: pd.DataFrame,
    candidates: pd.DataFrame,
    store: ShardStore,
    settings: dict | None = None,
    log: Callable[[str], None] = print,
    progress: Callable[[int, int], None] | None = None,
    sentence_cache: SentenceNllCache | None = None,
    float32_model: LoadedModel | None = None,
) -> tuple[pd.DataFrame, ScoringReport]:
    """Score all canaries shard by shard, reusing finished shards; returns (scores, report).

    sentence_cache: the model's persistent sentence cache, read before and filled after each
    scored shard. progress(done, total) is called as sentences are scored; without one, a line
    with counts, sentences/s and an ETA goes to `log` at least every LOG_EVERY_SECONDS.

    A bfloat16 / float16 / NF4 model's scores are brought to float32's verdicts: the sentences
    that could decide a rank-1 are re-scored by `float32_model` (default: `lm.float32_twin()`,
    loaded when first needed), as `precision.refine_to_float32` describes; settings'
    "float32_verdicts" entry configures it (`precision.Float32Verdicts`). The sentence cache
    keeps the model's own-precision NLLs; the stored shard holds the refined ones. The report
    states the precision and how many sentences were re-scored.

    At top-logprobs access only the wordings with the value after the person are scored
    (`scorable_canaries`); the others are left out of the shards, and the log says how many."""
    scorable = scorable_canaries(lm, canaries)
    if len(scorable) < len(canaries):
        log(f"{len(canaries) - len(scorable):,} of {len(canaries):,} canary variants put the value before the person: "
            f"not scored at {TOP_LOGPROBS} access")
    canaries = scorable
    shards = plan_shards(canaries, candidates, lm.fingerprint, settings)
    precision, rescoring = lm.rescoring_plan(settings)  # a served model's precision is its own: never re-scored
    scorer = cached_scorer(lm, sentence_cache)
    report = ScoringReport(shards_total=len(shards), precision=precision, shards=list(shards))
    censoring_before = (lm.censoring.sentences, lm.censoring.censored) if reads_continuations(lm) else None
    cache: dict[str, float] = {}
    float32_cache: dict[str, float] = {}  # the re-scored sentences, across shards
    frames = []
    for number, shard in enumerate(shards, start=1):
        if store.has(shard):
            report.shards_reused += 1
            frames.append(store.read(shard))
            log(f"shard {number}/{len(shards)} {shard.property}: finished earlier, reused")
            continue
        started = time.perf_counter()
        rows = expand_canaries(shard.canaries, shard.candidates)
        sentences = _shard_sentences(rows)
        shard_progress = progress or throttled(log, f"shard {number}/{len(shards)} {shard.property}",
                                               every=LOG_EVERY_SECONDS)
        computed_before = scorer.computed
        scores = score_expanded(scorer, rows, cache=cache, progress=shard_progress)
        report.sentences_computed += scorer.computed - computed_before
        report.sentences_distinct += len(sentences)
        if rescoring is not None:
            reference = float32_model if float32_model is not None else lm.float32_twin()
            scores, rescored = refine_to_float32(rows, scores, reference, precision, rescoring,
                                                 cache=float32_cache, log=log)
            report.sentences_rescored += rescored.sentences_rescored
            report.nll_error_bound_nats = max(report.nll_error_bound_nats, rescored.nll_error_bound[0])
            report.nll_error_bound_share = max(report.nll_error_bound_share, rescored.nll_error_bound[1])
            report.rescored_max_error = max(report.rescored_max_error, rescored.max_error_seen)
            log(f"shard {number}/{len(shards)} {shard.property}: {rescored.sentences_rescored:,} of "
                f"{rescored.sentences:,} sentences re-scored in float32 ({100 * rescored.share_rescored:.1f}%, "
                f"{rescored.rounds} rounds, bound max({rescored.nll_error_bound[0]:g} nats, "
                f"{100 * rescored.nll_error_bound[1]:g}% of the NLL), largest {precision} "
                f"error seen {rescored.max_error_seen:.3f})")
        store.write(shard, scores)
        elapsed = time.perf_counter() - started
        n_sentences = len(rows) * (2 + (rows["sentences_similar"].map(len).mean() if len(rows) else 0))
        report.shards_scored += 1
        report.sentences_scored += int(n_sentences)
        report.seconds += elapsed
        frames.append(store.read(shard))  # the same representation as a reused shard
        log(
            f"shard {number}/{len(shards)} {shard.property}: {len(scores):,} candidate rows, "
            f"{int(n_sentences):,} sentences in {elapsed:.1f}s ({n_sentences / max(elapsed, 1e-9):.0f} sentences/s)"
        )
    if censoring_before is not None:
        report.continuations = lm.censoring.sentences - censoring_before[0]
        report.continuations_censored = lm.censoring.censored - censoring_before[1]
        if report.continuations:
            log(f"top-{lm.details['top_k']} continuations: {report.continuations_censored:,} of {report.continuations:,} "
                "censored (a token outside the server's top k)")
    scores = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=SCORE_COLUMNS)
    return scores, report
