"""Code versions derived from the domain code itself.

An asset's code version is a hash of the source of the domain modules it runs and of every
project module they import, transitively (`code_graph.dependencies`): it changes exactly when
that code changes, so Dagster marks the asset stale, the lineage of a report names the code that
produced every input, and stored scoring shards and cached sentence NLLs are keyed by it. No call
site lists its dependencies by hand, so none can forget one (e.g. `lm.loading`, whose
`LoadedModel.encode` decides the start tokens every NLL depends on).
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from wikimem_platform.code_graph import dependencies, module_files

VERSION_CHARS = 12
# The checkout (or site-packages) that holds this package.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ("wikimem_platform",)
# Every asset reads thresholds, kinds or column names from here: part of every version.
SHARED_MODULES = ("wikimem_platform.vocabulary",)


def code_hash(root: Path, module_names: tuple[str, ...]) -> str:
    """Short SHA-256 of the named modules (a package counts all its modules), of every domain
    module they import, transitively, and of the shared vocabulary, as the files under `root` are now."""
    files = module_files(root, DOMAIN)
    digest = hashlib.sha256()
    for name in dependencies(root, tuple(sorted(set(module_names) | set(SHARED_MODULES))), DOMAIN):
        digest.update(f"{name}\n".encode())
        digest.update(files[name].read_bytes())
    return digest.hexdigest()[:VERSION_CHARS]


@cache
def source_version(*module_names: str) -> str:
    """`code_hash` of the installed domain library, once per process: name the modules whose
    functions the asset calls (`__name__` inside a module); their imports are followed."""
    return code_hash(PROJECT_ROOT, module_names)
