"""The asset graph as committed: every asset key with its group, partitions, upstream keys and
checks, every job, sensor and schedule. A change to the graph fails here until the snapshot is
rewritten on purpose (`WIKIMEM_UPDATE_SNAPSHOT=1 .venv/bin/python -m pytest tests/dagster/test_definitions_snapshot.py`)
and the diff reviewed with the change."""

from __future__ import annotations

import json
import os
from pathlib import Path

from definitions import defs

SNAPSHOT = Path(__file__).with_name("definitions_snapshot.json")


def graph_of(definitions) -> dict:
    graph = definitions.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        partitions = node.partitions_def
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "partitions": getattr(partitions, "name", None) or (type(partitions).__name__ if partitions else None),
            "upstream": sorted(parent.to_user_string() for parent in node.parent_keys),
            "checks": sorted(check.name for check in node.check_keys),
        }
    return {
        "assets": assets,
        "jobs": sorted(job.name for job in definitions.jobs or []),
        "sensors": sorted(sensor.name for sensor in definitions.sensors or []),
        "schedules": sorted(schedule.name for schedule in definitions.schedules or []),
    }


def test_the_definitions_match_the_committed_snapshot():
    current = graph_of(defs)
    if os.environ.get("WIKIMEM_UPDATE_SNAPSHOT") == "1":
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    committed = json.loads(SNAPSHOT.read_text())
    changed = sorted(key for key in set(committed["assets"]) | set(current["assets"])
                     if committed["assets"].get(key) != current["assets"].get(key))
    assert changed == [], f"assets added, removed or rewired: {changed}"
    assert {k: v for k, v in current.items() if k != "assets"} == {k: v for k, v in committed.items() if k != "assets"}
