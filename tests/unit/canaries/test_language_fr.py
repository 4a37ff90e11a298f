"""The French pack: structure, rendering on real labels of the bundled sample, agreement, dates.

Every expected sentence below was written out by hand; the labels are the sample's French labels
(`wikimem_platform/data/wikidata_sample.json.gz`: occupations, citizenships, places of birth and
death)."""

from __future__ import annotations

import pytest

from wikimem_platform.canaries.languages import agree, FEMALE, MALE, pack, pack_problems, PERSON_PROPERTIES
from wikimem_platform.canaries.text import render

FR = pack("fr")


def say(prop: str, index: int, subject: str | None, label: str, gender: str | None, *, h0: bool = False,
        date: str | None = None) -> str:
    """Wording `index` of `prop` for a person of `gender` named `subject` (h0 if `h0`) and a value
    label as the platform gives it (value_form, or format_date for a date)."""
    value = FR.format_date(date, date) if date is not None else FR.value_form(prop, label, gender)
    name = FR.generic_subject(gender) if h0 else subject
    return render(agree(FR.templates[prop][index], gender), name, value)


def test_pack_is_structurally_sound():
    assert FR.code == "fr" and FR.native_name == "français"
    assert pack_problems(FR) == []
    assert set(FR.templates) >= set(PERSON_PROPERTIES)
    assert all(len(FR.templates[p]) == 11 for p in PERSON_PROPERTIES)
    # the properties whose value agrees with a woman (value_form): occupation, position held ...
    assert {p for p in PERSON_PROPERTIES if FR.value_form(p, "acteur", FEMALE) != "acteur"} == {"P106", "P39", "P413"}


def test_place_of_birth_with_articles_contractions_and_elision():
    assert say("P19", 0, "Naguib Mahfouz", "Le Caire", MALE) == "Naguib Mahfouz est né au Caire."
    assert say("P19", 0, "Oum Kalthoum", "Égypte", FEMALE) == "Oum Kalthoum est née en Égypte."
    assert say("P19", 0, "Maria Montessori", "Italie", FEMALE) == "Maria Montessori est née en Italie."
    assert say("P19", 0, "Robert De Niro", "États-Unis", MALE) == "Robert De Niro est né aux États-Unis."
    assert say("P19", 0, "Natalie Portman", "Israël", FEMALE) == "Natalie Portman est née en Israël."
    assert say("P19", 0, "Albert II", "Monaco", MALE) == "Albert II est né à Monaco."
    assert say("P19", 0, "Pablo Neruda", "Chili", MALE) == "Pablo Neruda est né au Chili."
    assert say("P19", 0, "Roberto Rossellini", "Rome", MALE) == "Roberto Rossellini est né à Rome."
    assert say("P19", 0, "Puyi", "dynastie Qing", MALE) == "Puyi est né sous la dynastie Qing."
    assert say("P19", 0, "Nâzım Hikmet", "Empire ottoman", MALE) == "Nâzım Hikmet est né dans l'Empire ottoman."
    assert say("P19", 1, "Antonio Gramsci", "Royaume d'Italie", MALE) == (
        "Le lieu de naissance d'Antonio Gramsci est le royaume d'Italie.")
    assert say("P19", 1, "Naguib Mahfouz", "Le Caire", MALE) == "Le lieu de naissance de Naguib Mahfouz est Le Caire."
    assert say("P19", 3, "Dalida", "Le Caire", FEMALE) == "Dalida est native du Caire."
    assert say("P19", 3, "Oriana Fallaci", "Italie", FEMALE) == "Oriana Fallaci est native d'Italie."
    assert say("P19", 3, "Juan Perón", "Argentine", MALE) == "Juan Perón est natif d'Argentine."
    assert say("P19", 5, "Ingrid Bergman", "Suède", FEMALE) == "Où Ingrid Bergman est-elle née ? En Suède."
    assert say("P19", 5, "Jorge Amado", "Brésil", MALE) == "Où Jorge Amado est-il né ? Au Brésil."
    assert say("P19", 9, "Amedeo Modigliani", "Italie", MALE) == "C'est en Italie qu'Amedeo Modigliani est né."
    assert say("P19", 0, None, "Le Caire", MALE, h0=True) == "Cet homme est né au Caire."
    assert say("P19", 5, None, "Philippines", FEMALE, h0=True) == "Où cette femme est-elle née ? Aux Philippines."


def test_place_of_death_city_articles_islands_and_aspirated_h():
    assert say("P20", 0, "Baruch Spinoza", "La Haye", MALE) == "Baruch Spinoza est mort à La Haye."
    assert say("P20", 0, "Ferenc Puskás", "Hongrie", MALE) == "Ferenc Puskás est mort en Hongrie."
    assert say("P20", 0, "Dom Mintoff", "Malte", MALE) == "Dom Mintoff est mort à Malte."
    assert say("P20", 0, "Bruce Lee", "Hong Kong", MALE) == "Bruce Lee est mort à Hong Kong."
    assert say("P20", 2, "Oum Kalthoum", "Le Caire", FEMALE) == "Oum Kalthoum est décédée au Caire."
    assert say("P20", 1, "Jean-Paul II", "Cité du Vatican", MALE) == (
        "Le lieu de décès de Jean-Paul II est la Cité du Vatican.")


def test_citizenship_takes_the_article_after_de_and_agrees_with_the_subject():
    assert say("P27", 0, "Umberto Eco", "Italie", MALE) == "Le pays de nationalité d'Umberto Eco est l'Italie."
    assert say("P27", 0, "Alain Delon", "France", MALE) == "Le pays de nationalité d'Alain Delon est la France."
    assert say("P27", 0, "Leonard Cohen", "Canada", MALE) == "Le pays de nationalité de Leonard Cohen est le Canada."
    assert say("P27", 1, "Maria Callas", "États-Unis", FEMALE) == "Maria Callas est citoyenne des États-Unis."
    assert say("P27", 1, "Golda Meir", "Israël", FEMALE) == "Golda Meir est citoyenne d'Israël."
    assert say("P27", 1, "Mehmed II", "Empire ottoman", MALE) == "Mehmed II est citoyen de l'Empire ottoman."
    assert say("P27", 1, "Mao Zedong", "république populaire de Chine", MALE) == (
        "Mao Zedong est citoyen de la république populaire de Chine.")
    assert say("P27", 4, "Soong Mei-ling", "république de Chine", FEMALE) == (
        "De quel pays Soong Mei-ling est-elle citoyenne ? De la république de Chine.")
    assert say("P27", 9, "Ahmed Chawki", "Sultanat d'Égypte", MALE) == (
        "C'est du sultanat d'Égypte qu'Ahmed Chawki est citoyen.")
    assert say("P27", 5, "Cixi", "dynastie Qing", FEMALE) == (
        "Q : Quel est le pays de nationalité de Cixi ? R : la dynastie Qing.")
    assert say("P27", 10, None, "Royaume-Uni", FEMALE, h0=True) == "La nationalité de cette femme est celle du Royaume-Uni."


def test_occupation_takes_the_subjects_gender():
    assert say("P106", 0, "Sophia Loren", "acteur ou actrice", FEMALE) == "Sophia Loren est actrice."
    assert say("P106", 0, "Marcello Mastroianni", "acteur ou actrice", MALE) == "Marcello Mastroianni est acteur."
    assert say("P106", 0, "Giulio Andreotti", "personnalité politique", MALE) == "Giulio Andreotti est homme politique."
    assert say("P106", 2, "Elsa Morante", "écrivain ou écrivaine", FEMALE) == (
        "Elsa Morante exerce la profession d'écrivaine.")
    assert say("P106", 2, "Italo Calvino", "écrivain ou écrivaine", MALE) == (
        "Italo Calvino exerce la profession d'écrivain.")
    assert say("P106", 4, "Nilde Iotti", "personnalité politique", FEMALE) == (
        "Quelle est la profession de Nilde Iotti ? Femme politique.")
    assert say("P106", 7, "Anna Magnani", "acteur ou actrice de cinéma", FEMALE) == (
        "On sait qu'Anna Magnani est actrice de cinéma.")
    assert say("P106", 9, "Claudio Abbado", "chef ou cheffe d'orchestre", MALE) == (
        "Chef d'orchestre, tel est le métier de Claudio Abbado.")
    assert say("P106", 10, "Rita Levi-Montalcini", "médecin", FEMALE) == (
        "Le métier de Rita Levi-Montalcini est celui de médecin.")
    assert say("P106", 8, "Alda Merini", "poète ou poétesse", FEMALE) == (
        "Quant à Alda Merini, elle est poétesse de profession.")
    assert say("P106", 0, None, "acteur ou actrice", FEMALE, h0=True) == "Cette femme est actrice."
    assert say("P106", 0, None, "acteur ou actrice", None, h0=True) == "Cet homme est acteur."
    # a head noun that needs an article as the attribute of "être"
    assert render("{subject} est ⟦fr:attr⟧{value}.", "X", "personnalité religieuse") == "X est une personnalité religieuse."


def test_dates_day_one_and_year_only():
    assert say("P569", 0, "Maria Montessori", "", FEMALE, date="1870-08-31") == (
        "Maria Montessori est née le 31 août 1870.")
    assert say("P569", 0, "Federico Fellini", "", MALE, date="1920-01-20") == "Federico Fellini est né le 20 janvier 1920."
    assert say("P570", 0, "Nilde Iotti", "", FEMALE, date="1999-12-04") == "Nilde Iotti est morte le 4 décembre 1999."
    assert say("P570", 0, "Eric Hobsbawm", "", MALE, date="2012-10-01") == "Eric Hobsbawm est mort le 1er octobre 2012."
    assert say("P569", 0, "Giovanni Pascoli", "", MALE, date="1855") == "Giovanni Pascoli est né en 1855."
    assert say("P569", 4, "Grazia Deledda", "", FEMALE, date="1871") == "Quand Grazia Deledda est-elle née ? En 1871."
    assert say("P569", 4, "Grazia Deledda", "", FEMALE, date="1871-09-27") == (
        "Quand Grazia Deledda est-elle née ? Le 27 septembre 1871.")
    assert say("P569", 9, "Ennio Morricone", "", MALE, date="1928-11-10") == (
        "C'est le 10 novembre 1928 qu'Ennio Morricone est né.")
    assert say("P569", 10, "Ennio Morricone", "", MALE, date="1928") == "Date de naissance d'Ennio Morricone : 1928."
    assert say("P570", 5, None, "", FEMALE, h0=True, date="1645") == (
        "Q : Quelle est la date de décès de cette femme ? R : 1645.")
    assert FR.format_date("1952-03-11", "11 March 1952") == "11 mars 1952"
    assert FR.format_date("1952-03-01", "1 March 1952") == "1er mars 1952"
    assert FR.format_date("1952", "1952") == "1952"
    assert FR.format_date("-0044", "44 BCE") == "44 av. J.-C."
    assert FR.format_date("around 1500", "around 1500") == "around 1500"
    assert FR.format_date("1952-13-40", "13th month") == "13th month"


def test_other_properties_articles_and_person_names():
    assert say("P509", 0, "Frédéric Chopin", "tuberculose", MALE) == (
        "La cause de la mort de Frédéric Chopin est la tuberculose.")
    assert say("P509", 2, "Frida Kahlo", "embolie pulmonaire", FEMALE) == "Frida Kahlo a succombé à l'embolie pulmonaire."
    assert say("P509", 1, "Jacques Brel", "cancer du poumon", MALE) == "Jacques Brel est mort du cancer du poumon."
    assert say("P108", 0, "Ludwig Wittgenstein", "université de Cambridge", MALE) == (
        "L'employeur de Ludwig Wittgenstein est l'université de Cambridge.")
    assert say("P69", 0, "Simone Weil", "École normale supérieure", FEMALE) == (
        "Simone Weil a fait ses études à l'École normale supérieure.")
    assert say("P1412", 0, "Ignacy Paderewski", "polonais", MALE) == "Ignacy Paderewski s'exprime en polonais."
    assert say("P103", 9, "Amin Maalouf", "arabe", MALE) == "L'arabe est la langue maternelle d'Amin Maalouf."
    assert say("P641", 0, "Manuel Estiarte", "water-polo", MALE) == "Manuel Estiarte pratique le water-polo."
    assert say("P641", 0, "Mario Lemieux", "hockey sur glace", MALE) == "Mario Lemieux pratique le hockey sur glace."
    assert say("P641", 7, "Naim Süleymanoğlu", "haltérophilie", MALE) == (
        "On sait que Naim Süleymanoğlu s'adonne à l'haltérophilie.")
    assert say("P1303", 0, "Mstislav Rostropovitch", "violoncelle", MALE) == (
        "L'instrument de Mstislav Rostropovitch est le violoncelle.")
    assert say("P1303", 9, "Marie-Claire Jamet", "harpe", FEMALE) == "La harpe est l'instrument de Marie-Claire Jamet."
    assert say("P102", 0, "François Mitterrand", "Parti socialiste", MALE) == (
        "François Mitterrand est membre du Parti socialiste.")
    assert say("P463", 0, "Marguerite Yourcenar", "Académie française", FEMALE) == (
        "Marguerite Yourcenar est membre de l'Académie française.")
    assert say("P166", 0, "Albert Camus", "prix Nobel de littérature", MALE) == (
        "Albert Camus a reçu le prix Nobel de littérature.")
    assert say("P166", 0, "Simone Veil", "grand officier de la Légion d'honneur", FEMALE) == (
        "Simone Veil a reçu le titre de grand officier de la Légion d'honneur.")
    assert say("P166", 4, "Jean Moulin", "compagnon de la Libération", MALE) == (
        "Quelle distinction Jean Moulin a-t-il reçue ? Le titre de compagnon de la Libération.")
    assert say("P54", 0, "Zinédine Zidane", "Real Madrid", MALE) == "Zinédine Zidane joue pour le Real Madrid."
    assert say("P119", 0, "Édith Piaf", "cimetière du Père-Lachaise", FEMALE) == (
        "Édith Piaf est inhumée au cimetière du Père-Lachaise.")
    assert say("P551", 0, "Vincent van Gogh", "Pays-Bas", MALE) == "Vincent van Gogh réside aux Pays-Bas."
    assert say("P101", 1, "René Cassin", "droits de l'homme", MALE) == (
        "René Cassin travaille dans le domaine des droits de l'homme.")
    assert say("P22", 0, "Irène Joliot-Curie", "Pierre Curie", FEMALE) == "Le père d'Irène Joliot-Curie est Pierre Curie."
    assert say("P3373", 0, "Joan Fontaine", "Olivia de Havilland", FEMALE) == (
        "Joan Fontaine est la sœur d'Olivia de Havilland.")
    assert say("P3373", 0, "Warren Beatty", "Shirley MacLaine", MALE) == "Warren Beatty est le frère de Shirley MacLaine."
    assert say("P40", 1, "Victor Hugo", "Adèle Hugo", MALE) == "Victor Hugo est le père d'Adèle Hugo."
    assert say("P26", 2, "Penélope Cruz", "Javier Bardem", FEMALE) == "Penélope Cruz est l'épouse de Javier Bardem."
    assert say("P26", 0, None, "Élisabeth II", MALE, h0=True) == "Cet homme est marié à Élisabeth II."
    assert say("P22", 9, None, "Henri IV", FEMALE, h0=True) == "Henri IV est le père de cette femme."


def test_context_forms_use_a_pronoun():
    assert render(agree(FR.context_forms["P19"], FEMALE), None, "Le Caire") == "Elle est née au Caire."
    assert render(agree(FR.context_forms["P27"], MALE), None, "France") == "Son pays de nationalité est la France."
    assert render(agree(FR.context_forms["P106"], FEMALE), None, FR.value_form("P106", "avocat ou avocate", FEMALE)) == (
        "Elle est avocate.")


@pytest.mark.parametrize("tag, filler, expected", [
    ("à", "Le Caire", "au Caire"), ("à", "La Haye", "à La Haye"), ("à", "Le Havre", "au Havre"),
    ("à", "France", "en France"), ("à", "Canada", "au Canada"), ("à", "États-Unis", "aux États-Unis"),
    ("à", "Cuba", "à Cuba"), ("à", "Madagascar", "à Madagascar"), ("à", "Iran", "en Iran"),
    ("à", "Haïti", "en Haïti"), ("à", "Honduras", "au Honduras"), ("à", "Irlande du Nord", "en Irlande du Nord"),
    ("à", "république de Venise", "en république de Venise"), ("à", "Texas", "au Texas"),
    ("à", "Lakers de Los Angeles", "aux Lakers de Los Angeles"), ("à", "Alexandrie", "à Alexandrie"),
    ("de", "France", "de France"), ("de", "Italie", "d'Italie"), ("de", "Canada", "du Canada"),
    ("de", "États-Unis", "des États-Unis"), ("de", "Le Caire", "du Caire"), ("de", "La Haye", "de La Haye"),
    ("de", "Haïti", "d'Haïti"), ("de", "Hongrie", "de Hongrie"), ("de", "Paris", "de Paris"),
    ("du", "France", "de la France"), ("du", "Italie", "de l'Italie"), ("du", "Les Misérables", "des Misérables"),
    ("le", "Israël", "Israël"), ("le", "Royaume d'Italie", "le royaume d'Italie"),
    ("le", "république populaire de Chine", "la république populaire de Chine"), ("le", "hip-hop", "le hip-hop"),
    ("le", "karaté", "le karaté"), ("le", "basque", "le basque"), ("le", "Organisation des Nations unies",
                                                                       "l'Organisation des Nations unies"),
    ("au", "catholicisme", "au catholicisme"), ("au", "Église catholique", "à l'Église catholique"),
    ("d'", "Antoine", "d'Antoine"), ("d'", "Le Corbusier", "de Le Corbusier"), ("d'", "cet homme", "de cet homme"),
    ("d'", "Hélène", "d'Hélène"), ("d'", "Hegel", "de Hegel"), ("d'", "Yves Montand", "d'Yves Montand"),
    ("d'", "Yasser Arafat", "de Yasser Arafat"), ("que", "Ahmed", "qu'Ahmed"), ("que", "cette femme", "que cette femme"),
    ("date", "11 mars 1952", "le 11 mars 1952"), ("date", "1er mars 1952", "le 1er mars 1952"),
    ("date", "1952", "en 1952"), ("date", "44 av. J.-C.", "en 44 av. J.-C."),
])
def test_inflect(tag, filler, expected):
    assert FR.inflect(tag, filler) == expected


def test_unknown_tag_is_an_error():
    with pytest.raises(ValueError):
        FR.inflect("zz", "Rome")


def test_generic_subject():
    assert FR.generic_subject(MALE) == "cet homme"
    assert FR.generic_subject(FEMALE) == "cette femme"
    assert FR.generic_subject(None) == "cet homme"


@pytest.mark.parametrize("label, masculine, feminine", [
    ("acteur ou actrice", "acteur", "actrice"),
    ("écrivain ou écrivaine", "écrivain", "écrivaine"),
    ("personnalité politique", "homme politique", "femme politique"),
    ("poète ou poétesse", "poète", "poétesse"),
    ("journaliste", "journaliste", "journaliste"),
    ("acteur ou actrice de cinéma", "acteur de cinéma", "actrice de cinéma"),
    ("professeur ou professeure d'université", "professeur d'université", "professeure d'université"),
    ("historien ou historienne de l'art", "historien de l'art", "historienne de l'art"),
    ("chef ou cheffe d'orchestre", "chef d'orchestre", "cheffe d'orchestre"),
    ("militant ou militante pour les droits des femmes", "militant pour les droits des femmes",
     "militante pour les droits des femmes"),
    ("personnalité du monde des affaires", "homme d'affaires", "femme d'affaires"),
    ("auteur-compositeur-interprète", "auteur-compositeur-interprète", "autrice-compositrice-interprète"),
    ("inventeur", "inventeur", "inventrice"),
    ("partisan", "partisan", "partisane"),
    ("médecin", "médecin", "médecin"),
    ("prêtre catholique", "prêtre catholique", "prêtre catholique"),
    ("critique littéraire", "critique littéraire", "critique littéraire"),
    ("officier", "officier", "officier"),
])
def test_value_form_occupations(label, masculine, feminine):
    assert FR.value_form("P106", label, MALE) == masculine
    assert FR.value_form("P106", label, None) == masculine
    assert FR.value_form("P106", label, FEMALE) == feminine


def test_value_form_positions_and_other_properties():
    assert FR.value_form("P39", "ambassadeur ou ambassadrice", FEMALE) == "ambassadrice"
    assert FR.value_form("P39", "maître ou maîtresse de conférences", FEMALE) == "maîtresse de conférences"
    assert FR.value_form("P39", "député européen", FEMALE) == "députée européenne"
    assert FR.value_form("P39", "président de la République française", FEMALE) == (
        "présidente de la République française")
    assert FR.value_form("P39", "fonctionnaire", FEMALE) == "fonctionnaire"
    assert FR.value_form("P413", "gardien de but", FEMALE) == "gardienne de but"
    assert FR.value_form("P413", "milieu de terrain", FEMALE) == "milieu de terrain"
    assert FR.value_form("P19", "acteur ou actrice", FEMALE) == "acteur ou actrice"  # not a gendered property
    assert FR.value_form("P27", "Italie", FEMALE) == "Italie"


def test_every_wording_renders_without_markup():
    persons = [("Antoine Arnauld", MALE), ("Hélène Boucher", FEMALE), ("Xu Bing", None)]
    values = ["Le Caire", "Italie", "États-Unis", "Olivia de Havilland", "11 mars 1952", "1952"]
    for prop in PERSON_PROPERTIES:
        for template in [*FR.templates[prop], FR.context_forms[prop]]:
            for name, gender in persons:
                for subject in (name, FR.generic_subject(gender)):
                    for value in values:
                        sentence = render(agree(template, gender), subject, FR.value_form(prop, value, gender))
                        assert not any(c in sentence for c in "⟦⟧{}"), (prop, template, sentence)
                        assert "  " not in sentence and not sentence[0].islower(), sentence


def test_value_first_wordings_are_few():
    for prop in PERSON_PROPERTIES:
        first = [t for t in FR.templates[prop][1:] if t.startswith(("{value}", "⟦fr:le⟧{value}"))]
        assert len(first) <= 2, prop
