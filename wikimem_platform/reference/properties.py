"""The property table: which person properties are worth probing a model for."""

from __future__ import annotations

import pandas as pd

from wikimem_platform.wikidata.extract import ALLOWED_DATATYPES, INSTANCE_OF

PROPERTY_TABLE_COLUMNS = ["property", "label", "description", "aliases", "datatype", "n_humans"]
# "instance of: human" holds for every subject by construction: not a personal fact.
DEFAULT_EXCLUDED = (INSTANCE_OF,)
# The paper uses 100 on the full dump; the bundled sample has ~190-1,450 humans per property.
DEFAULT_MIN_HUMANS = 50


def build_property_table(
    claims: pd.DataFrame,
    metadata: pd.DataFrame,
    min_humans: int = 100,
    datatypes: tuple[str, ...] = ALLOWED_DATATYPES,
    exclude: tuple[str, ...] = DEFAULT_EXCLUDED,
) -> pd.DataFrame:
    """Properties used on at least ``min_humans`` distinct humans, with label and aliases.

    ``metadata`` may hold several records per property (a metadata file and property entities
    met in the dump); the first one with a label wins. Properties without an English label are
    dropped: no template can be written for them.
    """
    usage = (
        claims[claims["datatype"].isin(datatypes) & ~claims["property"].isin(exclude)]
        .groupby(["property", "datatype"])["qid"]
        .nunique()
        .rename("n_humans")
        .reset_index()
    )
    usage = usage[usage["n_humans"] >= min_humans]
    meta = metadata.dropna(subset=["label"]).drop_duplicates("property")
    # Old entities type some external ids as "string": trust the property's declared datatype.
    meta = meta[meta["datatype"].isna() | meta["datatype"].isin(datatypes)]
    table = usage.merge(meta.drop(columns=["datatype"]), on="property", how="inner")
    table["aliases"] = table["aliases"].apply(lambda a: list(a) if a is not None and len(a) else [])
    table["description"] = table["description"].fillna("")
    table = table.sort_values(["n_humans", "property"], ascending=[False, True], ignore_index=True)
    return table[PROPERTY_TABLE_COLUMNS]


DUMP_SOURCE, SIDE_FILE_SOURCE = "dump", "side file"
"""Where a property's label, description, aliases and datatype came from (`merge_property_metadata`)."""


def merge_property_metadata(dump_properties: pd.DataFrame, side_file: pd.DataFrame) -> pd.DataFrame:
    """The dump's own property entities first, the side file (a metadata JSON-lines file) for the
    properties the dump has no English label for; column ``source`` says which. A full dump holds
    every property entity, the bundled sample none."""
    from_dump = dump_properties.dropna(subset=["label"]).assign(source=DUMP_SOURCE)
    fallback = side_file[~side_file["property"].isin(from_dump["property"])].assign(source=SIDE_FILE_SOURCE)
    frames = [frame for frame in (from_dump, fallback) if len(frame)]
    return pd.concat(frames, ignore_index=True) if frames else fallback


def metadata_sources(table: pd.DataFrame, metadata: pd.DataFrame) -> dict[str, int]:
    """How many of the table's properties took their metadata from each source (both named)."""
    source = metadata.dropna(subset=["label"]).drop_duplicates("property").set_index("property")["source"]
    counts = table["property"].map(source).value_counts()
    return {name: int(counts.get(name, 0)) for name in (DUMP_SOURCE, SIDE_FILE_SOURCE)}
