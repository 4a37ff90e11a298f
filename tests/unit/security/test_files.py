"""Files only the service can read (issue 60, `wikimem_platform.security.files`): an instance made
the way the platform makes one (the `wikimem` CLI taking in a request and registering a model, a
Dagster run on a real DagsterInstance, an answer, a sentence cache in WAL mode) is 0700 folders
and 0600 files throughout, even when the shell's umask was 022; the unprivileged user `nobody`
reads neither the registry nor an answer; start-up (the function, the CLI, the code location)
refuses an instance other users can read, naming the path, its mode and the fix; a deliberate
group (WIKIMEM_ALLOW_GROUP_ACCESS) may read, the world never."""

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.unit.subject_requests.test_letter import _document
from cli.main import main
from wikimem_platform.security import files
from wikimem_platform.security.files import InsecureFilesError, private_tree, secure_startup
from wikimem_platform.subject_requests.answer_files import answer_dir, DOCUMENT
from wikimem_platform.subject_requests.letter import write_answer
from wikimem_platform.wikimem.scoring import SentenceNllCache

REPO = Path(__file__).resolve().parents[3]
FACTS = "name: Ilse Marwitz\nfacts:\n  occupation: [journalist]\n"
ENV = ("DAGSTER_HOME", "WIKIMEM_CACHE_DIR", "WIKIMEM_REGISTRY_URL", files.ALLOW_GROUP_ENV, "WIKIMEM_INSTANCE_SECRET")


@pytest.fixture
def shell_umask():
    """The umask of a login shell (022), as the service met it before: the platform must set its own."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.fixture
def instance_env(tmp_path, monkeypatch, shell_umask):
    """DAGSTER_HOME and the model cache in tmp_path, neither created yet; no registry URL, no secret in the env."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    home, cache = tmp_path / "home", tmp_path / "cache"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("WIKIMEM_CACHE_DIR", str(cache))
    return home


def take_in_a_request(home: Path, facts_dir: Path) -> str:
    """`wikimem request add` and `wikimem models register` against `home`; then the request's
    answer written where the platform writes it. The request id."""
    facts = facts_dir / "person.yaml"
    facts.write_text(FACTS, encoding="utf-8")
    assert main(["request", "add", "--facts", str(facts)]) == 0
    assert main(["models", "register", "smollm2-135m-instruct", "--name", "a"]) == 0
    request_id = "dsr-1"
    write_answer(_document(), answer_dir(home / "storage", request_id))
    return request_id


def tree_modes(root: Path) -> dict[str, int]:
    """Every entry of the tree (the root as "."): its permission bits."""
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder) / name
            found[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def expected_mode(path: Path) -> int:
    return 0o700 if path.is_dir() and not path.is_symlink() else 0o600


def test_an_instance_the_platform_creates_is_0700_folders_and_0600_files(instance_env, tmp_path, capsys):
    home = instance_env
    take_in_a_request(home, tmp_path)
    from dagster import asset, DagsterInstance, materialize  # a real run on the instance: run storage, event logs

    @asset
    def note():
        return {"x": 1}

    with DagsterInstance.get() as instance:
        assert materialize([note], instance=instance).success
    # a model's sentence cache in the storage, in WAL mode, held open so that its -wal and -shm exist
    cache = SentenceNllCache.for_model(home / "storage" / "sentence_cache", "f00", {"dtype": "float32"})
    cache.put_many({"Ilse Marwitz's occupation is journalist.": 1.5})
    held = sqlite3.connect(cache.path)
    try:
        held.execute("SELECT count(*) FROM nll").fetchone()
        (tmp_path / "cache" / "soft-prompts").mkdir(parents=True)  # the model cache, as the loaders make it
        modes = {**{f"home/{k}": v for k, v in tree_modes(home).items()},
                 **{f"cache/{k}": v for k, v in tree_modes(tmp_path / "cache").items()}}
        wrong = {n: f"{m:04o}" for n, m in modes.items() if m != expected_mode(tmp_path / n)}
    finally:
        held.close()
    names = set(modes)
    for expected in ("home/wikimem_registry.db", "home/instance_secret", "home/history/runs.db", "home/schedules/schedules.db",
                     f"home/storage/requests/dsr-1/{DOCUMENT}", "home/storage/requests/dsr-1/answer.html", "home/storage/note"):
        assert expected in names, sorted(names)
    assert any(n.endswith(".sqlite-wal") for n in names) and any(n.endswith(".sqlite-shm") for n in names), sorted(names)
    assert any(n.startswith("home/history/runs/") and n.endswith(".db") for n in names)  # the run's event log
    assert wrong == {}, wrong  # folders 0700, files 0600, the SQLite -wal and -shm included
    secure_startup()  # and the start-up check passes it


def _as_nobody(command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["su", "-s", "/bin/sh", "nobody", "-c", command], capture_output=True, text=True, timeout=60)


def _nobody_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root to run a command as the unprivileged user nobody (su)"
    if shutil.which("su") is None:
        return "no su on this machine"
    try:
        import pwd

        pwd.getpwnam("nobody")
    except KeyError:
        return "no user nobody on this machine"
    return None


@pytest.mark.skipif(_nobody_reason() is not None, reason=_nobody_reason() or "")
def test_the_user_nobody_reads_neither_the_registry_nor_an_answer(monkeypatch, shell_umask):
    # Not in pytest's tmp folder (0700 already, which would hide everything whatever the modes):
    # a parent every user may enter, as /srv or /opt would be.
    parent = Path(tempfile.mkdtemp(prefix="wikimem-nobody-"))
    try:
        parent.chmod(0o755)
        for name in ENV:
            monkeypatch.delenv(name, raising=False)
        home = parent / "home"
        monkeypatch.setenv("DAGSTER_HOME", str(home))
        monkeypatch.setenv("WIKIMEM_CACHE_DIR", str(parent / "cache"))
        take_in_a_request(home, parent)
        registry, answer = home / "wikimem_registry.db", answer_dir(home / "storage", "dsr-1") / DOCUMENT
        assert b"Ilse Marwitz" in registry.read_bytes() and "Ilse Marwitz" in answer.read_text()
        # the control: what the service wrote before (umask 022) nobody reads; so `su` works here
        (parent / "old.txt").write_text("readable\n")
        (parent / "old.txt").chmod(0o644)
        control = _as_nobody(f"cat {parent / 'old.txt'}")
        assert control.returncode == 0 and control.stdout == "readable\n", control.stderr
        for path in (registry, answer):
            denied = _as_nobody(f"cat {path}")
            assert denied.returncode != 0 and "Permission denied" in denied.stderr and denied.stdout == ""
        listing = _as_nobody(f"ls {home}")
        assert listing.returncode != 0 and "Permission denied" in listing.stderr
        # even with every folder on the way made traversable, the files themselves refuse
        for folder in (home, home / "storage", home / "storage" / "requests", answer.parent):
            folder.chmod(0o711)
        for path in (registry, answer):
            denied = _as_nobody(f"cat {path}")
            assert denied.returncode != 0 and "Permission denied" in denied.stderr and denied.stdout == ""
    finally:
        shutil.rmtree(parent)


def test_start_up_refuses_a_world_readable_instance_naming_path_mode_and_fix(instance_env, tmp_path, capsys):
    home = instance_env
    secure_startup()  # nothing exists yet: nothing to refuse, and nothing is created
    assert not home.exists()
    take_in_a_request(home, tmp_path)
    registry = home / "wikimem_registry.db"
    registry.chmod(0o644)
    with pytest.raises(InsecureFilesError) as refused:
        secure_startup()
    message = str(refused.value)
    assert f"{registry} (mode 0644) is open to its group and every local user" in message
    assert f"`chmod -R go-rwx {registry}`" in message and refused.value.paths == [(registry, 0o644)]
    assert isinstance(refused.value, ValueError)
    # the CLI: exit status 2, one clear error without a traceback, nothing done
    capsys.readouterr()
    assert main(["request", "list"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: refusing to start: 1 path(s)")
    assert f"{registry} (mode 0644)" in captured.err and "Traceback" not in captured.err
    # the instance folder itself, a child of the storage, a -wal beside a database: each one named
    registry.chmod(0o600)
    home.chmod(0o755)
    (home / "storage" / "requests").chmod(0o705)
    wal = home / "history" / "runs.db-wal"
    wal.parent.mkdir(exist_ok=True)
    wal.write_bytes(b"")
    wal.chmod(0o660)
    with pytest.raises(InsecureFilesError) as refused:
        secure_startup()
    assert [(p, f"{m:04o}") for p, m in refused.value.paths] == [
        (home, "0755"), (home / "storage" / "requests", "0705"), (wal, "0660")]
    assert f"`chmod -R go-rwx {home}`" in str(refused.value) and "open to every local user" in str(refused.value)
    assert f"{wal} (mode 0660) is open to its group:" in str(refused.value)
    # a world-readable model cache, too
    private_tree(home)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o755)
    cache.chmod(0o755)
    with pytest.raises(InsecureFilesError, match=f"{cache} \\(mode 0755\\)"):
        secure_startup()
    cache.chmod(0o700)
    secure_startup()
    # the registry where --registry-url puts it, and the storage where --storage does
    elsewhere = tmp_path / "elsewhere.db"
    elsewhere.write_bytes(b"")
    elsewhere.chmod(0o604)
    assert main(["--registry-url", f"sqlite:///{elsewhere}", "request", "list"]) == 2
    assert f"{elsewhere} (mode 0604)" in capsys.readouterr().err
    storage = tmp_path / "other-storage"
    storage.mkdir()
    storage.chmod(0o750)
    with pytest.raises(InsecureFilesError, match=f"{storage} \\(mode 0750\\)"):
        secure_startup(storage=storage)


def test_a_group_may_read_when_allowed_the_world_never(instance_env, tmp_path, monkeypatch):
    home = instance_env
    take_in_a_request(home, tmp_path)
    registry = home / "wikimem_registry.db"
    registry.chmod(0o640)
    home.chmod(0o750)
    with pytest.raises(InsecureFilesError):
        secure_startup()
    secure_startup(allow_group=True)
    assert os.umask(0o022) == files.GROUP_UMASK  # and what it creates is group-readable, never writable
    monkeypatch.setenv(files.ALLOW_GROUP_ENV, "1")
    secure_startup()  # the deployment's setting
    assert os.umask(0o022) == files.GROUP_UMASK
    with pytest.raises(InsecureFilesError):
        secure_startup(allow_group=False)  # an explicit False wins over the environment
    for mode, who in ((0o644, "every local user"), (0o660, "its group"), (0o641, "every local user")):
        registry.chmod(mode)
        with pytest.raises(InsecureFilesError) as refused:
            secure_startup()
        assert f"{registry} (mode {mode:04o}) is open to {who}: fix with `chmod -R g-w,o-rwx {registry}`" in str(refused.value)
    registry.chmod(0o640)
    secure_startup()


def test_the_code_location_refuses_a_world_readable_instance(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ENV}
    env.update(DAGSTER_HOME=str(home), WIKIMEM_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-c", "import definitions"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "InsecureFilesError: refusing to start: 1 path(s)" in result.stderr
    assert f"{home} (mode 0755) is open to its group and every local user: fix with `chmod -R go-rwx {home}`" in result.stderr


def test_private_tree_closes_an_existing_tree_and_leaves_links_alone(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    outside.chmod(0o644)
    root = tmp_path / "home"
    (root / "storage" / "parquet").mkdir(parents=True)
    for folder in (root, root / "storage", root / "storage" / "parquet"):
        folder.chmod(0o755)
    (root / "wikimem_registry.db").write_bytes(b"")
    (root / "wikimem_registry.db").chmod(0o644)
    (root / "storage" / "run.sh").write_text("#!/bin/sh\n")
    (root / "storage" / "run.sh").chmod(0o755)
    (root / "storage" / "link").symlink_to(outside)
    assert private_tree(root) == 5
    modes = tree_modes(root)
    assert {k: f"{v:04o}" for k, v in modes.items() if k != "storage/link"} == {
        ".": "0700", "storage": "0700", "storage/parquet": "0700", "wikimem_registry.db": "0600", "storage/run.sh": "0700"}
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # the link's target is not the tree's
    assert private_tree(root) == 0
    # the start-up check follows a link in the storage to where the data is: that is still open
    paths = files.startup_paths(root, cache_dir=tmp_path / "no-cache")
    with pytest.raises(InsecureFilesError) as refused:
        files.check_private(paths)
    assert refused.value.paths == [(root / "storage" / "link", 0o644)]
    outside.chmod(0o600)
    files.check_private(paths)


def test_the_check_reads_the_top_folders_only(tmp_path):
    """Cheap at every start: the storage's children are checked, nothing below them (a private
    folder already hides what is inside)."""
    root = tmp_path / "home"
    deep = root / "storage" / "parquet" / "scores"
    deep.mkdir(parents=True)
    (deep / "a@1.parquet").write_bytes(b"")
    (deep / "a@1.parquet").chmod(0o644)
    deep.chmod(0o755)
    paths = files.startup_paths(root, cache_dir=tmp_path / "no-cache")
    assert root / "storage" / "parquet" in paths and deep not in paths and deep / "a@1.parquet" not in paths
    files.check_private(paths)
