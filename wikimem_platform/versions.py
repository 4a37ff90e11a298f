"""Code versions derived from the domain code itself.

An asset's code version is a hash of the source of the domain modules it runs: it changes exactly
when that code changes, so Dagster marks the asset stale, the lineage of a report names the code
that produced every input, and stored scoring shards are keyed by it (no hand-bumped counter).
"""

from __future__ import annotations

import hashlib
import importlib
from functools import cache
from pathlib import Path

VERSION_CHARS = 12


def _source_files(module_name: str) -> list[Path]:
    module = importlib.import_module(module_name)
    path = Path(module.__file__)
    if path.name == "__init__.py":  # a package: every module in it
        return sorted(path.parent.rglob("*.py"))
    return [path]


# Every asset reads thresholds, kinds or column names from here: part of every version.
SHARED_MODULES = ("wikimem_platform.vocabulary",)


@cache
def source_version(*module_names: str) -> str:
    """Short SHA-256 of the named modules' source files (a package counts all its modules) and of
    the shared vocabulary. Imports are not followed: name every module whose code the asset runs."""
    digest = hashlib.sha256()
    for name in sorted(set(module_names) | set(SHARED_MODULES)):
        for path in _source_files(name):
            digest.update(f"{name}:{path.name}\n".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:VERSION_CHARS]
