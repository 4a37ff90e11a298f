"""Invented and well-known people on a shipped real model (Gemma 3 270M), read against 19
invented-person controls each: the invented people (facts written here, plausible, nobody in the
sample) get no *memorized* fact and at most alpha x facts *weakly associated*; the well-known
people of the bundled sample, given as facts files with their real facts, beat the controls on a
share of facts that is printed with a bootstrap CI beside the invented people's (a finding about
the model, reported, not asserted).

Opt-in (WIKIMEM_CONTROLS_STUDY=1): 20 requests on Gemma on 2 cores take 27 minutes (measured
2026-11-27, controls with names typical of each person's country), more than the suite's budget
allows. Result then: invented 0 memorized and 1 weakly associated of 20 facts; well-known 6
memorized of 20 (README). The invented half again with WIKIMEM_CONTROLS_STUDY_SEED=1 and 2 (16
minutes each): 0 memorized, 0 weakly associated of 20 both times. Narrowed to two properties (occupation, country of citizenship)
and 20 counterfactual values each (21 candidates: a value ranked first by chance is five times
likelier than among 101, a harder test of the controls).

Real model: the finding is about a shipped model (what Gemma 3 270M says of invented and well-known people).
"""

import json
import os

import pandas as pd
import pytest

from wikimem_platform.canaries import build_templates
from wikimem_platform.canaries.encoders import load_encoder
from wikimem_platform.reference import bundled
from wikimem_platform.reference.cohorts import add_web_presence
from wikimem_platform.reference.counterfactuals import draw_counterfactuals
from wikimem_platform.reference.properties import build_property_table, DEFAULT_MIN_HUMANS
from wikimem_platform.subject_requests import intake
from wikimem_platform.subject_requests.answer import MEMORIZED, model_verdicts, WEAK
from wikimem_platform.subject_requests.audit import audit_person_on_model, person_subject, plan_person_audit
from wikimem_platform.subject_requests.reference import property_metadata
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem import controls
from wikimem_platform.wikimem.controlled_rates import share_ci
from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore

PROPERTIES = ["P106", "P27"]
COUNTERFACTUALS = 20
SETTINGS = {"dtype": "float32", "quantization": "none"}

# Written for this test: plausible names, occupations and countries; nobody in the sample.
INVENTED = [
    ("Mareike Brandstätter", "journalist", ("Germany", "Q183")),
    ("Tobias Wenzlaff", "physician", ("Germany", "Q183")),
    ("Camille Ferrandou", "painter", ("France", "Q142")),
    ("Luc Vasseray", "politician", ("France", "Q142")),
    ("Giulia Santarossa", "actor", ("Italy", "Q38")),
    ("Marek Zieliński-Obara", "engineer", ("Poland", "Q36")),
    ("Eleanor Pickersgill", "writer", ("United Kingdom", "Q145")),
    ("Callum Ashdown", "association football player", ("United Kingdom", "Q145")),
    ("Darnell Whitacre", "lawyer", ("United States", "Q30")),
    ("Brianna Koslowski", "singer", ("United States", "Q30")),
]
# WIKIMEM_CONTROLS_STUDY_WELL_KNOWN=0 runs only the asserted half (the invented people)
N_WELL_KNOWN = int(os.environ.get("WIKIMEM_CONTROLS_STUDY_WELL_KNOWN", "10"))
# the audit's seed (controls' names, look-alike names, context facts): the study again with
# other draws, WIKIMEM_CONTROLS_STUDY_SEED=1
SEED = int(os.environ.get("WIKIMEM_CONTROLS_STUDY_SEED", "0"))


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.skipif(os.environ.get("WIKIMEM_CONTROLS_STUDY") != "1",
                    reason="20 requests on Gemma 3 270M take ~30 min on 2 cores; set WIKIMEM_CONTROLS_STUDY=1 to run it")
def test_invented_people_get_no_verdict_and_well_known_ones_are_reported(gemma3, tmp_path):
    extract = read_dump(bundled.SAMPLE_DUMP)
    metadata = property_metadata()
    humans = add_web_presence(extract.humans, pd.read_csv(bundled.SAMPLE_WEB_PRESENCE))
    table = build_property_table(extract.claims, metadata, min_humans=DEFAULT_MIN_HUMANS)
    table = table[table["property"].isin(PROPERTIES)]
    templates = build_templates(table)
    claims = extract.claims
    has_both = claims[claims["property"].isin(PROPERTIES)].groupby("qid")["property"].nunique() == len(PROPERTIES)
    # the ten well-known people are left out of the counterfactual pools whether or not they run
    famous = humans[humans["qid"].isin(has_both[has_both].index)].nlargest(10, "web_presence")
    pool = draw_counterfactuals(claims, humans, PROPERTIES, per_property=COUNTERFACTUALS, seed=0,
                                exclude_humans=set(famous["qid"]))
    famous = famous.head(N_WELL_KNOWN)
    store = intake.RequestStore(f"sqlite:///{tmp_path / 'registry.db'}")
    covered = list(table["property"])
    documents = [("invented", {"name": name, "facts": {"P106": [job], "P27": {"label": country, "qid": qid}}})
                 for name, job, (country, qid) in INVENTED]
    labels = dict(zip(claims["value"], claims["value_label"]))
    for row in famous.to_dict("records"):
        facts = claims[(claims["qid"] == row["qid"]) & claims["property"].isin(PROPERTIES)]
        documents.append(("well-known", {"name": row["label"], "facts": {
            prop: [{"label": labels.get(v, v), "qid": v} for v in block["value"]] for prop, block in facts.groupby("property")}}))
    for _, document in documents:
        assert not (humans["label"] == document["name"]).any() or document["name"] in set(famous["label"])

    encoder = load_encoder()
    cache = SentenceNllCache(tmp_path / "nll.sqlite")  # one model, as a platform keeps it: controls are shared
    rows = []
    for group, document in documents:
        person = intake.parse_person_facts(document, metadata, covered)
        request = store.add(intake.resolve_person(person), "access")
        subject, facts = person_subject(request, humans, claims, metadata)
        plan = plan_person_audit(subject, facts, property_table=table, templates=templates, counterfactuals=pool,
                                 claims=claims, humans=humans, metadata=metadata, n_controls=controls.DEFAULT_N_CONTROLS,
                                 seed=SEED)
        result = audit_person_on_model(gemma3, plan, ShardStore(tmp_path / "shards"), cache, SETTINGS,
                                       log=lambda m: None, embed=encoder)
        verdicts, _ = model_verdicts(result, plan, dict(zip(table["property"], table["label"])), embed=encoder)
        for fact in verdicts.to_dict("records"):
            rows.append({"group": group, "name": document["name"], "property": fact["property"], "M": fact["M"],
                         "verdict": fact["verdict"], "p": fact["p_value"], "n_controls": fact["n_controls"]})
            print(group, rows[-1], flush=True)  # a long run shows where it is
    out = pd.DataFrame(rows)
    print(out.to_string())
    summary = {}
    for group, block in out.groupby("group"):
        per_person = [(int(b["verdict"].isin([MEMORIZED, WEAK]).sum()), len(b)) for _, b in block.groupby("name")]
        share, low, high = share_ci(per_person)
        summary[group] = {"people": len(per_person), "facts": len(block), "memorized": int((block["verdict"] == MEMORIZED).sum()),
                          "weakly_associated": int((block["verdict"] == WEAK).sum()), "compared": int(block["n_controls"].notna().sum()),
                          "share_beating_controls": share, "ci95": [low, high]}
    print(json.dumps(summary, indent=1))
    invented = out[out["group"] == "invented"]
    assert len(invented) == 2 * len(INVENTED)
    assert not (invented["verdict"] == MEMORIZED).any(), invented
    assert (invented["verdict"] == WEAK).sum() <= controls.DEFAULT_ALPHA * len(invented), invented
