"""The NLL engine against naive full-sentence scoring and against a hand computation, on both
shipped models."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from wikimem_platform.lm import nll
from wikimem_platform.lm.nll import (
    _build_forest,
    _tree_attention_mask,
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


def chunk_view(forest, c):
    """Chunk c's nodes with parents local to the chunk, as lists."""
    a, b = forest.chunk_starts[c], forest.chunk_starts[c + 1]
    parents = [int(p - a) if p >= 0 else -1 for p in forest.parents[a:b]]
    return forest.tokens[a:b].tolist(), parents, forest.depths[a:b].tolist(), int(forest.n_inner[c])


def test_prefix_tree_layout_by_hand():
    """[1,2,3], [1,2,4], [1,5]: nodes 1,2,3,4,5 with 1 and 2 inner (columns 0 and 1)."""
    forest = _build_forest([(1, 2, 3), (1, 5), (1, 2, 4)], 100)
    assert forest.n_chunks == 1
    assert chunk_view(forest, 0) == ([1, 2, 3, 4, 5], [-1, 0, 1, 1, 0], [0, 1, 2, 2, 1], 2)
    assert forest.end_nodes.tolist() == [2, 4, 3]  # input order
    assert forest.inner_col.tolist() == [0, 1, -1, -1, -1]
    # room for 2 inner nodes per chunk: [1,5,6] would make 5 a third one, so it starts a new
    # chunk with its whole path; [1,2,4] adds only a leaf
    forest = _build_forest([(1, 2, 3), (1, 5, 6), (1, 2, 4)], 2)
    assert forest.n_chunks == 2
    assert chunk_view(forest, 0) == ([1, 2, 3, 4], [-1, 0, 1, 1], [0, 1, 2, 2], 2)
    assert chunk_view(forest, 1) == ([1, 5, 6], [-1, 0, 1], [0, 1, 2], 2)
    assert forest.inner_col.tolist() == [0, 1, -1, -1, 0, 1, -1]  # columns restart per chunk
    # a sentence extending another turns the other's last node into an inner node
    forest = _build_forest([(1, 2, 3), (1, 2)], 100)
    assert chunk_view(forest, 0)[0] == [1, 2, 3] and forest.n_inner.tolist() == [2]
    assert forest.end_nodes.tolist() == [2, 1]
    # a sentence longer than a chunk gets a chunk of its own
    forest = _build_forest([(1, 2, 3, 4), (1, 2, 5)], 2)
    assert forest.n_inner.tolist() == [3, 2]


def test_forest_paths_spell_every_sequence_on_random_cases():
    """On 200 random sequences over 3 tokens (many shared prefixes): following parents from each
    sequence's end node spells the sequence within its own chunk, depths count from the chunk's
    root, and no chunk holds more than chunk_tokens inner nodes unless it is one sequence's."""
    rng = np.random.default_rng(0)
    sequences = list(dict.fromkeys(tuple(rng.integers(0, 3, rng.integers(2, 9)).tolist()) for _ in range(200)))
    forest = _build_forest(sequences, 6)
    chunk_of = np.searchsorted(forest.chunk_starts, np.arange(len(forest.tokens)), side="right") - 1
    for seq, end in zip(sequences, forest.end_nodes):
        path, node = [], int(end)
        while node >= 0:
            assert chunk_of[node] == chunk_of[end] and forest.depths[node] == len(seq) - 1 - len(path)
            path.append(int(forest.tokens[node]))
            node = int(forest.parents[node])
        assert tuple(reversed(path)) == seq
    ends_per_chunk = np.bincount(chunk_of[forest.end_nodes], minlength=forest.n_chunks)
    assert forest.n_ends.tolist() == ends_per_chunk.tolist()
    assert all(width <= 6 or ends == 1 for width, ends in zip(forest.n_inner, forest.n_ends))


def test_tree_attention_mask_by_hand():
    """Row [root, a, b, c] with a <- root, b <- a, c <- root, then one padding column."""
    parents = torch.tensor([[-1, 0, 1, 0, -1]])
    mask = _tree_attention_mask(parents, depth=2, dtype=torch.float32)[0, 0] == 0
    assert mask.tolist() == [
        [True, False, False, False, False],
        [True, True, False, False, False],
        [True, True, True, False, False],
        [True, False, False, True, False],
        [False, False, False, False, True],
    ]


def test_token_ids_interface_matches_sentences(smollm2):
    sentences = ["Marie Curie was a chemist.", "Marie Curie was a physicist."]
    by_ids = score_token_ids(smollm2, smollm2.encode(sentences))
    assert np.array_equal(by_ids, score_sentences(smollm2, sentences))


def test_gpu_layout_gives_the_same_scores_on_cpu(smollm2, monkeypatch):
    """What CUDA changes, run on CPU: widths rounded up to 64 (padding columns in every row),
    lm_head in blocks of 7 rows (scored nodes of one parent split across blocks never), and the
    attention restricted to the SDPA backends chosen for CUDA."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    sentences = workload()
    ids = smollm2.encode(list(dict.fromkeys(sentences)))
    default = score_token_ids(smollm2, ids)
    forest = _build_forest([tuple(s) for s in ids if len(s) > 1], 16)
    chosen = []
    monkeypatch.setattr(nll, "_attention_backend", lambda device: chosen.append(device) or sdpa_kernel(
        [SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]))
    [(forest, node_logprob)] = nll._score_segments(smollm2, [[tuple(s) for s in ids if len(s) > 1]], 16, 50, None,
                                                   width_step=64, logit_rows=7)
    gpu_layout = -nll._path_sums(forest, node_logprob)[forest.end_nodes]
    expected = default[[i for i, s in enumerate(ids) if len(s) > 1]]
    assert chosen and np.abs(gpu_layout - expected).max() < TOLERANCE


def test_segments_give_the_same_scores(smollm2, monkeypatch):
    """Sorted sentences cut into segments of 5, each its own forest laid out by the packing
    thread while the previous one runs: the same NLLs, progress counting every sentence."""
    sentences = workload()
    whole = score_sentences(smollm2, sentences)
    monkeypatch.setattr(nll, "SEGMENT_SEQUENCES", 5)
    calls = []
    segmented = score_sentences(smollm2, sentences, progress=lambda done, total: calls.append((done, total)))
    assert np.abs(segmented - whole).max() < TOLERANCE
    distinct = len(set(sentences))
    assert len(calls) > 5 and calls[-1] == (distinct, distinct)


def test_an_error_in_a_forward_stops_the_packing_thread(smollm2, monkeypatch):
    """A failing forward (out of memory, say) reaches the caller; the thread does not linger."""
    import threading

    def fail(*args, **kwargs):
        raise RuntimeError("forward failed")

    monkeypatch.setattr(nll, "_run_packed", fail)
    monkeypatch.setattr(nll, "SEGMENT_SEQUENCES", 3)
    with pytest.raises(RuntimeError, match="forward failed"):
        score_sentences(smollm2, workload(), chunk_tokens=4, batch_tokens=4)
    assert not any(t.name == "nll-packer" for t in threading.enumerate())
