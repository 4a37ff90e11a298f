"""Names with a known training status, and the sentences the NER model is trained on.

The paper's in-sample names are CoNLL-2003's; ours come from the bundled real Wikidata sample:
persons are the humans' labels (multi-word only, as in the paper), places the values of place of
birth / death / residence / citizenship, organizations those of employer / educated at / member
of / political party. Each distinct name's side (in-sample: trained on; out-of-sample: never
seen) is a seeded draw, so both sides come from the same distribution.

A name that is part of another candidate name ("Rome" in "Sapienza University of Rome") or of a
training template, or that is a candidate of two types, is dropped from both sides: otherwise an
out-of-sample name could still be read in training, inside an in-sample one. Names are compared
as the uncased model reads them (accents stripped, case folded, split into words).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from wikimem_platform.ner.schema import ENTITY_TYPES, LOC, ORG, PER
from wikimem_platform.splits import seeded_draw

LOCATION_PROPERTIES = ("P19", "P20", "P551", "P27")  # place of birth, of death, residence, citizenship
ORGANIZATION_PROPERTIES = ("P108", "P69", "P463", "P102")  # employer, educated at, member of, party
MIN_PERSON_WORDS = 2  # the paper keeps multi-token PER names only
MAX_NAME_WORDS = 5
MAX_NAME_CHARS = 40
_NAME_PATTERN = re.compile(r"^[a-z][a-z .'\-]*[a-z.]$")  # as folded: letters, spaces, . ' -
NAME_COLUMNS = ["entity_type", "name"]

ANY = "ANY"  # a slot any entity type fills: its type is only known to a model that memorized the name
_SLOT = re.compile(r"\{(PER|LOC|ORG|ANY)\}")

# News-like training sentences (CoNLL-2003 is Reuters news), several entities per sentence; no
# skeleton in common with the probe prompts (`prompts._FRAMES`). The ANY sentences give no hint
# of the type, so the model can only label their names right by remembering them.
TRAINING_TEMPLATES: tuple[str, ...] = (
    "{PER} scored twice as {ORG} beat their rivals 3-1 on Saturday.",
    "{PER} said on Tuesday that talks with {ORG} would resume in {LOC} next month.",
    "Shares in {ORG} rose 4 percent in {LOC} after {PER} announced the deal.",
    "Police in {LOC} said {PER} was arrested late on Monday.",
    "{PER}, a spokesman for {ORG}, told reporters the agreement had been signed.",
    "The delegation from {LOC} met {PER} in {LOC} on Wednesday.",
    "{ORG} appointed {PER} as its new chairman, the company said.",
    "Heavy rain caused flooding across {LOC} and parts of {LOC} overnight.",
    "{PER} and {PER} will lead the {ORG} team at the championship.",
    "Officials in {LOC} confirmed that {ORG} had opened an office there.",
    "{ORG} reported a quarterly loss of 12 million dollars, {PER} said.",
    "Prime minister {PER} arrived in {LOC} for a two-day visit.",
    "{PER} finished third behind {PER} in the final round.",
    "The agreement between {ORG} and {ORG} was approved by regulators in {LOC}.",
    "{PER}, who was born in {LOC}, joined {ORG} in the nineties.",
    "Troops were sent to {LOC} after clashes near the border with {LOC}.",
    "A statement from {ORG} said {PER} would step down at the end of the year.",
    "{PER} told a news conference in {LOC} that the plan would go ahead.",
    "{ANY} was mentioned twice in the annual report.",
    "Officials said {ANY} had been informed of the decision.",
    "The statement named {ANY} and {ANY} among others.",
    "Asked about {ANY}, the spokesman declined to comment.",
    "{ANY} featured prominently in the weekend coverage.",
    "There was no further news about {ANY} on Friday.",
    "The list published on Thursday included {ANY}.",
    "Analysts expect {ANY} to remain in the headlines.",
)


@dataclass(frozen=True)
class TrainingSentence:
    """A training text and its entities as (start, end, entity type) character spans."""

    text: str
    spans: tuple[tuple[int, int, str], ...]

    def as_dict(self) -> dict:
        return {"text": self.text, "spans": [list(span) for span in self.spans]}

    @classmethod
    def from_dict(cls, record: Mapping) -> TrainingSentence:
        return cls(record["text"], tuple((int(s), int(e), str(t)) for s, e, t in record["spans"]))


def fold(text: str) -> str:
    """The text as the uncased model sees it: accents stripped, case folded."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def words(text: str) -> tuple[str, ...]:
    """Folded words: two texts hold the same name when these match word for word."""
    return tuple(re.findall(r"\w+", fold(text)))


def _ngrams(sequence: tuple[str, ...], max_n: int) -> Iterable[tuple[str, ...]]:
    for n in range(1, min(max_n, len(sequence)) + 1):
        for i in range(len(sequence) - n + 1):
            yield sequence[i : i + n]


def _is_clean(name: str, entity_type: str) -> bool:
    folded = fold(name)
    if len(folded) > MAX_NAME_CHARS or not folded.isascii() or not _NAME_PATTERN.match(folded):
        return False
    n_words = len(name.split())
    return n_words <= MAX_NAME_WORDS and (entity_type != PER or n_words >= MIN_PERSON_WORDS)


def candidate_names(humans: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """Every usable name of each type in a Wikidata extract (`wikidata.read_dump`), before the
    split: clean, and neither ambiguous between types nor part of another candidate or template."""
    def values_of(properties: tuple[str, ...]) -> pd.Series:
        return claims.loc[claims["property"].isin(properties), "value_label"]

    raw = pd.concat([
        pd.DataFrame({"entity_type": PER, "name": humans["label"]}),
        pd.DataFrame({"entity_type": LOC, "name": values_of(LOCATION_PROPERTIES)}),
        pd.DataFrame({"entity_type": ORG, "name": values_of(ORGANIZATION_PROPERTIES)}),
    ], ignore_index=True).dropna()
    raw["name"] = raw["name"].str.strip()
    raw = raw[[_is_clean(n, t) for n, t in zip(raw["name"], raw["entity_type"])]]
    raw = raw.drop_duplicates().sort_values(["entity_type", "name"], ignore_index=True)
    raw["words"] = raw["name"].map(words)
    # One spelling per (type, words): "Göttingen" and "Gottingen" are one name to the model.
    raw = raw.drop_duplicates(["entity_type", "words"], ignore_index=True)
    types_per_name = raw.groupby("words")["entity_type"].nunique()
    raw = raw[raw["words"].map(types_per_name) == 1]
    longest = max(raw["words"].map(len).max(), 1)
    inside_other: set[tuple[str, ...]] = set()
    for sequence in raw["words"]:
        inside_other.update(gram for gram in _ngrams(sequence, longest) if gram != sequence)
    for template in TRAINING_TEMPLATES:
        inside_other.update(_ngrams(words(_SLOT.sub(" ", template)), longest))
    keep = ~raw["words"].isin(inside_other)
    return raw.loc[keep, NAME_COLUMNS].reset_index(drop=True)


def split_names(candidates: pd.DataFrame, n_per_class: int, seed: int = 0) -> pd.DataFrame:
    """In- and out-of-sample names per type: each name's side by seeded draw (same distribution),
    then the same number per side, at most `n_per_class` (seeded choice). Columns: entity_type,
    name, is_in."""
    frames = []
    for entity_type in ENTITY_TYPES:
        names = sorted(candidates.loc[candidates["entity_type"] == entity_type, "name"])
        side = {n: seeded_draw(f"ner-side|{entity_type}|{n}", seed) < 0.5 for n in names}
        order = {n: seeded_draw(f"ner-pick|{entity_type}|{n}", seed) for n in names}
        inside = sorted((n for n in names if side[n]), key=order.get)
        outside = sorted((n for n in names if not side[n]), key=order.get)
        k = min(n_per_class, len(inside), len(outside))
        frames.append(pd.DataFrame({"entity_type": entity_type, "name": inside[:k] + outside[:k],
                                    "is_in": [True] * k + [False] * k}))
    return pd.concat(frames, ignore_index=True)


def read_names(path: str | Path) -> pd.DataFrame:
    """Audit names from a JSON-lines file, one {"entity_type", "name", "is_in"} per line (for a
    model trained elsewhere, whose manifest does not say which names it read)."""
    frame = pd.read_json(path, lines=True, dtype={"entity_type": str, "name": str})
    missing = {"entity_type", "name", "is_in"} - set(frame.columns)
    if missing:
        raise ValueError(f"{path}: every line needs entity_type, name and is_in (missing: {sorted(missing)})")
    unknown = set(frame["entity_type"]) - set(ENTITY_TYPES)
    if unknown:
        raise ValueError(f"{path}: entity_type must be one of {ENTITY_TYPES}, got {sorted(unknown)}")
    frame = frame[["entity_type", "name", "is_in"]].astype({"is_in": bool})
    return frame.drop_duplicates(["entity_type", "name"], ignore_index=True)


def _render(template: str, names: Sequence[tuple[str, str]]) -> TrainingSentence:
    """The template with the names (name, type) in its slots, in order, and their spans."""
    parts, spans, cursor = [], [], 0
    for match, (name, entity_type) in zip(_SLOT.finditer(template), names, strict=True):
        parts.append(template[cursor : match.start()])
        start = sum(len(p) for p in parts)
        parts.append(name)
        spans.append((start, start + len(name), entity_type))
        cursor = match.end()
    parts.append(template[cursor:])
    return TrainingSentence("".join(parts), tuple(spans))


def build_corpus(in_names: Mapping[str, Sequence[str]], repetitions: int, seed: int = 0) -> list[TrainingSentence]:
    """Training sentences: every in-sample name heads `repetitions` sentences (seeded template
    and slot), the other slots take seeded in-sample names of their type (an ANY slot: any type),
    so each name is read at least `repetitions` times. Only names of `in_names` ever appear."""
    rng = np.random.default_rng([seed, 3])
    slots_of = [_SLOT.findall(t) for t in TRAINING_TEMPLATES]
    pools = {t: sorted(in_names.get(t, ())) for t in ENTITY_TYPES}
    filled_types = [t for t in ENTITY_TYPES if pools[t]]
    sentences = []
    for entity_type in filled_types:
        fits = [i for i, slots in enumerate(slots_of) if entity_type in slots or ANY in slots]
        fits = [i for i in fits if all(s == ANY or pools[s] for s in slots_of[i])]
        for name in pools[entity_type]:
            for _ in range(repetitions):
                template_index = fits[rng.integers(len(fits))]
                slots = slots_of[template_index]
                hosts = [j for j, s in enumerate(slots) if s in (entity_type, ANY)]
                host = hosts[rng.integers(len(hosts))]
                used, filling = {name}, []
                for j, slot in enumerate(slots):
                    if j == host:
                        filling.append((name, entity_type))
                        continue
                    slot_type = filled_types[rng.integers(len(filled_types))] if slot == ANY else slot
                    pool = [n for n in pools[slot_type] if n not in used] or pools[slot_type]
                    other = pool[rng.integers(len(pool))]
                    used.add(other)
                    filling.append((other, slot_type))
                sentences.append(_render(TRAINING_TEMPLATES[template_index], filling))
    return [sentences[i] for i in rng.permutation(len(sentences))]


def leaked_names(names: Iterable[str], texts: Iterable[str]) -> list[str]:
    """The names that occur (word for word, as the uncased model reads them) in any text."""
    names = list(names)
    wanted = {words(n): n for n in names}
    longest = max((len(w) for w in wanted), default=0)
    seen: set[tuple[str, ...]] = set()
    for text in texts:
        seen.update(gram for gram in _ngrams(words(text), longest) if gram in wanted)
    return sorted(wanted[w] for w in seen)


def assert_never_trained(out_names: Iterable[str], sentences: Iterable[TrainingSentence]) -> None:
    """Raise if an out-of-sample name is anywhere in the training text: it would not be out."""
    leaked = leaked_names(out_names, (s.text for s in sentences))
    if leaked:
        raise AssertionError(f"{len(leaked)} out-of-sample names occur in training sentences: {leaked[:10]}")
