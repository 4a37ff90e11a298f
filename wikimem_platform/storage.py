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

from wikimem_platform.settings import instance_paths

MANIFEST_NAME = "manifest.json"  # every model directory the project trains describes itself here


def path_safe_key(key: str) -> str:
    """A partition key (a model release "org/name@revision") as one file or folder name."""
    return key.replace("/", "_")


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """`write(tmp)` to a temp file of its own beside `path` (`<name>.<random>.tmp`: two writers never
    share one, and a purge's `<name>.*` finds a leftover), fsync it, then rename it over `path`: a
    killed run leaves the old file or the new one, never a half-written one, and a failed write
    (a full disk) leaves no temp file."""
    path = Path(path)
    fd, name = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        _fsync(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _fsync(path: Path, directory: bool = False) -> None:
    """Flush a file's data (or a folder's entries) to disk before a rename publishes it: after a
    power cut the renamed name holds the new bytes, not an empty file."""
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


STAGING_MARK = ".staging-"  # `.<folder>.staging-<random>`: a folder being built, or an old one being removed


def staging_dirs(folder: str | os.PathLike) -> list[Path]:
    """A folder's staging leftovers beside it (a run killed while writing or removing one)."""
    folder = Path(folder)
    return sorted(folder.parent.glob(f".{folder.name}{STAGING_MARK}*")) if folder.parent.is_dir() else []


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2():
    """glibc's renameat2 (Linux 3.15+, glibc 2.28+), or None where there is none."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    function.restype = ctypes.c_int
    return function


_RENAMEAT2 = _renameat2()


def exchange_paths(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Swap two existing paths in one step (renameat2 RENAME_EXCHANGE); False where the system or
    the file system cannot (then nothing was moved). Raises OSError otherwise (ENOENT: one is missing)."""
    import ctypes
    import errno

    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)  # carried files are never rewritten in place: sharing the inode is safe
    except OSError:
        shutil.copy2(source, target)


def replace_folder(folder: str | os.PathLike, write_files: Callable[[Path], object],
                   carry: Callable[[str], bool] = lambda name: False) -> Path:
    """Build a folder's new contents in a staging folder beside it (`write_files(staging)`, plus the
    old folder's entries `carry(name)` accepts) and swap it in whole: a reader of the folder sees the
    old set or the new one, never a mix, and a failed build (a full disk) leaves the old one as it
    was and no staging folder.

    The swap is renameat2(RENAME_EXCHANGE): the folder stays a real folder at its path, so readers,
    the purge and the permission checks need no new layout (a symlink to versions would), and two
    writers need no lock (each removes whatever its exchange handed back). Where the exchange is not
    available the old folder is renamed away first: a reader may then briefly find no folder, never a
    mixed one."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}{STAGING_MARK}", dir=folder.parent))
    try:
        write_files(staging)
        _carry_over(folder, staging, carry)
        for root, _dirs, names in os.walk(staging):
            for name in names:
                _fsync(Path(root) / name)
            _fsync(Path(root), directory=True)
        _swap_in(staging, folder)
        _fsync(folder.parent, directory=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # after a swap: the old folder, handed back under this name
    return folder


def _carry_over(folder: Path, staging: Path, carry: Callable[[str], bool], attempts: int = 5) -> None:
    """Link the old folder's carried entries into the staging folder (again, should another writer
    swap the old folder out and remove it meanwhile)."""
    written = set(os.listdir(staging))
    for _ in range(attempts):
        carried = []
        try:
            if not folder.is_dir():
                return
            for entry in os.scandir(folder):
                if carry(entry.name) and entry.name not in written:
                    carried.append(staging / entry.name)
                    if entry.is_dir(follow_symlinks=False):
                        shutil.copytree(entry.path, staging / entry.name, copy_function=_link_or_copy)
                    else:
                        _link_or_copy(entry.path, str(staging / entry.name))
            return
        except FileNotFoundError:
            for path in carried:
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)


def _swap_in(staging: Path, folder: Path, attempts: int = 100) -> None:
    """Put `staging` at `folder`; afterwards `staging` names the old folder, or nothing."""
    import errno

    for _ in range(attempts):
        try:
            if exchange_paths(staging, folder):
                return
        except FileNotFoundError:  # no folder yet: a plain rename, unless another writer makes one first
            try:
                os.rename(staging, folder)
                return
            except OSError as error:
                if error.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
                continue
        # no exchange here: move the old folder aside under a staging name, then rename the new one in
        aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}{STAGING_MARK}", dir=folder.parent))
        try:
            os.rename(folder, aside / "old")
        except FileNotFoundError:
            pass
        try:
            os.rename(staging, folder)
        except OSError as error:
            if error.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            continue
        finally:
            shutil.rmtree(aside, ignore_errors=True)
        return
    raise OSError(errno.EBUSY, f"could not swap in {folder}: other writers kept replacing it")


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
    return instance_paths().storage


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
