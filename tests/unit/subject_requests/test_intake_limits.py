"""Every free-text field of a request has a length limit (issue 61): a name, an alias, the number
of aliases, a fact value (as text or as a label), a property's name, values per property, the facts
file and the requester's reference. Over it: exit 2, one short line naming the field and the
limit (the text itself never echoed), nothing stored. `request list` cuts a long stored name."""

from __future__ import annotations

import pytest
import yaml

from cli.main import main
from wikimem_platform.storage import StoredResults
from wikimem_platform.subject_requests import intake
from wikimem_platform.subject_requests.intake import IntakeError, RequestStore, ResolvedSubject
from wikimem_platform.subject_requests.reference import intake_reference

PERSON = {"name": "Ilse Marwitz", "aliases": ["I. Marwitz"], "facts": {"occupation": ["journalist"]}}
LONG_NAME = " ".join(f"Name{i:07d}" for i in range(2000))  # 2,000 words, 24 KB


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Nothing materialized: the bundled sample is the extract."""
    return intake_reference(StoredResults(tmp_path_factory.mktemp("empty-storage")))


@pytest.fixture
def base(tmp_path):
    return ["--home", str(tmp_path / "home"), "--registry-url", f"sqlite:///{tmp_path / 'registry.db'}"]


def _facts(tmp_path, document) -> str:
    path = tmp_path / "person.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    return str(path)


OVER = [
    ({**PERSON, "name": "N" * (intake.MAX_NAME_CHARS + 1)}, "name", f"at most {intake.MAX_NAME_CHARS} characters"),
    ({**PERSON, "aliases": ["A" * (intake.MAX_ALIAS_CHARS + 1)]}, "aliases[0]", f"at most {intake.MAX_ALIAS_CHARS} characters"),
    ({**PERSON, "aliases": [f"alias {i}" for i in range(intake.MAX_ALIASES + 1)]}, "aliases", f"at most {intake.MAX_ALIASES} aliases"),
    ({**PERSON, "facts": {"occupation": ["v" * (intake.MAX_FACT_VALUE_CHARS + 1)]}}, "facts.occupation[0]",
     f"at most {intake.MAX_FACT_VALUE_CHARS} characters"),
    ({**PERSON, "facts": {"occupation": "v" * (intake.MAX_FACT_VALUE_CHARS + 1)}}, "facts.occupation",
     f"at most {intake.MAX_FACT_VALUE_CHARS} characters"),
    ({**PERSON, "facts": {"occupation": [{"label": "v" * (intake.MAX_FACT_VALUE_CHARS + 1)}]}}, "facts.occupation[0]",
     f"at most {intake.MAX_FACT_VALUE_CHARS} characters"),
    ({**PERSON, "facts": {"p" * (intake.MAX_FACT_VALUE_CHARS + 1): ["x"]}}, "facts",
     f"a property's name must be at most {intake.MAX_FACT_VALUE_CHARS} characters"),
    ({**PERSON, "facts": {"occupation": [f"job {i}" for i in range(intake.MAX_VALUES_PER_PROPERTY + 1)]}},
     "facts.occupation", f"at most {intake.MAX_VALUES_PER_PROPERTY} values"),
]


@pytest.mark.parametrize("document, field, limit", OVER, ids=[field + f"-{i}" for i, (_, field, _) in enumerate(OVER)])
def test_a_field_over_its_limit_is_refused_naming_field_and_limit(reference, document, field, limit):
    with pytest.raises(IntakeError) as refused:
        intake.parse_person_facts(document, reference.metadata, reference.covered)
    assert refused.value.field == field and limit in str(refused.value), str(refused.value)
    assert len(str(refused.value)) < 200  # the text itself is not echoed back


def test_a_2000_word_name_is_refused_in_one_line(tmp_path, base, capsys):
    assert len(LONG_NAME) > 20_000
    assert main([*base, "request", "add", "--name", LONG_NAME]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: name: must be at most {intake.MAX_NAME_CHARS} characters, got 23,999") and len(err) < 300, err[:500]
    assert "Traceback" not in err and "nothing was stored" in err
    assert main([*base, "request", "add", "--facts", _facts(tmp_path, {**PERSON, "name": LONG_NAME})]) == 2
    assert capsys.readouterr().err.startswith("error: name: must be at most")
    assert RequestStore(base[-1]).list() == []


def test_a_facts_file_over_1_mb_and_a_long_reference_are_refused(tmp_path, base, capsys):
    big = tmp_path / "big.yaml"
    big.write_text(yaml.safe_dump(PERSON) + "#" * intake.MAX_FACTS_FILE_BYTES + "\n", encoding="utf-8")
    assert main([*base, "request", "add", "--facts", str(big)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: facts: ") and f"at most {intake.MAX_FACTS_FILE_BYTES:,} bytes" in err, err
    reference = "R" * (intake.MAX_REFERENCE_CHARS + 1)
    assert main([*base, "request", "add", "--facts", _facts(tmp_path, PERSON), "--reference", reference]) == 2
    assert capsys.readouterr().err.startswith(f"error: requester_reference: must be a string of at most {intake.MAX_REFERENCE_CHARS}")
    assert RequestStore(base[-1]).list() == []


def test_fields_at_their_limit_are_taken(reference):
    document = {"name": "N" * intake.MAX_NAME_CHARS, "aliases": ["A" * intake.MAX_ALIAS_CHARS] * intake.MAX_ALIASES,
                "facts": {"occupation": ["v" * intake.MAX_FACT_VALUE_CHARS] * intake.MAX_VALUES_PER_PROPERTY}}
    person = intake.parse_person_facts(document, reference.metadata)
    assert person.name == document["name"] and len(person.aliases) == intake.MAX_ALIASES
    assert len(person.facts["P106"]) == intake.MAX_VALUES_PER_PROPERTY


def test_request_list_cuts_a_long_stored_name(tmp_path, base, capsys):
    """A name stored before the limits (or a Wikidata label) keeps the table readable."""
    RequestStore(base[-1]).add(ResolvedSubject("person-x", LONG_NAME[:intake.MAX_NAME_CHARS], None), "access")
    assert main([*base, "request", "list"]) == 0
    table = capsys.readouterr().out
    assert len(max(table.splitlines(), key=len)) < 160 and "…" in table, table
