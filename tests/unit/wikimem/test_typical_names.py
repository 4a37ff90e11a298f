"""Names typical of a country for invented-person controls (Faker's lists), and when they are
used: where the extract's own names follow origin, never in a world that shuffled names across
countries (the planted test world)."""

import pandas as pd
import pytest

from wikimem_platform.reference import bundled
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem import controls, typical_names
from wikimem_platform.wikimem.typical_names import FEMALE, MALE

GERMANY, POLAND, USA, UK, BHUTAN = "Q183", "Q36", "Q30", "Q145", "Q917"


def parts_of(people: list[tuple[str, str]]) -> pd.DataFrame:
    """name_parts of people given as (label, country)."""
    humans = pd.DataFrame({"qid": [f"Q{i}" for i in range(len(people))], "label": [label for label, _ in people]})
    claims = pd.DataFrame({"qid": humans["qid"], "property": "P27", "value": [country for _, country in people]})
    return controls.name_parts(humans, claims)


def test_lists_by_country_and_gender():
    first, last = typical_names.country_names(GERMANY)
    assert "Hans" in first[MALE] and "Hans" not in first[FEMALE] and "Anna" in first[FEMALE]
    assert {"Müller", "Schmidt"} <= set(last[None]) and set(first[MALE]) <= set(first[None])
    first, last = typical_names.country_names(POLAND)  # Polish surnames have a male form
    assert "Marek" in first[MALE] and "Kowalski" in last[MALE] and "Kowalski" not in last[FEMALE]
    assert "Doe" not in last[None] and "John" not in first[None]  # not Faker's placeholders
    assert typical_names.country_names(BHUTAN) is None and typical_names.country_names(None) is None


FIRSTS = ("Hans", "Grażyna", "Begoña", "Şükrü", "Hildur", "Tomasz", "Keiko", "Anna")
LASTS = ("Müller", "Peña", "Marciniak", "Şimşek", "Falcão", "Gómez", "Tanaka", "Schmidt")
COUNTRIES = (GERMANY, "Q29", POLAND, "Q43")


def shuffled_world() -> list[tuple[str, str]]:
    """The planted world's way: every first name with every surname, countries in turn, so that
    a name says nothing of its bearer's country."""
    return [(f"{a} {b}", COUNTRIES[(i + j) % len(COUNTRIES)]) for i, a in enumerate(FIRSTS) for j, b in enumerate(LASTS)]


def test_names_follow_origin_in_the_real_world_not_in_a_shuffled_one():
    real = parts_of([("Angela Merkel", GERMANY), ("Helmut Kohl", GERMANY), ("Konrad Adenauer", GERMANY),
                     ("Willy Brandt", GERMANY), ("Olaf Scholz", GERMANY), ("Pedro Sánchez", "Q29"),
                     ("Felipe González", "Q29"), ("Mariano Rajoy", "Q29"), ("Yoshida Shigeru", "Q17"),
                     ("Abe Shinzo", "Q17")])
    assert typical_names.names_follow_origin(real, GERMANY)
    world = parts_of(shuffled_world())
    # German lists hold Hans, Anna, Müller, Schmidt (and others): a German hits them no more often than anyone
    assert not typical_names.names_follow_origin(world, GERMANY)
    assert not typical_names.names_follow_origin(world, POLAND)
    # too few to tell: the lists are used; a country without lists never
    assert typical_names.names_follow_origin(parts_of([("Grażyna Peña", USA), *shuffled_world()]), USA)
    assert not typical_names.names_follow_origin(parts_of([("Jigme Thinley", BHUTAN)] * 5), BHUTAN)


@pytest.fixture(scope="module")
def sample():
    extract = read_dump(bundled.SAMPLE_DUMP)
    return controls.name_parts(extract.humans, extract.claims), controls.taken_names(extract.humans)


def test_controls_of_a_german_man_are_german_mens_names(sample):
    """The sample's Germans mostly bear German names, so an invented "Tobias Wenzlaff" (a man)
    gets first names of German men and German surnames; seeded, nobody in the extract, none of
    his own tokens."""
    parts, taken = sample
    first, last = typical_names.country_names(GERMANY)
    names = controls.invented_names("Tobias Wenzlaff", 19, parts, taken, origin=GERMANY, gender=MALE)
    assert len(set(names)) == 19
    for name in names:
        given, family = name.split()
        assert given in first[MALE] and family in last[None], name
        assert controls.fold(name) not in taken and not {"tobias", "wenzlaff"} & {controls.fold(given), controls.fold(family)}
    assert names == controls.invented_names("Tobias Wenzlaff", 19, parts, taken, origin=GERMANY, gender=MALE)
    women = controls.invented_names("Brianna Koslowski", 19, parts, taken, origin=USA, gender=FEMALE)
    assert all(w.split()[0] in typical_names.country_names(USA)[0][FEMALE] for w in women)
    # facts without a gender: the first name tells it where the lists give it one gender only
    assert typical_names.gender_of("Brianna", USA) == FEMALE and typical_names.gender_of("Tobias", GERMANY) == MALE
    assert controls.invented_names("Brianna Koslowski", 19, parts, taken, origin=USA) == women


def test_a_shuffled_world_keeps_its_own_names():
    """Where names do not tell origin, controls recombine the extract's tokens as before."""
    parts = parts_of(shuffled_world())
    names = controls.invented_names("Manfred Mai", 5, parts, set(), origin=GERMANY, gender=MALE)
    assert all(name.split()[0] in FIRSTS and name.split()[1] in LASTS for name in names)


def test_a_small_shuffled_world_borrowing_the_samples_names_keeps_them_recombined(sample):
    """An extract too small for 19 names borrows the bundled sample's name parts; whether names
    tell origin is still decided on the person's own world (shuffled: no), so the borrowed parts
    are recombined, not replaced by typical British names although the sample's Britons bear them."""
    sample_parts, sample_taken = sample
    people = [(f"{a} {b}", UK if (i + j) % 2 else "Q29") for i, a in enumerate(FIRSTS[:4]) for j, b in enumerate(LASTS[:4])]
    humans = pd.DataFrame({"qid": [f"Q{i}" for i in range(len(people))], "label": [label for label, _ in people],
                           "aliases": [[] for _ in people]})
    claims = pd.DataFrame({"qid": humans["qid"], "property": "P27", "value": [country for _, country in people]})
    parts = controls.name_parts(humans, claims)
    assert not typical_names.names_follow_origin(parts, UK) and typical_names.names_follow_origin(sample_parts, UK)
    person = humans.iloc[[1]]
    names = controls.control_names(person, claims[claims["qid"] == person["qid"].iloc[0]], humans, claims, 19)
    label = person["label"].iloc[0]
    assert names == controls.invented_names(label, 19, sample_parts, sample_taken | controls.taken_names(humans),
                                            origin=UK, avoid=[], typical=False)


def test_lists_too_short_for_the_names_asked_fall_back_to_the_extract(sample, monkeypatch):
    """A country whose lists cannot give n distinct names of the shape: the extract's names."""
    parts, taken = sample
    monkeypatch.setattr(typical_names, "pools", lambda origin, k, gender: [["Hans"], ["Müller"]])
    names = controls.invented_names("Tobias Wenzlaff", 19, parts, taken, origin=GERMANY, gender=MALE)
    assert len(set(names)) == 19 and "Hans Müller" not in names


def real_world() -> list[tuple[str, str]]:
    """People who bear their country's names, a few of each (too few for one country's own test)."""
    return [("Angela Merkel", GERMANY), ("Helmut Kohl", GERMANY), ("Olaf Scholz", GERMANY), ("Hans Schmidt", GERMANY),
            ("Pedro Sánchez", "Q29"), ("Felipe González", "Q29"), ("Mariano Rajoy", "Q29"), ("Begoña Gómez", "Q29"),
            ("Tomasz Marciniak", POLAND), ("Grażyna Kowalska", POLAND), ("Marek Nowak", POLAND),
            ("Yoshida Shigeru", "Q17"), ("Abe Shinzo", "Q17"), ("Keiko Tanaka", "Q17")]


def test_the_world_tells_origin_where_its_people_bear_their_countries_names():
    """Fisher's combination of the per-country tests: a world of people named as their country
    names them tells origin; the same tokens shuffled across countries do not."""
    assert typical_names.world_follows_origin(parts_of(real_world()))
    assert not typical_names.world_follows_origin(parts_of(shuffled_world()))
    assert typical_names.origin_chance(parts_of(real_world()), "Q917") is None  # no lists: no test


def test_a_country_the_extract_has_few_people_of_gets_its_lists_where_the_world_tells_origin():
    """Three Argentines who bear none of the Argentine lists' names fail their own test; with fewer
    than MIN_ORIGIN_LABELS of them the extract cannot give Argentine names either, and names from
    everywhere are what a typical Argentine name beats on Argentina: the lists, since the world's
    names tell origin. In a shuffled world, never."""
    argentina = "Q414"
    odd = [("Wolfgang Amadeus", argentina), ("Keiko Schmidt", argentina), ("Shinzo Merkel", argentina)]
    real = parts_of([*real_world(), *odd])
    assert not typical_names.names_follow_origin(real, argentina)
    assert controls.follows_origin(real, argentina, {})
    assert controls.follows_origin(real, GERMANY, {})
    shuffled = parts_of([*shuffled_world(), *odd])
    assert not controls.follows_origin(shuffled, argentina, {}) and not controls.follows_origin(shuffled, GERMANY, {})
    # a country with as many people as MIN_ORIGIN_LABELS keeps its own verdict: its own names are drawn
    many = parts_of([*real_world(), *odd * (controls.MIN_ORIGIN_LABELS // 3 + 1)])
    assert not controls.follows_origin(many, argentina, {})
