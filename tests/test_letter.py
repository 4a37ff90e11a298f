"""The letter's parts without a model: how it speaks of a person and their facts, the controller
configuration, what the register says of a release, and the page check that can fail."""

import sqlite3

import pandas as pd
import pytest

from wikimem_platform import reports
from wikimem_platform.cli import main
from wikimem_platform.registry import RELEASE_FIELDS, Registry, RegistryError
from wikimem_platform.subject_requests.controller import (
    CONTROLLER_FILE,
    ControllerError,
    load_controller,
    save_controller,
)
from wikimem_platform.subject_requests.phrasing import PHRASES, Addressee, addressee

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
