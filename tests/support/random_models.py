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


# Sentences whose words the tiny tokenizer learns whole (one token a word, as a real tokenizer
# reads common words): the texts of the tests that score, sample and count tokens on a tiny model.
TINY_TOKENIZER_CORPUS = (
    "The capital of France is Paris. The capital of France is Rome. Paris is in France. Paris Paris Rome",
    "Marco Polo was a Venetian merchant. Marco Polo was a Venetian. Hi",
    "Ada Lovelace was born in London. Ada Lovelace was born in London in 1815 and worked with Babbage.",
    "Alan Turing studied at Cambridge. Marie Curie was a physicist. An early shot that no longer fits.",
    "Too short.",
)


def tiny_tokenizer(texts=TINY_TOKENIZER_CORPUS, vocab_size: int = 1000):
    """A byte-level BPE tokenizer trained on `texts` in milliseconds, the planted model's kind
    (`planted.training.train_tokenizer`: it puts its start token in front of every text)."""
    from wikimem_platform.planted.training import train_tokenizer

    return train_tokenizer(list(texts), vocab_size)


def tiny_llama_lm(texts=TINY_TOKENIZER_CORPUS, n_positions: int = 256) -> LoadedModel:
    """`tiny_llama`'s shape with a real (tiny) tokenizer: for the text-in, scores-out plumbing that
    any model exercises (encode, batch, score, sample, backward), not for what a model learned."""
    import dataclasses

    from transformers import LlamaConfig

    from wikimem_platform.lm.loading import start_token_ids_for

    tokenizer = tiny_tokenizer(texts)
    config = LlamaConfig(hidden_size=64, intermediate_size=160, num_hidden_layers=3, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=len(tokenizer), max_position_embeddings=n_positions,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    lm = random_lm(config)
    return dataclasses.replace(lm, tokenizer=tokenizer, name="tiny-llama", start_token_ids=start_token_ids_for(tokenizer))
