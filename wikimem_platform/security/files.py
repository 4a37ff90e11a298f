"""Files only the service can read (issue 60): every process of the platform runs with umask 077,
so what it creates is 0700 (folders) and 0600 (files, SQLite databases and their -wal/-shm), and
it refuses to start on an instance another local user could read.

`secure_startup` is called first thing by the CLI (`cli.main.main`) and by the code
location (`definitions.py`, loaded by the webserver's code server, the daemon and every run
worker). It sets the umask, then checks — cheaply, without walking the tree — the instance
folder ($DAGSTER_HOME, else ./.dagster_home), its immediate sub-folders, the storage folder and
its immediate children, every SQLite file in those folders (Dagster's runs.db and schedules.db
included; the per-run event logs are kept private by their folder), the instance secret, the registry
database when it is SQLite, and the model cache folder ($WIKIMEM_CACHE_DIR, else
~/.cache/wikimem/models). Anything group- or world-readable/writable is refused with
`InsecureFilesError`, which names each path, its mode and the fix (``chmod -R go-rwx PATH``, or
`private_tree`).

A deployment that shares the instance with a group on purpose (an operators' group that reads
the answers) sets ``WIKIMEM_ALLOW_GROUP_ACCESS=1`` (or passes
``allow_group=True``): the umask is then 027 and group read (and folder traversal) passes;
group write and any world access never do (a volume mounted group-writable, as a Kubernetes
fsGroup does, is refused: make it g-w first).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from wikimem_platform.lm.loading import default_cache_dir
from wikimem_platform.security.keys import SECRET_FILE
from wikimem_platform.settings import get_settings, instance_paths, Settings

ALLOW_GROUP_ENV = Settings.env_name("allow_group_access")
PRIVATE_UMASK = 0o077
GROUP_UMASK = 0o027  # with allow_group: group may read, never write; the world nothing
SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
SQLITE_SIDECARS = ("", "-wal", "-shm", "-journal")
# Dagster's own folders below the instance folder: run storage, per-run event logs, schedules. The
# per-run event-log databases in history/runs (one a run, thousands in time) are not listed: the
# folder's own mode is checked, which is what keeps them from other users.
DAGSTER_FOLDERS = ("history", "history/runs", "schedules")
MAX_LISTED = 8  # offending paths spelled out in the message; the rest are counted


class InsecureFilesError(ValueError):
    """Files holding requesters' data are open to other local users. ``paths``: (path, mode) of
    each one found; the message names them, their modes and the fix."""

    def __init__(self, message: str, paths: list[tuple[Path, int]]):
        super().__init__(message)
        self.paths = paths


def group_access_allowed(allow_group: bool | None = None) -> bool:
    if allow_group is not None:
        return bool(allow_group)
    return get_settings().allow_group_access


def set_private_umask(allow_group: bool | None = False) -> int:
    """umask 077 (027 with allow_group) for this process and every process it starts; returns
    the previous one."""
    return os.umask(GROUP_UMASK if group_access_allowed(allow_group) else PRIVATE_UMASK)


def forbidden_bits(allow_group: bool | None = False) -> int:
    """The permission bits a platform file must not have."""
    return 0o027 if group_access_allowed(allow_group) else 0o077


def fix_command(path: str | os.PathLike, allow_group: bool | None = False) -> str:
    return f"chmod -R {'g-w,o-rwx' if group_access_allowed(allow_group) else 'go-rwx'} {path}"


def _is_sqlite(name: str) -> bool:
    return any(name.endswith(suffix + sidecar) for suffix in SQLITE_SUFFIXES for sidecar in SQLITE_SIDECARS)


def _entries(folder: Path) -> Iterator[os.DirEntry]:
    try:
        with os.scandir(folder) as entries:
            yield from entries
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return None


def sqlite_path(url: str | None) -> Path | None:
    """The database file of a SQLite SQLAlchemy URL (None for any other database, or in memory)."""
    if not url or not url.startswith("sqlite"):
        return None
    from sqlalchemy.engine import make_url

    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        return None
    return Path(database).expanduser().resolve()


def _configured_storage(home: Path) -> Path:
    """The instance's storage folder: dagster.yaml's local_artifact_storage base_dir (a value or
    {env: NAME}), else <home>/storage (Dagster's default)."""
    config = home / "dagster.yaml"
    if config.is_file():
        try:
            import yaml

            base = (((yaml.safe_load(config.read_text()) or {}).get("local_artifact_storage") or {})
                    .get("config") or {}).get("base_dir")
        except Exception:  # noqa: BLE001 - an unreadable config is Dagster's error to report, not ours
            base = None
        if isinstance(base, dict) and base.get("env"):  # a variable dagster.yaml names: Dagster's to read, read as it does
            base = os.environ.get(str(base["env"]))
        if isinstance(base, str) and base:
            return Path(base).expanduser().resolve()
    return home / "storage"


def startup_paths(home: str | os.PathLike | None = None, storage: str | os.PathLike | None = None,
                  registry_url: str | None = None, cache_dir: str | os.PathLike | None = None) -> list[Path]:
    """What `secure_startup` checks (existing paths only; one directory listing per folder,
    nothing deeper)."""
    resolved = instance_paths(home, storage, registry_url)
    home = resolved.home
    storage = resolved.storage if storage else _configured_storage(home)
    paths: list[Path] = [home, home / SECRET_FILE]
    paths += [home / sub for sub in DAGSTER_FOLDERS]
    folders = [home, *(Path(e.path) for e in _entries(home) if e.is_dir(follow_symlinks=True))]
    paths += folders
    paths.append(storage)
    for entry in _entries(storage):  # the storage's immediate children: parquet/, reports/, shards, caches
        paths.append(Path(entry.path))
        if entry.is_dir(follow_symlinks=True):
            folders.append(Path(entry.path))
    folders.append(storage)
    for folder in folders:  # every SQLite file (and -wal/-shm/-journal) in those folders
        paths += [Path(e.path) for e in _entries(folder) if _is_sqlite(e.name) and e.is_file(follow_symlinks=True)]
    registry = sqlite_path(resolved.registry_url)
    if registry is not None:
        paths += [registry.with_name(registry.name + sidecar) for sidecar in SQLITE_SIDECARS]
    paths.append(Path(cache_dir).expanduser() if cache_dir else default_cache_dir())
    seen, unique = set(), []
    for path in paths:
        if path not in seen:
            seen.add(path)
            unique.append(path)
    return unique


def insecure_paths(paths: Iterable[Path], allow_group: bool | None = False) -> list[tuple[Path, int]]:
    """(path, mode) of each existing path with a forbidden permission bit."""
    bad = forbidden_bits(allow_group)
    found = []
    for path in paths:
        mode = _mode(path)
        if mode is not None and mode & bad:
            found.append((path, mode))
    return found


def _who(mode: int) -> str:
    parts = []
    if mode & 0o070:
        parts.append("its group")
    if mode & 0o007:
        parts.append("every local user")
    return " and ".join(parts)


def check_private(paths: Iterable[Path], allow_group: bool | None = False) -> None:
    """Raise InsecureFilesError naming every path of `paths` other users may read or write."""
    found = insecure_paths(paths, allow_group)
    if not found:
        return
    lines = [f"{path} (mode {mode:04o}) is open to {_who(mode & forbidden_bits(allow_group))}: fix with `{fix_command(path, allow_group)}`"
             for path, mode in found[:MAX_LISTED]]
    if len(found) > MAX_LISTED:
        lines.append(f"... and {len(found) - MAX_LISTED} more such path(s)")
    allowed = "group read allowed" if group_access_allowed(allow_group) else "mode 0700 folders, 0600 files"
    hint = ("" if group_access_allowed(allow_group) else
            f" (set {ALLOW_GROUP_ENV}=1 only where a group shares the instance on purpose)")
    raise InsecureFilesError(
        f"refusing to start: {len(found)} path(s) holding requesters' data can be read or written by other "
        f"users ({allowed} expected){hint}:\n" + "\n".join(lines), found)


def secure_startup(home: str | os.PathLike | None = None, storage: str | os.PathLike | None = None, *,
                   allow_group: bool | None = None, registry_url: str | None = None,
                   cache_dir: str | os.PathLike | None = None) -> None:
    """Set the private umask, then refuse (InsecureFilesError) an instance, storage, SQLite
    database, registry or model cache that other local users could read or write.

    home: the instance folder (default $DAGSTER_HOME, else ./.dagster_home); storage: its storage
    folder (default: dagster.yaml's local_artifact_storage, else <home>/storage); registry_url:
    the registry (default $WIKIMEM_REGISTRY_URL, else SQLite in home); allow_group: default
    ${ALLOW_GROUP_ENV}. Paths that do not exist yet are skipped (created later under the umask).
    Nothing is created here."""
    allow = group_access_allowed(allow_group)
    set_private_umask(allow)
    check_private(startup_paths(home, storage, registry_url, cache_dir), allow)


def private_tree(path: str | os.PathLike, allow_group: bool | None = False) -> int:
    """chmod an existing tree private: folders 0700, files 0600 (0700 where the owner may execute
    them); with allow_group 0750 / 0640. Symbolic links are left alone (never followed). Returns
    how many modes changed."""
    allow = group_access_allowed(allow_group)
    folder_mode, file_mode = (0o750, 0o640) if allow else (0o700, 0o600)
    changed = 0

    def apply(target: str, wanted: int) -> None:
        nonlocal changed
        current = stat.S_IMODE(os.lstat(target).st_mode)
        if current != wanted:
            os.chmod(target, wanted)
            changed += 1

    root = Path(path)
    if root.is_symlink() or not root.exists():
        return 0
    if not root.is_dir():
        executable = os.lstat(root).st_mode & stat.S_IXUSR
        apply(str(root), file_mode | (0o100 | (0o010 if allow else 0)) if executable else file_mode)
        return changed
    for folder, dirs, files in os.walk(root, followlinks=False):
        apply(folder, folder_mode)
        for name in files:
            target = os.path.join(folder, name)
            if os.path.islink(target):
                continue
            executable = os.lstat(target).st_mode & stat.S_IXUSR
            apply(target, file_mode | (0o100 | (0o010 if allow else 0)) if executable else file_mode)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
    return changed
