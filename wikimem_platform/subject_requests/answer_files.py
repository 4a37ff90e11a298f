"""Where a request's answer lives and how a stored one is read back: one folder per request under
``<storage>/requests/`` with the answer document (answer.json), the letter (answer.html), its PDF
(answer.pdf) and its technical annex (annex.html), plus the request's exports.

The folder is written whole (`storage.replace_folder`): built beside it as `.<id>.staging-*` and
swapped in at once, so a reader sees one answer set or the next, never a mix. Staging folders are
no answers (`stored_answers` skips them) but may hold personal data (`staging_dirs`: the purge
deletes them too).

A leaf module (no project imports), so that inquiries, exports and the CLI read stored answers
without importing how answers are composed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

DOCUMENT, LETTER, PDF, ANNEX = "answer.json", "answer.html", "answer.pdf", "annex.html"


def requests_dir(storage_dir: str | os.PathLike) -> Path:
    return Path(storage_dir) / "requests"


def answer_dir(storage_dir: str | os.PathLike, request_id: str) -> Path:
    """Where a request's answer files live."""
    return requests_dir(storage_dir) / request_id


def staging_dirs(storage_dir: str | os.PathLike, request_id: str) -> list[Path]:
    """The answer folder's staging leftovers (a run killed while writing or replacing its answer)."""
    return sorted(requests_dir(storage_dir).glob(f".{request_id}.staging-*")) if requests_dir(storage_dir).is_dir() else []


def read_answer_files(folder: str | os.PathLike, names: tuple[str, ...] = (DOCUMENT, LETTER, ANNEX),
                      attempts: int = 20) -> dict[str, bytes] | None:
    """The named files of one answer set, all from the same version: read through one handle on
    the folder, again should a writer swap the folder out and remove it between two files. None
    where there is no answer (a missing name reads as None in the dict)."""
    for _ in range(attempts):
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            found: dict[str, bytes] = {}
            for name in names:
                try:
                    handle = os.open(name, os.O_RDONLY, dir_fd=fd)
                except FileNotFoundError:
                    if not _still_at(fd, folder):  # the folder was swapped out (and is being removed)
                        raise
                    found[name] = None  # not in this set (an answer printed without Chromium has no PDF)
                    continue
                with os.fdopen(handle, "rb") as file:
                    found[name] = file.read()
            return found
        except FileNotFoundError:
            continue
        finally:
            os.close(fd)
    raise OSError(f"the answer in {folder} kept being replaced while it was read")


def _still_at(fd: int, folder: str | os.PathLike) -> bool:
    """Whether the folder open as `fd` is still the one at its path."""
    try:
        here = os.stat(folder)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)


def read_answer(storage_dir: str | os.PathLike, request_id: str) -> dict | None:
    files = read_answer_files(answer_dir(storage_dir, request_id), (DOCUMENT,))
    return json.loads(files[DOCUMENT]) if files and files[DOCUMENT] is not None else None


def stored_answers(storage_dir: str | os.PathLike) -> list[dict]:
    """Every stored answer (newest first); a staging folder (`.<id>.staging-*`) is none."""
    root = requests_dir(storage_dir)
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []
    answers = [answer for answer in (read_answer(root.parent, p.name) for p in folders) if answer is not None]
    return sorted(answers, key=lambda a: a["generated_at"], reverse=True)
