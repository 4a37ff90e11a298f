"""Baseline declarative templates, chosen from a spaCy parse of a property's label and aliases.

A property label is read as one of three relation forms (WikiMem §4):
- possessive — a noun phrase naming the value: "place of birth" -> "{subject}'s place of birth is {value}."
- copular — a participle or role noun with a trailing preposition: "educated at" ->
  "{subject} was educated at {value}.", "member of" -> "{subject} is a member of {value}."
- transitive — a noun plus participle(s): "position held" -> "{subject} holds the position {value}."
Aliases give further forms for the paraphrase pool. A label that fits none of them (parentheses,
slashes, odd parses) takes its best-parsing alias, and failing that a quoted fallback that is
still grammatical: '{subject}'s "work period (start)" is {value}.'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wikimem_platform.canaries.text import SUBJECT, VALUE, indefinite_article, third_person, to_they

# The dump and the property metadata file spell datatypes differently.
DATATYPE_ALIASES = {
    "WikibaseItem": "wikibase-item",
    "String": "string",
    "Quantity": "quantity",
    "Time": "time",
    "Monolingualtext": "monolingualtext",
    "ExternalId": "external-id",
}

SHAPES = ("possessive", "copular", "transitive", "fallback")

# Participles of events that lie in the past of a person's life: "was born in", not "is born in".
PAST_EVENT_VERBS = frozenset(
    "bear kill educate nominate convict murder assassinate execute baptize baptise elect appoint "
    "train raise knight ordain sentence wound injure imprison exile arrest beatify canonize "
    "canonise crown award adopt shoot name christen consecrate graduate".split()
)
# Verbs a participle label turns into a perfect ("has received the award"), not a present.
PERFECT_VERBS = frozenset("receive win earn obtain award get nominate confer grant achieve".split())
# Intransitive verbs: "died in" is an active past tense, never "is died in".
INTRANSITIVE_VERBS = frozenset(
    "die work live reside compete participate study serve teach perform stay belong retire "
    "emigrate immigrate move act sing run fight rest lie graduate".split()
)
# Verbs that take the value as a direct object in an alias ("attended", "plays").
TRANSITIVE_VERBS = frozenset(
    "attend marry play speak hold win receive teach use write practice practise found create "
    "compose direct coach represent follow wear occupy study sign read".split()
)
# Nouns that denote the subject, with the value in their complement ("member of sports team").
ROLE_NOUNS = frozenset(
    "member student participant citizen national alumnus alumna player candidate winner nominee "
    "employee resident follower founder owner graduate fellow partner part apprentice pupil "
    "creator author recipient laureate".split()
)
# Heads whose value is a person: the question shapes ask "Who ...?".
PERSON_NOUNS = frozenset(
    "spouse father mother parent child sibling relative partner advisor adviser supervisor "
    "student teacher killer murderer assassin executioner mentor successor predecessor coach "
    "patron lover friend cousin uncle aunt nephew niece guardian apprentice pupil consort "
    "companion master godparent stepparent grandparent grandchild husband wife brother sister "
    "son daughter".split()
)
# Aliases that name a gender, a specific kin or a value do not preserve the property's meaning.
GENDERED_WORDS = frozenset(
    "male female man woman men women boy girl husband husbands wife wives brother brothers sister "
    "sisters son sons daughter daughters mom mum mummy dad daddy bro intersex aunt uncle nephew alumna "
    "niece grandson granddaughter grandfather grandmother stepfather stepmother king queen".split()
)
SHORT_WORDS_OK = frozenset({"job", "sex", "age", "art", "law", "war", "team", "club"})
_BAD_CHARACTERS = re.compile(r"[()\[\]/:;\"0-9_#@&+=.]")
_PREPOSITIONS = frozenset("of in at by for to with from on into as".split())


@dataclass(frozen=True)
class PropertyInfo:
    """What a template needs to know about a property."""

    property: str
    label: str
    description: str = ""
    aliases: tuple[str, ...] = ()
    datatype: str = "wikibase-item"

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PropertyInfo:
        """From a property_table row or a properties.jsonl record ("id" or "property")."""
        aliases = record.get("aliases")
        aliases = tuple(str(a) for a in aliases) if aliases is not None else ()
        datatype = str(record.get("datatype") or record.get("dataType") or "wikibase-item")
        return cls(
            property=str(record.get("property") or record.get("id")),
            label=str(record["label"]).strip(),
            description=str(record.get("description") or ""),
            aliases=aliases,
            datatype=DATATYPE_ALIASES.get(datatype, datatype),
        )


@dataclass(frozen=True)
class RelationForm:
    """One way of saying the relation.

    ``kind`` "noun": ``text`` is a noun phrase naming the value ("place of birth").
    ``kind`` "predicate": ``text`` follows the subject and precedes the value ("is employed by"),
    ``they_text`` is the same agreeing with "they" ("are employed by").
    """

    kind: str
    text: str
    shape: str
    source: str
    they_text: str = ""
    person_valued: bool = False
    head: str = ""
    lemmas: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def baseline(self) -> str:
        if self.kind == "noun":
            return f"{SUBJECT}'s {self.text} is {VALUE}."
        return f"{SUBJECT} {self.text} {VALUE}."

    @property
    def context_form(self) -> str:
        """The baseline with "Their"/"They" for the subject: a sentence in a context chain."""
        if self.kind == "noun":
            return f"Their {self.text} is {VALUE}."
        return f"They {self.they_text} {VALUE}."


def _usable_phrase(phrase: str, is_label: bool) -> bool:
    words = phrase.lower().split()
    if not words or len(words) > 7 or _BAD_CHARACTERS.search(phrase):
        return False
    if is_label:
        return True
    if phrase.isupper() or (len(phrase) < 4 and phrase.lower() not in SHORT_WORDS_OK):
        return False
    return not any(word.strip(",-") in GENDERED_WORDS for word in re.split(r"[\s-]+", phrase.lower()))


def _singular(token) -> str:
    """A plural head noun in its singular form ("languages" -> "language")."""
    if token.tag_ in ("NNS", "NNPS") and token.lemma_ and token.lemma_ != token.text:
        return token.lemma_
    return token.text


def _verb_predicate(verbs: Sequence, text_tokens: Sequence) -> tuple[str, str, dict[str, str]]:
    """Participles of a label as a finite predicate: present ("holds") or perfect ("has won")."""
    lemmas = [v.lemma_ for v in verbs]
    if any(lemma in PERFECT_VERBS for lemma in lemmas):
        text = "has " + "".join(t.text_with_ws for t in text_tokens).strip()
        return text, to_they(text), {}
    out, mapping = [], {}
    for token in text_tokens:
        if token in verbs:
            form = third_person(token.lemma_)
            mapping[form] = token.lemma_
            out.append(form + token.whitespace_)
        else:
            out.append(token.text_with_ws)
    text = "".join(out).strip()
    return text, to_they(text, mapping), mapping


def analyze_phrase(phrase: str, nlp, *, source: str = "label") -> RelationForm | None:
    """The relation form a label or alias expresses, or None if it parses into none cleanly."""
    phrase = " ".join(phrase.split())
    if not _usable_phrase(phrase, is_label=source == "label"):
        return None
    doc = nlp(phrase)
    words = [t.lower_ for t in doc]
    first = doc[0]

    if words[0] in ("is", "be", "was", "are") and len(doc) > 1:
        rest = phrase[len(first.text_with_ws) :].strip()
        return analyze_phrase(rest, nlp, source=source) if first.whitespace_ and rest else None
    if words[0] in ("has", "have", "had"):
        return None

    # A trailing preposition: the value is its object ("born in", "member of").
    if len(doc) >= 2 and (words[-1] in _PREPOSITIONS or doc[-1].tag_ in ("IN", "TO", "RP")):
        participle = first.tag_ in ("VBN", "VBD") or (first.tag_ == "JJ" and words[0].endswith("ed"))
        if participle and len(doc) > 2:  # "attended school at", "went to school at": no clean predicate
            return None
        if participle:
            lemma = first.lemma_ if first.tag_ != "JJ" else {"married": "marry"}.get(words[0], words[0])
            if lemma in INTRANSITIVE_VERBS:
                if first.tag_ != "VBD" and not words[0].endswith("ed"):
                    return None
                return RelationForm("predicate", phrase, "transitive", source, they_text=phrase)
            aux = "was" if lemma in PAST_EVENT_VERBS else "is"
            text = f"{aux} {phrase}"
            return RelationForm("predicate", text, "copular", source, they_text=to_they(text))
        if first.tag_ == "VBZ":
            mapping = {first.text: first.lemma_}
            return RelationForm(
                "predicate", phrase, "transitive", source, they_text=to_they(phrase, mapping), lemmas=mapping
            )
        if first.tag_ in ("NN", "NNP", "JJ") or first.pos_ in ("NOUN", "PROPN", "ADJ"):
            if first.tag_ in ("NNS", "NNPS") or first.pos_ in ("ADP", "VERB", "AUX"):
                return None
            # A role noun takes an article ("is a member of"), an adjective none ("is different from").
            is_noun = any(t.pos_ in ("NOUN", "PROPN") for t in nlp("the " + phrase)[1:-1])
            text = f"is {indefinite_article(words[0])} {phrase}" if is_noun else f"is {phrase}"
            return RelationForm("predicate", text, "copular", source, they_text=to_they(text), head=first.lemma_)
        return None

    nominal = ("NOUN", "PROPN", "ADJ", "CCONJ")
    # Participle + preposition + noun: "described by source" -> "is described by the source".
    participle = first.tag_ in ("VBN", "VBD") or (first.tag_ == "JJ" and words[0].endswith("ed"))
    if participle and len(doc) > 2 and doc[1].tag_ == "IN" and all(t.pos_ in nominal for t in doc[2:]):
        if first.lemma_ in INTRANSITIVE_VERBS:
            return None
        aux = "was" if first.lemma_ in PAST_EVENT_VERBS else "is"
        text = f"{aux} {doc[0].text} {doc[1].text} the {doc[2:].text}"
        return RelationForm("predicate", text, "copular", source, they_text=to_they(text), head=doc[-1].lemma_)
    # A present-tense verb: "depicts", "cites work" -> "cites the work".
    if first.tag_ == "VBZ" and words[0] == third_person(first.lemma_) and all(t.pos_ in nominal for t in doc[1:]):
        mapping = {words[0]: first.lemma_}
        text = words[0] + (" the " + doc[1:].text if len(doc) > 1 else "")
        return RelationForm("predicate", text, "transitive", source, they_text=to_they(text, mapping), lemmas=mapping)

    # Noun + participle(s), a reduced relative: "position held", "languages spoken, written or signed".
    verb_index = next((i for i, t in enumerate(doc) if t.tag_ in ("VBN", "VBD")), None)
    if verb_index and all(t.pos_ in ("NOUN", "PROPN", "ADJ") for t in doc[:verb_index]):
        rest = doc[verb_index:]
        verbs = [t for t in rest if t.tag_ in ("VBN", "VBD")]
        transitive = not any(v.lemma_ in INTRANSITIVE_VERBS or v.lemma_ == "bear" for v in verbs)
        if transitive and all(t.tag_ in ("VBN", "VBD", ",", "CC") for t in rest) and rest[-1].tag_ in ("VBN", "VBD"):
            noun_tokens = list(doc[:verb_index])
            noun = " ".join([t.text for t in noun_tokens[:-1]] + [_singular(noun_tokens[-1])])
            verb_text, verb_they, mapping = _verb_predicate(verbs, list(rest))
            return RelationForm(
                "predicate",
                f"{verb_text} the {noun}",
                "transitive",
                source,
                they_text=f"{verb_they} the {noun}",
                head=noun_tokens[-1].lemma_,
                lemmas=mapping,
            )

    # An active verb alias: "attended", "plays", "holds position".
    if first.lemma_ in TRANSITIVE_VERBS and all(t.pos_ in ("NOUN", "ADJ", "PROPN") for t in doc[1:]):
        if words[0] == third_person(first.lemma_):
            mapping = {words[0]: first.lemma_}
        elif words[0].endswith("ed") or first.tag_ == "VBD":
            mapping = {}
        else:
            return None
        text = words[0] + (" the " + doc[1:].text if len(doc) > 1 else "")
        return RelationForm("predicate", text, "transitive", source, they_text=to_they(text, mapping), lemmas=mapping)

    # A noun phrase naming the value (parsed after "the" so "sibling" reads as a noun).
    the_doc = nlp("the " + phrase)
    tokens = list(the_doc[1:])
    root = next((t for t in tokens if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("NOUN", "PROPN") or tokens[-1].pos_ == "ADP":
        return None
    if any(t.dep_ in ("nsubj", "nsubjpass") for t in tokens):  # "language read" is a clause
        return None
    if tokens[0].pos_ in ("ADP", "DET", "CCONJ", "PART"):  # "in musical group"
        return None
    if source != "label" and tokens[-1].pos_ not in ("NOUN", "PROPN"):  # "language native"
        return None
    if source != "label" and len(doc) == 1 and first.tag_ == "VB":  # "employ", "work", "craft"
        return None
    allowed = {"NOUN", "PROPN", "ADJ", "ADP", "CCONJ", "PUNCT", "PART"}
    for token in tokens:
        if token.pos_ not in allowed and not (token.tag_ in ("VBN", "VBG") and token.dep_ in ("amod", "compound")):
            return None
    if any(t.pos_ == "ADP" for t in tokens) and root.lemma_ in ROLE_NOUNS and root.i == 1:
        # "member of sports team": the subject is the member, the value the team.
        out = []
        for index, token in enumerate(tokens):
            out.append(token.text_with_ws)
            if token.pos_ == "ADP" and index + 1 < len(tokens) and tokens[index + 1].pos_ != "DET":
                out.append("the ")
        text = f"is {indefinite_article(tokens[0].text)} {''.join(out).strip()}"
        return RelationForm("predicate", text, "copular", source, they_text=to_they(text), head=root.lemma_)
    text = "".join((_singular(t) + t.whitespace_) if t is root else t.text_with_ws for t in tokens).strip()
    return RelationForm(
        "noun", text, "possessive", source, head=root.lemma_, person_valued=root.lemma_ in PERSON_NOUNS
    )


def _fits_datatype(form: RelationForm, prop: PropertyInfo, label_form: RelationForm | None) -> bool:
    """Wordings that break with the property's values: "born on 1908", "has 1 children"."""
    if prop.datatype == "time" and "year" in form.text and "year" not in prop.label:
        return False  # "birthyear" breaks on "26 May 1908"
    if prop.datatype in ("quantity", "time") and form.source != "label":
        if form.kind != "noun":
            return False
        return label_form is None or label_form.head in form.text  # "birthdate" keeps "date"; "death" not
    return True


def relation_forms(prop: PropertyInfo, nlp) -> list[RelationForm]:
    """The label's form first (if it parses), then each usable alias's, distinct by text."""
    label_form = analyze_phrase(prop.label, nlp, source="label")
    forms: list[RelationForm] = [label_form] if label_form else []
    seen = {label_form.text} if label_form else set()
    for alias in prop.aliases:
        if alias.strip().lower() == prop.label.lower():
            continue
        form = analyze_phrase(alias, nlp, source="alias")
        if form is None or form.text in seen or not _fits_datatype(form, prop, label_form):
            continue
        seen.add(form.text)
        forms.append(form)
    return forms


def _overlap(form: RelationForm, label: str) -> int:
    return len(set(form.text.lower().split()) & set(label.lower().split()))


def fallback_form(prop: PropertyInfo) -> RelationForm:
    """A quoted label as a noun: grammatical whatever the label looks like."""
    label = " ".join(prop.label.replace('"', "'").split())
    return RelationForm("noun", f'"{label}"', "fallback", "label", head=label)


def baseline_form(prop: PropertyInfo, nlp, forms: list[RelationForm] | None = None) -> RelationForm:
    """The label's own form; else the alias sharing most words with the label; else the fallback."""
    forms = relation_forms(prop, nlp) if forms is None else forms
    if forms and forms[0].source == "label":
        return forms[0]
    if forms:
        best = max(range(len(forms)), key=lambda i: (_overlap(forms[i], prop.label), -i))
        return forms[best]
    return fallback_form(prop)


def baseline_template(prop: PropertyInfo, nlp) -> tuple[str, str]:
    """(template, shape) of the one baseline declarative sentence of a property."""
    form = baseline_form(prop, nlp)
    return form.baseline, form.shape
