"""The property table: which person properties are worth probing a model for."""

from __future__ import annotations

import pandas as pd

from wikimem_platform.wikidata import ALLOWED_DATATYPES, INSTANCE_OF

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
