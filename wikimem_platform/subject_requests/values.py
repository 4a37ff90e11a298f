"""A requester's fact values, read by the property's Wikidata datatype before anything is stored.

A date given in a facts file becomes the extract's own form (`entities.format_time`: value
"1952-03-11", label "11 March 1952"; "1952-03" / "March 1952"; a year), so that a person's date
of birth is scored exactly as a Wikidata person's is. Impossible dates (31 February), dates in
the future and free text ("sometime in spring") are refused with the field named; so are items
given as numbers, and quantities that are not numbers. Values stay text otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, date, datetime

import numpy as np
import pandas as pd

from wikimem_platform.labels import fold
from wikimem_platform.reference.value_forms import shipped_short_forms
from wikimem_platform.registry import RegistryError
from wikimem_platform.wikidata.entities import format_time, normalize_amount
from wikimem_platform.wikidata.extract import QID_PATTERN
from wikimem_platform.wikimem.typical_names import COUNTRY_LABELS

ITEM, TIME, QUANTITY = "wikibase-item", "time", "quantity"
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
DATE_FORMS = "a date: 1952-03-11, 1952-03 or a year (1952), or written out (11 March 1952, March 1952)"
_ISO = re.compile(r"^(-?)(\d{1,4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$")
_WRITTEN = re.compile(r"^(?:(\d{1,2})\s+)?([a-z]+)\.?\s+(\d{1,4})$")
_NUMBER = re.compile(r"^([+-]?\d+(?:[.,]\d+)?)\s*([^\W\d][\w/°%. ]*)?$")


class IntakeError(RegistryError):
    """A request was refused; ``field`` names the offending field. Nothing was written."""


class FactValueError(ValueError):
    """Why one value cannot be a fact of its datatype (the caller names the field)."""


def time_value(item: object) -> tuple[str, str]:
    """(value, label) of a date as the extract stores it; FactValueError says what is wrong."""
    if isinstance(item, bool):
        raise FactValueError(f"must be {DATE_FORMS}, got {item!r}")
    if isinstance(item, datetime):
        item = item.date()
    if isinstance(item, date):
        year, month, day = item.year, item.month, item.day
    elif isinstance(item, int):
        year, month, day = item, 0, 0
    elif isinstance(item, str):
        year, month, day = _date_parts(item.strip())
    else:
        raise FactValueError(f"must be {DATE_FORMS}, got {type(item).__name__} {item!r}")
    if year == 0:
        raise FactValueError("there is no year 0 (1 BC is followed by AD 1); give -1 for 1 BC")
    if not 0 <= month <= 12:
        raise FactValueError(f"month {month} does not exist (1-12)")
    if day:
        try:
            date(abs(year), month, day)  # the calendar's days of that month (BC years as their AD twin)
        except ValueError:
            raise FactValueError(f"{MONTHS[month - 1].title()} {abs(year)} has no day {day}") from None
    first = date(year, month or 1, day or 1) if year > 0 else None
    if first is not None and first > datetime.now(UTC).date():
        raise FactValueError(f"{item} is in the future")
    precision = 11 if day else 10 if month else 9
    sign = "-" if year < 0 else "+"
    formatted = format_time({"time": f"{sign}{abs(year):04d}-{month:02d}-{day:02d}T00:00:00Z", "precision": precision})
    assert formatted is not None  # built in the form format_time reads
    return formatted


def _date_parts(text: str) -> tuple[int, int, int]:
    iso = _ISO.match(text)
    if iso:
        sign, year, month, day = iso.groups()
        return (-1 if sign else 1) * int(year), int(month or 0), int(day or 0)
    written = _WRITTEN.match(text.lower().replace(",", " ").strip())
    named = [i for i, m in enumerate(MONTHS) if written and len(written.group(2)) >= 3 and m.startswith(written.group(2))]
    if written and len(named) == 1:  # "March", "Mar", "Sept"
        day, _, year = written.groups()
        return int(year), named[0] + 1, int(day or 0)
    raise FactValueError(f"must be {DATE_FORMS}, got {text!r}")


def quantity_value(item: object) -> tuple[str, str]:
    """(value, label) of a number with an optional unit ("1.85 m"): the value the number as the
    extract writes amounts (no trailing zeros), the label as given."""
    if isinstance(item, bool) or not isinstance(item, (int, float, str)):
        raise FactValueError(f"must be a number, optionally with a unit (1.85 m), got {type(item).__name__} {item!r}")
    text = str(item).strip()
    match = _NUMBER.match(text)
    if not match:
        raise FactValueError(f"must be a number, optionally with a unit (1.85 m), got {text!r}")
    return normalize_amount(match.group(1).replace(",", ".")), text


def typed_value(item: object, datatype: str | None, where: str) -> tuple[str, str | None, str | None]:
    """(label, qid, value) of one requested value of a property of `datatype`; value is the
    claims table's id for a date or quantity (None for items and text: the QID or the label)."""
    if datatype in (TIME, QUANTITY):
        if isinstance(item, Mapping):
            raise IntakeError(where, "a date or quantity is given as it is (e.g. 1952-03-11 or 1.85 m), without label or qid")
        try:
            value, label = time_value(item) if datatype == TIME else quantity_value(item)
        except FactValueError as error:
            raise IntakeError(where, str(error)) from None
        return label, None, value
    if isinstance(item, str):
        if not item.strip():
            raise IntakeError(where, "must be a non-empty string")
        return item.strip(), None, None
    if isinstance(item, int) and not isinstance(item, bool) and datatype != ITEM:
        return str(item), None, None  # an identifier written without quotes
    if isinstance(item, Mapping):
        label, qid = item.get("label"), item.get("qid")
        extra = sorted(set(map(str, item)) - {"label", "qid"})
        if extra:
            raise IntakeError(f"{where}.{extra[0]}", "unknown key (allowed: label, qid)")
        if not isinstance(label, str) or not label.strip():
            raise IntakeError(f"{where}.label", f"must be a non-empty string, got {label!r}")
        if qid is not None and (not isinstance(qid, str) or not QID_PATTERN.match(qid)):
            raise IntakeError(f"{where}.qid", f"must look like Q123, got {qid!r}")
        return label.strip(), qid, None
    raise IntakeError(where, f"must be a string label or {{label: ..., qid: Q...}}, got {type(item).__name__} {item!r}")


# --------------------------------------------------------------------------- item values named in words

CITIZENSHIP = "P27"


def resolve_item_labels(facts: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """A requester's item values given in words ("country of citizenship: Poland") with the QID
    the extract knows them by (Q36) where exactly one item fits: a value of the same property in
    the extract labelled so, or one of its shipped short forms ("USA"), or — for a citizenship —
    a country of the invented controls' name lists (`typical_names.COUNTRY_LABELS`, so that a
    country the extract has no one of still tells the controls' origin). The label stays as
    written. Why: a value in words has none of its QID's aliases and forms, does not clash with
    the same value in the counterfactual pool ("United States" against "United States of
    America"), and gives the controls no origin — their names were then drawn from everywhere.
    A label that fits no item, or several, stays as given."""
    if not len(facts):
        return facts
    words = [datatype == ITEM and not QID_PATTERN.match(str(value))
             for datatype, value in zip(facts["datatype"], facts["value"])]
    if not any(words):
        return facts
    out = facts.copy()
    lookups: dict[str, dict[str, set[str]]] = {}
    for i in np.flatnonzero(words):
        prop = out.iloc[i]["property"]
        if prop not in lookups:
            lookups[prop] = _item_lookup(claims, prop)
        found = lookups[prop].get(_key(out.iloc[i]["value_label"]), set())
        if len(found) == 1:
            out.iloc[i, out.columns.get_loc("value")] = next(iter(found))
    return out


def _key(label: str) -> str:
    """A label's matching key: folded, without a leading article ("the Netherlands")."""
    key = fold(label)
    return key[4:] if key.startswith("the ") else key


def _item_lookup(claims: pd.DataFrame, prop: str) -> dict[str, set[str]]:
    """Matching key -> the items of `prop` it names: the extract's labels of the property's values,
    their shipped short forms, and for a citizenship the name lists' countries."""
    lookup: dict[str, set[str]] = {}
    own = claims[claims["property"] == prop].drop_duplicates("value") if claims is not None and len(claims) else None
    known = dict(zip(own["value"], own["value_label"])) if own is not None else {}
    forms = shipped_short_forms()
    for qid, label in known.items():
        for name in [label, *forms.get(qid, ())]:
            if isinstance(name, str):
                lookup.setdefault(_key(name), set()).add(qid)
    if prop == CITIZENSHIP:
        for qid, names in COUNTRY_LABELS.items():
            for name in names:
                key = _key(name)
                if not lookup.get(key):  # the extract's own items first
                    lookup[key] = {qid}
    return lookup
