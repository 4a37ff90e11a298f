"""The seed and thread count the suite trains its own models with, and where each one is cached.

The suite itself uses seed 0 and each config's own thread count. A threshold on a trained model
must not hold by the luck of one seed or one machine's float sums, so `scripts/planted_margins.py`
runs the same tests with WIKIMEM_TEST_SEED=1, 2, ... and WIKIMEM_TEST_THREADS=2 (a thread count
changes float sums as another CPU does); those models are cached beside the default ones, under
names that carry the seed and thread count.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from wikimem_platform.planted.generator import PlantedConfig
from wikimem_platform.planted.training import (
    default_planted_dir,
    default_short_planted_dir,
    short_planted_config,
    short_training_config,
    TrainConfig,
)

TEST_SEED = int(os.environ.get("WIKIMEM_TEST_SEED", "0"))
# 0: each training config's own default (one thread for the planted and NER models).
TEST_THREADS = int(os.environ.get("WIKIMEM_TEST_THREADS", "0"))


def run_suffix() -> str:
    """'' for the default run; '-s<seed>', '-t<threads>' otherwise (a cache directory's name)."""
    return (f"-s{TEST_SEED}" if TEST_SEED else "") + (f"-t{TEST_THREADS}" if TEST_THREADS else "")


def with_threads(config):
    """A training config with the run's thread count (unchanged when none is set)."""
    return replace(config, threads=TEST_THREADS) if TEST_THREADS else config


def planted_world_config(fixture: str = "planted_model") -> PlantedConfig:
    """The world config of a planted-model fixture ('planted_model' or 'short_planted_model')."""
    return PlantedConfig(seed=TEST_SEED) if fixture == "planted_model" else short_planted_config(seed=TEST_SEED)


def planted_training_config(fixture: str) -> TrainConfig:
    """The training config of a planted-model fixture ('planted_model' or 'short_planted_model')."""
    base = TrainConfig(seed=TEST_SEED) if fixture == "planted_model" else short_training_config(seed=TEST_SEED)
    return with_threads(base)


def planted_model_dir(fixture: str) -> Path:
    default = default_planted_dir() if fixture == "planted_model" else default_short_planted_dir()
    return default.with_name(default.name + run_suffix())
