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
