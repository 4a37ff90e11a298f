"""Reference unlearning, a verification aid — not the product's promise.

It exists so the erasure loop can be checked end to end (forget set -> unlearning -> new revision
-> re-audit) on a model whose ground truth is known; real deployments use their own unlearning
tooling on the exported sets. Two classic methods, each with a retain loss (gradient difference):

- gradient ascent: maximize the forget texts' NLL;
- NPO (negative preference optimization, Zhang et al. 2024): the bounded loss
  -(2/beta) * log sigmoid(-beta * (log p_theta(y) - log p_ref(y))) against a frozen copy of the
  model, which slows down once a text is forgotten instead of diverging like gradient ascent.

Both run on a Hugging Face causal LM directory with `transformers` and `torch` only, seeded, and
write a new model directory with `unlearning.json` (forget-set hash, method, steps, seed, losses).
"""

from __future__ import annotations

import copy
import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch
    import torch.nn.functional as F

METHODS = ("npo", "gradient_ascent")
UNLEARNING_MANIFEST = "unlearning.json"


@dataclass
class UnlearnConfig:
    # Tuned on the planted model (3 members, 12 facts, 48 retain facts). The planted model itself
    # depends on the CPU it was trained on, and so does the retain utility: with 16 texts per step,
    # 150 steps at 5e-4 (retain weight 2) kept 47 of 48 retain facts on the machine it was first
    # tuned on, 41 of 48 on the 2026-11-23 one, where 32 texts per step kept 44 (all 12 forgotten
    # in both); across 18 runs there (steps 80-400, lr 3e-4/5e-4, weight 1-4, beta 0.1/0.5)
    # it kept 39-44 of 48 whenever all 12 were forgotten. Weight 0 kept 17: the retain loss matters.
    # 60 steps at 1e-3 (weight 1) kept 42; gradient ascent (40 steps) left 7 of the 12 memorized.
    method: str = "npo"
    steps: int = 150
    learning_rate: float = 5e-4
    batch_size: int = 32  # texts per step, forget and retain each
    beta: float = 0.1  # NPO's inverse temperature
    retain_weight: float = 2.0  # weight of the retain loss (gradient difference)
    seed: int = 0

    def validate(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.steps < 1 or self.batch_size < 1 or self.learning_rate <= 0 or self.beta <= 0 or self.retain_weight < 0:
            raise ValueError("steps and batch_size must be >= 1, learning_rate and beta > 0, retain_weight >= 0")


@dataclass
class UnlearnResult:
    model_dir: Path
    manifest: dict = field(default_factory=dict)


def sequence_logprob(model, tokenizer, texts: Sequence[str], device: torch.device) -> torch.Tensor:
    """log p(text) summed over its tokens (after the first), one value per text."""
    import torch

    start = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    encoded = [start + tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    width = max(len(ids) for ids in encoded)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    input_ids = torch.full((len(encoded), width), pad, dtype=torch.long)
    mask = torch.zeros((len(encoded), width), dtype=torch.long)
    for row, ids in enumerate(encoded):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        mask[row, : len(ids)] = 1
    input_ids, mask = input_ids.to(device), mask.to(device)
    logits = model(input_ids=input_ids, attention_mask=mask).logits[:, :-1].float()
    token_logprob = torch.log_softmax(logits, dim=-1).gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (token_logprob * mask[:, 1:]).sum(dim=1)


def forget_loss(method: str, logprob: torch.Tensor, reference_logprob: torch.Tensor | None, beta: float) -> torch.Tensor:
    """Gradient ascent: the mean log-likelihood (minimizing it raises the NLL). NPO: the bounded
    preference loss against the reference model."""
    import torch.nn.functional as F

    if method == "gradient_ascent":
        return logprob.mean()
    return -(2.0 / beta) * F.logsigmoid(-beta * (logprob - reference_logprob)).mean()


def unlearn(
    model_dir: str | Path,
    forget_texts: Sequence[str],
    retain_texts: Sequence[str],
    out_dir: str | Path,
    config: UnlearnConfig | None = None,
    forget_sha256: str | None = None,
    log: Callable[[str], None] = print,
    retain_facts: Sequence[tuple[str, str]] = (),
    progress: Callable[[int, int], None] | None = None,
) -> UnlearnResult:
    """Unlearn `forget_texts` from the model in `model_dir` while keeping `retain_texts`; write the
    result to `out_dir` (every other file of the model directory is copied along)."""
    import torch

    from transformers import AutoModelForCausalLM, AutoTokenizer

    config = config or UnlearnConfig()
    config.validate()
    if not forget_texts:
        raise ValueError("the forget set is empty: nothing to unlearn")
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    device = torch.device("cpu")
    model_dir, out_dir = Path(model_dir), Path(out_dir)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32).to(device)
    reference = copy.deepcopy(model).eval() if config.method == "npo" else None
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.0)
    model.train()
    started, losses = time.monotonic(), []

    def batch(texts: Sequence[str]) -> list[str]:
        picks = torch.randint(len(texts), (min(config.batch_size, len(texts)),), generator=generator)
        return [texts[i] for i in picks.tolist()]

    for step in range(1, config.steps + 1):
        forget_batch = batch(forget_texts)
        logprob = sequence_logprob(model, tokenizer, forget_batch, device)
        reference_logprob = None
        if reference is not None:
            with torch.no_grad():
                reference_logprob = sequence_logprob(reference, tokenizer, forget_batch, device)
        loss_forget = forget_loss(config.method, logprob, reference_logprob, config.beta)
        loss_retain = torch.zeros((), device=device)
        if retain_texts and config.retain_weight > 0:
            retain_batch = batch(retain_texts)
            loss_retain = -sequence_logprob(model, tokenizer, retain_batch, device).mean()
        loss = loss_forget + config.retain_weight * loss_retain
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append({"step": step, "forget": round(loss_forget.item(), 5), "retain": round(loss_retain.item(), 5)})
        if progress is not None:
            progress(step, config.steps)
        if step == 1 or step % 10 == 0 or step == config.steps:
            log(f"unlearning step {step}/{config.steps}: forget loss {loss_forget.item():.3f}, retain NLL {loss_retain.item():.3f}")

    out_dir.mkdir(parents=True, exist_ok=True)
    for item in model_dir.iterdir():  # the model's other files (e.g. a planted manifest) come along
        if item.is_file() and item.suffix not in (".safetensors", ".bin") and item.name != UNLEARNING_MANIFEST:
            shutil.copy2(item, out_dir / item.name)
    model.eval()
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    manifest = {
        "base_model_dir": str(model_dir.resolve()), "forget_sha256": forget_sha256, "config": asdict(config),
        "forget_texts": len(forget_texts), "retain_texts": len(retain_texts),
        "retain_facts": [list(key) for key in retain_facts],  # (subject, property): utility is measured on these
        "seconds": round(time.monotonic() - started, 1), "losses": losses,
        "note": "reference unlearning, a verification aid: run real unlearning with your own tooling",
    }
    (out_dir / UNLEARNING_MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return UnlearnResult(out_dir, manifest)


def unlearned_revision(base_revision: str, forget_sha256: str, method: str) -> str:
    """The registry revision of an unlearned model: the base revision, the method, the forget set."""
    return f"{base_revision}-{method.replace('_', '')}-{forget_sha256[:8]}"[:64]
