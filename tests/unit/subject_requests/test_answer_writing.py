"""An answer is written whole (issue 61, deliverable 3): two writer processes and a reader on one
answer folder, a full tmpfs, a write that fails partway. The reader always gets one consistent
set, a failed write leaves the previous set as it was and no temp or staging file, and what sits
beside the answer (exports, their record) survives a rewrite."""

import errno
import json
import multiprocessing
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.unit.subject_requests.test_letter import _document
from wikimem_platform.subject_requests import answer_files
from wikimem_platform.subject_requests.answer_files import ANNEX, DOCUMENT, LETTER, read_answer_files
from wikimem_platform.subject_requests.letter import write_answer

WRITES = 300  # per writer process


def _versioned(tag: str) -> dict:
    """The minimal answer document, its request id the version tag: it shows in all three files."""
    document = _document()
    document["request"] = {**document["request"], "id": f"dsr-{tag}"}
    return document


def check_whole(files: dict) -> str:
    """The tag of a consistent set: json parses, both pages are complete and name the same request."""
    document = json.loads(files[DOCUMENT])
    tag = document["request"]["id"]
    letter, annex = files[LETTER].decode(), files[ANNEX].decode()
    assert letter.rstrip().endswith("</html>") and annex.rstrip().endswith("</html>"), "a page cut short"
    assert tag in letter, f"answer.json holds {tag}, answer.html another request"
    assert f"request {tag}</h1>" in annex, f"answer.json holds {tag}, annex.html another request"
    return tag


def _writer(folder: str, name: str, count: int, results) -> None:
    failures, first = 0, None
    for i in range(count):
        try:
            write_answer(_versioned(f"{name}{i:04d}"), folder)
        except Exception as error:  # noqa: BLE001 - counted and reported: the test asserts there are none
            failures += 1
            first = first or f"{type(error).__name__}: {error}"
    results.put((name, failures, first))


def test_two_writers_and_a_reader_only_ever_see_whole_answer_sets(tmp_path):
    folder = tmp_path / "requests" / "dsr-1"
    write_answer(_versioned("start"), folder)
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    writers = [context.Process(target=_writer, args=(str(folder), name, WRITES, results)) for name in ("a", "b")]
    for writer in writers:
        writer.start()
    reads, broken, seen = 0, [], set()
    while any(w.is_alive() for w in writers):
        try:
            files = read_answer_files(folder)
            seen.add(check_whole(files).removeprefix("dsr-")[0])  # "s" (the start), or a write of writer a or b
        except (AssertionError, ValueError, TypeError) as error:  # a mixed set, a half-written json, a missing file
            broken.append(f"{type(error).__name__}: {error}")
        reads += 1
    for writer in writers:
        writer.join(timeout=60)
    outcomes = sorted(results.get(timeout=10) for _ in writers)
    failed = [(name, failures) for name, failures, _ in outcomes]
    assert (failed, len(broken)) == ([("a", 0), ("b", 0)], 0), \
        f"writes failed: {outcomes}; {len(broken)} of {reads} reads were no whole set, first: {broken[:1]}"
    assert reads > 0 and seen & {"a", "b"}, (reads, seen)
    final = check_whole(read_answer_files(folder))
    assert final in {f"dsr-a{WRITES - 1:04d}", f"dsr-b{WRITES - 1:04d}"}  # the last write of one of them
    assert sorted(p.name for p in folder.parent.iterdir()) == ["dsr-1"]  # no staging folder left
    assert sorted(p.name for p in folder.iterdir()) == sorted([DOCUMENT, LETTER, ANNEX])  # no temp file


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 256 KiB tmpfs, mounted for the test (root only)."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8); the simulated ENOSPC test covers the same path")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mount -t tmpfs not permitted here ({done.stderr.strip()}); the simulated ENOSPC test covers it")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_full_tmpfs_leaves_the_previous_answer_set_and_no_temp_files(small_tmpfs):
    folder = small_tmpfs / "requests" / "dsr-1"
    write_answer(_versioned("old"), folder)
    before = _snapshot(folder)
    new_json = len(json.dumps(_versioned("new"), ensure_ascii=False, indent=2).encode())
    # fill the disk up to room for the new answer.json, not for the letter after it
    stats = os.statvfs(small_tmpfs)
    room = -(-new_json // stats.f_frsize) * stats.f_frsize
    assert len(before[LETTER]) > stats.f_frsize  # the letter needs pages of its own
    with open(small_tmpfs / "filler", "wb") as filler:
        filler.write(b"\0" * (stats.f_bavail * stats.f_frsize - room))
    with pytest.raises(OSError) as raised:
        write_answer(_versioned("new"), folder)
    assert raised.value.errno == errno.ENOSPC
    assert _snapshot(folder) == before, "the previous answer set changed"
    assert check_whole(read_answer_files(folder)) == "dsr-old"
    leftovers = sorted(str(p.relative_to(small_tmpfs)) for p in small_tmpfs.rglob("*"))
    assert leftovers == ["filler", "requests", "requests/dsr-1", *(f"requests/dsr-1/{name}" for name in before)], leftovers


def test_a_write_failing_partway_leaves_the_previous_answer_set_and_no_temp_files(tmp_path, monkeypatch):
    """The same without a tmpfs: the letter's write fails with ENOSPC after half its bytes."""
    folder = tmp_path / "requests" / "dsr-1"
    write_answer(_versioned("old"), folder)
    before = _snapshot(folder)
    real_write_text = Path.write_text

    def disk_full_at_the_letter(self, data, *args, **kwargs):
        if self.name.startswith(LETTER):  # answer.html, or a temp file of it
            real_write_text(self, data[:len(data) // 2], *args, **kwargs)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real_write_text(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", disk_full_at_the_letter)
    with pytest.raises(OSError):
        write_answer(_versioned("new"), folder)
    monkeypatch.undo()
    assert _snapshot(folder) == before, "the previous answer set changed"
    leftovers = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert leftovers == ["requests", "requests/dsr-1", *(f"requests/dsr-1/{name}" for name in before)], leftovers


def test_a_rewrite_keeps_the_exports_and_readers_skip_staging_folders(tmp_path):
    storage = tmp_path / "storage"
    folder = answer_files.answer_dir(storage, "dsr-1")
    write_answer(_versioned("old"), folder)
    (folder / "exports" / "jsonl").mkdir(parents=True)
    (folder / "exports" / "jsonl" / "forget.jsonl").write_text('{"fact": 1}\n')
    (folder / "exports.json").write_text('["/elsewhere/forget.jsonl"]')
    (folder / "answer.pdf").write_bytes(b"%PDF old")  # part of the old set: not carried into a set printed without it
    (folder / "answer.html.tmp").write_text("<html>")  # the old code's leftover: not carried either
    write_answer(_versioned("new"), folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted([DOCUMENT, LETTER, ANNEX, "exports", "exports.json"])
    assert (folder / "exports" / "jsonl" / "forget.jsonl").read_text() == '{"fact": 1}\n'
    assert (folder / "exports.json").read_text() == '["/elsewhere/forget.jsonl"]'
    assert not (folder / "answer.pdf").exists()
    # a run killed mid-write leaves a staging folder: no answer for the readers, but found for the purge
    leftover = folder.parent / ".dsr-1.staging-killed"
    shutil.copytree(folder, leftover)
    assert [a["request"]["id"] for a in answer_files.stored_answers(storage)] == ["dsr-new"]
    assert answer_files.read_answer(storage, "dsr-1")["request"]["id"] == "dsr-new"
    assert answer_files.staging_dirs(storage, "dsr-1") == [leftover]


def test_the_purge_deletes_the_answer_and_any_staging_leftover(tmp_path):
    from wikimem_platform.security.purge import purge_request
    from wikimem_platform.subject_requests import intake

    store = intake.RequestStore(f"sqlite:///{tmp_path / 'registry.db'}")
    person = intake.PersonFacts("Ilse Marwitz", [], {"P19": [intake.FactValue("Tübingen")]})
    request = store.add(intake.resolve_person(person), "erasure")
    storage = tmp_path / "storage"
    folder = answer_files.answer_dir(storage, request.id)
    write_answer(_versioned("old"), folder)
    write_answer(_versioned("new"), folder)
    shutil.copytree(folder, folder.parent / f".{request.id}.staging-killed")  # a run killed mid-write
    report = purge_request(request.id, storage, store, "dpo@example.org", cache_roots=[])
    assert list(answer_files.requests_dir(storage).iterdir()) == []
    assert report.files == 6  # three files of the answer, three of the leftover


def test_without_renameat2_a_rewrite_still_swaps_the_whole_set(tmp_path, monkeypatch):
    """Where the exchange is missing (not Linux, an old glibc): the old folder is moved aside first."""
    from wikimem_platform import storage

    monkeypatch.setattr(storage, "_RENAMEAT2", None)
    folder = tmp_path / "requests" / "dsr-1"
    write_answer(_versioned("old"), folder)
    (folder / "exports.json").write_text("[]")
    write_answer(_versioned("new"), folder)
    assert check_whole(read_answer_files(folder)) == "dsr-new" and (folder / "exports.json").read_text() == "[]"
    assert sorted(p.name for p in folder.parent.iterdir()) == ["dsr-1"]
