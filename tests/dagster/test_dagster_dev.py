"""The code location loads from workspace.yaml, and `dagster dev` serves it on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.dagster_process import REPO, dagster_dev, graphql

DATA_ASSETS = {"humans", "claims", "property_table", "subjects", "counterfactuals", "candidates"}


def test_definitions_validate(tmp_path):
    result = subprocess.run(
        [str(Path(sys.executable).parent / "dagster"), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO, env={**os.environ, "DAGSTER_HOME": str(tmp_path)}, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_dagster_dev_lists_data_assets_over_graphql(tmp_path):
    with dagster_dev(tmp_path / "home") as port:
        data = graphql(port, "{ assetNodes { assetKey { path } groupName } }")
    groups = {"/".join(node["assetKey"]["path"]): node["groupName"] for node in data["assetNodes"]}
    assert DATA_ASSETS <= set(groups)
    assert {groups[key] for key in DATA_ASSETS} == {"data"}
