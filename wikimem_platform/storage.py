"""How results are laid out on disk: the partition-key-to-file-name rule and atomic writes, shared
by the domain library and the Dagster layer so both find the same files and never leave a
half-written one behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def path_safe_key(key: str) -> str:
    """A partition key (a model release "org/name@revision") as one file or folder name."""
    return key.replace("/", "_")


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """`write(tmp)` to `<path>.tmp` beside `path`, then rename it over `path`: a killed run leaves
    the old file or the new one, never a half-written one."""
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)
