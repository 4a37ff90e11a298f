"""What a language needs beyond English: the template markup and the pack that resolves it.

English templates are built from the property table by rules (`canaries.templates`,
`canaries.paraphrases`); other languages' templates are written by hand, per property, in a
`LanguagePack` (`de`, `fr`, `pl`), because the rules read English parses. Their markup:

- ``⟦masc|fem⟧`` — agreement with the subject's gender ("{subject} est ⟦né|née⟧ …",
  "⟦Sein|Ihr⟧ Geburtsort …"), resolved once per subject when the canaries are built
  (`agree`); a person of unknown gender takes the first (the grammatical default).
- ``⟦xx:tag⟧{value}`` / ``⟦xx:tag⟧{subject}`` — the filler that follows is inflected by language
  ``xx``'s pack with ``tag`` (a preposition with its article, a case) when the sentence is
  rendered (`inflect_marked`): "né ⟦fr:à⟧{value}" + "Le Caire" -> "né au Caire", "in
  ⟦de:in⟧{value}" ... + "Schweiz" -> "in der Schweiz". The tag comes with the filler, so every
  candidate of one wording gets its own article, and so do h0 ("von ⟦de:dat⟧{subject}" + "dieser
  Mann" -> "von diesem Mann") and the names.

`{subject}` and `{value}` stay the only placeholders, once each, so scoring, shards, the CRM cue
and the completions read these templates like English ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module

from wikimem_platform.vocabulary import FEMALE

AGREEMENT = re.compile(r"⟦([^⟦⟧:|]*)\|([^⟦⟧:|]*)⟧")
MARKER = re.compile(r"⟦([a-z]{2,3}):([^⟦⟧|]+)⟧$")
"""A marker at the end of the literal before a placeholder (`inflect_marked` reads it there)."""
ANY_MARKER = re.compile(r"⟦[a-z]{2,3}:[^⟦⟧|]+⟧")


def agree(template: str, gender: str | None) -> str:
    """The template with every ``⟦masc|fem⟧`` replaced by the subject's form (FEMALE: the second,
    anything else: the first)."""
    index = 2 if gender == FEMALE else 1
    return AGREEMENT.sub(lambda m: m.group(index), template)


@dataclass(frozen=True)
class LanguagePack:
    """One language's hand-written templates and grammar.

    templates: property id -> 11 templates, the baseline first, then 10 paraphrases, each with one
        {subject} and one {value}, markup as in this module's docstring.
    context_forms: property id -> the baseline with a pronoun for the subject and no {subject}
        (a sentence in a context chain: "⟦Er|Sie⟧ wurde in ⟦de:in⟧{value} geboren.").
    generic_subject: gender (MALE, FEMALE or None) -> h0 in the nominative ("dieser Mann"); an
        inflection marker before {subject} declines it like any name.
    inflect: (tag, filler) -> the filler as it stands after the marker's tag: ("à", "Le Caire") ->
        "au Caire", ("à", "France") -> "en France". It sees only the text (render knows no property):
        whether a label is a country, and its gender, come from the pack's own lexicon. Names of
        people are never declined (only elided, "d'Antoine", where the language does that).
    value_form: (property, label, gender) -> the value label agreeing with the subject ("Schauspieler",
        FEMALE) -> "Schauspielerin"; most properties return the label unchanged.
    format_date: (ISO date "1952-03-11" or year "1952", English label) -> the date as the language
        writes it ("11. März 1952").
    """

    code: str
    name: str  # in English: "German"
    native_name: str  # "Deutsch"
    templates: Mapping[str, Sequence[str]]
    context_forms: Mapping[str, str]
    generic_subject: Callable[[str | None], str]
    inflect: Callable[[str, str], str]
    value_form: Callable[[str, str, str | None], str]
    format_date: Callable[[str, str], str]


_ISO_DATE = re.compile(r"([+-]?)(\d{1,4})(?:-(\d{2})(?:-(\d{2}))?)?")


def is_iso_date(value: str) -> bool:
    """Whether a value is an extract's date at day, month or year precision ("1952-03-11",
    "1952-03", "1952", "-0500"): what `written_date` writes in a language's way."""
    return _ISO_DATE.fullmatch(str(value).strip()) is not None


@dataclass(frozen=True)
class DateStyle:
    """How a language writes a date: month names after a day and alone, the era of a year before
    the common era, and the day-month-year pattern ("{day}. {month} {year}" in German)."""

    months: tuple[str, ...]
    era: str  # " v. Chr."
    pattern: str = "{day} {month} {year}"
    months_alone: tuple[str, ...] | None = None  # Polish: "marzec 1952" but "11 marca 1952"
    first_day: str = "1"  # French "1er"


def written_date(iso: str, english_label: str, style: DateStyle) -> str:
    """An extract's date ("1952-03-11", "1952-03", "1952", "-0500", day or month 00 where unknown)
    as `style` writes it; anything else, and year 0, is left as its English label."""
    match = _ISO_DATE.fullmatch(str(iso or "").strip())
    if match is None:
        return english_label
    minus, year, month, day = match.groups()
    if int(year) == 0 and minus != "-":
        return english_label
    year_text = str(int(year)) + (style.era if minus == "-" else "")
    if not month or int(month) == 0:
        return year_text
    if not 1 <= int(month) <= 12:
        return english_label
    if not day or int(day) == 0:
        return f"{(style.months_alone or style.months)[int(month) - 1]} {year_text}"
    if not 1 <= int(day) <= 31:
        return english_label
    day_text = style.first_day if int(day) == 1 else str(int(day))
    return style.pattern.format(day=day_text, month=style.months[int(month) - 1], year=year_text)


_PACKS: dict[str, LanguagePack] = {}


def register(pack: LanguagePack) -> LanguagePack:
    _PACKS[pack.code] = pack
    return pack


def registered(code: str) -> LanguagePack | None:
    """The pack of `code`, its module imported on first use (a pack registers itself when its
    module is imported: `de`, `fr`, `pl` beside this one); None when there is no such module."""
    if code not in _PACKS and re.fullmatch(r"[a-z]{2,3}", code):
        try:
            import_module(f"{__package__}.{code}")
        except ModuleNotFoundError as error:
            if error.name != f"{__package__}.{code}":
                raise
    return _PACKS.get(code)


def inflect_marked(literal: str, filler: str) -> tuple[str, str]:
    """(literal without its closing marker, inflected filler) — or both unchanged when the literal
    ends with no marker. An unknown language in a marker is an error, not English."""
    match = MARKER.search(literal)
    if match is None:
        return literal, filler
    language = registered(match.group(1))
    if language is None:
        raise ValueError(f"template marker {match.group(0)!r}: no language pack {match.group(1)!r}")
    return literal[: match.start()], language.inflect(match.group(2), filler)
