"""The error rate on names nobody here generated, on the planted model (issue 59.4, in the suite).

The 64 invented people of `tests/data/invented_people.json` (names written by hand for 8 countries,
not by the controls' generator nor by the planted world's) are each given, as a facts file in
words, the facts of a planted member the model read 4 or 16 times — facts the model knows, but of
someone else. Through the intake path a requester takes, each is read against 19 controls matched
to their name prior (up to 99 for a fact without margin). What the model says of such a person is
what it says of anyone with these facts, so a verdict beyond the controls is a false positive, and
the method promises them at most alpha of the time: memorized and weakly associated together at
most alpha of the facts, and the exact 95 % interval of the memorized share below alpha (with 256
facts that fails from 6 memorized on). Measured on the default seed: 1 memorized (Ulrike
Pfannenschmidt's citizenship: 1 of 79 controls as strong, p = 0.025, adjusted over her 2 compared
facts 0.05) and 2 weakly associated of 256 facts. The planted member themselves is memorized
(`test_request_controls`)."""

from types import SimpleNamespace

import pytest

from tests.support.name_studies import facts_file, invented_people, requests_on, summary
from wikimem_platform.lm.loading import load_model
from wikimem_platform.planted import load_manifest
from wikimem_platform.wikimem import controls
from wikimem_platform.wikimem.controls import p_interval as exact_interval


@pytest.mark.slow
def test_invented_people_given_planted_members_facts_get_no_verdict_beyond_alpha(planted_model, planted_reference,
                                                                                 tmp_path):
    members = [p["qid"] for p in load_manifest(planted_model)["people"] if p["member"] and p["repetitions"] >= 4]
    claims = planted_reference.extract.claims
    covered = set(planted_reference.table["property"])
    documents = []
    for i, person in enumerate(invented_people()):
        own = claims[(claims["qid"] == members[i % len(members)]) & claims["property"].isin(covered)]
        facts = {prop: list(block["value_label"]) for prop, block in own.groupby("property")}
        documents.append(("invented", facts_file(tmp_path, person["name"], facts)))
    world = SimpleNamespace(extract=planted_reference.extract, metadata=planted_reference.metadata,
                            table=planted_reference.table, templates=planted_reference.templates,
                            pool=planted_reference.pool)
    rows = requests_on(load_model(str(planted_model), device="cpu"), documents, world, tmp_path, {"dtype": "float32"},
                       log=lambda m: None)
    out = summary(rows)["invented"]
    print(rows.groupby("verdict").size().to_string(), out, sep="\n")
    assert out["people"] == 64 and out["facts"] >= 150
    assert out["compared"] > 0  # facts the model ranks first somewhere were read against controls
    beyond = rows[rows["verdict"].isin(["memorized", "weakly associated"])]
    assert out["memorized"] + out["weakly_associated"] <= controls.DEFAULT_ALPHA * out["facts"], beyond
    assert exact_interval(out["memorized"], out["facts"])[1] < controls.DEFAULT_ALPHA, beyond
    # a false positive is a chance comparison, never a name the check let through: each beat its controls
    assert (beyond["n_controls"] >= controls.DEFAULT_N_CONTROLS).all() and not beyond["name_suggests"].astype(bool).any()
