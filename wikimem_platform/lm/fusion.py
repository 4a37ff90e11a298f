"""The elementwise work of a transformer body fused into few kernels (torch.compile), for the
scoring engine on CUDA.

In eager PyTorch a bf16 forward of an 8B model spends about a sixth of its time outside the
matrix products: RMSNorm's float32 round trip is about eight passes over the hidden states, the
gated MLP's act(gate) * up three more over the 3.5x wider intermediate, the rotary embedding and
the residual adds a few each. Compiled decoder layers took the engine on Llama-3.1-8B's shape
from 65-70 % to 75-83 % of an H200's bf16 peak, and on SmolLM2-135M's from 1.12x to 1.29x faster
(best of three passes; benchmarks/results/bench_gpu_h200_fusion.txt). Compiled shape-dynamically,
one compilation (6-13 s there, once per process) serves every (rows, width) batch shape and every
layer of the model.

Only the engine's forwards are compiled (`fused` around them): generation, the MIA pass and
unlearning, which carry caches or gradients, keep the eager modules.
"""

from __future__ import annotations

import contextlib
import types
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:
    import torch

# What a scope compiles: "layers" whole decoder layers (attention, rotary and residual adds
# too); "norms-mlp" only the RMS norms and gated MLPs (the smallest graphs, no attention).
FUSION_SCOPES = ("layers", "norms-mlp")
FUSION_CHOICES = ("auto", "none", *FUSION_SCOPES)
_MLP_LINEARS = ("gate_proj", "up_proj", "down_proj")
_COMPILED_FORWARDS: dict[type, Callable] = {}  # per module class: compiled once a process


class FusionError(ValueError):
    """An unknown fusion setting."""


def resolve_fusion(fusion: str | None, device: torch.device, load_in_4bit: bool) -> str | None:
    """The scope the engine compiles, or None for eager.

    "auto": "layers" on CUDA where Triton is there to compile for it and the weights are not
    4-bit (bitsandbytes' layers are not measured compiled); eager on CPU, where a compilation
    costs more than the engine's short runs there gain."""
    if fusion is not None and fusion not in FUSION_CHOICES:
        raise FusionError(f"fusion {fusion!r}: allowed values are {', '.join(FUSION_CHOICES)}")
    if fusion is None or fusion == "none":
        return None
    if fusion != "auto":
        return fusion
    if device.type != "cuda" or load_in_4bit:
        return None
    return "layers" if _has_triton() else None


def _has_triton() -> bool:
    from torch.utils._triton import has_triton  # lazy: imports triton, on CUDA only

    return has_triton()


def fusable_modules(model: torch.nn.Module, scope: str) -> list[torch.nn.Module]:
    """The modules a scope compiles: the decoder layers, or the RMS norms and the gated MLPs whose
    projections are plain torch Linear layers."""
    if scope not in FUSION_SCOPES:
        raise FusionError(f"fusion scope {scope!r}: allowed values are {', '.join(FUSION_SCOPES)}")
    if scope == "layers":
        return _decoder_layers(model)
    return list(_norms_and_mlps(model))


def _decoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The body's list of decoder layers, whatever the architecture names it (Llama and Gemma
    `layers`, GPT-2 `h`): the module list as long as the config's layer count."""
    import torch

    count = getattr(model.config, "num_hidden_layers", None)
    for child in model.base_model.children():
        if isinstance(child, torch.nn.ModuleList) and len(child) == count:
            return list(child)
    return []


def _norms_and_mlps(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
    import torch

    for module in model.modules():
        if type(module).__name__.endswith("RMSNorm"):
            yield module
        elif all(type(getattr(module, name, None)) is torch.nn.Linear for name in _MLP_LINEARS):
            yield module


def fuse(modules: list[torch.nn.Module]) -> None:
    """Compile each module's forward in place, shape-dynamic. Parameters, their names and the
    state dict are unchanged; `unfuse` restores the eager forward. One compiled function per
    class, bound to each module: it holds no module, so a copy of the model (unlearning's
    reference) never runs another model's weights, and a model let go of is freed."""
    import torch

    for module in modules:
        cls = type(module)
        if cls not in _COMPILED_FORWARDS:
            _COMPILED_FORWARDS[cls] = torch.compile(cls.forward, dynamic=True)
        module.forward = types.MethodType(_COMPILED_FORWARDS[cls], module)


def unfuse(modules: list[torch.nn.Module]) -> None:
    for module in modules:
        vars(module).pop("forward", None)


@contextlib.contextmanager
def fused(model: torch.nn.Module, scope: str | None):
    """The model's `scope` compiled inside the block, eager again after it (None: eager).

    A module that cannot be compiled (no C++ compiler for CPU kernels, an operation Dynamo or
    Inductor does not handle) runs eager, with a warning in the log, instead of failing the audit:
    compiled or not, the NLLs are the same."""
    modules = fusable_modules(model, scope) if scope else []
    if not modules:
        yield
        return
    import torch._dynamo

    fuse(modules)
    try:
        with torch._dynamo.config.patch(suppress_errors=True):
            yield
    finally:
        unfuse(modules)
