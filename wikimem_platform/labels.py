"""When two labels name the same thing: the one comparison used for names and values, and the
people a query names.

Two keys, both NFKC and casefolded, split into words: `normalize_label` keeps accents (exact
spelling), `fold` also ignores the accents of Latin and Greek letters ("Kraków" ~ "Krakow",
"Łódź" ~ "Lodz", "São Paulo" ~ "Sao Paulo"; "Straße" ~ "Strasse" already by casefold) and the
stress marks of Cyrillic ones (ё ~ е; й stays й). Other scripts are kept as given: a Devanagari
vowel sign or virama is a letter's part, not an accent, so "कमला" and "कमल" stay two names. A
name in any script still equals itself; nothing is transliterated ("Лев" is not "Lev").
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache

import pandas as pd

ACCENTED_SCRIPTS = ("LATIN", "GREEK")
"""Scripts whose combining marks are all accents `strip_accents` drops (the first word of a letter's
Unicode name). Cyrillic letters lose only the stress marks and the diaeresis of ё (`_CYRILLIC_ACCENT`):
й, ї, ў are letters of their own, not и, і, у with an accent ("Толстой" is not "Толстои")."""
_CYRILLIC_ACCENT: dict[str, str | None] = {"\u0300": None, "\u0301": None, "\u0308": "еЕ"}
"""Marks dropped after a Cyrillic letter, and after which (None: any): stress marks, ё's diaeresis."""

UNDECOMPOSED_LETTERS = str.maketrans({
    "Ł": "L", "ł": "l", "Ø": "O", "ø": "o", "Đ": "D", "đ": "d", "Ð": "D", "ð": "d", "Ħ": "H", "ħ": "h",
    "Ŧ": "T", "ŧ": "t", "ı": "i", "Ŀ": "L", "ŀ": "l", "Æ": "AE", "æ": "ae", "Œ": "OE", "œ": "oe",
    "Þ": "TH", "þ": "th",
})
"""Latin letters with a stroke or bar, and ligatures, that NFKD leaves whole (ł is not l + a mark),
written as the plain letters a writer without them uses ("Łódź" -> "Lodz", "Øresund" -> "Oresund")."""

_ASCII_WORD = re.compile(r"\w+")


def normalize_label(text: str) -> str:
    """Letters and digits as space-separated words, NFKC, casefolded ("U.S.A." ~ "u s a"); a
    combining mark stays in its word (a Devanagari vowel sign does not split "राहुल")."""
    return " ".join(_words(unicodedata.normalize("NFKC", str(text)).casefold()))


def fold(text: str) -> str:
    """`normalize_label` with the accents of Latin and Greek letters ignored (`strip_accents`): the key by
    which a completion, an alias or a query names a value or a person ("Müller" ~ "muller")."""
    return normalize_label(strip_accents(str(text)))


def strip_accents(text: str) -> str:
    """The text without the combining marks of Latin and Greek letters (and Cyrillic stress marks,
    `_CYRILLIC_ACCENT`), the letters NFKD does not decompose spelled plainly (`UNDECOMPOSED_LETTERS`);
    marks of other scripts (Devanagari vowel signs, Arabic harakat) are kept. Case is kept."""
    if text.isascii():
        return text
    kept: list[str] = []
    base, script = "", ""  # the letter the marks that follow belong to, and its script
    for ch in unicodedata.normalize("NFKD", text):
        if unicodedata.category(ch)[0] != "M":
            base, script = ch, _script(ch)
        elif script in ACCENTED_SCRIPTS or (script == "CYRILLIC" and _cyrillic_accent(ch, base)):
            continue
        kept.append(ch)
    return "".join(kept).translate(UNDECOMPOSED_LETTERS)


def _cyrillic_accent(mark: str, letter: str) -> bool:
    after = _CYRILLIC_ACCENT.get(mark, "")
    return after is None or (bool(after) and letter in after)


@lru_cache(maxsize=8192)
def _script(ch: str) -> str:
    """The script of a letter as the first word of its Unicode name ("LATIN", "CYRILLIC", "DEVANAGARI")."""
    return unicodedata.name(ch, "").split(" ", 1)[0]


def _words(text: str) -> list[str]:
    """Runs of word characters (`\\w`: letters, digits, underscore) and combining marks. `re`'s
    `\\w` alone leaves marks out, which cut "राहुल" into "र ह ल"."""
    if text.isascii():
        return _ASCII_WORD.findall(text)
    return "".join(ch if ch.isalnum() or ch == "_" or unicodedata.category(ch)[0] == "M" else " "
                   for ch in text).split()


def query_qid(query: str) -> str | None:
    """The Wikidata id a query is ("q42 " -> "Q42"), or None when it is a name."""
    query = query.strip().upper()
    return query if query.startswith("Q") and query[1:].isdigit() else None


def find_subjects(query: str, people: pd.DataFrame) -> pd.DataFrame:
    """Rows of `people` (qid, label[, aliases]) the query names: a QID exactly, else a label or
    alias, accents ignored (`fold`: "Lech Walesa" finds "Lech Wałęsa")."""
    query = query.strip()
    if not len(people):
        return people
    if qid := query_qid(query):
        return people[people["qid"] == qid]
    wanted = fold(query)
    by_label = people["label"].map(fold) == wanted
    if "aliases" in people.columns:
        by_alias = people["aliases"].map(lambda names: any(fold(n) == wanted for n in _as_list(names)))
        by_label = by_label | by_alias
    return people[by_label]


def _as_list(value) -> list:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    return list(value)
