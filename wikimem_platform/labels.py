"""When two labels name the same thing: the one comparison used for names and values, and the
people a query names."""

from __future__ import annotations

import math
import re
import unicodedata

import pandas as pd


def normalize_label(text: str) -> str:
    """Letters and digits as space-separated words, NFKC, casefolded ("U.S.A." ~ "u s a")."""
    text = unicodedata.normalize("NFKC", str(text)).casefold()
    return " ".join(re.findall(r"\w+", text))


def query_qid(query: str) -> str | None:
    """The Wikidata id a query is ("q42 " -> "Q42"), or None when it is a name."""
    query = query.strip().upper()
    return query if query.startswith("Q") and query[1:].isdigit() else None


def find_subjects(query: str, people: pd.DataFrame) -> pd.DataFrame:
    """Rows of `people` (qid, label[, aliases]) the query names: a QID exactly, else a label or alias."""
    query = query.strip()
    if not len(people):
        return people
    if qid := query_qid(query):
        return people[people["qid"] == qid]
    wanted = normalize_label(query)
    by_label = people["label"].map(normalize_label) == wanted
    if "aliases" in people.columns:
        by_alias = people["aliases"].map(lambda names: any(normalize_label(n) == wanted for n in _as_list(names)))
        by_label = by_label | by_alias
    return people[by_label]


def _as_list(value) -> list:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    return list(value)
