"""Validate the audit against the planted model's ground truth, in a Dagster instance of its own.

    .venv/bin/python scripts/validate_planted.py            # train (or reuse), register, audit

Trains the default planted model (or reuses it: training is cached by config hash), registers it
as `planted-tiny@<config hash>`, materializes the data and canary assets on the bundled planted
extract, then scores, memorization and `planted_validation` for its partition — the same assets
and code path as any model. The planted data replaces the real sample in the instance it runs
in, so it uses its own DAGSTER_HOME (default ./.dagster_planted; open it with
`DAGSTER_HOME=$PWD/.dagster_planted ./scripts/dev.sh` to browse the results in the UI).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wikimem_platform.reference import bundled

COHORT_SIZE = 44  # the 44 most-read members (11 x 16, 33 x 4) and the 44 non-members


def planted_data_config(cohort_size: int = COHORT_SIZE, per_property: int = 20, model_dir: Path | None = None) -> dict:
    """Run config pointing the data assets at a planted model's own extract (its directory holds
    the people it was trained on: any seed), or at the bundled one (the default world)."""
    from wikimem_platform.planted.training import DUMP_NAME, WEB_PRESENCE_NAME

    dump, web = (Path(model_dir) / DUMP_NAME, Path(model_dir) / WEB_PRESENCE_NAME) if model_dir else (
        bundled.PLANTED_DUMP, bundled.PLANTED_WEB_PRESENCE)
    return {
        "ops": {
            "wikidata_extract": {"config": {"dump_path": str(dump), "web_presence_path": str(web)}},
            "property_table": {"config": {"min_humans": 50}},
            "subjects": {"config": {"size": cohort_size}},
            "counterfactuals": {"config": {"per_property": per_property}},
        }
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", type=Path, default=None, help="planted model directory (default: the cache)")
    parser.add_argument("--cohort-size", type=int, default=COHORT_SIZE)
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DAGSTER_HOME", str(ROOT / ".dagster_planted"))

    from dagster import AssetSelection, DagsterInstance, materialize

    from definitions import defs
    from wikimem_platform.planted import default_planted_dir, registry_fields, train_planted_model
    from wikimem_platform.registry import Registry, RegistryError

    home = Path(os.environ["DAGSTER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        (home / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    model_dir = train_planted_model(args.model_dir or default_planted_dir())
    registry = Registry()
    fields = registry_fields(model_dir)
    try:
        entry = registry.register(**fields)
    except RegistryError as error:
        if error.field != "revision":
            raise
        entry = registry.get(f"{fields['name']}@{fields['revision']}")
    print(f"model {entry.key} from {entry.source}")

    everything = [*defs.assets, *(defs.asset_checks or [])]
    instance = DagsterInstance.get()
    result = materialize(everything, selection=AssetSelection.groups("data", "canaries"), instance=instance,
                         resources=defs.resources, run_config=planted_data_config(args.cohort_size, model_dir=model_dir))
    if not result.success:
        return 1
    instance.add_dynamic_partitions("models", [entry.key])
    result = materialize(everything, selection=AssetSelection.assets("scores", "memorization", "planted_validation"),
                         instance=instance, resources=defs.resources, partition_key=entry.key)
    for event in result.get_asset_materialization_events():
        if event.materialization.asset_key.to_user_string() == "planted_validation":
            for key, value in event.materialization.metadata.items():
                if isinstance(value.value, (int, float)):
                    print(f"{key:40s} {value.value:.4f}")
    return 0 if result.success else 1


if __name__ == "__main__":
    raise SystemExit(main())
