"""Shared fixtures: canary models/templates (built once per session)."""

from tests.conftest_canaries import *  # noqa: F403
