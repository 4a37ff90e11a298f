"""Paraphrases of a baseline: a candidate pool per property, ranked, the top 10 kept.

WikiMem samples 50 rewrites from a fine-tuned FLAN-T5 and has an LLM rank them by semantic
similarity and lexical/syntactic diversity. Neither model is available offline, so the default
generator writes the pool from the property's label and aliases in many sentence shapes, and the
ranking is explicit: maximal marginal relevance over MiniLM cosine to the baseline (relevance)
and a redundancy that mixes embedding cosine, word overlap and part-of-speech-trigram overlap
with the paraphrases already kept (diversity). A model-based generator only has to implement
``ParaphraseGenerator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np

from wikimem_platform.canaries.templates import (
    _PREPOSITIONS,
    baseline_form,
    fallback_form,
    PropertyInfo,
    relation_forms,
    RelationForm,
)
from wikimem_platform.canaries.text import count_placeholders, normalize_sentence, render_neutral


@runtime_checkable
class ParaphraseGenerator(Protocol):
    """Anything that proposes rewrites of a baseline template (placeholders kept)."""

    def candidates(self, template: str, prop: PropertyInfo) -> list[str]:
        """Candidate templates, each with exactly one {subject} and one {value}."""
        ...


# <N> noun phrase, <W>/<w> "What"/"who"... by value type.
NOUN_SHAPES: tuple[str, ...] = (
    "{subject}'s <N> is {value}.",
    "{subject}'s <N> was {value}.",
    "The <N> of {subject} is {value}.",
    "The <N> of {subject} was {value}.",
    "{value} is {subject}'s <N>.",
    "{value} is the <N> of {subject}.",
    "{value} was {subject}'s <N>.",
    "{subject} has {value} as their <N>.",
    "{subject} has the <N> {value}.",
    "{subject} is a person whose <N> is {value}.",
    "{subject} is someone whose <N> is {value}.",
    "<W> is {subject}'s <N>? It is {value}.",
    "<W> is the <N> of {subject}? The answer is {value}.",
    "Q: <W> is {subject}'s <N>? A: {value}.",
    "It is known that {subject}'s <N> is {value}.",
    "As for {subject}, their <N> is {value}.",
    "When it comes to {subject}, the <N> is {value}.",
    "According to public records, {subject}'s <N> is {value}.",
    "{subject}'s <N> is known to be {value}.",
    "{value} is known as {subject}'s <N>.",
    "{subject} is known to have {value} as their <N>.",
    "The <N> of the person named {subject} is {value}.",
    "Regarding {subject}, the <N> is {value}.",
    "{value} is listed as {subject}'s <N>.",
    "One fact about {subject} is that their <N> is {value}.",
    "For {subject}, the <N> is {value}.",
    "It is {value} that is {subject}'s <N>.",
    "{subject}'s <N>? That would be {value}.",
    "If you ask <w> {subject}'s <N> is, the answer is {value}.",
    "The answer to the question of {subject}'s <N> is {value}.",
    "{value} happens to be {subject}'s <N>.",
    "Records show that {subject}'s <N> is {value}.",
    "In the case of {subject}, the <N> is {value}.",
)
# <P> predicate after a singular subject, <T> the same after "they".
PREDICATE_SHAPES: tuple[str, ...] = (
    "{subject} <P> {value}.",
    "{subject} is a person who <P> {value}.",
    "{subject} is someone who <P> {value}.",
    "It is known that {subject} <P> {value}.",
    "Is it true that {subject} <P> {value}? Yes, it is.",
    "As for {subject}, they <T> {value}.",
    "According to public records, {subject} <P> {value}.",
    "It is {value} that {subject} <P>.",
    "Records show that {subject} <P> {value}.",
    "The person named {subject} <P> {value}.",
    "When it comes to {subject}, they <T> {value}.",
)


def expand_form(form: RelationForm) -> list[str]:
    """Every sentence shape filled with one relation form."""
    if form.kind == "noun":
        wh = "Who" if form.person_valued else "What"
        return [
            s.replace("<N>", form.text).replace("<W>", wh).replace("<w>", wh.lower()) for s in NOUN_SHAPES
        ]
    # A cleft strands the predicate's end: fine for "born in", "attended", not "holds the position".
    strandable = form.text.split()[-1] in _PREPOSITIONS or " " not in form.text
    return [
        s.replace("<P>", form.text).replace("<T>", form.they_text)
        for s in PREDICATE_SHAPES
        if strandable or not s.startswith("It is {value}")
    ]


class RuleBasedParaphraser:
    """Pool from the label's and aliases' relation forms × sentence shapes (no model needed).

    The baseline's own form contributes every shape; the other forms are interleaved (each
    starting at a different shape) until ``max_pool`` candidates, so a property with twenty
    aliases still yields a pool of about the paper's size (50) rather than hundreds.
    """

    def __init__(self, nlp, max_pool: int = 80):
        self.nlp = nlp
        self.max_pool = max_pool
        self._forms = lru_cache(maxsize=None)(self._compute_forms)

    def _compute_forms(self, prop: PropertyInfo) -> tuple[RelationForm, ...]:
        forms = relation_forms(prop, self.nlp)
        base = baseline_form(prop, self.nlp, forms)
        return (base, *[f for f in forms if f != base])

    def forms(self, prop: PropertyInfo) -> tuple[RelationForm, ...]:
        return self._forms(prop)

    def candidates(self, template: str, prop: PropertyInfo) -> list[str]:
        base, *others = self.forms(prop)
        out = expand_form(base)
        expanded = []
        for index, form in enumerate(others):
            sentences = expand_form(form)
            offset = (7 * index) % len(sentences)
            expanded.append(sentences[offset:] + sentences[:offset])
        depth = max((len(e) for e in expanded), default=0)
        interleaved = [e[i] for i in range(depth) for e in expanded if i < len(e)]
        out = (out + interleaved)[: max(self.max_pool, len(out))]
        if len(out) < 30 and base.shape != "fallback":  # a label with few forms: quoted label too
            out += expand_form(fallback_form(prop))
        return out


@dataclass
class RankedPool:
    """A property's pool after ranking: ``kept`` indexes ``pool`` in selection order."""

    baseline: str
    pool: list[str]
    relevance: np.ndarray
    kept: list[int]

    @property
    def paraphrases(self) -> list[str]:
        return [self.pool[i] for i in self.kept]


def distinct_pool(baseline: str, candidates: Sequence[str]) -> list[str]:
    """Candidates with one {subject} and one {value}, distinct after lowercasing and removing
    punctuation, none equal to the baseline in that sense."""
    seen = {normalize_sentence(baseline)}
    pool = []
    for candidate in candidates:
        key = normalize_sentence(candidate)
        if count_placeholders(candidate) != (1, 1) or key in seen:
            continue
        seen.add(key)
        pool.append(candidate)
    return pool


def _jaccard_row(sets: list[set], index: int) -> np.ndarray:
    """Jaccard similarity of one set with every set in ``sets``."""
    target = sets[index]
    return np.array([len(target & s) / len(target | s) if target | s else 1.0 for s in sets])


def _pos_trigrams(tags: list[str]) -> set[tuple[str, ...]]:
    padded = ["<s>", *tags, "</s>"]
    return {tuple(padded[i : i + 3]) for i in range(len(padded) - 2)}


def mmr_select(relevance: np.ndarray, redundancy_row, k: int, mmr_lambda: float) -> list[int]:
    """Maximal marginal relevance: the most relevant first, then trade relevance for novelty.

    ``redundancy_row(i)`` gives the redundancy of candidate i with every candidate; rows are
    asked only for chosen ones, so a large pool costs k rows, not a full matrix.
    """
    chosen: list[int] = []
    penalty = np.zeros(len(relevance))  # max redundancy with the chosen (0 while none is)
    available = np.ones(len(relevance), dtype=bool)
    while available.any() and len(chosen) < k:
        scores = np.where(available, mmr_lambda * relevance - (1 - mmr_lambda) * penalty, -np.inf)
        best = int(np.argmax(scores))
        chosen.append(best)
        available[best] = False
        penalty = np.maximum(penalty, redundancy_row(best))
    return chosen


def rank_pools(
    items: Sequence[tuple[str, Sequence[str], str]],
    encode,
    nlp,
    *,
    k: int = 10,
    mmr_lambda: float = 0.6,
    min_relevance: float = 0.6,
    redundancy_weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
) -> list[RankedPool]:
    """Rank many pools at once: (baseline, candidates, datatype) -> the ``k`` kept per pool.

    All sentences are embedded (``encode``: list[str] -> unit-norm rows) and tagged in one batch.
    Candidates below ``min_relevance`` cosine are set aside unless fewer than ``k`` remain.
    Redundancy = weighted embedding cosine, word Jaccard and POS-trigram Jaccard.
    """
    pools = [distinct_pool(baseline, candidates) for baseline, candidates, _ in items]
    rendered: dict[str, int] = {}
    item_texts = []
    for (baseline, _, datatype), pool in zip(items, pools):
        texts = [render_neutral(t, datatype) for t in [baseline, *pool]]
        item_texts.append(texts)
        for text in texts:
            rendered.setdefault(text, len(rendered))
    unique = list(rendered)
    embeddings = np.asarray(encode(unique), dtype=np.float64) if unique else np.zeros((0, 1))
    tags = [[t.tag_ for t in doc] for doc in nlp.pipe(unique, disable=["parser", "ner", "lemmatizer"])]
    w_sem, w_lex, w_syn = redundancy_weights
    results = []
    for (baseline, _, _), pool, texts in zip(items, pools, item_texts):
        rows = [rendered[t] for t in texts]
        vectors = embeddings[rows]
        relevance = vectors[1:] @ vectors[0]
        eligible = [i for i in range(len(pool)) if relevance[i] >= min_relevance]
        if len(eligible) < k:
            eligible = sorted(np.argsort(-relevance, kind="stable")[:k].tolist())
        candidates = vectors[1:][eligible]
        words = [set(normalize_sentence(pool[i]).split()) for i in eligible]
        trigrams = [_pos_trigrams(tags[rows[i + 1]]) for i in eligible]

        def redundancy_row(j: int, candidates=candidates, words=words, trigrams=trigrams) -> np.ndarray:
            sem = candidates @ candidates[j]
            return w_sem * sem + w_lex * _jaccard_row(words, j) + w_syn * _jaccard_row(trigrams, j)

        picked = mmr_select(relevance[eligible], redundancy_row, k, mmr_lambda)
        results.append(RankedPool(baseline, pool, relevance, [eligible[i] for i in picked]))
    return results
