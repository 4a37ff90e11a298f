"""Data-subject request intake: validation naming the field (nothing written), name resolution on
the real bundled extract, the one-month deadline and its states, the `wikimem request` CLI."""

import json
from datetime import UTC, datetime, timedelta

import pytest
import yaml

from expectations.requests import deadline_result
from cli.main import main
from wikimem_platform.subject_requests import intake
from wikimem_platform.storage import StoredResults
from wikimem_platform.subject_requests.intake import add_one_month, deadline_state, IntakeError, RequestStore
from wikimem_platform.subject_requests.reference import intake_reference

PERSON = {"name": "Ilse Marwitz", "aliases": ["I. Marwitz"],
          "facts": {"occupation": ["journalist", {"label": "translator"}], "P27": {"label": "Germany", "qid": "Q183"}}}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Nothing materialized: the bundled sample is the extract."""
    ref = intake_reference(StoredResults(tmp_path_factory.mktemp("empty-storage")))
    assert ref.source == "bundled sample"
    return ref


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'registry.db'}" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    return RequestStore(url)


def test_facts_file_parses_labels_ids_and_qids(reference):
    person = intake.parse_person_facts(PERSON, reference.metadata, reference.covered)
    assert person.name == "Ilse Marwitz" and person.aliases == ["I. Marwitz"]
    assert set(person.facts) == {"P106", "P27"}  # "occupation" named by label, P27 by id
    assert [v.value for v in person.facts["P106"]] == ["journalist", "translator"]  # no QID: the label is the id
    assert person.facts["P27"][0].value == "Q183"
    assert person.subject_key().startswith("person-")
    # The same person described in another order is the same subject.
    reordered = {**PERSON, "facts": {"P27": PERSON["facts"]["P27"], "P106": ["translator", "journalist"]}}
    assert intake.parse_person_facts(reordered, reference.metadata).subject_key() == person.subject_key()


@pytest.mark.parametrize(
    "document, field, words",
    [
        ({**PERSON, "facts": {"favourite colour": ["blue"]}}, "facts.favourite colour", ["unknown property", "P106 (occupation)"]),
        ({**PERSON, "name": "  "}, "name", ["non-empty"]),
        ({**PERSON, "name": 42}, "name", ["non-empty string"]),
        ({**PERSON, "facts": {"occupation": [1952]}}, "facts.occupation[0]", ["string label", "int"]),
        ({**PERSON, "facts": {"P27": {"label": "Germany", "qid": "Germany"}}}, "facts.P27.qid", ["Q123"]),
        ({**PERSON, "facts": {}}, "facts", ["at least one property"]),
        ({**PERSON, "aliases": [None]}, "aliases[0]", ["non-empty string"]),
        ({**PERSON, "birthday": "1 May"}, "birthday", ["allowed: name, aliases, facts"]),
        (["not", "a", "mapping"], "facts file", ["mapping"]),
    ],
)
def test_bad_facts_are_refused_naming_the_field(reference, document, field, words):
    with pytest.raises(IntakeError) as error:
        intake.parse_person_facts(document, reference.metadata, reference.covered)
    assert error.value.field == field
    for word in words:
        assert word in str(error.value)


def test_name_resolution_unique_ambiguous_unknown(reference):
    assert intake.resolve_name("Douglas Adams", reference.humans) == intake.ResolvedSubject("Q42", "Douglas Adams", "Q42")
    assert intake.resolve_name("  douglas   ADAMS ", reference.humans).qid == "Q42"  # case and spacing folded
    with pytest.raises(IntakeError) as ambiguous:
        intake.resolve_name("Giovanni Dolfin", reference.humans, reference.claims)  # two of that name in the sample
    assert ambiguous.value.field == "name" and "--qid" in str(ambiguous.value)
    # neither has a description in the sample: what tells them apart is read from their facts
    assert "Q1243594: Giovanni Dolfin — born 1303, diplomat, Republic of Venice" in str(ambiguous.value)
    assert "Q3107155: Giovanni Dolfin — born 1545, writer, Republic of Venice" in str(ambiguous.value)
    assert intake._year("-0063") == "63 BC" and intake._year("1952-03-11") == "1952"
    with pytest.raises(IntakeError, match="--facts") as unknown:
        intake.resolve_name("Nobody Ever Heard Of", reference.humans)
    assert unknown.value.field == "name"
    with pytest.raises(IntakeError) as missing:
        intake.resolve_qid("Q999999999", reference.humans)
    assert missing.value.field == "qid"
    with pytest.raises(IntakeError) as malformed:
        intake.resolve_qid("42", reference.humans)
    assert malformed.value.field == "qid"


def test_store_add_list_status_remove_and_duplicates(store, reference):
    received = datetime(2026, 1, 31, 9, 30, tzinfo=UTC)
    adams = intake.resolve_qid("Q42", reference.humans)
    access = store.add(adams, "access", "letter 17", received_at=received)
    assert access.id.startswith("dsr-20260131-") and access.status == "received"
    assert access.due_at == datetime(2026, 2, 28, 9, 30, tzinfo=UTC)  # one month: the last day of a shorter month
    store.add(adams, "erasure")  # another kind for the same person is another request
    with pytest.raises(IntakeError) as duplicate:
        store.add(adams, "access")
    assert duplicate.value.field == "subject" and access.id in str(duplicate.value)
    with pytest.raises(IntakeError) as kind:
        store.add(adams, "rectification")
    assert kind.value.field == "kind" and "access, erasure" in str(kind.value)
    assert len(store.list()) == 2  # the refused ones wrote nothing

    private = intake.resolve_person(intake.parse_person_facts(PERSON, reference.metadata))
    stored = store.add(private, "erasure")
    assert stored.subject_qid is None and stored.person().facts["P27"][0].qid == "Q183"
    assert store.set_status(stored.id, intake.RequestStatus.AUDITING).status == "auditing"
    answered = store.set_status(stored.id, intake.RequestStatus.ANSWERED, when=received + timedelta(days=3))
    assert answered.answered_at == received + timedelta(days=3) and not answered.is_open
    reaudited = store.set_status(stored.id, intake.RequestStatus.ANSWERED, when=received + timedelta(days=40))
    assert reaudited.answered_at == answered.answered_at  # a re-audit does not move the answer's date
    assert [r.id for r in store.open()] == [r.id for r in store.list() if r.id != stored.id]
    store.add(private, "erasure")  # answered: no longer open, so a new request is accepted
    assert store.remove(access.id).id == access.id
    with pytest.raises(KeyError):
        store.get(access.id)


def test_one_month_is_calendar_months():
    assert add_one_month(datetime(2026, 1, 31, tzinfo=UTC)) == datetime(2026, 2, 28, tzinfo=UTC)
    assert add_one_month(datetime(2028, 1, 30, tzinfo=UTC)) == datetime(2028, 2, 29, tzinfo=UTC)  # leap year
    assert add_one_month(datetime(2026, 12, 15, 8, tzinfo=UTC)) == datetime(2027, 1, 15, 8, tzinfo=UTC)
    assert add_one_month(datetime(2026, 3, 31, tzinfo=UTC)) == datetime(2026, 4, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    "days_after_receipt, status, state, passed, severity",
    [
        (10, "received", "ok", True, "WARN"),       # 20 days left
        (24, "auditing", "warn", False, "WARN"),    # 6 days left: within 7
        (31, "received", "fail", False, "ERROR"),   # past the due date (30 days in this month)
        (31, "answered", "ok", True, "WARN"),       # answered on day 3: on time, closed
    ],
)
def test_deadline_states_by_date(store, reference, days_after_receipt, status, state, passed, severity):
    received = datetime(2026, 4, 1, 12, tzinfo=UTC)  # due 2026-05-01
    request = store.add(intake.resolve_qid("Q42", reference.humans), "access", received_at=received)
    if status != "received":
        request = store.set_status(request.id, intake.RequestStatus(status), when=received + timedelta(days=3))
    result = deadline_state(request, now=received + timedelta(days=days_after_receipt))
    assert result.state == state
    check = deadline_result(result)
    assert check.passed is passed and check.severity.value == severity
    assert check.metadata["state"].value == state


def test_answered_late_fails(store, reference):
    received = datetime(2026, 4, 1, tzinfo=UTC)
    request = store.add(intake.resolve_qid("Q42", reference.humans), "access", received_at=received)
    late = store.set_status(request.id, intake.RequestStatus.ANSWERED, when=received + timedelta(days=45))
    assert deadline_state(late, now=received + timedelta(days=50)).state == "fail"


def test_cli_request_add_list_show_remove(tmp_path, capsys):
    home = tmp_path / "home"
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    base = ["--home", str(home), "--registry-url", url]
    facts = tmp_path / "person.yaml"
    facts.write_text(yaml.safe_dump(PERSON), encoding="utf-8")
    assert main([*base, "request", "add", "--facts", str(facts), "--kind", "erasure", "--reference", "T-1"]) == 0
    out = capsys.readouterr().out
    assert "received dsr-" in out and "erasure request about Ilse Marwitz" in out and "No model is registered" in out
    assert main([*base, "request", "add", "--name", "Douglas Adams"]) == 0
    capsys.readouterr()

    # Each bad input: exit 2, an error naming the field, nothing stored.
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**PERSON, "facts": {"shoe size": ["42"]}}), encoding="utf-8")
    for args, field in [(["--facts", str(bad)], "facts.shoe size"), (["--qid", "Q1"], "qid"),
                        (["--name", "Giovanni Dolfin"], "name"), (["--name", "Douglas Adams"], "subject"),
                        (["--facts", str(tmp_path / "missing.yaml")], "facts")]:
        assert main([*base, "request", "add", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {field}:") and "nothing was stored" in err
    assert len(RequestStore(url).list()) == 2

    assert main([*base, "request", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["kind"] for r in listed] == ["erasure", "access"] and listed[1]["subject_qid"] == "Q42"
    request_id = listed[0]["id"]
    assert main([*base, "request", "show", request_id]) == 0
    out = capsys.readouterr().out
    assert "no answer yet" in out and "days left" in out
    assert main([*base, "request", "show", "dsr-nope"]) == 2
    assert main([*base, "request", "remove", request_id, "--purge"]) == 0
    assert "the request's record (id, kind, dates, outcome, who purged it) stays" in capsys.readouterr().out
    record, kept = RequestStore(url).list()
    # Purged: the accountability record alone (never answered: withdrawn), nothing of the person
    assert (record.id, record.kind, record.status, record.is_purged) == (request_id, "erasure", "withdrawn", True)
    assert (record.person_json, record.requester_reference, record.subject_label) == (None, None, "[purged]")
    assert record.purged_by and not record.is_open
    assert kept.kind == "access" and kept.person_json is None and not kept.is_purged
    assert main([*base, "request", "remove", kept.id]) == 0  # without --purge: the row goes
    assert [r.id for r in RequestStore(url).list()] == [request_id]


def _model(key, verdicts):
    return {"model": key, "audited": True, "facts": [
        {"property": p, "property_label": p, "values": ["v"], "verdict": v, "M": m} for p, (v, m) in verdicts.items()]}


def test_revisions_are_compared_fact_by_fact():
    from wikimem_platform.subject_requests.answer import verify_revisions

    models = [
        _model("planted@1", {"P106": ("memorized", 1.0), "P27": ("memorized", 0.9), "P19": ("weakly associated", 0.3),
                             "P108": ("not memorized", 0.0)}),
        {"model": "broken@1", "audited": False, "facts": []},
        _model("other@1", {"P106": ("memorized", 1.0)}),  # one revision only: nothing to compare
        _model("planted@2-npo", {"P106": ("not memorized", 0.0), "P27": ("memorized", 0.8), "P19": ("weakly associated", 0.1),
                                 "P108": ("memorized", 0.9)}),
    ]
    [check] = verify_revisions(models)
    assert (check["before"], check["after"]) == ("planted@1", "planted@2-npo")
    outcomes = {f["property"]: f["outcome"] for f in check["facts"]}
    assert outcomes == {"P106": "forgotten", "P27": "still memorized", "P19": "not memorized", "P108": "newly memorized"}
    assert check["counts"] == {"forgotten": 1, "still memorized": 1, "newly memorized": 1, "not memorized": 1}
    assert not check["erased"]
    models[3] = _model("planted@2-npo", {"P106": ("not memorized", 0.0), "P27": ("weakly associated", 0.5)})
    [check] = verify_revisions(models)
    assert check["erased"] and check["counts"]["forgotten"] == 2
    assert check["access"] is None  # a model loaded here; a served revision's access is kept for the letter
    models[3]["access"] = "top-logprobs"
    assert verify_revisions(models)[0]["access"] == "top-logprobs"


# One bad facts file or argument per row: (YAML text or CLI arguments, the field named, words of the message).
BAD_INPUT = [
    ("name: A B\nfacts:\n  date of birth: 1980-02-31\n", "facts.date of birth", ["February 1980 has no day 31"]),
    ("name: A B\nfacts:\n  date of birth: '1981-02-29'\n", "facts.date of birth", ["February 1981 has no day 29"]),
    ("name: A B\nfacts:\n  date of birth: sometime in spring\n", "facts.date of birth", ["must be a date", "sometime in spring"]),
    ("name: A B\nfacts:\n  date of birth: 2999-01-01\n", "facts.date of birth", ["in the future"]),
    ("name: A B\nfacts:\n  date of birth: 1980-13-01\n", "facts.date of birth", ["month 13 does not exist"]),
    ("name: A B\nfacts:\n  date of birth: 0\n", "facts.date of birth", ["no year 0"]),
    ("name: A B\nfacts:\n  date of birth: true\n", "facts.date of birth", ["must be a date", "True"]),
    ("name: A B\nfacts:\n  date of birth: [1980-02-14, spring]\n", "facts.date of birth[1]", ["must be a date", "'spring'"]),
    ("name: A B\nfacts:\n  date of birth: {label: '1980', qid: Q5}\n", "facts.date of birth", ["without label or qid"]),
    ("name: A B\nfacts:\n  date of death: 31 Febuary 1990\n", "facts.date of death", ["must be a date"]),
    ("name: A B\nfacts:\n  height: tall\n", "facts.height", ["must be a number", "'tall'"]),
    ("name: A B\nfacts:\n  height: [1.85 m, very]\n", "facts.height[1]", ["must be a number"]),
    ("name: A B\nfacts:\n  occupation: 1952\n", "facts.occupation", ["string label", "int"]),
    ("name: A B\nfacts:\n  occupation: ['']\n", "facts.occupation[0]", ["non-empty string"]),
    ("name: A B\nfacts:\n  occupation: []\n", "facts.occupation", ["at least one value"]),
    ("name: A B\nfacts:\n  occupation: {label: painter, qid: painter}\n", "facts.occupation.qid", ["Q123"]),
    ("name: A B\nfacts:\n  occupation: {label: painter, wikidata: Q1}\n", "facts.occupation.wikidata", ["allowed: label, qid"]),
    ("name: A B\nfacts:\n  shoe size: 42\n", "facts.shoe size", ["unknown property", "P106 (occupation)"]),
    ("name: A B\nfacts: [occupation, painter]\n", "facts", ["at least one property"]),
    ("name: A B\nfacts: {}\n", "facts", ["at least one property"]),
    ("facts:\n  occupation: painter\n", "name", ["non-empty string"]),
    ("name: [A, B]\nfacts:\n  occupation: painter\n", "name", ["non-empty string"]),
    ("name: A B\naliases: Ab\nfacts:\n  occupation: painter\n", "aliases", ["list of strings"]),
    ("name: A B\nbirthday: 1 May\nfacts:\n  occupation: painter\n", "birthday", ["allowed: name, aliases, facts"]),
    ("- name: A B\n", "facts file", ["mapping"]),
    ("", "facts file", ["mapping"]),
    ("name: [unclosed\n", "facts", ["not valid YAML"]),
    (b"name: \xff\xfe A\n", "facts", ["not UTF-8"]),
    (["--qid", "Q1"], "qid", ["Q1"]),
    (["--qid", "42"], "qid", []),
    (["--name", "Nobody Atall Xyzzy"], "name", []),
    (["--name", "Giovanni Dolfin"], "name", ["born 1303, diplomat", "born 1545, writer"]),
    (["--facts", "missing.yaml"], "facts", ["does not exist"]),
    (["--facts", "."], "facts", ["does not exist"]),
]


def test_bad_input_corpus_exits_2_naming_the_field_and_stores_nothing(tmp_path, capsys):
    """Every bad facts file or argument: exit code 2, `error: <field>: <why>`, "nothing was
    stored", no traceback, and the request store stays empty."""
    assert len(BAD_INPUT) >= 25
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    base = ["--home", str(tmp_path / "home"), "--registry-url", url]
    for number, (given, field, words) in enumerate(BAD_INPUT):
        if isinstance(given, list):
            args = [a if a not in ("missing.yaml", ".") else str(tmp_path / a) for a in given]
        else:
            path = tmp_path / f"bad{number}.yaml"
            path.write_bytes(given if isinstance(given, bytes) else given.encode("utf-8"))
            args = ["--facts", str(path)]
        assert main([*base, "request", "add", *args]) == 2, given
        captured = capsys.readouterr()
        assert captured.err.startswith(f"error: {field}:"), (given, captured.err)
        assert all(word in captured.err for word in words), (given, captured.err)
        assert "nothing was stored" in captured.err and "Traceback" not in captured.err + captured.out, given
    assert RequestStore(url).list() == []


def test_dates_and_quantities_are_stored_in_the_extracts_form(tmp_path, reference):
    """An unquoted YAML date, a written-out date, a year and a height with its unit: stored as the
    extract stores Wikidata's (value "1980-02-14", label "14 February 1980")."""
    path = tmp_path / "person.yaml"
    path.write_text("name: Ilse Marwitz\nfacts:\n  date of birth: 1980-02-14\n  date of death: 3 Sept 2020\n"
                    "  height: 1.72 m\n  P27: Germany\n", encoding="utf-8")
    person = intake.load_facts_file(path, reference.metadata, reference.covered)
    claims = person.claims("person-x", dict(zip(reference.metadata["property"], reference.metadata["datatype"])))
    rows = {r["property"]: (r["datatype"], r["value"], r["value_label"]) for r in claims.to_dict("records")}
    assert rows["P569"] == ("time", "1980-02-14", "14 February 1980")
    assert rows["P570"] == ("time", "2020-09-03", "3 September 2020")
    assert rows["P2048"] == ("quantity", "1.72", "1.72 m")
    assert rows["P27"] == ("wikibase-item", "Germany", "Germany")
    assert intake.PersonFacts.from_json(person.to_json()) == person  # stored with the request and read back
    assert intake.load_facts_file(path, reference.metadata).subject_key() == person.subject_key()


def test_pages_and_identifiers_are_not_facts_about_the_person(reference):
    """Oliver Kahn's Commons category and his VIAF, ISNI and GND numbers are statements about
    Wikimedia pages and other databases: marked "not personal data", never audited, and not
    among the facts a letter says could not be tested."""
    from wikimem_platform.canaries import build_templates
    from wikimem_platform.reference.counterfactuals import draw_counterfactuals
    from wikimem_platform.reference.properties import build_property_table
    from wikimem_platform.subject_requests.audit import AUDITED, NOT_COVERED, NOT_PERSONAL, plan_person_audit
    from wikimem_platform.wikidata.extract import read_dump
    from wikimem_platform.reference import bundled

    extract = read_dump(bundled.SAMPLE_DUMP)
    table = build_property_table(extract.claims, reference.metadata, min_humans=5)
    table = table[table["property"] == "P106"]
    subject = extract.humans[extract.humans["qid"] == "Q131261"][["qid", "label", "aliases", "description"]].reset_index(drop=True)
    facts = extract.claims[extract.claims["qid"] == "Q131261"]
    assert {"P373", "P214", "P213", "P227"} <= set(facts["property"])  # what the sample holds
    plan = plan_person_audit(subject, facts, property_table=table, templates=build_templates(table),
                             counterfactuals=draw_counterfactuals(extract.claims, extract.humans, ["P106"], per_property=10),
                             claims=extract.claims, humans=extract.humans, metadata=reference.metadata, on_demand=False)
    coverage = dict(zip(plan.coverage["property"], plan.coverage["coverage"]))
    assert coverage["P106"] == AUDITED and coverage["P27"] == NOT_COVERED  # not among the audited properties here
    assert {coverage[p] for p in ("P373", "P214", "P213", "P227")} == {NOT_PERSONAL}
    assert not set(plan.canaries["property"]) & {"P373", "P214", "P213", "P227"}


def test_a_request_names_its_languages_and_its_letters(tmp_path, capsys):
    """`--languages de,en` and `--letter-language` are stored with the request; the letter follows the
    first language that has one; a facts file may name them; a language without templates, or a
    letter language without a letter, is refused naming the field and the allowed values, nothing
    stored; a database made before languages keeps its requests."""
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    base = ["--home", str(tmp_path / "home"), "--registry-url", url]
    assert main([*base, "request", "add", "--name", "Douglas Adams", "--languages", "pl,en"]) == 0
    assert "audited in: pl,en; letter in: pl" in capsys.readouterr().out  # Polish has a letter: the first language
    facts = tmp_path / "person.yaml"
    facts.write_text(yaml.safe_dump({**PERSON, "languages": ["fr", "en"]}), encoding="utf-8")
    assert main([*base, "request", "add", "--facts", str(facts)]) == 0
    store = RequestStore(url)
    adams, ilse = sorted(store.list(), key=lambda r: r.subject_label)
    assert adams.language_codes() == ["pl", "en"] and adams.letter_language == "pl"
    assert ilse.language_codes() == ["fr", "en"] and ilse.letter_language == "fr"
    assert ilse.person().languages == ["fr", "en"]
    assert main([*base, "request", "add", "--qid", "Q1224", "--languages", "de,xx"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: languages:") and "'xx' not supported; allowed: en, de, fr, pl" in err
    assert "nothing was stored" in err
    with pytest.raises(SystemExit):  # argparse names the choices
        main([*base, "request", "add", "--qid", "Q1224", "--letter-language", "es"])
    assert "--letter-language: invalid choice: 'es'" in capsys.readouterr().err
    with pytest.raises(IntakeError, match="letter_language: 'es' has no letter templates; allowed: en, de, fr, pl"):
        store.add(intake.ResolvedSubject("Q1224", "Carlo Levi", "Q1224"), "access", letter_language="es")
    assert len(store.list()) == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**PERSON, "languages": ["klingon"]}), encoding="utf-8")
    assert main([*base, "request", "add", "--facts", str(bad)]) == 2
    assert capsys.readouterr().err.startswith("error: languages:")


def test_a_request_store_made_before_languages_keeps_its_requests(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE subject_requests (id VARCHAR PRIMARY KEY, kind VARCHAR, subject_key VARCHAR, "
                   "subject_qid VARCHAR, subject_label VARCHAR, person_json VARCHAR, requester_reference VARCHAR, "
                   "received_at DATETIME, due_at DATETIME, status VARCHAR, answered_at DATETIME, error VARCHAR)")
        db.execute("INSERT INTO subject_requests VALUES ('dsr-20260101-abcdef', 'access', 'Q42', 'Q42', 'Douglas Adams', "
                   "NULL, NULL, '2026-01-01 00:00:00', '2026-02-01 00:00:00', 'received', NULL, NULL)")
    [old] = RequestStore(f"sqlite:///{path}").list()
    assert old.id == "dsr-20260101-abcdef" and old.language_codes() is None and old.letter_language is None


def test_item_values_in_words_take_the_qid_the_extract_knows_them_by(reference):
    """A facts file names values in words ("Poland"): the audit reads them as the extract's items
    (the same candidates, short forms and controls' origin as a Wikidata person's), by its own
    labels, their short forms, or — for a citizenship — the controls' country lists; a label no
    item or several items fit stays as written."""
    from wikimem_platform.subject_requests.audit import person_subject

    person = intake.parse_person_facts({"name": "Halina Wierzbowska", "facts": {
        "occupation": ["journalist", "dog whisperer"], "country of citizenship": ["Poland", "USA", "the Netherlands",
                                                                                   "Norway", "Atlantis"],
        "place of birth": "Kraków"}}, reference.metadata, reference.covered)
    request = intake.SubjectRequest(id="dsr-1", kind="access", subject_key=person.subject_key(),
                                    subject_label=person.name, received_at=datetime.now(UTC),
                                    due_at=datetime.now(UTC), person_json=person.to_json())
    _, facts = person_subject(request, reference.humans, reference.claims, reference.metadata)
    values = dict(zip(facts["value_label"], facts["value"]))
    assert values["Poland"] == "Q36" and values["USA"] == "Q30" and values["the Netherlands"] == "Q29999"
    # the extract's item (the Kingdom of the Netherlands, by its short form) before the lists' country;
    # Norway, nobody's citizenship in the sample, from the name lists' countries
    claims = reference.claims
    assert values["Norway"] == "Q20" and not ((claims["property"] == "P27") & (claims["value"] == "Q20")).any()
    assert values["journalist"] == "Q1930187"
    assert values["Atlantis"] == "Atlantis" and values["dog whisperer"] == "dog whisperer"
    assert set(facts["value_label"]) == {"Poland", "USA", "the Netherlands", "Norway", "Atlantis", "journalist",
                                         "dog whisperer", "Kraków"}  # labels as written


def test_a_value_in_words_no_longer_competes_with_itself(reference):
    """Why a famous person's completion could name the United States while the ranking put it 15th:
    "United States" (the facts file) and "United States of America" (Q30 in the counterfactual pool)
    were two candidates, the truth against itself. Read as Q30, the pool's Q30 is dropped."""
    from wikimem_platform.reference.counterfactuals import build_candidates
    from wikimem_platform.subject_requests.audit import person_subject

    person = intake.parse_person_facts({"name": "Halina Wierzbowska", "facts": {"country of citizenship": "United States"}},
                                       reference.metadata, reference.covered)
    request = intake.SubjectRequest(id="dsr-2", kind="access", subject_key=person.subject_key(),
                                    subject_label=person.name, received_at=datetime.now(UTC),
                                    due_at=datetime.now(UTC), person_json=person.to_json())
    subject, facts = person_subject(request, reference.humans, reference.claims, reference.metadata)
    pool = reference.claims[reference.claims["property"] == "P27"].drop_duplicates("value")[["property", "value", "value_label"]]
    assert "Q30" in set(pool["value"])
    candidates = build_candidates(subject, facts, pool)
    assert candidates.loc[candidates["is_true"], "value"].tolist() == ["Q30"]
    assert "Q30" not in set(candidates.loc[~candidates["is_true"], "value"])
    assert "United States of America" not in set(candidates.loc[~candidates["is_true"], "value_label"])
