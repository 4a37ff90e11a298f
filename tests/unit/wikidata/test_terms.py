"""Terms per language (issue 39.1): labels, descriptions and aliases of humans and of the values
their claims cite, in the configured languages, read alike by the fast reader and the full parse;
the English columns unchanged."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.unit.wikidata.test_dump_reader import assert_same_extract
from tests.unit.wikidata.test_extract import human, write_dump
from wikimem_platform.reference import bundled
from wikimem_platform.wikidata.dump_reader import parse_block, terms_blob
from wikimem_platform.wikidata.entities import check_languages, DEFAULT_LANGUAGES, TERMS_COLUMNS
from wikimem_platform.wikidata.extract import read_dump


def terms_of(extract, qid: str) -> dict[str, tuple]:
    rows = extract.terms[extract.terms["qid"] == qid]
    text = lambda value: None if pd.isna(value) else value  # noqa: E731 (a missing text reads as NaN)
    return {r["language"]: (text(r["label"]), text(r["description"]), list(r["aliases"]))
            for r in rows.to_dict("records")}


@pytest.fixture(scope="module")
def sample():
    return read_dump(bundled.SAMPLE_DUMP)


def test_the_sample_keeps_real_labels_in_other_languages(sample):
    assert list(sample.terms.columns) == TERMS_COLUMNS
    assert set(sample.terms["language"]) == set(DEFAULT_LANGUAGES)
    q42 = terms_of(sample, "Q42")  # the real entity: every default language, in the order asked
    assert list(q42) == list(DEFAULT_LANGUAGES)
    assert q42["de"] == ("Douglas Adams", "britischer Schriftsteller", ["Douglas Noël Adams", "Douglas Noel Adams"])
    assert q42["pl"] == ("Douglas Adams", "brytyjski pisarz", [])
    assert q42["en"][:2] == ("Douglas Adams", "author and humorist")  # the humans frame's English, again
    # a value (country of citizenship) with its labels from the sample's WILA sources
    japan = terms_of(sample, "Q17")
    assert {language: texts[0] for language, texts in japan.items()} == {
        "en": "Japan", "de": "Japan", "fr": "Japon", "it": "Giappone", "pl": "Japonia"}
    described = set(sample.humans["qid"]) | set(sample.claims.loc[sample.claims["datatype"] == "wikibase-item", "value"])
    assert set(sample.terms["qid"]) <= described
    assert not sample.terms.duplicated(["qid", "language"]).any()
    per_language = sample.terms.groupby("language").size()
    assert per_language["pl"] > 2000 and per_language["de"] > 2000  # of 10,336 English rows
    assert per_language["es"] < 50  # the sample's sources give Spanish for a few real entities only


def test_english_columns_do_not_depend_on_the_languages(sample):
    english_only = read_dump(bundled.SAMPLE_DUMP, languages=())
    assert english_only.terms.empty and list(english_only.terms.columns) == TERMS_COLUMNS
    for name in ("humans", "claims", "value_aliases", "properties"):
        pd.testing.assert_frame_equal(getattr(sample, name), getattr(english_only, name), obj=name)
    polish = read_dump(bundled.SAMPLE_DUMP, languages=["pl"])
    assert set(polish.terms["language"]) == {"pl"}
    pd.testing.assert_frame_equal(polish.terms, sample.terms[sample.terms["language"] == "pl"].reset_index(drop=True))


def value_with_terms(qid: str, **extra) -> str:
    return json.dumps({"type": "item", "id": qid, "claims": {}, **extra}, ensure_ascii=False)


def term(language: str, value: str) -> dict:
    return {"language": language, "value": value}


def test_terms_of_values_and_people_read_alike_in_every_mode(tmp_path):
    """Hand-written lines: a value with terms in three languages (the light decoder's path), one with
    descriptions written as an empty list (the general path), a value cited by nobody, a repeated
    value (the last line's terms win, language by language), a human with no English label."""
    place = {"mainsnak": {"snaktype": "value", "property": "P19", "datatype": "wikibase-item",
                          "datavalue": {"type": "wikibase-entityid", "value": {"entity-type": "item", "id": "Q31487"}}},
             "type": "statement", "rank": "normal"}
    job = {**place, "mainsnak": {**place["mainsnak"], "property": "P106",
                                 "datavalue": {"type": "wikibase-entityid", "value": {"entity-type": "item", "id": "Q36180"}}}}
    lines = [
        human("Q1", {"en": "Wisława Szymborska", "pl": "Wisława Szymborska", "ru": "Вислава Шимборская"},
              {"P19": [place], "P106": [job]}),
        human("Q2", {"pl": "Tylko Polski"}),  # no English label: not a human of the extract, no terms
        value_with_terms("Q31487", labels={"en": term("en", "Kraków"), "pl": term("pl", "Kraków"),
                                           "de": term("de", "Krakau"), "ru": term("ru", "Краков")},
                         descriptions={"de": term("de", "Stadt in Polen"), "en": term("en", "city in Poland")},
                         aliases={"en": [term("en", "Cracow")], "de": [term("de", "Krakow"), term("de", "")]}),
        value_with_terms("Q36180", labels={"en": term("en", "writer"), "fr": term("fr", "écrivain")}, descriptions=[]),
        value_with_terms("Q99", labels={"en": term("en", "nobody's value"), "de": term("de", "niemandes")}),
        value_with_terms("Q36180", labels={"en": term("en", "writer"), "pl": term("pl", "pisarz")}),  # repeated
    ]
    for suffix in (".json", ".json.gz"):
        path = write_dump(tmp_path / f"terms{suffix}", lines)
        reference = read_dump(path, mode="full")
        assert terms_of(reference, "Q31487") == {
            "en": ("Kraków", "city in Poland", ["Cracow"]), "de": ("Krakau", "Stadt in Polen", ["Krakow"]),
            "pl": ("Kraków", None, [])}  # "ru" is not asked for; an empty alias is no alias
        assert terms_of(reference, "Q36180") == {"en": ("writer", None, []), "fr": ("écrivain", None, []),
                                                 "pl": ("pisarz", None, [])}
        assert terms_of(reference, "Q1") == {"en": ("Wisława Szymborska", None, []), "pl": ("Wisława Szymborska", None, [])}
        assert set(reference.terms["qid"]) == {"Q1", "Q31487", "Q36180"}
        assert reference.humans["qid"].tolist() == ["Q1"]
        assert_same_extract(reference, read_dump(path))
        assert_same_extract(reference, read_dump(path, workers=2, block_bytes=256))


def test_a_block_spills_the_terms_maps_of_every_entity_only_when_asked():
    """Every entity's maps, cut to the languages asked, are spilled as JSON (`entity_terms` reads
    them at the end, for the humans and cited values only): on the light decoder's path (a line of
    the dump's usual shape) and on the general one (no aliases key)."""
    labels = {"en": term("en", "seven"), "nl": term("nl", "zeven"), "ru": term("ru", "семь")}
    usual = value_with_terms("Q7", labels=labels, descriptions={"nl": term("nl", "getal")}, aliases={})
    unusual = value_with_terms("Q8", labels=labels)
    block = (usual + "\n" + unusual + "\n").encode()
    assert parse_block(block).rows["terms"] == []
    ids, maps = parse_block(block, languages=("nl", "en")).rows["terms"]  # columns
    assert ids == ["Q7", "Q8"]
    nl_and_en = {"en": term("en", "seven"), "nl": term("nl", "zeven")}
    assert json.loads(maps[0]) == {"labels": nl_and_en, "descriptions": {"nl": term("nl", "getal")}, "aliases": {}}
    assert json.loads(maps[1]) == {"labels": nl_and_en}


def test_terms_maps_json_cannot_encode_are_spilled_escaped():
    """A lone surrogate (json.loads lets "\\ud800" through, then UTF-8 refuses it) is spilled as a
    JSON escape and read back as it was."""
    labels = {"pl": term("pl", "Odd\ud800land")}
    assert json.loads(terms_blob(labels=labels)) == {"labels": labels}


@pytest.mark.parametrize("languages, message", [
    (["EN"], "'EN' is not a Wikidata language code"),
    (["english"], "'english' is not a Wikidata language code"),
    (["pl", "de", "pl"], "['pl'] given more than once"),
    ("en,de", "languages must be a list of language codes"),
    ([None], "None is not a Wikidata language code"),
])
def test_a_bad_language_is_refused_with_the_field_named(languages, message):
    with pytest.raises(ValueError, match="languages") as error:
        check_languages(languages)
    assert message in str(error.value)
    with pytest.raises(ValueError, match="languages"):
        read_dump(bundled.SAMPLE_DUMP, languages=languages)


def test_language_codes_with_subtags_are_taken():
    assert check_languages(["pt-br", "zh-hans", "be-tarask", "en"]) == ("pt-br", "zh-hans", "be-tarask", "en")
    assert check_languages([]) == ()


def test_rows_follow_entity_number_then_the_languages_asked(tmp_path):
    """Q9's German comes from its second line, its French from the first: still listed as asked."""
    lines = [human("Q10", {"en": "Ten", "fr": "Dix"}), human("Q9", {"en": "Nine", "fr": "Neuf"}),
             human("Q9", {"en": "Nine", "de": "Neun"})]
    path = write_dump(tmp_path / "order.json", lines)
    for extract in (read_dump(path, languages=["pl", "de", "fr", "en"]),
                    read_dump(path, mode="full", languages=["pl", "de", "fr", "en"])):
        assert list(zip(extract.terms["qid"], extract.terms["language"])) == [
            ("Q9", "de"), ("Q9", "fr"), ("Q9", "en"), ("Q10", "fr"), ("Q10", "en")]
