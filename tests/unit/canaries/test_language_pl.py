"""The Polish pack: structure, rendering on real labels of the bundled sample, agreement, the
case tags, dates.

Every expected sentence below was written out by hand; the people, places, occupations and dates
are the sample's (`wikimem_platform/data/wikidata_sample.json.gz`, Polish labels; "Kenya" is one of
the sample's values without a Polish label, which the platform would give in English)."""

from __future__ import annotations

import re

import pytest

from wikimem_platform.canaries.languages import agree, FEMALE, MALE, pack, pack_problems, PERSON_PROPERTIES
from wikimem_platform.canaries.text import render

PL = pack("pl")


def say(prop: str, index: int, subject: str | None, label: str, gender: str | None, *, h0: bool = False,
        date: str | None = None) -> str:
    """Wording `index` of `prop` for a person of `gender` named `subject` (h0 if `h0`) and a value
    label as the platform gives it (value_form, or format_date for a date)."""
    value = PL.format_date(date, date) if date is not None else PL.value_form(prop, label, gender)
    name = PL.generic_subject(gender) if h0 else subject
    return render(agree(PL.templates[prop][index], gender), name, value)


def context(prop: str, label: str, gender: str | None) -> str:
    return render(agree(PL.context_forms[prop], gender), None, PL.value_form(prop, label, gender))


def test_pack_is_structurally_sound():
    assert PL.code == "pl" and PL.name == "Polish" and PL.native_name == "polski"
    assert pack_problems(PL) == []
    assert set(PL.templates) == set(PERSON_PROPERTIES) == set(PL.context_forms)
    assert all(len(PL.templates[p]) == 11 for p in PERSON_PROPERTIES)
    # the properties whose value agrees with a woman (value_form): occupation, position held ...
    assert {p for p in PERSON_PROPERTIES if PL.value_form(p, "aktor", FEMALE) != "aktor"} == {"P106", "P39"}
    # no wording names the subject in a case other than the nominative: nothing declines a name
    assert not any(re.search(r"⟦pl:[a-z]+⟧\{subject\}", t) for ts in PL.templates.values() for t in ts)


def test_generic_subject_is_gendered_and_masculine_by_default():
    assert PL.generic_subject(MALE) == "ten mężczyzna"
    assert PL.generic_subject(FEMALE) == "ta kobieta"
    assert PL.generic_subject(None) == "ten człowiek"


# --- place of birth / death: the "w" tag (locative with w / we / na) --------------------------

@pytest.mark.parametrize(("prop", "index", "subject", "label", "gender", "expected"), [
    ("P19", 0, "Umberto Eco", "Alessandria", MALE, "Umberto Eco urodził się w Alessandrii."),
    ("P19", 0, "Anna Magnani", "Rzym", FEMALE, "Anna Magnani urodziła się w Rzymie."),
    ("P19", 2, "Song Qingling", "Szanghaj", FEMALE, "W Szanghaju urodziła się Song Qingling."),
    ("P19", 5, "Krystyna Wazówna", "Sztokholm", FEMALE, "Gdzie urodziła się Krystyna Wazówna? W Sztokholmie."),
    ("P19", 6, "Federico Fellini", "Rimini", MALE,
     "Pytanie: gdzie przyszedł na świat Federico Fellini? Odpowiedź: w Rimini."),
    ("P19", 1, "Anna Magnani", "Rzym", FEMALE, "Anna Magnani – miejsce urodzenia: Rzym."),
    ("P19", 4, "Umberto Eco", "Alessandria", MALE, "Miejsce, w którym urodził się Umberto Eco, to Alessandria."),
    ("P19", 9, "Song Qingling", "Szanghaj", FEMALE, "Song Qingling – jej miejsce urodzenia to Szanghaj."),
    ("P20", 0, "Umberto Eco", "Mediolan", MALE, "Umberto Eco zmarł w Mediolanie."),
    ("P20", 0, "Han Suyin", "Lozanna", FEMALE, "Han Suyin zmarła w Lozannie."),
    ("P20", 2, "Song Qingling", "Pekin", FEMALE, "W Pekinie zmarła Song Qingling."),
    ("P20", 3, "Federico Fellini", "Rzym", MALE, "Federico Fellini umarł w Rzymie."),
])
def test_places_of_birth_and_death_with_real_people(prop, index, subject, label, gender, expected):
    assert say(prop, index, subject, label, gender) == expected


@pytest.mark.parametrize(("label", "phrase"), [
    ("Włochy", "we Włoszech"),  # plural country, "we" before a consonant cluster
    ("Stany Zjednoczone", "w Stanach Zjednoczonych"),
    ("Węgry", "na Węgrzech"),  # "na" countries
    ("Filipiny", "na Filipinach"),
    ("Ukraina", "na Ukrainie"),
    ("Malta", "na Malcie"),
    ("Polska", "w Polsce"),
    ("Chiny", "w Chinach"),
    ("Arabia Saudyjska", "w Arabii Saudyjskiej"),  # noun + adjective
    ("Korea Południowa", "w Korei Południowej"),
    ("Wielka Brytania", "w Wielkiej Brytanii"),  # adjective + noun
    ("Chińska Republika Ludowa", "w Chińskiej Republice Ludowej"),
    ("Zjednoczone Królestwo Włoch", "w Zjednoczonym Królestwie Włoch"),  # genitive complement kept
    ("Imperium osmańskie", "w Imperium osmańskim"),  # indeclinable -um head
    ("Nowy Jork", "w Nowym Jorku"),
    ("Florencja", "we Florencji"),
    ("Kair", "w Kairze"),  # consonant alternations
    ("Damaszek", "w Damaszku"),  # mobile e
    ("Triest", "w Trieście"),
    ("Bejrut", "w Bejrucie"),
    ("Bagdad", "w Bagdadzie"),
    ("Stambuł", "w Stambule"),
    ("Paryż", "w Paryżu"),
    ("Neapol", "w Neapolu"),
    ("Egipt", "w Egipcie"),
    ("Kijów", "w Kijowie"),
    ("Mekka", "w Mekce"),
    ("Casablanca", "w Casablance"),
    ("Wiedeń", "w Wiedniu"),
    ("Maroko", "w Maroku"),
    ("Aleppo", "w Aleppo"),  # indeclinable foreign names
    ("Suzhou", "w Suzhou"),
    ("Chile", "w Chile"),
    ("Los Angeles", "w Los Angeles"),
    ("Kenya", "w Kenya"),  # an English fallback label stays as it is
])
def test_the_locative_tag_on_real_place_labels(label, phrase):
    assert PL.inflect("w", label) == phrase
    assert say("P19", 0, "Anna Magnani", label, FEMALE) == f"Anna Magnani urodziła się {phrase}."


def test_generic_subject_in_every_gender():
    assert say("P19", 0, None, "Włochy", MALE, h0=True) == "Ten mężczyzna urodził się we Włoszech."
    assert say("P19", 8, None, "Stany Zjednoczone", FEMALE, h0=True) == (
        "Według dostępnych źródeł ta kobieta urodziła się w Stanach Zjednoczonych."
    )
    assert say("P19", 0, None, "Węgry", None, h0=True) == "Ten człowiek urodził się na Węgrzech."
    assert say("P19", 2, None, "Rzym", None, h0=True) == "W Rzymie urodził się ten człowiek."
    assert say("P106", 1, None, "lekarz", FEMALE, h0=True) == "Ta kobieta to lekarka."
    assert say("P22", 0, None, "Giovanni Magnani", FEMALE, h0=True) == "Ta kobieta – jej ojcem jest Giovanni Magnani."


# --- citizenship: the genitive tag -----------------------------------------------------------

@pytest.mark.parametrize(("index", "subject", "label", "gender", "expected"), [
    (0, "Anna Magnani", "Włochy", FEMALE, "Anna Magnani jest obywatelką Włoch."),
    (0, "Umberto Eco", "Zjednoczone Królestwo Włoch", MALE,
     "Umberto Eco jest obywatelem Zjednoczonego Królestwa Włoch."),
    (0, "Song Qingling", "Chińska Republika Ludowa", FEMALE,
     "Song Qingling jest obywatelką Chińskiej Republiki Ludowej."),
    (0, "Han Suyin", "Wielka Brytania", FEMALE, "Han Suyin jest obywatelką Wielkiej Brytanii."),
    (0, "Song Qingling", "Republika Chińska (1912–1949)", FEMALE,
     "Song Qingling jest obywatelką Republiki Chińskiej (1912–1949)."),
    (1, "Federico Fellini", "Stany Zjednoczone", MALE, "Federico Fellini posiada obywatelstwo Stanów Zjednoczonych."),
    (2, "Krystyna Wazówna", "Szwecja", FEMALE, "Krystyna Wazówna – kraj obywatelstwa: Szwecja."),
    (4, "Federico Fellini", "Włochy", MALE, "Włochy to państwo, którego obywatelem jest Federico Fellini."),
    (5, "Anna Magnani", "Włochy", FEMALE, "Obywatelką jakiego państwa jest Anna Magnani? Włoch."),
    (7, "Umberto Eco", "Imperium osmańskie", MALE,
     "Według dostępnych źródeł Umberto Eco jest obywatelem Imperium osmańskiego."),
    (9, "Anna Magnani", "Izrael", FEMALE, "Anna Magnani to obywatelka Izraela."),
    (10, "Umberto Eco", "Egipt", MALE, "Wiadomo, że Umberto Eco ma obywatelstwo Egiptu."),
])
def test_citizenship_with_real_labels(index, subject, label, gender, expected):
    assert say("P27", index, subject, label, gender) == expected


@pytest.mark.parametrize(("label", "genitive"), [
    ("Chiny", "Chin"), ("Niemcy", "Niemiec"), ("Węgry", "Węgier"), ("Polska", "Polski"), ("Kanada", "Kanady"),
    ("Argentyna", "Argentyny"), ("Syria", "Syrii"), ("Turcja", "Turcji"), ("Francja", "Francji"),
    ("Irak", "Iraku"), ("Meksyk", "Meksyku"), ("Urugwaj", "Urugwaju"), ("Kalifat Abbasydski", "Kalifatu Abbasydskiego"),
    ("Monako", "Monako"), ("Dynastia Qing", "Dynastii Qing"), ("Ming", "Ming"),
])
def test_the_genitive_tag_on_real_country_labels(label, genitive):
    assert PL.inflect("gen", label) == genitive


# --- occupations: value_form ----------------------------------------------------------------

@pytest.mark.parametrize(("label", "feminine"), [
    ("polityk", "polityczka"),
    ("pisarz", "pisarka"),
    ("aktor", "aktorka"),
    ("poeta", "poetka"),
    ("scenarzysta", "scenarzystka"),
    ("dziennikarz", "dziennikarka"),
    ("aktor filmowy", "aktorka filmowa"),
    ("dyplomata", "dyplomatka"),
    ("reżyser filmowy", "reżyserka filmowa"),
    ("tłumacz", "tłumaczka"),
    ("filozof", "filozofka"),
    ("nauczyciel akademicki", "nauczycielka akademicka"),
    ("historyk", "historyczka"),
    ("członek personelu wojskowego", "członkini personelu wojskowego"),
    ("krytyk literacki", "krytyczka literacka"),
    ("językoznawca", "językoznawczyni"),
    ("przedsiębiorca", "przedsiębiorczyni"),
    ("teolog", "teolożka"),
    ("piosenkarz i autor piosenek", "piosenkarka i autorka piosenek"),
    ("Islamski prawnik", "Islamska prawniczka"),
    ("lekarz stomatolog", "lekarka stomatolog"),
    ("kolekcjoner sztuki", "kolekcjonerka sztuki"),
    ("monarcha", "monarchini"),
    # no standard feminine: the masculine stays
    ("sędzia", "sędzia"),
    ("oficer", "oficer"),
    ("dramaturg", "dramaturg"),
    ("prezbiter katolicki", "prezbiter katolicki"),
    ("położna", "położna"),  # already feminine
])
def test_value_form_of_real_occupation_labels(label, feminine):
    assert PL.value_form("P106", label, FEMALE) == feminine
    assert PL.value_form("P106", label, MALE) == label
    assert PL.value_form("P106", label, None) == label


def test_value_form_leaves_other_properties_and_english_labels_alone():
    assert PL.value_form("P39", "ambasador", FEMALE) == "ambasadorka"
    assert PL.value_form("P39", "sędzia pokoju", FEMALE) == "sędzia pokoju"
    assert PL.value_form("P39", "prosecutor", FEMALE) == "prosecutor"  # English fallback label
    assert PL.value_form("P19", "pisarz", FEMALE) == "pisarz"
    assert PL.value_form("P106", "astronaut", FEMALE) == "astronaut"


@pytest.mark.parametrize(("index", "subject", "label", "gender", "expected"), [
    (0, "Anna Magnani", "aktor filmowy", FEMALE, "Anna Magnani to z zawodu aktorka filmowa."),
    (0, "Umberto Eco", "pisarz", MALE, "Umberto Eco to z zawodu pisarz."),
    (9, "Song Qingling", "polityk", FEMALE, "Polityczka to zawód, który wykonuje Song Qingling."),
    (4, "Federico Fellini", "reżyser filmowy", MALE, "Jaki zawód wykonuje Federico Fellini? Reżyser filmowy."),
    (8, "Han Suyin", "lekarz", FEMALE, "Han Suyin – jej zawód to lekarka."),
    (3, "Krystyna Wazówna", "malarz", FEMALE, "Krystyna Wazówna to osoba, której zawód to malarka."),
])
def test_occupation_sentences(index, subject, label, gender, expected):
    assert say("P106", index, subject, label, gender) == expected


# --- dates ----------------------------------------------------------------------------------

def test_format_date():
    assert PL.format_date("1908-03-07", "7 March 1908") == "7 marca 1908"
    assert PL.format_date("1972-12-01", "1 December 1972") == "1 grudnia 1972"  # no "1." and no ordinal
    assert PL.format_date("1433", "1433") == "1433"
    assert PL.format_date("0756", "756") == "756"
    assert PL.format_date("-0579", "579 BC") == "579 p.n.e."
    assert PL.format_date("1952-03", "March 1952") == "marzec 1952"
    assert PL.format_date("not a date", "circa 1900") == "circa 1900"


@pytest.mark.parametrize(("prop", "index", "subject", "gender", "date", "expected"), [
    ("P569", 0, "Anna Magnani", FEMALE, "1908-03-07", "Anna Magnani urodziła się 7 marca 1908."),
    ("P569", 2, "Anna Magnani", FEMALE, "1908-03-07", "7 marca 1908 urodziła się Anna Magnani."),
    ("P569", 1, "Umberto Eco", MALE, "1932-01-05", "Umberto Eco – data urodzenia: 5 stycznia 1932."),
    ("P569", 0, "Abdullah ibn Abd al-Aziz as-Saud", MALE, "1924-08-01",
     "Abdullah ibn Abd al-Aziz as-Saud urodził się 1 sierpnia 1924."),
    ("P569", 0, "Giovanni Giocondo", MALE, "1433", "Giovanni Giocondo urodził się w 1433 roku."),
    ("P569", 4, "Giovanni Giocondo", MALE, "1433", "Kiedy urodził się Giovanni Giocondo? W 1433 roku."),
    ("P569", 2, "Abu Nuwas", MALE, "0756", "W 756 roku urodził się Abu Nuwas."),
    ("P569", 0, "Laozi", MALE, "-0579", "Laozi urodził się w 579 roku p.n.e."),
    ("P570", 0, "Umberto Eco", MALE, "2016-02-19", "Umberto Eco zmarł 19 lutego 2016."),
    ("P570", 0, "Eric Hobsbawm", MALE, "2012-10-01", "Eric Hobsbawm zmarł 1 października 2012."),
    ("P570", 6, "Song Qingling", FEMALE, "1981-05-29", "Song Qingling to osoba, która zmarła 29 maja 1981."),
    ("P570", 1, "Fransis Marrasz", MALE, "1874", "Fransis Marrasz – data śmierci: 1874."),
    ("P570", 5, None, FEMALE, "1874", "Pytanie: kiedy umarła ta kobieta? Odpowiedź: w 1874 roku."),
])
def test_dates_full_day_one_year_only_and_bce(prop, index, subject, gender, date, expected):
    assert say(prop, index, subject, "", gender, h0=subject is None, date=date) == expected


def test_the_date_tag_for_a_month():
    assert PL.inflect("date", "wrzesień 1939") == "we wrześniu 1939"
    assert PL.inflect("date", "marzec 1952") == "w marcu 1952"


# --- other tags and properties ----------------------------------------------------------------

@pytest.mark.parametrize(("tag", "label", "form"), [
    ("gen", "gruźlica", "gruźlicy"),
    ("gen", "rak płuca", "raka płuca"),
    ("gen", "zawał mięśnia sercowego", "zawału mięśnia sercowego"),
    ("gen", "niewydolność serca", "niewydolności serca"),
    ("gen", "zapalenie płuc", "zapalenia płuc"),
    ("gen", "język włoski", "języka włoskiego"),
    ("gen", "Akademia Francuska", "Akademii Francuskiej"),
    ("gen", "myocardial infarction", "myocardial infarction"),  # English fallback: untouched
    ("acc", "Nagroda Nobla w dziedzinie literatury", "Nagrodę Nobla w dziedzinie literatury"),
    ("acc", "piłka nożna", "piłkę nożną"),
    ("acc", "Oscar", "Oscara"),
    ("acc", "Złoty Lew", "Złotego Lwa"),
    ("acc", "Order Orła Białego", "Order Orła Białego"),
    ("acc", "judo", "judo"),
    ("loc", "wiolonczela", "wiolonczeli"),
    ("loc", "fortepian", "fortepianie"),
    ("loc", "skrzypce", "skrzypcach"),
    ("w", "Uniwersytet Jagielloński", "na Uniwersytecie Jagiellońskim"),
    ("w", "Cmentarz Powązkowski", "na Cmentarzu Powązkowskim"),
    ("w", "Cmentarz Père-Lachaise", "na Cmentarzu Père-Lachaise"),
    ("w", "Harvard University", "w Harvard University"),
    ("w", "BBC", "w BBC"),
])
def test_case_tags_on_other_value_types(tag, label, form):
    assert PL.inflect(tag, label) == form


def test_sentences_of_other_properties():
    assert say("P509", 0, "Anna Magnani", "rak trzustki", FEMALE) == "Anna Magnani zmarła z powodu raka trzustki."
    assert say("P69", 0, "Umberto Eco", "Uniwersytet Turyński", MALE) == (
        "Umberto Eco kształcił się na Uniwersytecie Turyńskim."
    )
    assert say("P166", 10, "Federico Fellini", "Oscar", MALE) == "Oscara otrzymał Federico Fellini."
    assert say("P26", 0, "Federico Fellini", "Giulietta Masina", MALE) == (
        "Federico Fellini i Giulietta Masina byli małżeństwem."
    )
    assert say("P22", 3, "Krystyna Wazówna", "Gustaw II Adolf", FEMALE) == (
        "Krystyna Wazówna i Gustaw II Adolf to córka i ojciec."
    )
    assert say("P119", 0, "Krystyna Wazówna", "Bazylika św. Piotra na Watykanie", FEMALE) == (
        "Krystyna Wazówna została pochowana w Bazylice św. Piotra na Watykanie."
    )
    assert say("P1303", 0, "Umberto Eco", "flet", MALE) == "Umberto Eco grał na flecie."
    assert context("P19", "Rzym", FEMALE) == "Urodziła się w Rzymie."
    assert context("P27", "Włochy", MALE) == "Jest obywatelem Włoch."
    assert context("P3373", "Marcello Mastroianni", FEMALE) == "Ona i Marcello Mastroianni są rodzeństwem."


def test_unknown_tag_is_an_error():
    with pytest.raises(ValueError, match="unknown Polish inflection tag"):
        PL.inflect("dat", "Rzym")


# --- every wording renders cleanly -------------------------------------------------------------

FILLERS = {  # (a city, a country, a person) for place-like properties and for every other one
    "city": "Kair", "country": "Stany Zjednoczone", "person": "Umberto Eco",
}


@pytest.mark.parametrize("prop", PERSON_PROPERTIES)
@pytest.mark.parametrize("gender", [MALE, FEMALE, None])
def test_every_wording_renders_without_leftover_markup(prop, gender):
    values = list(FILLERS.values())
    if prop in ("P569", "P570"):
        values += [PL.format_date("1908-03-07", ""), PL.format_date("1433", "1433")]
    for template in [*PL.templates[prop], PL.context_forms[prop]]:
        agreed = agree(template, gender)
        for subject in ("Anna Magnani", PL.generic_subject(gender)):
            for value in values:
                text = render(agreed, subject, PL.value_form(prop, value, gender))
                assert not re.search(r"[⟦⟧{}]", text), text
                assert (text[0].isupper() or text[0].isdigit()) and text.endswith((".", "?")), text
                assert "  " not in text, text
