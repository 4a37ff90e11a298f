"""The planted-facts model, trained once (default config) and cached across test runs.

Training is deterministic and keyed by its config hash (`train_planted_model` returns a current
directory untouched), so the first run on a machine trains (13-17 minutes on one core) and later
runs load it in a second.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wikimem_platform.planted import default_planted_dir, train_planted_model
from wikimem_platform.planted.training import default_short_planted_dir, short_training_config

# The first test to use `planted_model` trains it during its setup, which the suite-wide
# per-test timeout (pyproject, 900 s) also covers: such tests get this one instead.
PLANTED_TRAINING_TIMEOUT = 3600


def pytest_collection_modifyitems(items):
    for item in items:
        if {"planted_model", "short_planted_model"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.timeout(PLANTED_TRAINING_TIMEOUT))


@pytest.fixture(scope="session")
def planted_model() -> Path:
    """A trained planted model directory (manifest.json, corpus.jsonl, held_out_biographies.jsonl)."""
    return train_planted_model(default_planted_dir())


@pytest.fixture(scope="session")
def short_planted_model() -> Path:
    """The same planted world trained for 50 epochs (memorization graded by repetitions; about
    2.5 minutes on one core the first time, cached like the default one)."""
    return train_planted_model(default_short_planted_dir(), training=short_training_config())
