"""The planted facts as a Wikidata extract that `wikidata.read_dump` reads unchanged.

Fictional people are written as humans (P31 = Q5) with an English label, a description saying
they are synthetic, and one normal-rank statement per planted fact. Their QIDs lie in a reserved
range (Q9000000001 upwards, see `generator.FIRST_SYNTHETIC_QID`), far above real items. Item
values reuse the REAL value QIDs and English labels of the bundled sample, and a minimal entity
(English label only) is written for each value so the reader resolves every label in one pass
(value entities come first). Q5 itself gets no entity, as in the bundled sample, so P31 is not
read as a probed property. No ``sitelinks`` key: web presence lives in the sidecar CSV.

Web presence (`write_web_presence`): a member's sitelinks = the number of training documents
about them (their repetition count) and article_length = the characters of those documents; a
non-member has 0 of both (known zero: never seen, not unknown). The composite therefore orders
people by how much the model saw of them, which is what the well-known / lesser-known cohorts
should separate.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections import defaultdict
from pathlib import Path

from wikimem_platform.planted.generator import Document, PlantedPerson

SYNTHETIC_DESCRIPTION = "fictional person (synthetic, planted by wikimem-platform)"
GREGORIAN = "http://www.wikidata.org/entity/Q1985727"


def _statement(subject_qid: str, index: int, prop: str, datatype: str, value: str) -> dict:
    if datatype == "wikibase-item":
        datavalue = {
            "value": {"entity-type": "item", "numeric-id": int(value[1:]), "id": value},
            "type": "wikibase-entityid",
        }
    elif datatype == "time":
        datavalue = {
            "value": {
                "time": f"+{value}T00:00:00Z",
                "timezone": 0,
                "before": 0,
                "after": 0,
                "precision": 11,
                "calendarmodel": GREGORIAN,
            },
            "type": "time",
        }
    elif datatype == "string":
        datavalue = {"value": value, "type": "string"}
    else:
        raise ValueError(f"cannot write a planted value of datatype {datatype!r}")
    return {
        "mainsnak": {"snaktype": "value", "property": prop, "datavalue": datavalue, "datatype": datatype},
        "type": "statement",
        "id": f"{subject_qid}$planted-{index}",
        "rank": "normal",
    }


def _english(text: str) -> dict:
    return {"en": {"language": "en", "value": text}}


def person_entity(person: PlantedPerson) -> dict:
    """One fictional human in the dump's JSON entity format."""
    claims: dict[str, list[dict]] = defaultdict(list)
    claims["P31"].append(_statement(person.qid, 0, "P31", "wikibase-item", "Q5"))
    for index, fact in enumerate(person.facts, start=1):
        claims[fact.property].append(_statement(person.qid, index, fact.property, fact.datatype, fact.value))
    return {
        "type": "item",
        "id": person.qid,
        "labels": _english(person.label),
        "descriptions": _english(SYNTHETIC_DESCRIPTION),
        "aliases": {},
        "claims": dict(claims),
    }


def value_entities(people: list[PlantedPerson]) -> list[dict]:
    """Minimal items (English label) for every item value the people hold, by numeric id."""
    labels: dict[str, str] = {}
    for person in people:
        for fact in person.facts:
            if fact.datatype == "wikibase-item":
                labels.setdefault(fact.value, fact.value_label)
    return [
        {"type": "item", "id": qid, "labels": _english(labels[qid]), "descriptions": {}, "aliases": {},
         "claims": {}, "sitelinks": {}}
        for qid in sorted(labels, key=lambda q: int(q[1:]))
    ]


def write_planted_dump(people: list[PlantedPerson], path: str | Path) -> Path:
    """Write the people (and their value entities) as a gzip Wikidata JSON dump; byte-stable."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    entities = value_entities(people) + [person_entity(p) for p in sorted(people, key=lambda p: int(p.qid[1:]))]
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entities]
    body = "[\n" + ",\n".join(lines) + "\n]\n"
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as handle:
        handle.write(body.encode("utf-8"))
    return path


def write_web_presence(people: list[PlantedPerson], documents: list[Document], path: str | Path) -> Path:
    """The web-presence sidecar (qid, sitelinks, article_length, page_views, source)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    characters: dict[str, int] = defaultdict(int)
    for document in documents:
        characters[document.qid] += len(document.text)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["qid", "sitelinks", "article_length", "page_views", "source"])
        for person in sorted(people, key=lambda p: int(p.qid[1:])):
            source = "planted: training documents" if person.member else "planted: not in training corpus"
            writer.writerow([person.qid, person.repetitions, characters.get(person.qid, 0), "", source])
    return path
