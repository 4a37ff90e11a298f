"""The registry's share of a purge, in the database's own files: after `keep_record_only` no byte of
the person is left where the database keeps its rows — SQLite's file (free pages included, its
write-ahead log emptied), Postgres's table and index files (VACUUM FULL writes them anew; the
server's write-ahead log in pg_wal keeps old pages until it recycles them, the operator's retention
like backups) — and the accountability record (id, kind, dates, outcome, who purged it) is all that
is read back."""

from pathlib import Path

import psycopg2
import pytest
from sqlalchemy import create_engine

from wikimem_platform.subject_requests import intake

MARKERS = ["Ottilie Brzęczyszczak", "O. Brzęczyszczak-Lind", "lighthouse glassblower", "Ystradgynlais-on-Vorn",
           "ticket BRZ-40417"]


def _person() -> intake.PersonFacts:
    return intake.PersonFacts(MARKERS[0], [MARKERS[1]], {
        "P106": [intake.FactValue(MARKERS[2])], "P19": [intake.FactValue(MARKERS[3])]})


def _needles() -> set[bytes]:
    out = set()
    for marker in MARKERS:
        for variant in (marker, marker.lower()):
            out |= {variant.encode(), variant.encode("unicode_escape").replace(b"\\x", b"\\u00")}
    return out


def _hits(files: list[Path]) -> list[tuple[str, bytes]]:
    return [(str(f), n) for f in files if f.is_file() for n in _needles() if n in f.read_bytes()]


def _fill_and_purge(url: str) -> tuple[intake.RequestStore, str, str]:
    store = intake.RequestStore(url)
    kept = store.add(intake.resolve_qid("Q42", _humans()), "access")  # another request, kept as it is
    purged = store.add(intake.resolve_person(_person()), "erasure", requester_reference=MARKERS[4])
    for _ in range(3):  # the row rewritten a few times, as a run's status changes do
        store.set_status(purged.id, intake.RequestStatus.AUDITING)
    store.set_status(purged.id, intake.RequestStatus.ANSWERED)
    return store, purged.id, kept.id


def _humans():
    import pandas as pd

    return pd.DataFrame({"qid": ["Q42"], "label": ["Douglas Adams"]})


def _check_record(store: intake.RequestStore, request_id: str, kept_id: str) -> None:
    record = store.get(request_id)
    assert (record.status, record.kind, record.purged_by) == ("answered", "erasure", "dpo@example.org")
    assert record.answered_at and record.received_at and record.purged_at
    assert record.person_json is None and record.requester_reference is None and record.subject_label == intake.PURGED
    assert store.get(kept_id).subject_label == "Douglas Adams"


def test_sqlite_keeps_no_byte_of_a_purged_request(tmp_path):
    db = tmp_path / "registry.db"
    store, request_id, kept_id = _fill_and_purge(f"sqlite:///{db}")
    files = [db, *tmp_path.glob("registry.db-*")]
    assert _hits(files)  # the person is in the file before: the scan can fail
    store.keep_record_only(request_id, "dpo@example.org")
    assert _hits([db, *tmp_path.glob("registry.db-*")]) == []
    _check_record(store, request_id, kept_id)


def test_postgres_keeps_no_byte_of_a_purged_request(postgres_url):
    store, request_id, kept_id = _fill_and_purge(postgres_url)
    connection = psycopg2.connect(postgres_url)
    connection.autocommit = True

    def database_files() -> list[Path]:
        with connection.cursor() as cursor:
            cursor.execute("CHECKPOINT")  # every page on disk, where a reader of the files would find it
            cursor.execute("SELECT current_setting('data_directory'), oid FROM pg_database WHERE datname = current_database()")
            data, oid = cursor.fetchone()
        return [p for p in (Path(data) / "base" / str(oid)).iterdir() if p.is_file()]

    try:
        assert _hits(database_files())
        store.keep_record_only(request_id, "dpo@example.org")
        assert _hits(database_files()) == []
    finally:
        connection.close()
    _check_record(store, request_id, kept_id)
    create_engine(postgres_url).dispose()
