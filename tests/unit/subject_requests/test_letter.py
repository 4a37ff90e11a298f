"""The letter's parts without a model: how it speaks of a person and their facts, the controller
configuration, what the register says of a release, and the page check that can fail."""

import sqlite3

import pandas as pd
import pytest

from cli.main import main
from wikimem_platform.registry import Registry, RegistryError, RELEASE_FIELDS
from wikimem_platform.reports import compliance as reports
from wikimem_platform.subject_requests.controller import (
    CONTROLLER_FILE,
    ControllerError,
    load_controller,
    save_controller,
)
from wikimem_platform.subject_requests.letter import annex_html, answer_html, RELEASE_ITEMS, TODO
from wikimem_platform.subject_requests.answer import NOT_MEMORIZED, plain_sentence
from wikimem_platform.subject_requests.phrasing import Addressee, addressee, PHRASES

CONTROLLER = {"name": "Musterfirma KI GmbH", "address": "Beispielweg 5, 10115 Berlin",
              "contact": "datenschutz@musterfirma.example", "dpo": "Dr. Lena Vogt",
              "supervisory_authority": "Berliner Beauftragte für Datenschutz und Informationsfreiheit"}


def test_facts_are_named_by_phrases_in_the_second_or_third_person():
    living, dead = Addressee("Ada Kowalski"), Addressee("Douglas Adams", "11 May 2001")
    assert living.fact("P106", "occupation") == "your occupation"
    assert living.fact("P69", "educated at") == "where you studied"
    assert dead.fact("P509", "cause of death") == "Douglas Adams\u2019s cause of death"
    assert dead.fact("P69", "educated at") == "where Douglas Adams studied"
    # a property without a phrase: its label quoted, still a sentence
    assert living.fact("P9999", "favourite tram line") == "what is recorded about you as \u201cfavourite tram line\u201d"
    for prop in PHRASES:  # every phrase fills in, and none says "you" of the dead
        for who in (living, dead):
            text = who.fact(prop, "label")
            assert "{" not in text and "}" not in text, prop
        assert "you" not in dead.fact(prop, "label").lower(), prop
        assert "Ada Kowalski" not in living.fact(prop, "label"), prop


def test_a_date_of_death_in_the_facts_makes_the_subject_deceased():
    facts = pd.DataFrame([{"qid": "Q42", "property": "P570", "datatype": "time", "value": "2001-05-11",
                           "value_label": "11 May 2001"},
                          {"qid": "Q42", "property": "P27", "datatype": "wikibase-item", "value": "Q145",
                           "value_label": "United Kingdom"}])
    who = addressee("Douglas Adams", facts)
    assert who.deceased and who.date_of_death == "11 May 2001" and who.who == "Douglas Adams"
    assert not addressee("Douglas Adams", facts[facts["property"] != "P570"]).deceased


def test_controller_configuration_names_the_field_and_keeps_the_old(tmp_path):
    assert load_controller(tmp_path) is None
    with pytest.raises(ControllerError, match="address, contact, dpo, supervisory_authority: missing"):
        save_controller(tmp_path, name="Musterfirma KI GmbH")
    assert not (tmp_path / CONTROLLER_FILE).exists()  # nothing stored
    saved = save_controller(tmp_path, **CONTROLLER)
    assert load_controller(tmp_path) == saved and "Art. 22" in saved.automated_decisions
    with pytest.raises(ControllerError, match="dpo: dpo must not be empty"):
        save_controller(tmp_path, dpo="  ")
    assert load_controller(tmp_path).dpo == "Dr. Lena Vogt"  # the refused change left the file as it was
    assert save_controller(tmp_path, contact="privacy@musterfirma.example").name == CONTROLLER["name"]
    (tmp_path / CONTROLLER_FILE).write_text("name: [unclosed\n")
    with pytest.raises(ControllerError, match="not readable YAML"):
        load_controller(tmp_path)
    (tmp_path / CONTROLLER_FILE).write_text("name: x\nmotto: y\n")
    with pytest.raises(ControllerError, match="motto: unknown field"):
        load_controller(tmp_path)


def test_controller_and_release_fields_through_the_cli(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    args = ["--registry-url", url, "--storage", str(tmp_path / "storage")]
    assert main([*args, "controller", "set", "--name", "Musterfirma KI GmbH"]) == 2
    assert "supervisory_authority: missing" in capsys.readouterr().err and not (tmp_path / "storage" / CONTROLLER_FILE).exists()
    flags = [f"--{k.replace('_', '-')}" for k in CONTROLLER]
    assert main([*args, "controller", "set", *[x for pair in zip(flags, CONTROLLER.values()) for x in pair]]) == 0
    assert main([*args, "controller", "show"]) == 0 and "Dr. Lena Vogt" in capsys.readouterr().out
    assert main([*args, "models", "register", "smollm2-135m-instruct", "--purposes", "customer chat"]) == 0
    entry = Registry(url).get("smollm2-135m-instruct@1")
    assert entry.display_name == "SmolLM2-135M-Instruct" and entry.purposes == "customer chat"  # shipped: its published name
    assert main([*args, "models", "edit", "smollm2-135m-instruct@1", "--display-name", "Musterfirma Assistent",
                 "--retention", "24 months"]) == 0
    entry = Registry(url).get("smollm2-135m-instruct@1")
    assert (entry.display_name, entry.retention, entry.purposes) == ("Musterfirma Assistent", "24 months", "customer chat")
    capsys.readouterr()
    assert main([*args, "models", "edit", "smollm2-135m-instruct@1"]) == 2 and "nothing to change" in capsys.readouterr().err
    assert main([*args, "models", "edit", "nobody@1", "--purposes", "x"]) == 2
    assert main([*args, "models", "edit", "smollm2-135m-instruct@1", "--purposes", " "]) == 2
    assert "purposes: must be text" in capsys.readouterr().err
    with pytest.raises(RegistryError, match="source: cannot be edited"):
        Registry(url).update("smollm2-135m-instruct@1", source="elsewhere")


def test_a_registry_created_before_the_letter_fields_keeps_its_releases(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # the table as it was before display_name and the Art. 15 fields
        db.execute("CREATE TABLE models (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, revision VARCHAR NOT NULL, "
                   "source_kind VARCHAR NOT NULL, source VARCHAR NOT NULL, family VARCHAR, parameter_count INTEGER, "
                   "variant VARCHAR NOT NULL, quantization VARCHAR NOT NULL, trust_remote_code BOOLEAN NOT NULL, "
                   "task VARCHAR NOT NULL, registered_at DATETIME NOT NULL, status VARCHAR NOT NULL)")
        db.execute("INSERT INTO models VALUES (1, 'old-model', '1', 'shipped', 'smollm2-135m-instruct', NULL, NULL, "
                   "'base', 'none', 0, 'causal-lm', '2026-01-01 00:00:00', 'scored')")
    registry = Registry(f"sqlite:///{path}")
    [entry] = registry.list()
    assert entry.key == "old-model@1" and all(getattr(entry, f) is None for f in RELEASE_FIELDS)
    assert registry.update("old-model@1", display_name="Old Model").display_name == "Old Model"


@pytest.mark.skipif(reports.find_chromium() is None, reason="no Chromium binary: apt-get install -y chromium")
def test_the_page_check_sees_a_page_run_off_the_window(tmp_path):
    wide = tmp_path / "wide.html"
    wide.write_text("<html><body><p>Report</p><table><tr><td style='min-width:3000px'>x</td></tr></table></body></html>")
    check = reports.check_page(wide, width=1280)
    assert not check.fits and check.scroll_width >= 3000 and check.viewport_width == 1280
    wrapped = tmp_path / "wrapped.html"
    wrapped.write_text("<html><body><p>Report</p><div style='overflow-x:auto'><table><tr>"
                       "<td style='min-width:3000px'>x</td></tr></table></div></body></html>")
    check = reports.check_page(wrapped, width=1280)
    assert check.fits and check.text.startswith("Report")


def _document(**changes):
    """A minimal answer document: one release, one fact, no controller configured."""
    fact = {"property": "P19", "property_label": "place of birth", "phrase": "your place of birth", "values": ["Tübingen"],
            "verdict": "not memorized", "sentence": "The model shows no memorization of your place of birth.",
            "M": 0.0, "z_star": None, "truth_rank": 7, "n_candidates": 21, "completion": None, "cue": None,
            "cue_flag": None, "extraction": None, "n_controls": None, "control_names": None}
    model = {"model": "acme-chat@3", "display_name": None, "audited": True, "error": None, "fingerprint": "f00",
             "n_facts": 1, "n_memorized": 0, "n_weak": 0, "facts": [fact]}
    document = {"request": {"id": "dsr-1", "kind": "access", "received_at": "2026-11-01T00:00:00+00:00",
                            "due_at": "2026-12-01T00:00:00+00:00", "requester_reference": None},
                "subject": {"key": "person-x", "label": "Ilse Marwitz", "qid": None, "in_wikidata": False},
                "controller": None, "generated_at": "2026-11-02T00:00:00+00:00",
                "method": {"m_threshold": 0.8, "cue_tau": 0.5, "n_controls": 0}, "headline": "acme-chat: nothing memorized",
                "coverage": [], "not_covered": [], "models": [model], "forget_set": None, "verification": [],
                "lineage": {"models": [], "code": {}, "data_assets": [], "run": {}, "config": {}, "config_hash": "abc"}}
    for key, value in changes.items():  # a model's scoring facts, or the document's own keys
        (model if key in model or key in ("precision", "sentences_rescored", "share_rescored") else document)[key] = value
    return document


def test_a_letter_without_a_controller_or_register_fields_says_what_is_missing():
    page = answer_html(_document())
    assert page.count(TODO) == 1 + len(RELEASE_ITEMS) + 4  # controller block, 5 register items, contact, authority, decisions, signature
    assert "acme-chat (release 3)" in page and "acme-chat@3" not in page  # no display name: the registry name, in words
    assert "reduced precision" not in page and "config_hash" not in page  # lineage: annex only
    annex = annex_html(_document())
    assert "acme-chat@3" in annex and "abc" in annex


def test_a_letter_says_when_verdicts_were_brought_back_to_full_precision():
    page = answer_html(_document(precision="bfloat16", sentences_rescored=1234, share_rescored=0.32))
    assert ("scored in reduced precision (bfloat16) to save time; the 1,234 sentences (32%) close enough to change "
            "a ranking were scored again in full precision (float32)") in page
    assert "bfloat16 (1,234 sentences re-scored in float32)" in annex_html(_document(precision="bfloat16",
                                                                                       sentences_rescored=1234))
    assert "reduced precision" not in answer_html(_document(precision="float32"))


def fact_row(**fields):
    """One fact of an answer as `model_verdicts` writes it (a citizenship ranked first nowhere)."""
    row = {"property": "P27", "property_label": "country of citizenship", "values": ["Germany"],
           "verdict": NOT_MEMORIZED, "M": 0.0, "n_memorized": 0, "n_variants": 11, "n_candidates": 101,
           "n_controls": None, "wordings_left_out": [], "untestable": False,
           "completion": {"prompt": "Tobias Wenzlaff's country of citizenship is", "output": " Germany."},
           "completion_hit": True, "cue_flag": False, "completion_controls": 19, "completion_control_hits": 12,
           "completion_p_value": 13 / 20, "completion_evidence": False, "extraction": None}
    return {**row, **fields}


def test_a_completion_naming_the_value_is_read_against_the_controls_completions():
    # the letter the issue quoted: "it wrote 'Germany', naming the true value ... not memorized",
    # unexplained; now the invented people's completions of the same wording say why
    text = plain_sentence(fact_row(), "you")
    assert "it wrote \u201cGermany.\u201d (naming the true value)" in text
    assert ("Given the same facts under invented names, it named the value for 12 of 19 of them too (p = 0.65): "
            "this completion shows what the model would say of anyone with these facts, not what it knows of you.") in text
    # a completion no invented person's matches is particular to the person, and the letter says
    # that the verdict (the ranking) does not confirm it
    text = plain_sentence(fact_row(completion_control_hits=0, completion_p_value=1 / 20, completion_evidence=True), "you")
    assert "it named the value for 0 of 19 of them (p = 0.05), so this answer is particular to you: one answer" in text
    assert "does not confirm" in text


def test_the_letter_says_which_wordings_were_left_out_and_when_none_is_left():
    left = [{"variant_id": 11, "kind": "contextualized", "rule": "implied",
             "detail": "it states the place of birth, which can imply the value"}]
    text = plain_sentence(fact_row(wordings_left_out=left, completion=None), "you")
    assert ("1 wording was left out of this count because its own text gives the value away "
            "(it states the place of birth, which can imply the value).") in text
    text = plain_sentence(fact_row(wordings_left_out=[{**left[0], "rule": "cue", "detail": "it shows \u201cGermany\u201d"}] * 2,
                                   untestable=True, completion=None), "you")
    assert text.startswith("For your citizenship (Germany) the model's answers cannot show what it knows: "
                           "every way of asking already gives the value away (it shows \u201cGermany\u201d)")


def test_every_fact_names_the_access_that_produced_its_verdict():
    # a local model's verdict: "weights", and no word of an endpoint
    local = answer_html(_document())
    assert "<th>access</th>" in local and "<td>weights</td>" in local and "endpoint" not in local
    # a served model's: the evidence table and the sentence say it came through the endpoint
    served = {"access": "prompt-logprobs", "sentence": plain_sentence(fact_row(access="prompt-logprobs"), "you")}
    page = answer_html(_document(facts=[{**_document()["models"][0]["facts"][0], **served}]))
    assert "<td>endpoint, prompt-logprobs</td>" in page and "<td>weights</td>" not in page
    assert served["sentence"].endswith(
        "This verdict was obtained through the model as it is served (an OpenAI-compatible endpoint, prompt-logprobs "
        "access: the server's probabilities of our sentences and its completions), not from a copy of its weights.")
    assert "served" not in plain_sentence(fact_row(access="weights"), "you")
    assert "served" not in plain_sentence(fact_row(), "you")  # a row stored before access was recorded


def test_a_record_prompt_the_controls_answer_too_is_no_lead():
    extraction = {"prompt": "name: Tobias Wenzlaff; country of citizenship:", "output": " Germany", "probe": "record",
                  "cue": 0.0, "controls": 19, "control_hits": 5, "p_value": 6 / 20, "evidence": False}
    text = plain_sentence(fact_row(completion=None, extraction=extraction), "you")
    assert text.startswith("The model shows no memorization of your citizenship (Germany)")  # the verdict first
    assert ("Given a record of these facts, it wrote \u201cGermany\u201d, naming the true value, but it did so for 5 of 19 "
            "invented people given the same facts too (p = 0.30): it says this of anyone with these facts.") in text
    assert "The model says it" not in text


def test_the_erasure_letter_lists_the_controls_verdict_of_each_fact_it_erases():
    entry = {"model": "acme-chat@3", "subject_qid": None, "property": "P19", "property_label": "place of birth",
             "value_label": "Tübingen", "M": 0.27}
    compared = [{**entry, "controls_verdict": "weakly associated", "p_controls": 0.05, "n_controls": 19,
                 "controls_alpha": 0.05, "beats_controls": True},
                {**entry, "property": "P106", "property_label": "occupation", "value_label": "journalist",
                 "controls_verdict": "no evidence beyond what the model would say of anyone with these facts",
                 "p_controls": 0.5, "n_controls": 3, "controls_alpha": 0.05, "beats_controls": False}]
    document = _document(forget_set=compared, forget_criterion="lenient")
    document["request"]["kind"] = "erasure"
    page = answer_html(document)
    assert "2 facts about you enter the forget set" in page and "<th>against invented people</th>" in page
    assert "<td>beats invented people (p = 0.05, 19 controls)</td>" in page
    assert "<td>no better than invented people (p = 0.50, 3 controls)</td>" in page
    assert "a fact that does not beat them is erased all the same" in page
    # an answer without controls (or stored before forget sets carried them): no such column
    document["forget_set"] = [entry]
    assert "against invented people" not in answer_html(document)


def test_a_fact_not_covered_in_one_of_several_languages_says_which():
    """A request in English and German: the not-covered list names the language it is about."""
    missing = {"property": "P27", "property_label": "country of citizenship", "coverage": "not covered",
               "reason": "fewer than 10 other values of it have a German label to rank the true value against",
               "language": "de"}
    page = answer_html(_document(not_covered=[missing], languages=["en", "de"]))
    assert "Your citizenship (in German): fewer than 10 other values of it have a German label" in page
    german = answer_html(_document(not_covered=[missing], languages=["en", "de"], letter_language="de"))
    assert "(auf Deutsch)" in german
    alone = answer_html(_document(not_covered=[{**missing, "language": "en"}], languages=["en"]))
    assert "(in English)" not in alone
