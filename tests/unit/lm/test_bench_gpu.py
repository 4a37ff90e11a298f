"""`benchmarks/bench_gpu.py`'s CPU smoke mode (issue 19, item 4): the GPU benchmark's code runs in
CI without a GPU — engine vs naive on a shipped model in float32, and the paper-scale projection
on a tiny random Llama — and its arithmetic is checked by hand."""

from __future__ import annotations

import math

import pytest

import benchmarks.bench_gpu as bench_gpu
from benchmarks.bench_gpu import (
    LLAMA_8B,
    LLAMA_TINY,
    PAPER_WORKLOAD,
    TOLERANCE,
    main,
    paper_workload_ids,
    random_model,
    shape_parameters,
)


def test_llama_8b_shape_has_its_published_parameter_count():
    assert shape_parameters(LLAMA_8B) == 8_030_261_248  # Llama-3.1-8B: "8.03B"


def test_paper_workload_has_the_papers_sharing_structure():
    import numpy as np

    ids = paper_workload_ids(1, 1000, np.random.default_rng(0))
    w = PAPER_WORKLOAD
    assert len(ids) == w["properties"] * w["variants"] * w["subject_forms"] * w["candidates"]  # 22,220
    assert all(sequence[0] == 1 for sequence in ids)
    # 101 candidates share one prefix (template head, subject form, template tail).
    block = ids[: w["candidates"]]
    shortest = min(map(len, block))
    assert len({tuple(s[: shortest - 4]) for s in block}) == 1


def test_random_model_takes_load_models_auto_batch_budget(monkeypatch):
    """Not a hard-coded 64: what `load_model(batch_size="auto")` gives on the device (on CUDA
    sized by the free memory once the weights are in place)."""
    import torch

    asked = []

    def auto(batch_size, device, vocab_size):
        asked.append((batch_size, device.type, vocab_size))
        return 123

    monkeypatch.setattr(bench_gpu, "resolve_batch_size", auto)
    lm = random_model(LLAMA_TINY, torch.float32, torch.device("cpu"), load_in_4bit=False)
    assert lm.batch_size == 123 and asked == [("auto", "cpu", LLAMA_TINY["vocab_size"])]


@pytest.mark.slow
def test_cpu_smoke_run_scores_within_tolerance_and_projects_the_paper_audit(capsys):
    shipped, paper = main(["--device", "cpu", "--smoke", "--paper-scale", "--models", "smollm2-135m-instruct"])
    [row] = shipped
    assert row["dtype"] == "float32" and row["sentences"] == 1 * 1 * 11 * 5 * 4
    assert row["max_delta_vs_naive"] <= TOLERANCE["float32"] and row["within_tolerance"]
    assert row["max_delta_vs_float32"] == 0.0  # the float32 engine is its own reference
    assert row["ratio"] > 0 and row["peak_gib"] is None  # no GPU memory on CPU
    [projection] = paper
    total = math.prod(PAPER_WORKLOAD.values())
    assert projection["sample_sentences"] == 2000
    assert projection["batch_tokens"] == 64 * 32  # the auto budget on CPU
    assert projection["projected_hours"] == pytest.approx(total / projection["sentences_per_s"] / 3600)
    assert "full audit (4,444,000 sentences)" in capsys.readouterr().out
