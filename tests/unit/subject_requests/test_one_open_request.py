"""One open request per person and kind, held by the database (issue 61): eight processes that add
the same person's erasure request at the same moment store one, and the seven others get the
clear "already exists" refusal, on SQLite and on the real Postgres server; an existing database
that already holds duplicates opens (its requests untouched, a warning naming their ids) and the
index is made once they are resolved."""

from __future__ import annotations

import logging
import multiprocessing
import sqlite3

import pytest

from wikimem_platform.subject_requests import intake
from wikimem_platform.subject_requests.intake import IntakeError, RequestStore, ResolvedSubject

RACERS = 8
SUBJECT = ResolvedSubject("Q42", "Douglas Adams", "Q42")


def _race(url: str, start, results) -> None:
    """One `request add`: wait for the start, add, report the outcome."""
    store = RequestStore(url)
    store.list()  # connected before the start: the adds meet at the database, not at connecting
    start.wait(timeout=30)
    try:
        results.put(("stored", store.add(SUBJECT, "erasure").id))
    except IntakeError as error:
        results.put(("refused", str(error)))
    except Exception as error:  # noqa: BLE001 - any other outcome fails the test, by name
        results.put(("crashed", f"{type(error).__name__}: {error}"))


@pytest.fixture(params=["sqlite", "postgres"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'registry.db'}"
    return request.getfixturevalue("postgres_url")


def test_racing_adds_store_one_open_request(url):
    RequestStore(url)  # the table and index exist before the race, as on any instance in use
    context = multiprocessing.get_context("fork")
    start, results = context.Event(), context.Queue()
    racers = [context.Process(target=_race, args=(url, start, results)) for _ in range(RACERS)]
    for racer in racers:
        racer.start()
    start.set()
    outcomes = [results.get(timeout=60) for _ in racers]
    for racer in racers:
        racer.join(timeout=30)
    stored = [detail for kind, detail in outcomes if kind == "stored"]
    refused = [detail for kind, detail in outcomes if kind == "refused"]
    assert len(stored) == 1 and len(refused) == RACERS - 1, outcomes
    assert all(f"subject: an open erasure request for this person already exists: {stored[0]}" in r for r in refused), refused
    assert [r.id for r in RequestStore(url).open()] == stored


def test_the_index_refuses_a_second_open_request_behind_the_store_s_back(url):
    """The database, not the check before the insert: a second open row is refused by the index
    itself; an answered one frees the person for a new request."""
    store = RequestStore(url)
    first = store.add(SUBJECT, "erasure")
    copy = intake.SubjectRequest(**{**first.model_dump(), "id": "dsr-20260101-000002"})
    with pytest.raises(Exception, match="(?i)unique"):
        with intake.Session(store.engine) as session:
            session.add(copy)
            session.commit()
    store.set_status(first.id, intake.RequestStatus.ANSWERED)
    assert store.add(SUBJECT, "erasure").id != first.id
    assert store.add(SUBJECT, "access").kind == "access"  # another kind is another request


def _old_database(path) -> None:
    """A registry made before the index, holding two open erasure requests for Q42."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE subject_requests (id VARCHAR PRIMARY KEY, kind VARCHAR, subject_key VARCHAR, "
                   "subject_qid VARCHAR, subject_label VARCHAR, person_json VARCHAR, requester_reference VARCHAR, "
                   "received_at DATETIME, due_at DATETIME, status VARCHAR, answered_at DATETIME, error VARCHAR)")
        for n, status in ((1, "received"), (2, "auditing"), (3, "answered")):
            db.execute("INSERT INTO subject_requests VALUES (?, 'erasure', 'Q42', 'Q42', 'Douglas Adams', NULL, NULL, "
                       "?, '2026-02-01 00:00:00', ?, NULL, NULL)", (f"dsr-20260101-00000{n}", f"2026-01-0{n} 00:00:00", status))


def test_an_existing_database_with_duplicates_opens_and_says_which(tmp_path, caplog):
    path = tmp_path / "old.db"
    _old_database(path)
    url = f"sqlite:///{path}"
    with caplog.at_level(logging.WARNING, logger=intake.__name__):
        store = RequestStore(url)
    assert not store.one_open_enforced
    assert [r.id for r in store.list()] == ["dsr-20260101-000001", "dsr-20260101-000002", "dsr-20260101-000003"]
    [warning] = [r.getMessage() for r in caplog.records]
    assert "dsr-20260101-000001, dsr-20260101-000002" in warning and "request remove" in warning
    assert "Douglas" not in warning and "Q42" not in warning  # ids only, never the person
    with pytest.raises(IntakeError, match="already exists: dsr-20260101-000001"):
        store.add(SUBJECT, "erasure")  # the store's own check still holds
    store.remove("dsr-20260101-000002")
    assert RequestStore(url).one_open_enforced  # resolved: the next opening makes the index
    assert intake.ONE_OPEN_INDEX in {i["name"] for i in intake.inspect(store.engine).get_indexes("subject_requests")}
