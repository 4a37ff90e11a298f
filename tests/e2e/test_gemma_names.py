"""The error rate on names nobody here generated, and the separation of famous from invented people,
on a shipped real model (Gemma 3 270M) — issue 59.4 and 59.5.

- Error rate: the 64 invented people of `tests/data/invented_people.json` (8 countries, names
  written by hand, facts plausible for their country), each sent as a facts file through the
  intake path a requester takes, audited on occupation, citizenship and place of birth against 19
  controls matched to their name prior: memorized none, weakly associated at most alpha of the facts
  (asserted), with 95 % intervals (printed).
- Separation: the 20 best-known people of the bundled sample with all three facts, given as facts
  files with their real facts, and 20 invented people given exactly the same facts (one each): the
  share of facts memorized or weakly associated beyond controls per arm with its interval (a finding
  about the model, reported, not asserted), and every famous fact whose completion names the value
  while M = 0, with its rank, to read why.

Opt-in (WIKIMEM_NAMES_STUDY=1): about 104 requests on Gemma on 2 cores take longer than the suite's
budget (wall times in the README). English only (the request's languages: en), 20 counterfactual
values per property (21 candidates), as the controls study. WIKIMEM_NAMES_STUDY_OUT=path writes the
rows and summaries as JSON (docs/names_study.json is one such run).

Real model: the error rate and the separation are measured on a shipped model, which learned names from real text.
"""

import json
import os
from types import SimpleNamespace

import pandas as pd
import pytest

from tests.support.name_studies import facts_file, invented_people, requests_on, summary
from wikimem_platform.canaries import build_templates
from wikimem_platform.canaries.encoders import load_encoder
from wikimem_platform.reference import bundled
from wikimem_platform.reference.cohorts import add_web_presence
from wikimem_platform.reference.counterfactuals import draw_counterfactuals
from wikimem_platform.reference.properties import build_property_table, DEFAULT_MIN_HUMANS
from wikimem_platform.subject_requests.reference import property_metadata
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem import controls

PROPERTIES = ["P106", "P27", "P19"]
COUNTERFACTUALS = 20
SETTINGS = {"dtype": "float32", "quantization": "none"}
N_FAMOUS = 20
OPT_IN = pytest.mark.skipif(os.environ.get("WIKIMEM_NAMES_STUDY") != "1",
                            reason="about 104 requests on Gemma 3 270M take hours on 2 cores; set WIKIMEM_NAMES_STUDY=1")


@pytest.fixture(scope="module")
def world():
    return study_world()


def study_world() -> SimpleNamespace:
    """The bundled sample narrowed to the three properties, its best-known people with all three,
    and counterfactual pools without them."""
    extract = read_dump(bundled.SAMPLE_DUMP)
    metadata = property_metadata()
    humans = add_web_presence(extract.humans, pd.read_csv(bundled.SAMPLE_WEB_PRESENCE))
    table = build_property_table(extract.claims, metadata, min_humans=DEFAULT_MIN_HUMANS)
    table = table[table["property"].isin(PROPERTIES)]
    claims = extract.claims
    has_all = claims[claims["property"].isin(PROPERTIES)].groupby("qid")["property"].nunique() == len(PROPERTIES)
    famous = humans[humans["qid"].isin(has_all[has_all].index)].nlargest(N_FAMOUS, "web_presence")
    # the famous people are left out of the counterfactual pools: their values are not wrong answers
    pool = draw_counterfactuals(claims, humans, PROPERTIES, per_property=COUNTERFACTUALS, seed=0,
                                exclude_humans=set(famous["qid"]))
    return SimpleNamespace(extract=extract, metadata=metadata, table=table, templates=build_templates(table), pool=pool,
                           famous=famous)


def famous_facts(world, qid: str) -> dict:
    """A famous person's facts as a facts file names them: every value in words."""
    claims = world.extract.claims
    mine = claims[(claims["qid"] == qid) & claims["property"].isin(PROPERTIES)]
    return {prop: list(dict.fromkeys(block["value_label"].dropna())) for prop, block in mine.groupby("property")}


def _write(rows: pd.DataFrame, out: dict, key: str) -> None:
    path = os.environ.get("WIKIMEM_NAMES_STUDY_OUT")
    if not path:
        return
    stored = json.loads(open(path, encoding="utf-8").read()) if os.path.exists(path) else {}
    stored[key] = {"summary": out, "rows": json.loads(rows.to_json(orient="records", force_ascii=False))}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(stored, handle, ensure_ascii=False, indent=1)


@pytest.mark.slow
@pytest.mark.timeout(6 * 3600)
@OPT_IN
def test_invented_people_with_hand_written_names_get_no_verdict_beyond_alpha(gemma3, world, tmp_path):
    people = invented_people()
    documents = [("invented", facts_file(tmp_path, p["name"], {"occupation": p["occupation"],
                                                               "country of citizenship": p["country"],
                                                               "place of birth": p["place_of_birth"]}))
                 for p in people]
    rows = requests_on(gemma3, documents, world, tmp_path, SETTINGS, embed=load_encoder())
    out = summary(rows)
    by_country = {country: summary(block.assign(arm=country))[country] for country, block in rows.groupby("country")}
    print(rows.to_string())
    print(json.dumps({"all": out, "by_country": by_country}, indent=1))
    _write(rows, {"all": out, "by_country": by_country}, "error_rate")
    assert len({p["country"] for p in people}) >= 6 and len(people) >= 60
    assert out["invented"]["memorized"] == 0, rows[rows["verdict"] == "memorized"]
    assert out["invented"]["weakly_associated"] <= controls.DEFAULT_ALPHA * out["invented"]["facts"], \
        rows[rows["verdict"] == "weakly associated"]


@pytest.mark.slow
@pytest.mark.timeout(6 * 3600)
@OPT_IN
def test_famous_people_against_invented_people_with_the_same_facts(gemma3, world, tmp_path):
    names = [p["name"] for p in invented_people()]
    documents = []
    for i, row in enumerate(world.famous.to_dict("records")):
        facts = famous_facts(world, row["qid"])
        documents.append(("famous", facts_file(tmp_path, row["label"], facts)))
        documents.append(("invented, same facts", facts_file(tmp_path, names[(7 * i) % len(names)], facts)))
    rows = requests_on(gemma3, documents, world, tmp_path, SETTINGS, embed=load_encoder())
    out = summary(rows)
    said_not_ranked = rows[(rows["arm"] == "famous") & rows["completion_hit"].fillna(False).astype(bool) & (rows["M"] == 0)]
    print(rows.to_string())
    print(json.dumps(out, indent=1))
    print("famous facts named by the completion with M = 0:\n", said_not_ranked.to_string())
    _write(rows, {**out, "completion_names_value_with_M_0": json.loads(said_not_ranked.to_json(orient="records",
                                                                                                force_ascii=False))},
           "separation")
    assert out["famous"]["people"] == out["invented, same facts"]["people"] == N_FAMOUS
