"""The scoring resource (where and how models run) and the model-registry resource."""

import gc
import os
from pathlib import Path

from dagster import ConfigurableResource, InitResourceContext
from pydantic import PrivateAttr

from wikimem_platform.storage import path_safe_key
from wikimem_platform.models import LoadedModel, ModelLoadError, load_model, resolve_device
from wikimem_platform.registry import ModelEntry, Registry
from wikimem_platform.scoring import SentenceNllCache
from wikimem_platform.subject_requests.intake import RequestStore


class ScoringResource(ConfigurableResource):
    """Device, precision and batching for scoring; CPU full precision by default.

    On a GPU set device="cuda" and quantization="nf4" (4-bit NF4 with double quantization
    through bitsandbytes, the WikiMem paper's setting). Asking for CUDA on a machine without a
    GPU fails at once with a clear error, before any model is loaded.
    """

    device: str = "cpu"  # cpu | cuda | cuda:N | auto
    dtype: str = "float32"  # float32 | bfloat16 | float16 (bf16: 1.7x faster on CPU, NLLs move)
    quantization: str = "none"  # none | nf4 (CUDA)
    batch_size: int | None = None  # sentences per forward; None = automatic
    cache_dir: str | None = None  # dequantized GGUF cache (default $WIKIMEM_CACHE_DIR or ~/.cache/wikimem/models)
    shard_dir: str | None = None  # finished scoring shards (default <DAGSTER_HOME>/storage/score_shards)
    nll_cache_dir: str | None = None  # per-model sentence NLLs shared by audits and requests (default <storage>/nll_cache)
    _storage: str = PrivateAttr(default="")
    _loaded: dict = PrivateAttr(default_factory=dict)  # {registry key: LoadedModel}: at most one, per process

    def setup_for_execution(self, context: InitResourceContext) -> None:
        resolve_device(self.device)  # fail fast: CUDA requested without a GPU
        if self.quantization not in ("none", "nf4"):
            raise ModelLoadError(f"quantization must be 'none' or 'nf4', got {self.quantization!r}")
        if context.instance is not None:
            self._storage = context.instance.storage_directory()

    def load(self, entry: ModelEntry) -> LoadedModel:
        """The release's model, loaded once per process (the shard steps of an in-process run share
        it); loading another release first lets go of this one, so one model is in memory at a time."""
        if entry.key not in self._loaded:
            self._loaded.clear()
            gc.collect()
            self._loaded[entry.key] = self._load(entry)
        return self._loaded[entry.key]

    def load_reference(self, source: str) -> LoadedModel:
        """A second model beside the release's (the MIA reference attack), same settings, not
        kept: it does not replace the release's model in this process."""
        return self._load_source(source)

    def _load(self, entry: ModelEntry) -> LoadedModel:
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
            cache_dir=self.cache_dir,
            trust_remote_code=trust_remote_code,
            revision=revision,
        )

    def shards_for(self, partition_key: str) -> Path:
        base = self.shard_dir or os.path.join(self._storage or ".", "score_shards")
        return Path(base) / path_safe_key(partition_key)

    def sentence_cache(self, lm: LoadedModel) -> SentenceNllCache:
        """The persistent sentence cache of this model (fingerprint) and these settings."""
        base = self.nll_cache_dir or os.path.join(self._storage or ".", "nll_cache")
        return SentenceNllCache.for_model(base, lm.fingerprint, self.settings())

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
