"""Who read which request's data, when, and through what (GDPR Art. 5(2), 32): every read of a
request or its answer — in the UI through the sign-in, by the CLI, by an answer or PDF link —
is one row of table ``access_log`` in the registry database.

A row holds the request id and no other personal data: who (the signed-in user, or the OS user
for the CLI), their role, the surface ("ui", "cli", "link"), the action ("read answer",
"show request", "export forget set", ...). Only admins read it (`wikimem access-log`, the UI's
/access-log page); it is kept for its own period (`prune`, run by the retention schedule).
"""

from __future__ import annotations

import getpass
from datetime import UTC, datetime, timedelta

from sqlmodel import Field, Session, SQLModel, create_engine, delete, select

from wikimem_platform.registry import default_registry_url

SURFACES = ("ui", "cli", "link", "schedule")


class AccessRecord(SQLModel, table=True):
    __tablename__ = "access_log"

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(index=True)
    who: str
    role: str | None = None
    surface: str
    request_id: str | None = Field(default=None, index=True)
    action: str


def cli_user() -> str:
    """The operating-system account a CLI read is recorded under."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


class AccessLog:
    def __init__(self, url: str | None = None):
        self.url = url or default_registry_url()
        self.engine = create_engine(self.url)
        SQLModel.metadata.create_all(self.engine, tables=[AccessRecord.__table__])

    def record(self, who: str, surface: str, action: str, request_id: str | None = None,
               role: str | None = None, at: datetime | None = None) -> AccessRecord:
        if surface not in SURFACES:
            raise ValueError(f"surface {surface!r} is not one of {', '.join(SURFACES)}")
        row = AccessRecord(at=at or datetime.now(UTC), who=who, role=role, surface=surface,
                           request_id=request_id, action=action)
        with Session(self.engine, expire_on_commit=False) as session:
            session.add(row)
            session.commit()
            session.refresh(row)
        return row

    def list(self, request_id: str | None = None, since: datetime | None = None) -> list[AccessRecord]:
        with Session(self.engine, expire_on_commit=False) as session:
            query = select(AccessRecord).order_by(AccessRecord.at, AccessRecord.id)
            if request_id:
                query = query.where(AccessRecord.request_id == request_id)
            if since:
                query = query.where(AccessRecord.at >= since)
            rows = list(session.exec(query))
        for row in rows:  # SQLite gives naive datetimes back; every stored time is UTC
            if row.at.tzinfo is None:
                row.at = row.at.replace(tzinfo=UTC)
        return rows

    def prune(self, keep_days: int, now: datetime | None = None) -> int:
        """Delete the rows older than `keep_days`; how many went."""
        cutoff = (now or datetime.now(UTC)) - timedelta(days=keep_days)
        with Session(self.engine) as session:
            gone = session.exec(delete(AccessRecord).where(AccessRecord.at < cutoff)).rowcount  # type: ignore[call-overload]
            session.commit()
        return int(gone or 0)
