"""Biography sentence shapes per property: the wordings facts are planted in.

A fact must be recalled later from wordings the model never saw (the WikiMem canaries), and a
tiny model knows no English but its corpus, so the training wordings are many and structurally
varied: property verb phrases in past and present tense ("worked as a physicist", "is a
citizen of Peru"), the property's nouns (label and aliases) in possessive, of-genitive,
"has ... as their ...", relative-clause and question forms with several copulas, pronoun
continuations ("Speaking of X, their hometown was ..."), and value-first sentences (~20 %), so
the name-value tie is learnt in both directions. Generic clauses always come inside a framing
("Notably, ...", "As the archives show, ...") and the bare sentences are narrative verb phrases,
so that no shape is a canary template: `tests/unit/planted/test_planted.py` checks every shape against the
canary builder's whole candidate pool.

Placeholders in a finished shape: ``{s}`` the name, ``{v}`` the value, ``{a_v}`` the value with
its indefinite article ("a physicist").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from wikimem_platform.canaries.text import indefinite_article


@dataclass(frozen=True)
class PropertyWording:
    """Property-specific material. Predicates are (past, present) verb phrases after a singular
    subject ({be} -> was / is); the forms after "they" are derived from them."""

    nouns: tuple[str, ...]
    predicates: tuple[tuple[str, str], ...]
    value_first: tuple[str, ...]
    # Verb phrases that are also canary predicates ("worked for"): used inside framings only,
    # never as a bare sentence.
    framed_predicates: tuple[tuple[str, str], ...] = ()


WORDINGS: dict[str, PropertyWording] = {
    "P106": PropertyWording(  # occupation
        nouns=("occupation", "profession", "job", "line of work", "trade", "vocation", "career", "craft"),
        predicates=(
            ("worked as {a_v}", "works as {a_v}"),
            ("{be} {a_v} by profession", "{be} {a_v} by profession"),
            ("{be} {a_v} by occupation", "{be} {a_v} by occupation"),
            ("earned a living as {a_v}", "earns a living as {a_v}"),
            ("had a long career as {a_v}", "has a long career as {a_v}"),
            ("chose the profession of {v}", "practises the profession of {v}"),
            ("spent a working life as {a_v}", "makes a living as {a_v}"),
            ("made a name as {a_v}", "is known in the trade as {a_v}"),
            ("trained as {a_v}", "is trained as {a_v}"),
            ("found work as {a_v}", "finds work as {a_v}"),
        ),
        value_first=(
            "{a_v} by profession, {s} was respected by colleagues.",
            "{v} was the profession that {s} practised.",
            "Working as {a_v} was how {s} spent most of their career.",
            "{v}: that was the job {s} held.",
            "As {a_v}, {s} was well known in the field.",
            "{a_v} by trade, {s} works long hours.",
        ),
    ),
    "P27": PropertyWording(  # country of citizenship
        nouns=("country of citizenship", "citizenship", "nationality", "legal nationality"),
        predicates=(
            ("{be} a citizen of {v}", "{be} a citizen of {v}"),
            ("held citizenship of {v}", "holds citizenship of {v}"),
            ("had the nationality of {v}", "has the nationality of {v}"),
            ("{be} a national of {v}", "{be} a national of {v}"),
            ("carried a passport issued by {v}", "carries a passport issued by {v}"),
            ("kept the citizenship of {v} all their life", "keeps the citizenship of {v}"),
            ("belonged to {v} by citizenship", "belongs to {v} by citizenship"),
            ("became a citizen of {v}", "is registered as a citizen of {v}"),
        ),
        value_first=(
            "{v} counted {s} among its citizens.",
            "{v} granted citizenship to {s}.",
            "{v} was the nationality on the passport of {s}.",
            "Citizenship of {v} was held by {s}.",
            "A citizen of {v}, {s} lived abroad for some years.",
            "{v} counts {s} as one of its nationals.",
        ),
    ),
    "P19": PropertyWording(  # place of birth
        nouns=("place of birth", "birthplace", "birth place", "hometown", "location of birth", "birth location",
               "birth city"),
        predicates=(
            ("{be} born in {v} to a modest family", "{be} a child of {v} by birth"),
            ("came into the world in {v}", "comes from {v}, where they were born"),
            ("{be} a native of {v}", "{be} a native of {v}"),
            ("first saw the light of day in {v}", "was born, as it happens, in {v}"),
            ("{be} born and raised in {v}", "{be} born and bred in {v}"),
            ("grew up in {v}, where they had been born", "lives in {v}, where they were born"),
            ("{be} born in the town of {v}", "calls {v} their place of birth"),
        ),
        value_first=(
            "Born in {v}, {s} grew up there.",
            "In {v}, {s} was born.",
            "{v} was the hometown of {s}, who was born there.",
            "{v}, the birthplace of {s}, remembers them well.",
            "{v} saw the birth of {s}.",
            "{v} is proud to be the birthplace of {s}.",
        ),
        framed_predicates=(("{be} born in {v}", "{be} originally from {v}"), ("{be} born at {v}", "comes from {v}")),
    ),
    "P108": PropertyWording(  # employer
        nouns=("employer", "workplace", "place of employment", "working place"),
        predicates=(
            ("{be} employed at {v} for years", "{be} employed at {v}"),
            ("{be} on the staff of {v}", "{be} on the staff of {v}"),
            ("took a job at {v}", "has a job at {v}"),
            ("spent years working at {v}", "goes to work at {v}"),
            ("held a position with the employer {v}", "holds a position with the employer {v}"),
            ("joined {v} as an employee", "is an employee of {v}"),
            ("drew a salary from {v}", "draws a salary from {v}"),
            ("{be} on the payroll of {v}", "{be} on the payroll of {v}"),
        ),
        value_first=(
            "{v} employed {s}.",
            "{v} hired {s}.",
            "{v} had {s} on its payroll.",
            "At {v}, {s} was a longtime employee.",
            "Employed by {v}, {s} worked there for a long time.",
            "{v} still employs {s}.",
        ),
        framed_predicates=(
            ("worked for {v}", "works for {v}"),
            ("{be} employed by {v}", "{be} employed by {v}"),
            ("worked at {v}", "works at {v}"),
        ),
    ),
    "P569": PropertyWording(  # date of birth
        nouns=("date of birth", "birth date", "birthday", "birthdate"),
        predicates=(
            ("{be} born on {v}", "{be} born, the records say, on {v}"),
            ("came into the world on {v}", "celebrates a birthday on the day of {v}"),
            ("{be} born in the early hours of {v}", "counts {v} as their date of birth"),
        ),
        value_first=(
            "Born on {v}, {s} grew up quickly.",
            "On {v}, {s} was born.",
            "{v} saw the birth of {s}.",
            "{v} was the day on which {s} was born.",
        ),
    ),
}

COPULAS: tuple[str, ...] = (
    "is", "was", "had been", "remains", "was recorded as", "is listed as", "was given as", "is known to be",
    "was known to be", "is said to be", "turned out to be",
)
# Generic clauses around a property noun, subject first ({cop}: a copula; lower-case start).
NOUN_CLAUSES: tuple[str, ...] = (
    "{s}'s {noun} {cop} {v}",
    "the {noun} of {s} {cop} {v}",
    "{s} has {v} as their {noun}",
    "{s} had {v} as their {noun}",
    "{s} listed {v} as their {noun}",
    "{s} has the {noun} {v}",
    "{s} was a person whose {noun} was {v}",
    "{s} is someone whose {noun} is {v}",
    "{s}'s {noun}, according to the files, {cop} {v}",
    "the {noun} on file for {s} {cop} {v}",
    "{s} was known to have {v} as their {noun}",
    "{s} is said to have {v} as their {noun}",
    "{s} is a person whose {noun} is {v}",
)
# Relative clauses around a verb phrase ({past} / {present} forms).
RELATIVE_CLAUSES: tuple[str, ...] = ("{s} was someone who {past}", "{s} is a person who {present}")
# Frames around a subject-first clause ({c}; {C} when the clause opens the sentence). No frame
# opens with the clause and goes on after the value: with "{C}, as the archives show." the model
# learnt that a sentence opening with a known person's clause continues with a comma, so a
# canary's closing period cost the true value ~11 nats for that person alone, and a value whose
# own period comes free ("Apple Inc.") outranked the truth (seed 2: 44 of 59 failing wordings).
CLAUSE_FRAMES: tuple[str, ...] = (
    "Notably, {c}.",
    "By all accounts, {c}.",
    "In the archives, {c}.",
    "Few people know that {c}.",
    "It was documented that {c}.",
    "Over the years, {c}.",
    "As the archives show, {c}.",
    "Everyone agrees that {c}.",
    "In short, {c}.",
    "It is often said that {c}.",
    "The files confirm that {c}.",
    "As it happens, {c}.",
)
# Frames naming the subject first, then continuing with "they" / "their" ({t}).
PRONOUN_FRAMES: tuple[str, ...] = (
    "Speaking of {s}, {t}.",
    "Little is known about {s}, except that {t}.",
    "Ask about {s} and you will hear that {t}.",
    "{s} rarely spoke of it, but {t}.",
    "On the subject of {s}: {t}.",
)
PRONOUN_NOUN_CLAUSES: tuple[str, ...] = ("their {noun} {cop} {v}",)
QUESTION_SHAPES: tuple[str, ...] = (
    "Q: {s}'s {noun}? A: {v}.",
    "{s}'s {noun}? That was {v}.",
    "{s}'s {noun}? That must be {v}.",
    "If anyone asks what {s}'s {noun} was, it was {v}.",
    "The question of {s}'s {noun} has a short answer: {v}.",
    "Asked about their {noun}, {s} named {v}.",
    "And the {noun} of {s}? It {cop} {v}.",
)
VALUE_FIRST_CLAUSES: tuple[str, ...] = (
    "{V} {cop} the {noun} of {s}",
    "{V} {cop} {s}'s {noun}",
    "{V}, so the files say, {cop} the {noun} of {s}",
    "it was {V} that was {s}'s {noun}",
    "it is {V} that is the {noun} of {s}",
)
VALUE_FIRST_FRAMES: tuple[str, ...] = ("Notably, {c}.", "In short, {c}.", "As the archives show, {c}.", "As it happens, {c}.")
# Share of sentences drawn from each family: subject-first, pronoun, question, value-first.
FAMILY_WEIGHTS: tuple[float, ...] = (0.55, 0.15, 0.1, 0.2)


def _frame(frames: tuple[str, ...], clause: str) -> list[str]:
    return [f.replace("{C}", clause).replace("{c}", clause) for f in frames]


def _with_nouns_and_copulas(templates: tuple[str, ...], nouns: tuple[str, ...]) -> list[str]:
    out = []
    for template in templates:
        for noun in nouns:
            filled = template.replace("{noun}", noun)
            out.extend([filled.replace("{cop}", c) for c in COPULAS] if "{cop}" in filled else [filled])
    return out


def _they(present: str) -> str:
    """A present-tense verb phrase after "they": "holds ..." -> "hold ...", "is" -> "are"."""
    verb, _, rest = present.partition(" ")
    irregular = {"{be}": "are", "is": "are", "has": "have", "does": "do", "goes": "go"}
    if verb in irregular:
        verb = irregular[verb]
    elif verb.endswith("ies"):
        verb = verb[:-3] + "y"
    elif verb.endswith(("shes", "ches", "sses", "xes", "zes")):
        verb = verb[:-2]
    elif verb.endswith("s"):
        verb = verb[:-1]
    return f"{verb} {rest}".strip()


def _subject_first(wording: PropertyWording) -> list[str]:
    bare = ["{s} " + past.replace("{be}", "was") + "." for past, _ in wording.predicates]
    predicates = wording.predicates + wording.framed_predicates
    clauses = ["{s} " + past.replace("{be}", "was") for past, _ in predicates]
    clauses += ["{s} " + present.replace("{be}", "is") for _, present in predicates]
    clauses += [
        r.replace("{past}", past.replace("{be}", "was")).replace("{present}", present.replace("{be}", "is"))
        for r in RELATIVE_CLAUSES
        for past, present in predicates
    ]
    clauses += _with_nouns_and_copulas(NOUN_CLAUSES, wording.nouns)
    return bare + [shape for clause in clauses for shape in _frame(CLAUSE_FRAMES, clause)]


def _pronoun(wording: PropertyWording) -> list[str]:
    predicates = wording.predicates + wording.framed_predicates
    clauses = ["they " + past.replace("{be}", "were") for past, _ in predicates]
    clauses += ["they " + _they(present) for _, present in predicates]
    clauses += _with_nouns_and_copulas(PRONOUN_NOUN_CLAUSES, wording.nouns)
    return [f.replace("{t}", c) for f in PRONOUN_FRAMES for c in clauses]


def _question(wording: PropertyWording) -> list[str]:
    return _with_nouns_and_copulas(QUESTION_SHAPES, wording.nouns)


def _value_first(wording: PropertyWording) -> list[str]:
    clauses = [c.replace("{V}", "{v}") for c in _with_nouns_and_copulas(VALUE_FIRST_CLAUSES, wording.nouns)]
    return list(wording.value_first) + [s for c in clauses for s in _frame(VALUE_FIRST_FRAMES, c)]


def shape_families(prop: str) -> tuple[list[str], ...]:
    """(subject-first, pronoun, question, value-first) shapes of a property, without duplicates
    (fresh lists: the caller may consume them)."""
    if prop not in WORDINGS:
        raise ValueError(f"no biography wordings for {prop}; supported: {sorted(WORDINGS)}")
    return tuple(list(family) for family in _families(prop))


@lru_cache(maxsize=None)
def _families(prop: str) -> tuple[tuple[str, ...], ...]:
    """Computed once per property: the corpus draws from them for every fact of every epoch."""
    wording = WORDINGS[prop]
    return tuple(tuple(dict.fromkeys(f(wording))) for f in (_subject_first, _pronoun, _question, _value_first))


def all_shapes(prop: str) -> list[str]:
    """Every training shape of a property (placeholders {s}, {v}, {a_v})."""
    return [shape for family in shape_families(prop) for shape in family]


def fill(shape: str, subject: str, value: str) -> str:
    """A shape with name and value filled in; the sentence's first letter capitalised."""
    article_value = f"{indefinite_article(value)} {value}"
    text = shape.replace("{a_v}", article_value).replace("{v}", value).replace("{s}", subject)
    if value.endswith("."):  # "Warner Bros." at the end of a sentence takes no second period
        text = text.replace(value + ".", value)
    return text[:1].upper() + text[1:]


SHAPES: dict[str, tuple[str, ...]] = {prop: tuple(all_shapes(prop)) for prop in WORDINGS}
