"""The suite's layout: `unit/` mirrors `wikimem_platform/` (one folder per stage), `dagster/` holds
the assets, sensors, checks and the code location, `e2e/` the slow end-to-end scenarios;
`fixtures/` the session fixtures (canary models and templates, the shipped LMs, the planted model,
a throwaway PostgreSQL server and Redis broker, each built once per session), `support/` the helpers tests import."""

pytest_plugins = [
    "tests.fixtures.canaries",
    "tests.fixtures.models",
    "tests.fixtures.planted",
    "tests.fixtures.postgres",
    "tests.fixtures.redis",
]

import os  # noqa: E402

from wikimem_platform.lm.loading import default_cache_dir  # noqa: E402

# The suite runs as the service does (issue 60, `wikimem_platform.security.files`): umask 077, so
# every folder and file a test creates (instance folders, registries, storage) is private and
# passes the start-up check of the CLI and the code location; and the shared model cache, made
# before that check existed, is closed to other users (its folder only: nothing inside is walked).
os.umask(0o077)
_cache = default_cache_dir()
if _cache.is_dir() and _cache.stat().st_uid == os.getuid() and _cache.stat().st_mode & 0o077:
    _cache.chmod(_cache.stat().st_mode & 0o700)

import pytest  # noqa: E402

# Fixtures that load a real model, or train one on a machine that has none cached: the shipped LMs
# (tests/fixtures/models.py), the trained planted models (tests/fixtures/planted.py) and the NER
# model. A test that asks for one, directly or through another fixture, is `slow` whether or not it
# says so, so that the developer's lane (`pytest -m "not slow"`, docs/CONVENTIONS.md) never loads or
# trains one; `tiny_lm` and tests/support/random_models.py are the fast stand-ins.
REAL_MODEL_FIXTURES = frozenset({"smollm2", "gemma3", "shipped_lm", "planted_model", "short_planted_model",
                                 "planted_reference", "ner_model_dir"})


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects (and before the planted fixtures plan training)
def pytest_collection_modifyitems(items):
    for item in items:
        if REAL_MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
