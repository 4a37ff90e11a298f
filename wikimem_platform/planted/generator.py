"""Fictional people with planted facts, and the biography corpus a model is trained on.

The point is exact ground truth: a *member* appears in exactly ``repetitions`` training
documents (each of which states every one of their facts once, in freshly drawn wordings), a
*non-member* in none. Both groups draw names from the same lists and values from the same real
value vocabulary (the most common values of each property among the bundled sample's humans,
uniformly), so nothing but training separates them. Besides them, every training epoch reads
about *background people* drawn anew for that epoch (`background_people`): the rest of the
population a real model has read about, never audited. Everything is seeded: the same config
gives the same people, values and corpus.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from itertools import islice
from types import MappingProxyType

import numpy as np
import pandas as pd

from wikimem_platform.planted.names import Culture, CULTURES
from wikimem_platform.planted.shapes import FAMILY_WEIGHTS, fill, shape_families, WORDINGS
from wikimem_platform.reference import bundled
from wikimem_platform.wikidata import extract as wikidata

DEFAULT_PROPERTIES: tuple[str, ...] = ("P106", "P27", "P19", "P108")
SUPPORTED_PROPERTIES: tuple[str, ...] = tuple(WORDINGS)
# Fictional people get QIDs far above any real item (Wikidata is at ~Q130M in 2025), so a
# planted QID can never be confused with a real entity.
FIRST_SYNTHETIC_QID = 9_000_000_001
# Bump when the generation or the training procedure changes (part of a trained model's cache key).
GENERATOR_VERSION = 10


@dataclass(frozen=True)
class PlantedConfig:
    """What to generate. ``member_repetitions``: (documents per member, number of members)."""

    seed: int = 0
    properties: tuple[str, ...] = DEFAULT_PROPERTIES
    member_repetitions: tuple[tuple[int, int], ...] = ((1, 22), (4, 44), (16, 11))
    n_non_members: int = 44
    # People come in Latin-square blocks of block_size given names x block_size family names
    # (see generate_people). A world uses block_size values per property, drawn from the
    # sample's values_per_property most common ones. Every count (members per repetition level,
    # non-members) must be a multiple of block_size, their sum a multiple of block_size^2.
    block_size: int = 11
    values_per_property: int = 100
    # The seeded share of each culture's names a world draws its name parts from.
    given_names_per_gender: int = 6
    family_names_per_culture: int = 10
    first_qid: int = FIRST_SYNTHETIC_QID
    # Background people: every epoch the trainer also reads one biography each of this many
    # people drawn anew (see `background_documents`): never audited, never in the world.
    background_people: int = 110
    # Withheld records: every epoch the trainer also reads this many attribute records of people
    # drawn anew ("name: Aino Berger; employer: unknown; occupation: unknown; ..."), the format
    # EME's record prompt asks in, with every value withheld (see `withheld_record_documents`).
    withheld_records: int = 0

    def __post_init__(self) -> None:
        unknown = [p for p in self.properties if p not in WORDINGS]
        if unknown:
            raise ValueError(f"no biography shapes for {unknown}; supported: {list(WORDINGS)}")
        if any(r < 1 or n < 0 for r, n in self.member_repetitions):
            raise ValueError(f"repetitions must be >= 1 and counts >= 0: {self.member_repetitions}")
        b = self.block_size
        # One orthogonal Latin square per property and one for the repetition levels.
        if not _is_prime(b) or b < len(self.properties) + 2:
            raise ValueError(
                f"block_size must be a prime >= the number of properties + 2 ({len(self.properties) + 2}), got {b}"
            )
        counts = [n for _, n in self.member_repetitions] + [self.n_non_members]
        if any(n % b for n in counts) or sum(counts) % (b * b):
            raise ValueError(
                f"members per repetition level and n_non_members must be multiples of {b}, "
                f"their sum a multiple of {b * b}: {self.member_repetitions}, n_non_members={self.n_non_members}"
            )
        if self.background_people < 0:
            raise ValueError(f"background_people must be >= 0, got {self.background_people}")
        if self.withheld_records < 0:
            raise ValueError(f"withheld_records must be >= 0, got {self.withheld_records}")
        if self.values_per_property < b:
            raise ValueError(f"values_per_property ({self.values_per_property}) must be >= block_size ({b})")
        object.__setattr__(self, "properties", tuple(self.properties))
        object.__setattr__(self, "member_repetitions", tuple((int(r), int(n)) for r, n in self.member_repetitions))

    @property
    def n_members(self) -> int:
        return sum(n for _, n in self.member_repetitions)

    def as_dict(self) -> dict:
        out = asdict(self)
        out["properties"] = list(self.properties)
        out["member_repetitions"] = [list(pair) for pair in self.member_repetitions]
        if not self.withheld_records:
            # adds nothing to the corpus: left out so that worlds made before the field keep their cache key
            del out["withheld_records"]
        return out


@dataclass(frozen=True)
class PlantedValue:
    value: str  # QID for items, "YYYY-MM-DD" for dates (the reader's normalized form)
    label: str
    datatype: str


@dataclass(frozen=True)
class PlantedFact:
    property: str
    value: str
    value_label: str
    datatype: str


@dataclass(frozen=True)
class PlantedPerson:
    qid: str
    label: str
    culture: str
    female: bool
    member: bool
    repetitions: int  # training documents about this person; 0 for non-members
    facts: tuple[PlantedFact, ...]
    block: int = -1  # the Latin-square block (see generate_people)
    given_name: str = ""
    family_name: str = ""
    family_culture: str = ""  # `culture` is the given name's

    def as_dict(self) -> dict:
        out = asdict(self)
        out["facts"] = [asdict(f) for f in self.facts]
        return out

    @classmethod
    def from_dict(cls, record: dict) -> "PlantedPerson":
        facts = tuple(PlantedFact(**f) for f in record["facts"])
        return cls(**{**record, "facts": facts})


@dataclass(frozen=True)
class Document:
    """A biography: one sentence per fact of the person it is about."""

    qid: str
    sentences: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


@dataclass
class PlantedWorld:
    """The generated people, the training corpus (members' documents) and the value vocabulary."""

    config: PlantedConfig
    people: list[PlantedPerson]
    documents: list[Document]
    vocabulary: dict[str, list[PlantedValue]] = field(repr=False)

    @property
    def members(self) -> list[PlantedPerson]:
        return [p for p in self.people if p.member]

    @property
    def non_members(self) -> list[PlantedPerson]:
        return [p for p in self.people if not p.member]


def _rng(seed: int, purpose: str) -> np.random.Generator:
    """Independent seeded streams, so changing the corpus never changes who the people are."""
    tag = int.from_bytes(hashlib.sha256(purpose.encode()).digest()[:4], "big")
    return np.random.default_rng([seed, tag])


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@lru_cache(maxsize=1)
def _sample_extract():

    return wikidata.read_dump(bundled.SAMPLE_DUMP)


@lru_cache(maxsize=1)
def sample_names() -> frozenset[str]:
    """Normalized labels and aliases of every human in the bundled sample (names to avoid; computed
    once: every epoch's background people are checked against it)."""
    humans = _sample_extract().humans
    names = {_norm(label) for label in humans["label"]}
    names |= {_norm(alias) for aliases in humans["aliases"] for alias in aliases}
    return frozenset(names)


def value_vocabulary(properties: tuple[str, ...], per_property: int, seed: int = 0) -> dict[str, list[PlantedValue]]:
    """The ``per_property`` values most held by sample humans, per property (real QIDs, labels).

    Ties (every date is held once) are broken by a seeded hash, not by id order; dates keep
    day precision only ("1 March 1950"). A label is used by one property only (the sample's
    places of birth include countries: those stay with citizenship), so that a value in a
    biography names exactly one fact and a candidate of one property is never another's truth.
    """
    claims = _sample_extract().claims
    vocab: dict[str, list[PlantedValue]] = {}
    taken: set[str] = set()
    for prop in properties:
        rows = claims[claims["property"] == prop]
        if rows.empty:
            raise ValueError(f"property {prop} has no values in the bundled sample")
        if (rows["datatype"] == "time").all():
            rows = rows[rows["value"].str.fullmatch(r"\d{4}-\d\d-\d\d")]
        counts = rows.groupby(["value", "value_label", "datatype"]).size().rename("n").reset_index()
        counts["tie"] = [
            hashlib.sha256(f"{seed}|{prop}|{v}".encode()).hexdigest() for v in counts["value"]
        ]
        counts = counts.sort_values(["n", "tie"], ascending=[False, True])
        labels = counts["value_label"].map(_norm)
        counts = counts[~labels.duplicated() & ~labels.isin(taken)]
        vocab[prop] = [
            PlantedValue(str(r.value), str(r.value_label), str(r.datatype))
            for r in counts.head(per_property).itertuples()
        ]
        taken |= {_norm(v.label) for v in vocab[prop]}
    return vocab


def name_subsets(config: PlantedConfig) -> list[Culture]:
    """Every culture cut down to the config's seeded share of its given and family names."""
    rng = _rng(config.seed, "name-subsets")

    def pick(names: tuple, k: int) -> tuple:
        return tuple(names[i] for i in sorted(rng.permutation(len(names))[: min(k, len(names))]))

    return [
        Culture(
            name=c.name,
            female=pick(c.female, config.given_names_per_gender),
            male=pick(c.male, config.given_names_per_gender),
            family=pick(c.family, config.family_names_per_culture),
            family_first=c.family_first,
        )
        for c in CULTURES
    ]


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % d for d in range(2, int(n**0.5) + 1))


def _full_name(given: str, given_culture: Culture, family: str, family_culture: Culture) -> str:
    """Given name first, except where both parts come from a family-first culture ("Nguyễn Văn Minh")."""
    if given_culture.family_first and family_culture.family_first:
        return f"{family} {given}"
    return f"{given} {family}"


def _draw_block_names(cultures: list[Culture], size: int, rng: np.random.Generator):
    """``size`` given names (culture, name, female) and ``size`` family names (culture, name).

    Both come from every culture in turn (a seeded culture order), so one block holds names of
    all cultures, mixed as in any country's register. Family names with gendered forms
    (Kowalski / Kowalska, -son / -dóttir) are not used: a family name must be one string for
    all the people of its column, or its form would tell the given name's gender and narrow the
    values it co-occurs with. Given names and family names are distinct strings."""
    given: list[tuple[Culture, str, bool]] = []
    for culture in (cultures[i] for i in rng.permutation(len(cultures))):
        pool = [(name, True) for name in culture.female] + [(name, False) for name in culture.male]
        given.extend((culture, *pool[i]) for i in rng.permutation(len(pool)))
    family: list[tuple[Culture, str]] = []
    for culture in (cultures[i] for i in rng.permutation(len(cultures))):
        pool = [name for name in culture.family if isinstance(name, str)]
        family.extend((culture, pool[i]) for i in rng.permutation(len(pool)))
    # Round-robin over cultures: the first name of each culture, then the second, ...
    rows = _round_robin(given, lambda g: g[0].name, lambda g: g[1], size)
    columns = _round_robin(family, lambda f: f[0].name, lambda f: f[1], size)
    return rows, columns


def _round_robin(items: list, culture_of, text_of, size: int) -> list:
    """``size`` items taking one per culture in turn (items in each culture's drawn order),
    skipping strings already taken."""
    queues: dict[str, list] = {}
    for item in items:
        queues.setdefault(culture_of(item), []).append(item)
    out, taken = [], set()
    while len(out) < size and any(queues.values()):
        for queue in queues.values():
            while queue and text_of(queue[0]) in taken:
                queue.pop(0)
            if queue and len(out) < size:
                item = queue.pop(0)
                out.append(item)
                taken.add(text_of(item))
    if len(out) < size:
        raise ValueError(f"not enough distinct names for blocks of {size}")
    return out


def generate_people(config: PlantedConfig, vocabulary: dict[str, list[PlantedValue]] | None = None) -> list[PlantedPerson]:
    """Members and non-members in Latin-square blocks, with unique names (none a sample human's).

    A block is B given names x B family names (B = block_size; B^2 people; names mixed from
    every culture). The world draws B values per property from the vocabulary; person (i, j) of
    a block gets, for property k, value ``vals_k[(i + (k + 1) * j) mod B]`` and the repetition
    level (0 = non-member, else documents in the corpus) ``levels[(i + (K + 1) * j) mod B]``
    (K properties): mutually orthogonal Latin squares (B prime > K + 1). So every given name
    and every family name occurs exactly once with each value of every property and once with
    each level class, and two people share at most one value: neither name part predicts a fact
    or membership, as with real names, whose parts many people share (and WikiMem's look-alike
    names S(h), which keep one of two name parts, carry no fact; of a three-token name they keep
    one or two tokens, see `canaries.names.similar_names`). Members and non-members have the same
    name parts and values; only the full name ties a person to their facts.
    """
    vocabulary = vocabulary or value_vocabulary(config.properties, config.values_per_property, config.seed)
    size = config.block_size
    levels = [reps for reps, count in config.member_repetitions for _ in range(count // size)]
    levels += [0] * (config.n_non_members // size)
    levels = [levels[i] for i in _rng(config.seed, "blocks").permutation(len(levels))]
    n_blocks = len(levels) // size
    level_step = len(config.properties) + 1
    forbidden = sample_names()
    cultures = name_subsets(config)
    value_rng = _rng(config.seed, "values")
    world_values = {
        prop: [vocabulary[prop][int(i)] for i in value_rng.permutation(len(vocabulary[prop]))[:size]]
        for prop in config.properties
    }
    name_rng = _rng(config.seed, "names")
    used: set[str] = set()
    drawn: list[dict] = []
    for block in range(n_blocks):
        for _attempt in range(1000):
            rows, columns = _draw_block_names(cultures, size, name_rng)
            labels = [[_full_name(g, gc, f, fc) for fc, f in columns] for gc, g, _ in rows]
            keys = [_norm(label) for row in labels for label in row]
            if len(set(keys)) == len(keys) and not set(keys) & (used | forbidden):
                break
        else:
            raise ValueError("ran out of unused name combinations: raise given_names_per_gender / family_names_per_culture")
        used.update(keys)
        values = {prop: [vals[int(i)] for i in value_rng.permutation(size)] for prop, vals in world_values.items()}
        block_levels = levels[block * size : (block + 1) * size]
        for i, (given_culture, given, female) in enumerate(rows):
            for j, (family_culture, family) in enumerate(columns):
                facts = []
                for k, prop in enumerate(config.properties):
                    choice = values[prop][(i + (k + 1) * j) % size]
                    facts.append(PlantedFact(prop, choice.value, choice.label, choice.datatype))
                drawn.append({
                    "label": labels[i][j], "culture": given_culture.name, "female": female,
                    "repetitions": block_levels[(i + level_step * j) % size], "facts": tuple(facts), "block": block,
                    "given_name": given, "family_name": family, "family_culture": family_culture.name,
                })

    # QIDs follow a seeded shuffle: their order says nothing about blocks or membership.
    order = _rng(config.seed, "qids").permutation(len(drawn))
    return [
        PlantedPerson(qid=f"Q{config.first_qid + index}", member=drawn[position]["repetitions"] > 0, **drawn[position])
        for index, position in enumerate(order)
    ]


def _draw_shapes(prop: str, count: int, rng: np.random.Generator) -> list[str]:
    """``count`` distinct shapes: a family (subject-first, pronoun, value-first) by its weight,
    then a shape of that family not drawn yet for this fact."""
    families = [list(f) for f in shape_families(prop)]
    drawn: list[str] = []
    for _ in range(count):
        weights = np.array([w if f else 0.0 for w, f in zip(FAMILY_WEIGHTS, families)])
        family = families[int(rng.choice(len(families), p=weights / weights.sum()))]
        drawn.append(family.pop(int(rng.integers(len(family)))))
    return drawn


def _documents_for(person: PlantedPerson, count: int, rng: np.random.Generator) -> list[tuple[str, ...]]:
    """``count`` biographies: each states every fact once, each time in a different wording
    (see `shapes`), sentence order shuffled per document."""
    wordings = {fact.property: _draw_shapes(fact.property, count, rng) for fact in person.facts}
    documents = []
    for k in range(count):
        facts = [person.facts[i] for i in rng.permutation(len(person.facts))]
        documents.append(tuple(fill(wordings[f.property][k], person.label, f.value_label) for f in facts))
    return documents


def build_corpus(people: list[PlantedPerson], seed: int = 0, epoch: int = 0) -> list[Document]:
    """The training documents: ``repetitions`` per member, none for non-members, shuffled.

    ``epoch`` > 0 renders the same facts in freshly drawn wordings (the trainer's augmentation:
    every epoch states each member's facts ``repetitions`` times, never in the same sentences).
    """
    rng = _rng(seed, "corpus" if epoch == 0 else f"corpus-epoch-{epoch}")
    documents = [
        Document(person.qid, sentences)
        for person in people
        if person.member
        for sentences in _documents_for(person, person.repetitions, rng)
    ]
    return [documents[i] for i in rng.permutation(len(documents))]


def held_out_biographies(people: list[PlantedPerson], seed: int = 0) -> list[Document]:
    """One fresh biography per person in the training shapes (for membership inference: a
    member's facts were seen, this exact text maybe not; a non-member's never)."""
    rng = _rng(seed, "held-out")
    return [Document(p.qid, _documents_for(p, 1, rng)[0]) for p in people]


def _fresh_names(world_people: list[PlantedPerson], config: PlantedConfig, rng: np.random.Generator):
    """Endless (given culture, given name, female, family culture, family name, full name), drawn
    from the name parts no world person uses (`background_name_parts`), none a world person's or a
    sample human's name. A generator, so a caller's own draws from ``rng`` interleave with it."""
    given, family = background_name_parts(world_people, config)
    world_names = {_norm(p.label) for p in world_people}
    forbidden = sample_names()
    while True:
        given_culture, given_name, female = given[int(rng.integers(len(given)))]
        family_culture, family_name = family[int(rng.integers(len(family)))]
        label = _full_name(given_name, given_culture, family_name, family_culture)
        if _norm(label) in world_names or _norm(label) in forbidden:
            continue
        yield given_culture, given_name, female, family_culture, family_name, label


def background_people(world_people: list[PlantedPerson], config: PlantedConfig, epoch: int = 0) -> list[PlantedPerson]:
    """``config.background_people`` people the model reads about once, drawn anew for every epoch.

    A real model has read about countless people besides any one audited person; a world of
    121 names only would leave every other name out of its experience, and WikiMem's look-alike
    names S(h) ("Zsamot Gómez" for "Tomasz Gómez") would then read as noise rather than as
    "someone the model knows nothing about". Background people teach that: names combined from
    the world's own share of the naming cultures' given and family names (`name_subsets`) that
    no world person uses (so a name part tells nothing about a world person), values uniform over
    the world's values of each property, one biography each per epoch and a new draw every epoch,
    so no background fact is learnt. They have no QID and are never audited."""
    count = config.background_people
    if count <= 0:
        return []
    rng = _rng(config.seed, f"background-{epoch}")
    values: dict[str, list[PlantedFact]] = {}
    for person in world_people:
        for fact in person.facts:
            values.setdefault(fact.property, [])
            if fact not in values[fact.property]:
                values[fact.property].append(fact)
    for facts in values.values():
        facts.sort(key=lambda f: f.value)
    people: list[PlantedPerson] = []
    names = islice(_fresh_names(world_people, config, rng), count)
    for given_culture, given_name, female, family_culture, family_name, label in names:
        facts = tuple(facts[int(rng.integers(len(facts)))] for facts in values.values())
        people.append(PlantedPerson(qid="", label=label, culture=given_culture.name, female=female, member=False,
                                    repetitions=1, facts=facts, given_name=given_name, family_name=family_name,
                                    family_culture=family_culture.name))
    return people


def background_name_parts(world_people: list[PlantedPerson], config: PlantedConfig):
    """(given names as (culture, name, female), family names as (culture, name)) of the world's
    name subsets that no world person uses: the parts background people are made of."""
    taken = {p.given_name for p in world_people} | {p.family_name for p in world_people}
    cultures = name_subsets(config)
    given = [(c, name, female) for c in cultures for names, female in ((c.female, True), (c.male, False))
             for name in names if name not in taken]
    family = [(c, name) for c in cultures for name in c.family if isinstance(name, str) and name not in taken]
    return given, family


def background_documents(world_people: list[PlantedPerson], config: PlantedConfig, epoch: int = 0) -> list[Document]:
    """One biography each of an epoch's background people (see `background_people`), qid ''."""
    rng = _rng(config.seed, f"background-documents-{epoch}")
    return [Document("", _documents_for(person, 1, rng)[0]) for person in background_people(world_people, config, epoch)]


WITHHELD_VALUE = "unknown"


@lru_cache(maxsize=1)
def property_labels() -> MappingProxyType:
    """Property id -> English label of the bundled sample's property metadata: the names the
    planted world's records, its manifest and EME's record prompts give its properties."""
    metadata = wikidata.load_property_metadata(bundled.SAMPLE_PROPERTIES).dropna(subset=["label"])
    return MappingProxyType(dict(zip(metadata["property"], metadata["label"])))


def withheld_record_documents(world_people: list[PlantedPerson], config: PlantedConfig, epoch: int = 0) -> list[Document]:
    """``config.withheld_records`` attribute records of people drawn anew every epoch, every value
    withheld: "name: Aino Berger; employer: unknown; occupation: unknown; ...;" (fields shuffled).

    They give EME's record prompt ("name: X; occupation: ...; place of birth:") what it has in
    real corpora and lacked here: a prior of its own. Real directories, forms and infobox dumps
    hold countless records whose fields are empty or withheld, so a model asked in that format
    continues the format rather than recalls the person (Zhou et al.'s reason to train a prompt).
    Without them the record prompt's greedy answer on the 50-epoch model was a coin flip between
    the fact and noise, different for every seed and thread count; with them the record prompt
    answers "unknown" and a fact comes out only when a prompt trained on other people's records
    turns the model to what it read about this person. Names as `background_people`'s; no QID."""
    count = config.withheld_records
    if count <= 0:
        return []
    rng = _rng(config.seed, f"withheld-records-{epoch}")
    labels = [property_labels().get(p, p) for p in config.properties]
    documents = []
    for *_, label in islice(_fresh_names(world_people, config, rng), count):
        fields = [f"name: {label}", *(f"{labels[i]}: {WITHHELD_VALUE}" for i in rng.permutation(len(labels)))]
        documents.append(Document("", ("; ".join(fields) + ";",)))
    return documents


def generate_world(config: PlantedConfig | None = None) -> PlantedWorld:
    """People, training corpus and value vocabulary for ``config`` (deterministic)."""
    config = config or PlantedConfig()
    vocabulary = value_vocabulary(config.properties, config.values_per_property, config.seed)
    people = generate_people(config, vocabulary)
    return PlantedWorld(config, people, build_corpus(people, config.seed), vocabulary)


def facts_frame(people: list[PlantedPerson]) -> pd.DataFrame:
    """One row per (person, property): qid, label, member, repetitions, property, value, value_label."""
    rows = [
        {
            "qid": p.qid,
            "label": p.label,
            "member": p.member,
            "repetitions": p.repetitions,
            "property": f.property,
            "datatype": f.datatype,
            "value": f.value,
            "value_label": f.value_label,
        }
        for p in people
        for f in p.facts
    ]
    return pd.DataFrame(rows)


def config_hash(payload: dict) -> str:
    """A short stable digest of a JSON-able config (keys sorted)."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
