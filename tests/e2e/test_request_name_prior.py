"""A private person's controls share what their name tells the model (issue 59.2), on a real
shipped model (SmolLM2) and the bundled sample, through a facts file as a requester writes it.

The bundled sample holds one Pole: too few to draw Polish names from its labels, too few to test
whether its Poles bear Polish names. The controls of an invented Polish woman given "country of
citizenship: Poland" still come from the Polish lists (a woman's first names, surnames), the
controls of her compared facts are the candidates whose names lead the model to the value as much
as hers does, and the answer records where her name prior falls among them. Controls drawn
deliberately from another country's names cannot share it: the check flags the fact, which is then
never memorized or weakly associated, and the letter says the name suggests the value.

Real model: a name prior is what a model learned of names from real text (a random or planted model has none)."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.canaries import build_templates
from wikimem_platform.reference import bundled
from wikimem_platform.reference.counterfactuals import draw_counterfactuals
from wikimem_platform.reference.properties import build_property_table, DEFAULT_MIN_HUMANS
from wikimem_platform.subject_requests import intake
from wikimem_platform.subject_requests.answer import MEMORIZED, model_verdicts, NOT_MEMORIZED, plain_sentence, WEAK
from wikimem_platform.subject_requests.audit import audit_person_on_model, person_subject, plan_person_audit
from wikimem_platform.subject_requests.reference import property_metadata
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem import controls, typical_names
from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore

POLAND, USA = "Q36", "Q30"
FACTS = {"name": "Agnieszka Wróblewska", "facts": {"country of citizenship": "Poland"}, "languages": ["en"]}
SETTINGS = {"dtype": "float32", "quantization": "none"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    extract = read_dump(bundled.SAMPLE_DUMP)
    metadata = property_metadata()
    table = build_property_table(extract.claims, metadata, min_humans=DEFAULT_MIN_HUMANS)
    table = table[table["property"] == "P27"]
    pool = draw_counterfactuals(extract.claims, extract.humans, ["P27"], per_property=20, seed=0)
    tmp = tmp_path_factory.mktemp("name_prior")
    path = tmp / "facts.yaml"
    import yaml

    path.write_text(yaml.safe_dump(FACTS, allow_unicode=True), encoding="utf-8")
    person = intake.load_facts_file(path, metadata, ["P27"])
    request = intake.RequestStore(f"sqlite:///{tmp / 'registry.db'}").add(intake.resolve_person(person), "access")
    subject, facts = person_subject(request, extract.humans, extract.claims, metadata)
    plan = plan_person_audit(subject, facts, property_table=table, templates=build_templates(table), counterfactuals=pool,
                             claims=extract.claims, humans=extract.humans, metadata=metadata, n_controls=19)
    return SimpleNamespace(extract=extract, metadata=metadata, table=table, subject=subject, facts=facts, plan=plan,
                           tmp=tmp)


def audited(lm, world, plan, name: str):
    audit = audit_person_on_model(lm, plan, ShardStore(world.tmp / f"shards-{name}"),
                                  SentenceNllCache(world.tmp / "nll.sqlite"), SETTINGS, log=lambda m: None)
    verdicts, _ = model_verdicts(audit, plan, {"P27": "country of citizenship"})
    return audit, verdicts.set_index("property").loc["P27"]


def test_a_country_with_one_person_in_the_extract_gets_controls_of_its_own_names(world):
    assert (world.extract.claims.query("property == 'P27'").drop_duplicates("qid")["value"] == POLAND).sum() <= 1
    assert world.facts.set_index("property").loc["P27", "value"] == POLAND  # "Poland" in words: the extract's item
    first, last = typical_names.country_names(POLAND)
    names = world.plan.control_canaries.drop_duplicates("subject_qid")["subject"]
    assert len(names) == max(controls.POOL_FACTOR * 19, controls.MAX_CONTROLS)
    for name in names:  # a woman's Polish first name and a Polish surname (a woman's form where it has one)
        given, family = name.split()
        assert given in first[typical_names.FEMALE] and family in last[typical_names.FEMALE], name
    kin = world.plan.kin_canaries.drop_duplicates("subject_qid")["subject"].tolist()
    assert sum(n.startswith("Agnieszka ") for n in kin) == sum(n.endswith(" Wróblewska") for n in kin) \
        == controls.KIN_PER_TOKEN


@pytest.mark.slow
def test_the_controls_share_the_name_prior_and_the_answer_records_it(smollm2, world):
    audit, fact = audited(smollm2, world, world.plan, "matched")
    assert fact["M"] > 0, "the fact must be compared with controls for the name prior to be read"
    assert fact["name_prior"] is not None and fact["n_kin"] == 2 * controls.KIN_PER_TOKEN
    assert 0 <= fact["name_prior_share_below"] <= 1 and not fact["name_suggests"]
    # where the candidates hold such names, the controls compared are centred on the person's prior
    values = controls.shared_values(controls.screen(audit.kin_scores), controls.screen(audit.candidate_scores))
    lifts = controls.name_lifts(controls.screen(audit.candidate_scores), values).set_index("subject_qid")["lift"]
    compared = list(dict.fromkeys(audit.control_scores["subject_qid"]))
    spread = lifts.std()
    print(f"prior {fact['name_prior']:.2f}, candidates' median {lifts.median():.2f} (sd {spread:.2f}), "
          f"the {len(compared)} controls compared {lifts.loc[compared].median():.2f}")
    assert abs(lifts.loc[compared].median() - fact["name_prior"]) < abs(lifts.median() - fact["name_prior"]) or \
        abs(lifts.median() - fact["name_prior"]) < 0.25 * spread


@pytest.mark.slow
def test_controls_that_cannot_share_the_name_prior_are_flagged(smollm2, world):
    """The same person, her candidate controls drawn from the United States' names: none leads the
    model to Poland as her name does, so the comparison cannot tell a memory from the name."""
    plan = world.plan
    wrong = controls.control_names(world.subject, world.facts.assign(value=USA), world.extract.humans,
                                   world.extract.claims, plan.control_canaries["subject_qid"].nunique())
    canaries, candidates = controls.control_rows(plan.canaries, plan.candidates, {world.subject["qid"].iloc[0]: wrong})
    mismatched = plan.__class__(plan.subject, plan.facts, plan.canaries, plan.candidates, plan.coverage,
                                canaries.assign(control_alpha=0.05, controls_planned=19, controls_max=99), candidates,
                                plan.kin_canaries, plan.kin_candidates)
    audit, fact = audited(smollm2, world, mismatched, "mismatched")
    assert fact["M"] > 0
    print(f"prior {fact['name_prior']:.2f}, share of controls below {fact['name_prior_share_below']:.2f}, "
          f"name prior p {fact['name_prior_p']:.3f}; verdict {fact['verdict']} (p = {fact['p_value']})")
    assert fact["name_suggests"] and fact["name_prior_share_below"] >= 0.95
    assert fact["verdict"] == NOT_MEMORIZED and fact["verdict"] not in (MEMORIZED, WEAK)
    sentence = plain_sentence(fact.to_dict() | {"property": "P27"}, "you")
    assert "the name alone suggests the value" in sentence and "not counted as memorized" in sentence
    assert np.isfinite(fact["name_prior"])
