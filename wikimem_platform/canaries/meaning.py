"""Meaning preservation: a paraphrase is kept only if it states the baseline's relation.

The rule-based pool (paraphrases.py) writes sentences from every alias of a property, and
Wikidata aliases are not all synonyms: P69 "educated at" has the aliases "faculty" and
"graduated from", P39 "position held" has "political seat", P1412 "languages spoken, written or
signed" has "writes language". Ranking by similarity does not remove them (MiniLM puts "The
faculty of X was Y." at 0.88 to "X was educated at Y.", above the faithful "According to public
records, X studied at Y.", 0.86), so a filter runs on the pool before ranking. Each rule names what it protects:

- ``tense``: a past-tense wording only where the baseline is past ("X's occupation was Y" says
  the occupation is over). Verbs of events that lie in the past of every life by definition
  (born, died, educated, elected, ... ``PAST_EVENT_VERBS``) are no tense change: "was born in"
  is the only tense that states a place of birth with a verb. The converse too: where the
  baseline is past ("was educated at"), a relation verb in the present ("is educated at",
  "attends") says the subject is a student now.
- ``disjunction``: a paraphrase that keeps some but not all members of an "or" in the label
  ("speaks, writes or signs" -> "writes"; "sex or gender" -> "gender") or of a verb "or" in the
  description (P1303 "plays or teaches") narrows the claim. Keeping none is a broader wording
  ("X's language is Y") and stays.
- ``relation_word``: words that turn the relation into another one when the baseline and label
  do not have them (``RELATION_CHANGING_WORDS``: "graduated", "faculty", "political", ...).
- ``dropped_qualifier``: the head of a qualified relation noun used bare ("given name" ->
  "X's name is Y" states a full name; "record label" -> "label").
- ``similarity``: MiniLM cosine to the baseline, both with neutral fillers, below
  ``MIN_MEANING_SIMILARITY``: a safety net for drift the rules do not name.

The first rule that fails is the reason given. Everything is deterministic (rules on spaCy tags
and lemmas, a fixed encoder).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from wikimem_platform.canaries.encoders import load_encoder, load_nlp
from wikimem_platform.canaries.templates import PAST_EVENT_VERBS, PropertyInfo
from wikimem_platform.canaries.text import FILLER_SUBJECT, render_neutral

MIN_MEANING_SIMILARITY = 0.80
"""MiniLM cosine (neutral fillers) below which a paraphrase is taken to have drifted.

Measured on the whole candidate pool of the 28 person properties the canary tests and the
bundled sample use (2,087 candidates, 79 per property at most): 712 fail a rule; of the 1,375
left, every one under 0.90 was read and its relation judged. The 14 judged to change the claim
are all P101 "field of work" aliases ("X's trade is Y", "X's domain is Y", "X is responsible
for Y", "X's activity is Y") and lie at 0.64-0.789, the highest "It is known that X's domain of
activity is Y." (0.789). 0.79 is the lowest threshold that keeps none of them; 0.80 leaves a
margin. Its cost: 71 faithful wordings go too, mostly where the frame pulls the cosine down
("It is Y that X is a national of." 0.786, "X has Y as their mother tongue." 0.789, "When it
comes to X, they play Y." 0.799), while "Records show that X attended Y." (0.800) and "The
mother tongue of the person named X is Y." (0.801) stay. The pool has enough others. Sentence
cosine is no entailment test (the frame "Q: ... A:" moves it as much as the relation does), so
the rules do the precise work and this threshold catches what drifted far; the rules' word lists
were written from the same pools, so a new property's aliases may need an entry.
"""

RULES = ("tense", "disjunction", "relation_word", "dropped_qualifier", "similarity")

# Lemmas that change the relation when neither the baseline nor the label has them, and why.
RELATION_CHANGING_WORDS: dict[str, str] = {
    "graduate": "graduating is completing a degree; being educated at a place is not",
    "alumnus": "an alumnus is a graduate; being educated at a place is not graduating",
    "alumni": "an alumnus is a graduate; being educated at a place is not graduating",
    "alumna": "an alumna is a graduate; being educated at a place is not graduating",
    "faculty": "a faculty is a university's teaching staff or one of its divisions, not the institution",
    "political": "narrows the value to political ones",
    "office": "an office is one kind of position",
    "murder": "narrows a death to a homicide",
    "kill": "narrows a death to a killing",
    "city": "narrows a place to a city",
    "town": "narrows a place to a town (a home town is where one grew up)",
    "hometown": "a home town is where one grew up, not where one lives",
    "parent": "a parent of either sex, not the relative the label names",
    "child": "being someone's child names a parent of either sex, not the relative the label names",
    "honour": "honouring someone is another relation; an honorary title is not an award",
    "honor": "honoring someone is another relation; an honorary title is not an award",
    "title": "a title is not the award the label names",
    "organization": "names a kind of value, not the subject's relation to it",
    "organisation": "names a kind of value, not the subject's relation to it",
    "academic": "narrows a field to academic ones",
    "scientific": "narrows a field to scientific ones",
    "research": "narrows a field of work to research",
    "middle": "a middle name is one of the given names, not any of them",
    "christian": "a Christian name presumes a baptism",
    "band": "narrows an organization to a band",
    "group": "narrows an organization to a musical group",
    "fielding": "narrows a playing position to fielding sports",
    "researcher": "narrows a field of work to research",
    "subject": "a (school) subject narrows a field of work to one taught",
    "discipline": "narrows a field to an academic discipline",
    "field of study": "what one studied, not one's field of work",
    "employment": "employment is the relation to an employer, not an occupation",
    "function": "a function is a role or purpose, not a position held",
    "medal": "narrows an award to a medal",
    "study": "studying a field is not working in it",
}
# Relations a listed word does not change: "studied at" states "educated at".
COMPATIBLE_LEMMAS: dict[str, frozenset[str]] = {"study": frozenset({"educate", "school", "student", "study"})}
# The subject as the giver, not the receiver: "has awarded the prize" (alias "awarded").
_GIVER_VOICE = re.compile(r"\b(?:has|have|had) (?:awarded|granted|conferred|given|bestowed|presented)\b")
# Present-tense verbs of the sentence frames, never of the relation ("It is known that",
# "Records show that", "When it comes to", "happens to be", "If you ask", "is listed as").
FRAME_LEMMAS = frozenset("be have do come show happen ask know list would".split())
# Events in the past of any life: their past tense states the fact, it does not date it.
TENSELESS_PAST_LEMMAS = PAST_EVENT_VERBS | {"die"}
_POSSESSIVE_BASELINE = re.compile(r"^\{subject\}'s (?P<noun>[^{}]+?) (?:is|was) \{value\}\.$")
_CONTENT_TAGS = ("NN", "VB", "JJ", "RB")


@dataclass(frozen=True)
class Token:
    text: str
    tag: str
    lemma: str

    @property
    def lower(self) -> str:
        return self.text.lower()


@dataclass(frozen=True)
class DroppedParaphrase:
    """A candidate the filter removed: which rule, a readable why, and its similarity."""

    template: str
    rule: str
    detail: str
    similarity: float


@dataclass
class MeaningFilterResult:
    """One property's candidates split into kept (input order) and dropped (with reasons)."""

    baseline: str
    kept: list[str]
    dropped: list[DroppedParaphrase]
    similarity: dict[str, float] = field(default_factory=dict)


def _tokens(docs) -> list[list[Token]]:
    return [[Token(t.text, t.tag_, t.lemma_.lower()) for t in doc] for doc in docs]


def _analyse(nlp, texts: Sequence[str]) -> list[list[Token]]:
    """Tags and lemmas (no parse: tags decide tense, lemmas match words)."""
    return _tokens(nlp.pipe(list(texts), disable=["parser", "ner"]))


def _matches(token: Token, lemma: str) -> bool:
    """A token is a form of ``lemma`` ("writes", "written") or a derived noun ("player")."""
    return token.lemma == lemma or token.lower == lemma or (len(lemma) >= 4 and token.lower.startswith(lemma))


# --------------------------------------------------------------------------- tense


def _past_verbs(tokens: list[Token]) -> list[Token]:
    """Past-tense verbs, less those of events past in every life ("was born", "died")."""
    out = []
    for index, token in enumerate(tokens):
        if token.tag != "VBD" or token.lemma in TENSELESS_PAST_LEMMAS:
            continue
        following = next((t for t in tokens[index + 1 :] if t.tag not in ("RB", "RBR")), None)
        if token.lemma == "be" and following is not None and following.tag == "VBN" and following.lemma in TENSELESS_PAST_LEMMAS:
            continue
        out.append(token)
    return out


def _present_relation_verbs(tokens: list[Token]) -> list[str]:
    """Present-tense relation verbs: "attends", "is educated" (frame verbs left out)."""
    out = []
    for index, token in enumerate(tokens):
        if token.tag not in ("VBZ", "VBP"):
            continue
        if token.lemma not in FRAME_LEMMAS:
            out.append(token.text)
        elif token.lemma == "be" and index + 1 < len(tokens):
            following = tokens[index + 1]
            if following.tag == "VBN" and following.lemma not in FRAME_LEMMAS:
                out.append(f"{token.text} {following.text}")
    return out


def tense_violation(baseline: list[Token], paraphrase: list[Token]) -> str | None:
    baseline_past = any(t.tag == "VBD" for t in baseline)
    if not baseline_past:
        past = _past_verbs(paraphrase)
        if past:
            return f"past tense {past[0].text!r} while the baseline is in the present"
        return None
    present = _present_relation_verbs(paraphrase)
    if present:
        return f"present tense {present[0]!r} while the baseline is in the past"
    return None


# --------------------------------------------------------------------------- disjunction


def disjunctions(tokens: list[Token], *, verbal_only: bool = False) -> list[tuple[str, ...]]:
    """Lemma groups joined by "or" (with commas: "spoken, written or signed"), in order.

    Groups that share a member merge ("plays or teaches or used"); ``verbal_only`` keeps groups
    with a verb among them (descriptions: "plays or teaches", not "person or organization").
    A group whose members share one lemma ("works or worked") is no choice and is left out.
    """
    content = lambda t: t.tag.startswith(_CONTENT_TAGS) and t.text.isalpha()  # noqa: E731
    groups: list[list[Token]] = []
    for index, token in enumerate(tokens):
        if token.lower != "or" or index == 0 or index + 1 >= len(tokens):
            continue
        left = index - 1 if tokens[index - 1].text != "," else index - 2
        right = tokens[index + 1]
        if left < 0 or not content(tokens[left]) or not content(right):
            continue
        members = [right, tokens[left]]
        j = left
        while j >= 2 and tokens[j - 1].text == "," and content(tokens[j - 2]):
            members.append(tokens[j - 2])
            j -= 2
        groups.append(members[::-1])  # in reading order
    merged: list[list[Token]] = []
    for group in groups:
        lemmas = {t.lemma for t in group}
        for existing in merged:
            if lemmas & {t.lemma for t in existing}:
                existing.extend(t for t in group if t.lemma not in {e.lemma for e in existing})
                break
        else:
            merged.append(list(group))
    out = []
    for group in merged:
        lemmas = tuple(dict.fromkeys(t.lemma for t in group))
        if len(lemmas) < 2 or (verbal_only and not any(t.tag.startswith("VB") for t in group)):
            continue
        out.append(lemmas)
    return out


def disjunction_violation(
    groups: list[tuple[str, ...]], baseline: list[Token], paraphrase: list[Token], surface: dict[str, str]
) -> str | None:
    """Some but not all of a disjunction's members (relative to the baseline's own members)."""
    for group in groups:
        in_baseline = [m for m in group if any(_matches(t, m) for t in baseline)]
        if len(in_baseline) == 1:
            continue  # the baseline itself names one member: nothing to narrow relative to it
        reference = in_baseline or list(group)
        present = [m for m in reference if any(_matches(t, m) for t in paraphrase)]
        if 0 < len(present) < len(reference):
            kept = ", ".join(repr(surface.get(m, m)) for m in present)
            words = [surface.get(m, m) for m in reference]
            whole = f"{', '.join(words[:-1])} or {words[-1]}"
            return f"keeps only {kept} of {whole!r}"
    return None


# --------------------------------------------------------------------------- relation words


def _spaced(text: str) -> str:
    return f" {' '.join(re.sub(r'[^a-z ]', ' ', text.lower()).split())} "


def relation_word_violation(allowed: set[str], reference: str, paraphrase: list[Token], text: str) -> str | None:
    """A relation-changing word (or phrase) that neither the baseline nor the label has
    (``allowed``: their words and lemmas; ``reference``: their text), or the giver's voice."""
    for token in paraphrase:
        for word in (token.lemma, token.lower):
            compatible = COMPATIBLE_LEMMAS.get(word, frozenset({word}))
            if word in RELATION_CHANGING_WORDS and not compatible & allowed:
                return f"{token.text!r}: {RELATION_CHANGING_WORDS[word]}"
    words, reference = _spaced(text), _spaced(reference)
    for phrase, why in RELATION_CHANGING_WORDS.items():
        if " " in phrase and f" {phrase} " in words and f" {phrase} " not in reference:
            return f"{phrase!r}: {why}"
    giver = _GIVER_VOICE.search(text)
    if giver:
        return f"{giver.group(0)!r}: the subject gives it rather than receives it"
    return None


@dataclass(frozen=True)
class QualifiedNoun:
    """A possessive baseline's relation noun: head and the qualifier that narrows it."""

    head: str
    qualifier: tuple[str, ...]
    before: bool  # "given name" (True) or "field of work" (False)


def qualified_noun(baseline: str) -> QualifiedNoun | None:
    """"{subject}'s given name is {value}." -> head "name", qualifier "given";
    "{subject}'s field of work is {value}." -> head "field", qualifier "of work"; one word -> None."""
    match = _POSSESSIVE_BASELINE.match(baseline)
    if not match:
        return None
    words = match.group("noun").lower().split()
    if len(words) < 2 or not all(w.isalpha() for w in words) or {"or", "and"} & set(words):
        return None
    if "of" in words:
        at = words.index("of")
        if at != 1 or at + 1 == len(words):
            return None
        return QualifiedNoun(words[0], tuple(words[1:]), before=False)
    return QualifiedNoun(words[-1], tuple(words[:-1]), before=True)


_DETERMINERS = ("POS", "PRP$", "DT", "WP$")


def dropped_qualifier_violation(qualified: QualifiedNoun | None, paraphrase: list[Token], subject_first: str) -> str | None:
    """The head used bare: after a determiner or possessive and, for "field of work", not
    followed by its own "of" phrase ("the field of Alex Smith" is bare, "the number of kids" is not)."""
    if qualified is None:
        return None
    words = [t.lower for t in paraphrase]
    content = [w for w in qualified.qualifier if w != "of"]
    if qualified.before and any(w in words for w in content):
        return None
    for index, token in enumerate(paraphrase):
        if token.lower != qualified.head or index == 0 or paraphrase[index - 1].tag not in _DETERMINERS:
            continue
        if not qualified.before:
            following = paraphrase[index + 1 : index + 3]
            has_own_of = (
                len(following) == 2 and following[0].lower == "of"
                and following[1].tag not in _DETERMINERS and following[1].text != subject_first
            )
            if has_own_of:
                continue
        return f"{qualified.head!r} without {' '.join(qualified.qualifier)!r}: a broader relation"
    return None


# --------------------------------------------------------------------------- the filter


def filter_pools(
    items: Sequence[tuple[str, PropertyInfo, Sequence[str]]],
    nlp,
    encode,
    *,
    min_similarity: float = MIN_MEANING_SIMILARITY,
) -> list[MeaningFilterResult]:
    """Filter many properties' candidates at once: (baseline, property, candidates) per item.

    ``nlp``: a spaCy pipeline with tagger and lemmatizer; ``encode``: list[str] -> unit-norm rows
    (the canary SentenceEncoder, whose memory the ranking then reuses). Sentences are analysed
    and embedded in one batch each.
    """
    if not 0 <= min_similarity <= 1:
        raise ValueError(f"min_similarity must lie in [0, 1], got {min_similarity}")
    sentences: dict[str, int] = {}
    for baseline, prop, candidates in items:
        for template in [baseline, *candidates]:
            sentences.setdefault(render_neutral(template, prop.datatype), len(sentences))
        sentences.setdefault(prop.label, len(sentences))
        sentences.setdefault(prop.description or prop.label, len(sentences))
    texts = list(sentences)
    analysed = _analyse(nlp, texts)
    vectors = np.asarray(encode(texts), dtype=np.float64) if texts else np.zeros((0, 1))

    results = []
    for baseline, prop, candidates in items:
        base_row = sentences[render_neutral(baseline, prop.datatype)]
        base_tokens = analysed[base_row]
        label_tokens = analysed[sentences[prop.label]]
        groups = disjunctions(label_tokens)
        if prop.description:
            groups += [g for g in disjunctions(analysed[sentences[prop.description]], verbal_only=True) if g not in groups]
        surface = {t.lemma: t.text for t in [*analysed[sentences[prop.description or prop.label]], *label_tokens, *base_tokens]}
        allowed = {w for t in [*base_tokens, *label_tokens] for w in (t.lemma, t.lower)}
        reference = f"{prop.label} {baseline}"
        qualified = qualified_noun(baseline)
        result = MeaningFilterResult(baseline, [], [])
        for template in candidates:
            row = sentences[render_neutral(template, prop.datatype)]
            tokens = analysed[row]
            similarity = float(vectors[row] @ vectors[base_row])
            result.similarity[template] = similarity
            checks = (
                ("tense", lambda: tense_violation(base_tokens, tokens)),
                ("disjunction", lambda: disjunction_violation(groups, base_tokens, tokens, surface)),
                ("relation_word", lambda: relation_word_violation(allowed, reference, tokens, template)),
                ("dropped_qualifier", lambda: dropped_qualifier_violation(qualified, tokens, FILLER_SUBJECT.split()[0])),
                ("similarity", lambda: None if similarity >= min_similarity
                 else f"cosine {similarity:.3f} < {min_similarity:.2f} to the baseline"),
            )
            for rule, check in checks:
                detail = check()
                if detail is not None:
                    result.dropped.append(DroppedParaphrase(template, rule, detail, similarity))
                    break
            else:
                result.kept.append(template)
        results.append(result)
    return results


def filter_paraphrases(
    baseline: str,
    prop: PropertyInfo,
    candidates: Sequence[str],
    *,
    nlp=None,
    encode=None,
    min_similarity: float = MIN_MEANING_SIMILARITY,
) -> MeaningFilterResult:
    """Candidates that state the baseline's relation, and why each other one was dropped.

    ``nlp``/``encode`` default to the offline spaCy and MiniLM models.
    """

    nlp = nlp if nlp is not None else load_nlp()
    encode = encode if encode is not None else load_encoder()
    return filter_pools([(baseline, prop, candidates)], nlp, encode, min_similarity=min_similarity)[0]
