"""Every model path on CUDA against the same planted model on CPU (issue 37.4): the NLL engine,
greedy generation, the MIA pass, reference unlearning, and the scoring resource building a CUDA
model with its dtype and batch size. Skipped, with the reason, where no CUDA GPU is visible (CI,
this project's CPU machines); tests/unit/lm/test_model_settings.py checks on CPU that the settings reach
each path.

The planted model comes from the `planted_model` fixture, or from $WIKIMEM_PLANTED_DIR (a copy
of the trained directory) on a GPU machine that has torch and transformers but not this
project's other dependencies (run there with `pytest --noconftest`): the resource test then skips
when Dagster cannot be imported. Measured numbers are printed (`-s` shows them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.support.random_models import audit_shaped_ids, tiny_gemma3, tiny_llama
from wikimem_platform.lm.generation import greedy_generate
from wikimem_platform.lm.loading import load_model
from wikimem_platform.lm.nll import score_sentences, score_sentences_naive, score_token_ids
from wikimem_platform.lm.precision import NLL_ERROR_BOUND
from wikimem_platform.mia.model_pass import gradient_norms, token_stats
from wikimem_platform.unlearning.methods import check_fits, unlearn, UnlearnConfig, UnlearningDoesNotFit

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(),
                       reason="needs a CUDA GPU (torch.cuda.is_available() is False); the settings' flow is "
                              "checked on CPU in tests/unit/lm/test_model_settings.py"),
    pytest.mark.slow,
]

ENGINE_TOLERANCE = 1e-3  # nats per sentence, float32 on CUDA kernels vs CPU (measured 1.5e-5 on an H200)
STATS_TOLERANCE = 1e-3  # per-token log-probability, mean and variance of the next-token distribution
PLANTED_DIR_ENV = "WIKIMEM_PLANTED_DIR"


@pytest.fixture(scope="module")
def model_dir(request) -> Path:
    given = os.environ.get(PLANTED_DIR_ENV)
    return Path(given) if given else request.getfixturevalue("planted_model")


@pytest.fixture(scope="module")
def sentences(model_dir) -> list[str]:
    """The planted training sentences, plus each one's first words completed by other sentences'
    endings: prefixes shared the way an audit's candidates share them."""
    out = []
    with open(model_dir / "corpus.jsonl", encoding="utf-8") as lines:
        for line in lines:
            out += json.loads(line)["sentences"]
    out = out[:200]
    endings = [s.split()[-1] for s in out[:20]]
    return out + [" ".join(s.split()[:-1] + [e]) for s in out[:20] for e in endings]


@pytest.fixture(scope="module")
def cpu_lm(model_dir):
    return load_model(str(model_dir), device="cpu")


@pytest.fixture(scope="module")
def cuda_lm(model_dir):
    return load_model(str(model_dir), device="cuda", batch_size=32)


def test_engine_on_cuda_equals_cpu_in_float32(cpu_lm, cuda_lm, sentences):
    """The CUDA engine runs compiled decoder layers (fusion "auto"), the CPU one eager layers."""
    assert cuda_lm.device.type == "cuda" and cuda_lm.dtype == torch.float32 and cuda_lm.batch_size == 32
    assert cuda_lm.fusion == "layers" and cpu_lm.fusion is None
    on_cpu = score_sentences(cpu_lm, sentences)
    on_cuda = score_sentences(cuda_lm, sentences)
    naive_cuda = score_sentences_naive(cuda_lm, sentences)
    print(f"\nMEASURED engine {len(sentences)} sentences: |cuda - cpu| max {np.abs(on_cuda - on_cpu).max():.2e}, "
          f"|cuda engine - cuda naive| max {np.abs(on_cuda - naive_cuda).max():.2e} nats")
    np.testing.assert_allclose(on_cuda, on_cpu, rtol=0, atol=ENGINE_TOLERANCE)
    np.testing.assert_allclose(on_cuda, naive_cuda, rtol=0, atol=ENGINE_TOLERANCE)


@pytest.mark.parametrize("architecture", ["llama", "gemma3"])
@pytest.mark.parametrize("scope", ["layers", "norms-mlp"])
def test_the_compiled_engine_on_cuda_gives_the_eager_engines_nlls(architecture, scope):
    """float32: compiled (Triton) and eager within ENGINE_TOLERANCE. bfloat16: compiled within the
    per-sentence error bound that re-scoring near-ties in float32 relies on (precision.NLL_ERROR_BOUND)."""
    scored = {}
    for dtype in (torch.float32, torch.bfloat16):
        lm = {"llama": tiny_llama, "gemma3": tiny_gemma3}[architecture]("cuda", dtype)
        ids = audit_shaped_ids(lm.model.config.vocab_size)
        scored[dtype, None] = score_token_ids(lm, ids)
        lm.fusion = scope
        scored[dtype, scope] = score_token_ids(lm, ids)
    reference = scored[torch.float32, None]
    compiled_gap = float(np.abs(scored[torch.float32, scope] - reference).max())
    bf16_eager, bf16_compiled = (np.abs(scored[torch.bfloat16, s] - reference) for s in (None, scope))
    absolute, relative = NLL_ERROR_BOUND["bfloat16"]
    bound = np.maximum(absolute, relative * reference)
    print(f"\nMEASURED {architecture} {scope}: float32 |compiled - eager| max {compiled_gap:.2e}; bfloat16 vs "
          f"float32 eager: eager {bf16_eager.max():.2e}, compiled {bf16_compiled.max():.2e} nats, "
          f"{(bf16_compiled / bound).max():.1%} of the bound at most")
    assert compiled_gap <= ENGINE_TOLERANCE
    assert (bf16_compiled <= bound).all()


def test_greedy_generation_on_cuda_equals_cpu(cpu_lm, cuda_lm, sentences):
    prompts = [" ".join(s.split()[: max(2, len(s.split()) // 2)]) for s in sentences[:48]]
    on_cpu = greedy_generate(cpu_lm, prompts, max_new_tokens=16)
    on_cuda = greedy_generate(cuda_lm, prompts, max_new_tokens=16)
    print(f"\nMEASURED greedy generation: {sum(a == b for a, b in zip(on_cpu, on_cuda))} of {len(prompts)} equal")
    assert on_cuda == on_cpu and any(on_cuda)


def test_mia_pass_on_cuda_is_close_to_cpu(cpu_lm, cuda_lm, sentences):
    texts = sentences[:64]
    on_cpu, on_cuda = token_stats(cpu_lm, texts), token_stats(cuda_lm, texts)
    gaps = {name: max(float(np.abs(getattr(c, name) - getattr(g, name)).max()) for c, g in zip(on_cpu, on_cuda))
            for name in ("token_logprobs", "mu", "var")}
    norms_cpu, norms_cuda = gradient_norms(cpu_lm, texts[:8]), gradient_norms(cuda_lm, texts[:8])
    relative = float(np.abs(norms_cuda / norms_cpu - 1).max())
    print(f"\nMEASURED MIA token statistics |cuda - cpu| max: {gaps}; gradient norms relative {relative:.2e}")
    assert all(gap <= STATS_TOLERANCE for gap in gaps.values()), gaps
    assert relative <= 1e-3


def forget_nll(model_dir, texts) -> float:
    return float(score_sentences(load_model(str(model_dir), device="cpu"), texts).mean())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_unlearning_steps_on_cuda(model_dir, sentences, tmp_path, dtype):
    forget, retain, ranking = sentences[:6], sentences[6:30], sentences[200:260]
    config = UnlearnConfig(method="npo", steps=4, batch_size=8)
    on_cuda = unlearn(model_dir, forget, retain, tmp_path / "cuda", config, log=lambda m: None,
                      ranking_texts=ranking, device="cuda", dtype=dtype)
    assert on_cuda.manifest["device"].startswith("cuda") and on_cuda.manifest["dtype"] == dtype
    before, after = forget_nll(model_dir, forget), forget_nll(on_cuda.model_dir, forget)
    message = f"\nMEASURED unlearning on CUDA ({dtype}, 4 steps): forget NLL {before:.3f} -> {after:.3f}"
    assert after > before  # the forget texts became less likely
    if dtype == "float32":  # the same batches on CPU: the first step's losses agree up to kernels
        on_cpu = unlearn(model_dir, forget, retain, tmp_path / "cpu", config, log=lambda m: None,
                         ranking_texts=ranking, device="cpu")
        first_cpu, first_cuda = on_cpu.manifest["losses"][0], on_cuda.manifest["losses"][0]
        message += (f"; step 1 losses cpu {first_cpu} cuda {first_cuda}; forget NLL after CPU run "
                    f"{forget_nll(on_cpu.model_dir, forget):.3f}")
        for name in ("forget", "retain", "ranking_kl"):
            assert abs(first_cpu[name] - first_cuda[name]) <= 1e-3, (name, first_cpu, first_cuda)
    print(message)


def test_full_finetuning_that_does_not_fit_the_gpu_is_refused(tmp_path):
    """An 8B-shaped model (config only, counted on the meta device): float32 full fine-tuning
    with a reference needs ~160 GB, more than any one GPU here, and is refused with the numbers."""
    shape = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
             "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256}
    (tmp_path / "config.json").write_text(json.dumps(shape))
    with pytest.raises(UnlearningDoesNotFit, match=r"needs about 19\d\.\d GB on cuda.*GB are free"):
        check_fits(tmp_path, torch.device("cuda"), torch.float32, with_reference=True)


def test_the_resource_builds_a_cuda_model_with_its_settings(model_dir):
    pytest.importorskip("dagster", reason="the Dagster layer is not installed on this machine (domain-level CUDA "
                                          "tests only)")
    from resources.scoring import ScoringResource
    from wikimem_platform.lm.generation import generation_batch_size

    scoring = ScoringResource(device="cuda", dtype="bfloat16", batch_size=48)
    scoring.validate()
    lm = scoring.load_reference(str(model_dir))
    assert lm.device.type == "cuda" and lm.dtype == torch.bfloat16 and lm.batch_size == 48
    assert {p.device.type for p in lm.model.parameters()} == {"cuda"}
    assert generation_batch_size(lm) == 48
    twin = lm.float32_twin()
    assert twin.device == lm.device and twin.dtype == torch.float32 and twin.batch_size == 48
    automatic = ScoringResource(device="cuda").load_reference(str(model_dir))
    assert automatic.details["batch_size_requested"] == "auto" and 8 <= automatic.batch_size <= 1024


def test_nf4_scoring_on_cuda_keeps_the_batch_size_and_rescoring_model(model_dir, cpu_lm, sentences):
    pytest.importorskip("bitsandbytes", reason="4-bit NF4 needs bitsandbytes, not installed on this machine")
    lm = load_model(str(model_dir), device="cuda", load_in_4bit=True, batch_size=16)
    assert lm.details["load_in_4bit"] and lm.device.type == "cuda" and lm.batch_size == 16
    nf4 = score_sentences(lm, sentences[:100])
    twin = lm.float32_twin()
    assert twin.device == lm.device and twin.dtype == torch.float32 and twin.batch_size == 16
    exact = score_sentences(twin, sentences[:100])
    print(f"\nMEASURED NF4 on CUDA: |nf4 - float32| max {np.abs(nf4 - exact).max():.2f} nats; float32 twin vs CPU "
          f"{np.abs(exact - score_sentences(cpu_lm, sentences[:100])).max():.2e}")
    assert np.isfinite(nf4).all()
    np.testing.assert_allclose(exact, score_sentences(cpu_lm, sentences[:100]), rtol=0, atol=ENGINE_TOLERANCE)
