"""Wordings that give the answer away: a canary whose own text already shows or implies the value.

A ranking is evidence of what the model *knows* only where the prompt does not hand it the
answer. Two rules, applied per wording (property, variant_id) of a person's canaries:

- **shown**: what the wording tells about the person — the name, and in the contextualized
  wording the other facts it states — shows a true value or one of its aliases (`shows`): every word of it of four or more characters appears as a word of the
  text, a word that begins with at least three quarters of it counting too ("a German
  footballer's country of citizenship is Germany", "Their language is Slovene" for Slovenia, a
  family name that is the value). Words, not characters: CRM's character overlap cue
  (`cue.text_cue`) at 0.5 finds "Rome" in "When it comes to" and "3 November 1908" in any other
  November date, and would leave out a third of the sample's places of death for nothing. The
  template's own words are the same for every person and every control (and "profession" is not
  "professor"), so they are not read;
- **implied**: the contextualized wording states another fact whose value can imply the asked one
  (`IMPLIED_BY`: a place of birth for the country of citizenship, a team for the sport, an
  instrument for the occupation). The rule is on the property pair, not the value: whether
  Munich lies in Germany is not in the extract, and a wording that *can* give the answer away is
  not evidence either way, so it is left out.

Left-out wordings are dropped from the person's and the controls' scores alike (`Giveaways.drop`),
so M, the compared score and the p-value are computed on the same remaining wordings, and the
answer says how many were left out and why. A fact whose every scored wording gives the value
away (the name shows it) is *untestable*: the person would beat invented people by the prompt
alone, so its verdict is "no evidence" with that reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

import math

from wikimem_platform.canaries.text import render, VALUE
from wikimem_platform.labels import fold
from wikimem_platform.vocabulary import CONTEXTUALIZED_KINDS

SHOWN, IMPLIED = "shown", "implied"
MIN_WORD = 4  # shorter words of a value ("of", "3", "Go") say too little to count as shown
STEM_SHARE = 0.75  # a text word beginning with this share of a value word shows it ("German" -> "Germany")
GIVEAWAY_COLUMNS = ["property", "variant_id", "kind", "rule", "detail"]

_PLACES = ("P19", "P20", "P551", "P119")  # place of birth, of death, residence, burial
_NATIONAL = ("P27", "P1532", "P102", "P39", "P1412", "P103")  # citizenship, sporting nationality,
# party, position held, languages, native language: each names or presumes a country or its language
# Asked property -> context properties whose value can imply its value.
IMPLIED_BY: dict[str, frozenset[str]] = {
    "P27": frozenset({*_PLACES, *_NATIONAL} - {"P27"}),  # country of citizenship
    "P1532": frozenset({*_PLACES, "P27", "P54"}),  # country for sport: place, citizenship, national team
    "P1412": frozenset({*_PLACES, "P27", "P103"}),  # languages spoken or written
    "P103": frozenset({*_PLACES, "P27", "P1412"}),  # native language
    "P641": frozenset({"P54", "P413", "P118", "P106", "P1532"}),  # sport: team, position, league, occupation
    "P413": frozenset({"P54", "P106"}),  # playing position: team ("goalkeeper of ..."), occupation
    "P118": frozenset({"P54"}),  # league: team
    "P106": frozenset({"P641", "P54", "P413", "P118", "P1303", "P264", "P136", "P39", "P102", "P101", "P800"}),
    "P101": frozenset({"P106", "P69", "P108", "P184", "P185"}),  # field of work: occupation, studies, advisers
    "P1303": frozenset({"P106", "P136"}),  # instrument: occupation ("pianist"), genre
    "P136": frozenset({"P106", "P1303", "P264"}),  # genre: occupation, instrument, record label
    "P264": frozenset({"P136"}),  # record label: genre
    "P20": frozenset({"P119"}),  # place of death: place of burial
    "P119": frozenset({"P20"}),  # place of burial: place of death
    "P102": frozenset({"P39"}),  # political party: position held
    "P39": frozenset({"P102"}),  # position held: party
}


@dataclass(frozen=True)
class Giveaways:
    """The wordings left out of a person's audit (GIVEAWAY_COLUMNS) and the facts left with none."""

    wordings: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=GIVEAWAY_COLUMNS))
    untestable: frozenset[str] = frozenset()  # properties whose every scored wording gives it away

    def drop(self, scores: pd.DataFrame | None) -> pd.DataFrame | None:
        """`scores` (any subject: the person's or the controls') without the left-out wordings of
        testable facts; an untestable fact keeps its rows (its verdict says why it is not evidence)."""
        if scores is None or not len(scores) or not len(self.wordings):
            return scores
        left_out = self.wordings[~self.wordings["property"].isin(self.untestable)]
        keys = set(zip(left_out["property"], left_out["variant_id"].astype(int)))
        keep = [(p, int(v)) not in keys for p, v in zip(scores["property"], scores["variant_id"])]
        return scores[keep]

    def removed(self, prop: str) -> list[dict]:
        """One property's left-out wordings: variant_id, kind, rule and detail."""
        rows = self.wordings[self.wordings["property"] == prop]
        return [{"variant_id": int(r["variant_id"]), "kind": r["kind"], "rule": r["rule"], "detail": r["detail"]}
                for r in rows.to_dict("records")]


def words(text: str) -> list[str]:
    """Letters-and-digits words, accents stripped and case folded (`labels.fold`: "Kraków" -> "krakow")."""
    return fold(text).replace("_", " ").split()


def shows(text: str, value: str) -> bool:
    """Whether `text` shows `value`: each of the value's words of MIN_WORD or more characters is a
    word of the text, or the start of one that begins with STEM_SHARE of it; numbers only whole.
    A value with no such word (e.g. "3", "Go") is never counted as shown."""
    wanted = [w for w in words(value) if len(w) >= MIN_WORD]
    if not wanted:
        return False
    have = set(words(text))

    def found(word: str) -> bool:
        if word in have:
            return True
        if word.isdigit():
            return False
        stem = word[:max(MIN_WORD, math.ceil(STEM_SHARE * len(word)))]
        return any(h.startswith(stem) for h in have)

    return all(found(w) for w in wanted)


def told_about(template: str, subject: str) -> str:
    """What a wording tells about the person: the name, and the context sentences that come before
    the sentence holding the value (the contextualized wording's other facts)."""
    at = template.find(VALUE)
    end = template.rfind(". ", 0, at) if at >= 0 else -1
    context = render(template[:end + 1], subject, None) if end >= 0 else ""
    return f"{subject} {context}".strip()


def find_giveaways(canaries: pd.DataFrame, value_aliases: Mapping[str, Sequence[str]] | None = None,
                   property_labels: Mapping[str, str] | None = None) -> Giveaways:
    """The wordings of `canaries` (one person's: subject, template, ground truth, context) that
    show a true value or alias (`shows`) or state a fact that can imply it (`IMPLIED_BY`)."""
    if canaries is None or not len(canaries):
        return Giveaways()
    value_aliases = value_aliases or {}
    labels = property_labels or {}
    rows = []
    for c in canaries.to_dict("records"):
        targets = [*(str(t) for t in c["ground_truth_labels"]),
                   *(a for v in c["ground_truth"] for a in value_aliases.get(v, ()))]
        told = told_about(c["template"], c["subject"])
        shown = next((t for t in targets if t and shows(told, t)), None)
        base = {"property": c["property"], "variant_id": int(c["variant_id"]), "kind": c["kind"]}
        if shown is not None:
            rows.append({**base, "rule": SHOWN, "detail": f"it shows \u201c{shown}\u201d"})
            continue
        implying = [p for p in _listed(c.get("context_properties")) if p in IMPLIED_BY.get(c["property"], ())]
        if implying:
            named = ", ".join(labels.get(p, p) for p in implying)
            rows.append({**base, "rule": IMPLIED, "detail": f"it states the {named}, which can imply the value"})
    wordings = pd.DataFrame(rows, columns=GIVEAWAY_COLUMNS)
    scored = canaries[~canaries["kind"].isin(CONTEXTUALIZED_KINDS)].groupby("property")["variant_id"].nunique()
    flagged = wordings[~wordings["kind"].isin(CONTEXTUALIZED_KINDS)].groupby("property")["variant_id"].nunique()
    untestable = frozenset(p for p, n in flagged.items() if n >= scored.get(p, 0) > 0)
    return Giveaways(wordings, untestable)


def _listed(value) -> list[str]:
    """A list cell (list, tuple or numpy array after a Parquet round trip; None/NaN: empty)."""
    if value is None or isinstance(value, float):
        return []
    return [str(v) for v in value]
