"""Randomly initialized tiny models of the shipped architectures (Llama as SmolLM2 is, Gemma 3 with
its sliding-window layers) and token ids shaped like an audit's: for checks that depend on a
model's shape and kernels, not on what it learned."""

from __future__ import annotations

import numpy as np
import torch

from wikimem_platform.lm.loading import LoadedModel


def random_lm(config, device: str = "cpu", dtype: torch.dtype = torch.float32) -> LoadedModel:
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation="sdpa").eval()
    return LoadedModel(model=model, tokenizer=None, name=config.model_type, source="random", fingerprint="random",
                       device=torch.device(device), dtype=dtype, start_token_ids=[])


def tiny_llama(device: str = "cpu", dtype: torch.dtype = torch.float32) -> LoadedModel:
    from transformers import LlamaConfig

    return random_lm(LlamaConfig(hidden_size=64, intermediate_size=160, num_hidden_layers=3, num_attention_heads=4,
                                 num_key_value_heads=2, vocab_size=512), device, dtype)


def tiny_gemma3(device: str = "cpu", dtype: torch.dtype = torch.float32) -> LoadedModel:
    from transformers import Gemma3TextConfig

    return random_lm(Gemma3TextConfig(hidden_size=64, intermediate_size=160, num_hidden_layers=3, num_attention_heads=4,
                                      num_key_value_heads=1, head_dim=16, vocab_size=512, sliding_window=64,
                                      layer_types=["sliding_attention", "sliding_attention", "full_attention"]),
                     device, dtype)


def audit_shaped_ids(vocab_size: int, seed: int = 0) -> list[list[int]]:
    """Token ids shaped like an audit's: templates x subject forms x candidate values, sharing
    prefixes, of a few lengths (so the engine runs several rows and widths)."""
    rng = np.random.default_rng(seed)

    def draw(low: int, high: int) -> list[int]:
        return [int(t) for t in rng.integers(4, vocab_size, rng.integers(low, high))]

    ids = []
    for _ in range(3):
        head, subjects, candidates = draw(2, 9), [draw(1, 4) for _ in range(3)], [draw(1, 5) for _ in range(12)]
        ids += [[1, *head, *subject, *draw(1, 3), *value] for subject in subjects for value in candidates]
    return ids
