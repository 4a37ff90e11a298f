"""Streaming reader for the Wikidata JSON dump format.

The dump is one entity per line between a leading ``[`` and a trailing ``]``, each line ending
in a comma. The full dump is tens of GB, so nothing here holds more than the kept humans in
memory: pass 1 keeps humans and the value ids they need, pass 2 (only if some value labels
were not seen in pass 1) resolves those ids to English labels.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

logger = logging.getLogger(__name__)

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
_MONTHS = (
    "January February March April May June July August September October November December"
).split()

HUMANS_COLUMNS = ["qid", "label", "description", "aliases", "sitelinks"]
CLAIMS_COLUMNS = ["qid", "property", "datatype", "value", "value_label"]


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
    malformed_examples: list[str] = field(default_factory=list)

    @property
    def malformed_share(self) -> float:
        return self.malformed / self.lines if self.lines else 0.0

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["malformed_share"] = self.malformed_share
        return out


@dataclass
class WikidataExtract:
    """Humans and their claims with labelled values."""

    humans: pd.DataFrame
    claims: pd.DataFrame
    stats: ParseStats


def open_dump(path: str | Path) -> TextIO:
    """Open a dump as UTF-8 text, decompressing .gz / .bz2 on the fly (streaming)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Wikidata dump not found: {path}")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    if path.suffix == ".bz2":
        return bz2.open(path, "rt", encoding="utf-8")
    return io.open(path, "rt", encoding="utf-8")


def iter_dump_entities(
    path: str | Path,
    stats: ParseStats | None = None,
    progress: Callable[[ParseStats], None] | None = None,
    progress_every: int = 100_000,
) -> Iterator[dict]:
    """Yield each entity of a dump; count (and skip) lines that are not one JSON entity."""
    stats = stats if stats is not None else ParseStats()
    with open_dump(path) as handle:
        for line_number, raw in enumerate(handle, start=1):
            line = raw.strip()
            if line in ("", "[", "]"):
                continue
            stats.lines += 1
            if line.endswith(","):
                line = line[:-1]
            try:
                entity = json.loads(line)
                if not isinstance(entity, dict) or not isinstance(entity.get("id"), str):
                    raise ValueError("not an entity object with an 'id'")
            except ValueError as err:  # json.JSONDecodeError is a ValueError
                stats.malformed += 1
                if len(stats.malformed_examples) < 5:
                    stats.malformed_examples.append(f"line {line_number}: {str(err)[:120]}")
                continue
            stats.entities += 1
            if progress is not None and stats.lines % progress_every == 0:
                progress(stats)
            yield entity


def english_label(entity: dict) -> str | None:
    value = (entity.get("labels") or {}).get("en", {})
    label = value.get("value") if isinstance(value, dict) else None
    return label.strip() if isinstance(label, str) and label.strip() else None


def english_aliases(entity: dict) -> list[str]:
    aliases = (entity.get("aliases") or {}).get("en", [])
    return [a["value"] for a in aliases if isinstance(a, dict) and a.get("value")]


def english_description(entity: dict) -> str | None:
    value = (entity.get("descriptions") or {}).get("en", {})
    return value.get("value") if isinstance(value, dict) else None


def is_human(entity: dict) -> bool:
    for statement in (entity.get("claims") or {}).get(INSTANCE_OF, []):
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
    match = re.match(r"^([+-])(\d+)-(\d\d)-(\d\d)T", str(value.get("time", "")))
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


def _normalize_amount(amount: str) -> str:
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
                value = _normalize_amount(str(raw.get("amount", ""))) or None
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


def read_dump(
    path: str | Path,
    datatypes: tuple[str, ...] = ALLOWED_DATATYPES,
    max_malformed_share: float = 0.01,
    progress: Callable[[ParseStats], None] | None = None,
    progress_every: int = 100_000,
) -> WikidataExtract:
    """Extract humans (P31 = Q5) with English label, aliases, sitelinks and labelled claims.

    Raises MalformedDumpError if more than ``max_malformed_share`` of the lines are malformed:
    a few broken lines are normal in a multi-GB download, many mean the wrong file.
    """
    stats = ParseStats()
    humans: list[dict] = []
    claim_rows: list[dict] = []
    labels: dict[str, str] = {}

    for entity in iter_dump_entities(path, stats, progress, progress_every):
        entity_id = entity["id"]
        label = english_label(entity)
        if label is not None:
            labels[entity_id] = label
        if not is_human(entity):
            continue
        if label is None:
            stats.humans_without_english_label += 1
            continue
        stats.humans += 1
        humans.append(
            {
                "qid": entity_id,
                "label": label,
                "description": english_description(entity),
                "aliases": english_aliases(entity),
                "sitelinks": sitelink_count(entity),
            }
        )
        claim_rows.extend(parse_claims(entity, datatypes, stats))

    _check_malformed(stats, max_malformed_share, path)

    needed = {r["value"] for r in claim_rows if r["datatype"] == "wikibase-item"}
    needed |= {r["unit"] for r in claim_rows if r.get("unit")}
    missing = needed - labels.keys()
    if missing:
        # Values that appear before the human who cites them were kept in pass 1; a second
        # streaming pass picks up the rest without holding every label of the dump.
        stats.label_passes = 2
        for entity in iter_dump_entities(path, ParseStats()):
            if entity["id"] in missing:
                label = english_label(entity)
                if label is not None:
                    labels[entity["id"]] = label

    claims = _label_claims(claim_rows, labels, stats)
    logger.info(
        "Read %s: %d lines, %d humans, %d claims, %d malformed (%.3f%%)",
        path, stats.lines, stats.humans, stats.claims_kept, stats.malformed, 100 * stats.malformed_share,
    )
    humans_frame = pd.DataFrame(humans, columns=HUMANS_COLUMNS)
    humans_frame["sitelinks"] = humans_frame["sitelinks"].astype("Int64")
    humans_frame = humans_frame.drop_duplicates("qid").sort_values("qid", key=_qid_sort_key, ignore_index=True)
    return WikidataExtract(
        humans=humans_frame,
        claims=claims,
        stats=stats,
    )


def _check_malformed(stats: ParseStats, max_malformed_share: float, path: str | Path) -> None:
    if stats.lines and stats.malformed_share > max_malformed_share:
        raise MalformedDumpError(
            f"{stats.malformed} of {stats.lines} lines of {path} are malformed "
            f"({100 * stats.malformed_share:.2f}% > allowed {100 * max_malformed_share:.2f}%). "
            f"First errors: {'; '.join(stats.malformed_examples)}"
        )


def _label_claims(rows: list[dict], labels: dict[str, str], stats: ParseStats) -> pd.DataFrame:
    kept = []
    for row in rows:
        if row["datatype"] == "wikibase-item":
            row["value_label"] = labels.get(row["value"])
        elif row.get("unit") and row["unit"] in labels:
            row["value_label"] = f"{row['value']} {labels[row['unit']]}"
        if not row["value_label"]:
            stats.claims_unresolved_value += 1
            continue
        kept.append({c: row[c] for c in CLAIMS_COLUMNS})
    stats.claims_kept = len(kept)
    claims = pd.DataFrame(kept, columns=CLAIMS_COLUMNS)
    return claims.sort_values(["qid", "property", "value"], key=_qid_sort_key, ignore_index=True)


def _qid_sort_key(column: pd.Series) -> pd.Series:
    """Sort Q/P ids numerically (Q42 before Q100) and other columns as they are."""
    if column.name in ("qid", "property"):
        return column.str[1:].astype("int64")
    return column


def load_property_metadata(path: str | Path) -> pd.DataFrame:
    """Property metadata (id, label, description, aliases, datatype) from a JSON-lines file."""
    with open_dump(path) as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    frame = pd.DataFrame(records)
    frame = frame.rename(columns={"id": "property"})
    frame["aliases"] = frame["aliases"].apply(lambda a: list(a) if isinstance(a, list) else [])
    return frame[["property", "label", "description", "aliases", "datatype"] + (["usage_count"] if "usage_count" in frame else [])]
