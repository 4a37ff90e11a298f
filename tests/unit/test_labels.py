"""Name and value matching across spellings and scripts (issue 39.3), checked by hand: accents of
Latin and Greek letters (and Cyrillic stress marks) ignored where a value is matched, other
scripts kept as given."""

import unicodedata

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.crm.cue import norm, text_cue
from wikimem_platform.crm.giveaways import shows
from wikimem_platform.labels import find_subjects, fold, normalize_label, strip_accents
from wikimem_platform.lm.generation import substring_hit
from wikimem_platform.subject_requests import audit
from wikimem_platform.wikimem.memorization import equivalence_mask

# Hindi labels of the bundled sample (real Wikidata labels). The first three were one key before
# issue 39 ("ल क" style: `re`'s \w cut words at every vowel sign), as were the two republics.
HINDI = ["लेको", "लूका", "लुक", "चीन गणराज्य", "चीनी गणराज्य", "कमला", "कमल", "राहुल गांधी", "जेनिन", "जीनान"]


@pytest.mark.parametrize("written, plain", [
    ("Kraków", "Krakow"),
    ("Łódź", "Lodz"),            # Ł has no NFKD decomposition: spelled plainly by the table
    ("São Paulo", "Sao Paulo"),
    ("Müller", "Muller"),
    ("Straße", "Strasse"),       # ß casefolds to ss
    ("STRASSE", "straße"),
    ("Lech Wałęsa", "LECH WALESA"),
    ("Øresund", "Oresund"),
    ("Αθήνα", "ΑΘΗΝΑ"),           # Greek tonos
    ("Пётр", "Петр"),             # ё is written е
    ("Толсто́й", "Толстой"),        # a stress mark
])
def test_accents_of_latin_and_greek_letters_are_ignored_by_fold(written, plain):
    assert fold(written) == fold(plain)


def test_fold_by_hand():
    assert fold("Kraków") == "krakow" and fold("Łódź") == "lodz" and fold("São Paulo") == "sao paulo"
    assert fold("Straße") == "strasse" and fold("Gdańsk, Poland") == "gdansk poland"
    assert strip_accents("Łódź") == "Lodz"  # case kept: strip_accents does not fold case
    # normalize_label keeps the accent: the exact spelling is still a different key
    assert normalize_label("Kraków") == "kraków" != normalize_label("Krakow")


def test_other_scripts_are_kept_as_given_and_match_themselves():
    for name in HINDI:
        nfc = unicodedata.normalize("NFC", name)
        assert fold(name) == normalize_label(name) == nfc  # nothing stripped: vowel signs are letters' parts
        assert substring_hit(f"उनका नाम {name} है", name)
    assert len({fold(name) for name in HINDI}) == len(HINDI)  # ten names, ten keys
    assert normalize_label("राहुल गांधी") == "राहुल गांधी"  # two words, not "र ह ल ग ध"
    assert fold("Лев Толстой") == "лев толстой" and fold("李小龍") == "李小龍"
    assert fold("Лев Толстой") != fold("Lev Tolstoy")  # no transliteration across scripts
    assert fold("Толстой") != fold("Толстои") and fold("Київ") != fold("Кіів")  # й, ї are letters, not и, і + accent


def test_hindi_labels_of_the_bundled_sample_keep_one_key_each():
    import gzip
    import json

    from wikimem_platform.reference import bundled

    labels = set()
    with gzip.open(bundled.SAMPLE_DUMP, "rt", encoding="utf-8") as dump:
        for line in dump:
            line = line.strip().rstrip(",")
            if line not in ("[", "]", ""):
                hindi = json.loads(line).get("labels", {}).get("hi")
                if hindi:
                    labels.add(hindi["value"])
    assert len(labels) > 900
    assert len({fold(label) for label in labels}) == len(labels)
    assert all(fold(label) == normalize_label(label) for label in labels)


def test_a_completion_written_without_accents_names_the_value():
    assert substring_hit("He was born in Krakow, Poland.", ["Kraków"])
    assert substring_hit("born in LODZ", "Łódź") and substring_hit("born in São Paulo", "Sao Paulo")
    assert not substring_hit("born in Krakowiak", "Kraków")  # still at word boundaries
    assert not substring_hit("जन्म कमल में", "कमला")       # a Hindi name is not found in a shorter one


def test_a_request_baseline_judges_krakow_as_naming_krakow_with_accent(monkeypatch):
    """A request's baseline completion (`audit.complete_baselines`, the model replaced by its
    output): "Krakow" names the place of birth "Kraków"; its CRM cue reads the prompt alone."""
    canaries = pd.DataFrame([{"subject_qid": "Q1", "subject": "Anna Nowak", "property": "P19", "variant_id": 0,
                              "kind": "baseline", "template": "{subject} was born in {value}.",
                              "ground_truth": ["Q31487"], "ground_truth_labels": ["Kraków"]}])
    monkeypatch.setattr(audit, "greedy_generate", lambda lm, prompts, max_new_tokens: [" Krakow, Poland."] * len(prompts))
    [row] = audit.complete_baselines(None, canaries).to_dict("records")
    assert row["prompt"] == "Anna Nowak was born in" and row["targets"] == ["Kraków"]
    assert bool(row["hit"]) and row["cue"] == pytest.approx(2 / 6)  # "ow" of "Nowak" (or "ak")


def test_value_equivalence_ignores_accents():
    assert equivalence_mask(["Krakow", "Cracow", "Warsaw"], ["Kraków"]).tolist() == [True, False, False]
    assert equivalence_mask(["Cracow"], ["Kraków"], ["Cracow"]).tolist() == [True]  # an alias
    assert np.array_equal(equivalence_mask(["कमल"], ["कमला"]), [False])


def test_crm_cue_ignores_accents_and_keeps_vowel_signs():
    assert text_cue("born in Krakow", "Kraków") == 1.0
    assert text_cue("Muller", "Müller") == 1.0 and text_cue("Strasse", "Straße") == 1.0
    assert norm("कमला") == "कमला"
    assert text_cue("कमल", "कमला") == pytest.approx(3 / 4)  # 3 of its 4 code points, not all of it


def test_giveaways_read_words_accent_free():
    assert shows("born in Lodz", "Łódź") and shows("née à São Paulo", "Sao Paulo")
    assert not shows("कमल", "कमला")


def test_a_query_without_accents_finds_the_person():
    people = pd.DataFrame({"qid": ["Q1", "Q2", "Q3"], "label": ["Lech Wałęsa", "Anna Müller", "राहुल गांधी"],
                           "aliases": [[], ["Anna Mueller"], []]})
    assert find_subjects("lech walesa", people)["qid"].tolist() == ["Q1"]
    assert find_subjects("ANNA MULLER", people)["qid"].tolist() == ["Q2"]
    assert find_subjects("Anna Mueller", people)["qid"].tolist() == ["Q2"]  # by alias
    assert find_subjects("राहुल गांधी", people)["qid"].tolist() == ["Q3"]
    assert find_subjects("राहुल", people).empty
