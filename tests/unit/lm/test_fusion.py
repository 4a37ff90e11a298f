"""The engine with compiled decoder layers, or compiled norms and MLPs (wikimem_platform.lm.fusion),
gives the eager engine's NLLs: on CPU in float32 for the planted GPT-2, a random tiny Llama and a
random tiny Gemma 3 (the shipped model's architecture, sliding-window layers included). The speed
it buys is a GPU matter, measured by benchmarks/bench_gpu.py --fusion; tests/unit/lm/test_cuda_paths.py
runs the compiled engine on CUDA where a GPU is lent."""

from __future__ import annotations

import copy
import shutil

import numpy as np
import pytest
import torch

from wikimem_platform.lm import fusion
from wikimem_platform.lm.fusion import FusionError, fusable_modules, fused, resolve_fusion
from tests.support.random_models import audit_shaped_ids, tiny_gemma3, tiny_llama
from wikimem_platform.lm.loading import ModelLoadError, load_model
from wikimem_platform.lm.nll import score_token_ids

COMPILED_TOLERANCE = 1e-4  # nats per sentence, float32: compiled kernels reorder sums (measured ~3e-6)
needs_compiler = pytest.mark.skipif(
    shutil.which("g++") is None and shutil.which("c++") is None,
    reason="torch.compile's CPU backend (Inductor) builds C++ kernels and no C++ compiler is on PATH")


@pytest.fixture(scope="module")
def planted_lm(planted_model):
    return load_model(str(planted_model))


@needs_compiler
@pytest.mark.slow
@pytest.mark.parametrize("model, scope", [("planted", "layers"), ("llama", "layers"), ("llama", "norms-mlp"),
                                          ("gemma3", "layers")])
def test_the_compiled_engine_gives_the_eager_engines_nlls(request, model, scope):
    lm = request.getfixturevalue("planted_lm") if model == "planted" else {"llama": tiny_llama,
                                                                            "gemma3": tiny_gemma3}[model]()
    ids = audit_shaped_ids(lm.model.config.vocab_size)
    modules = fusable_modules(lm.model, scope)
    assert modules, f"nothing to compile in {model} for {scope}"
    eager = score_token_ids(lm, ids, batch_tokens=256)
    frames_before = sum(torch._dynamo.utils.counters["frames"].values())
    lm.fusion = scope
    try:
        compiled = score_token_ids(lm, ids, batch_tokens=256)
    finally:
        lm.fusion = None
    assert sum(torch._dynamo.utils.counters["frames"].values()) > frames_before  # compiled code ran
    assert np.abs(compiled - eager).max() < COMPILED_TOLERANCE
    assert all("forward" not in vars(module) for module in modules)  # eager again after the engine


@needs_compiler
@pytest.mark.slow
def test_a_copy_of_a_compiled_model_scores_its_own_weights():
    """Unlearning copies the model as its reference and trains one of the two: each must be scored
    with its own weights, compiled or not."""
    lm = tiny_llama()
    ids = audit_shaped_ids(lm.model.config.vocab_size)
    lm.fusion = "layers"
    original = score_token_ids(lm, ids, batch_tokens=256)
    changed = copy.deepcopy(lm)
    with torch.no_grad():
        changed.model.base_model.layers[0].mlp.down_proj.weight.mul_(3.0)
    compiled = score_token_ids(changed, ids, batch_tokens=256)
    changed.fusion = None
    eager = score_token_ids(changed, ids, batch_tokens=256)
    assert np.abs(compiled - eager).max() < COMPILED_TOLERANCE
    assert np.abs(compiled - original).max() > 100 * COMPILED_TOLERANCE


@pytest.mark.slow
def test_a_model_that_cannot_be_compiled_is_scored_eager(monkeypatch):
    """No C++ compiler for Inductor's CPU kernels (a fault caused for real: the compiler named does
    not exist): the engine warns and gives the eager NLLs rather than failing the audit."""
    import torch._dynamo
    import torch._inductor.config

    lm = tiny_gemma3()
    ids = audit_shaped_ids(lm.model.config.vocab_size, seed=1)
    eager = score_token_ids(lm, ids, batch_tokens=256)
    torch._dynamo.reset()  # nothing compiled earlier in this process may serve this run
    monkeypatch.setattr(torch._inductor.config.cpp, "cxx", ("/nonexistent/c++",))
    monkeypatch.setattr(torch._inductor.config, "fx_graph_cache", False)
    lm.fusion = "layers"
    try:
        compiled = score_token_ids(lm, ids, batch_tokens=256)
    finally:
        torch._dynamo.reset()  # later tests compile with the real compiler
    np.testing.assert_array_equal(compiled, eager)


def test_scopes_find_the_layers_norms_and_mlps_of_each_architecture(planted_lm):
    llama = tiny_llama()
    assert len(fusable_modules(planted_lm.model, "layers")) == planted_lm.model.config.n_layer  # GPT-2's `h`
    assert len(fusable_modules(llama.model, "layers")) == 3
    # Per layer two RMS norms and a gated MLP, and the final norm; GPT-2 has LayerNorms and no gated MLP.
    assert len(fusable_modules(llama.model, "norms-mlp")) == 3 * 3 + 1
    assert fusable_modules(planted_lm.model, "norms-mlp") == []
    with pytest.raises(FusionError, match="allowed values are layers, norms-mlp"):
        fusable_modules(llama.model, "everything")


def test_fused_restores_the_eager_forward_even_when_the_block_fails():
    lm = tiny_llama()
    layers = fusable_modules(lm.model, "layers")
    with pytest.raises(RuntimeError, match="a forward failed"), fused(lm.model, "layers"):
        assert all("forward" in vars(layer) for layer in layers)
        raise RuntimeError("a forward failed")
    assert all("forward" not in vars(layer) for layer in layers)


def test_auto_fusion_compiles_full_precision_models_on_cuda_only(monkeypatch):
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    monkeypatch.setattr(fusion, "_has_triton", lambda: True)
    assert resolve_fusion("auto", cuda, False) == "layers"
    assert resolve_fusion("auto", cpu, False) is None
    assert resolve_fusion("auto", cuda, True) is None  # bitsandbytes' layers: not measured compiled
    assert resolve_fusion("none", cuda, False) is None and resolve_fusion(None, cuda, False) is None
    assert resolve_fusion("layers", cpu, False) == "layers" and resolve_fusion("norms-mlp", cuda, True) == "norms-mlp"
    monkeypatch.setattr(fusion, "_has_triton", lambda: False)
    assert resolve_fusion("auto", cuda, False) is None  # nothing to compile for


def test_an_unknown_fusion_is_refused_before_any_model_is_loaded(tmp_path):
    with pytest.raises(ModelLoadError, match=r"fusion 'fast': allowed values are auto, none, layers, norms-mlp"):
        load_model(str(tmp_path / "no-such-model"), fusion="fast")
