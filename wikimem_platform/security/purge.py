"""One purge of a request's personal data, wherever the platform put a copy (GDPR Art. 17, 5(1)(e)).

Used by `wikimem request remove --purge` / `request purge`, by a completed erasure and by the
retention schedule. It deletes, in this order (so no run still writing can leave a copy behind):

1. the request's Dagster runs, their events, asset-check results and captured logs (`erase_runs`,
   given by the Dagster layer: this library has no Dagster import);
2. the sentence-cache entries of the person's own sentences and their name kin's (read from the
   request's stored canaries before those go): keyed digests, deleted with secure_delete;
3. every file of the request: each asset's partition file (`<storage>/parquet/*/<id>.parquet`),
   its own score shards (`<shards>/requests/<id>/`), its answer folder (letter, annex, PDF,
   exports, forget sets) and any export written elsewhere that the folder's record names;
4. the registry row's personal fields, leaving the accountability record (`RequestStore.keep_record_only`).

What it did is returned as counts and ids only, for a log line that holds no personal data.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd

from wikimem_platform.storage import request_shard_dir
from wikimem_platform.subject_requests.answer_files import answer_dir, staging_dirs
from wikimem_platform.subject_requests.intake import RequestStatus, RequestStore, SubjectRequest
from wikimem_platform.wikimem import controls
from wikimem_platform.wikimem.scoring import SentenceNllCache, expand_canaries

EXPORTS_RECORD = "exports.json"  # in the answer folder: exports of this request written elsewhere
PARQUET_DIR, SHARDS_DIR, CACHE_DIR = "parquet", "score_shards", "nll_cache"


@dataclass
class PurgeReport:
    request_id: str
    runs: int = 0
    cache_entries: int = 0
    files: int = 0
    bytes: int = 0
    outside_exports: list[str] = field(default_factory=list)
    record: dict = field(default_factory=dict)

    def line(self) -> str:
        """What went, in counts: safe for any log."""
        return (f"{self.request_id}: purged {self.files} file(s) ({self.bytes:,} bytes), {self.runs} run(s) with their "
                f"event logs, {self.cache_entries} sentence-cache entr{'y' if self.cache_entries == 1 else 'ies'}"
                + (f", {len(self.outside_exports)} export(s) outside the instance" if self.outside_exports else ""))


def record_export(storage_dir: str | os.PathLike, request_id: str, path: str | os.PathLike) -> None:
    """Note an export of the request written outside its answer folder, so the purge finds it."""
    folder = answer_dir(storage_dir, request_id)
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / EXPORTS_RECORD
    paths = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else []
    target = str(Path(path).resolve())
    if target not in paths:
        record.write_text(json.dumps([*paths, target], indent=1), encoding="utf-8")


def partition_files(storage_dir: str | os.PathLike, request_id: str) -> list[Path]:
    """The request's partition file of every asset (and any half-written one beside it)."""
    root = Path(storage_dir) / PARQUET_DIR
    if not root.is_dir():
        return []
    return sorted(p for folder in root.iterdir() if folder.is_dir()
                  for p in folder.glob(f"{request_id}.*") if p.name.split(".")[0] == request_id)


def _read(path: Path) -> pd.DataFrame | None:
    try:
        return pd.read_parquet(path) if path.is_file() else None
    except (OSError, ValueError):
        return None


def person_sentences(storage_dir: str | os.PathLike, request_id: str) -> set[str]:
    """The sentences that name the person (their canaries with every candidate value) or a name
    kin of theirs (first name or surname kept): the entries a purge takes out of the caches. The
    invented controls' sentences name nobody and stay, shared with other requests."""
    parquet = Path(storage_dir) / PARQUET_DIR
    sentences: set[str] = set()
    for canaries_name, candidates_name in (("request_canaries", "request_candidates"),
                                           ("request_control_canaries", "request_control_candidates")):
        canaries = _read(parquet / canaries_name / f"{request_id}.parquet")
        candidates = _read(parquet / candidates_name / f"{request_id}.parquet")
        if canaries is None or candidates is None or canaries.empty or candidates.empty:
            continue
        if controls.CONTROL_ROLE in canaries:
            canaries = canaries[canaries[controls.CONTROL_ROLE] == controls.KIN]
        if controls.CONTROL_ROLE in candidates:
            candidates = candidates[candidates[controls.CONTROL_ROLE] == controls.KIN]
        if canaries.empty or candidates.empty:
            continue
        sentences.update(expand_canaries(canaries, candidates)["sentence_h"])
    return sentences


def _delete(path: Path, report: PurgeReport) -> None:
    if path.is_dir() and not path.is_symlink():
        for item in path.rglob("*"):
            if item.is_file():
                report.files += 1
                report.bytes += item.stat().st_size
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        report.files += 1
        report.bytes += path.stat().st_size if path.is_file() else 0
        path.unlink()


def purge_request(
    request_id: str,
    storage_dir: str | os.PathLike,
    store: RequestStore,
    who: str,
    erase_runs: Callable[[str], int] | None = None,
    shard_root: str | os.PathLike | None = None,
    cache_roots: Iterable[str | os.PathLike] | None = None,
) -> PurgeReport:
    """Delete every copy of the request's personal data (module docstring); the registry row stays
    as its accountability record. `erase_runs(request_id)`: the Dagster layer's deletion of the
    request's runs and event logs (None: no instance here). Raises KeyError for an unknown id."""
    store.get(request_id)  # an unknown id is an error before anything is touched
    storage = Path(storage_dir)
    report = PurgeReport(request_id)
    if erase_runs is not None:
        report.runs = erase_runs(request_id)
    sentences = person_sentences(storage, request_id)
    for root in cache_roots if cache_roots is not None else [storage / CACHE_DIR]:
        for path in sorted(Path(root).glob("*.sqlite")) if Path(root).is_dir() else []:
            if sentences:
                report.cache_entries += SentenceNllCache(path).forget(sentences)
    folder = answer_dir(storage, request_id)
    record = folder / EXPORTS_RECORD
    if record.is_file():
        for outside in json.loads(record.read_text(encoding="utf-8")):
            target = Path(outside)
            if target.exists():
                _delete(target, report)
                report.outside_exports.append(outside)
    for path in [*partition_files(storage, request_id), request_shard_dir(shard_root or storage / SHARDS_DIR, request_id),
                 folder, *staging_dirs(storage, request_id)]:  # and a half-built or half-removed answer set
        _delete(path, report)
    report.record = store.keep_record_only(request_id, who).summary()
    return report


def expired_requests(store: RequestStore, retention_days: int, now: datetime | None = None) -> list[SubjectRequest]:
    """Answered requests whose answer is older than the retention period, not yet purged."""
    cutoff = (now or datetime.now(UTC)) - timedelta(days=retention_days)
    return [r for r in store.list() if not r.is_purged and r.status == RequestStatus.ANSWERED
            and r.answered_at is not None and r.answered_at < cutoff]
