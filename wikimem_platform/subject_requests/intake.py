"""Data-subject requests: intake, validation and storage (GDPR Art. 12(3), 15, 17).

A request names one person — by QID, by a name resolved against the extract's labels and
aliases, or by a facts file for a person who is not in Wikidata — and a kind (access or
erasure). It is stored in the registry database, next to the model releases (table
``subject_requests``), with its legal deadline: one month after receipt (Art. 12(3)). Every
input is validated before anything is written, and an error names the field at fault.

Status: received -> queued -> auditing -> answered | failed | interrupted (its run was stopped:
Ctrl-C, SIGTERM, or terminated from the UI; `wikimem request run ID` audits it again, resuming from
the stored shards). A request is *open* until it is answered, and the database holds at most one
open request per person and kind (a partial unique index, `ONE_OPEN_INDEX`).
"""

from __future__ import annotations

import calendar
import json
import logging
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

import pandas as pd
import yaml
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, Session, SQLModel, create_engine, select

from wikimem_platform.canaries.languages import check_languages, ENGLISH
from wikimem_platform.canaries.languages.packs import LETTER_LANGUAGES
from wikimem_platform.labels import find_subjects, normalize_label
from wikimem_platform.security.keys import keyed_hex
from wikimem_platform.registry import add_missing_columns, default_registry_url, record_fields
from wikimem_platform.subject_requests.values import IntakeError, typed_value
from wikimem_platform.wikidata.extract import ALLOWED_DATATYPES, QID_PATTERN

# A private person's subject key: "person-" + a keyed digest (the instance secret) of the name and facts.
PRIVATE_SUBJECT_PREFIX = "person-"
SUBJECT_KEY_PURPOSE = "subject-key"
# How close the due date may come before the deadline check warns (days).
DEADLINE_WARNING_DAYS = 7

# Length limits of every free-text field a requester gives (README, "Data-subject requests"):
# generous for any real name, and small enough that a list or a letter stays readable.
MAX_NAME_CHARS = 200  # --name, a facts file's name
MAX_ALIAS_CHARS = 200  # each alias
MAX_ALIASES = 50
MAX_FACT_VALUE_CHARS = 500  # each value's label (and a property's name)
MAX_VALUES_PER_PROPERTY = 50
MAX_PROPERTIES = 100
MAX_FACTS_FILE_BYTES = 1_000_000  # the --facts file
MAX_REFERENCE_CHARS = 200  # --reference

log = logging.getLogger(__name__)


class RequestKind(StrEnum):
    ACCESS = "access"  # Art. 15: what does each model associate with me?
    ERASURE = "erasure"  # Art. 17: forget it (ends in a forget set)


class RequestStatus(StrEnum):
    RECEIVED = "received"
    QUEUED = "queued"  # its run is waiting in the run queue (e.g. for the one-model pool)
    AUDITING = "auditing"  # its run has started
    ANSWERED = "answered"
    FAILED = "failed"
    WITHDRAWN = "withdrawn"  # purged before it was answered (cancelled mid-run, or removed)
    INTERRUPTED = "interrupted"  # its run was stopped (SIGINT, SIGTERM, terminated): run it again


OPEN_STATUSES = (RequestStatus.RECEIVED.value, RequestStatus.QUEUED.value, RequestStatus.AUDITING.value,
                 RequestStatus.FAILED.value, RequestStatus.INTERRUPTED.value)
# One open request per (person, kind), held by the database itself: a read-then-insert check alone
# lets two simultaneous `request add` both pass. Its name carries the open statuses it covers, so a
# change of OPEN_STATUSES makes a new index (and the old one is dropped).
ONE_OPEN_INDEX = "subject_requests_one_open_" + "_".join(sorted(status[:3] for status in OPEN_STATUSES))


def add_one_month(moment: datetime) -> datetime:
    """The same day of the next month, or its last day when that month is shorter (31 Jan -> 28/29 Feb)."""
    year, month = (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


def new_request_id(now: datetime) -> str:
    """dsr-YYYYMMDD-xxxxxx: unique across databases, a valid Dagster partition and run key."""
    return f"dsr-{now:%Y%m%d}-{secrets.token_hex(3)}"


class SubjectRequest(SQLModel, table=True):
    __tablename__ = "subject_requests"

    id: str = Field(primary_key=True)
    kind: str
    subject_key: str = Field(index=True)  # the QID, or person-<digest> for someone not in Wikidata
    subject_qid: str | None = None
    subject_label: str
    person_json: str | None = None  # a private person's name, aliases and facts (PersonFacts)
    requester_reference: str | None = None
    received_at: datetime
    due_at: datetime
    status: str = RequestStatus.RECEIVED.value
    answered_at: datetime | None = None
    error: str | None = None
    # The languages the person's facts are audited in ("de,en"; None: English and the languages of
    # the person's citizenship, `subject_requests.languages.default_languages`), and the letter's.
    languages: str | None = None
    letter_language: str | None = None
    # Once purged, the row is the accountability record alone (Art. 5(2)): id, kind, dates,
    # outcome (status), when and by whom it was purged; every field that held personal data is empty.
    purged_at: datetime | None = None
    purged_by: str | None = None

    @property
    def is_purged(self) -> bool:
        return self.purged_at is not None

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES

    def person(self) -> PersonFacts | None:
        return PersonFacts.from_json(self.person_json) if self.person_json else None

    def language_codes(self) -> list[str] | None:
        """The languages asked for (None: the default for the person)."""
        return self.languages.split(",") if self.languages else None

    def summary(self) -> dict:
        """A JSON-able view (the facts stay out: `person()` has them)."""
        out = record_fields(self, exclude={"person_json"})
        for name in ("received_at", "due_at", "answered_at", "purged_at"):
            if out.get(name) is not None:
                out[name] = _aware(out[name]).isoformat(timespec="seconds")
        out["in_wikidata"] = self.subject_qid is not None
        return out


def _aware(moment: datetime) -> datetime:
    """SQLite returns naive datetimes; every stored time is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# --------------------------------------------------------------------------- a private person's facts

@dataclass(frozen=True)
class FactValue:
    label: str
    qid: str | None = None
    value_id: str | None = None  # a date's or quantity's form in the claims table ("1952-03-11")

    @property
    def value(self) -> str:
        """The value's id in the claims table: its QID, a date's or quantity's own form, else its label."""
        return self.qid or self.value_id or self.label


@dataclass
class PersonFacts:
    """A person the requester describes: name, aliases, property -> values (labels, optional QIDs)."""

    name: str
    aliases: list[str] = field(default_factory=list)
    facts: dict[str, list[FactValue]] = field(default_factory=dict)  # property id -> values
    languages: list[str] = field(default_factory=list)  # the languages to audit in ([]: the default)

    def subject_key(self) -> str:
        canonical = {
            "name": normalize_label(self.name),
            "facts": {p: sorted(normalize_label(v.label) for v in values) for p, values in sorted(self.facts.items())},
        }
        # Keyed by the instance secret: a guessed name and facts cannot be confirmed from a stored key.
        return PRIVATE_SUBJECT_PREFIX + keyed_hex(json.dumps(canonical, sort_keys=True), SUBJECT_KEY_PURPOSE)

    def to_json(self) -> str:
        return json.dumps({"name": self.name, "aliases": self.aliases,
                           "facts": {p: [{"label": v.label, "qid": v.qid, **({"value": v.value_id} if v.value_id else {})}
                                         for v in vs] for p, vs in self.facts.items()},
                           **({"languages": self.languages} if self.languages else {})},
                          ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> PersonFacts:
        data = json.loads(text)
        return cls(data["name"], list(data.get("aliases") or []),
                   {p: [FactValue(v["label"], v.get("qid"), v.get("value")) for v in vs] for p, vs in data["facts"].items()},
                   list(data.get("languages") or []))

    def claims(self, subject_key: str, datatypes: Mapping[str, str]) -> pd.DataFrame:
        """The facts as rows of the claims table (qid, property, datatype, value, value_label)."""
        rows = [(subject_key, prop, datatypes.get(prop), v.value, v.label) for prop, values in self.facts.items() for v in values]
        return pd.DataFrame(rows, columns=["qid", "property", "datatype", "value", "value_label"])


def supported_properties(metadata: pd.DataFrame) -> pd.DataFrame:
    """Properties a requester may name: an English label and a datatype a sentence can state."""
    usable = metadata.dropna(subset=["label"])
    return usable[usable["datatype"].isin(ALLOWED_DATATYPES)].drop_duplicates("property")


def _property_lookup(metadata: pd.DataFrame) -> dict[str, str]:
    """Property id, label and aliases (normalized) -> property id."""
    lookup: dict[str, str] = {}
    for row in supported_properties(metadata).to_dict("records"):
        for alias in row.get("aliases") or []:
            lookup.setdefault(normalize_label(alias), row["property"])
    for row in supported_properties(metadata).to_dict("records"):
        lookup[normalize_label(row["label"])] = row["property"]  # labels win over aliases
        lookup[row["property"].lower()] = row["property"]
    return lookup


def parse_person_facts(data: object, metadata: pd.DataFrame, covered: Iterable[str] = ()) -> PersonFacts:
    """Validate a facts document (the YAML of `--facts`) against the property metadata.

    ``covered``: the properties the reference data audits (listed in the error for an unknown
    property). Raises IntakeError naming the field: ``name``, ``aliases[i]``, ``facts``,
    ``facts.<property>``, ``facts.<property>[i]``.
    """
    if not isinstance(data, Mapping):
        raise IntakeError("facts file", "expected a mapping with 'name' and 'facts'")
    unknown_keys = sorted(set(map(str, data)) - {"name", "aliases", "facts", "languages"})
    if unknown_keys:
        raise IntakeError(unknown_keys[0], "unknown key (allowed: name, aliases, facts, languages)")
    languages = data.get("languages") or []
    try:
        languages = check_languages(languages) if languages else []
    except ValueError as error:
        raise IntakeError("languages", str(error).removeprefix("languages: ")) from None
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise IntakeError("name", "must be a non-empty string")
    check_length("name", name, MAX_NAME_CHARS)
    aliases = data.get("aliases") or []
    if not isinstance(aliases, list):
        raise IntakeError("aliases", "must be a list of strings")
    if len(aliases) > MAX_ALIASES:
        raise IntakeError("aliases", f"at most {MAX_ALIASES} aliases, got {len(aliases)}")
    for i, alias in enumerate(aliases):
        if not isinstance(alias, str) or not alias.strip():
            raise IntakeError(f"aliases[{i}]", f"must be a non-empty string, got {_short(alias)}")
        check_length(f"aliases[{i}]", alias, MAX_ALIAS_CHARS)
    facts = data.get("facts")
    if not isinstance(facts, Mapping) or not facts:
        raise IntakeError("facts", "must map at least one property (id such as P106, or label such as 'occupation') to values")
    if len(facts) > MAX_PROPERTIES:
        raise IntakeError("facts", f"at most {MAX_PROPERTIES} properties, got {len(facts)}")
    lookup = _property_lookup(metadata)
    datatypes = dict(zip(metadata["property"], metadata["datatype"]))
    parsed: dict[str, list[FactValue]] = {}
    for key, values in facts.items():
        check_length("facts", str(key), MAX_FACT_VALUE_CHARS, what="a property's name must be")
        prop = lookup.get(normalize_label(str(key))) or lookup.get(str(key).strip().lower())
        where = f"facts.{key}"
        if prop is None:
            labels = dict(zip(metadata["property"], metadata["label"]))
            listed = ", ".join(f"{p} ({labels.get(p, p)})" for p in covered) or "see `wikimem request properties`"
            raise IntakeError(where, f"unknown property {key!r}; supported: {listed}; or any Wikidata property id "
                                     f"of datatype {', '.join(ALLOWED_DATATYPES)}")
        items = values if isinstance(values, list) else [values]
        if not items:
            raise IntakeError(where, "give at least one value")
        if len(items) > MAX_VALUES_PER_PROPERTY:
            raise IntakeError(where, f"at most {MAX_VALUES_PER_PROPERTY} values, got {len(items)}")
        for i, item in enumerate(items):
            for text_of_value in ([item] if isinstance(item, str) else item.values() if isinstance(item, Mapping) else []):
                if isinstance(text_of_value, str):
                    check_length(f"{where}[{i}]" if isinstance(values, list) else where, text_of_value, MAX_FACT_VALUE_CHARS)
            label, qid, value_id = typed_value(item, datatypes.get(prop), f"{where}[{i}]" if isinstance(values, list) else where)
            parsed.setdefault(prop, []).append(FactValue(label, qid, value_id))
    return PersonFacts(name.strip(), [a.strip() for a in aliases], parsed, languages)


def check_length(field_name: str, value: str, limit: int, what: str = "must be") -> None:
    """A text over its limit is refused naming the field and the limit, never echoed (it may be a
    paste of anything)."""
    if len(value) > limit:
        raise IntakeError(field_name, f"{what} at most {limit} characters, got {len(value):,}")


def _short(value: object, limit: int = 40) -> str:
    """A refused value as an error shows it: repr, cut to `limit` characters."""
    shown = repr(value)
    return shown if len(shown) <= limit else shown[:limit] + "..."


def load_facts_file(path: str | Path, metadata: pd.DataFrame, covered: Iterable[str] = ()) -> PersonFacts:
    path = Path(path)
    if not path.is_file():
        raise IntakeError("facts", f"file {path} does not exist")
    if path.stat().st_size > MAX_FACTS_FILE_BYTES:
        raise IntakeError("facts", f"{path} is {path.stat().st_size:,} bytes; a facts file may be at most "
                                   f"{MAX_FACTS_FILE_BYTES:,} bytes")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_DatesAsText)  # noqa: S506 - a SafeLoader
    except UnicodeDecodeError:
        raise IntakeError("facts", f"{path} is not UTF-8 text") from None
    except yaml.YAMLError as error:
        raise IntakeError("facts", f"{path} is not valid YAML: {error}") from None
    return parse_person_facts(data, metadata, covered)


class _DatesAsText(yaml.SafeLoader):
    """YAML without its date type: `1980-02-31` stays text and is refused by the date's own rules,
    naming its field, where PyYAML would raise on it (and `1980-02-14` would arrive as a date)."""


_DatesAsText.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


# --------------------------------------------------------------------------- naming the subject

@dataclass(frozen=True)
class ResolvedSubject:
    key: str
    label: str
    qid: str | None = None
    person: PersonFacts | None = None


def resolve_qid(qid: str, humans: pd.DataFrame) -> ResolvedSubject:
    qid = qid.strip().upper()
    if not QID_PATTERN.match(qid):
        raise IntakeError("qid", f"{_short(qid)} is not a Wikidata item id (Q followed by digits)")
    row = humans[humans["qid"] == qid]
    if row.empty:
        raise IntakeError("qid", f"{qid} is not a human in the extract ({len(humans):,} humans); "
                                 "for a person not in Wikidata use --facts")
    return ResolvedSubject(qid, str(row.iloc[0]["label"]), qid)


def resolve_name(name: str, humans: pd.DataFrame, claims: pd.DataFrame | None = None) -> ResolvedSubject:
    """A unique label or alias match; several -> refuse and list them (with `claims`: birth year,
    occupation and country, to choose by); none -> suggest --facts."""
    if not name or not name.strip():
        raise IntakeError("name", "must be a non-empty string")
    check_length("name", name, MAX_NAME_CHARS)
    matches = find_subjects(name, humans)
    if matches.empty:
        raise IntakeError("name", f"no human in the extract is called {name!r}; give their QID (--qid), "
                                  "or describe the person with --facts person.yaml")
    if len(matches) > 1:
        lines = "; ".join(f"{r['qid']}: {r['label']} — {_description(r, claims)}" for r in matches.to_dict("records"))
        raise IntakeError("name", f"{len(matches)} people match {name!r} ({lines}): give the QID with --qid")
    row = matches.iloc[0]
    return ResolvedSubject(row["qid"], str(row["label"]), row["qid"])


# What tells two people of one name apart, in this order: born, occupation, country of citizenship.
IDENTIFYING = (("P569", "born {}"), ("P106", "{}"), ("P27", "{}"))


def _description(row: Mapping, claims: pd.DataFrame | None = None) -> str:
    """The extract's description, else birth year, occupation and country from its claims."""
    text = row.get("description")
    if isinstance(text, str) and text:
        return text
    if claims is None or claims.empty:
        return "no description"
    own = claims[claims["qid"] == row["qid"]]
    parts = []
    for prop, form in IDENTIFYING:
        values = own[own["property"] == prop]
        if values.empty:
            continue
        first = values.iloc[0]
        label = first["value_label"] if isinstance(first["value_label"], str) and first["value_label"] else first["value"]
        parts.append(form.format(_year(str(first["value"])) if prop == "P569" else label))
    return ", ".join(parts) or "no description"


def _year(value: str) -> str:
    """The year of a stored date ("1952-03-11" -> "1952", "-0063" -> "63 BC"); anything else as given."""
    digits = value.lstrip("-")[:4]
    if not digits.isdigit():
        return value
    return f"{int(digits)} BC" if value.startswith("-") else str(int(digits))


def resolve_person(person: PersonFacts) -> ResolvedSubject:
    return ResolvedSubject(person.subject_key(), person.name, None, person)


# --------------------------------------------------------------------------- the store

class RequestStore:
    """Add, list, get, update and remove requests (table `subject_requests` of the registry database)."""

    def __init__(self, url: str | None = None):
        self.url = url or default_registry_url()
        self.engine = create_engine(self.url)
        SQLModel.metadata.create_all(self.engine, tables=[SubjectRequest.__table__])
        add_missing_columns(self.engine, SubjectRequest.__table__)  # requests stored before languages keep
        self.one_open_enforced = ensure_one_open_index(self.engine)

    def add(self, subject: ResolvedSubject, kind: str, requester_reference: str | None = None,
            received_at: datetime | None = None, languages: Sequence[str] | str | None = None,
            letter_language: str | None = None) -> SubjectRequest:
        """A new request. languages: the languages to audit the facts in (None: the facts file's,
        else English and the person's citizenship's); letter_language: the letter's (None: the
        first of `languages` that has a letter, else English)."""
        kinds = [k.value for k in RequestKind]
        if kind not in kinds:
            raise IntakeError("kind", f"{kind!r} is not a request kind (one of {', '.join(kinds)})")
        if languages is None and subject.person is not None and subject.person.languages:
            languages = subject.person.languages
        codes = None
        if languages is not None:
            try:
                codes = check_languages(languages)
            except ValueError as error:
                raise IntakeError("languages", str(error).removeprefix("languages: ")) from None
        if letter_language is None:
            letter_language = next((c for c in codes or () if c in LETTER_LANGUAGES), ENGLISH)
        if letter_language not in LETTER_LANGUAGES:
            raise IntakeError("letter_language", f"{letter_language!r} has no letter templates; allowed: "
                                                 f"{', '.join(LETTER_LANGUAGES)}")
        if requester_reference is not None and (not isinstance(requester_reference, str)
                                                or len(requester_reference) > MAX_REFERENCE_CHARS):
            raise IntakeError("requester_reference", f"must be a string of at most {MAX_REFERENCE_CHARS} characters")
        if subject.person is None:
            check_length("name", subject.label, MAX_NAME_CHARS)
        received = _aware(received_at or datetime.now(UTC))
        with Session(self.engine, expire_on_commit=False) as session:
            self._refuse_second_open(session, subject.key, kind)  # the common case, with a clear message
            request = SubjectRequest(
                id=new_request_id(received), kind=kind, subject_key=subject.key, subject_qid=subject.qid,
                subject_label=subject.label, person_json=subject.person.to_json() if subject.person else None,
                requester_reference=requester_reference, received_at=received, due_at=add_one_month(received),
                languages=",".join(codes) if codes else None, letter_language=letter_language,
            )
            session.add(request)
            try:
                session.commit()
            except IntegrityError:  # another `request add` for this person won the race
                session.rollback()
                self._refuse_second_open(session, subject.key, kind)
                raise
            session.refresh(request)
        return _normalized(request)

    @staticmethod
    def _refuse_second_open(session: Session, subject_key: str, kind: str) -> None:
        clash = session.exec(select(SubjectRequest).where(
            SubjectRequest.subject_key == subject_key, SubjectRequest.kind == kind,
            SubjectRequest.status.in_(OPEN_STATUSES)).order_by(SubjectRequest.received_at)).first()
        if clash is not None:
            raise IntakeError("subject", f"an open {kind} request for this person already exists: {clash.id} "
                                         f"({clash.status}, due {_aware(clash.due_at):%Y-%m-%d})")

    def list(self, status: str | None = None) -> list[SubjectRequest]:
        with Session(self.engine, expire_on_commit=False) as session:
            query = select(SubjectRequest).order_by(SubjectRequest.received_at, SubjectRequest.id)
            if status:
                query = query.where(SubjectRequest.status == status)
            return [_normalized(r) for r in session.exec(query)]

    def open(self) -> list[SubjectRequest]:
        return [r for r in self.list() if r.is_open]

    def get(self, request_id: str) -> SubjectRequest:
        with Session(self.engine, expire_on_commit=False) as session:
            request = session.get(SubjectRequest, request_id)
        if request is None:
            raise KeyError(f"no request {request_id!r}")
        return _normalized(request)

    def set_status(self, request_id: str, status: RequestStatus, error: str | None = None,
                   when: datetime | None = None) -> SubjectRequest:
        with Session(self.engine, expire_on_commit=False) as session:
            request = session.get(SubjectRequest, request_id)
            if request is None:
                raise KeyError(f"no request {request_id!r}")
            if status == RequestStatus.ANSWERED and request.status != RequestStatus.ANSWERED:
                # The first answer is the one the deadline counts; a later re-audit keeps its date.
                request.answered_at = _aware(when or datetime.now(UTC))
            request.status = status.value
            request.error = error
            session.add(request)
            session.commit()
            session.refresh(request)
        return _normalized(request)

    def keep_record_only(self, request_id: str, who: str, when: datetime | None = None) -> SubjectRequest:
        """The request's row emptied of personal data, kept as the accountability record (id, kind,
        received/due/answered/purged dates, outcome, who purged it), and the old contents overwritten
        in the database file: SQLite's secure_delete and VACUUM (free pages and the write-ahead log
        too), Postgres's VACUUM FULL (a new table file)."""
        with self.engine.connect() as conn:
            if self.engine.dialect.name == "sqlite":
                conn.exec_driver_sql("PRAGMA secure_delete=ON")
            with Session(bind=conn, expire_on_commit=False) as session:
                request = session.get(SubjectRequest, request_id)
                if request is None:
                    raise KeyError(f"no request {request_id!r}")
                if request.status != RequestStatus.ANSWERED:
                    request.status = RequestStatus.WITHDRAWN.value
                request.subject_key, request.subject_qid, request.subject_label = PURGED, None, PURGED
                request.person_json = request.requester_reference = request.error = request.languages = None
                if request.purged_at is None:  # purged again (a file found later): the first purge is the record's
                    request.purged_at, request.purged_by = _aware(when or datetime.now(UTC)), who
                session.add(request)
                session.commit()
                session.refresh(request)
            conn.commit()  # the session joined the connection's transaction (begun by the PRAGMA)
        compact_database(self.engine, SubjectRequest.__tablename__)
        return _normalized(request)

    def remove(self, request_id: str) -> SubjectRequest:
        with Session(self.engine, expire_on_commit=False) as session:
            request = session.get(SubjectRequest, request_id)
            if request is None:
                raise KeyError(f"no request {request_id!r}")
            session.delete(request)
            session.commit()
        return _normalized(request)


PURGED = "[purged]"


def duplicate_open_requests(engine) -> list[list[str]]:
    """The ids of each (person, kind) that has more than one open request, oldest first."""
    statuses = ", ".join(f"'{status}'" for status in OPEN_STATUSES)
    with engine.connect() as conn:
        rows = conn.execute(text(
            f"SELECT subject_key, kind, id FROM {SubjectRequest.__tablename__} WHERE status IN ({statuses}) "
            "ORDER BY subject_key, kind, received_at, id")).all()
    groups: dict[tuple[str, str], list[str]] = {}
    for key, kind, request_id in rows:
        groups.setdefault((key, kind), []).append(request_id)
    return [ids for ids in groups.values() if len(ids) > 1]


def ensure_one_open_index(engine) -> bool:
    """Create the partial unique index `ONE_OPEN_INDEX` (SQLite and Postgres both have partial
    indexes) on a new or an existing database; drop one made for other open statuses. A database
    that already holds two open requests for one person and kind keeps them all, untouched (they are
    legal records: a person decides which to remove, `wikimem request remove ID`): the index waits
    until they are resolved, a warning names their ids (never the person), and the store's own
    check still refuses a third. Returns whether the index is in place."""
    table = SubjectRequest.__tablename__
    present = {index["name"] for index in inspect(engine).get_indexes(table)}
    if ONE_OPEN_INDEX in present:
        return True
    statuses = ", ".join(f"'{status}'" for status in OPEN_STATUSES)
    try:
        with engine.begin() as conn:
            for stale in sorted(name for name in present if name and name.startswith("subject_requests_one_open_")):
                conn.execute(text(f'DROP INDEX IF EXISTS "{stale}"'))
            conn.execute(text(f'CREATE UNIQUE INDEX IF NOT EXISTS "{ONE_OPEN_INDEX}" ON {table} (subject_key, kind) '
                              f"WHERE status IN ({statuses})"))
    except IntegrityError:
        duplicates = duplicate_open_requests(engine)
        if not duplicates:  # Postgres: another process created the index at the same moment
            return ONE_OPEN_INDEX in {index["name"] for index in inspect(engine).get_indexes(table)}
        log.warning("one open request per person and kind is not enforced by the database yet: %d person(s) have "
                    "several open requests of one kind (%s); remove all but one (`wikimem request remove ID`)",
                    len(duplicates), "; ".join(", ".join(ids) for ids in duplicates))
        return False
    return True


def compact_database(engine, table: str) -> None:
    """Leave no deleted bytes in the database's files: VACUUM rewrites a SQLite file without its
    free pages and a checkpoint empties its write-ahead log; Postgres's VACUUM FULL writes the
    table anew and drops the old file."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql("VACUUM")
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        elif engine.dialect.name == "postgresql":
            conn.exec_driver_sql(f'VACUUM FULL "{table}"')


def _normalized(request: SubjectRequest) -> SubjectRequest:
    for name in ("received_at", "due_at", "answered_at", "purged_at"):
        value = getattr(request, name)
        if value is not None:
            setattr(request, name, _aware(value))
    return request


# --------------------------------------------------------------------------- the deadline

@dataclass(frozen=True)
class DeadlineState:
    """passed / warn / fail, with the reason in plain words."""

    state: str  # "ok" | "warn" | "fail"
    message: str
    days_left: float


def deadline_state(request: SubjectRequest, now: datetime | None = None,
                   warning_days: int = DEADLINE_WARNING_DAYS) -> DeadlineState:
    """An open request warns within `warning_days` of its due date and fails past it; an answered
    one fails only if it was answered late."""
    now = _aware(now or datetime.now(UTC))
    due = _aware(request.due_at)
    days_left = (due - now).total_seconds() / 86400
    if not request.is_open:
        answered = _aware(request.answered_at) if request.answered_at else None
        if answered and answered > due:
            return DeadlineState("fail", f"answered {answered:%Y-%m-%d}, after the due date {due:%Y-%m-%d}", days_left)
        return DeadlineState("ok", f"answered{f' {answered:%Y-%m-%d}' if answered else ''}, due {due:%Y-%m-%d}", days_left)
    if now > due:
        return DeadlineState("fail", f"open ({request.status}) and {-days_left:.1f} days past its due date {due:%Y-%m-%d}", days_left)
    if days_left <= warning_days:
        return DeadlineState("warn", f"open ({request.status}), due {due:%Y-%m-%d}: {days_left:.1f} days left", days_left)
    return DeadlineState("ok", f"open ({request.status}), due {due:%Y-%m-%d}: {days_left:.1f} days left", days_left)
