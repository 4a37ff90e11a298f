"""The planted-facts model, trained once (default config) and cached across test runs.

Training is deterministic and keyed by its config hash (`train_planted_model` returns a current
directory untouched), so the first run on a machine trains (about 13 minutes on one core) and later
runs load it in a second.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wikimem_platform.planted import default_planted_dir, train_planted_model


@pytest.fixture(scope="session")
def planted_model() -> Path:
    """A trained planted model directory (manifest.json, corpus.jsonl, held_out_biographies.jsonl)."""
    return train_planted_model(default_planted_dir())
