"""The scoring resource (where and how models run) and the model-registry resource."""

import gc
import json
import os
from pathlib import Path

from dagster import ConfigurableResource, InitResourceContext
from pydantic import PrivateAttr

from wikimem_platform.lm.endpoint import DEFAULT_CONCURRENCY, DEFAULT_MAX_RESPONSE_BYTES, EndpointConfig, EndpointModel
from wikimem_platform.lm.fusion import FUSION_CHOICES
from wikimem_platform.lm.loading import load_model, LoadedModel, ModelLoadError, resolve_device, resolve_dtype
from wikimem_platform.lm.scorer import Scorer
from wikimem_platform.registry import ModelEntry, Registry
from wikimem_platform.storage import path_safe_key, request_shard_dir
from wikimem_platform.subject_requests.intake import RequestStore
from wikimem_platform.wikimem.scoring import SentenceNllCache
from wikimem_platform.security.urls import redact_url


class ScoringResource(ConfigurableResource):
    """Device, precision and batching for every model pass; CPU full precision by default.

    On a GPU set device="cuda" and quantization="nf4" (4-bit NF4 with double quantization
    through bitsandbytes, the WikiMem paper's setting). Asking for CUDA on a machine without a
    GPU, an unknown dtype or NF4 on CPU fails at once with a clear error, before any model is
    loaded. Every asset gets its model from `load` / `load_reference`, so these settings reach
    the NLL engine (batch_size x 32 tree tokens a forward), the generator (batch_size prompts a
    call when given), the MIA pass (batch_size x 32 tokens a batch, its gradient norms and
    SaMIA samples), soft-prompt training, and the float32 re-scoring model of a bfloat16 / NF4 run
    (same device and batch size). On CUDA the engine compiles the model's decoder layers
    (`fusion`, wikimem_platform.lm.fusion: 6-13 s once per process, then a sixth less time per
    forward on an 8B model). Reference unlearning takes the same device and dtype names
    (`wikimem unlearn --device --dtype`, `unlearning.methods.unlearn(device=, dtype=)`).
    """

    device: str = "cpu"  # cpu | cuda | cuda:N | auto
    dtype: str = "float32"  # float32 | bfloat16 | float16 (bf16: 1.7x faster on CPU, NLLs move)
    quantization: str = "none"  # none | nf4 (CUDA)
    batch_size: int | None = None  # sentences per forward; None = automatic
    fusion: str = "auto"  # what the NLL engine compiles: auto (layers on CUDA) | layers | norms-mlp | none
    cache_dir: str | None = None  # dequantized GGUF cache (default $WIKIMEM_CACHE_DIR or ~/.cache/wikimem/models)
    shard_dir: str | None = None  # finished scoring shards (default <DAGSTER_HOME>/storage/score_shards)
    nll_cache_dir: str | None = None  # per-model sentence NLLs shared by audits and requests (default <storage>/nll_cache)
    # An endpoint release's server (wikimem_platform.lm.endpoint): requests in flight per step
    # (0: from the server's limits, `EndpointModel.server_concurrency`), prompts per request,
    # seconds for the whole of one HTTP call (429/5xx/time-outs back off), the most bytes one answer may have.
    endpoint_concurrency: int = 0
    endpoint_prompts_per_request: int = 16
    endpoint_timeout_seconds: float = 120.0
    endpoint_max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    _storage: str = PrivateAttr(default="")
    _loaded: dict = PrivateAttr(default_factory=dict)  # {registry key: LoadedModel}: at most one, per process

    def setup_for_execution(self, context: InitResourceContext) -> None:
        self.validate()
        if context.instance is not None:
            self._storage = context.instance.storage_directory()

    def validate(self) -> None:
        """Fail fast, before any model is loaded: CUDA requested without a GPU, an unknown dtype or
        quantization, NF4 on CPU (load_model refuses it there), a batch size below 1."""
        device = resolve_device(self.device)
        resolve_dtype(self.dtype)
        if self.quantization not in ("none", "nf4"):
            raise ModelLoadError(f"quantization must be 'none' or 'nf4', got {self.quantization!r}")
        if self.quantization == "nf4" and device.type != "cuda":
            raise ModelLoadError(f"quantization='nf4' needs device='cuda' (device is {self.device!r}, {device})")
        if self.batch_size is not None and self.batch_size < 1:
            raise ModelLoadError(f"batch_size must be >= 1 or None (automatic), got {self.batch_size}")
        if self.fusion not in FUSION_CHOICES:
            raise ModelLoadError(f"fusion must be one of {', '.join(FUSION_CHOICES)}, got {self.fusion!r}")
        if self.endpoint_concurrency < 0 or self.endpoint_prompts_per_request < 1 or self.endpoint_timeout_seconds <= 0:
            raise ModelLoadError("endpoint_concurrency must be >= 0 (0: from the server) and endpoint_prompts_per_request >= 1, "
                                 f"endpoint_timeout_seconds > 0 (got {self.endpoint_concurrency}, "
                                 f"{self.endpoint_prompts_per_request}, {self.endpoint_timeout_seconds})")
        if not 1024 <= self.endpoint_max_response_bytes <= 2**30:
            raise ModelLoadError(f"endpoint_max_response_bytes must be between 1024 and {2**30} (got {self.endpoint_max_response_bytes})")

    def load(self, entry: ModelEntry, served: bool = False) -> Scorer:
        """The release's model, loaded once per process (the shard steps of an in-process run share
        it); loading another release first lets go of this one, so one model is in memory at a time.
        An endpoint release (served elsewhere) is given only to callers that say `served=True`
        (the scores, through prompt log-probabilities, and the data-subject request audits, which
        also complete through the server); every other caller needs the weights and gets a clear
        error rather than a wrong number."""
        if entry.source_kind == "endpoint" and not served:
            raise ModelLoadError(
                f"{entry.key} is served at {redact_url(entry.source)} (an endpoint release): this step needs the model's weights; "
                "endpoint releases are audited through their scores, memorization and data-subject requests only (issue 36)")
        if entry.key not in self._loaded:
            self._loaded.clear()
            gc.collect()
            self._loaded[entry.key] = self._load(entry)
        return self._loaded[entry.key]

    def load_reference(self, source: str | ModelEntry) -> Scorer:
        """A second model beside the release's (the MIA reference attack): a shipped name or path,
        or a registered release; same settings, not kept: it does not replace the release's model
        in this process."""
        return self._load(source) if isinstance(source, ModelEntry) else self._load_source(source)

    def _load(self, entry: ModelEntry) -> Scorer:
        if entry.source_kind == "endpoint":  # served elsewhere: a client, no weights in this process
            config = EndpointConfig.from_stored(
                entry.source, entry.endpoint, concurrency=self.endpoint_concurrency or DEFAULT_CONCURRENCY,
                prompts_per_request=self.endpoint_prompts_per_request, timeout_seconds=self.endpoint_timeout_seconds,
                max_response_bytes=self.endpoint_max_response_bytes)
            model = EndpointModel(config, name=entry.name, revision=entry.revision)
            if not self.endpoint_concurrency:
                concurrency, why = model.server_concurrency()
                model.with_concurrency(concurrency).details["concurrency"] = f"{concurrency} ({why})"
            else:
                model.details["concurrency"] = f"{self.endpoint_concurrency} (set in the scoring resource)"
            model.check_unchanged(json.loads(entry.endpoint).get("probe"))  # same server, same model as registered?
            return model
        return self._load_source(entry.source, nf4=entry.quantization == "nf4", trust_remote_code=entry.trust_remote_code,
                                 revision=entry.revision if entry.source_kind == "hub" else None)

    def _load_source(self, source: str, nf4: bool = False, trust_remote_code: bool = False,
                     revision: str | None = None) -> LoadedModel:
        """`load_model` with this resource's device, dtype, quantization, batch size and cache."""
        return load_model(
            source,
            device=self.device,
            dtype=self.dtype,
            load_in_4bit=self.quantization == "nf4" or nf4,
            batch_size=self.batch_size or "auto",
            fusion=self.fusion,
            cache_dir=self.cache_dir,
            trust_remote_code=trust_remote_code,
            revision=revision,
        )

    def shards_for(self, partition_key: str) -> Path:
        base = self.shard_dir or os.path.join(self._storage or ".", "score_shards")
        return Path(base) / path_safe_key(partition_key)

    def request_shards_for(self, request_id: str, partition_key: str) -> Path:
        """A request's own shards (the person's, their kin names' and controls' scores): kept out
        of the releases' shared folders, so a purge deletes them with one folder."""
        return request_shard_dir(self.shard_dir or os.path.join(self._storage or ".", "score_shards"), request_id) \
            / path_safe_key(partition_key)

    def sentence_cache(self, lm: Scorer) -> SentenceNllCache:
        """The persistent sentence cache of this model (fingerprint) and these settings."""
        base = self.nll_cache_dir or os.path.join(self._storage or ".", "nll_cache")
        settings = self.settings()
        if lm.details.get("load_in_4bit"):  # a release registered as NF4 is NF4 whatever the resource says
            settings["quantization"] = "nf4"
        return SentenceNllCache.for_model(base, lm.fingerprint, settings)

    def settings(self) -> dict:
        """What, besides model and inputs, changes a score: part of every shard's key."""
        return {"dtype": self.dtype, "quantization": self.quantization}


class RegistryResource(ConfigurableResource):
    """The model registry; url defaults to SQLite in DAGSTER_HOME ($WIKIMEM_REGISTRY_URL overrides)."""

    url: str | None = None

    def registry(self) -> Registry:
        return Registry(self.url)

    def requests(self) -> RequestStore:
        """Data-subject requests, stored in the same database as the releases."""
        return RequestStore(self.url)
