"""The letter in the requester's language: German, French and Polish written templates (not machine
translation), the English letter unchanged, and the language the facts were asked in. The expected
sentences are written out by hand."""

import re
from pathlib import Path

import pytest

from wikimem_platform.subject_requests import intake, letter_text
from wikimem_platform.subject_requests.answer import plain_sentence
from wikimem_platform.subject_requests.letter import annex_html, answer_html
from wikimem_platform.subject_requests.letter_text import FACT_NOUNS, Person, polish_plural, sentence, Text
from wikimem_platform.subject_requests.phrasing import Addressee, PHRASES

from tests.unit.subject_requests.test_letter import _document, fact_row

GOLDEN = Path(__file__).parent / "letter_golden"  # the English letter as rendered before letter_language
LIVING_ADDRESSEE, DEAD_ADDRESSEE = Addressee("Ilse Marwitz"), Addressee("Douglas Adams", "11 May 2001")
NB = "\u00a0"  # French: a non-breaking space before ":" and ";" and inside guillemets; Polish: "32 %", "1 234"

LIVING = {"key": "person-x", "label": "Ilse Marwitz", "qid": None, "in_wikidata": False}
DECEASED = {"key": "Q42", "label": "Douglas Adams", "qid": "Q42", "in_wikidata": True, "deceased": True,
            "date_of_death": "11 May 2001"}
CONTROLLER = {"name": "Musterfirma KI GmbH", "address": "Beispielweg 5, 10115 Berlin",
              "contact": "datenschutz@musterfirma.example", "dpo": "Dr. Lena Vogt",
              "supervisory_authority": "Berliner Beauftragte für Datenschutz und Informationsfreiheit",
              "automated_decisions": "The models audited here are not used to take decisions based solely on automated "
                                     "processing that produce legal or similarly significant effects on anyone (Art. 22 GDPR)."}
METHOD_CONTROLS = {"m_threshold": 0.8, "alpha": 1.0, "cue_tau": 0.5, "n_controls": 19, "control_alpha": 0.05}


def rich_fact(**fields):
    """A fact as `compose_answer` stores it: memorized, beating 19 invented people."""
    fact = {"property": "P106", "property_label": "occupation", "phrase": "your occupation", "values": ["journalist"],
            "verdict": "memorized", "access": "weights", "M": 0.91, "n_memorized": 10, "n_variants": 11,
            "z_star": 3.4, "truth_rank": 1, "n_candidates": 101, "wordings_left_out": [], "untestable": False,
            "completion": {"prompt": "Ilse Marwitz works as a", "output": " journalist for a daily paper."},
            "completion_hit": True, "cue": 0.0, "cue_flag": False, "completion_controls": 19,
            "completion_control_hits": 1, "completion_p_value": 0.1, "completion_evidence": True,
            "extraction": None, "emitted": True, "control_names": ["Hanna Brettschneider", "Jonas Weiland"],
            "n_controls": 19, "n_controls_planned": 19, "controls_as_extreme": 0, "p_value": 0.05,
            "control_alpha": 0.05, "wordings_asked": None, "wordings_said": None,
            "sentence": "The model has memorized your occupation (journalist): it ranks the true value first."}
    return {**fact, **fields}


def rich_document(kind="access", subject=LIVING, controller=CONTROLLER, **changes):
    """Three releases (weights with controls, a served endpoint, completions only) and one that failed."""
    weights = [rich_fact(),
               rich_fact(property="P19", property_label="place of birth", phrase="your place of birth",
                         values=["Tübingen"], verdict="weakly associated", M=0.27, n_memorized=3, truth_rank=2,
                         p_value=0.04, controls_as_extreme=0, completion=None, extraction={
                             "prompt": "name: Ilse Marwitz; place of birth:", "output": " Tübingen", "probe": "record",
                             "cue": 0.0, "controls": 19, "control_hits": 0, "p_value": 0.05, "evidence": True},
                         cue=0.62, cue_flag=True, sentence="The model associates your place of birth with you."),
               rich_fact(property="P27", property_label="country of citizenship", phrase="your citizenship",
                         values=["Germany"], verdict="not memorized", M=0.0, n_memorized=0, truth_rank=9,
                         n_controls=None, controls_as_extreme=None, p_value=None, control_names=None, emitted=False,
                         completion=None, sentence="For your citizenship there is no evidence.",
                         wordings_left_out=[{"variant_id": 11, "kind": "contextualized", "rule": "implied",
                                             "detail": "it states the place of birth, which can imply the value"}])]
    served = [rich_fact(access="prompt-logprobs", verdict="not memorized", M=0.09, n_memorized=1, truth_rank=3,
                        p_value=0.4, controls_as_extreme=7, emitted=False,
                        sentence="For your occupation there is no evidence (served).")]
    said = [rich_fact(access="generation", verdict="says it", M=None, z_star=None, truth_rank=None, n_candidates=None,
                      wordings_asked=11, wordings_said=6, n_memorized=6, n_variants=11, p_value=0.05,
                      sentence="The model says your occupation of you.")]
    models = [
        {"model": "acme-chat@3", "display_name": "Acme Assistent", "audited": True, "error": None, "fingerprint": "f00",
         "access": "weights", "precision": "bfloat16", "sentences_rescored": 1234, "share_rescored": 0.32,
         "purposes": "customer chat", "recipients": "customers", "retention": "24 months",
         "training_data": "public web text", "transfers": None,
         "n_facts": 3, "n_memorized": 1, "n_weak": 1, "n_said": 0, "facts": weights},
        {"model": "acme-chat@4", "display_name": "Acme Assistent", "audited": True, "error": None, "fingerprint": "f01",
         "access": "prompt-logprobs", "n_facts": 1, "n_memorized": 0, "n_weak": 0, "n_said": 0, "facts": served},
        {"model": "talker@1", "display_name": None, "audited": True, "error": None, "fingerprint": "f02",
         "access": "generation", "n_facts": 1, "n_memorized": 0, "n_weak": 0, "n_said": 1, "facts": said},
        {"model": "broken@2", "display_name": None, "audited": False, "error": "the weights could not be loaded",
         "facts": []},
    ]
    document = {
        "request": {"id": "dsr-7", "kind": kind, "received_at": "2026-11-01T00:00:00+00:00",
                    "due_at": "2026-12-01T00:00:00+00:00", "requester_reference": "AZ 12/26"},
        "subject": dict(subject), "controller": controller, "generated_at": "2026-11-02T00:00:00+00:00",
        "method": dict(METHOD_CONTROLS),
        "headline": "Acme Assistent (release 3): your occupation memorized (1 of 3 facts, 1 weakly associated)",
        "coverage": [], "models": models,
        "not_covered": [{"property": "P1412", "property_label": "languages spoken, written or signed",
                         "coverage": "not covered", "reason": "not among the audited properties"},
                        {"property": "P9999", "property_label": "favourite tram line", "coverage": "not covered",
                         "reason": "no other person in the reference data has a value for it, and at least 20 are "
                                   "needed to rank the true value against"}],
        "forget_set": None, "forget_criterion": None, "verification": [],
        "lineage": {"models": [], "code": {}, "data_assets": [], "run": {}, "config": {}, "config_hash": "abc"},
    }
    if kind == "erasure":
        document["forget_set"] = [
            {"model": "acme-chat@3", "subject_qid": None, "property": "P106", "property_label": "occupation",
             "value_label": "journalist", "M": 0.91, "controls_verdict": "memorized", "p_controls": 0.05,
             "n_controls": 19, "controls_alpha": 0.05, "beats_controls": True},
            {"model": "talker@1", "subject_qid": None, "property": "P106", "property_label": "occupation",
             "value_label": "journalist", "M": None, "p_controls": None, "n_controls": None}]
        document["forget_criterion"] = "lenient"
        document["verification"] = [{
            "model": "acme-chat", "before": "acme-chat@3", "after": "acme-chat@4", "access": "top-logprobs",
            "facts": [{"property": "P106", "property_label": "occupation", "values": ["journalist"],
                       "before": "memorized", "after": "not memorized", "M_before": 0.91, "M_after": 0.09,
                       "outcome": "forgotten"}],
            "counts": {"forgotten": 1, "still memorized": 0, "newly memorized": 0, "not memorized": 0},
            "erased": True, "retain": {"retain_facts": 40, "still_memorized": 38, "utility": 0.95},
            "privleak_auroc_before": 0.81, "privleak_auroc_after": 0.52, "verified_at": "2026-11-02T00:00:00+00:00"}]
    document.update(changes)
    return document


def _text(page: str) -> str:
    """What a reader reads: the page without style, tags or entities."""
    import html
    page = re.sub(r"<style>.*?</style>", "", page, flags=re.S)
    return html.unescape(re.sub(r"[ \t\n]+", " ", re.sub(r"<[^>]+>", " ", page)))


# ---------------------------------------------------------------------------------------------
# English stays as it was


@pytest.mark.parametrize("name, document", [
    ("access", lambda: rich_document()),
    ("erasure_deceased", lambda: rich_document("erasure", DECEASED, None)),
    ("no_controls", lambda: rich_document(method={"m_threshold": 0.8, "cue_tau": 0.5, "n_controls": 0})),
    ("minimal", lambda: _document()),
])
def test_without_a_letter_language_the_letter_is_the_english_one_it_was(name, document):
    # letter_golden/*.html: answer_html of these documents before letters had a language
    # (regenerate only for a deliberate change of the English letter)
    golden = (GOLDEN / f"{name}.html").read_text(encoding="utf-8")
    assert answer_html(document()) == golden
    assert answer_html({**document(), "letter_language": "en"}) == golden
    assert "<html lang='en'>" in golden


def test_an_unknown_letter_language_is_refused():
    with pytest.raises(ValueError, match="letter_language 'es'"):
        answer_html(rich_document(letter_language="es"))


def test_the_letter_languages_have_one_home():
    # the intake (which the answer imports) and the letter's words read the same tuple
    assert intake.LETTER_LANGUAGES is letter_text.LETTER_LANGUAGES
    assert letter_text.LETTER_LANGUAGES == ("en", "de", "fr", "pl")
    for language in letter_text.LETTER_LANGUAGES:  # every language has a whole catalogue
        assert set(letter_text.TEXT[language]) == set(letter_text.TEXT["en"]), language


# ---------------------------------------------------------------------------------------------
# Facts and sentences


def test_every_phrased_property_has_german_and_french_phrases():
    assert set(PHRASES) <= set(FACT_NOUNS)
    for prop in ("P106 P27 P19 P20 P569 P570 P413 P509 P1412 P103 P108 P39 P69 P3373 P26 P101 P463 P641 P264 "
                 "P1303 P22 P25 P40 P102 P166 P54 P119 P140 P136 P937 P551 P800").split():
        assert prop in FACT_NOUNS, prop
    de, de_dead = Person("de", LIVING_ADDRESSEE), Person("de", DEAD_ADDRESSEE)
    fr, fr_dead = Person("fr", LIVING_ADDRESSEE), Person("fr", DEAD_ADDRESSEE)
    assert (de.fact("P106", "occupation"), de.fact("P106", "occupation", "acc")) == ("Ihr Beruf", "Ihren Beruf")
    assert de_dead.fact("P106", "occupation") == "der Beruf von Douglas Adams"
    assert de_dead.fact("P106", "occupation", "acc") == "den Beruf von Douglas Adams"
    assert de.fact("P27", "country of citizenship") == "Ihre Staatsangehörigkeit"
    assert fr.fact("P106", "occupation") == "votre profession"
    assert fr_dead.fact("P106", "occupation") == "la profession de Douglas Adams"
    assert fr.fact("P40", "child") == "vos enfants" and fr_dead.fact("P108", "employer") == "l\u2019employeur de Douglas Adams"
    assert Person("fr", Addressee("Alan Turing", "7 June 1954")).fact("P19", "place of birth") == \
        "le lieu de naissance d\u2019Alan Turing"
    # a property without a phrase: its label quoted
    assert de.fact("P9999", "favourite tram line") == "die Angabe \u201efavourite tram line\u201c zu Ihrer Person"
    assert fr_dead.fact("P9999", "favourite tram line") == "l\u2019information « favourite tram line » concernant Douglas Adams"
    for prop in FACT_NOUNS:  # none speaks to the dead, none names the living
        for who in (de_dead, fr_dead):
            text = who.fact(prop, "label").lower()
            assert "ihr" not in text.split() and "votre" not in text and "vos" not in text.split(), prop
        assert "Ilse" not in de.fact(prop, "label") + fr.fact(prop, "label"), prop


def test_every_phrased_property_has_a_polish_phrase():
    assert all(isinstance(nouns[2], str) and nouns[2] for nouns in FACT_NOUNS.values())
    pl, pl_dead = Person("pl", LIVING_ADDRESSEE), Person("pl", DEAD_ADDRESSEE)
    # the requester formally, gender unknown; the deceased by a nominative name, never declined
    assert pl.fact("P106", "occupation") == "Pana/Pani zawód"
    assert pl.fact("P106", "occupation", "acc") == "Pana/Pani zawód"  # no case: a Polish fact stays nominative
    assert pl_dead.fact("P106", "occupation") == "zawód osoby o imieniu i nazwisku Douglas Adams"
    assert pl.fact("P27", "country of citizenship") == "Pana/Pani obywatelstwo"
    assert pl.fact("P569", "date of birth") == "Pana/Pani data urodzenia"
    assert pl_dead.fact("P20", "place of death") == "miejsce śmierci osoby o imieniu i nazwisku Douglas Adams"
    assert pl_dead.fact("P570", "date of death") == "data śmierci osoby o imieniu i nazwisku Douglas Adams"
    assert pl.fact("P108", "employer") == "Pana/Pani pracodawca" and pl.fact("P26", "spouse") == "Pana/Pani małżonek"
    assert pl.fact("P69", "educated at") == "Pana/Pani miejsce kształcenia"
    assert pl.fact("P40", "child") == "Pana/Pani dzieci"
    assert pl.fact("P9999", "favourite tram line") == "informacja \u201efavourite tram line\u201d dotycząca Pana/Pani"
    assert pl_dead.fact("P9999", "favourite tram line") == \
        "informacja \u201efavourite tram line\u201d dotycząca osoby o imieniu i nazwisku Douglas Adams"
    assert (pl.pl("ins"), pl_dead.pl("ins")) == ("Panem/Panią", "osobą o imieniu i nazwisku Douglas Adams")
    assert (pl.gen, pl_dead.gen) == ("Pana/Pani", "osoby o imieniu i nazwisku Douglas Adams")
    for prop in FACT_NOUNS:  # none speaks to the dead, none names the living
        assert "Pan" not in pl_dead.fact(prop, "label") and "Douglas Adams" in pl_dead.fact(prop, "label"), prop
        assert pl.fact(prop, "label").startswith("Pana/Pani ") and "Ilse" not in pl.fact(prop, "label"), prop


def test_polish_has_three_plural_forms():
    forms = ("informacja", "informacje", "informacji")
    expected = {0: "informacji", 1: "informacja", 2: "informacje", 3: "informacje", 4: "informacje", 5: "informacji",
                11: "informacji", 12: "informacji", 13: "informacji", 14: "informacji", 21: "informacji",
                22: "informacje", 24: "informacje", 25: "informacji", 102: "informacje", 112: "informacji",
                114: "informacji", 122: "informacje"}
    for n, form in expected.items():
        assert polish_plural(n, *forms) == form, n
    assert [polish_plural(n, "model", "modele", "modeli") for n in (1, 2, 4, 5, 12, 22)] == \
        ["model", "modele", "modele", "modeli", "modeli", "modele"]
    assert [polish_plural(n, "fakt", "fakty", "faktów") for n in (1, 22, 25, 12)] == ["fakt", "fakty", "faktów", "faktów"]
    t = Text("pl")  # the catalogue's triples
    assert t.n("in_short_forget", 1, memorized=1) == "1 informacja jest zapamiętana na poziomie progu; "
    assert t.n("in_short_forget", 3, memorized=3) == "3 informacje są zapamiętane na poziomie progu; "
    assert t.n("in_short_forget", 5, memorized=5) == "5 informacji jest zapamiętanych na poziomie progu; "
    assert t.n("in_short_forget", 0, memorized=0) == "0 informacji jest zapamiętanych na poziomie progu; "
    assert t.n("erasure_plan", 1, about="Pana/Pani") == "1 informacja dotycząca Pana/Pani trafia na listę do usunięcia"
    assert t.n("erasure_plan", 22, about="Pana/Pani") == "22 informacje dotyczące Pana/Pani trafiają na listę do usunięcia"
    assert t.n("erasure_plan", 12, about="Pana/Pani") == "12 informacji dotyczących Pana/Pani trafia na listę do usunięcia"
    for key in ("opening_tested", "in_short_forget", "in_short_enter", "erasure_plan"):
        assert len(letter_text.TEXT["pl"][key]) == 3, key
    assert "(1 zbadana wersja)" in t.n("opening_tested", 1, about="Pana/Pani", variants=11)
    assert "(4 zbadane wersje)" in t.n("opening_tested", 4, about="Pana/Pani", variants=11)
    assert "(5 zbadanych wersji)" in t.n("opening_tested", 5, about="Pana/Pani", variants=11)


def test_polish_numbers_and_dates():
    assert letter_text.number("pl", 0.05) == "0,05" and letter_text.plain_number("pl", 0.8) == "0,8"
    assert letter_text.count("pl", 1234) == f"1{NB}234" and letter_text.count("pl", 1234567) == f"1{NB}234{NB}567"
    assert letter_text.percent("pl", 0.32) == f"32{NB}%"
    assert letter_text.date("pl", "2026-12-01T00:00:00+00:00") == "1 grudnia 2026"
    assert letter_text.date("pl", "2026-05-11") == "11 maja 2026"
    assert letter_text.written_date("pl", "11 May 2001") == "11 maja 2001"
    assert letter_text.written_date("pl", "1952") == "1952"
    assert letter_text.quoted("pl", "tekst") == "\u201etekst\u201d"


def test_a_memorized_fact_beating_the_controls_in_german_and_french():
    fact = rich_fact(completion=None)
    assert sentence({**fact, "values": ["Journalistin"]}, Person("de", LIVING_ADDRESSEE)) == (
        "Das Modell hat Ihren Beruf (Journalistin) memorisiert: Es setzt den zutreffenden Wert unter 101 möglichen "
        "Werten in 10 von 11 Formulierungen an die erste Stelle. Von 19 erfundenen Personen mit denselben Angaben "
        "erzielte keine ein mindestens ebenso starkes Ergebnis (p = 0,05; nur p ≤ 0,05 gilt als Nachweis).")
    assert sentence({**fact, "values": ["journaliste"]}, Person("fr", LIVING_ADDRESSEE)) == (
        f"Le modèle a mémorisé votre profession (journaliste){NB}: il place la valeur exacte en première position "
        "parmi 101 valeurs possibles dans 10 des 11 formulations. Sur 19 personnes fictives dotées des mêmes "
        f"données, aucune n\u2019a obtenu de résultat au moins aussi fort (p = 0,05{NB}; seul p ≤ 0,05 vaut preuve).")


def test_a_fact_not_memorized_whose_completion_the_controls_share_in_german_and_french():
    assert sentence(fact_row(values=["Deutschland"]), Person("de", LIVING_ADDRESSEE)) == (
        "Für Ihre Staatsangehörigkeit (Deutschland) zeigt das Modell keine Memorisierung: In keiner der 11 "
        "Formulierungen setzt es den zutreffenden Wert an die erste Stelle. Aufgefordert, \u201eTobias Wenzlaff's "
        "country of citizenship is\u201c zu vervollständigen, schrieb das Modell \u201eGermany.\u201c (damit ist der "
        "zutreffende Wert genannt). Bei denselben Angaben unter erfundenen Namen nannte es den Wert auch für 12 von 19 "
        "dieser Personen (p = 0,65): Diese Vervollständigung zeigt, was das Modell über jede Person mit diesen "
        "Angaben sagen würde, nicht, was es über Sie weiß.")
    assert sentence(fact_row(values=["Allemagne"]), Person("fr", LIVING_ADDRESSEE)) == (
        f"Pour votre nationalité (Allemagne), le modèle ne montre aucune mémorisation{NB}: dans aucune des 11 "
        f"formulations il ne place la valeur exacte en première position. Invité à compléter «{NB}Tobias Wenzlaff's "
        f"country of citizenship is{NB}», le modèle a écrit «{NB}Germany.{NB}» (ce qui nomme la valeur exacte). Avec "
        "les mêmes données sous des noms inventés, il a nommé la valeur pour 12 des 19 personnes aussi (p = 0,65)"
        f"{NB}: cette complétion montre ce que le modèle dirait de toute personne ayant ces données, et non ce "
        "qu\u2019il sait de vous.")


def test_a_deceased_persons_fact_is_spoken_of_by_name():
    fact = rich_fact(property="P509", property_label="cause of death", completion=None, verdict="weakly associated",
                     n_memorized=2, p_value=0.03)
    assert sentence({**fact, "values": ["Herzinfarkt"]}, Person("de", DEAD_ADDRESSEE)) == (
        "Das Modell verknüpft die Todesursache von Douglas Adams (Herzinfarkt) stärker mit Douglas Adams als mit "
        "beliebigen Personen mit denselben Angaben, wenn auch nicht fest: Es setzt den zutreffenden Wert unter 101 "
        "möglichen Werten in 2 von 11 Formulierungen an die erste Stelle. Von 19 erfundenen Personen mit denselben "
        "Angaben erzielte keine ein mindestens ebenso starkes Ergebnis (p = 0,03; nur p ≤ 0,05 gilt als Nachweis).")
    assert sentence({**fact, "values": ["infarctus"]}, Person("fr", DEAD_ADDRESSEE)) == (
        "Le modèle associe la cause du décès de Douglas Adams (infarctus) à Douglas Adams davantage qu\u2019à "
        f"quiconque ayant les mêmes données, sans que ce lien soit solide{NB}: il place la valeur exacte en première "
        "position parmi 101 valeurs possibles dans 2 des 11 formulations. Sur 19 personnes fictives dotées des mêmes "
        f"données, aucune n\u2019a obtenu de résultat au moins aussi fort (p = 0,03{NB}; seul p ≤ 0,05 vaut preuve).")
    page = answer_html(rich_document(subject=DECEASED, letter_language="de"))
    assert "Douglas Adams ist verstorben (Sterbedatum: 11. Mai 2001)" in page  # the date as German writes it
    assert "Ihr Beruf" not in page and "der Beruf von Douglas Adams" in page


def test_polish_fact_sentences_memorized_not_memorized_and_deceased():
    # memorized, beating 19 invented people: the fact first, in the nominative, then the verdict of "tę informację"
    fact = rich_fact(completion=None)
    assert sentence({**fact, "values": ["dziennikarka"]}, Person("pl", LIVING_ADDRESSEE)) == (
        "Pana/Pani zawód (dziennikarka) – model zapamiętał tę informację: w 10 z 11 sformułowań stawia prawdziwą "
        "wartość na pierwszym miejscu spośród 101 możliwych wartości. Spośród 19 fikcyjnych osób o tych samych "
        "danych żadna nie uzyskała co najmniej równie silnego wyniku (p = 0,05; dowodem jest wyłącznie p ≤ 0,05).")
    # not memorized, the completion shared with the invented people
    assert sentence(fact_row(values=["Niemcy"]), Person("pl", LIVING_ADDRESSEE)) == (
        "Pana/Pani obywatelstwo (Niemcy) – model nie wykazuje zapamiętania tej informacji: w żadnym z 11 "
        "sformułowań nie stawia prawdziwej wartości na pierwszym miejscu. Poproszony o dokończenie zdania "
        "\u201eTobias Wenzlaff's country of citizenship is\u201d model napisał \u201eGermany.\u201d (podając tym "
        "samym prawdziwą wartość). Przy tych samych danych pod zmyślonymi imionami i nazwiskami podał tę wartość "
        "również dla 12 z 19 takich osób (p = 0,65): to uzupełnienie pokazuje, co model powiedziałby o każdej "
        "osobie o tych samych danych, a nie to, co wie o Panu/Pani.")
    # weakly associated, of a deceased person: named, the name never declined
    fact = rich_fact(property="P509", property_label="cause of death", completion=None, verdict="weakly associated",
                     n_memorized=2, p_value=0.03, controls_as_extreme=2)
    assert sentence({**fact, "values": ["zawał serca"]}, Person("pl", DEAD_ADDRESSEE)) == (
        "Przyczyna śmierci osoby o imieniu i nazwisku Douglas Adams (zawał serca) – model wiąże tę informację z "
        "osobą o imieniu i nazwisku Douglas Adams silniej niż z dowolną osobą o tych samych danych, choć nie jest "
        "to trwałe powiązanie: w 2 z 11 sformułowań stawia prawdziwą wartość na pierwszym miejscu spośród 101 "
        "możliwych wartości. Spośród 19 fikcyjnych osób o tych samych danych 2 uzyskały co najmniej równie silny "
        "wynik (p = 0,03; dowodem jest wyłącznie p ≤ 0,05).")
    # without invented people: memorized, weakly associated
    plain = rich_fact(completion=None, n_controls=None, values=["dziennikarka"])
    assert sentence(plain, Person("pl", LIVING_ADDRESSEE)) == (
        "Pana/Pani zawód (dziennikarka) – model zapamiętał tę informację: w 10 z 11 sformułowań stawia prawdziwą "
        "wartość na pierwszym miejscu spośród 101 możliwych wartości.")
    assert sentence({**plain, "verdict": "weakly associated", "n_memorized": 1}, Person("pl", DEAD_ADDRESSEE)) == (
        "Zawód osoby o imieniu i nazwisku Douglas Adams (dziennikarka) – model słabo wiąże tę informację z osobą o "
        "imieniu i nazwisku Douglas Adams: w 1 z 11 sformułowań stawia prawdziwą wartość na pierwszym miejscu "
        "spośród 101 możliwych wartości.")
    page = answer_html(rich_document(subject=DECEASED, letter_language="pl"))
    assert "Douglas Adams nie żyje (data śmierci: 11 maja 2001)" in page  # the date as Polish writes it
    assert "Pana/Pani zawód" not in page and "zawód osoby o imieniu i nazwisku Douglas Adams" in page
    assert "pismo kierujemy do Pana/Pani jako osoby, która złożyła wniosek" in page


def test_every_case_of_the_english_sentence_has_a_german_a_french_and_a_polish_one():
    left = [{"variant_id": 11, "kind": "contextualized", "rule": "implied",
             "detail": "it states the place of birth, country of citizenship, which can imply the value"}]
    extraction = {"prompt": "name: Tobias Wenzlaff; country of citizenship:", "output": " Germany", "probe": "record",
                  "cue": 0.0, "controls": 19, "control_hits": 5, "p_value": 6 / 20, "evidence": False}
    cases = [fact_row(wordings_left_out=left, completion=None),
             fact_row(wordings_left_out=[{**left[0], "rule": "cue", "detail": "it shows \u201cGermany\u201d"}],
                      untestable=True, completion=None),
             fact_row(completion=None, extraction=extraction, access="top-logprobs"),
             fact_row(completion=None, extraction={**extraction, "evidence": True, "p_value": 0.05}, verdict="memorized",
                      n_memorized=10),
             fact_row(completion_control_hits=0, completion_p_value=0.05, completion_evidence=True, cue_flag=True),
             fact_row(completion_controls=None, verdict="weakly associated", n_memorized=2),
             fact_row(access="generation", verdict="says it", wordings_asked=11, wordings_said=6, n_controls=19,
                      controls_as_extreme=0, p_value=0.05, control_alpha=0.05),
             fact_row(access="generation", wordings_asked=1, wordings_said=0)]
    for row in cases:
        for language in ("de", "fr", "pl"):
            text = sentence(row, Person(language, LIVING_ADDRESSEE))
            assert "{" not in text and "None" not in text, text
            # what the model was asked and said is quoted („…“ German, « … » French, „…” Polish)
            ours = re.sub("\u201e[^\u201c\u201d]*[\u201c\u201d]|«[^»]*»", "", text).lower()
            english = [w for w in ("the model", "invented", "wording", "value", " of ") if w in ours]
            assert not english, (english, text)
    de = [sentence(row, Person("de", LIVING_ADDRESSEE)) for row in cases]
    assert "(sie nennt den Geburtsort, die Staatsangehörigkeit, woraus sich der Wert ergeben kann)" in de[0]
    assert de[1].startswith("Für Ihre Staatsangehörigkeit (Germany) können die Antworten des Modells nicht zeigen")
    assert "Zugriffsstufe top-logprobs" in de[2] and "zeigt aber nicht, dass das Modell die Angabe nicht enthält" in de[2]
    assert de[3].startswith("Das Modell gibt die Angabe wieder: Auf die Eingabe")
    assert "diese Antwort betrifft also gerade Sie: Es handelt sich um eine einzelne Antwort" in de[4]
    assert de[6].startswith("Das Modell nennt Ihre Staatsangehörigkeit (Germany): Von 11 Sätzen über Sie")
    assert de[7].startswith("Das Modell hat Ihre Staatsangehörigkeit (Germany) nicht genannt: Von 1 Satz über Sie, "
                            "der unmittelbar vor dem Wert endet")
    fr = [sentence(row, Person("fr", LIVING_ADDRESSEE)) for row in cases]
    assert "1 formulation a été écartée de ce décompte, car son propre texte dévoile la valeur (elle indique le lieu " \
           "de naissance, la nationalité, qui peut laisser deviner la valeur)." in fr[0]
    assert fr[6].startswith(f"Le modèle énonce votre nationalité (Germany){NB}: sur 11 phrases vous concernant")
    pl = [sentence(row, Person("pl", LIVING_ADDRESSEE)) for row in cases]
    assert pl[0].endswith(" W tym obliczeniu pominięto 1 sformułowanie, ponieważ jego własna treść zdradza wartość "
                          "(podaje inne informacje, z których można wywnioskować wartość: miejsce urodzenia, "
                          "obywatelstwo).")
    assert pl[1] == ("Pana/Pani obywatelstwo (Germany) – odpowiedzi modelu nie mogą wykazać, co model wie: każde "
                     "sformułowanie pytania już zdradza wartość (zawiera \u201eGermany\u201d), dlatego ta informacja "
                     "nie jest uznawana za zapamiętaną.")
    assert ("Na kartę danych z tymi informacjami model odpowiedział \u201eGermany\u201d, podając prawdziwą wartość, "
            "ale zrobił to również dla 5 z 19 fikcyjnych osób o tych samych danych (p = 0,30): mówi tak o każdej "
            "osobie o tych danych.") in pl[2]
    assert "(punkt końcowy zgodny z API OpenAI, poziom dostępu top-logprobs: najbardziej prawdopodobne" in pl[2]
    assert pl[2].endswith("to badanie nie znajduje więc dowodu, ale nie wykazuje, że model tej informacji nie "
                          "zawiera.")
    assert pl[3].startswith("Model sam podaje prawdziwą wartość: na zapytanie \u201ename: Tobias Wenzlaff; country "
                            "of citizenship:\u201d (w tym brzmieniu) napisał \u201eGermany\u201d, podczas gdy w "
                            "przypadku fikcyjnych osób o tych samych danych zrobił to tylko dla 5 z 19 (p = 0,05). "
                            "Pana/Pani obywatelstwo (Germany) – model zapamiętał tę informację:")
    assert ("podał tę wartość dla 0 z 19 takich osób (p = 0,05); ta odpowiedź dotyczy zatem właśnie Pana/Pani: jest "
            "to jednak pojedyncza odpowiedź na jedno sformułowanie") in pl[4]
    assert pl[4].endswith(" Zapytanie samo zawiera już część wartości, dlatego zgodność ma tu mniejszą moc dowodową.")
    assert pl[5].startswith("Pana/Pani obywatelstwo (Germany) – model słabo wiąże tę informację z Panem/Panią: w 2 "
                            "z 11 sformułowań")
    assert pl[6].startswith("Pana/Pani obywatelstwo (Germany) – model podaje tę informację: uzupełnił tą wartością 6 "
                            "z 11 zdań dotyczących Pana/Pani, które kończą się tuż przed wartością (\u201eTobias "
                            "Wenzlaff's country of citizenship is\u201d \u2192 \u201eGermany.\u201d). Spośród 19 "
                            "fikcyjnych osób o tych samych danych u żadnej wartość nie pojawiła się w co najmniej "
                            "takiej samej liczbie zdań (p = 0,05; dowodem jest wyłącznie p ≤ 0,05).")
    assert pl[7].startswith("Pana/Pani obywatelstwo (Germany) – model nie podał tej informacji: uzupełnił tą "
                            "wartością 0 z 1 zdania dotyczącego Pana/Pani, które kończy się tuż przed wartością.")


# ---------------------------------------------------------------------------------------------
# The letter


def test_the_title_and_the_html_language():
    for language, title in (("de", "Auskunft über Ihre personenbezogenen Daten (Art. 15 DSGVO)"),
                            ("fr", "Accès à vos données à caractère personnel (article 15 du RGPD)"),
                            ("pl", "Dostęp do Pana/Pani danych osobowych (art. 15 RODO)")):
        page = answer_html(rich_document(letter_language=language))
        assert f"<html lang='{language}'>" in page and f"<h1>{title}</h1>" in page
    erasure = answer_html(rich_document("erasure", DECEASED, None, letter_language="de"))
    assert "<h1>Löschung der personenbezogenen Daten von Douglas Adams (Art. 17 DSGVO)</h1>" in erasure
    erasure = answer_html(rich_document("erasure", letter_language="fr"))
    assert "<h1>Effacement de vos données à caractère personnel (article 17 du RGPD)</h1>" in erasure
    erasure = answer_html(rich_document("erasure", letter_language="pl"))
    assert "<h1>Usunięcie Pana/Pani danych osobowych (art. 17 RODO)</h1>" in erasure
    assert "<title>Usunięcie Pana/Pani danych osobowych (art. 17 RODO): wniosek dsr-7</title>" in erasure
    erasure = answer_html(rich_document("erasure", DECEASED, None, letter_language="pl"))
    assert "<h1>Usunięcie danych osobowych osoby o imieniu i nazwisku Douglas Adams (art. 17 RODO)</h1>" in erasure
    access = answer_html(rich_document(subject=DECEASED, letter_language="pl"))
    assert "<h1>Dostęp do danych osobowych osoby o imieniu i nazwisku Douglas Adams (art. 15 RODO)</h1>" in access
    assert ("2 listopada 2026<br>Wniosek dsr-7; Pana/Pani znak: AZ 12/26. Data wpływu: 1 listopada 2026; termin "
            "udzielenia odpowiedzi: 1 grudnia 2026.") in access


def test_the_rights_and_the_complaint_in_german_and_french():
    page = _text(answer_html(rich_document(letter_language="de")))
    assert ("Ihre Rechte (Art. 15 Abs. 1 lit. e DSGVO). Sie haben das Recht auf Berichtigung (Art. 16 DSGVO): "
            "unrichtige personenbezogene Daten berichtigen und unvollständige vervollständigen zu lassen; das Recht auf "
            "Löschung (Art. 17 DSGVO): personenbezogene Daten löschen zu lassen; das Recht auf Einschränkung der "
            "Verarbeitung (Art. 18 DSGVO): die Verarbeitung einschränken zu lassen, solange die Richtigkeit oder "
            "Rechtmäßigkeit bestritten wird; das Widerspruchsrecht (Art. 21 DSGVO): einer Verarbeitung auf Grundlage "
            "berechtigter Interessen oder zum Zweck der Direktwerbung zu widersprechen. Um diese Rechte auszuüben, "
            "wenden Sie sich bitte an datenschutz@musterfirma.example.") in page
    assert ("Beschwerderecht (Art. 15 Abs. 1 lit. f, Art. 77 DSGVO). Sie haben das Recht, Beschwerde bei einer "
            "Aufsichtsbehörde einzulegen, insbesondere bei: Berliner Beauftragte für Datenschutz und "
            "Informationsfreiheit.") in page
    assert "(Art. 22 DSGVO)" in page and "Datenschutzbeauftragter: Dr. Lena Vogt" in page
    page = _text(answer_html(rich_document(letter_language="fr")))
    assert (f"Vos droits (article 15, paragraphe 1, point e), du RGPD). Vous disposez du droit de rectification "
            f"(article 16 du RGPD){NB}: obtenir la rectification des données inexactes et que les données incomplètes "
            f"soient complétées{NB}; du droit à l\u2019effacement (article 17 du RGPD){NB}: obtenir l\u2019effacement de "
            f"données à caractère personnel{NB}; du droit à la limitation du traitement (article 18 du RGPD){NB}: "
            "obtenir la limitation du traitement lorsque l\u2019exactitude ou la licéité des données est contestée"
            f"{NB}; du droit d\u2019opposition (article 21 du RGPD){NB}: s\u2019opposer à un traitement fondé sur "
            "l\u2019intérêt légitime ou à des fins de prospection. Pour les exercer, écrivez à "
            "datenschutz@musterfirma.example.") in page
    assert (f"Droit d\u2019introduire une réclamation (article 15, paragraphe 1, point f), et article 77 du RGPD). Vous "
            "pouvez introduire une réclamation auprès d\u2019une autorité de contrôle, en particulier"
            f"{NB}: Berliner Beauftragte") in page
    assert f"Délégué à la protection des données{NB}: Dr. Lena Vogt" in page


def test_the_rights_and_the_complaint_in_polish():
    page = _text(answer_html(rich_document(letter_language="pl")))
    assert ("Pana/Pani prawa (art. 15 ust. 1 lit. e RODO). Przysługuje Panu/Pani prawo do sprostowania danych "
            "(art. 16 RODO), tj. prawo żądania sprostowania nieprawidłowych danych osobowych oraz uzupełnienia "
            "niekompletnych danych; prawo do usunięcia danych (art. 17 RODO), tj. prawo żądania usunięcia danych "
            "osobowych; prawo do ograniczenia przetwarzania (art. 18 RODO), tj. prawo żądania ograniczenia "
            "przetwarzania, gdy kwestionowana jest prawidłowość danych lub zgodność przetwarzania z prawem; prawo do "
            "sprzeciwu (art. 21 RODO), tj. prawo wniesienia sprzeciwu wobec przetwarzania opartego na prawnie "
            "uzasadnionym interesie lub prowadzonego na potrzeby marketingu bezpośredniego. Aby skorzystać z tych "
            "praw, prosimy o kontakt: datenschutz@musterfirma.example.") in page
    assert ("Prawo do wniesienia skargi (art. 15 ust. 1 lit. f, art. 77 RODO). Przysługuje Panu/Pani prawo "
            "wniesienia skargi do organu nadzorczego (w Polsce jest nim Prezes Urzędu Ochrony Danych Osobowych), w "
            "szczególności do: Berliner Beauftragte für Datenschutz und Informationsfreiheit.") in page
    assert ("Zautomatyzowane podejmowanie decyzji (art. 15 ust. 1 lit. h RODO). Badane modele nie są "
            "wykorzystywane do podejmowania decyzji, które opierają się wyłącznie na zautomatyzowanym przetwarzaniu i "
            "wywołują wobec kogokolwiek skutki prawne lub w podobny sposób istotnie na niego wpływają (art. 22 "
            "RODO).") in page
    assert "Cele przetwarzania (art. 15 ust. 1 lit. a RODO)" in page and "Kopia danych (art. 15 ust. 3 RODO)." in page
    assert ("Kategorie danych osobowych (art. 15 ust. 1 lit. b RODO). Wymienione powyżej informacje dotyczące "
            "Pana/Pani, o ile model je zapamiętał: Pana/Pani miejsce urodzenia, Pana/Pani obywatelstwo, Pana/Pani "
            "zawód.") in page
    assert "Inspektor ochrony danych: Dr. Lena Vogt" in page
    assert ("W skrócie: Acme Assistent (wersja 3): zapamiętane informacje: Pana/Pani zawód (1 z 3 informacji, 1 "
            "słabo powiązana); Acme Assistent (wersja 4): zapamiętane informacje: brak (0 z 1 informacji, 0 słabo "
            "powiązanych); talker (wersja 1) (wyłącznie uzupełnienia): podawane informacje: Pana/Pani zawód (1 z 1 "
            "informacji); nie udało się zbadać 1 wersji.") in page
    assert ("Zwrócił(a) się Pan/Pani z żądaniem udzielenia informacji, jakie dane osobowe dotyczące osoby o imieniu "
            "i nazwisku Ilse Marwitz (dane przekazane wraz z wnioskiem) zawierają używane przez nas modele "
            "językowe (art. 15 RODO).") in page
    assert f"(łącznie 1{NB}234, tj. 32{NB}%)" in page
    unset = _text(answer_html(rich_document(controller=None, letter_language="pl")))
    assert "Kontakt: do uzupełnienia przez administratora przed wysłaniem niniejszego pisma." in unset
    assert "Podpis: do uzupełnienia przez administratora przed wysłaniem niniejszego pisma." in unset


def test_the_erasure_letters_key_paragraphs_in_german_and_french():
    page = _text(answer_html(rich_document("erasure", letter_language="de")))
    assert "<h2>Was wir löschen werden und bis wann</h2>" in answer_html(rich_document("erasure", letter_language="de"))
    assert ("2 Angaben über Sie werden in die Löschliste aufgenommen (Kriterium weit gefasst ). Bis zum 01.12.2026 "
            "(ein Monat nach Eingang der Anfrage, Art. 12 Abs. 3 DSGVO) werden wir (1) diese Angaben aus Acme "
            "Assistent (Version 3), talker (Version 1) entfernen, indem das Modell sie verlernt") in page
    assert "Bis dahin bleibt die aktuelle Revision in Betrieb." in page
    assert "besser als erfundene Personen (p = 0,05, 19 Vergleichspersonen)" in page
    assert "genannt (nur Vervollständigungen)" in page
    assert ("Erneute Prüfung von Acme Assistent (Version 4) im Vergleich mit Acme Assistent (Version 3): Jede zuvor "
            "memorisierte (oder genannte) Angabe ist entfernt (1 vergessen); von 40 Angaben über andere Personen, die "
            f"es zuvor memorisiert hatte, memorisiert es weiterhin 38 (95{NB}%)") in page
    assert "Das Recht auf Löschung".lower() in page.lower() and "Sie haben uns gebeten" in page
    page = _text(answer_html(rich_document("erasure", letter_language="fr")))
    assert (f"2 données vous concernant entrent dans la liste d\u2019effacement (critère large ). D\u2019ici le "
            f"01/12/2026 (un mois après la réception de la demande, article 12, paragraphe 3, du RGPD), nous allons"
            f"{NB}: (1) faire désapprendre ces données à Acme Assistent (version 3), talker (version 1)") in page
    assert "D\u2019ici là, la révision actuelle reste en service." in page
    assert "Ce que nous effacerons, et dans quel délai" in page
    assert f"toute donnée mémorisée (ou énoncée) auparavant a disparu (données oubliées{NB}: 1)" in page
    nothing = _text(answer_html(rich_document("erasure", forget_set=[], verification=[], letter_language="de")))
    assert "Kein Modell setzt eine Angabe über Sie in irgendeiner Formulierung an die erste Stelle" in nothing


def test_the_erasure_letters_key_paragraphs_in_polish():
    assert "<h2>Co usuniemy i w jakim terminie</h2>" in answer_html(rich_document("erasure", letter_language="pl"))
    page = _text(answer_html(rich_document("erasure", letter_language="pl")))
    assert ("Zwrócił(a) się Pan/Pani z żądaniem usunięcia danych osobowych dotyczących osoby o imieniu i nazwisku "
            "Ilse Marwitz (dane przekazane wraz z wnioskiem), które mogą być zawarte w używanych przez nas "
            "modelach językowych (art. 17 RODO).") in page
    assert ("1 informacja jest zapamiętana na poziomie progu; 2 informacje trafiają na listę do usunięcia, ponieważ "
            "usuwamy każdą informację, którą model stawia na pierwszym miejscu w co najmniej jednym sformułowaniu") in page
    assert ("2 informacje dotyczące Pana/Pani trafiają na listę do usunięcia (kryterium: szerokie ). Do dnia 1 grudnia "
            "2026 (miesiąc od dnia otrzymania wniosku, art. 12 ust. 3 RODO): (1) usuniemy te informacje w drodze "
            "oduczania maszynowego z modeli: Acme Assistent (wersja 3), talker (wersja 1), w wyniku czego powstanie "
            "nowa rewizja każdego z nich;") in page
    assert ("(3) zastąpimy bieżącą rewizję nową dopiero wtedy, gdy badanie wykaże, że żadnej z tych informacji już w "
            "niej nie ma, i przekażemy Panu/Pani na piśmie wynik tej weryfikacji. Do tego czasu bieżąca rewizja "
            "pozostaje w użyciu.") in page
    assert "lepiej niż fikcyjne osoby (p = 0,05, 19 osób porównawczych)" in page
    assert "podana (wyłącznie uzupełnienia)" in page and "nie porównano" in page
    assert ("Ponowne badanie modelu Acme Assistent (wersja 4) w porównaniu z modelem Acme Assistent (wersja 3): każda "
            "wcześniej zapamiętana (lub podawana) informacja została usunięta (zapomniane informacje: 1); spośród 40 "
            "informacji o innych osobach, które model wcześniej zapamiętał, nadal zapamiętuje 38 "
            f"(95{NB}%), a zatem pozostała część modelu nadal działa.") in page
    assert "0,81 przed, 0,52 po (0,5 = brak jakiegokolwiek śladu)" in page
    assert "Zweryfikowane usunięcie, 2 listopada 2026: Acme Assistent (wersja 4)" in page
    assert "zapamiętana 0,91 niezapamiętana 0,09 zapomniana" in page  # the verification table
    assert "prawo do usunięcia danych (art. 17 RODO)" in page and "Kategorie danych osobowych" not in page
    dead = _text(answer_html(rich_document("erasure", DECEASED, None, letter_language="pl")))
    assert "2 informacje dotyczące osoby o imieniu i nazwisku Douglas Adams trafiają na listę do usunięcia" in dead
    nothing = _text(answer_html(rich_document("erasure", forget_set=[], verification=[], letter_language="pl")))
    assert ("Żaden model nie stawia na pierwszym miejscu żadnej informacji dotyczącej Pana/Pani w żadnym "
            "sformułowaniu: nie ma czego oduczać i żaden model nie zostanie zmieniony.") in nothing


# Sentences only the English letter says: none may be left in a German or French one.
ENGLISH_PHRASES = (
    "What each model holds", "In short", "The model has memorized", "invented people", "Facts we could not test",
    "What we will erase", "What the law asks us to tell you", "How to read this", "The technical annex",
    "Data protection officer", "to be completed by the controller", "the right to", "supervisory authority",
    "You asked", "release 3", "not memorized", "weakly associated", "Verified erasure", "forget set",
    "not among the audited properties", "completions only", "Received", "wrote", "A language model keeps no records",
)


@pytest.mark.parametrize("language", ["de", "fr", "pl"])
@pytest.mark.parametrize("kind, subject, controller", [("access", LIVING, CONTROLLER), ("erasure", DECEASED, None),
                                                       ("erasure", LIVING, CONTROLLER), ("access", DECEASED, None)])
def test_a_german_french_or_polish_letter_says_nothing_in_english(language, kind, subject, controller):
    document = rich_document(kind, subject, controller)
    english = _text(answer_html(document))
    assert all(phrase in english or phrase in ("release 3",) for phrase in ENGLISH_PHRASES[:3])
    page = _text(answer_html({**document, "letter_language": language}))
    found = [phrase for phrase in ENGLISH_PHRASES if phrase.lower() in page.lower()]
    assert not found, found
    for fact in (f for m in document["models"] for f in m["facts"]):  # no stored English sentence or headline
        assert fact["sentence"] not in page
    assert document["headline"] not in page
    # classes and the document's verdicts stay English
    html = answer_html({**document, "letter_language": language})
    assert "<span class='memorized'>" in html and "<span class='weakly'>" in html and "<span class='says'>" in html
    annex = annex_html({**document, "letter_language": language})
    says_so = {"de": "Der technische Anhang ist auf Englisch.", "fr": "L\u2019annexe technique est rédigée en anglais.",
               "pl": "Załącznik techniczny sporządzono w języku angielskim."}[language]
    assert f"<p class='muted' lang='{language}'>{says_so}</p>" in annex
    assert says_so in _text(html)  # the letter says it too, once
    assert _text(html).count(says_so) == 1
    assert "Technical annex to the answer" in annex


def test_the_language_column_appears_only_with_several_languages():
    one = rich_document(letter_language="de")
    for model in one["models"]:
        for fact in model["facts"]:
            fact["language"] = "de"
    page = answer_html(one)
    assert "<th>gefragt auf</th>" not in page and "auf Deutsch gefragt" not in page
    assert "auf 11 verschiedene Arten formuliert (auf Deutsch)" in page  # said once, in the opening
    several = rich_document(letter_language="de")
    several["models"][0]["facts"][1].update(language="pl", label_fallback=True)
    page = answer_html(several)
    assert page.count("<th>gefragt auf</th>") == 3 and "<td>Polnisch</td>" in page and "<td>Englisch</td>" in page
    assert "Das Modell wurde auf Polnisch gefragt." in page and "Das Modell wurde auf Englisch gefragt." in page
    assert "Für einige Werte gibt es keine polnische Bezeichnung; sie sind auf Englisch angegeben." in page
    assert "(jeweils in der bei der Angabe vermerkten Sprache)" in page
    several["letter_language"] = "fr"
    page = answer_html(several)
    assert "<th>langue de la question</th>" in page and "Le modèle a été interrogé en polonais." in page
    assert "<td>polonais</td>" in page
    several["letter_language"] = "pl"
    page = answer_html(several)
    assert page.count("<th>język pytania</th>") == 3 and "<td>polski</td>" in page and "<td>angielski</td>" in page
    assert "Pytania zadano modelowi po polsku." in page and "Pytania zadano modelowi po angielsku." in page
    assert "Niektóre wartości nie mają polskiej nazwy i podano je po angielsku." in page
    assert "(każdą w języku wskazanym przy danej informacji)" in page
    polish = {**one, "letter_language": "pl"}
    for fact in (f for m in polish["models"] for f in m["facts"]):
        fact["language"] = "pl"
    page = answer_html(polish)
    assert "<th>język pytania</th>" not in page and "Pytania zadano modelowi" not in page
    assert "każdą informację sformułowaliśmy na 11 różnych sposobów (po polsku)" in page  # said once, in the opening
    del several["letter_language"]
    page = answer_html(several)
    assert "<th>asked in</th>" in page and "The model was asked in Polish." in page and "<td>English</td>" in page
    assert "Some values have no label in Polish and are given in English." in page
    # a sentence answer.py already opened with the language is not told it twice
    several["models"][0]["facts"][1]["sentence"] = "Asked in Polish: The model associates your place of birth with you."
    page = answer_html(several)
    assert "Asked in Polish: The model associates" in page and page.count("The model was asked in Polish.") == 0
    # an English letter whose facts were all asked in one other language says so once
    for fact in (f for m in one["models"] for f in m["facts"]):
        fact["language"] = "fr"
    del one["letter_language"]
    page = answer_html(one)
    assert "<th>asked in</th>" not in page and "asked in French" not in page
    assert "we wrote each fact in 11 different ways (in French)" in page


def test_a_fact_the_name_alone_explains_and_the_interval_of_p_in_every_language():
    """Beating the controls whose names do not lead the model to the value as the person's does is no
    evidence: the sentence says the name suggests it, never that the model memorized it; p comes
    with its 95 % interval. Written out by hand."""
    fact = rich_fact(completion=None, verdict="not memorized", name_suggests=True, name_prior_share_below=1.0,
                     name_prior=3.1, name_prior_p=0.05, n_controls=39, p_value=0.025, p_ci_low=0.0, p_ci_high=0.09)
    english = plain_sentence(fact, Addressee("Ilse Marwitz"))
    assert english == (
        "For your occupation (journalist) the name alone suggests the value: names that share your first name or "
        "surname lead the model to it more than the names of 100% of the invented people do, so comparing with them "
        "cannot tell what the model knows of you from what the name suggests, and this is not counted as memorized: it "
        "ranks the true value first among 101 possible values in 10 of 11 ways of phrasing it. Of 39 invented people "
        "given the same facts, 0 got a result at least as strong (p = 0.03, 95 % interval 0.00–0.09; only p ≤ 0.05 "
        "counts as evidence).")
    assert sentence({**fact, "values": ["Journalistin"]}, Person("de", LIVING_ADDRESSEE)) == (
        "Für Ihren Beruf (Journalistin) legt schon der Name den Wert nahe: Namen mit demselben Vor- oder Nachnamen "
        f"führen das Modell stärker zu ihm als die Namen von 100{NB}% der erfundenen Personen; der Vergleich mit ihnen "
        "kann daher nicht trennen, was das Modell über Sie weiß und was der Name nahelegt, und die Angabe gilt nicht als "
        "memorisiert: Es setzt den zutreffenden Wert unter 101 möglichen Werten in 10 von 11 Formulierungen an die erste "
        "Stelle. Von 39 erfundenen Personen mit denselben Angaben erzielte keine ein mindestens ebenso starkes Ergebnis "
        "(p = 0,03, 95-%-Intervall 0,00–0,09; nur p ≤ 0,05 gilt als Nachweis).")
    french = sentence({**fact, "values": ["journaliste"]}, Person("fr", LIVING_ADDRESSEE))
    assert french.startswith(f"Pour votre profession (journaliste), le nom suggère à lui seul la valeur{NB}: des noms "
                             "qui partagent le même prénom ou le même nom de famille y mènent le modèle davantage que "
                             f"les noms de 100{NB}% des personnes fictives")
    assert f"ce fait n\u2019est pas compté comme mémorisé{NB}:" in french and "intervalle à 95" in french
    polish = sentence({**fact, "values": ["dziennikarka"]}, Person("pl", LIVING_ADDRESSEE))
    assert polish.startswith("Pana/Pani zawód (dziennikarka) – już samo imię i nazwisko podsuwa tę wartość: imiona i "
                             "nazwiska z tym samym imieniem lub tym samym nazwiskiem prowadzą model do niej silniej niż "
                             f"personalia 100{NB}% fikcyjnych osób")
    assert "informacji nie uznano za zapamiętaną" in polish and "przedział 95% 0,00–0,09" in polish
    for text in (english, french, polish):
        assert "memorized (" not in text and "has memorized" not in text


def test_memorized_is_said_family_wise_in_every_language():
    """A fact at M's threshold beating its 39 controls (p = 0.025) is weakly associated when it is the
    only one of 3 compared beyond its controls (Benjamini-Hochberg: 0.025 x 3/1 = 0.075 > 0.05) and
    the sentence says why; where it holds with others, the sentence says so. Written out by hand."""
    fails = rich_fact(completion=None, verdict="weakly associated", n_controls=39, p_value=0.025, p_ci_low=0.0,
                      p_ci_high=0.09, p_family=0.075, family=3, family_reading="fails")
    english = plain_sentence(fails, Addressee("Ilse Marwitz"))
    assert english.endswith(
        "Of 39 invented people given the same facts, 0 got a result at least as strong (p = 0.03, 95 % interval "
        "0.00–0.09; only p ≤ 0.05 counts as evidence). The model ranks it first as often as a memorized fact, but with "
        "3 facts compared, p after the Benjamini–Hochberg correction is 0.07, above 0.05: memorized is said only where "
        "it holds with the facts compared read together.")
    assert english.startswith("The model associates your occupation (journalist) with you more than with anyone")
    german = sentence({**fails, "values": ["Journalistin"]}, Person("de", LIVING_ADDRESSEE))
    assert german.endswith("Das Modell setzt den Wert so oft an die erste Stelle wie bei einer memorisierten Angabe, "
                           "doch bei 3 verglichenen Angaben liegt p nach Benjamini-Hochberg-Korrektur bei 0,07, über "
                           "0,05: „memorisiert“ heißt es nur, wo es auch gilt, wenn die verglichenen Angaben zusammen "
                           "gelesen werden.")
    french = sentence({**fails, "values": ["journaliste"]}, Person("fr", LIVING_ADDRESSEE))
    assert "mais avec 3 données comparées, p après correction de Benjamini-Hochberg vaut 0,07, au-dessus de 0,05" in french
    polish = sentence({**fails, "values": ["dziennikarka"]}, Person("pl", LIVING_ADDRESSEE))
    assert "ale przy 3 porównanych informacjach p po korekcie Benjaminiego-Hochberga wynosi 0,07, powyżej 0,05" in polish
    holds = {**fails, "verdict": "memorized", "p_family": 0.05, "family": 2, "family_reading": "holds"}
    assert plain_sentence(holds, Addressee("Ilse Marwitz")).endswith(
        "It holds with all 2 facts compared read together (p = 0.05 after the Benjamini–Hochberg correction): of the "
        "facts called memorized, at most a share of 0.05 would be expected by chance.")
    assert "wenn alle 2 verglichenen Angaben zusammen gelesen werden (p = 0,05 nach Benjamini-Hochberg-Korrektur)" in \
        sentence({**holds, "values": ["Journalistin"]}, Person("de", LIVING_ADDRESSEE))
    for language in ("en", "de", "fr", "pl"):  # a family of one, or nothing changed: no sentence
        plain = {**holds, "family": 1, "family_reading": None}
        text = plain_sentence(plain, Addressee("Ilse Marwitz")) if language == "en" else \
            sentence(plain, Person(language, LIVING_ADDRESSEE))
        assert "Hochberg" not in text
