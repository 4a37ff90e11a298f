"""Reference unlearning, a verification aid — not the product's promise.

It exists so the erasure loop can be checked end to end (forget set -> unlearning -> new revision
-> re-audit) on a model whose ground truth is known; real deployments use their own unlearning
tooling on the exported sets. Two classic forget losses:

- gradient ascent: maximize the forget texts' NLL;
- NPO (negative preference optimization, Zhang et al. 2024): the bounded loss
  -(2/beta) * log sigmoid(-beta * (log p_theta(y) - log p_ref(y))) against a frozen copy of the
  model, which slows down once a text is forgotten instead of diverging like gradient ascent;

and two retain losses:

- "nll": the retain texts' NLL (gradient difference). It keeps the true sentences likely, but
  nothing stops a competing value from becoming likelier too, and it drags every sentence of
  the retain wordings far from where it was (measured: 10-120 nats), look-alike names included;
  an audit reads rankings calibrated against those look-alikes, so retain facts with thin
  margins flip;
- "nll+kl" (default): the same NLL plus KL(reference || model) over every next-token
  distribution of the sentences an audit ranks for each retain fact: its wordings filled with
  every competing value, for the person and for their look-alike names (`ranking_texts`). The
  model may change what it says about the forgotten people, not the rankings of anyone else.

Both run on a Hugging Face causal LM directory with `transformers` and `torch` only, seeded, and
write a new model directory with `unlearning.json` (forget-set hash, method, steps, seed, losses,
device and dtype).

Where it runs: `device` (cpu, cuda, cuda:N, auto) and `dtype` (float32, bfloat16), the same
names and values as the scoring resource's; CPU float32 by default. Two ways to train
(`UnlearnConfig.adapter`):

- "none" (default): every weight is fine-tuned with AdamW and the frozen reference is a second
  copy, so the model needs about 5x its weights (weights, reference, gradients, two Adam moments;
  4x without a reference): an 8B model is ~160 GB in float32 and ~80 GB in bfloat16, more than
  one GPU holds;
- "lora": LoRA adapters (`peft`) on the attention and MLP projections (peft's "all-linear": every
  linear layer but the output head, for any architecture; or `lora_target_modules`), the base
  weights frozen and held once. The reference is the same model with its adapters disabled
  (`model.disable_adapter()`, under no_grad): no copy. Only the adapters (float32, peft's
  default, whatever the weights' dtype) carry gradients and Adam moments, so an 8B model in
  bfloat16 needs ~16.4 GB (weights 16.1 GB, rank-8 adapter states 0.3 GB) and fits one 80 GB GPU.
  At the end the adapters are merged into the weights (`merge_and_unload`) and a plain model
  directory is written, as with full fine-tuning (the same loader audits it, the same registry
  call makes it a new revision); `unlearning.json` records the adapter settings.

On CUDA the need is checked against the GPU's free memory before anything is loaded, and a model
that does not fit is refused with the numbers (no silent fall-back to another device).
float16 is refused: training in float16 needs loss scaling, which this reference does not do.
The batches drawn are the same on every device (a CPU generator), so a CUDA run follows the CPU
one up to kernel rounding.
"""

from __future__ import annotations

import copy
import json
import shutil
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from wikimem_platform.lm.loading import resolve_device, resolve_dtype

if TYPE_CHECKING:
    import torch
    import torch.nn.functional as F

METHODS = ("npo", "gradient_ascent")
RETAIN_LOSSES = ("nll+kl", "nll")
UNLEARNING_MANIFEST = "unlearning.json"
TRAINING_DTYPES = ("float32", "bfloat16")
# Bytes per weight element for full fine-tuning: the weights, their gradients and AdamW's two
# moments (all in the weights' dtype), plus the frozen reference copy when one is used.
STATE_COPIES, REFERENCE_COPIES = 4, 1
ACTIVATION_MARGIN = 1.2  # headroom for activations and the allocator on top of that
ADAPTERS = ("none", "lora")
# peft's shorthand for every linear (and GPT-2 Conv1D) layer but the output head: the attention
# and MLP projections of any architecture (GPT-2: c_attn, c_proj, c_fc; Llama: q/k/v/o_proj,
# gate/up/down_proj).
LORA_ALL_LINEAR = "all-linear"
# LoRA: the frozen weights once (their dtype), and per adapter element its weight, gradient and
# two AdamW moments, in float32 (peft keeps adapters in float32 under bfloat16 weights).
ADAPTER_STATE_BYTES = 4 * STATE_COPIES


@dataclass
class UnlearnConfig:
    # Tuned on the planted model (3 of its most-read members, 12 facts, 48 retain facts), over
    # planted models of 2 seeds x 3 unlearning seeds (README, "Forget sets"). With the NLL retain
    # loss alone (150 steps at 5e-4, weight 2), 43-47 of the 48 retain facts stayed memorized
    # whenever all 12 were forgotten (100 steps: 43-47; retain weight 3, KL alone, a hinge on the
    # reference NLL: no better). NLL + ranking KL kept 48 of 48 in every run; at 5e-4 it left up
    # to 2 of the 12 memorized, at 1e-3 one in one run, at 1.5e-3 none (every forgotten fact at
    # M <= 0.09).
    method: str = "npo"
    steps: int = 150
    learning_rate: float = 1.5e-3
    batch_size: int = 32  # texts per step, forget and retain each (and ranking texts for the KL)
    beta: float = 0.1  # NPO's inverse temperature
    retain_weight: float = 2.0  # weight of the retain NLL
    retain_loss: str = "nll+kl"  # see the module docstring
    kl_weight: float = 1.0  # weight of the ranking KL (retain_loss "nll+kl")
    seed: int = 0
    # "none": full fine-tuning (the settings above); "lora": LoRA adapters, merged on output (module
    # docstring). With "lora", `lora_learning_rate` replaces `learning_rate`; every other setting
    # (steps, batch size, losses and their weights) is shared.
    adapter: str = "none"
    lora_rank: int = 8
    lora_alpha: float = 16.0
    lora_target_modules: tuple[str, ...] = ()  # module names; () = peft's LORA_ALL_LINEAR
    # Tuned on the planted model like the settings above (3 members' 12 facts forgotten, the 32 retain
    # facts ranked first before; NPO + NLL + ranking KL, 150 steps of 32 texts, rank 8, alpha 16, every
    # projection: 65,536 trainable of 983,680 parameters): 12 of 12 forgotten and 32 of 32 kept at
    # 3e-3 (unlearning seeds 0, 1, 2) and at 1e-2 (seeds 0, 1, 2); 1e-2, ~7x full fine-tuning's
    # rate, as LoRA's low-rank updates move the weights less per step (tests/unit/unlearning/test_lora.py).
    lora_learning_rate: float = 1e-2

    @property
    def effective_learning_rate(self) -> float:
        return self.lora_learning_rate if self.adapter == "lora" else self.learning_rate

    def validate(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.retain_loss not in RETAIN_LOSSES:
            raise ValueError(f"retain_loss must be one of {', '.join(RETAIN_LOSSES)}, got {self.retain_loss!r}")
        if (self.steps < 1 or self.batch_size < 1 or self.learning_rate <= 0 or self.beta <= 0 or self.retain_weight < 0
                or self.kl_weight < 0):
            raise ValueError("steps and batch_size must be >= 1, learning_rate and beta > 0, retain_weight and kl_weight >= 0")
        if self.adapter not in ADAPTERS:
            raise ValueError(f"adapter must be one of {', '.join(ADAPTERS)}, got {self.adapter!r}")
        if self.lora_rank < 1 or self.lora_alpha <= 0 or self.lora_learning_rate <= 0:
            raise ValueError("lora_rank must be >= 1, lora_alpha and lora_learning_rate > 0")
        if isinstance(self.lora_target_modules, str):
            raise ValueError("lora_target_modules is a sequence of module names, e.g. ('c_attn', 'c_fc'), "
                             f"got the string {self.lora_target_modules!r}")


@dataclass
class UnlearnResult:
    model_dir: Path
    manifest: dict = field(default_factory=dict)


def encode_batch(tokenizer, texts: Sequence[str], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(input_ids, attention mask) of texts, right-padded, each after the model's start token."""
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
    return input_ids.to(device), mask.to(device)


def next_token_logprobs(model, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log p(. | prefix) at every position that predicts a token of the text: (batch, width - 1, vocab)."""
    import torch

    return torch.log_softmax(model(input_ids=input_ids, attention_mask=mask).logits[:, :-1].float(), dim=-1)


def sequence_logprob(model, tokenizer, texts: Sequence[str], device: torch.device) -> torch.Tensor:
    """log p(text) summed over its tokens (after the first), one value per text."""
    input_ids, mask = encode_batch(tokenizer, texts, device)
    token_logprob = next_token_logprobs(model, input_ids, mask).gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (token_logprob * mask[:, 1:]).sum(dim=1)


@contextmanager
def frozen_reference(model, reference) -> Iterator:
    """The frozen reference to compute with, under no_grad: `reference` (full fine-tuning's copy),
    or, when it is None, `model` itself with its LoRA adapters disabled (and in eval mode, as the
    copy is), which is the original model without a second one in memory."""
    import torch

    if reference is not None:
        with torch.no_grad():
            yield reference
        return
    training = model.training
    model.eval()
    try:
        with model.disable_adapter(), torch.no_grad():
            yield model
    finally:
        model.train(training)


def retain_kl(model, reference, tokenizer, texts: Sequence[str], device: torch.device) -> torch.Tensor:
    """KL(reference || model) of the next-token distributions at every position of the texts, summed
    over a text's positions, averaged over texts: the probability of every token, competing ones
    included, stays where the reference had it. reference None: the model's adapters disabled."""
    input_ids, mask = encode_batch(tokenizer, texts, device)
    with frozen_reference(model, reference) as frozen:
        reference_logprobs = next_token_logprobs(frozen, input_ids, mask)
    logprobs = next_token_logprobs(model, input_ids, mask)
    kl = (reference_logprobs.exp() * (reference_logprobs - logprobs)).sum(dim=-1)
    return (kl * mask[:, 1:]).sum(dim=1).mean()


def forget_loss(method: str, logprob: torch.Tensor, reference_logprob: torch.Tensor | None, beta: float) -> torch.Tensor:
    """Gradient ascent: the mean log-likelihood (minimizing it raises the NLL). NPO: the bounded
    preference loss against the reference model."""
    import torch.nn.functional as F

    if method == "gradient_ascent":
        return logprob.mean()
    return -(2.0 / beta) * F.logsigmoid(-beta * (logprob - reference_logprob)).mean()


class UnlearningDoesNotFit(RuntimeError):
    """Unlearning this model (full fine-tuning, or LoRA) does not fit the chosen GPU's free memory."""


def full_finetune_bytes(parameter_count: int, dtype: torch.dtype, with_reference: bool) -> int:
    """Memory that full fine-tuning holds, activations aside: weights, gradients and two AdamW
    moments in `dtype`, and a reference copy when NPO or the ranking KL needs one."""
    copies = STATE_COPIES + (REFERENCE_COPIES if with_reference else 0)
    return parameter_count * dtype.itemsize * copies


def lora_finetune_bytes(parameter_count: int, adapter_parameter_count: int, dtype: torch.dtype) -> int:
    """Memory that LoRA training holds, activations aside: the frozen weights once in `dtype` (the
    reference is the same weights with the adapters disabled: no copy), and for the adapters their
    weights, gradients and two AdamW moments in float32 (ADAPTER_STATE_BYTES per element)."""
    return parameter_count * dtype.itemsize + adapter_parameter_count * ADAPTER_STATE_BYTES


def lora_config(config: UnlearnConfig):
    """The peft LoraConfig of an UnlearnConfig: rank, alpha, target modules (default every linear
    projection but the output head), no dropout (the same batches give the same adapters)."""
    from peft import LoraConfig

    targets = list(config.lora_target_modules) if config.lora_target_modules else LORA_ALL_LINEAR
    return LoraConfig(r=config.lora_rank, lora_alpha=config.lora_alpha, lora_dropout=0.0, bias="none",
                      target_modules=targets, task_type="CAUSAL_LM")


def with_lora(model, config: UnlearnConfig):
    """`model` wrapped by peft with fresh LoRA adapters (only they require grad). A model in which
    no module matches is refused with an error naming `lora_target_modules`."""
    from peft import get_peft_model

    try:
        with warnings.catch_warnings():  # GPT-2's Conv1D projections: peft transposes them, as it should
            warnings.filterwarnings("ignore", message="fan_in_fan_out is set to False")
            peft_model = get_peft_model(model, lora_config(config))
    except ValueError as error:  # peft: "Target modules ... not found in the base model"
        raise ValueError(
            f"LoRA found no module to adapt in this {type(model).__name__} "
            f"(lora_target_modules={list(config.lora_target_modules) or LORA_ALL_LINEAR!r}): name the model's "
            f"linear projections in UnlearnConfig.lora_target_modules (wikimem unlearn --lora-target-modules); "
            f"peft said: {error}") from error
    if not any(p.requires_grad for p in peft_model.parameters()):
        raise ValueError(f"LoRA found no module to adapt in this {type(model).__name__}: name its linear "
                         "projections in UnlearnConfig.lora_target_modules")
    return peft_model


def _shell(model_dir: Path):
    """The model of model_dir built on the meta device (nothing is allocated)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(model_dir))


def _parameter_count(model_dir: Path) -> int:
    """Parameters of the model in model_dir, counted on the meta device (nothing is allocated)."""
    return sum(p.numel() for p in _shell(model_dir).parameters())


def training_bytes(model_dir: Path, dtype: torch.dtype, with_reference: bool, config: UnlearnConfig | None = None) -> int:
    """The bytes unlearning the model in model_dir holds with `config`'s adapter setting, counted on
    the meta device: full_finetune_bytes, or lora_finetune_bytes (adapters counted as peft builds them)."""
    import torch

    if config is None or config.adapter == "none":
        return full_finetune_bytes(_parameter_count(model_dir), dtype, with_reference)
    shell = _shell(model_dir)
    parameters = sum(p.numel() for p in shell.parameters())
    with torch.device("meta"):
        adapters = sum(p.numel() for p in with_lora(shell, config).parameters() if p.requires_grad)
    return lora_finetune_bytes(parameters, adapters, dtype)


def check_fits(model_dir: Path, device: torch.device, dtype: torch.dtype, with_reference: bool,
               config: UnlearnConfig | None = None) -> int:
    """The bytes unlearning needs (training_bytes: full fine-tuning, or LoRA when config.adapter is
    "lora"); on CUDA, refused (UnlearningDoesNotFit) when that need (with ACTIVATION_MARGIN) exceeds
    the GPU's free memory. CPU memory is not checked."""
    import torch

    lora = config is not None and config.adapter == "lora"
    need = training_bytes(model_dir, dtype, with_reference, config)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        if need * ACTIVATION_MARGIN > free:
            if lora:
                raise UnlearningDoesNotFit(
                    f"LoRA unlearning of {model_dir.name} in {str(dtype).removeprefix('torch.')} needs about "
                    f"{need * ACTIVATION_MARGIN / 1e9:.1f} GB on {device} (the weights once, the adapters' weights, "
                    f"gradients and two AdamW moments, activations) but {free / 1e9:.1f} GB are free: this model needs "
                    "a larger device (or bfloat16); it is not moved to another device")
            raise UnlearningDoesNotFit(
                f"full fine-tuning of {model_dir.name} in {str(dtype).removeprefix('torch.')} needs about "
                f"{need * ACTIVATION_MARGIN / 1e9:.1f} GB on {device} (weights, gradients, two AdamW moments"
                f"{', a reference copy' if with_reference else ''}, activations) but {free / 1e9:.1f} GB are free: "
                "reference unlearning fine-tunes every weight, so this model needs adapters (LoRA: adapter 'lora', "
                "wikimem unlearn --adapter lora) or a larger device; it is not moved to another device")
    return need


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
    ranking_texts: Sequence[str] = (),
    device: str | torch.device = "cpu",
    dtype: str = "float32",
) -> UnlearnResult:
    """Unlearn `forget_texts` from the model in `model_dir` while keeping `retain_texts` (and, with
    retain_loss "nll+kl", the model's distributions on `ranking_texts`, see
    `export.ranking_texts`); write the result to `out_dir` (every other file of the model
    directory is copied along). `device` and `dtype` as the scoring resource's (module
    docstring): the weights are trained and saved in `dtype`."""
    import torch

    from transformers import AutoModelForCausalLM, AutoTokenizer


    config = config or UnlearnConfig()
    config.validate()
    if not forget_texts:
        raise ValueError("the forget set is empty: nothing to unlearn")
    use_kl = config.retain_loss == "nll+kl" and config.kl_weight > 0
    if use_kl and not ranking_texts:
        raise ValueError("retain_loss 'nll+kl' needs ranking_texts (unlearning.export.ranking_texts), or use retain_loss 'nll'")
    device = resolve_device(device)  # a clear error when CUDA is asked for and absent
    torch_dtype = resolve_dtype(dtype)
    if str(torch_dtype).removeprefix("torch.") not in TRAINING_DTYPES:
        raise ValueError(f"dtype {dtype!r} is not trained here: use one of {', '.join(TRAINING_DTYPES)} "
                         "(float16 full fine-tuning needs loss scaling)")
    model_dir, out_dir = Path(model_dir), Path(out_dir)
    lora = config.adapter == "lora"
    with_reference = config.method == "npo" or use_kl
    check_fits(model_dir, device, torch_dtype, with_reference, config)
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)  # on CPU: the same batches on every device
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch_dtype).to(device)
    reference = None  # LoRA: the model itself with its adapters disabled (frozen_reference)
    if lora:
        model = with_lora(model, config)  # the base weights frozen, fresh adapters (seeded above)
    elif with_reference:
        reference = copy.deepcopy(model).eval()
        for parameter in reference.parameters():
            parameter.requires_grad_(False)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.effective_learning_rate, weight_decay=0.0)
    model.train()
    started, losses = time.monotonic(), []

    def batch(texts: Sequence[str]) -> list[str]:
        picks = torch.randint(len(texts), (min(config.batch_size, len(texts)),), generator=generator)
        return [texts[i] for i in picks.tolist()]

    for step in range(1, config.steps + 1):
        forget_batch = batch(forget_texts)
        logprob = sequence_logprob(model, tokenizer, forget_batch, device)
        reference_logprob = None
        if config.method == "npo":
            with frozen_reference(model, reference) as frozen:
                reference_logprob = sequence_logprob(frozen, tokenizer, forget_batch, device)
        loss_forget = forget_loss(config.method, logprob, reference_logprob, config.beta)
        loss_retain = torch.zeros((), device=device)
        if retain_texts and config.retain_weight > 0:
            loss_retain = -sequence_logprob(model, tokenizer, batch(retain_texts), device).mean()
        loss_kl = (retain_kl(model, reference, tokenizer, batch(ranking_texts), device) if use_kl
                   else torch.zeros((), device=device))
        loss = loss_forget + config.retain_weight * loss_retain + config.kl_weight * loss_kl
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append({"step": step, "forget": round(loss_forget.item(), 5), "retain": round(loss_retain.item(), 5),
                       "ranking_kl": round(loss_kl.item(), 5)})
        if progress is not None:
            progress(step, config.steps)
        if step == 1 or step % 10 == 0 or step == config.steps:
            log(f"unlearning step {step}/{config.steps}: forget loss {loss_forget.item():.3f}, retain NLL "
                f"{loss_retain.item():.3f}, ranking KL {loss_kl.item():.3f}")

    out_dir.mkdir(parents=True, exist_ok=True)
    for item in model_dir.iterdir():  # the model's other files (e.g. a planted manifest) come along
        if item.is_file() and item.suffix not in (".safetensors", ".bin") and item.name != UNLEARNING_MANIFEST:
            shutil.copy2(item, out_dir / item.name)
    model.eval()
    adapter = None
    if lora:  # merged into the weights: a plain model directory, audited and registered like any other
        adapter = {"type": "lora", "rank": config.lora_rank, "alpha": config.lora_alpha,
                   "target_modules": sorted({name.rsplit(".", 1)[-1] for name in model.peft_config["default"].target_modules}),
                   "learning_rate": config.lora_learning_rate,
                   "trainable_parameters": sum(p.numel() for p in trainable),
                   "parameters": sum(p.numel() for p in model.get_base_model().parameters()) - sum(p.numel() for p in trainable),
                   "merged": True}
        model = model.merge_and_unload()
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    manifest = {
        "base_model_dir": str(model_dir.resolve()), "forget_sha256": forget_sha256, "config": asdict(config),
        "adapter": adapter, "device": str(device), "dtype": str(torch_dtype).removeprefix("torch."),
        "forget_texts": len(forget_texts), "retain_texts": len(retain_texts), "ranking_texts": len(ranking_texts),
        "retain_facts": [list(key) for key in retain_facts],  # (subject, property): utility is measured on these
        "seconds": round(time.monotonic() - started, 1), "losses": losses,
        "note": "reference unlearning, a verification aid: run real unlearning with your own tooling",
    }
    (out_dir / UNLEARNING_MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return UnlearnResult(out_dir, manifest)


def unlearned_revision(base_revision: str, forget_sha256: str, method: str) -> str:
    """The registry revision of an unlearned model: the base revision, the method, the forget set."""
    return f"{base_revision}-{method.replace('_', '')}-{forget_sha256[:8]}"[:64]
