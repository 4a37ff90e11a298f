"""Reference unlearning with LoRA adapters (UnlearnConfig.adapter "lora"): the NPO reference and the
ranking KL's reference are the model itself with its adapters disabled (no copy), only the adapters
train, and the output is the merged plain model directory, audited like any other. On the planted
model LoRA-NPO forgets three members' facts and keeps the others' within the erasure criteria.
The memory estimate makes an 8B bfloat16 model fit one 80 GB GPU (hand-computed numbers)."""

import json
import math
from types import SimpleNamespace

import pytest
import torch
from safetensors import safe_open

from wikimem_platform.lm.loading import load_model
from wikimem_platform.planted import generate_world
from wikimem_platform.unlearning import methods
from wikimem_platform.unlearning.methods import (
    ACTIVATION_MARGIN,
    check_fits,
    lora_finetune_bytes,
    training_bytes,
    unlearn,
    UnlearnConfig,
    UnlearningDoesNotFit,
    UNLEARNING_MANIFEST,
)
from tests.support.criteria import criterion
from tests.support.trained import planted_world_config
from tests.unit.unlearning.test_methods import LABELS, ranked_first, sentences, WORDINGS

# Llama-3.1-8B's shape (tests/unit/lm/test_cuda_paths.py uses the same): 8,030,261,248 parameters.
LLAMA_8B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256}
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors", "adapter_model.bin")


def planted_sets():
    """Forget: 3 of the most-read members (12 facts); retain: the other most-read members' sentences
    and the ranking texts an audit reads for them (as tests/unit/unlearning/test_methods.py)."""
    world = generate_world(planted_world_config())
    most_read = [p for p in world.members if p.repetitions == 16]
    forget_people, retain_people = most_read[:3], most_read[3:]
    forget_texts = [t for p in forget_people for t in sentences(p, lambda f: f.value_label)]
    retain_texts = [t for p in retain_people for t in sentences(p, lambda f: f.value_label)]
    ranking = [w.format(name=p.label, label=LABELS.get(f.property, f.property), value=v.label)
               for p in retain_people for f in p.facts for w in WORDINGS for v in world.vocabulary[f.property]]
    return world, forget_people, retain_people, forget_texts, retain_texts, ranking


class Spy:
    """Counts the models unlearn loads (a copy fails) and what the peft model it trains trains."""

    def __init__(self, monkeypatch):
        from transformers import AutoModelForCausalLM

        self.loaded, self.trainable = 0, {}
        load, wrap = AutoModelForCausalLM.from_pretrained, methods.with_lora

        def counted_load(*args, **kwargs):
            self.loaded += 1
            return load(*args, **kwargs)

        def kept_wrap(model, config):
            peft_model = wrap(model, config)  # merged (its adapters gone) by the time unlearn returns
            self.trainable = {name: p.numel() for name, p in peft_model.named_parameters() if p.requires_grad}
            return peft_model

        def no_copy(*args, **kwargs):
            raise AssertionError("LoRA unlearning must not copy the model for its reference")

        monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", counted_load)
        monkeypatch.setattr(methods, "with_lora", kept_wrap)
        monkeypatch.setattr(methods, "copy", SimpleNamespace(deepcopy=no_copy))


def assert_plain_merged_directory(model_dir, base_dir, dtype):
    """No adapter file left, the base model's own weight names (no peft prefix, no lora_A/B), in dtype."""
    assert not [name for name in ADAPTER_FILES if (model_dir / name).exists()]
    with safe_open(str(model_dir / "model.safetensors"), "pt") as merged, \
            safe_open(str(base_dir / "model.safetensors"), "pt") as base:
        assert set(merged.keys()) == set(base.keys())
        assert {merged.get_tensor(name).dtype for name in merged.keys()} == {dtype}


@pytest.mark.slow
def test_lora_npo_forgets_three_members_and_keeps_the_rest(planted_model, tmp_path, monkeypatch):
    world, forget_people, retain_people, forget_texts, retain_texts, ranking = planted_sets()
    before_lm = load_model(str(planted_model), device="cpu")
    before_forget = ranked_first(before_lm, forget_people, world.vocabulary)
    before_retain = ranked_first(before_lm, retain_people, world.vocabulary)
    assert sum(before_forget.values()) >= 8

    spy = Spy(monkeypatch)
    config = UnlearnConfig(adapter="lora", seed=0)  # the tuned LoRA defaults, NPO + NLL + ranking KL
    result = unlearn(planted_model, forget_texts, retain_texts, tmp_path / "lora", config, forget_sha256="ab" * 32,
                     log=lambda m: None, ranking_texts=ranking)
    monkeypatch.undo()

    # The reference was the same model with its adapters disabled: one model loaded, none copied,
    # and only the adapters trained (a small share of the parameters).
    assert spy.loaded == 1
    trainable = spy.trainable
    assert trainable and all("lora_A" in name or "lora_B" in name for name in trainable)
    adapter = result.manifest["adapter"]
    assert adapter["trainable_parameters"] == sum(trainable.values()) < 0.1 * adapter["parameters"]
    assert adapter["type"] == "lora" and adapter["merged"] and adapter["rank"] == config.lora_rank
    assert adapter["target_modules"] == ["c_attn", "c_fc", "c_proj"]  # GPT-2's attention and MLP projections
    assert adapter["learning_rate"] == config.lora_learning_rate
    written = json.loads((result.model_dir / UNLEARNING_MANIFEST).read_text())
    assert written["config"]["adapter"] == "lora" and written["adapter"] == adapter
    assert (result.model_dir / "manifest.json").is_file()  # the planted manifest comes along, as without LoRA

    # A plain merged model directory, loaded by the project's loader.
    assert_plain_merged_directory(result.model_dir, planted_model, torch.float32)
    after_lm = load_model(str(result.model_dir), device="cpu")
    after_forget = ranked_first(after_lm, forget_people, world.vocabulary)
    after_retain = ranked_first(after_lm, retain_people, world.vocabulary)
    criterion("unlearning (lora npo): forgotten facts still ranked first", sum(after_forget.values()), "==", 0,
              context=after_forget)
    kept = [after_retain[k] for k, was in before_retain.items() if was]
    criterion("unlearning (lora npo): retain facts still ranked first", sum(kept) / len(kept), ">=", 0.9, n=len(kept))


def test_lora_reference_is_the_base_model_and_bfloat16_saves_merged(planted_model, tmp_path):
    """Two steps in bfloat16 (the CUDA setting, here on CPU): LoRA's B starts at zero, so at step 1
    the model equals its adapters-disabled reference: NPO's loss is exactly (2 / beta) log 2 and the
    ranking KL 0. The output is merged, in bfloat16."""
    _, _, _, forget_texts, retain_texts, ranking = planted_sets()
    config = UnlearnConfig(adapter="lora", steps=2, batch_size=4)
    result = unlearn(planted_model, forget_texts, retain_texts, tmp_path / "bf16", config, log=lambda m: None,
                     ranking_texts=ranking, dtype="bfloat16")
    first = result.manifest["losses"][0]
    assert first["forget"] == pytest.approx(2 / config.beta * math.log(2), abs=1e-4)
    assert first["ranking_kl"] == pytest.approx(0.0, abs=1e-5)
    assert result.manifest["dtype"] == "bfloat16" and result.manifest["adapter"]["merged"]
    assert_plain_merged_directory(result.model_dir, planted_model, torch.bfloat16)
    assert load_model(str(result.model_dir), device="cpu").model is not None


def test_lora_memory_estimate_fits_an_8b_bfloat16_model_on_one_80gb_gpu(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_8B))
    # By hand, rank 8 on every projection of a layer: r * (in + out) each.
    # q, o: 8 * (4096 + 4096) = 65,536; k, v: 8 * (4096 + 1024) = 40,960; gate, up, down: 8 * (4096 + 14336)
    # = 147,456: 655,360 per layer, x 32 layers = 20,971,520 adapter parameters.
    adapters, parameters = 20_971_520, 8_030_261_248
    assert lora_finetune_bytes(parameters, adapters, torch.bfloat16) == parameters * 2 + adapters * 16
    lora = UnlearnConfig(adapter="lora", lora_rank=8)
    need = training_bytes(tmp_path, torch.bfloat16, with_reference=True, config=lora)
    assert need == 16_060_522_496 + 335_544_320 == 16_396_066_816  # weights once (16.1 GB) + adapter states
    assert need * ACTIVATION_MARGIN < 80e9  # ~19.7 GB with the headroom: one 80 GB GPU holds it
    full = training_bytes(tmp_path, torch.bfloat16, with_reference=True)  # full fine-tuning + reference copy
    assert full == parameters * 2 * 5 and full * ACTIVATION_MARGIN > 80e9  # ~96 GB: it does not

    # On an 80 GB GPU (its free memory mocked: no GPU needed), full fine-tuning is refused and points at LoRA.
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (80 * 10**9, 80 * 10**9))
    assert check_fits(tmp_path, torch.device("cuda"), torch.bfloat16, True, lora) == need
    with pytest.raises(UnlearningDoesNotFit, match=r"needs about 96\.4 GB .*adapter 'lora'"):
        check_fits(tmp_path, torch.device("cuda"), torch.bfloat16, True, UnlearnConfig())
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (10 * 10**9, 10 * 10**9))
    with pytest.raises(UnlearningDoesNotFit, match=r"LoRA unlearning .* needs about 19\.7 GB"):
        check_fits(tmp_path, torch.device("cuda"), torch.bfloat16, True, lora)


def test_lora_settings_are_validated_and_a_model_without_the_targets_is_refused(planted_model):
    assert UnlearnConfig().adapter == "none"  # full fine-tuning stays the default, with its own learning rate
    assert UnlearnConfig().effective_learning_rate == UnlearnConfig().learning_rate
    assert UnlearnConfig(adapter="lora").effective_learning_rate == UnlearnConfig().lora_learning_rate
    with pytest.raises(ValueError, match="none, lora"):
        UnlearnConfig(adapter="qlora").validate()
    with pytest.raises(ValueError, match="lora_rank"):
        UnlearnConfig(adapter="lora", lora_rank=0).validate()
    with pytest.raises(ValueError, match="lora_target_modules"):
        UnlearnConfig(adapter="lora", lora_target_modules="c_attn").validate()
    with pytest.raises(ValueError, match=r"lora_target_modules=\['q_proj'\]"):
        training_bytes(planted_model, torch.float32, True, UnlearnConfig(adapter="lora", lora_target_modules=("q_proj",)))
    named = training_bytes(planted_model, torch.float32, True, UnlearnConfig(adapter="lora", lora_target_modules=("c_attn",)))
    default = training_bytes(planted_model, torch.float32, True, UnlearnConfig(adapter="lora"))
    assert named < default  # only c_attn adapted: fewer adapter states than every projection
