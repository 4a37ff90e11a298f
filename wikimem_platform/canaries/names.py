"""Similar-looking names S(h) for the similar-name calibration term of WikiMem's score.

"Jane Doe" -> "Enaj Doe", "Jane Eod": the letters of one half of the name reversed, the
capitalisation kept by position. The variants must look like a name of the same shape while being
nobody in particular; they are never the real name. Text is NFC-normalised and handled in
grapheme-like units (a base character with its combining marks), so accents stay on their letters
and non-Latin scripts work.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable

from wikimem_platform.labels import normalize_label

Cluster = str


def clusters(text: str) -> list[Cluster]:
    """Split into base characters each followed by their combining marks (after NFC)."""
    out: list[str] = []
    for char in unicodedata.normalize("NFC", text):
        if out and (unicodedata.combining(char) or char in "\u200d\ufe0f"):
            out[-1] += char
        else:
            out.append(char)
    return out


def _is_letter(cluster: Cluster) -> bool:
    return unicodedata.category(cluster[0]).startswith("L")


def _is_upper(cluster: Cluster) -> bool:
    return cluster[0].isupper() or cluster[0].istitle()


def _with_case(cluster: Cluster, upper: bool) -> Cluster:
    base, marks = cluster[0], cluster[1:]
    base = base.title() if upper else base.lower()  # title(): "ǆ" -> "ǅ", not "Ǆ"
    return unicodedata.normalize("NFC", base[:1] + marks) if len(base) == 1 else cluster


def _rearrange(token: str, order: Callable[[list[Cluster]], list[Cluster]]) -> str:
    """Rearrange a token's letters (punctuation stays put), casing kept by position."""
    parts = clusters(token)
    slots = [i for i, c in enumerate(parts) if _is_letter(c)]
    letters = [parts[i] for i in slots]
    moved = order(letters)
    out = list(parts)
    for slot, letter in zip(slots, moved):
        out[slot] = _with_case(letter, _is_upper(parts[slot]))
    return unicodedata.normalize("NFC", "".join(out))


def reverse_letters(token: str) -> str:
    """'Jane' -> 'Enaj', 'José' -> 'Ésoj', 'O'Brien' -> 'N'Eirbo'."""
    return _rearrange(token, lambda letters: letters[::-1])


def rotate_letters(token: str, step: int = 1) -> str:
    """'Anna' -> 'Nnaa' (step 1): a fallback when reversing gives the token back."""
    return _rearrange(token, lambda letters: letters[step:] + letters[:step] if letters else letters)


def swap_letters(token: str, index: int = 0) -> str:
    """Swap two neighbouring letters: 'Anna' -> 'Nana' (index 0)."""

    def swap(letters: list[Cluster]) -> list[Cluster]:
        letters = list(letters)
        if index + 1 < len(letters):
            letters[index], letters[index + 1] = letters[index + 1], letters[index]
        return letters

    return _rearrange(token, swap)


def shift_letter(token: str, step: int = 1) -> str:
    """The last letter moved ``step`` code points on: the last resort for 'X', 'Aa', '毛'."""
    parts = clusters(token)
    for i in range(len(parts) - 1, -1, -1):
        if _is_letter(parts[i]):
            code = ord(parts[i][0]) + step
            while not unicodedata.category(chr(code)).startswith("L"):
                code += 1
            parts[i] = chr(code) + parts[i][1:]
            break
    else:  # no letter at all ("2024"): shift the last character
        parts[-1] = chr(ord(parts[-1][0]) + step) + parts[-1][1:]
    return unicodedata.normalize("NFC", "".join(parts))


def _same(a: str, b: str) -> bool:
    return normalize_label(a) == normalize_label(b)


def similar_names(name: str, n: int = 2, avoid: Iterable[str] = ()) -> list[str]:
    """``n`` deterministic look-alike names, distinct, none equal to ``name`` or ``avoid``.

    The paper's look-alikes change the first name or the last name ("Enaj Doe", "Jane Eod"): each
    keeps half the name. A name of three or more tokens is split the same way, into its first
    half (rounded up) and the rest, and a look-alike changes every token of one half ("Đình Khoa
    Mazur" -> "Hnìđ Aohk Mazur", "Đình Khoa Ruzam"): changing one token of three kept a two-token
    remainder ("Khoa Mazur") that names the person as well as the full name does, and the
    calibration cancelled a true signal (planted models: recall 0.63 for three-token names
    against 0.94-1.00 for two-token ones; 0.85-1.00 with halves). Halves are tried left to right
    with their letters reversed; a change that gives a token back (a palindrome, one letter) is
    skipped, then rotations, neighbour swaps and, as a last resort, shifted letters of the last
    token fill up to ``n``. A name without spaces ("毛泽东", "Madonna") is one token.
    """
    name = unicodedata.normalize("NFC", " ".join(name.split()))
    tokens = name.split(" ")
    forbidden = [name, *avoid]
    out: list[str] = []

    def offer(indices: list[int], change: Callable[[str], str]) -> None:
        candidate = " ".join(change(t) if i in indices else t for i, t in enumerate(tokens))
        if len(out) < n and not any(_same(candidate, f) for f in forbidden + out):
            out.append(candidate)

    letter_tokens = [i for i, t in enumerate(tokens) if sum(_is_letter(c) for c in clusters(t)) >= 2]
    half = (len(letter_tokens) + 1) // 2
    halves = [letter_tokens[:half], letter_tokens[half:]] if len(letter_tokens) >= 3 else [[i] for i in letter_tokens]
    strategies: list[Callable[[str], str]] = [reverse_letters, rotate_letters, lambda t: rotate_letters(t, -1)]
    strategies += [lambda t, k=k: swap_letters(t, k) for k in range(3)]
    for strategy in strategies:
        for indices in halves:
            offer(indices, strategy)
    for step in range(1, 64 * n + 64):
        if len(out) >= n:
            break
        offer([len(tokens) - 1], lambda t, step=step: shift_letter(t, step))
    return out


def _token_alterations(token: str, limit: int) -> list[str]:
    """Changed forms of one name part, most name-like first: reversed, rotated both ways, neighbour
    swaps, then shifted last letters (always new, so the list never runs short)."""
    if not any(_is_letter(c) or c[0].isdigit() for c in clusters(token)):
        return [token]  # punctuation only ("-", "&"): not a name part, nothing to alter
    forms = [reverse_letters(token), rotate_letters(token), rotate_letters(token, -1)]
    forms += [swap_letters(token, k) for k in range(3)]
    forms += [shift_letter(token, step) for step in range(1, limit + 1)]
    return forms


def all_parts_similar_names(name: str, n: int = 2, avoid: Iterable[str] = ()) -> list[str]:
    """``n`` deterministic look-alikes that alter EVERY name part: "Barack Obama" -> "Kcarab
    Amabo", "Arackb Bamao".

    `similar_names` changes half the name and keeps the rest, so a fact carried by one name part
    alone ("Obama" -> United States) survives in the look-alike and the calibration cancels it;
    these keep no part of the name, so the calibration study can compare both. Every token with a
    letter or digit is replaced by a changed form that equals (casefolded) no token of ``name`` or
    of ``avoid`` (its aliases): the k-th look-alike takes each token's k-th admissible form
    (reversed first, then rotations, swaps, shifted letters), so look-alikes differ at every part.
    Distinct, never equal to ``name`` or to a name in ``avoid``.
    """
    name = unicodedata.normalize("NFC", " ".join(name.split()))
    avoid = [unicodedata.normalize("NFC", " ".join(str(a).split())) for a in avoid]
    tokens = name.split(" ")
    kept_tokens = {t.casefold() for t in tokens} | {t.casefold() for a in avoid for t in a.split(" ")}
    forbidden = [name, *avoid]
    options: list[list[str]] = []
    for token in tokens:
        forms = _token_alterations(token, limit=4 * n + 64)
        if forms == [token]:
            options.append(forms)
            continue
        admissible = [f for f in dict.fromkeys(forms) if f.casefold() not in kept_tokens]
        options.append(list(dict.fromkeys(f for f in admissible if not _same(f, token))))
    out: list[str] = []
    for k in range(4 * n + 64):
        if len(out) >= n:
            break
        candidate = " ".join(forms[min(k, len(forms) - 1)] for forms in options)
        if not any(_same(candidate, f) for f in forbidden + out):
            out.append(candidate)
    return out
