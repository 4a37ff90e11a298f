"""Where a request's answer lives and how a stored one is read back: one folder per request under
``<storage>/requests/`` with the answer document (answer.json), the letter (answer.html), its PDF
(answer.pdf) and its technical annex (annex.html).

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


def read_answer(storage_dir: str | os.PathLike, request_id: str) -> dict | None:
    path = answer_dir(storage_dir, request_id) / DOCUMENT
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def stored_answers(storage_dir: str | os.PathLike) -> list[dict]:
    """Every stored answer (newest first)."""
    root = requests_dir(storage_dir)
    answers = [json.loads(p.read_text(encoding="utf-8")) for p in root.glob(f"*/{DOCUMENT}")] if root.is_dir() else []
    return sorted(answers, key=lambda a: a["generated_at"], reverse=True)
