"""Placeholders, rendering and the small bits of English morphology templates need.

Rendering lives in one place so that scoring, the GE check and the templates agree on what
a canary sentence looks like (capitalisation at sentence start included).
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata

from wikimem_platform.canaries.languages.grammar import ANY_MARKER, inflect_marked, MARKER
from wikimem_platform.labels import normalize_label

SUBJECT = "{subject}"
VALUE = "{value}"
_PLACEHOLDER = re.compile(r"\{(subject|value)\}")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")

# Neutral fillers for embedding templates: the ranking must compare wordings, not people.
FILLER_SUBJECT = "Alex Smith"
FILLER_VALUES = {"wikibase-item": "X", "string": "X", "quantity": "2", "time": "1 January 1900"}


def count_placeholders(template: str) -> tuple[int, int]:
    """(number of {subject}, number of {value}) in a template."""
    return template.count(SUBJECT), template.count(VALUE)


def _capitalize_first(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


@functools.lru_cache(maxsize=65536)
def _plan(template: str) -> tuple[tuple[str, str, bool | None, bool, str | None], ...]:
    """A template cut at its placeholders, once: (literal before, "subject" / "value", whether the
    placeholder opens a sentence — None when that depends on the filler before it, the literal
    between being blank —, whether a "." follows it, the inflection marker before it or None).
    `render` runs millions of times a scoring pass; the regular expressions then run once per
    template, not once per sentence."""
    out, position, first = [], 0, True
    for match in _PLACEHOLDER.finditer(template):
        literal = template[position : match.start()]
        marker = None
        if literal.endswith("⟧") and (found := MARKER.search(literal)):
            literal, marker = literal[: found.start()], found.group(0)
        if literal.strip() or (first and not literal):
            opens: bool | None = bool(_SENTENCE_START.search(literal))
        elif first:  # only blanks before the first placeholder: nothing ends a sentence there
            opens = False
        elif marker is not None:  # an inflected filler continues a clause ("Pius II. in der Vatikanstadt")
            opens = False
        else:
            opens = None
        position, first = match.end(), False
        out.append((literal, match.group(1), opens, template[position : position + 1] == ".", marker))
    out.append((template[position:], "", False, False, None))
    return tuple(out)


def render(template: str, subject: str | None, value: str | None) -> str:
    """The sentence a model scores: placeholders replaced, sentence starts capitalised.

    ``None`` leaves that placeholder in place (to pre-fill context facts), with its inflection
    marker. Only a substituted piece that opens a sentence is capitalised ("Physicist is this
    person's occupation."), the rest of a name or value is never touched; a value ending in "."
    does not double the period. A marker before a placeholder (``⟦fr:à⟧{value}``: templates of
    other languages, `languages.grammar`) inflects its filler ("Le Caire" -> "au Caire").
    """
    pieces: list[str] = []
    for literal, kind, opens, period_after, marker in _plan(template):
        pieces.append(literal)
        if not kind:
            break
        filler = subject if kind == "subject" else value
        if filler is None:
            pieces.append((marker or "") + "{" + kind + "}")
            continue
        filler = str(filler)
        if marker is not None:
            filler = inflect_marked(marker, filler)[1]
        if opens is None:
            opens = bool(_SENTENCE_START.search("".join(pieces)))
        if opens:
            filler = _capitalize_first(filler)
        if period_after and filler.endswith("."):
            filler = filler[:-1]
        pieces.append(filler)
    return "".join(pieces)


def _render_reference(template: str, subject: str | None, value: str | None) -> str:
    """The plain implementation `render` must equal (kept for the test that compares them)."""
    pieces: list[str] = []
    position = 0
    for match in _PLACEHOLDER.finditer(template):
        pieces.append(template[position : match.start()])
        position = match.end()
        filler = subject if match.group(1) == "subject" else value
        if filler is None:
            pieces.append(match.group(0))
            continue
        filler = str(filler)
        if _SENTENCE_START.search("".join(pieces)):
            filler = _capitalize_first(filler)
        if filler.endswith(".") and template[position : position + 1] == ".":
            filler = filler[:-1]
        pieces.append(filler)
    pieces.append(template[position:])
    return "".join(pieces)


_VALUE_MARK = "\x00"
_MARKED_VALUE = re.compile(ANY_MARKER.pattern + re.escape(VALUE))


def text_before_value(template: str, subject: str) -> str:
    """The rendered sentence up to its value ("Ada Lovelace was born in"): what every candidate
    of one wording and name shares, the prefix a top-logprobs continuation starts after. Where the
    value is inflected (``⟦fr:à⟧{value}``: "au Caire", "en France"), the text before it ends before
    the preposition, which differs between candidates."""
    return render(unmarked_value(template), subject, _VALUE_MARK).split(_VALUE_MARK, 1)[0].rstrip()


def unmarked_value(template: str) -> str:
    """The template without the inflection marker before its value (``⟦fr:à⟧{value}`` ->
    ``{value}``): what a prompt that stops before the value shows, the preposition or article
    that differs between values left to the model."""
    return _MARKED_VALUE.sub(VALUE, template) if "⟧{value}" in template else template


def value_follows_subject(template: str) -> bool:
    """Whether every {subject} comes before the first {value}: only then does the text before the
    value hold the person, and the value's continuation carry what the model ties to them."""
    first_value = template.find(VALUE)
    return first_value > 0 and SUBJECT in template[:first_value] and SUBJECT not in template[first_value:]


def render_neutral(template: str, datatype: str = "wikibase-item") -> str:
    """A template with neutral filler subject and value, for sentence embeddings."""
    return render(template, FILLER_SUBJECT, FILLER_VALUES.get(datatype, "X"))


def subject_opens_sentence(template: str) -> bool:
    """Whether the first {subject} starts a sentence (then h0 is "This person")."""
    index = template.find(SUBJECT)
    return index >= 0 and bool(_SENTENCE_START.search(template[:index]))


def generic_subject(template: str) -> str:
    """h0 for a template: "This person" at a sentence start, "this person" elsewhere.

    "This person's" follows from templates that write "{subject}'s"; render() would capitalise
    a sentence-initial "this person" anyway, the explicit form keeps the column readable.
    """
    return "This person" if subject_opens_sentence(template) else "this person"


_PUNCTUATION = str.maketrans({c: " " for c in string.punctuation})


def normalize_sentence(text: str) -> str:
    """Lowercase, punctuation removed, spaces collapsed: what makes two paraphrases "the same"."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _PLACEHOLDER.sub(lambda m: f" {m.group(1)}placeholder ", text)
    return " ".join(text.translate(_PUNCTUATION).split())


def mentions(haystack: str, needle: str) -> bool:
    """Whether normalized ``needle`` occurs as whole words in normalized ``haystack``."""
    needle, haystack = normalize_label(needle), normalize_label(haystack)
    return bool(needle) and f" {needle} " in f" {haystack} "


def indefinite_article(word: str) -> str:
    """'a' or 'an' by spelling (good enough for the role nouns of property labels)."""
    lowered = word.lower()
    if lowered.startswith(("uni", "use", "eu", "one")):
        return "a"
    if lowered.startswith(("hon", "heir", "hour")):
        return "an"
    return "an" if lowered[:1] in "aeiou" else "a"


def third_person(lemma: str) -> str:
    """Present tense, third person singular of a verb lemma ("hold" -> "holds")."""
    irregular = {"be": "is", "have": "has", "do": "does", "go": "goes"}
    if lemma in irregular:
        return irregular[lemma]
    if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
        return lemma + "es"
    if len(lemma) > 1 and lemma.endswith("y") and lemma[-2] not in "aeiou":
        return lemma[:-1] + "ies"
    return lemma + "s"


def to_they(predicate: str, lemmas: dict[str, str] | None = None) -> str:
    """Predicate agreeing with "they": "is employed by" -> "are employed by".

    ``lemmas`` maps third-person verb forms in the predicate to their lemma ("holds": "hold").
    """
    words = predicate.split(" ")
    swap = {"is": "are", "was": "were", "has": "have", "does": "do"}
    lemmas = lemmas or {}
    out = []
    for index, word in enumerate(words):
        bare = word.rstrip(",")
        tail = word[len(bare) :]
        if index == 0 and bare in swap:
            out.append(swap[bare] + tail)
        elif bare in lemmas:
            out.append(lemmas[bare] + tail)
        else:
            out.append(word)
    return " ".join(out)


_POSSESSIVE_START = re.compile(r"^\{subject\}'s ")


def pronoun_form(template: str, lemmas: dict[str, str] | None = None) -> str | None:
    """The template with its opening subject replaced by "Their"/"They" (for context chains).

    ``lemmas`` gives the plural form of third-person verbs the template uses; without it only
    "is/was/has" and past-tense verbs are converted. None when the template cannot be converted.
    """
    if _POSSESSIVE_START.match(template):
        return _POSSESSIVE_START.sub("Their ", template, count=1)
    if not template.startswith(SUBJECT + " ") or template.count(SUBJECT) != 1:
        return None
    predicate = template[len(SUBJECT) + 1 :]
    first = predicate.split(" ", 1)[0].rstrip(",")
    known = {"is", "was", "has", "does"} | set(lemmas or {})
    if first not in known and not first.endswith("ed"):
        return None
    return "They " + to_they(predicate, lemmas)


def classify_shape(template: str) -> str:
    """A coarse sentence shape of any template, for reporting and for the shape column."""
    if "?" in template or template.startswith(("If you ask", "The answer to the question")):
        return "question"
    if template.startswith(VALUE) or template.startswith("It is " + VALUE):
        return "value_first"
    if " whose " in template or " who " in template:
        return "relative_clause"
    if " known " in template:
        return "known_as"
    if template.startswith(SUBJECT + "'s "):
        return "possessive"
    if template.startswith("The ") and " of " + SUBJECT in template:
        return "of_genitive"
    if re.match(r"^\{subject\} (is|was) ", template):
        return "copular"
    if template.startswith(SUBJECT + " "):
        return "transitive"
    return "framed"
