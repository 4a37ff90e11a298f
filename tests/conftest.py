"""Shared fixtures: canary models/templates, the shipped LMs, the planted model and a throwaway
PostgreSQL server, each built once per session."""

from tests.conftest_canaries import *  # noqa: F403
from tests.conftest_models import *  # noqa: F403
from tests.conftest_planted import *  # noqa: F403
from tests.conftest_postgres import *  # noqa: F403
