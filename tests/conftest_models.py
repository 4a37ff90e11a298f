"""Session-wide fixtures for the two PyPI-shipped models.

Loading goes through one process-wide lru_cache, so a model is loaded once per test session
even when several modules (or tests/conftest.py) import these fixtures. The first load ever
dequantizes the GGUF into the model cache (~20 s SmolLM2, ~55 s Gemma 3); later loads take
0.4 s / 4 s.
"""

from __future__ import annotations

import functools
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from wikimem_platform.lm.loading import LoadedModel, load_model  # noqa: E402

SHIPPED_MODEL_NAMES = ["smollm2-135m-instruct", "gemma-3-270m"]


@functools.lru_cache(maxsize=None)
def cached_model(name: str) -> LoadedModel:
    """The shipped model `name`, loaded once per process (float32, CPU, default cache)."""
    return load_model(name, device="cpu")


@pytest.fixture(scope="session")
def smollm2() -> LoadedModel:
    return cached_model("smollm2-135m-instruct")


@pytest.fixture(scope="session")
def gemma3() -> LoadedModel:
    return cached_model("gemma-3-270m")


@pytest.fixture(scope="session", params=SHIPPED_MODEL_NAMES)
def shipped_lm(request) -> LoadedModel:
    """Each shipped model in turn."""
    return cached_model(request.param)
