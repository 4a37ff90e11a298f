"""The German canary pack: structure, hand-checked sentences on real labels of the bundled sample,
the inflection markers, agreement of occupations and dates."""

from __future__ import annotations

import re

import pytest

from wikimem_platform.canaries.languages import FEMALE, MALE, pack, pack_problems, PERSON_PROPERTIES
from wikimem_platform.canaries.languages.grammar import agree
from wikimem_platform.canaries.text import render

DE = pack("de")


def sentence(prop: str, variant: int, gender: str | None, subject: str, label: str) -> str:
    """Wording `variant` of `prop` for a person of `gender` named `subject` (None: h0) with the value
    `label` as localize gives it (made to agree, dates already formatted)."""
    template = agree(DE.templates[prop][variant], gender)
    name = DE.generic_subject(gender) if subject is None else subject
    return render(template, name, DE.value_form(prop, label, gender))


# --- structure ----------------------------------------------------------------------------------


def test_the_pack_is_structurally_sound():
    assert DE.code == "de" and DE.native_name == "Deutsch"
    assert pack_problems(DE) == []
    assert set(DE.templates) >= set(PERSON_PROPERTIES)
    assert sum(len(DE.templates[p]) for p in PERSON_PROPERTIES) == 32 * 11
    # the properties whose value agrees with a woman (value_form): occupation, position held ...
    assert {p for p in PERSON_PROPERTIES if DE.value_form(p, "Schauspieler", FEMALE) != "Schauspieler"} == {"P106", "P39"}


def test_at_most_two_paraphrases_put_the_value_first():
    for prop in PERSON_PROPERTIES:
        first = [t for t in DE.templates[prop][1:] if re.match(r"(⟦de:[^⟧]+⟧)?\{value\}", t)]
        assert len(first) <= 2, (prop, first)


# --- hand-checked sentences on real labels of the sample -----------------------------------------


@pytest.mark.parametrize("args, expected", [
    # P19 place of birth: cities, a country with an article, a plural island country
    (("P19", 0, MALE, "Douglas Adams", "Cambridge"), "Douglas Adams wurde in Cambridge geboren."),
    (("P19", 0, FEMALE, "Anna Magnani", "Rom"), "Anna Magnani wurde in Rom geboren."),
    (("P19", 0, MALE, None, "Libanon"), "Dieser Mann wurde im Libanon geboren."),
    (("P19", 1, FEMALE, "Anna Magnani", "Schweiz"), "Der Geburtsort von Anna Magnani ist die Schweiz."),
    (("P19", 1, FEMALE, None, "Vereinigte Staaten"), "Der Geburtsort von dieser Frau sind die Vereinigten Staaten."),
    (("P19", 3, MALE, "Douglas Adams", "Philippinen"), "Wo wurde Douglas Adams geboren? Auf den Philippinen."),
    (("P19", 7, MALE, None, "Türkei"), "Was diesen Mann betrifft, so wurde er in der Türkei geboren."),
    (("P19", 8, FEMALE, "Anna Magnani", "Volksrepublik China"), "In der Volksrepublik China wurde Anna Magnani geboren."),
    (("P19", 5, None, "Pius II.", "Irak"), "Pius II. ist eine Person, die im Irak geboren wurde."),
    # P20 place of death
    (("P20", 0, MALE, "Jean Louis Burckhardt", "Kairo"), "Jean Louis Burckhardt starb in Kairo."),
    (("P20", 0, FEMALE, "Anna Kuliscioff", "Vereinigtes Königreich"), "Anna Kuliscioff starb im Vereinigten Königreich."),
    (("P20", 6, MALE, "Jean Louis Burckhardt", "Vatikanstadt"),
     "Laut öffentlichen Angaben starb Jean Louis Burckhardt in der Vatikanstadt."),
    (("P20", 9, FEMALE, None, "Malta"), "Auf Malta starb diese Frau."),
    # P27 country of citizenship: genitive with the article, "von" for a bare name
    (("P27", 0, MALE, "Jean Louis Burckhardt", "Schweiz"), "Jean Louis Burckhardt ist Staatsbürger der Schweiz."),
    (("P27", 0, FEMALE, "Anna Magnani", "Italien"), "Anna Magnani ist Staatsbürgerin von Italien."),
    (("P27", 0, FEMALE, "Anna Magnani", "Königreich Italien"), "Anna Magnani ist Staatsbürgerin des Königreichs Italien."),
    (("P27", 1, MALE, "Mohammed Amin al-Husseini", "Osmanisches Reich"),
     "Mohammed Amin al-Husseini besitzt die Staatsbürgerschaft des Osmanischen Reiches."),
    (("P27", 1, FEMALE, "Fatima Abdel Mahmoud", "Sudan"), "Fatima Abdel Mahmoud besitzt die Staatsbürgerschaft des Sudans."),
    (("P27", 2, FEMALE, "Rita Levi-Montalcini", "Vereinigte Staaten"),
     "Das Land, dessen Staatsbürgerschaft Rita Levi-Montalcini besitzt, sind die Vereinigten Staaten."),
    (("P27", 3, FEMALE, None, "Iran"), "Von welchem Land ist diese Frau Staatsbürgerin? Vom Iran."),
    (("P27", 4, MALE, "Douglas Adams", "Vereinigtes Königreich"),
     "Frage: Welchem Staat gehört Douglas Adams als Staatsbürger an? Antwort: dem Vereinigten Königreich."),
    (("P27", 9, FEMALE, "Anna Kuliscioff", "Russisches Kaiserreich"),
     "Anna Kuliscioff hat die Staatsangehörigkeit des Russischen Kaiserreichs."),
    (("P27", 6, MALE, "Pius II.", "Heiliges Römisches Reich"),
     "Laut öffentlichen Angaben ist Pius II. Staatsbürger des Heiligen Römischen Reiches."),
    (("P27", 10, FEMALE, "Anna Chennault", "Republik China"),
     "Es ist bekannt, dass Anna Chennault Staatsbürgerin der Republik China ist."),
    # P106 occupation, agreeing with the person
    (("P106", 0, FEMALE, "Anna Magnani", "Filmschauspieler"), "Anna Magnani ist von Beruf Filmschauspielerin."),
    (("P106", 0, MALE, "Douglas Adams", "Science-Fiction-Schriftsteller"),
     "Douglas Adams ist von Beruf Science-Fiction-Schriftsteller."),
    (("P106", 1, FEMALE, "Rita Levi-Montalcini", "Arzt"), "Der Beruf von Rita Levi-Montalcini ist Ärztin."),
    (("P106", 1, FEMALE, None, "Rechtsanwalt"), "Der Beruf von dieser Frau ist Rechtsanwältin."),
    (("P106", 4, MALE, "Pius II.", "katholischer Priester"), "Was ist Pius II. von Beruf? Katholischer Priester."),
    (("P106", 8, FEMALE, "Fatima Abdel Mahmoud", "Kinderarzt"), "Kinderärztin ist der Beruf von Fatima Abdel Mahmoud."),
    (("P106", 9, FEMALE, None, "Geschäftsmann"), "Diese Frau ist beruflich als Geschäftsfrau tätig."),
    (("P106", 7, MALE, "Jean Louis Burckhardt", "Forschungsreisender"),
     "Was Jean Louis Burckhardt betrifft, so ist sein Beruf Forschungsreisender."),
    (("P106", 7, FEMALE, None, "Forschungsreisender"), "Was diese Frau betrifft, so ist ihr Beruf Forschungsreisende."),
    # P569 / P570 dates: day 1, year only
    (("P569", 0, MALE, "Douglas Adams", "11. März 1952"), "Douglas Adams wurde am 11. März 1952 geboren."),
    (("P569", 0, FEMALE, "Fatima Abdel Mahmoud", "1944"), "Fatima Abdel Mahmoud wurde 1944 geboren."),
    (("P569", 3, MALE, "Mohammed Amin al-Husseini", "1895"), "Wann wurde Mohammed Amin al-Husseini geboren? 1895."),
    (("P569", 3, FEMALE, "Anna Magnani", "7. März 1908"), "Wann wurde Anna Magnani geboren? Am 7. März 1908."),
    (("P569", 1, FEMALE, None, "1. Oktober 2012"), "Die Geburt von dieser Frau erfolgte am 1. Oktober 2012."),
    (("P569", 8, MALE, None, "1895"), "1895 wurde dieser Mann geboren."),
    (("P570", 0, FEMALE, "Anna Magnani", "26. September 1973"), "Anna Magnani starb am 26. September 1973."),
    (("P570", 4, MALE, "Pius II.", "1464"), "Frage: Wann verstarb Pius II.? Antwort: 1464."),
    (("P570", 8, MALE, None, "1. Oktober 2012"), "Am 1. Oktober 2012 starb dieser Mann."),
    # institutions: employer, education, membership
    (("P108", 0, MALE, "Douglas Adams", "BBC"), "Der Arbeitgeber von Douglas Adams ist die BBC."),
    (("P108", 1, MALE, "Pius II.", "Universität Wien"), "Pius II. arbeitet für die Universität Wien."),
    (("P108", 2, FEMALE, None, "Vereinte Nationen"), "Diese Frau ist bei den Vereinten Nationen beschäftigt."),
    (("P108", 2, MALE, None, "Mossad"), "Dieser Mann ist beim Mossad beschäftigt."),
    (("P108", 1, FEMALE, None, "Google"), "Diese Frau arbeitet für Google."),
    (("P69", 0, MALE, None, "Massachusetts Institute of Technology"),
     "Dieser Mann wurde am Massachusetts Institute of Technology ausgebildet."),
    (("P69", 0, FEMALE, None, "Freie Universität Berlin"), "Diese Frau wurde an der Freien Universität Berlin ausgebildet."),
    (("P69", 1, MALE, "Jean Louis Burckhardt", "Universität Cambridge"),
     "Jean Louis Burckhardt besuchte die Universität Cambridge."),
    (("P463", 0, FEMALE, None, "Royal Society"), "Diese Frau ist Mitglied der Royal Society."),
    (("P463", 1, MALE, None, "Berliner Philharmoniker"), "Dieser Mann gehört den Berliner Philharmonikern an."),
    (("P102", 1, FEMALE, None, "Sozialdemokratische Partei Deutschlands"),
     "Diese Frau gehört der Sozialdemokratischen Partei Deutschlands an."),
    (("P54", 0, MALE, None, "FC Bayern München"), "Dieser Mann spielt für den FC Bayern München."),
    (("P54", 2, MALE, None, "Los Angeles Lakers"), "Dieser Mann steht bei den Los Angeles Lakers unter Vertrag."),
    (("P119", 0, FEMALE, None, "Wiener Zentralfriedhof"), "Diese Frau wurde auf dem Wiener Zentralfriedhof beigesetzt."),
    (("P140", 2, MALE, None, "Islam"), "Dieser Mann bekennt sich zum Islam."),
    (("P140", 0, FEMALE, None, "römisch-katholische Kirche"),
     "Die Religion von dieser Frau ist die römisch-katholische Kirche."),
    # people as values are never declined; the subject's gender picks the kin word
    (("P26", 1, FEMALE, None, "Heinrich Mann"), "Diese Frau ist die Ehefrau von Heinrich Mann."),
    (("P3373", 9, MALE, "Heinrich Mann", "Thomas Mann"), "Heinrich Mann ist der Bruder von Thomas Mann."),
    (("P22", 2, FEMALE, None, "Johann Caspar Goethe"), "Johann Caspar Goethe ist der Vater von dieser Frau."),
    (("P39", 0, FEMALE, None, "Präsident der Vereinigten Staaten"),
     "Diese Frau hat die Position Präsidentin der Vereinigten Staaten inne."),
    (("P39", 9, FEMALE, None, "Römischer Kaiser"), "Diese Frau fungiert als Römische Kaiserin."),
])
def test_hand_checked_sentences(args, expected):
    assert sentence(*args) == expected


def test_context_forms_use_the_pronoun():
    assert render(agree(DE.context_forms["P19"], FEMALE), None, "Schweiz") == "Sie wurde in der Schweiz geboren."
    assert render(agree(DE.context_forms["P108"], MALE), None, "Vereinte Nationen") == \
        "Sein Arbeitgeber sind die Vereinten Nationen."
    assert render(agree(DE.context_forms["P569"], None), None, "1952") == "Er wurde 1952 geboren."
    # a value not filled keeps its marker for a later render
    assert render(agree(DE.context_forms["P27"], MALE), None, None) == "Er ist Staatsbürger ⟦de:gen⟧{value}."


# --- every wording renders cleanly --------------------------------------------------------------


@pytest.mark.parametrize("prop", PERSON_PROPERTIES)
def test_every_template_renders_without_markup(prop):
    for gender in (MALE, FEMALE, None):
        for subject in ("Anna Magnani", DE.generic_subject(gender)):
            for value in ("Rom", "Schweiz", "Vereinigte Staaten", "Maria Montessori", "11. März 1952", "1944"):
                for template in [*DE.templates[prop], DE.context_forms[prop]]:
                    text = render(agree(template, gender), subject, DE.value_form(prop, value, gender))
                    assert not re.search(r"[⟦⟧{}]", text), (prop, template, text)
                    assert not text[0].islower() and text.endswith((".", "?")), text
                    assert "  " not in text, text


# --- markers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("tag, filler, expected", [
    ("dat", "dieser Mann", "diesem Mann"), ("dat", "diese Frau", "dieser Frau"),
    ("akk", "dieser Mann", "diesen Mann"), ("akk", "diese Frau", "diese Frau"),
    ("dat", "Wilhelm Reich", "Wilhelm Reich"),  # a name is never declined, whatever it ends in
    ("in", "Den Haag", "in Den Haag"), ("in", "Niederlande", "in den Niederlanden"),
    ("in", "Krim", "auf der Krim"), ("in", "Freiburg im Breisgau", "in Freiburg im Breisgau"),
    ("in", "Österreich", "in Österreich"), ("in", "Steiermark", "in der Steiermark"),
    ("in", "Kanton Zürich", "im Kanton Zürich"), ("in", "Abbasiden-Kalifat", "im Abbasiden-Kalifat"),
    ("in", "Qing-Dynastie", "in der Qing-Dynastie"), ("in", "Staat Syrien", "im Staat Syrien"),
    ("in", "Dorotheenstädtischer Friedhof", "auf dem Dorotheenstädtischen Friedhof"),
    ("in", "New Orleans", "in New Orleans"), ("in", "Khartum", "in Khartum"),
    ("in", "Korea unter japanischer Herrschaft", "in Korea unter japanischer Herrschaft"),
    ("in", "West-Ukrainische Volksrepublik", "in der West-Ukrainischen Volksrepublik"),
    ("gen", "Unabhängiger Staat Kroatien", "des Unabhängigen Staates Kroatien"),
    ("nom", "Vereinigtes Königreich", "das Vereinigte Königreich"), ("nom", "Iran", "der Iran"),
    ("nom", "Rom", "Rom"), ("gen", "Vereinigte Staaten", "der Vereinigten Staaten"),
    ("gen", "Queen", "von Queen"), ("gen", "Opus Dei", "des Opus Dei"), ("gen", "Die Linke", "der Linken"),
    ("vdat", "Die Grünen", "den Grünen"), ("vakk", "Iran", "den Iran"),
    ("an", "ETH Zürich", "an der ETH Zürich"), ("an", "Collège de France", "am Collège de France"),
    ("bei", "Daimler AG", "bei der Daimler AG"), ("bei", "Warner Bros.", "bei Warner Bros."),
    ("von", "Iran", "vom Iran"), ("zu", "katholische Kirche", "zur katholischen Kirche"),
    ("für", "Mossad", "für den Mossad"), ("ist", "Niederlande", "sind die Niederlande"),
    ("gehört", "Nobelpreis für Physik", "gehört der Nobelpreis für Physik"),
    ("t_für", "Glasgow Rangers", "für die Glasgow Rangers"), ("t_für", "Real Madrid", "für Real Madrid"),
    ("t_für", "1. FC Köln", "für den 1. FC Köln"), ("t_gen", "Hamburger SV", "des Hamburger SV"),
    ("am", "11. März 1952", "am 11. März 1952"), ("am", "1952", "1952"), ("am", "500 v. Chr.", "500 v. Chr."),
])
def test_inflect(tag, filler, expected):
    assert DE.inflect(tag, filler) == expected


def test_an_unknown_marker_is_an_error():
    with pytest.raises(ValueError):
        DE.inflect("akkusativ", "Rom")


def test_generic_subject():
    assert DE.generic_subject(MALE) == "dieser Mann"
    assert DE.generic_subject(FEMALE) == "diese Frau"
    assert DE.generic_subject(None) == "dieser Mann"


# --- agreement of occupations and positions -----------------------------------------------------

SAMPLE_OCCUPATIONS = {  # real P106 / P39 labels of the sample -> female form
    "Politiker": "Politikerin", "Schriftsteller": "Schriftstellerin", "Schauspieler": "Schauspielerin",
    "Journalist": "Journalistin", "Diplomat": "Diplomatin", "Übersetzer": "Übersetzerin", "Philosoph": "Philosophin",
    "Rechtsanwalt": "Rechtsanwältin", "Arzt": "Ärztin", "Theologe": "Theologin", "Soziologe": "Soziologin",
    "Geschäftsmann": "Geschäftsfrau", "Kameramann": "Kamerafrau", "katholischer Priester": "katholische Priesterin",
    "Forschungsreisender": "Forschungsreisende", "Fotograf": "Fotografin", "Kalligraf": "Kalligrafin",
    "Bibliothekar": "Bibliothekarin", "Regisseur": "Regisseurin", "Singer-Songwriter": "Singer-Songwriterin",
    "Science-Fiction-Schriftsteller": "Science-Fiction-Schriftstellerin", "Zahnarzt": "Zahnärztin",
    "Beamter": "Beamtin", "Vorsitzender": "Vorsitzende", "Geheimrat": "Geheimrätin", "Abt": "Äbtissin",
    "König von Italien": "Königin von Italien", "Römischer Kaiser": "Römische Kaiserin",
    "stellvertretender Ministerpräsident": "stellvertretende Ministerpräsidentin", "Mönch": "Nonne",
    "Gesundheits- und Krankenpfleger": "Gesundheits- und Krankenpflegerin",
    # no female form, or already one, or not German word order: unchanged
    "Militär": "Militär", "Ulama": "Ulama", "Hofdame": "Hofdame", "Fernsehpersönlichkeit": "Fernsehpersönlichkeit",
    "Mitglied des Europäischen Parlaments": "Mitglied des Europäischen Parlaments",
    "Chief Executive Officer": "Chief Executive Officer", "Assistant Professor": "Assistant Professor",
}


@pytest.mark.parametrize("label, female", SAMPLE_OCCUPATIONS.items())
def test_value_form_of_occupations(label, female):
    prop = "P39" if label in ("Vorsitzender", "Geheimrat", "Abt", "König von Italien", "Römischer Kaiser",
                              "stellvertretender Ministerpräsident", "Chief Executive Officer") else "P106"
    assert DE.value_form(prop, label, FEMALE) == female
    assert DE.value_form(prop, label, MALE) == label
    assert DE.value_form(prop, label, None) == label


def test_value_form_leaves_other_properties_alone():
    assert DE.value_form("P19", "Arzt", FEMALE) == "Arzt"
    assert DE.value_form("P413", "Torwart", FEMALE) == "Torwart"


# --- dates --------------------------------------------------------------------------------------


@pytest.mark.parametrize("iso, label, expected", [
    ("1952-03-11", "11 March 1952", "11. März 1952"),
    ("2012-10-01", "1 October 2012", "1. Oktober 2012"),
    ("1952", "1952", "1952"),
    ("0893", "893", "893"),
    ("-0500", "500 BCE", "500 v. Chr."),
    ("1952-00-00", "1952", "1952"),
    ("1952-13-40", "bad", "bad"),
    ("sometime", "sometime", "sometime"),
])
def test_format_date(iso, label, expected):
    assert DE.format_date(iso, label) == expected
