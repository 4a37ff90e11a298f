"""The languages with hand-written canaries: which there are, the properties they cover, a pack by
its code, and the checks a request's languages and a pack's templates must pass."""

from __future__ import annotations

from collections.abc import Sequence

from wikimem_platform.canaries.languages.grammar import AGREEMENT, ANY_MARKER, LanguagePack, registered

ENGLISH = "en"
PACKED_LANGUAGES = ("de", "fr", "pl")
"""Languages with hand-written templates; with English, the languages a request may name."""
REQUEST_LANGUAGES = (ENGLISH, *PACKED_LANGUAGES)
LETTER_LANGUAGES = (ENGLISH, "de", "fr", "pl")
"""Languages the answer letter is written in (`subject_requests.letter_text`: templates, not machine
translation). Kept here, below both the intake and the letter, so neither imports the other."""
N_WORDINGS = 11  # the baseline and 10 paraphrases, as in English

PERSON_PROPERTIES = (
    "P106", "P27", "P19", "P20", "P569", "P570", "P413", "P509", "P1412", "P103", "P108", "P39", "P69", "P3373",
    "P26", "P101", "P463", "P641", "P264", "P1303", "P22", "P25", "P40", "P102", "P166", "P54", "P119", "P140",
    "P136", "P937", "P551", "P800",
)
"""The 32 person properties every pack covers: the bundled sample's and the most used on Wikidata's humans."""


def pack(code: str) -> LanguagePack | None:
    """The pack of a language code; None for English; ValueError naming the allowed codes otherwise."""
    if code == ENGLISH:
        return None
    if code not in PACKED_LANGUAGES:
        raise ValueError(f"language {code!r} has no canary templates; allowed: {', '.join(REQUEST_LANGUAGES)}")
    found = registered(code)  # imports the pack's module on first use
    assert found is not None, code
    return found


def check_languages(languages: Sequence[str] | str) -> list[str]:
    """The languages a request names, checked: ValueError naming `languages` and the allowed codes."""
    if isinstance(languages, str):
        languages = [part.strip() for part in languages.split(",") if part.strip()]
    codes = list(dict.fromkeys(languages))
    if not codes:
        raise ValueError(f"languages: none given; allowed: {', '.join(REQUEST_LANGUAGES)}")
    unknown = [code for code in codes if code not in REQUEST_LANGUAGES]
    if unknown:
        raise ValueError(f"languages: {', '.join(map(repr, unknown))} not supported; allowed: {', '.join(REQUEST_LANGUAGES)} "
                         "(English and the languages with hand-written canary templates)")
    return codes


def language_name(code: str) -> str:
    """A language's name in English ("German"), for answers written in English."""
    return "English" if code == ENGLISH else pack(code).name


def pack_problems(language: LanguagePack) -> list[str]:
    """Every structural fault of a pack: a missing property, not 11 wordings, a wording twice, a
    placeholder missing or repeated, a context form naming the subject, a marker of another language
    or an unbalanced bracket."""
    problems = []
    for prop in PERSON_PROPERTIES:
        wordings = list(language.templates.get(prop, ()))
        if len(wordings) != N_WORDINGS:
            problems.append(f"{prop}: {len(wordings)} wordings, not {N_WORDINGS}")
        if len(set(wordings)) != len(wordings):
            problems.append(f"{prop}: a wording is repeated")
        context = language.context_forms.get(prop)
        if not context or "{subject}" in context or context.count("{value}") != 1:
            problems.append(f"{prop}: the context form must hold {{value}} once and no {{subject}}: {context!r}")
        for text in [*wordings, *([context] if context else [])]:
            if text in wordings and (text.count("{subject}"), text.count("{value}")) != (1, 1):
                problems.append(f"{prop}: not one {{subject}} and one {{value}}: {text!r}")
            rest = ANY_MARKER.sub("", AGREEMENT.sub("", text))
            if "⟦" in rest or "⟧" in rest:
                problems.append(f"{prop}: a bracket that is neither agreement nor marker: {text!r}")
            for marker in ANY_MARKER.findall(text):
                if not marker.startswith(f"⟦{language.code}:"):
                    problems.append(f"{prop}: marker {marker} is not of {language.code}: {text!r}")
            for marker in ANY_MARKER.finditer(text):
                if not text[marker.end():].startswith(("{value}", "{subject}")):
                    problems.append(f"{prop}: marker {marker.group(0)} must stand right before a placeholder: {text!r}")
    return problems
