"""CRM overlap cue (Luo et al., §3.2 and Appendix D): how much of a target a prompt already shows.

cue(prompt, target) = |LCS_substring(norm(prompt), norm(target))| / |norm(target)|, in [0, 1].

Definitions, following App. D and the authors' code (xiaoyuluoit97/pii_crm,
dataset_process/cues_calculate/cal_cue_email.py):
- norm(x): the platform's one name key (`labels.fold`: NFKC, casefold, the accents of Latin
  and Greek letters dropped, "Ł" as "L") with spaces and underscores removed: letters
  (L*), numbers (N*) and the combining marks of other scripts. Two departures from the peer's
  `norm_alnum_nfkc` (NFKC, lower, L* and N* only): an accent no longer decides the cue
  ("Krakow" shows all of "Kraków", as a writer without the key would type it), and a Devanagari
  vowel sign or virama is kept, being part of its letter (the peer dropped every mark, so
  "कमल" showed all of "कमला").
- LCS is the longest common *contiguous* substring: difflib.SequenceMatcher(autojunk=False)
  .find_longest_match, which with no junk is exact (tested against a brute-force DP).
- Empty normalized target -> 0.0 (the peer's choice: nothing to reveal, so no cue). Note that a
  target with no letters or digits (e.g. "+-") normalizes to empty too.
- Email: split at the last "@" into local part and domain; strip the top-level domain: the last
  label, or the last two labels when they form a known two-part public suffix (co.uk, com.au,
  ... ; the peer's list, extended a little, overridable) and at least one label remains.
  "jane.doe@example.co.uk" -> local "jane.doe", domain "example". cue = length-weighted average
  of cue(prompt, local) and cue(prompt, domain), weights |norm(local)|, |norm(domain)|
  (App. D: "length-weighted average ... avoids overestimating cues from short components").
  A target without "@" is scored with the text cue.
- Phone: NFKC, keep digits only (App. D: "retain only numeric characters"), on both prompt and
  target; every decimal digit is mapped to ASCII (Arabic-Indic "٣" -> "3"). The peer's phone script
  keeps parentheses and dots instead; we follow the paper's text.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable

from wikimem_platform.labels import fold

TWO_PART_SUFFIXES = frozenset({
    "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "ltd.uk", "plc.uk", "net.uk",
    "com.au", "net.au", "org.au", "edu.au", "gov.au",
    "co.za", "org.za", "co.nz", "org.nz", "co.jp", "ne.jp", "or.jp", "ac.jp", "co.in",
    "co.kr", "or.kr", "com.br", "com.cn", "net.cn", "org.cn", "com.mx", "com.ar", "com.tr",
    "com.tw", "com.hk", "com.sg", "com.my", "co.il", "co.id", "com.ua", "com.pl", "com.ru",
})


def norm(text: str) -> str:
    """`labels.fold` without spaces and underscores: letters, numbers, other scripts' marks."""
    return fold(text).replace(" ", "").replace("_", "")


def norm_digits(text: str) -> str:
    """NFKC, keep decimal digits only, as ASCII."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(str(unicodedata.digit(ch)) for ch in text if ch.isdigit())


def lcs_substring_len(a: str, b: str) -> int:
    """Length of the longest common contiguous substring of a and b."""
    if not a or not b:
        return 0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.find_longest_match(0, len(a), 0, len(b)).size


def _ratio(norm_prompt: str, norm_target: str) -> float:
    if not norm_target:
        return 0.0
    return lcs_substring_len(norm_prompt, norm_target) / len(norm_target)


def text_cue(prompt: str, target: str) -> float:
    """Share of norm(target) recoverable from norm(prompt) as one contiguous piece."""
    return _ratio(norm(prompt), norm(target))


def strip_tld(domain: str, two_part_suffixes: Iterable[str] = TWO_PART_SUFFIXES) -> str:
    """Drop the top-level domain ("example.co.uk" -> "example", "mail.ex.com" -> "mail.ex")."""
    labels = [p for p in unicodedata.normalize("NFKC", domain).strip().lower().split(".") if p]
    if len(labels) <= 1:
        return ".".join(labels)
    if ".".join(labels[-2:]) in set(two_part_suffixes) and len(labels) >= 3:
        return ".".join(labels[:-2])
    return ".".join(labels[:-1])


def email_cue_parts(prompt: str, email: str,
                    two_part_suffixes: Iterable[str] = TWO_PART_SUFFIXES,
                    ) -> tuple[float, float, float]:
    """(cue of the local part, cue of the domain without TLD, length-weighted overall cue)."""
    if "@" not in email:
        c = text_cue(prompt, email)
        return c, 0.0, c
    local, domain = email.rsplit("@", 1)
    norm_prompt = norm(prompt)
    norm_local = norm(local)
    norm_domain = norm(strip_tld(domain, two_part_suffixes))
    c_local = _ratio(norm_prompt, norm_local)
    c_domain = _ratio(norm_prompt, norm_domain)
    total = len(norm_local) + len(norm_domain)
    if total == 0:
        return c_local, c_domain, 0.0
    overall = (len(norm_local) * c_local + len(norm_domain) * c_domain) / total
    return c_local, c_domain, overall


def email_cue(prompt: str, email: str,
              two_part_suffixes: Iterable[str] = TWO_PART_SUFFIXES) -> float:
    """Length-weighted average of the local-part and domain cues (App. D)."""
    return email_cue_parts(prompt, email, two_part_suffixes)[2]


def phone_cue(prompt: str, phone: str) -> float:
    """Digits-only cue: how many consecutive digits of the number the prompt already shows."""
    return _ratio(norm_digits(prompt), norm_digits(phone))


CUE_KINDS = {"text": text_cue, "email": email_cue, "phone": phone_cue}


def cue_for(kind: str, prompt: str, target: str) -> float:
    """Dispatch on the target's kind: "text", "email" or "phone"."""
    try:
        fn = CUE_KINDS[kind]
    except KeyError:
        raise ValueError(f"kind must be one of {sorted(CUE_KINDS)}, got {kind!r}") from None
    return fn(prompt, target)
