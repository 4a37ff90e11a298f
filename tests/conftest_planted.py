"""The planted-facts models, trained once (default and 50-epoch configs) and cached across runs.

Training is deterministic and keyed by its config hash (`train_planted_model` returns a current
directory untouched), so later runs load them in a second. The first run on a machine must
train them (about 20 minutes of one core), which is the suite's critical path: so when a
selected test needs a model that is not cached, training starts at once in a background
process, the test modules that need it run last, and their fixtures wait for it. Until it ends
the other tests keep to the other core (one torch thread in this process and, through
OMP_NUM_THREADS, in the processes it starts), so that neither side's threads spin waiting for
a core the other holds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.trained import planted_model_dir, planted_training_config, planted_world_config
from wikimem_platform.planted import train_planted_model
from wikimem_platform.planted.training import is_trained, planted_config_hash

# The first test to use a planted model may wait for its training, which the suite-wide per-test
# timeout (pyproject, 900 s) also covers: such tests get this one instead.
PLANTED_TRAINING_TIMEOUT = 3600
PLANTED_FIXTURES = ("planted_model", "short_planted_model")
WAIT_POLL_SECONDS = 2
THREADS_WHILE_TRAINING = 1

# The child reads the same seed and thread count from the environment it inherits.
_TRAINER = """
import logging
import sys
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
from tests.trained import planted_model_dir, planted_training_config, planted_world_config
from wikimem_platform.planted import train_planted_model
for fixture in sys.argv[1:]:
    train_planted_model(planted_model_dir(fixture), planted=planted_world_config(fixture),
                        training=planted_training_config(fixture))
"""

_background: dict = {}


def _needs_planted(item) -> set[str]:
    return set(PLANTED_FIXTURES) & set(getattr(item, "fixturenames", ()))


def _is_cached(fixture: str) -> bool:
    digest = planted_config_hash(planted_world_config(fixture), planted_training_config(fixture))
    return is_trained(planted_model_dir(fixture), digest)


def _train(fixture: str) -> Path:
    return train_planted_model(planted_model_dir(fixture), planted=planted_world_config(fixture),
                               training=planted_training_config(fixture))


def pytest_collection_modifyitems(config, items):
    needed: set[str] = set()
    for item in items:
        if wanted := _needs_planted(item):
            needed |= wanted
            item.add_marker(pytest.mark.timeout(PLANTED_TRAINING_TIMEOUT))
    # Modules that use a planted model run last (whole modules, so module fixtures stay shared):
    # those needing only the 50-epoch model (trained first) before those needing the full one.
    wanted_by_module: dict[str, set[str]] = {}
    for item in items:
        if item.module is not None:
            wanted_by_module.setdefault(item.module.__name__, set()).update(_needs_planted(item))
    order = lambda wanted: 0 if not wanted else 1 if wanted == {"short_planted_model"} else 2  # noqa: E731
    items.sort(key=lambda item: order(wanted_by_module.get(item.module.__name__, set()) if item.module else set()))
    missing = sorted(fixture for fixture in needed if not _is_cached(fixture))
    if missing and not config.option.collectonly:
        cache = getattr(config, "cache", None)  # absent under -p no:cacheprovider
        log_dir = Path(str(cache.mkdir("planted-training"))) if cache else Path(tempfile.mkdtemp(prefix="planted-training-"))
        _start_background_training(missing, log_dir)


def _start_background_training(fixtures: list[str], log_dir: Path) -> None:
    # The 50-epoch model first: it is the smaller wait.
    fixtures = sorted(fixtures, key=lambda fixture: fixture != "short_planted_model")
    log_path = log_dir / "training.log"
    log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - the child writes to it until it ends
    root = str(Path(__file__).resolve().parents[1])  # `tests.trained` is imported from the checkout
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen([sys.executable, "-c", _TRAINER, *fixtures], stdout=log, stderr=subprocess.STDOUT,
                               env=env, cwd=root)
    _background.update(process=process, log=log, log_path=log_path)
    _keep_to_one_core()


def _keep_to_one_core() -> None:
    import torch

    _background["restore"] = (torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS"))
    torch.set_num_threads(THREADS_WHILE_TRAINING)
    os.environ["OMP_NUM_THREADS"] = str(THREADS_WHILE_TRAINING)


def _release_cores_when_trained() -> None:
    """Both cores back to the tests once the background trainer has ended."""
    process = _background.get("process")
    if "restore" not in _background or process is None or process.poll() is None:
        return
    import torch

    threads, omp = _background.pop("restore")
    torch.set_num_threads(threads)
    if omp is None:
        os.environ.pop("OMP_NUM_THREADS", None)
    else:
        os.environ["OMP_NUM_THREADS"] = omp


def pytest_runtest_setup(item):
    _release_cores_when_trained()


def _wait_for_background_training(fixture: str) -> None:
    """Block until the background trainer has written this fixture's model (or ended); the
    fixture then loads it (or, had training failed, trains in-process, which raises the real error)."""
    process = _background.get("process")
    while process is not None and process.poll() is None and not _is_cached(fixture):
        time.sleep(WAIT_POLL_SECONDS)
    if process is not None and process.poll() not in (None, 0):
        sys.stderr.write(f"background planted training failed (log: {_background['log_path']})\n")
    _release_cores_when_trained()


def pytest_unconfigure(config):
    process = _background.get("process")
    if process is not None and process.poll() is None:
        process.terminate()
        process.wait()
    if "log" in _background:
        _background["log"].close()


@pytest.fixture(scope="session")
def planted_model() -> Path:
    """A trained planted model directory (manifest.json, corpus.jsonl, held_out_biographies.jsonl)."""
    _wait_for_background_training("planted_model")
    return _train("planted_model")


@pytest.fixture(scope="session")
def short_planted_model() -> Path:
    """The same planted world trained for 50 epochs (memorization graded by repetitions; about
    2.5 minutes on one core the first time, cached like the default one)."""
    _wait_for_background_training("short_planted_model")
    return _train("short_planted_model")
