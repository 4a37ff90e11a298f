"""Shared fixtures: canary models/templates and the shipped LMs, each built once per session."""

from tests.conftest_canaries import *  # noqa: F403
from tests.conftest_models import *  # noqa: F403
from tests.conftest_planted import *  # noqa: F403
