"""The NLL engine against naive full-sentence scoring and against a hand computation, on both
shipped models."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from wikimem_platform.lm.nll import (
    _build_chunks,
    score_sentences,
    score_sentences_naive,
    score_token_ids,
)

TOLERANCE = 1e-3  # nats

SUBJECTS = ["Albert Einstein", "Marie Curie", "This person", "Trebla Einstein"]
VALUES = ["physicist", "chemist", "theoretical physicist", "singer-songwriter", "Nobel laureate"]
TEMPLATES = [
    "{subject}'s occupation is {value}.",  # value last: long shared prefix
    "{Value} is the occupation of {subject}.",  # value first: shared prefix is the start token
    "{subject} worked as a {value} for many years.",  # value in the middle
]


def workload() -> list[str]:
    sentences = [
        t.format(subject=s, value=v, Value=v[0].upper() + v[1:])
        for t in TEMPLATES
        for s in SUBJECTS
        for v in VALUES
    ]
    # a sentence that is a prefix of another, repeats, a bare word, an empty sentence
    return sentences + ["Paris", "Paris is", "Paris is the capital of France.", sentences[0], "", "Paris"]


def test_engine_equals_naive_on_both_models(shipped_lm):
    sentences = workload()
    engine = score_sentences(shipped_lm, sentences)
    naive = score_sentences_naive(shipped_lm, sentences, batch_size=16)
    assert engine.shape == (len(sentences),)
    assert np.abs(engine - naive).max() < TOLERANCE
    assert engine[-2] == 0.0  # nothing after the start token
    assert engine[0] == engine[-3] and engine[-1] == engine[-6]  # repeats scored once
    assert (engine[:-2] > 0).all()


def test_value_first_and_multi_token_values_really_are_in_the_workload(shipped_lm):
    """The comparison above must cover values of several tokens and prefixes of one token."""
    ids = shipped_lm.encode(["Theoretical physicist is the occupation of Marie Curie.",
                             "Chemist is the occupation of Marie Curie."])
    shared = next(i for i, (a, b) in enumerate(zip(*ids)) if a != b)
    assert shared == 1  # only the start token is shared
    for value in ("theoretical physicist", "singer-songwriter"):
        assert len(shipped_lm.encode([value])[0]) >= 3  # start token + at least 2 value tokens


def test_chunking_does_not_change_results(smollm2):
    """Tiny rows (8 inner nodes) and forwards (20 nodes) cut the prefix tree everywhere,
    re-adding shared prefixes across chunks and padding rows of unequal length."""
    sentences = workload()[::3]
    default = score_sentences(smollm2, sentences)
    tiny = score_sentences(smollm2, sentences, chunk_tokens=8, batch_tokens=20)
    assert np.abs(default - tiny).max() < TOLERANCE


def test_two_token_sentence_by_hand(shipped_lm):
    """NLL of <start> w = -log softmax(logits after <start>)[w], computed in float64."""
    ids = shipped_lm.encode(["Paris"])[0]
    assert len(ids) == 2, ids
    with torch.inference_mode():
        logits = shipped_lm.model(torch.tensor([ids[:1]])).logits[0, -1].double()
    peak = logits.max().item()
    log_norm = peak + math.log(sum(math.exp(x - peak) for x in logits.tolist()))
    by_hand = -(logits[ids[1]].item() - log_norm)
    assert by_hand > 0
    assert score_sentences(shipped_lm, ["Paris"])[0] == pytest.approx(by_hand, abs=1e-4)
    assert score_sentences_naive(shipped_lm, ["Paris"])[0] == pytest.approx(by_hand, abs=1e-4)


def test_three_token_sentence_is_the_sum_of_two_steps(gemma3):
    ids = gemma3.encode(["Paris is"])[0]
    assert len(ids) == 3
    with torch.inference_mode():
        logprobs = torch.log_softmax(gemma3.model(torch.tensor([ids])).logits[0].double(), dim=-1)
    by_hand = -(logprobs[0, ids[1]] + logprobs[1, ids[2]]).item()
    assert score_sentences(gemma3, ["Paris is"])[0] == pytest.approx(by_hand, abs=1e-4)


def test_known_sanity_figures(shipped_lm):
    """Total NLLs measured when the models were first tried here (notes/offline-models.md)."""
    expected = {"smollm2-135m-instruct": (24.5, 36.8), "gemma-3-270m": (19.5, 33.2)}[shipped_lm.name]
    france, brazil = score_sentences(
        shipped_lm, ["Paris is the capital of France.", "Paris is the capital of Brazil."]
    )
    assert france == pytest.approx(expected[0], abs=0.1)
    assert brazil == pytest.approx(expected[1], abs=0.1)


def test_cache_is_read_and_filled(smollm2):
    cache = {"Paris is": 123.0}  # a planted value: must be returned, not recomputed
    calls = []
    result = score_sentences(
        smollm2, ["Paris is", "Rome is", "Rome is", "Oslo is"], cache=cache,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert result[0] == 123.0 and result[1] == result[2]
    assert set(cache) == {"Paris is", "Rome is", "Oslo is"}
    assert calls and calls[-1] == (2, 2)  # two distinct sentences were not cached
    again = score_sentences(smollm2, ["Oslo is"], cache=cache, progress=lambda *a: calls.append(a))
    assert again[0] == cache["Oslo is"] and len(calls) == 1  # nothing computed the second time


def test_empty_input(smollm2):
    assert score_sentences(smollm2, []).shape == (0,)
    assert score_sentences_naive(smollm2, []).shape == (0,)


def test_sentences_longer_than_the_sliding_window_take_the_naive_path(gemma3, monkeypatch):
    """With a (patched) window of 6, longer sentences skip the tree; results still agree with
    naive scoring under the same window."""
    monkeypatch.setattr(gemma3.model.config, "sliding_window", 6)
    sentences = ["Paris is", "Marie Curie's occupation is theoretical physicist.", "Oslo is cold."]
    engine = score_sentences(gemma3, sentences)
    naive = score_sentences_naive(gemma3, sentences)
    assert np.abs(engine - naive).max() < TOLERANCE


def test_prefix_tree_layout_by_hand():
    """[1,2,3], [1,2,4], [1,5]: nodes 1,2,3,4,5 with 1 and 2 inner; [7] is a lone root."""
    (chunk,) = _build_chunks([(1, 2, 3), (1, 5), (1, 2, 4), (7,)], [10, 11, 12, 13], 100)
    assert chunk.tokens == [1, 2, 3, 4, 5, 7]
    assert chunk.parents == [-1, 0, 1, 1, 0, -1]
    assert chunk.depths == [0, 1, 2, 2, 1, 0]
    assert dict(zip(chunk.sentence_ids, chunk.end_nodes)) == {10: 2, 12: 3, 11: 4, 13: 5}
    assert chunk.n_inner == 2
    # room for 2 inner nodes per chunk: [1,5,6] would make 5 a third one, so it starts a new
    # chunk with its whole path; [1,2,4] adds only a leaf
    first, second = _build_chunks([(1, 2, 3), (1, 5, 6), (1, 2, 4)], [0, 1, 2], 2)
    assert first.tokens == [1, 2, 3, 4] and first.n_inner == 2
    assert second.tokens == [1, 5, 6] and second.parents == [-1, 0, 1] and second.n_inner == 2
    # a sentence extending another turns the other's last node into an inner node
    (chunk,) = _build_chunks([(1, 2, 3), (1, 2)], [0, 1], 100)
    assert chunk.tokens == [1, 2, 3] and chunk.n_inner == 2


def test_token_ids_interface_matches_sentences(smollm2):
    sentences = ["Marie Curie was a chemist.", "Marie Curie was a physicist."]
    by_ids = score_token_ids(smollm2, smollm2.encode(sentences))
    assert np.array_equal(by_ids, score_sentences(smollm2, sentences))
