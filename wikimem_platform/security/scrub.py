"""Scrubbing a request's personal data out of error texts before they are logged or stored
(issue 60): a model's failure can carry a server's error body, and a server that echoes its
input puts the person's name and facts into it ("Ilse Marwitz's occupation is journalist.").

`Scrubber(secrets, names=...)` replaces, case-insensitively, every occurrence of each secret
with ``[redacted]``: as written, JSON-escaped (``\\u00e9``, ``\\"``), URL-encoded (``%20``,
``+``), HTML-escaped, and in NFC and NFD forms. A name (``names``: the person's name and aliases)
is also redacted part by part: each token of three or more characters on its own ("Marwitz",
"Marwitz's"), except a few name particles ("von", "van", "der", ...) that are common words too.
Secrets match whole words only (a plural -s/-es included: "journalists"), so "Ilse" leaves
"Ilsenburg" alone and a short value such as "Q5" does not eat "Q50"; secrets of one character
are left out (they name nobody); a word next to an escape (``\\nIlse``, ``%20Marwitz``) still matches.

The request's secrets come from where its data is known (`subject_requests.audit`); this module
reads no request and imports nothing of the platform.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

REDACTED = "[redacted]"
MIN_TOKEN = 3  # a name's parts shorter than this are not redacted on their own ("Li", "de")
# Name particles that are ordinary words too: never redacted alone (the whole name still is).
PARTICLES = frozenset({"the", "and", "von", "van", "der", "den", "des", "del", "della", "los", "las", "zum", "zur"})
# Start of a word: nothing word-like before it, or an escape ending just before it (\n, %20, \u00e9).
_LEFT = r"(?:(?<![^\W_])|(?<=\\[nrtbf])|(?<=%[0-9A-Fa-f]{2})|(?<=\\u[0-9A-Fa-f]{4}))"
_RIGHT = r"(?:e?s)?(?![^\W_])"  # end of a word (a plural "journalists" too): nothing word-like after it
MIN_SECRET = 2  # a one-character value ("5", "M") names nobody; redacting it would wreck the message


def name_tokens(name: str) -> list[str]:
    """A name's parts that are redacted on their own: words of MIN_TOKEN+ characters, not particles."""
    words = re.split(r"[\W_]+", unicodedata.normalize("NFC", name))
    return [w for w in words if len(w) >= MIN_TOKEN and w.casefold() not in PARTICLES]


def forms(text: str) -> set[str]:
    """The ways `text` may be written in an error body: as is, NFC/NFD, JSON-escaped (ASCII or
    not), URL-encoded (%20 or +), HTML-escaped."""
    out = set()
    for normal in {unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text), text}:
        out.update({normal, json.dumps(normal)[1:-1], json.dumps(normal, ensure_ascii=False)[1:-1],
                    quote(normal, safe=""), quote_plus(normal, safe=""), html.escape(normal, quote=True)})
    return {form for form in out if form}


def _pattern(form: str) -> str:
    body = re.escape(form)
    body = re.sub(r"(?:\\ )+", r"\\s+", body)  # "Ilse  Marwitz" and a line break between the names
    return f"{_LEFT}{body}{_RIGHT}"


class Scrubber:
    """Redact `secrets` (whole) and `names` (whole and part by part) from texts."""

    def __init__(self, secrets: Iterable[str] = (), names: Iterable[str] = ()):
        whole, parts = set(), set()
        for secret in secrets:
            if secret is not None and len(str(secret).strip()) >= MIN_SECRET:
                whole.add(str(secret).strip())
        for name in names:
            if name is not None and len(str(name).strip()) >= MIN_SECRET:
                whole.add(str(name).strip())
                parts.update(name_tokens(str(name)))
        variants = set()
        for text in whole | parts:
            variants.update(forms(text))
        self.secrets = sorted(whole | parts)
        # longest first: the whole name goes as one [redacted], not one per part
        ordered = sorted(variants, key=lambda v: (-len(v), v))
        self._regex = re.compile("|".join(_pattern(v) for v in ordered), re.IGNORECASE) if ordered else None

    def __call__(self, text: object) -> str:
        return self.scrub(text)

    def scrub(self, text: object) -> str:
        text = "" if text is None else str(text)
        return self._regex.sub(REDACTED, text) if self._regex is not None else text

    def __bool__(self) -> bool:
        return self._regex is not None


def scrub(text: object, secrets: Iterable[str] = (), names: Iterable[str] = ()) -> str:
    """`text` with every secret (whole) and name (whole and by part) replaced by [redacted]."""
    return Scrubber(secrets, names).scrub(text)
