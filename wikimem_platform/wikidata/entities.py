"""Fields of one Wikidata entity as the dump reader keeps them: terms, humanness, claims.

Plain Python on the decoded JSON (no pandas): the one place an entity's fields are read, shared by
the full parse (`wikidata`) and the fast reader's worker processes (`dump_reader`), which import
only this module so that they start in a fraction of a second.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

HUMAN_QID = "Q5"
INSTANCE_OF = "P31"
ALLOWED_DATATYPES: tuple[str, ...] = ("wikibase-item", "string", "quantity", "time")
QID_PATTERN = re.compile(r"^Q\d+$")
PID_PATTERN = re.compile(r"^P\d+$")

# Old-format (wbgetentities) snaks may lack "datatype"; infer it from the datavalue type.
_DATAVALUE_TO_DATATYPE = {
    "wikibase-entityid": "wikibase-item",
    "string": "string",
    "quantity": "quantity",
    "time": "time",
}
DEFAULT_LANGUAGES: tuple[str, ...] = ("en", "de", "fr", "es", "it", "pl", "nl", "pt")
"""Languages whose labels, descriptions and aliases the extract keeps (`entity_terms`) by default."""
LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{1,8})*$")
"""A Wikidata term language code: a lower-case ISO 639 code, optionally with subtags (pt-br, zh-hans)."""
TERMS_COLUMNS = ["qid", "language", "label", "description", "aliases"]
"""One row per (entity, language) with any term; the extract's English columns stay where they were."""
_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_TIME = re.compile(r"^([+-])(\d+)-(\d\d)-(\d\d)T")


class MalformedDumpError(ValueError):
    """Raised when more than the allowed share of dump lines cannot be parsed."""


@dataclass
class ParseStats:
    """Counts a user needs to trust an extract: what was read, kept, skipped and why."""

    lines: int = 0
    malformed: int = 0
    entities: int = 0
    humans: int = 0
    humans_without_english_label: int = 0
    claims_kept: int = 0
    claims_other_datatype: int = 0
    claims_unresolved_value: int = 0
    label_passes: int = 1
    properties: int = 0
    workers: int = 1
    malformed_examples: list[str] = field(default_factory=list)

    @property
    def malformed_share(self) -> float:
        return self.malformed / self.lines if self.lines else 0.0

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["malformed_share"] = self.malformed_share
        return out


def english_label(entity: dict) -> str | None:
    return label_text((entity.get("labels") or {}).get("en", {}))


def label_text(english: Any) -> str | None:
    """The label of a labels map's entry for one language ("en" for the English columns), stripped;
    None if there is none."""
    label = english.get("value") if isinstance(english, dict) else None
    return label.strip() if isinstance(label, str) and label.strip() else None


def english_aliases(entity: dict) -> list[str]:
    return alias_texts((entity.get("aliases") or {}).get("en", []))


def alias_texts(english: Any) -> list[str]:
    """The aliases of an aliases map's entry for one language (a list of {"value": ...})."""
    if not isinstance(english, list):
        return []
    return [a["value"] for a in english if isinstance(a, dict) and isinstance(a.get("value"), str) and a["value"]]


def english_description(entity: dict) -> str | None:
    value = (entity.get("descriptions") or {}).get("en", {})
    return value.get("value") if isinstance(value, dict) else None


def check_languages(languages: Sequence[str]) -> tuple[str, ...]:
    """The term languages as a tuple; ValueError naming `languages` for a code Wikidata does not use
    or one given twice. Empty: English columns only, no terms table."""
    if isinstance(languages, str):
        raise ValueError(f"languages must be a list of language codes such as {list(DEFAULT_LANGUAGES)}, "
                         f"got the string {languages!r}")
    codes = tuple(languages)
    for code in codes:
        if not isinstance(code, str) or not LANGUAGE_CODE.match(code):
            raise ValueError(f"languages: {code!r} is not a Wikidata language code (lower-case ISO 639 code of "
                             f"2-3 letters, optionally with subtags: 'pl', 'pt-br', 'zh-hans'; default "
                             f"{list(DEFAULT_LANGUAGES)})")
    repeated = sorted({code for code in codes if codes.count(code) > 1})
    if repeated:
        raise ValueError(f"languages: {repeated} given more than once in {list(codes)}")
    return codes


def entity_terms(entity: dict, languages: Sequence[str]) -> list[tuple]:
    """(language, label, description, aliases) for each of `languages` in which the entity has a
    label, a description or an alias, in the order of `languages`; texts as `label_text`,
    `description_text` and `alias_texts` read them."""
    labels, descriptions, aliases = (entity.get(key) or {} for key in ("labels", "descriptions", "aliases"))
    rows = []
    for language in languages:
        label = label_text(labels.get(language, {}))
        description = description_text(descriptions.get(language, {}))
        names = alias_texts(aliases.get(language, []))
        if label is not None or description is not None or names:
            rows.append((language, label, description, names))
    return rows


def description_text(term: Any) -> str | None:
    """The description of a descriptions map's entry, as given; None if there is none or it is empty."""
    value = term.get("value") if isinstance(term, dict) else None
    return value if isinstance(value, str) and value else None


def is_human(entity: dict) -> bool:
    return states_human((entity.get("claims") or {}).get(INSTANCE_OF, []))


def states_human(instance_of: Any) -> bool:
    """Whether one of these P31 statements has the main-snak value Q5."""
    for statement in instance_of:
        datavalue = statement.get("mainsnak", {}).get("datavalue", {})
        if _entity_id(datavalue.get("value")) == HUMAN_QID:
            return True
    return False


def sitelink_count(entity: dict) -> int | None:
    """Number of sitelinks; None when the entity carries no sitelinks key (unknown, not zero)."""
    sitelinks = entity.get("sitelinks")
    return len(sitelinks) if isinstance(sitelinks, dict) else None


def _entity_id(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("id"), str):
        return value["id"]
    if value.get("numeric-id") is not None and value.get("entity-type", "item") == "item":
        return f"Q{value['numeric-id']}"
    return None


def format_time(value: dict) -> tuple[str, str] | None:
    """Normalize a Wikidata time value to (sortable value, English label) at its precision."""
    match = _TIME.match(str(value.get("time", "")))
    if not match:
        return None
    sign, year_text, month_text, day_text = match.groups()
    year, month, day = int(year_text), int(month_text), int(day_text)
    precision = int(value.get("precision", 11))
    era = " BC" if sign == "-" else ""
    prefix = "-" if sign == "-" else ""
    if precision >= 11 and month and day:
        return f"{prefix}{year:04d}-{month:02d}-{day:02d}", f"{day} {_MONTHS[month - 1]} {year}{era}"
    if precision == 10 and month:
        return f"{prefix}{year:04d}-{month:02d}", f"{_MONTHS[month - 1]} {year}{era}"
    if precision >= 9:
        return f"{prefix}{year:04d}", f"{year}{era}"
    if precision == 8:
        decade = year // 10 * 10
        return f"{prefix}{decade:04d}s", f"{decade}s{era}"
    century = (year - 1) // 100 + 1
    suffix = "th" if 10 <= century % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(century % 10, "th")
    return f"{prefix}C{century}", f"{century}{suffix} century{era}"


def normalize_amount(amount: str) -> str:
    """An amount as the extract writes it: no leading '+', no trailing zeros ("+1.850" -> "1.85")."""
    amount = amount.lstrip("+")
    if "." in amount:
        amount = amount.rstrip("0").rstrip(".")
    return amount


def parse_claims(entity: dict, datatypes: tuple[str, ...], stats: ParseStats) -> list[dict]:
    """Claims of the selected datatypes, one row per (property, value); labels filled later.

    Deprecated statements and 'somevalue'/'novalue' snaks are not facts about the person.
    """
    rows: list[dict] = []
    for prop, statements in (entity.get("claims") or {}).items():
        seen: set[str] = set()
        for statement in statements:
            snak = statement.get("mainsnak", {})
            if statement.get("rank") == "deprecated" or snak.get("snaktype", "value") != "value":
                continue
            datavalue = snak.get("datavalue") or {}
            datatype = snak.get("datatype") or _DATAVALUE_TO_DATATYPE.get(datavalue.get("type"))
            if datatype not in datatypes:
                stats.claims_other_datatype += 1
                continue
            raw = datavalue.get("value")
            row = {"qid": entity["id"], "property": prop, "datatype": datatype}
            if datatype == "wikibase-item":
                value = _entity_id(raw)
                row.update(value=value, value_label=None)
            elif datatype == "string":
                value = raw if isinstance(raw, str) else None
                row.update(value=value, value_label=value)
            elif datatype == "quantity":
                raw = raw if isinstance(raw, dict) else {}
                value = normalize_amount(str(raw.get("amount", ""))) or None
                unit = str(raw.get("unit", "")).rsplit("/", 1)[-1]  # "1" means unitless
                row.update(value=value, value_label=value, unit=unit if QID_PATTERN.match(unit) else None)
            else:  # time
                formatted = format_time(raw) if isinstance(raw, dict) else None
                value, label = formatted if formatted else (None, None)
                row.update(value=value, value_label=label)
            if not row["value"] or row["value"] in seen:
                continue
            seen.add(row["value"])
            rows.append(row)
    return rows
