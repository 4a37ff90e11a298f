"""Shared fixtures for the canary tests: models and templates built once per session.

Import them into tests/conftest.py with ``from tests.conftest_canaries import *  # noqa: F403``.
The heavy results are cached in this module, so a second import path costs nothing.
"""

from __future__ import annotations

import gzip
import json
import time
from functools import cache
from typing import NamedTuple
from pathlib import Path

import pandas as pd
import pytest

from wikimem_platform.canaries import build_template_tables, PropertyInfo
from wikimem_platform.canaries.encoders import load_encoder, load_nlp, SentenceEncoder
from wikimem_platform.reference import bundled

# The eight properties of the acceptance criteria.
ACCEPTANCE_PROPERTIES = ("P106", "P19", "P27", "P1412", "P21", "P108", "P26", "P69")
# Person properties of the sample (~25), for the speed figure.
SAMPLE_PERSON_PROPERTIES = (
    "P19 P20 P27 P106 P569 P570 P101 P103 P108 P1303 P1412 P26 P264 P3373 P39 P413 P463 P509 "
    "P641 P69 P21 P735 P734 P22 P25"
).split()
# Acceptance set plus what the table-builder tests need (dates, residence, a quantity).
TEMPLATE_PROPERTIES = (*ACCEPTANCE_PROPERTIES, "P20", "P569", "P570", "P551", "P1971", "P22")

# n_humans as the bundled sample's property table counts them (P21, P551, P1971, P22 lie below
# its threshold: small made-up counts keep them last).
SAMPLE_N_HUMANS = {
    "P106": 2064, "P27": 2045, "P19": 2044, "P20": 2040, "P569": 1455, "P570": 1454, "P1412": 600,
    "P108": 585, "P69": 576, "P26": 194, "P21": 40, "P551": 30, "P1971": 20, "P22": 10,
}

__all__ = [
    "canary_nlp",
    "canary_encoder",
    "canary_property_records",
    "canary_property_table",
    "canary_templates",
    "canary_dropped",
    "canary_person_build",
]


def properties_path() -> Path:
    """The bundled property metadata (data/properties.jsonl.gz at the repository root, if any)."""
    root_copy = Path(__file__).resolve().parents[1] / "data" / "properties.jsonl.gz"
    return bundled.SAMPLE_PROPERTIES if Path(bundled.SAMPLE_PROPERTIES).exists() else root_copy


@cache
def _records() -> dict[str, dict]:
    with gzip.open(properties_path(), "rt", encoding="utf-8") as handle:
        return {record["id"]: record for record in map(json.loads, handle)}


def property_table_for(ids, n_humans: dict[str, int] | None = None) -> pd.DataFrame:
    """A property_table frame for real property records (n_humans from usage_count by default)."""
    records = _records()
    rows = []
    for pid in ids:
        record = records[pid]
        rows.append(
            {
                "property": pid,
                "label": record["label"],
                "description": record.get("description") or "",
                "aliases": list(record.get("aliases") or []),
                "datatype": record["datatype"],
                "n_humans": (n_humans or {}).get(pid, record.get("usage_count", 0)),
            }
        )
    return pd.DataFrame(rows)


@cache
def _template_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    return build_template_tables(property_table_for(TEMPLATE_PROPERTIES), nlp=load_nlp(), encode=load_encoder())


def _templates() -> pd.DataFrame:
    return _template_tables()[0]


class PersonBuild(NamedTuple):
    templates: pd.DataFrame
    dropped: pd.DataFrame
    seconds: float
    encoder: SentenceEncoder  # holds every pool sentence's embedding: re-checks cost no encoding


@cache
def person_template_build() -> PersonBuild:
    """Templates and dropped candidates for the ~25 person properties, timed with an encoder that
    has embedded nothing yet (models already loaded): one build serves the speed and the
    meaning-filter tests."""
    table = property_table_for(SAMPLE_PERSON_PROPERTIES)
    fresh = SentenceEncoder(load_encoder().model)
    start = time.perf_counter()
    templates, dropped = build_template_tables(table, nlp=load_nlp(), encode=fresh)
    return PersonBuild(templates, dropped, time.perf_counter() - start, fresh)


@pytest.fixture(scope="session")
def canary_nlp():
    return load_nlp()


@pytest.fixture(scope="session")
def canary_encoder():
    return load_encoder()


@pytest.fixture(scope="session")
def canary_property_records() -> dict[str, PropertyInfo]:
    return {pid: PropertyInfo.from_record(record) for pid, record in _records().items()}


@pytest.fixture(scope="session")
def canary_property_table() -> pd.DataFrame:
    return property_table_for(TEMPLATE_PROPERTIES, n_humans=SAMPLE_N_HUMANS)


@pytest.fixture(scope="session")
def canary_templates(canary_nlp, canary_encoder) -> pd.DataFrame:
    """build_templates on the real records of TEMPLATE_PROPERTIES (built once per session)."""
    return _templates().copy()


@pytest.fixture(scope="session")
def canary_dropped(canary_nlp, canary_encoder) -> pd.DataFrame:
    """The meaning filter's dropped candidates of the same build as ``canary_templates``."""
    return _template_tables()[1].copy()


@pytest.fixture(scope="session")
def canary_person_build(canary_nlp, canary_encoder) -> PersonBuild:
    build = person_template_build()
    return build._replace(templates=build.templates.copy(), dropped=build.dropped.copy())
