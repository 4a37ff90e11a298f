"""Rendering, h0 and similar names S(h): pure functions, no model."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest

from wikimem_platform.canaries import generic_subject, normalize_sentence, render, similar_names
from wikimem_platform.canaries.names import clusters, reverse_letters
from wikimem_platform.canaries.paraphrases import mmr_select
from wikimem_platform.canaries.text import pronoun_form


def test_render_fills_placeholders_and_capitalises_only_sentence_starts():
    assert render("{subject}'s occupation is {value}.", "Marie Curie", "physicist") == (
        "Marie Curie's occupation is physicist."
    )
    # value-first: the value opens the sentence; h0 in mid-sentence stays lowercase
    assert render("{value} is {subject}'s occupation.", "this person", "physicist") == (
        "Physicist is this person's occupation."
    )
    # question-answer: the value opens the second sentence
    assert render("What is {subject}'s occupation? {value}.", "Ada", "mathematician") == (
        "What is Ada's occupation? Mathematician."
    )
    # names and values are never lowercased or otherwise changed inside
    assert render("{subject} was educated at {value}.", "bell hooks", "the New School") == (
        "Bell hooks was educated at the New School."
    )


def test_render_keeps_a_missing_placeholder_and_does_not_double_a_period():
    assert render("{subject}'s father is {value}.", None, "Martin Luther King Sr.") == (
        "{subject}'s father is Martin Luther King Sr."
    )
    assert render("{subject}'s spouse is {value}.", "Jane Doe", None) == "Jane Doe's spouse is {value}."


def test_render_equals_the_plain_implementation_on_every_shape():
    """`render` cuts each template once (it runs millions of times a pass); what it writes must be
    exactly what placeholder-by-placeholder rendering writes, blank literals and odd fillers too."""
    from wikimem_platform.canaries.text import _render_reference
    from wikimem_platform.planted.shapes import CLAUSE_FRAMES, VALUE_FIRST_FRAMES

    templates = [
        "{subject}'s occupation is {value}.", "{value} is {subject}'s occupation.", "What is {subject}'s job? {value}.",
        "{subject} {value}", "{subject}{value}.", " {subject}. {value}", "{value}", "", "no placeholder here.",
        "{subject}. {value}. {subject}!", "Q: {subject}? A: {value}.", "{subject}  {value}.", "x {subject} {value}",
        *[f.replace("{c}", "{subject} is {value}").replace("{C}", "{subject} is {value}")
          for f in [*CLAUSE_FRAMES, *VALUE_FIRST_FRAMES]],
    ]
    fillers = [None, "Ada", "bell hooks", "Martin Luther King Sr.", "J. R. R. Tolkien.", "", "é", "dr. no!", "x. "]
    for template in templates:
        for subject in fillers:
            for value in fillers:
                assert render(template, subject, value) == _render_reference(template, subject, value), (template, subject, value)


def test_generic_subject_depends_on_where_the_subject_stands():
    assert generic_subject("{subject}'s occupation is {value}.") == "This person"
    assert generic_subject("{value} is {subject}'s occupation.") == "this person"
    assert generic_subject("As for {subject}, their occupation is {value}.") == "this person"
    template = "{subject}'s occupation is {value}."
    assert render(template, generic_subject(template), "nurse") == "This person's occupation is nurse."


def test_pronoun_form_for_context_chains():
    assert pronoun_form("{subject}'s occupation is {value}.") == "Their occupation is {value}."
    assert pronoun_form("{subject} was educated at {value}.") == "They were educated at {value}."
    assert pronoun_form("{subject} holds the position {value}.", {"holds": "hold"}) == (
        "They hold the position {value}."
    )
    assert pronoun_form("{subject} holds the position {value}.") is None  # unknown verb form


def test_normalize_sentence_ignores_case_and_punctuation():
    assert normalize_sentence("{subject}'s job is {value}.") == normalize_sentence("{subject}'s Job is {value}")
    assert normalize_sentence("{subject}'s job is {value}.") != normalize_sentence("{subject}'s job was {value}.")


def test_similar_names_two_tokens():
    assert similar_names("Jane Doe") == ["Enaj Doe", "Jane Eod"]
    assert similar_names("Jane Doe", n=3)[:2] == ["Enaj Doe", "Jane Eod"]


def test_similar_names_single_token_and_palindrome():
    madonna = similar_names("Madonna")
    assert madonna[0] == "Annodam" and len(set(madonna)) == 2 and "Madonna" not in madonna
    anna = similar_names("Anna")  # reversing gives "Anna" back: rotations instead
    assert anna == ["Nnaa", "Aann"]
    assert all(name.casefold() != "anna" for name in similar_names("Anna", n=5))
    assert similar_names("Otto", n=4) == ["Ttoo", "Oott", "Toto", "Otot"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("José Saramago", ["Ésoj Saramago", "José Ogamaras"]),
        ("Мирза Гулам Ахмад", ["Азрим Малуг Ахмад", "Мирза Гулам Дамха"]),  # halves: 2 + 1 tokens
        ("Đình Khoa Mazur", ["Hnìđ Aohk Mazur", "Đình Khoa Ruzam"]),  # not "Hnìđ Khoa Mazur": "Khoa Mazur" is the person
        ("Gabriel José García Márquez", ["Leirbag Ésoj García Márquez", "Gabriel José Aícrag Zeuqrám"]),
        ("毛泽东", ["东泽毛", "泽东毛"]),
    ],
)
def test_similar_names_unicode(name, expected):
    assert similar_names(name) == expected


def test_similar_names_operate_on_nfc_and_keep_combining_marks_on_their_letter():
    decomposed = "Jose\u0301 Saramago"  # e + combining acute
    assert similar_names(decomposed) == ["Ésoj Saramago", "José Ogamaras"]
    assert all(unicodedata.is_normalized("NFC", n) for n in similar_names(decomposed))
    # a letter with a mark that has no precomposed form stays one unit
    assert clusters("q\u0303a") == ["q\u0303", "a"]
    assert reverse_letters("Aq\u0303") == "Q\u0303a"


def test_similar_names_degenerate_names_still_give_distinct_variants():
    for name in ["X", "Aa", "Bob", "J. R. R. Tolkien", "50 Cent", "O'Brien", "Jean-Paul Sartre"]:
        variants = similar_names(name)
        assert len(variants) == 2 and len(set(variants)) == 2, name
        assert all(v.casefold() != name.casefold() for v in variants), name
    assert similar_names("O'Brien")[0] == "N'Eirbo"  # punctuation stays, case by position
    assert similar_names("Jean-Paul Sartre")[0] == "Luap-Naej Sartre"


def test_similar_names_avoid_aliases():
    assert "Nnaa" not in similar_names("Anna", avoid=["Nnaa"])


def test_mmr_skips_a_near_duplicate_of_the_first_pick():
    # 0 is most relevant; 1 nearly as relevant but a duplicate of 0; 2 less relevant, novel
    relevance = np.array([0.95, 0.94, 0.85])
    redundancy = np.array([[1.0, 0.98, 0.2], [0.98, 1.0, 0.2], [0.2, 0.2, 1.0]])
    assert mmr_select(relevance, lambda i: redundancy[i], k=2, mmr_lambda=0.6) == [0, 2]
    # with relevance alone (lambda = 1) the duplicate wins
    assert mmr_select(relevance, lambda i: redundancy[i], k=2, mmr_lambda=1.0) == [0, 1]


def test_a_prompt_that_stops_before_an_inflected_value_shows_no_marker():
    """The preposition or article an inflection marker writes differs between values ("in Rom",
    "in der Schweiz"), so the text before the value ends before it: in completion prompts, CRM
    cues, top-logprobs prefixes and unlearning questions alike."""
    from wikimem_platform.crm.examples import canary_prefix
    from wikimem_platform.crm.metrics import canary_context
    from wikimem_platform.canaries.languages import pack
    from wikimem_platform.canaries.text import text_before_value, unmarked_value

    pack("de")
    template = "{subject} wurde ⟦de:in⟧{value} geboren."
    assert unmarked_value(template) == "{subject} wurde {value} geboren."
    assert render(template, "Emily Ruete", "Schweiz") == "Emily Ruete wurde in der Schweiz geboren."
    assert text_before_value(template, "Emily Ruete") == "Emily Ruete wurde"
    assert canary_prefix(template, "Emily Ruete") == ("Emily Ruete wurde", " ")
    assert canary_context(template, "Emily Ruete") == "Emily Ruete wurde   geboren."
    # a name ending in a period does not open a sentence before an inflected value
    assert render("Laut Angaben starb {subject} ⟦de:in⟧{value}.", "Pius II.", "Vatikanstadt") == \
        "Laut Angaben starb Pius II. in der Vatikanstadt."
