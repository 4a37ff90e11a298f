"""The reference tables a request needs: the extract, property table, templates, counterfactuals.

The platform's own materializations (Parquet under the instance's storage) when they exist;
otherwise the bundled sample, read and derived with the data assets' defaults, so that a request
can be taken in — and a name resolved — on a fresh instance before anything was materialized.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from wikimem_platform.reference import bundled
from wikimem_platform.reference.properties import build_property_table, DEFAULT_MIN_HUMANS
from wikimem_platform.storage import StoredResults
from wikimem_platform.wikidata.extract import load_property_metadata, read_dump


@dataclass
class IntakeReference:
    """What intake validates against: the humans, the property metadata, the audited properties."""

    humans: pd.DataFrame
    metadata: pd.DataFrame
    covered: list[str]
    source: str  # "stored extract" | "bundled sample"
    claims: pd.DataFrame | None = None  # to tell people of one name apart (birth year, occupation, country)


def property_metadata() -> pd.DataFrame:
    return load_property_metadata(bundled.SAMPLE_PROPERTIES)


def intake_reference(stored: StoredResults) -> IntakeReference:
    """The stored extract if the platform materialized one, else the bundled sample."""
    metadata = property_metadata()
    humans, table = stored.table("humans"), stored.table("property_table")
    if humans is not None and table is not None:
        return IntakeReference(humans, metadata, list(table["property"]), "stored extract", stored.table("claims"))
    extract = read_dump(bundled.SAMPLE_DUMP)
    table = build_property_table(extract.claims, metadata, min_humans=DEFAULT_MIN_HUMANS)
    return IntakeReference(extract.humans, metadata, list(table["property"]), "bundled sample", extract.claims)
