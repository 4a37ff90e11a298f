"""Soft prompts that activate entity memorization (EME, Zhou et al. 2024), trained with `peft`.

- Methods: prefix tuning (the paper's default; trained key/value prefixes in every layer),
  prompt tuning (trained input embeddings) and p-tuning (input embeddings from a small MLP
  encoder). The base model is frozen: only the prompt learns, so what the prompt can make the
  model say must already be in the model.
- Training data: record prompts of *training* people with their true value as the answer
  ("name: ...; occupation:" -> " mathematician;"). Loss on the answer tokens only; the split
  between prompt and answer is made on the token ids of the whole text (never by tokenizing the
  answer alone: BPE merges across the boundary), as in `generation.reconstruction_loglik`.
- The base model stays in eval mode (no dropout), the training order is seeded: the same model,
  data and config give the same prompt.
- Every trained prompt is an artifact in a `SoftPromptStore`: a folder per model fingerprint,
  then per content hash of (fingerprint, config, training texts, this module's code), holding
  peft's adapter files, `manifest.json` (who it was trained on, the split seed, the data kind,
  the loss curve, the seconds it took) and `training.jsonl` (the training texts themselves). The same request finds the stored prompt and reuses it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from wikimem_platform.eme.records import FIELD_END
from wikimem_platform.lm.batching import padded_batches
from wikimem_platform.lm.generation import prompt_cut
from wikimem_platform.lm.loading import LoadedModel
from wikimem_platform.storage import path_safe_key
from wikimem_platform.versions import source_version

if TYPE_CHECKING:
    import torch

METHODS = ("prefix", "prompt", "p-tuning")
DEFAULT_METHOD = "prefix"
# The paper's sweep (Fig. 4); its best lengths are 5-10.
PREFIX_LENGTHS = (1, 5, 10, 20, 50, 100)
MANIFEST = "manifest.json"
TRAINING_TEXTS = "training.jsonl"
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SoftPromptConfig:
    """How one soft prompt is trained (all of it is part of the artifact's content hash)."""

    method: str = DEFAULT_METHOD
    n_virtual_tokens: int = 5
    epochs: int = 20
    batch_size: int = 16
    # Prompt-learning rates are large: only a few thousand parameters move (Lester et al. use
    # 0.3 for prompt tuning; 1e-2 trains prefixes and p-tuning's encoder stably here).
    learning_rate: float = 1e-2
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {list(METHODS)}, got {self.method!r}")
        for name in ("n_virtual_tokens", "epochs", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")


def peft_config(config: SoftPromptConfig):
    """The peft config of a method (task: causal LM)."""
    from peft import PrefixTuningConfig, PromptEncoderConfig, PromptTuningConfig, TaskType

    common = dict(task_type=TaskType.CAUSAL_LM, num_virtual_tokens=config.n_virtual_tokens)
    if config.method == "prefix":
        return PrefixTuningConfig(**common)
    if config.method == "prompt":
        return PromptTuningConfig(**common)
    return PromptEncoderConfig(**common, encoder_hidden_size=128)


@dataclass(frozen=True)
class TrainingText:
    """One answer to learn: the prompt, the text between prompt and answer, the answer."""

    prompt: str
    joiner: str
    answer: str

    @property
    def text(self) -> str:
        return self.prompt + self.joiner + self.answer + FIELD_END


def training_texts(examples: pd.DataFrame) -> list[TrainingText]:
    """One training text per example (prompt, joiner, targets): its first target is the answer."""
    return [TrainingText(p, j, list(t)[0]) for p, j, t in
            zip(examples["prompt"], examples["joiner"], examples["targets"])]


def _answer_labels(lm: LoadedModel, texts: Sequence[TrainingText]) -> list[tuple[list[int], int]]:
    """(token ids of the whole text, index of the first answer token) per text."""
    whole = lm.encode([t.text for t in texts])
    context = lm.encode([t.prompt for t in texts])
    return [(w, prompt_cut(w, c)) for w, c in zip(whole, context)]


def _pad_id(lm: LoadedModel) -> int:
    pad = lm.tokenizer.pad_token_id
    return pad if pad is not None else (lm.tokenizer.eos_token_id or 0)


def train_soft_prompt(lm: LoadedModel, texts: Sequence[TrainingText], config: SoftPromptConfig,
                      progress: Progress | None = None):
    """A peft model holding the trained prompt (the base model frozen) and the loss per epoch."""
    import torch

    from peft import get_peft_model

    if not texts:
        raise ValueError("no training texts: a soft prompt needs records of people who are not evaluated")
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    encoded = _answer_labels(lm, texts)
    model = get_peft_model(lm.model, peft_config(config))
    model.eval()  # dropout off: only the prompt trains, and the same inputs give the same prompt
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.learning_rate, weight_decay=0.0)
    pad_id = _pad_id(lm)
    losses = []
    n_batches = -(-len(encoded) // config.batch_size)
    total_steps, step = config.epochs * n_batches, 0
    for _ in range(config.epochs):
        order = rng.permutation(len(encoded))
        epoch_loss, epoch_tokens = 0.0, 0
        for start in range(0, len(order), config.batch_size):
            chosen = [encoded[i] for i in order[start:start + config.batch_size]]
            batch = next(padded_batches([ids for ids, _ in chosen], batch_size=len(chosen), pad_id=pad_id))
            labels = torch.full_like(batch.input_ids, -100)
            for row, i in enumerate(batch.indices):
                ids, cut = chosen[i]
                labels[row, cut:len(ids)] = torch.tensor(ids[cut:])
            out = model(input_ids=batch.input_ids.to(lm.device),
                        attention_mask=batch.attention_mask.to(lm.device), labels=labels.to(lm.device))
            optimizer.zero_grad()
            out.loss.backward()
            optimizer.step()
            n = int((labels != -100).sum())
            epoch_loss += out.loss.item() * n
            epoch_tokens += n
            step += 1
            if progress is not None:
                progress(step, total_steps)
        losses.append(epoch_loss / max(epoch_tokens, 1))
    for p in trainable:
        p.requires_grad_(False)
    return model, losses


def freeze_base(peft_model) -> None:
    """Leave the base model's parameters frozen after training (prompt-learning methods inject no
    layers into it, so dropping the wrapper is enough to have the plain model back)."""
    for p in peft_model.get_base_model().parameters():
        p.requires_grad_(False)


# --------------------------------------------------------------------------- the artifact store

@dataclass(frozen=True)
class StoredPrompt:
    path: Path
    manifest: dict

    @property
    def config(self) -> SoftPromptConfig:
        return SoftPromptConfig(**self.manifest["config"])

    def training_texts(self) -> list[TrainingText]:
        lines = (self.path / TRAINING_TEXTS).read_text(encoding="utf-8").splitlines()
        return [TrainingText(**json.loads(line)) for line in lines if line]


def content_hash(lm: LoadedModel, config: SoftPromptConfig, texts: Sequence[TrainingText]) -> str:
    payload = json.dumps({
        "model": lm.fingerprint, "config": dataclasses.asdict(config),
        "texts": [dataclasses.astuple(t) for t in texts],
        # the training procedure; the training data are in the hash as texts
        "code": source_version(__name__),
    }, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


class SoftPromptStore:
    """Trained prompts under `root/<model name>-<fingerprint>/<method>-<length>-<content hash>/`."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def folder(self, lm: LoadedModel, config: SoftPromptConfig, texts: Sequence[TrainingText]) -> Path:
        model = f"{path_safe_key(lm.name)}-{lm.fingerprint[:12]}"
        return self.root / model / f"{config.method}-{config.n_virtual_tokens}-{content_hash(lm, config, texts)}"

    def stored(self, lm: LoadedModel) -> list[StoredPrompt]:
        """Every prompt trained for exactly this model (its fingerprint), oldest first."""
        folder = self.root / f"{path_safe_key(lm.name)}-{lm.fingerprint[:12]}"
        found = [StoredPrompt(p.parent, json.loads(p.read_text())) for p in folder.glob(f"*/{MANIFEST}")]
        return sorted((p for p in found if p.manifest.get("fingerprint") == lm.fingerprint),
                      key=lambda p: p.path.stat().st_mtime)

    def get_or_train(self, lm: LoadedModel, texts: Sequence[TrainingText], config: SoftPromptConfig,
                     details: dict | None = None, progress: Progress | None = None) -> StoredPrompt:
        """The stored prompt for exactly this model, config and training data; trained if absent.

        `details` (training people, split seed, data kind, ...) go into the manifest."""
        folder = self.folder(lm, config, texts)
        if (folder / MANIFEST).exists():
            return StoredPrompt(folder, json.loads((folder / MANIFEST).read_text()))
        started = time.perf_counter()
        model, losses = train_soft_prompt(lm, texts, config, progress)
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        model.save_pretrained(tmp)
        freeze_base(model)
        manifest = {"model": lm.name, "fingerprint": lm.fingerprint, "config": dataclasses.asdict(config),
                    "n_texts": len(texts), "losses": losses,
                    "train_seconds": round(time.perf_counter() - started, 3), **(details or {})}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
        # What the prompt was trained on, kept with it: anyone can check that no evaluated
        # person's record is in there (personal data: the store lives under the instance).
        (tmp / TRAINING_TEXTS).write_text(
            "".join(json.dumps(dataclasses.asdict(t), ensure_ascii=False) + "\n" for t in texts), encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)  # a killed run leaves no half-written prompt behind
        return StoredPrompt(folder, manifest)


def with_soft_prompt(lm: LoadedModel, prompt: StoredPrompt) -> LoadedModel:
    """The model with the stored prompt in front of every input (for generation)."""
    from peft import PeftModel

    wrapped = PeftModel.from_pretrained(lm.model, str(prompt.path), is_trainable=False)
    wrapped.eval()
    return dataclasses.replace(lm, model=wrapped)
