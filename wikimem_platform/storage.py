"""How results are laid out on disk: the partition-key-to-file-name rule, atomic writes and read
access to the stored tables (`StoredResults`), shared by the domain library and the Dagster layer
so both find the same files and never leave a half-written one behind; JSON as results are written.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

MANIFEST_NAME = "manifest.json"  # every model directory the project trains describes itself here


def path_safe_key(key: str) -> str:
    """A partition key (a model release "org/name@revision") as one file or folder name."""
    return key.replace("/", "_")


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """`write(tmp)` to `<path>.tmp` beside `path`, then rename it over `path`: a killed run leaves
    the old file or the new one, never a half-written one."""
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)


def load_manifest(model_dir: str | Path) -> dict:
    """The manifest of a model directory the project trained (planted, NER)."""
    return json.loads((Path(model_dir) / MANIFEST_NAME).read_text(encoding="utf-8"))


def is_complete_model_dir(model_dir: str | Path, needed_files: Sequence[str], expected_hash: str | None = None) -> bool:
    """Whether a cached model directory holds every needed file and a readable manifest (with this
    config hash, if given): a half-written or stale directory is retrained, never loaded."""
    model_dir = Path(model_dir)
    if not all((model_dir / name).is_file() for name in (MANIFEST_NAME, *needed_files)):
        return False
    try:
        manifest = load_manifest(model_dir)
    except (OSError, ValueError):
        return False
    return expected_hash is None or manifest.get("config_hash") == expected_hash


def write_model_dir(out_dir: str | Path, write_files: Callable[[Path], object], manifest: dict) -> Path:
    """Build a model directory in a staging folder beside `out_dir` (`write_files(staging)`, then
    the manifest last) and swap it in for any old one: a killed run never leaves a directory that
    `is_complete_model_dir` would take for a model."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    try:
        write_files(staging)
        (staging / MANIFEST_NAME).write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out_dir


def default_storage_dir() -> Path:
    """Where the Dagster instance keeps its storage: $DAGSTER_HOME/storage (or ./.dagster_home)."""
    home = Path(os.environ.get("DAGSTER_HOME") or ".dagster_home").resolve()
    return home / "storage"


def request_shard_dir(shard_root: str | os.PathLike, request_id: str) -> Path:
    """A request's own score shards (per release below it): never mixed into a release's shared
    shards, so that one folder holds every score of the person, their kin names and controls."""
    return Path(shard_root) / "requests" / request_id


def report_dir(storage_dir: str | os.PathLike, model_key: str) -> Path:
    """The compliance report's folder for one model release (report.html, forget_set.jsonl, ...)."""
    return Path(storage_dir) / "reports" / path_safe_key(model_key)


class StoredResults:
    """Read access to the Parquet tables the platform's assets wrote."""

    def __init__(self, storage_dir: str | os.PathLike | None = None, parquet_dir: str | os.PathLike | None = None):
        self.storage_dir = Path(storage_dir) if storage_dir else default_storage_dir()
        self.parquet_dir = Path(parquet_dir) if parquet_dir else self.storage_dir / "parquet"

    def table(self, asset: str) -> pd.DataFrame | None:
        """A shared (unpartitioned) table, or None if it was never materialized."""
        path = self.parquet_dir / f"{asset}.parquet"
        return pd.read_parquet(path) if path.exists() else None

    def partition(self, asset: str, key: str) -> pd.DataFrame | None:
        """One model release's table, or None if it was never materialized."""
        path = self.parquet_dir / asset / f"{path_safe_key(key)}.parquet"
        return pd.read_parquet(path) if path.exists() else None

    def partitions(self, asset: str) -> list[str]:
        folder = self.parquet_dir / asset
        return sorted(p.stem for p in folder.glob("*.parquet")) if folder.is_dir() else []

    def memorization(self, key: str) -> pd.DataFrame | None:
        return self.partition("memorization", key)


def json_scalar(value):
    """JSON-safe scalars: NaN and pandas' NA -> None, numpy -> Python."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def json_clean(obj):
    """`obj` with every scalar made JSON-safe (`json_scalar`), through dicts, lists, tuples and
    arrays: a document built from DataFrame rows, where a column that mixes numbers and None
    holds NaN for the None, has no NaN left anywhere."""
    if isinstance(obj, dict):
        return {key: json_clean(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_clean(value) for value in obj]
    if hasattr(obj, "tolist") and getattr(obj, "ndim", 0):  # an array (Parquet lists come back as arrays)
        return [json_clean(value) for value in obj.tolist()]
    return json_scalar(obj)


def to_json(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, default=json_scalar)
