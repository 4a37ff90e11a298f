"""No personal data in logs (issue 60, `wikimem_platform.security.scrub`): hand-computed cases of
the scrubber (case, JSON-escaped and URL-encoded forms, a name's parts and possessive, no
over-redaction of short common words), and a served release whose inference server echoes the
prompt in its HTTP 500 error body, audited through `audit_person_on_releases`: the person's name
and facts are in what the server sent back, and nowhere in the warning logged nor in the stored
audits' error, which still says what failed (the status, the server)."""

import dataclasses
import json

import pandas as pd
import pytest

from tests.fixtures.planted import Release
from tests.support.endpoint_server import ScriptedServer
from wikimem_platform.lm.endpoint import EndpointConfig, EndpointModel, RetryPolicy
from wikimem_platform.planted import load_manifest
from wikimem_platform.security.scrub import name_tokens, REDACTED, Scrubber, scrub
from wikimem_platform.subject_requests.audit import audit_person_on_releases, person_scrubber

R = REDACTED
NAMES = ["Ilse Marwitz", "René von Ärnström-Kahle"]
VALUES = ["journalist", "Q1930187", "Zürich"]


@pytest.mark.parametrize("text, expected", [
    ("Ilse Marwitz's occupation is journalist.", f"{R}'s occupation is {R}."),
    ("ILSE MARWITZ was born in zürich", f"{R} was born in {R}"),  # any case
    ("Ilse  Marwitz\nMarwitz, Ilse", f"{R}\n{R}, {R}"),  # the whole name across spaces; its parts alone
    ("Marwitz's employer", f"{R}'s employer"),  # the possessive of a part
    ("ask Marwitz\u2019s editor", f"ask {R}\u2019s editor"),
    ('{"prompt": "Ren\\u00e9 von \\u00c4rnstr\\u00f6m-Kahle is a journalist"}', f'{{"prompt": "{R} is a {R}"}}'),  # JSON, ASCII
    ('{"prompt": "\\"Ilse\\" \\nMarwitz"}', f'{{"prompt": "\\"{R}\\" \\n{R}"}}'),  # JSON quotes and a \n escape
    ("GET /search?q=Ilse%20Marwitz&p=Z%C3%BCrich", f"GET /search?q={R}&p={R}"),  # URL-encoded
    ("q=Ilse+Marwitz", f"q={R}"),
    ("value Q1930187 (journalists)", f"value {R} ({R})"),  # an id; a plural
    ("Rene\u0301 Ärnström", f"{R} {R}"),  # NFD: e + combining accent
    ("O&#x27;Brien Kahle", f"O&#x27;Brien {R}"),  # a part of a double-barrelled name
])
def test_scrub_redacts_every_form(text, expected):
    assert scrub(text, VALUES, names=NAMES) == expected


@pytest.mark.parametrize("text", [
    "a van was parked by the old mill",  # "von"/"van" particles are common words: never alone
    "Ilsenburg and Marwitzer Straße",  # parts of other words stay
    "HTTP 500 from http://127.0.0.1:8000/v1: Internal Server Error",  # what failed stays readable
    "Q19301870 journalistic Zürichsee",  # a longer id, other words that begin with a value
    "Li met Na at the Linear Model Lab",
])
def test_scrub_leaves_other_words(text):
    assert scrub(text, [*VALUES, "Q5", "x"], names=[*NAMES, "Li Na", "Ludwig van Beethoven"]) == text


def test_the_whole_name_goes_as_one_and_short_parts_are_not_redacted_alone():
    assert name_tokens("René von Ärnström-Kahle") == ["René", "Ärnström", "Kahle"]
    assert name_tokens("Li Na") == [] and name_tokens("Ludwig van Beethoven") == ["Ludwig", "Beethoven"]
    scrubber = Scrubber(names=["Li Na"])
    assert scrubber("Li Na's occupation") == f"{R}'s occupation" and scrubber("Li said Na") == "Li said Na"
    assert Scrubber()("nothing to hide") == "nothing to hide" and not Scrubber() and Scrubber(["x"]).secrets == []
    assert Scrubber(["journalist"])(None) == ""


@pytest.fixture(scope="module")
def plan(planted_model, planted_reference):
    """A planted member on two properties, no controls, with two aliases added."""
    qid = next(p["qid"] for p in load_manifest(planted_model)["people"] if p["member"] and p["repetitions"] == 16)
    planned = planted_reference.plan(qid, n_properties=2, n_controls=0)
    subject = planned.subject.copy()
    subject["aliases"] = [["Ilsa Kowalczyk-Brandt", "I. K. Brandt"]]
    return dataclasses.replace(planned, subject=subject)


def person_texts(plan) -> list[str]:
    """What must not be seen: the name, each part of it, the aliases, every fact value and label."""
    row = plan.subject.iloc[0]
    names = [row["label"], *row["aliases"]]
    values = [str(v) for column in ("value", "value_label") for v in plan.facts[column].dropna()]
    return [*names, *(t for n in names for t in name_tokens(n)), *values, row["qid"]]


def test_the_plan_scrubber_redacts_the_name_aliases_and_facts(plan):
    scrubber = person_scrubber(plan)
    row = plan.subject.iloc[0]
    for text in person_texts(plan):
        assert text.lower() not in scrubber(f"echo: {text}!").lower(), text
    assert scrubber(f"{row['label']}'s alias is Ilsa Kowalczyk-Brandt") == f"{R}'s alias is {R}"
    assert scrubber("HTTP 500: Internal Server Error") == "HTTP 500: Internal Server Error"


def test_an_echoing_server_s_error_leaves_no_personal_data_in_the_log_or_the_audits(planted_model, plan, tmp_path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(planted_model))
    messages, warnings = [], []
    with ScriptedServer(tokenizer=tokenizer, echo_error=500) as server:
        endpoint = EndpointModel(EndpointConfig(url=f"{server.url}/v1", served_model="toy", tokenizer=str(planted_model),
                                                retry=RetryPolicy(attempts=2, base_seconds=0.0, max_seconds=0.0)),
                                 name="echoing", tokenizer=tokenizer)
        result = audit_person_on_releases(
            [Release("echoing@1", source=server.url)], lambda release: endpoint, plan,
            shards_for=lambda key: tmp_path / "shards" / key.replace("@", "-"), sentence_cache=lambda model: None,
            settings={"dtype": "float32"}, label="dsr-1", log=messages.append, warn=warnings.append)
        echoed = [json.loads(body)["error"]["message"] for body in server.echoed]
    label = plan.subject.iloc[0]["label"]
    assert echoed and label in echoed[0]  # the server did send the person back, as text and JSON-escaped
    assert json.dumps(label)[1:-1] in echoed[0] or label.isascii()
    audits = result.audits
    assert list(audits["model"]) == ["echoing@1"] and not audits["audited"].any()
    error = audits.loc[0, "error"]
    assert len(warnings) == 1 and warnings[0] == f"dsr-1: echoing@1 could not be audited: {error}"
    # what failed is still said: the error class, the server, the status and the server's own words
    assert error.startswith("EndpointError: ") and server.url in error and "HTTP 500" in error
    assert "Internal Server Error while processing prompt" in error and R in error
    stored = audits.astype(str).to_string()
    for text in person_texts(plan):
        for where, seen in (("the warning", warnings[0]), ("the stored error", error), ("the audits table", stored),
                            ("the log", "\n".join(messages))):
            assert text.lower() not in seen.lower(), f"{text!r} in {where}: {seen}"
