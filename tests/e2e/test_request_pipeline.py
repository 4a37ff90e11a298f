"""Data-subject requests through the real Dagster assets on the bundled sample and a shipped model
(SmolLM2-135M-Instruct, CPU): a private person end to end, h0 sentences shared across requests,
a cohort subject answered without a forward pass (bar the sentences of its true values' other
forms), a release that fails to load."""

import json
from pathlib import Path

import pytest
from dagster import AssetSelection, DagsterEventType, DagsterInstance, materialize

from assets import requests as request_assets
from assets import scoring as scoring_assets
from tests.support.checks import REQUEST_CHECKS
from tests.support.checks import SCORING_CHECKS
from resources import ParquetIOManager
from tests.support.scoring_setup import UPSTREAM, UPSTREAM_CONFIG, resources, scores_config
from cli.main import main
from wikimem_platform.reference.value_forms import is_form
from wikimem_platform.registry import Registry
from wikimem_platform.reports import compliance as reports
from wikimem_platform.subject_requests import intake
from wikimem_platform.subject_requests.answer_files import ANNEX, answer_dir, PDF, read_answer
from wikimem_platform.subject_requests.controller import save_controller
from wikimem_platform.storage import StoredResults
from wikimem_platform.subject_requests.letter import RIGHTS
from wikimem_platform.subject_requests.reference import intake_reference
from wikimem_platform.unlearning.export import read_export
from wikimem_platform.wikimem.scoring import expand_canaries

MODEL = "smollm2-135m-instruct"
KEY = f"{MODEL}@1"
REQUEST_ASSETS = [request_assets.request_subject, request_assets.request_canaries, request_assets.request_scores,
                  request_assets.request_answer]
# UPSTREAM_CONFIG's property table keeps P106, P27, P19, P20 (>= 2000 humans); date of birth is then
# not covered by the reference data and gets its templates on demand; religion has no value in the
# sample to rank against.
# What the letters name: the controller (the instance's) and what the register says of the release.
CONTROLLER = {"name": "Musterfirma KI GmbH", "address": "Beispielweg 5, 10115 Berlin",
              "contact": "datenschutz@musterfirma.example", "dpo": "Dr. Lena Vogt, dpo@musterfirma.example",
              "supervisory_authority": "Berliner Beauftragte für Datenschutz und Informationsfreiheit, "
                                       "Alt-Moabit 59-61, 10555 Berlin"}
RELEASE = {"display_name": "Musterfirma Assistent", "purposes": "answering customer questions in the web chat",
           "recipients": "customers using the chat; the hosting provider, as processor",
           "retention": "until the release is replaced, at most 24 months",
           "training_data": "public web text published by Hugging Face (FineWeb-Edu, Cosmopedia); no customer data",
           "transfers": "none: the model runs in the EU"}
PERSON = {"name": "Ilse Marwitz", "aliases": ["I. Marwitz"],
          "facts": {"occupation": ["journalist", "translator"], "P27": {"label": "Germany", "qid": "Q183"},
                    "place of birth": "Tübingen", "date of birth": "12 May 1961", "religion": "Lutheranism"},
          # English only: her citizenship would add German (test_a_request_in_german_end_to_end does that)
          "languages": ["en"]}


class World:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.url = f"sqlite:///{tmp / 'registry.db'}"
        self.registry = Registry(self.url)
        self.store = intake.RequestStore(self.url)
        self.instance = DagsterInstance.ephemeral(tempdir=str(tmp / "home"))
        self.storage = Path(self.instance.storage_directory())
        # Tables where a real instance keeps them (<storage>/parquet), so the CLI finds them too.
        self.resources = {**resources(tmp, self.url), "io_manager": ParquetIOManager(base_dir=str(self.storage / "parquet"))}

    def stored(self) -> StoredResults:
        return StoredResults(self.storage)

    def add(self, subject, kind="access", **options):
        request = self.store.add(subject, kind, **options)
        self.instance.add_dynamic_partitions("requests", [request.id])
        return request

    def run_request(self, request_id: str, properties=(), **plan):
        result = materialize(
            [*UPSTREAM, scoring_assets.scores, scoring_assets.memorization, *REQUEST_ASSETS, *REQUEST_CHECKS],
            selection=AssetSelection.groups("requests"),
            instance=self.instance, partition_key=request_id, resources=self.resources,
            run_config={"ops": {"request_canaries": {"config": {"properties": list(properties), **plan}}}},
        )
        assert result.success
        return result

    def table(self, asset: str, request_id: str):
        return self.stored().partition(asset, request_id)


@pytest.fixture(scope="module")
def world(tmp_path_factory, smollm2):  # smollm2: loaded (and its GGUF dequantized) once per session
    world = World(tmp_path_factory.mktemp("requests"))
    world.registry.register_source(MODEL, **RELEASE)
    save_controller(world.storage, **CONTROLLER)
    assert materialize(UPSTREAM, instance=world.instance, resources=world.resources, run_config=UPSTREAM_CONFIG).success
    return world


def person(world, document):
    ref = intake_reference(world.stored())
    return intake.resolve_person(intake.parse_person_facts(document, ref.metadata, ref.covered))


@pytest.mark.slow
def test_private_person_erasure_end_to_end(world, capsys):
    request = world.add(person(world, PERSON), "erasure")
    result = world.run_request(request.id)
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert checks["request_scores_check"].passed and checks["request_answer_check"].passed
    deadline = [e.event_specific_data for e in result.all_events if e.event_type == DagsterEventType.ASSET_CHECK_EVALUATION
                and e.event_specific_data.check_name == "request_deadline_check"]
    assert deadline and deadline[0].passed  # received now: a month left

    stored = world.store.get(request.id)
    assert stored.status == "answered" and stored.answered_at is not None
    answer = read_answer(world.storage, request.id)
    coverage = {c["property"]: c for c in answer["coverage"]}
    assert {p: c["coverage"] for p, c in coverage.items()} == {
        "P106": "audited", "P27": "audited", "P19": "audited", "P569": "template built on demand", "P140": "not covered"}
    assert "no other person in the reference data has a value for it" in coverage["P140"]["reason"]
    [model] = answer["models"]
    assert model["model"] == KEY and model["audited"] and model["fingerprint"]
    facts = {f["property"]: f for f in model["facts"]}
    assert set(facts) == {"P106", "P27", "P19", "P569"}  # every audited property, on-demand included
    for fact in facts.values():
        assert fact["verdict"] in ("memorized", "weakly associated", "not memorized")
        assert 0 <= fact["M"] <= 1 and fact["n_variants"] == 11
        assert fact["completion"]["prompt"].startswith("Ilse Marwitz") and isinstance(fact["completion"]["output"], str)
        assert fact["completion_hit"] in (True, False) and 0 <= fact["cue"] <= 1
        assert 1 <= fact["truth_rank"] <= fact["n_candidates"]
        # "For your ... there is no evidence beyond ...": ranked first in some wording (e.g. under a
        # form of the value, "Federal Republic of Germany"), as often as invented people are
        assert fact["sentence"].startswith(("The model", "For your")), fact["sentence"]
    assert facts["P106"]["values"] == ["journalist", "translator"] and facts["P27"]["values"] == ["Germany"]
    # The requester's values that no counterfactual pool holds are the truths; pool values equal to one are dropped.
    candidates = world.table("request_candidates", request.id)
    p19 = candidates[candidates["property"] == "P19"]
    assert p19["is_true"].sum() == 1 and (p19["value_label"] == "Tübingen").sum() == 1
    # Erasure: the forget set holds every fact some wording ranks first (lenient), and only those.
    lenient = {p for p, f in facts.items() if f["M"] > 0}
    assert {e["property"] for e in answer["forget_set"]} == lenient
    # each entry carries the request's own comparison with the controls (null where not compared)
    for entry in answer["forget_set"]:
        fact = facts[entry["property"]]
        assert entry["n_controls"] == fact["n_controls"] and entry["p_controls"] == fact["p_value"]
        assert entry["beats_controls"] == (None if fact["n_controls"] is None
                                           else fact["verdict"] in ("memorized", "weakly associated"))
    assert any(e["n_controls"] for e in answer["forget_set"]) or not answer["forget_set"]
    assert answer["lineage"]["code"]["git_commit"] and answer["lineage"]["config_hash"]
    assert {a["asset"] for a in answer["lineage"]["data_assets"]} >= {"claims", "canary_templates", "counterfactuals"}
    letter_path = world.storage / "requests" / request.id / "answer.html"
    letter = letter_path.read_text()
    assert "Ilse Marwitz" in letter and "What we will erase, and by when" in letter and "Your religion or worldview" in letter
    assert "<script" not in letter  # a letter: prints and archives as it is

    # `wikimem inquiry` answers from the stored request answers too.
    capsys.readouterr()
    args = ["--registry-url", world.url, "--storage", str(world.storage)]
    assert main([*args, "inquiry", "i. marwitz"]) == 0
    out = capsys.readouterr().out
    assert f"erasure request {request.id}" in out and "occupation" in out
    assert main([*args, "request", "show", request.id]) == 0
    shown = capsys.readouterr().out
    assert "answer.html" in shown and "annex.html" in shown and ("answer.pdf" in shown) == bool(reports.find_chromium())


@pytest.mark.slow
def test_h0_sentences_are_scored_once_across_requests(world):
    # English only: "Germany" is the extract's Q183, whose citizens' requests are also asked in German;
    # two men: the controls come from the German lists of the person's gender
    first = world.add(person(world, {"name": "Karl Weissbach", "facts": {"P106": ["journalist"], "P27": ["Germany"]},
                                     "languages": ["en"]}))
    world.run_request(first.id)
    second = world.add(person(world, {"name": "Jonas Oltmanns", "facts": {"P106": ["journalist"], "P27": ["Germany"]},
                                      "languages": ["en"]}))
    world.run_request(second.id)
    rows = expand_canaries(world.table("request_canaries", second.id), world.table("request_candidates", second.id))
    own = {*rows["sentence_h"], *(s for group in rows["sentences_similar"] for s in group)}
    h0 = set(rows["sentence_h0"])
    audits = world.table("request_model_audits", second.id).set_index("model")
    # Same properties and values: every h0 sentence came from the first request's cache.
    assert audits.loc[KEY, "sentences_computed"] == len(own)
    assert len(h0) > 0 and not own & h0
    # Same facts, same name shape and origin: the same invented controls (bar any sharing a word
    # with the new name), so the model computed exactly the controls' sentences the first request
    # had not needed (which values a control needs depends on the person's own result).
    def control_sentences(request_id):
        scored = world.table("request_control_scores", request_id)
        if scored is None or not len(scored):
            return set()
        rows = expand_canaries(world.table("request_control_canaries", request_id),
                               world.table("request_control_candidates", request_id))
        done = set(zip(scored["subject_qid"], scored["property"], scored["variant_id"], scored["value"]))
        rows = rows[[k in done for k in zip(rows["subject_qid"], rows["property"], rows["variant_id"], rows["value"])]]
        return set(rows["sentence_h"]) | set(rows["sentence_h0"])

    # what the cache held before: every earlier request's controls (requests of this module with
    # people of the same name shape and origin share controls), the h0 and the person's sentences
    earlier = [r.id for r in world.store.list() if r.id != second.id]
    before = set().union(*(control_sentences(r) for r in earlier)) | h0 | own
    now = control_sentences(second.id)
    assert now and audits.loc[KEY, "control_sentences_computed"] == len(now - before)
    print(f"controls' sentences of the second request found in the first's cache: {1 - len(now - before) / len(now):.1%}")
    assert len(now - before) < 0.5 * len(now)


@pytest.mark.slow
def test_a_person_audited_in_a_cohort_costs_nothing(world):
    world.instance.add_dynamic_partitions("models", [KEY])
    cohort_audit = materialize(
        [*UPSTREAM, scoring_assets.scores, scoring_assets.memorization, *SCORING_CHECKS],
        selection=[scoring_assets.scores, scoring_assets.memorization], instance=world.instance, partition_key=KEY,
        resources=world.resources, run_config=scores_config(("P106",), per_cohort=1),
    )
    assert cohort_audit.success
    subjects = world.stored().table("subjects")
    qid = subjects.groupby("cohort").head(1)["qid"].iloc[0]
    request = world.add(intake.resolve_qid(qid, world.stored().table("humans")))
    # without controls: what is checked is the person's sentences (a cohort audit scores no
    # controls; they are the other tests' subject), and the suite's time is kept
    world.run_request(request.id, properties=["P106"], n_controls=0)
    audits = world.table("request_model_audits", request.id).set_index("model")
    # every sentence but those of the true value's other forms ("film actor" -> "movie actor",
    # issue 33.5), which a cohort audit does not score, came from the cohort audit's cache
    rows = expand_canaries(world.table("request_canaries", request.id), world.table("request_candidates", request.id))
    forms = rows[is_form(rows["value"])]
    new = {*forms["sentence_h"], *forms["sentence_h0"], *(s for group in forms["sentences_similar"] for s in group)}
    assert audits.loc[KEY, "sentences_computed"] == len(new) and audits.loc[KEY, "control_sentences_computed"] == 0
    scores = world.table("request_scores", request.id)
    assert len(scores) > 0 and set(scores["property"]) == {"P106"}


@pytest.mark.slow
def test_a_release_that_fails_to_load_fails_alone(world, tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    world.registry.register_source(str(broken), name="broken")
    try:
        request = world.add(person(world, {"name": "Pia Lorenz", "facts": {"P27": ["Austria"]}}))
        world.run_request(request.id)
        answer = read_answer(world.storage, request.id)
        by_model = {m["model"]: m for m in answer["models"]}
        assert by_model[KEY]["audited"] and by_model[KEY]["facts"]
        assert not by_model["broken@1"]["audited"] and by_model["broken@1"]["error"]
        assert "could not be audited" in answer["headline"]
        assert world.store.get(request.id).status == "answered"
    finally:
        world.registry.remove("broken@1")


ART_15_ITEMS = ["Purposes of the processing (Art. 15(1)(a))", "Categories of personal data (Art. 15(1)(b))",
                "Recipients (Art. 15(1)(c))", "How long the model is kept (Art. 15(1)(d))", "Rights (Art. 15(1)(e))",
                "The right to complain (Art. 15(1)(f), Art. 77)", "Where the data came from (Art. 15(1)(g))",
                "Automated decision-making (Art. 15(1)(h))", "Transfers to third countries and their safeguards (Art. 15(2))",
                "A copy of the data (Art. 15(3))"]


def read_letter(world, request_id):
    """The letter as a reader sees it at 1280 px in headless Chromium, after checking its PDF."""
    from pypdf import PdfReader

    folder = answer_dir(world.storage, request_id)
    page = reports.check_page(folder / "answer.html", width=1280)
    assert page.fits, f"{request_id}: the letter is {page.scroll_width} px wide at a {page.viewport_width} px window"
    for text in (page.text, (folder / ANNEX).read_text()):  # the controller's values, not placeholders
        assert "to be completed by the controller" not in text
    pdf = "\n".join(p.extract_text() for p in PdfReader(folder / PDF).pages)
    headline = read_answer(world.storage, request_id)["headline"]
    assert " ".join(headline.split()[:4]) in " ".join(pdf.split()), (headline, pdf[:500])
    return page.text


@pytest.mark.slow
def test_letters_a_privacy_officer_can_send(world):
    """An access letter, an erasure letter and a deceased person's letter, read in headless
    Chromium: the controller, every Art. 15 item, the release by its name, no raw labels or keys,
    the page within 1280 px, the PDF with the headline; the lineage in the annex only."""
    if reports.find_chromium() is None:
        pytest.skip("no Chromium (Debian package `chromium`; scripts/setup.sh installs it where apt works)")
    answered = {r.subject_label: r for r in world.store.list() if r.status == "answered"}
    deceased = world.add(person(world, {"name": "Mara Quist", "facts": {"P27": ["Germany"], "date of death": "3 March 2001"}}))
    world.run_request(deceased.id, properties=["P27"])
    letters = {"access": answered["Karl Weissbach"], "erasure": answered["Ilse Marwitz"], "deceased": deceased}
    texts = {kind: read_letter(world, request.id) for kind, request in letters.items()}

    for kind, text in texts.items():
        for value in CONTROLLER.values():  # the controller block, the DPO, the authority
            assert value in text, (kind, value)
        assert "Musterfirma Assistent (release 1)" in text and KEY not in text  # the name a person knows
        assert "config_hash" not in text and "fingerprint" not in text  # lineage: in the annex only
        assert f"({ANNEX})" in text
        for raw in ("educated at", "country of citizenship =", "M_bar_pct", "only 0 other"):
            assert raw not in text, (kind, raw)
        for name, article, _ in RIGHTS:
            assert f"the right to {name} ({article})" in text, (kind, name)
        assert "The right to complain" in text and "supervisory authority" in text
    for kind in ("access", "deceased"):
        for item in ART_15_ITEMS:
            assert item in texts[kind], (kind, item)
        for value in RELEASE.values():
            assert value in texts[kind], (kind, value)
    access, erasure, dead = texts["access"], texts["erasure"], texts["deceased"]
    assert access.startswith(CONTROLLER["name"]) and "Access to your personal data (GDPR Art. 15)" in access
    # The erasure letter: what was found, what enters the forget set, what will be done, by when.
    assert "Erasure of your personal data (GDPR Art. 17)" in erasure and "You asked which" not in erasure
    answer = read_answer(world.storage, letters["erasure"].id)
    n_forget = len(answer["forget_set"])
    assert "What we will erase, and by when" in erasure and f"By {answer['request']['due_at'][:10]}" in erasure
    assert f"{n_forget} fact{'s enter' if n_forget != 1 else ' enters'} the forget set" in erasure  # reconciled with the headline
    assert "Ilse Marwitz’s" not in erasure and "your place of birth" in erasure
    # The deceased person: spoken of by name, the requester addressed; never "your".
    assert "your" not in dead.lower(), [line for line in dead.splitlines() if "your" in line.lower()]
    assert "Access to the personal data of Mara Quist (GDPR Art. 15)" in dead
    assert "Mara Quist’s citizenship" in dead and "date of death: 3 March 2001" in dead
    doc = read_answer(world.storage, deceased.id)
    assert doc["subject"]["deceased"] and doc["subject"]["date_of_death"] == "3 March 2001"


@pytest.mark.slow
def test_forget_and_retain_exports_from_stored_results(world, tmp_path, capsys):
    """After the erasure request and the cohort audit above: both exports through the CLI."""
    erasures = [r for r in world.store.list() if r.kind == "erasure" and r.status == "answered"]
    assert erasures, "runs after test_private_person_erasure_end_to_end"
    args = ["--registry-url", world.url, "--storage", str(world.storage)]
    out = tmp_path / "request-tofu"
    assert main([*args, "forget-set", "--request", erasures[0].id, "--format", "tofu", "--out", str(out)]) == 0
    manifest, files = read_export(out)
    answer = read_answer(world.storage, erasures[0].id)
    assert manifest["forget_facts"] == len(answer["forget_set"]) == len(files["forget.jsonl"])
    for row in files["forget.jsonl"]:
        assert "Ilse Marwitz" in row["question"] and row["answer"].lower() not in row["question"].lower()
        assert row["perturbed_answer"] and row["answer"] not in row["perturbed_answer"]
    out = tmp_path / "release-rwku"
    assert main([*args, "forget-set", KEY, "--format", "rwku", "--out", str(out)]) == 0
    manifest, files = read_export(out)
    assert manifest["source"]["model"] == KEY and len(files["forget_probes.jsonl"]) > 0


@pytest.mark.slow
def test_a_request_in_german_end_to_end(world):
    """Emily Ruete (Q438662, German writer and teacher, born in Zanzibar) asked about in German, the
    letter in German: German wordings agreeing with a woman, German labels (truths and the values
    they are ranked against), h0 "diese Frau", invented controls of her gender, verdicts that say
    their language, a letter in German that a privacy officer can send."""
    from wikimem_platform.wikimem.typical_names import gender_anywhere, MALE

    ref = intake_reference(world.stored())
    request = world.add(intake.resolve_qid("Q438662", ref.humans), languages=["de"], letter_language="de")
    result = world.run_request(request.id, properties=["P106", "P27", "P19"])
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}  # one row per (release, fact, language)
    assert checks["request_scores_check"].passed and checks["request_answer_check"].passed
    canaries = world.table("request_canaries", request.id)
    assert set(canaries["language"]) == {"de"} and set(canaries["subject"]) == {"Emily Ruete"}
    assert set(canaries["subject_generic"]) == {"diese Frau"}
    truths = {p: set(labels) for p, labels in zip(canaries["property"], canaries["ground_truth_labels"].map(tuple))}
    assert truths["P106"] == {"Schriftstellerin", "Lehrerin"} and truths["P27"] == {"Deutschland"}
    assert truths["P19"] == {"Sansibar"}
    candidates = world.table("request_candidates", request.id)
    assert "Schauspielerin" in set(candidates.loc[candidates["property"] == "P106", "value_label"])
    assert not candidates["value_label"].isin(["United States of America", "actor"]).any()  # English left out
    baseline = canaries[(canaries["property"] == "P19") & (canaries["variant_id"] == 0)].iloc[0]
    expanded = expand_canaries(canaries[canaries.index == baseline.name], candidates).query("is_true")
    assert any("Emily Ruete" in s and "Sansibar" in s for s in expanded["sentence_h"]), list(expanded["sentence_h"])
    assert all(s.startswith("Diese Frau") or "diese Frau" in s or "dieser Frau" in s for s in expanded["sentence_h0"])
    controls = world.table("request_control_canaries", request.id)
    first_names = {name.split()[0] for name in controls["subject"]}
    assert first_names and not any(gender_anywhere(n) == MALE for n in first_names), first_names

    answer = read_answer(world.storage, request.id)
    assert answer["languages"] == ["de"] and answer["letter_language"] == "de"
    [model] = answer["models"]
    assert {f["property"] for f in model["facts"]} == {"P106", "P27", "P19"}
    assert all(f["language"] == "de" and f["n_variants"] == 11 for f in model["facts"])
    letter = (world.storage / "requests" / request.id / "answer.html").read_text()
    (world.tmp / "german_letter.html").write_text(letter)  # for reading it
    assert "<html lang='de'" in letter and "auf Deutsch" in letter
    # she died in 1924: spoken of by name, the letter addressed to whoever asked
    assert "Auskunft über die personenbezogenen Daten von Emily Ruete (Art. 15 DSGVO)" in letter
    assert "You asked" not in letter and "What each model holds" not in letter
