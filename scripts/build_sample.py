"""Build the project's compact bundled Wikidata sample (wikimem_platform/data/) from the staged source files.

Why: the full Wikidata dump is tens of GB; the platform, its tests and its demo need a small,
real, reproducible sample in the *dump format itself*, so that the same reader runs on both.
The sources (../shared/data/sources, see its PROVENANCE.md) carry Wikidata facts in several
shapes; this script converts them into one dump-format file plus sidecars, deterministically
(same input -> byte-identical output: sorted entities, gzip mtime=0).

    .venv/bin/python scripts/build_sample.py --sources ../shared/data/sources --out wikimem_platform/data \
        [--fixtures tests/data]
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import re
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCES = REPO_ROOT / ".." / "shared" / "data" / "sources"

WILA_FILES = ("Arabic", "Chinese", "Italian")
WILA_ITEM_PROPERTIES = ("P19", "P20", "P27", "P106")
WILA_TIME_PROPERTIES = ("P569", "P570")
GREGORIAN = "http://www.wikidata.org/entity/Q1985727"
ENTITY_URI = re.compile(r"^http://www\.wikidata\.org/entity/(Q\d+)$")
WILA_DATE = re.compile(r"^([+-]?)(\d{1,})-(\d\d)-(\d\d)T00:00:00Z$")
QID = re.compile(r"^Q\d+$")
N_NONHUMAN = 10
KEPT_PROPERTY_DATATYPES = ("wikibase-item", "string", "quantity", "time")
# BEAR's "person" relations also hold for bands, albums, societies and teams (record label,
# member of, instrument, sport, field of work). A BEAR subject is written as a human (P31 = Q5)
# only when it has at least one of these relations, which Wikidata uses for people.
PERSON_EVIDENCE_PROPERTIES = frozenset(
    {"P19", "P20", "P26", "P3373", "P1412", "P103", "P106", "P69", "P509", "P39", "P413", "P27", "P108"}
)
API_ONLY_KEYS = ("pageid", "ns", "title")  # not in dump lines; lastrevid/modified are kept
skipped_examples: list[str] = []  # source values that are neither a QID URI nor a date

# wvanderp/wikidata-properties spells datatypes in CamelCase; the dump uses these names.
DATATYPE_NAMES = {
    "WikibaseItem": "wikibase-item",
    "WikibaseProperty": "wikibase-property",
    "WikibaseLexeme": "wikibase-lexeme",
    "WikibaseSense": "wikibase-sense",
    "WikibaseForm": "wikibase-form",
    "String": "string",
    "ExternalId": "external-id",
    "Quantity": "quantity",
    "Time": "time",
    "Url": "url",
    "CommonsMedia": "commonsMedia",
    "Monolingualtext": "monolingualtext",
    "GlobeCoordinate": "globe-coordinate",
    "Math": "math",
    "TabularData": "tabular-data",
    "GeoShape": "geo-shape",
    "MusicalNotation": "musical-notation",
}

SOURCE_TABLE = {
    "wila": (
        "duo0301/WILA-popQA @ bcaab00 : data_collection/data/dataset_v2/entities_data_complete/"
        "{Arabic,Chinese,Italian}.json",
        "no licence stated (facts are Wikidata's, CC0)",
    ),
    "bear": (
        "lm-pub-quiz/BEAR @ 3818fdc : BEAR-big/P*.jsonl (18 person relations)",
        "no licence file; the lm-pub-quiz library is MIT (facts are Wikidata's, CC0)",
    ),
    "q42": ("kensho-technologies/qwikidata @ 20dee5b : tests/data/wd_Q42.json", "Apache-2.0"),
    "kahn": (
        "Wikidata/Wikidata-Toolkit @ 149d33fa : "
        "wdtk-wikibaseapi/src/test/resources/wbgetentites-Oliver-Kahn.json",
        "Apache-2.0",
    ),
    "tapioca": (
        "wetneb/opentapioca @ HEAD (file 2019-02) : opentapioca/tests/data/sample_wikidata_items.json.bz2",
        "Apache-2.0",
    ),
    "properties": (
        "wvanderp/wikidata-properties @ be05170c (2022-01-16) : data/properties.json",
        "MIT",
    ),
}


def qid_number(qid: str) -> int:
    return int(qid[1:])


def item_value(qid: str) -> dict:
    return {"entity-type": "item", "numeric-id": qid_number(qid), "id": qid}


def item_statement(subject: str, prop: str, value_qid: str, n: int) -> dict:
    return {
        "mainsnak": {
            "snaktype": "value",
            "property": prop,
            "datavalue": {"value": item_value(value_qid), "type": "wikibase-entityid"},
            "datatype": "wikibase-item",
        },
        "type": "statement",
        "rank": "normal",
        "id": f"{subject}$wikimem-{n}",
    }


def time_statement(subject: str, prop: str, time_value: dict, n: int) -> dict:
    return {
        "mainsnak": {
            "snaktype": "value",
            "property": prop,
            "datavalue": {"value": time_value, "type": "time"},
            "datatype": "time",
        },
        "type": "statement",
        "rank": "normal",
        "id": f"{subject}$wikimem-{n}",
    }


def parse_wila_date(text: str) -> dict | None:
    """WILA dates are SPARQL xsd:dateTime strings without precision; a -01-01 day is read as
    year precision (9) because that is how Wikidata exports year-only dates; else day (11)."""
    match = WILA_DATE.match(text)
    if not match:
        return None
    sign, year, month, day = match.groups()
    precision = 9 if (month, day) == ("01", "01") else 11
    return {
        "time": f"{sign or '+'}{year}-{month}-{day}T00:00:00Z",
        "timezone": 0,
        "before": 0,
        "after": 0,
        "precision": precision,
        "calendarmodel": GREGORIAN,
    }


def lang_labels(labels: dict[str, str]) -> dict:
    return {lang: {"language": lang, "value": value} for lang, value in sorted(labels.items())}


class LabelBook:
    """Known labels of value QIDs, first source wins per language (WILA, then BEAR, then dump files)."""

    def __init__(self) -> None:
        self.labels: dict[str, dict[str, str]] = defaultdict(dict)
        self.conflicting: set[tuple[str, str]] = set()

    def add(self, qid: str, lang: str, value: str) -> None:
        if not value:
            return
        known = self.labels[qid].get(lang)
        if known is None:
            self.labels[qid][lang] = value
        elif known != value:
            self.conflicting.add((qid, lang))

    @property
    def conflicts(self) -> int:
        """Distinct (QID, language) pairs where a later source gave a different label."""
        return len(self.conflicting)

    def english(self, qid: str) -> str | None:
        return self.labels.get(qid, {}).get("en")


def load_wila(sources: Path, stats: Counter, book: LabelBook) -> dict[str, dict]:
    """WILA humans by QID (the three files overlap; duplicates are identical, first kept)."""
    humans: dict[str, dict] = {}
    for name in WILA_FILES:
        data = json.loads((sources / "c_triples" / "wila_popqa_entities" / f"{name}.json").read_text("utf-8"))
        stats["wila_records"] += len(data)
        for qid, record in data.items():
            if qid in humans:
                stats["wila_duplicate_records"] += 1
                if humans[qid]["raw"] != record:
                    stats["wila_duplicate_conflicts"] += 1
                continue
            claims: dict[str, list] = {}
            for prop in WILA_ITEM_PROPERTIES:
                values = []
                for value in record.get(prop, {}).get("values", []):
                    match = ENTITY_URI.match(value["qid"])
                    if not match:
                        stats[f"skipped_wila_{prop}"] += 1
                        skipped_examples.append(f"{qid} {prop} {value['qid']!r}")
                        continue
                    values.append(("item", match.group(1)))
                    for lang, label in value.get("labels", {}).items():
                        book.add(match.group(1), lang, label)
                claims[prop] = values
            for prop in WILA_TIME_PROPERTIES:
                values = []
                for value in record.get(prop, {}).get("values", []):
                    time_value = parse_wila_date(value["qid"])
                    if time_value is None:
                        stats[f"skipped_wila_{prop}"] += 1
                        skipped_examples.append(f"{qid} {prop} {value['qid']!r}")
                        continue
                    if time_value["precision"] == 9:
                        stats["time_precision_inferred_year"] += 1
                    else:
                        stats["time_precision_day"] += 1
                    values.append(("time", time_value))
                claims[prop] = values
            humans[qid] = {"raw": record, "labels": record["labels"], "sitelinks": record["sitelinks"], "claims": claims}
    return humans


def load_bear(sources: Path, stats: Counter, book: LabelBook) -> dict[str, dict]:
    """BEAR subjects grouped: one entry per subject with all (property, object) facts."""
    subjects: dict[str, dict] = {}
    for path in sorted((sources / "c_triples" / "bear_big_person").glob("P*.jsonl")):
        prop = path.stem
        for line in path.read_text("utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            stats["bear_lines"] += 1
            if not (QID.match(row["sub_id"]) and QID.match(row["obj_id"])):
                stats["skipped_bear_line"] += 1
                skipped_examples.append(f"BEAR {prop} {row['sub_id']} {row['obj_id']}")
                continue
            subject = subjects.setdefault(
                row["sub_id"], {"label": row["sub_label"], "aliases": list(row["sub_aliases"]), "claims": defaultdict(list)}
            )
            if subject["label"] != row["sub_label"]:
                stats["bear_inconsistent_subject_label"] += 1
            for alias in row["sub_aliases"]:
                if alias not in subject["aliases"]:
                    subject["aliases"].append(alias)
            if row["obj_id"] not in subject["claims"][prop]:
                subject["claims"][prop].append(row["obj_id"])
            book.add(row["obj_id"], "en", row["obj_label"])
    return subjects


def build_human(qid: str, wila: dict | None, bear: dict | None, stats: Counter) -> dict:
    """One dump-format human from WILA and/or BEAR facts (merged, duplicate values dropped)."""
    labels = lang_labels(wila["labels"]) if wila else {"en": {"language": "en", "value": bear["label"]}}
    aliases: list[str] = []
    if bear:
        english = labels.get("en", {}).get("value")
        if bear["label"] != english:
            # The BEAR label is an English name Wikidata gave the same person: keep it as alias.
            aliases.append(bear["label"])
            stats["bear_label_kept_as_alias"] += 1
        aliases += [a for a in bear["aliases"] if a != english and a not in aliases]
    facts: dict[str, list] = {"P31": [("item", "Q5")]}
    if wila:
        for prop, values in wila["claims"].items():
            facts.setdefault(prop, []).extend(values)
    if bear:
        for prop, objects in bear["claims"].items():
            for obj in objects:
                if ("item", obj) in facts.get(prop, []):
                    stats["bear_fact_already_in_wila"] += 1
                    continue
                if wila and prop in wila["claims"]:
                    stats["bear_fact_added_to_wila_property"] += 1
                facts.setdefault(prop, []).append(("item", obj))
    claims: dict[str, list] = {}
    n = 0
    for prop in sorted(facts, key=lambda p: int(p[1:])):
        statements = []
        seen = []
        for kind, value in facts[prop]:
            if (kind, value) in seen:
                stats["duplicate_value_dropped"] += 1
                continue
            seen.append((kind, value))
            n += 1
            if kind == "item":
                statements.append(item_statement(qid, prop, value, n))
            else:
                statements.append(time_statement(qid, prop, value, n))
        if statements:
            claims[prop] = statements
    return {
        "type": "item",
        "id": qid,
        "labels": labels,
        "descriptions": {},
        "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
        "claims": claims,
        # no "sitelinks" key: the count (WILA) lives in web_presence.csv; {} would read as zero
    }


def add_entity_ids(node):
    """Old wbgetentities format has entity values with numeric-id only; add the dump's "id"."""
    if isinstance(node, dict):
        if node.get("entity-type") == "item" and "numeric-id" in node and "id" not in node:
            node["id"] = f"Q{node['numeric-id']}"
            add_entity_ids.count += 1
        for value in node.values():
            add_entity_ids(value)
    elif isinstance(node, list):
        for value in node:
            add_entity_ids(value)
    return node


add_entity_ids.count = 0


def mainsnak_item_values(entity: dict) -> list[tuple[str, str]]:
    """(property, value QID) of every item-valued main snak."""
    out = []
    for prop, statements in entity.get("claims", {}).items():
        for statement in statements:
            snak = statement.get("mainsnak", {})
            value = (snak.get("datavalue") or {}).get("value")
            if snak.get("snaktype") == "value" and isinstance(value, dict) and value.get("entity-type") == "item":
                out.append((prop, value.get("id") or f"Q{value['numeric-id']}"))
    return out


def used_properties(entity: dict) -> set[str]:
    """Properties of main snaks, qualifiers and references (all need metadata to be read)."""
    found: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("property"), str):
                found.add(node["property"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    found |= set(entity.get("claims", {}))
    walk(entity.get("claims", {}))
    return found


def read_tapioca_lines(sources: Path) -> list[str]:
    path = sources / "a_entities" / "opentapioca_sample_wikidata_items_100_nonhuman.json.bz2"
    with bz2.open(path, "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n").rstrip(",") for line in handle if line.strip() not in ("", "[", "]")]


def dumps(entity: dict) -> str:
    return json.dumps(entity, ensure_ascii=False, separators=(",", ":"))


def write_gzip_lines(path: Path, lines: list[str]) -> None:
    """gzip with mtime=0 and no file name in the header: byte-reproducible output."""
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write("".join(lines).encode("utf-8"))


def write_dump(path: Path, entities: list[dict]) -> None:
    lines = ["[\n"]
    for i, entity in enumerate(entities):
        lines.append(dumps(entity) + ("," if i < len(entities) - 1 else "") + "\n")
    lines.append("]\n")
    write_gzip_lines(path, lines)


def check_dump(path: Path) -> int:
    """Independent read-back: [ first, ] last, every line between is one JSON object."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    assert lines[-1] == "", "file must end with a newline"
    lines = lines[:-1]
    assert lines[0] == "[" and lines[-1] == "]", "dump must start with [ and end with ]"
    body = lines[1:-1]
    ids = []
    for i, line in enumerate(body):
        is_last = i == len(body) - 1
        assert line.endswith(",") != is_last, f"comma rule broken at entity line {i + 1}"
        ids.append(json.loads(line[:-1] if line.endswith(",") else line)["id"])
    assert len(ids) == len(set(ids)), "duplicate entity ids"
    return len(ids)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "wikimem_platform" / "data")
    parser.add_argument("--fixtures", type=Path, default=None, help="also write parser fixtures here (tests/data)")
    args = parser.parse_args(argv)
    sources: Path = args.sources
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    stats: Counter = Counter()
    book = LabelBook()

    # --- humans from WILA and BEAR --------------------------------------------------------
    wila = load_wila(sources, stats, book)
    bear_all = load_bear(sources, stats, book)
    bear = {q: b for q, b in bear_all.items() if q in wila or PERSON_EVIDENCE_PROPERTIES & set(b["claims"])}
    stats["bear_subjects_not_evidenced_as_human"] = len(bear_all) - len(bear)
    humans: dict[str, dict] = {}
    for qid in sorted(set(wila) | set(bear), key=qid_number):
        humans[qid] = build_human(qid, wila.get(qid), bear.get(qid), stats)
    stats["humans_wila"] = len(wila)
    stats["humans_bear"] = len(bear)
    stats["humans_wila_and_bear"] = len(set(wila) & set(bear))

    # --- real dump-format entities --------------------------------------------------------
    q42 = json.loads((sources / "a_entities" / "qwikidata_wd_Q42.json").read_text("utf-8"))
    for key in API_ONLY_KEYS:
        q42.pop(key, None)
    kahn_file = json.loads((sources / "a_entities" / "wdtk_wbgetentities_Oliver_Kahn.json").read_text("utf-8"))
    (kahn_id, kahn), = kahn_file["entities"].items()
    kahn = add_entity_ids(json.loads(json.dumps(kahn)))
    stats["kahn_entity_values_given_id"] = add_entity_ids.count
    real_humans = {q42["id"]: q42, kahn_id: kahn}
    for qid, entity in real_humans.items():
        assert qid not in humans, f"{qid} is already built from WILA/BEAR"
        humans[qid] = entity
        en = (entity.get("labels", {}).get("en") or {}).get("value")
        if en:
            book.add(qid, "en", en)

    # --- 10 smallest real non-human items (exercise the P31=Q5 filter) --------------------
    tapioca_lines = read_tapioca_lines(sources)
    tapioca = [(len(line.encode("utf-8")), i, line, json.loads(line)) for i, line in enumerate(tapioca_lines)]
    for _, _, _, entity in tapioca:
        for lang, label in entity.get("labels", {}).items():
            book.add(entity["id"], lang, label["value"])
    chosen = sorted(sorted(tapioca)[:N_NONHUMAN], key=lambda t: t[1])  # smallest, in source order
    nonhuman = {entity["id"]: entity for _, _, _, entity in chosen}
    assert not any(
        s["mainsnak"].get("datavalue", {}).get("value", {}).get("id") == "Q5"
        for e in nonhuman.values() for s in e["claims"].get("P31", [])
    ), "a chosen non-human item is a human"

    # --- value entities: every item value of a-d with a known English label -----------------
    value_qids: set[str] = set()
    for entity in humans.values():
        value_qids |= {v for _, v in mainsnak_item_values(entity)}
    values: dict[str, dict] = {}
    unlabeled_values: set[str] = set()
    for qid in sorted(value_qids, key=qid_number):
        if qid in humans or qid in nonhuman:
            continue
        if not book.english(qid):
            unlabeled_values.add(qid)
            continue
        values[qid] = {
            "type": "item",
            "id": qid,
            "labels": lang_labels(book.labels[qid]),
            "descriptions": {},
            "aliases": {},
            "claims": {},
        }

    def resolves(qid: str) -> bool:
        return bool(book.english(qid))

    real_resolution = {}
    for qid, entity in real_humans.items():
        pairs = mainsnak_item_values(entity)
        real_resolution[qid] = (sum(resolves(v) for _, v in pairs), len(pairs))
    q42_occupations = [
        (v, book.english(v)) for p, v in mainsnak_item_values(q42) if p == "P106"
    ]

    # --- dump --------------------------------------------------------------------------------
    ordered = (
        [humans[q] for q in sorted(humans, key=qid_number)]
        + [values[q] for q in sorted(values, key=qid_number)]
        + [nonhuman[q] for q in sorted(nonhuman, key=qid_number)]
    )
    dump_path = out / "wikidata_sample.json.gz"
    write_dump(dump_path, ordered)
    n_read_back = check_dump(dump_path)
    assert n_read_back == len(ordered)

    # --- per-property coverage of humans --------------------------------------------------
    humans_per_property: Counter = Counter()
    for entity in humans.values():
        for prop, statements in entity.get("claims", {}).items():
            if any(s.get("mainsnak", {}).get("snaktype") == "value" for s in statements):
                humans_per_property[prop] += 1

    # --- web presence sidecar -------------------------------------------------------------
    rows = [{"qid": q, "sitelinks": h["sitelinks"], "source": "WILA-popQA"} for q, h in wila.items()]
    rows += [{"qid": q, "sitelinks": len(e["sitelinks"]), "source": "dump entity"} for q, e in real_humans.items()]
    web = pd.DataFrame(rows)
    web["sitelinks"] = web["sitelinks"].astype("Int64")
    web["article_length"] = pd.array([pd.NA] * len(web), dtype="Int64")
    web["page_views"] = pd.array([pd.NA] * len(web), dtype="Int64")
    web = web[["qid", "sitelinks", "article_length", "page_views", "source"]]
    web = web.sort_values("qid", key=lambda c: c.str[1:].astype("int64"), ignore_index=True)
    web.to_csv(out / "web_presence.csv", index=False, lineterminator="\n")

    # --- property metadata --------------------------------------------------------------------
    prop_source = json.loads((sources / "b_properties" / "wvanderp_properties_2022-01-16.json").read_text("utf-8"))
    used: set[str] = set()
    for entity in ordered:
        used |= used_properties(entity)
    unknown_datatypes = sorted({p["dataType"] for p in prop_source} - set(DATATYPE_NAMES))
    assert not unknown_datatypes, f"unmapped datatypes: {unknown_datatypes}"
    prop_lines = []
    kept_ids = set()
    for record in sorted(prop_source, key=lambda r: int(r["id"][1:])):
        datatype = DATATYPE_NAMES[record["dataType"]]
        if datatype in KEPT_PROPERTY_DATATYPES or record["id"] in used:
            kept_ids.add(record["id"])
            prop_lines.append(
                dumps(
                    {
                        "id": record["id"],
                        "label": record["label"],
                        "description": record["description"],
                        "aliases": list(record["aliases"]),
                        "datatype": datatype,
                        "usage_count": record["count"],
                    }
                )
                + "\n"
            )
    properties_missing = sorted(used - kept_ids, key=lambda p: int(p[1:]))
    write_gzip_lines(out / "properties.jsonl.gz", prop_lines)
    prop_datatypes = Counter(json.loads(line)["datatype"] for line in prop_lines)

    # --- fixtures -----------------------------------------------------------------------------
    if args.fixtures:
        write_fixtures(sources, args.fixtures, [line for _, _, line, _ in chosen])

    # --- provenance and summary ---------------------------------------------------------------
    sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.name != "PROVENANCE.md"}
    summary = {
        "humans": len(humans),
        "humans_wila": len(wila),
        "humans_bear": len(bear),
        "humans_wila_and_bear": stats["humans_wila_and_bear"],
        "humans_bear_only": len(set(bear) - set(wila)),
        "humans_real_dump_entities": len(real_humans),
        "humans_with_web_presence": len(web),
        "value_entities": len(values),
        "value_qids_without_known_label": len(unlabeled_values),
        "nonhuman_items": len(nonhuman),
        "entities_in_dump": len(ordered),
        "properties_kept": len(prop_lines),
        "properties_used_missing_from_metadata": properties_missing,
        "label_conflicts_first_source_kept": book.conflicts,
        "english_label_conflicts": sorted(q for q, lang in book.conflicting if lang == "en"),
        "unlabeled_values": sorted(unlabeled_values, key=qid_number),
        "unlabeled_values_outside_real_entities": sorted(
            unlabeled_values - {v for e in real_humans.values() for _, v in mainsnak_item_values(e)}, key=qid_number
        ),
        "real_human_item_claims_resolved": {q: f"{a}/{b}" for q, (a, b) in real_resolution.items()},
        "q42_occupations": q42_occupations,
        "writer_status": (
            f"has a value entity labelled {book.english('Q36180')!r}" if "Q36180" in values else "has no value entity"
        ),
        "skipped_source_values": {k: v for k, v in stats.items() if k.startswith("skipped")},
        "skipped_examples": skipped_examples,
        "stats": {k: v for k, v in stats.items() if not k.startswith("skipped")},
    }
    person_props = {p: n for p, n in humans_per_property.items() if n >= 50}
    prop_labels = {r["id"]: r["label"] for r in prop_source}
    write_provenance(out, summary, humans_per_property, prop_datatypes, sizes, prop_labels)
    sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir())}

    print("== build_sample summary ==")
    for key in ("humans", "humans_wila", "humans_bear", "humans_wila_and_bear", "humans_bear_only",
                "humans_real_dump_entities", "humans_with_web_presence", "value_entities",
                "value_qids_without_known_label", "nonhuman_items", "entities_in_dump", "properties_kept"):
        print(f"{key:>36}: {summary[key]}")
    print(f"{'properties used but not in metadata':>36}: {properties_missing}")
    print(f"{'label conflicts (first source kept)':>36}: {book.conflicts}")
    print(f"{'skipped/malformed source values':>36}: {summary['skipped_source_values']} {skipped_examples}")
    print(f"{'inferred year precision (-01-01)':>36}: {stats['time_precision_inferred_year']}"
          f" (day precision: {stats['time_precision_day']})")
    for qid, (a, b) in real_resolution.items():
        print(f"{'item claims of ' + qid + ' with a label':>36}: {a}/{b}")
    print(f"{'Q42 occupations (P106)':>36}: {q42_occupations}")
    print(f"{'properties with >=50 humans':>36}: {len(person_props)}")
    for prop, n in sorted(humans_per_property.items(), key=lambda kv: (-kv[1], int(kv[0][1:]))):
        if n >= 2:
            print(f"{prop:>36}: {n} humans ({prop_labels.get(prop, '?')})")
    print(f"{'properties with exactly 1 human':>36}: {sum(1 for n in humans_per_property.values() if n == 1)}")
    for name, size in sizes.items():
        print(f"{name:>36}: {size:,} bytes")
    print(f"{'total':>36}: {sum(sizes.values()):,} bytes")
    print(f"read-back check: {n_read_back} entity lines parse, [ ... ] and comma rule hold")


def write_fixtures(sources: Path, fixtures: Path, tapioca_lines: list[str]) -> None:
    """Small real files for parser tests, copied byte for byte where possible."""
    fixtures.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sources / "a_entities" / "qwikidata_wd_Q42.json", fixtures / "Q42.json")
    shutil.copyfile(
        sources / "a_entities" / "wdtk_wbgetentities_Oliver_Kahn.json", fixtures / "oliver_kahn_wbgetentities.json"
    )
    body = ",\n".join(tapioca_lines)
    (fixtures / "opentapioca_10_nonhuman.json").write_text(f"[\n{body}\n]\n", encoding="utf-8")
    q42_src, q42_lic = SOURCE_TABLE["q42"]
    kahn_src, kahn_lic = SOURCE_TABLE["kahn"]
    tap_src, tap_lic = SOURCE_TABLE["tapioca"]
    ids = [json.loads(line)["id"] for line in tapioca_lines]
    (fixtures / "README.md").write_text(
        f"""# Parser test fixtures (real Wikidata entities)

Written by `scripts/build_sample.py --fixtures tests/data` from `../shared/data/sources/a_entities/`.
The facts are Wikidata's (CC0); the files are copied from these repositories' test data.

| file | source repo @ commit : path | licence | content |
|---|---|---|---|
| `Q42.json` | {q42_src} | {q42_lic} | the real Q42 (Douglas Adams) entity, one pretty-printed JSON object, byte-identical copy (API keys `pageid`/`ns`/`title` included; modified 2018-07-27) |
| `oliver_kahn_wbgetentities.json` | {kahn_src} | {kahn_lic} | a real `wbgetentities` API answer `{{"entities": {{"Q131261": ...}}, "success": 1}}` in the **old** format: item values carry `numeric-id` only (no `id`), statement ids partly lower-case (`q131261$...`), external ids typed `string`; byte-identical copy |
| `opentapioca_10_nonhuman.json` | {tap_src} | {tap_lic} | the 10 smallest of its 100 non-human items ({", ".join(ids)}), each source line unchanged, in dump-line format: `[`, one entity per line followed by `,` except the last, `]` (the source file also ends its last line with `,`; here the last has none, as in the real dump) |

None of the 10 opentapioca items has P31 = Q5: they exercise the human filter.
""",
        encoding="utf-8",
    )


def write_provenance(
    out: Path, summary: dict, humans_per_property: Counter, prop_datatypes: Counter, sizes: dict, prop_labels: dict
) -> None:
    s = summary["stats"]
    rows = "\n".join(
        f"| `{p}` | {prop_labels.get(p, '')} | {n:,} |"
        for p, n in sorted(humans_per_property.items(), key=lambda kv: (-kv[1], int(kv[0][1:])))
        if n >= 2
    )
    n_single = sum(1 for n in humans_per_property.values() if n == 1)
    n_ge_50 = sum(1 for n in humans_per_property.values() if n >= 50)
    src = {k: f"{a} — licence: {b}" for k, (a, b) in SOURCE_TABLE.items()}
    what = {
        "wikidata_sample.json.gz": "humans, value entities and non-human items in the Wikidata JSON dump format",
        "web_presence.csv": "sitelink counts of the humans whose web presence is known (sidecar)",
        "properties.jsonl.gz": "property metadata (label, description, aliases, datatype, usage count)",
    }
    size_rows = "\n".join(f"| `{name}` | {what.get(name, '')} | {size:,} |" for name, size in sizes.items())
    occupations = ", ".join(f"{q} = {label or '(no label in the sources)'}" for q, label in summary["q42_occupations"])
    outside = (
        "all of them are values of Q42/Q131261"
        if not summary["unlabeled_values_outside_real_entities"]
        else f"those not used by Q42/Q131261: {', '.join(summary['unlabeled_values_outside_real_entities'])}"
    )
    resolved = ", ".join(f"{q}: {r}" for q, r in summary["real_human_item_claims_resolved"].items())
    skipped = ", ".join(f"{k}: {v}" for k, v in summary["skipped_source_values"].items()) or "none"
    text = f"""# Provenance of the bundled sample (`wikimem_platform/data/`)

Every fact in these files is a **Wikidata fact (CC0)**. The repositories below only carried the
facts; their licences are recorded as the source PROVENANCE gives them
(`../shared/data/sources/PROVENANCE.md`). Nothing was downloaded: the files are derived by

    .venv/bin/python scripts/build_sample.py --sources ../shared/data/sources --out wikimem_platform/data --fixtures tests/data

which is deterministic (entities sorted, `json.dumps(ensure_ascii=False, separators=(",",":"))`,
gzip with `mtime=0` and no file name): re-running it gives byte-identical files.

## Files

| file | what | bytes |
|---|---|---|
{size_rows}

### `wikidata_sample.json.gz` — Wikidata JSON dump format

First line `[`, then one entity per line followed by `,` except the last, last line `]`.
{summary['entities_in_dump']:,} entities, in this order: {summary['humans']:,} humans (by numeric id), {summary['value_entities']:,} value
entities (by numeric id), {summary['nonhuman_items']} non-human items (by numeric id).

1. **WILA humans** ({summary['humans_wila']:,}, deduplicated by QID) — from {src['wila']}.
   The three files hold {s['wila_records']:,} records; {s['wila_duplicate_records']:,} are repeats of a QID
   (all identical to the first, {s.get('wila_duplicate_conflicts', 0)} conflicts). Converted to items with every given label
   (en, de, fr, ru, hi, zh, it, pl, ar), `descriptions: {{}}`, P31 = Q5 and real statements
   (`rank: normal`, id `<QID>$wikimem-<n>`) for P19, P20, P27, P106 (value URIs
   `http://www.wikidata.org/entity/Q…` stripped to `Q…`) and P569, P570 (time values).
   - **Inferred time precision**: WILA gives dates as bare `YYYY-MM-DDT00:00:00Z` strings without
     precision. A date on `-01-01` is written with precision 9 (year) — {s['time_precision_inferred_year']:,} values —
     and every other date with precision 11 (day) — {s['time_precision_day']:,} values. Both precisions are
     *inferred by this script*, not read from Wikidata; a real 1 January birthday is thus read as year only.
     Calendar model is Gregorian (Q1985727), as SPARQL exports it. Two BCE values (Q9333) are copied with
     their year as given (`-0579`, `-0499`); SPARQL's xsd:dateTime and the JSON format may differ by one
     year for BCE dates.
   - **Skipped source values** (not a QID URI and not a date; WILA blank-node hashes): {skipped} —
     {'; '.join(summary['skipped_examples']) or 'none'}.
   - No `sitelinks` key: WILA gives only the *number* of sitelinks, not the site keys; the sample never
     invents site keys, so the number lives in `web_presence.csv`. A missing `sitelinks` key means
     "not given" (the reader's unknown), an empty `{{}}` would mean "zero sitelinks".
2. **BEAR humans** ({summary['humans_bear']:,} subjects, {s['bear_lines']:,} lines, of which {summary['humans_wila_and_bear']} are also WILA
   humans and became one entity with them) — from {src['bear']}.
   All lines of a subject were grouped into one item: English label (`sub_label`), English aliases
   (`sub_aliases`), P31 = Q5 and one `wikibase-item` statement per (property, `obj_id`) for the 18
   properties. For subjects also in WILA, the WILA labels are used; where BEAR's English label differs
   ({s.get('bear_label_kept_as_alias', 0)} cases) it is kept as an English alias; BEAR facts are merged
   into the WILA statements ({s.get('bear_fact_already_in_wila', 0)} already present, {s.get('bear_fact_added_to_wila_property', 0)} added to a property WILA also has).
   BEAR-only humans are not in `web_presence.csv` (web presence unknown) and carry no `sitelinks` key.
   BEAR's relations also hold for bands, albums, societies and teams, so a BEAR-only subject is written
   as a human (P31 = Q5) only with at least one relation Wikidata uses for people
   ({', '.join(sorted(PERSON_EVIDENCE_PROPERTIES, key=lambda p: int(p[1:])))});
   {s['bear_subjects_not_evidenced_as_human']:,} subjects seen only in record label, member of, instrument,
   sport or field of work were left out (humanness not evidenced).
3. **Q42 (Douglas Adams)** — from {src['q42']}. The real entity as it is; only the API-only keys
   `pageid`, `ns`, `title` were removed (`lastrevid`, `modified` kept, as in the dump).
4. **Q131261 (Oliver Kahn)** — from {src['kahn']}: `entities.Q131261` of a `wbgetentities` answer.
   It uses the old format (item values carry `numeric-id` only): {s['kahn_entity_values_given_id']} item value objects
   (main snaks, qualifiers, references) were given `"id": "Q<numeric-id>"`. Nothing else was changed
   (its external identifiers keep their old datatype `string`; some statement ids are lower-case).
5. **Value entities** ({summary['value_entities']:,}) — minimal items (`labels` only; empty descriptions,
   aliases, claims, sitelinks) for every QID used as a main-snak value in 1–4 whose English label is
   known from the sources, so a reader can resolve values to labels: labels from WILA value labels
   (all 9 languages), then BEAR `obj_label` (en), then labels of the opentapioca items and of Q42/Q131261
   themselves (first source wins per language; {summary['label_conflicts_first_source_kept']} differing later labels ignored).
   No value entity is written for a QID that is a human entity above. {summary['value_qids_without_known_label']:,} value QIDs have
   no known label and get no entity; {outside}. Q5 (the P31 value of every human) is among them: no source
   gives its label, so a reader that drops unlabeled values drops the P31 = Q5 claims (harmless:
   P31 only selects humans).
   Item claims of the real entities whose value label is known: {resolved}.
   Q42's occupations (P106): {occupations}. (This 2018 revision of Q42 has no P106 = Q36180
   "writer"; Q36180 {summary['writer_status']}.)
6. **Non-human items** ({summary['nonhuman_items']}) — from {src['tapioca']}: the {summary['nonhuman_items']} smallest (fewest bytes) of its
   100 non-human items, content unchanged (re-serialized compactly). They exercise the P31 = Q5 filter.

### Humans per property (properties with values for ≥ 2 humans)

{n_ge_50} properties have values for ≥ 50 humans ({n_ge_50 - 1} person properties besides P31 = Q5); {n_single} more
properties have a value for exactly one human (Q42 or Q131261).

| property | label | humans with a value |
|---|---|---|
{rows}

### `web_presence.csv`

Columns `qid,sitelinks,article_length,page_views,source`; {summary['humans_with_web_presence']:,} humans.
- source `WILA-popQA`: WILA's `sitelinks` count (per the source PROVENANCE the number of Wikipedia
  language editions; given as a count only, so the dump carries no site keys for these humans).
- source `dump entity`: Q42 and Q131261, `len(entity["sitelinks"])` of the real entity. This counts
  every site, Wikiquote included (Q42: 107 sitelinks, 30 of them Wikiquote; Q131261: 64, 2 Wikiquote),
  so it may be a slightly larger measure than WILA's.
- `article_length`, `page_views`: empty = unknown (no source gives them).
BEAR-only humans are not listed: their web presence is unknown (never read as low).
Readers use an entity's own `sitelinks` dict when it is non-empty, else this sidecar, else unknown.

### `properties.jsonl.gz`

From {src['properties']}. One JSON object per line,
`{{"id","label","description","aliases","datatype","usage_count"}}`, sorted by numeric id;
`dataType` mapped to the dump's names (WikibaseItem→wikibase-item, ExternalId→external-id,
CommonsMedia→commonsMedia, …); `count` → `usage_count` (usage as of 2022-01-16).
{summary['properties_kept']:,} properties kept: every property of datatype wikibase-item, string, quantity or time,
plus every property used anywhere in the sample's claims (main snaks, qualifiers, references)
whatever its datatype. Kept by datatype: {", ".join(f"{k} {v}" for k, v in sorted(prop_datatypes.items()))}.
Properties used in the sample but absent from the 2022 list: {summary['properties_used_missing_from_metadata'] or 'none'}.
"""
    (out / "PROVENANCE.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
