"""The code location loads from workspace.yaml, and `scripts/dev.sh` serves it on loopback and stops cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dagster import DagsterInstance
from dagster._core.instance.ref import InstanceRef

from resources.placement import LM_POOL
from tests.support.dagster_process import dev_sh, graphql, processes_of, REPO

DATA_ASSETS = {"humans", "claims", "property_table", "subjects", "counterfactuals", "candidates"}


def test_definitions_validate(tmp_path):
    result = subprocess.run(
        [str(Path(sys.executable).parent / "dagster"), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO, env={**os.environ, "DAGSTER_HOME": str(tmp_path)}, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_dev_sh_serves_the_data_assets_and_stops_on_sigterm(tmp_path):
    """`./scripts/dev.sh &` from a script: the UI lists the data assets, the model pool has its
    limit before any run, and SIGTERM to the script stops every process it started."""
    home = tmp_path / "home"
    with dev_sh(home) as (port, process):
        data = graphql(port, "{ assetNodes { assetKey { path } groupName } }")
        assert len(processes_of(home)) >= 3  # dev.sh, dagster dev, its webserver and daemon
        with DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
            assert instance.event_log_storage.get_concurrency_info(LM_POOL).slot_count == 1
        assert "nux:\n  enabled: false" in (home / "dagster.yaml").read_text()  # no community pop-up
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        deadline = time.monotonic() + 30
        while processes_of(home) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert processes_of(home) == []
    groups = {"/".join(node["assetKey"]["path"]): node["groupName"] for node in data["assetNodes"]}
    assert DATA_ASSETS <= set(groups)
    assert {groups[key] for key in DATA_ASSETS} == {"data"}
