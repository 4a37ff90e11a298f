"""The scoring resource's device, dtype and batch size reach every model path (issue 37.4), on CPU
with the planted model: the NLL engine, the generator, the MIA pass, the float32 re-scoring
model and reference unlearning. tests/unit/lm/test_cuda_paths.py runs the same paths on a GPU."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors import safe_open

from resources.scoring import ScoringResource
from wikimem_platform.lm.generation import GENERATION_AUTO_BATCH, generation_batch_size, greedy_generate
from wikimem_platform.lm.loading import DEFAULT_CPU_BATCH_SIZE, ModelLoadError
from wikimem_platform.lm.nll import score_sentences
from wikimem_platform.mia.model_pass import token_stats
from wikimem_platform.registry import ModelEntry
from wikimem_platform.unlearning.methods import check_fits, full_finetune_bytes, unlearn, UnlearnConfig

pytestmark = pytest.mark.slow


def corpus_sentences(model_dir, n: int) -> list[str]:
    """The first n sentences of the planted model's training biographies."""
    out = []
    with open(model_dir / "corpus.jsonl", encoding="utf-8") as lines:
        for line in lines:
            out += json.loads(line)["sentences"]
            if len(out) >= n:
                return out[:n]
    return out


def steps_of(calls: list[tuple[int, int]]) -> list[int]:
    """How much each progress call advanced: the size of each batch."""
    done = [d for d, _ in calls]
    return [b - a for a, b in zip([0, *done], done)]


@pytest.fixture(scope="module")
def sentences(planted_model) -> list[str]:
    return corpus_sentences(planted_model, 48)


def test_dtype_reaches_the_generator_and_the_mia_pass(planted_model, sentences):
    reduced = ScoringResource(dtype="bfloat16").load_reference(str(planted_model))
    full = ScoringResource().load_reference(str(planted_model))
    assert reduced.dtype == torch.bfloat16 and {p.dtype for p in reduced.model.parameters()} == {torch.bfloat16}
    assert full.dtype == torch.float32

    prompts = [" ".join(s.split()[:4]) for s in sentences[:8]]
    outputs = greedy_generate(reduced, prompts, max_new_tokens=8)
    assert len(outputs) == 8 and all(isinstance(o, str) for o in outputs) and any(outputs)

    reduced_stats = token_stats(reduced, sentences[:16])
    full_stats = token_stats(full, sentences[:16])
    gaps = np.concatenate([r.token_logprobs - f.token_logprobs for r, f in zip(reduced_stats, full_stats)])
    # the bfloat16 weights ran (their rounding moves the log-probabilities), and the pass still
    # reads the same tokens: every position scored, in float64
    assert np.abs(gaps).max() > 1e-4
    assert all(r.token_logprobs.dtype == np.float64 and len(r.token_logprobs) == len(f.token_logprobs)
               for r, f in zip(reduced_stats, full_stats))


def test_batch_size_reaches_the_engine_the_generator_and_the_mia_pass(planted_model, sentences):
    small = ScoringResource(batch_size=3).load_reference(str(planted_model))
    auto = ScoringResource().load_reference(str(planted_model))
    assert small.batch_size == 3 and small.details["batch_size_requested"] == 3
    assert auto.batch_size == DEFAULT_CPU_BATCH_SIZE and auto.details["batch_size_requested"] == "auto"

    # engine: 3 x 32 tree tokens a forward instead of 64 x 32 (one packed chunk a forward here,
    # where every chunk fitted one forward), the same NLLs
    small_calls, auto_calls = [], []
    small_nll = score_sentences(small, sentences, progress=lambda d, t: small_calls.append((d, t)))
    auto_nll = score_sentences(auto, sentences, progress=lambda d, t: auto_calls.append((d, t)))
    assert len(small_calls) > len(auto_calls) == 1
    np.testing.assert_allclose(small_nll, auto_nll, atol=1e-4)

    # generator: an explicit size is honoured, an automatic one capped
    assert generation_batch_size(small) == 3
    assert generation_batch_size(auto) == min(DEFAULT_CPU_BATCH_SIZE, GENERATION_AUTO_BATCH)
    prompts = [" ".join(s.split()[:4]) for s in sentences[:10]]
    calls = []
    small_out = greedy_generate(small, prompts, max_new_tokens=6, progress=lambda d, t: calls.append((d, t)))
    assert steps_of(calls) == [3, 3, 3, 1]
    assert small_out == greedy_generate(auto, prompts, max_new_tokens=6)

    # MIA pass: batches of about 3 x 32 tokens (a planted sentence is 10-30 tokens)
    small_calls, auto_calls = [], []
    token_stats(small, sentences, progress=lambda d, t: small_calls.append((d, t)))
    token_stats(auto, sentences, progress=lambda d, t: auto_calls.append((d, t)))
    widths = sorted((len(ids) for ids in small.encode(sentences)), reverse=True)
    assert max(steps_of(small_calls)) <= 96 // min(widths) and len(small_calls) > len(auto_calls) == 1


def test_the_float32_model_of_a_reduced_run_keeps_device_and_batch_size(planted_model):
    lm = ScoringResource(dtype="bfloat16", batch_size=5).load_reference(str(planted_model))
    twin = lm.float32_twin()
    assert twin.dtype == torch.float32 and twin.device == lm.device and twin.batch_size == 5
    assert twin.details["batch_size_requested"] == 5


def test_a_registered_reference_does_not_replace_the_release(planted_model, short_planted_model):
    scoring = ScoringResource(dtype="bfloat16", batch_size=7)
    release = ModelEntry(name="planted", revision="1", source_kind="hf-dir", source=str(planted_model))
    other = ModelEntry(name="planted-e50", revision="1", source_kind="hf-dir", source=str(short_planted_model))
    lm = scoring.load(release)
    reference = scoring.load_reference(other)
    assert reference.name == short_planted_model.name and reference.dtype == torch.bfloat16 and reference.batch_size == 7
    assert scoring.load(release) is lm  # still the one loaded


def test_the_resource_refuses_what_cannot_run_before_loading():
    with pytest.raises(ModelLoadError, match="nf4.*needs device='cuda'"):
        ScoringResource(quantization="nf4").validate()
    with pytest.raises(ModelLoadError, match="unknown dtype 'float8'"):
        ScoringResource(dtype="float8").validate()
    with pytest.raises(ModelLoadError, match="batch_size must be >= 1"):
        ScoringResource(batch_size=0).validate()
    with pytest.raises(ModelLoadError, match="fusion must be one of auto, none, layers, norms-mlp, got 'fast'"):
        ScoringResource(fusion="fast").validate()
    ScoringResource(dtype="bf16", batch_size=1).validate()


def test_the_fusion_setting_reaches_the_engine_and_the_float32_model(planted_model):
    """On CPU "auto" leaves the engine eager; a scope set in the resource is what the engine compiles,
    for the float32 re-scoring model of a reduced run too (tests/unit/lm/test_fusion.py: same NLLs)."""
    assert ScoringResource().load_reference(str(planted_model)).fusion is None
    lm = ScoringResource(dtype="bfloat16", fusion="layers").load_reference(str(planted_model))
    assert lm.fusion == "layers" and lm.float32_twin().fusion == "layers"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")
def test_cuda_without_a_gpu_is_refused_by_the_resource_and_unlearning(planted_model, tmp_path):
    with pytest.raises(ModelLoadError, match="no CUDA GPU is available"):
        ScoringResource(device="cuda").validate()
    with pytest.raises(ModelLoadError, match="no CUDA GPU is available"):
        unlearn(planted_model, ["a forget text"], [], tmp_path / "out", UnlearnConfig(retain_loss="nll"), device="cuda")
    assert not (tmp_path / "out").exists()


def test_unlearning_trains_and_saves_in_the_dtype_asked_for(planted_model, sentences, tmp_path):
    config = UnlearnConfig(method="npo", steps=2, batch_size=4, retain_loss="nll")
    result = unlearn(planted_model, sentences[:4], sentences[4:12], tmp_path / "bf16", config, log=lambda m: None,
                     device="cpu", dtype="bfloat16")
    assert result.manifest["device"] == "cpu" and result.manifest["dtype"] == "bfloat16"
    with safe_open(str(result.model_dir / "model.safetensors"), "pt") as weights:
        assert {weights.get_tensor(name).dtype for name in weights.keys()} == {torch.bfloat16}
    assert all(np.isfinite(step["forget"]) for step in result.manifest["losses"])
    with pytest.raises(ValueError, match="float16 full fine-tuning needs loss scaling"):
        unlearn(planted_model, sentences[:4], [], tmp_path / "fp16", config, dtype="float16")


def test_full_finetuning_memory_is_counted_and_cpu_is_not_refused(planted_model):
    count = sum(p.numel() for p in ScoringResource().load_reference(str(planted_model)).model.parameters())
    assert full_finetune_bytes(count, torch.float32, with_reference=True) == count * 4 * 5
    assert full_finetune_bytes(count, torch.bfloat16, with_reference=False) == count * 2 * 4
    assert check_fits(planted_model, torch.device("cpu"), torch.float32, True) == count * 20
