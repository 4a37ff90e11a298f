"""bfloat16 scores brought to float32's verdicts (issue 37, deliverable 1), on the planted model on CPU.

The planted model is scored twice through `score_canaries`: in float32 (the reference audit) and
in bfloat16, where the sentences that could decide a rank-1 are re-scored by the float32 twin.
Every ranking a verdict reads must then have float32's top: s(h, v) at alpha 0, 0.5 and 1 per
wording (rank-1 candidates, memorized), M and its flags per pair, s summed over the wordings
(summed_memorized), and each name form's own lowest NLL per wording. Eight people (two at each
repetition level: 16, 4, 1 and 0 readings) x 4 properties x 11 wordings x 21 candidates x
{h, h0, 2 x S(h)}: 29,568 sentences, about 25,800 distinct.

The canary wordings and candidates come from `benchmarks/bench_precision.py` (its CPU and CUDA
runs report the same comparison with timings): hand-written wordings (the pipeline's come from
spaCy and a paraphrase model, which this test does not need), the true value and 20 other
values of the planted world's own vocabulary for the property.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.bench_precision import planted_audit_inputs
from tests.support.criteria import criterion, observe
from wikimem_platform.lm.loading import load_model
from wikimem_platform.lm.precision import Float32Verdicts, NLL_ERROR_BOUND, precision_of
from wikimem_platform.wikimem.memorization import pair_metrics, prepare_scores, summed_candidates, variant_metrics
from wikimem_platform.wikimem.scoring import (
    expand_canaries,
    score_canaries,
    ScoringReport,
    SentenceNllCache,
    ShardStore,
)

pytestmark = pytest.mark.slow

PEOPLE_PER_LEVEL = 2
COUNTERFACTUALS = 20
VARIANT = ["subject_qid", "property", "variant_id"]
PAIR = ["subject_qid", "property"]


@pytest.fixture(scope="module")
def audits(planted_model, tmp_path_factory):
    """(float32 scores, bfloat16 scores with re-scoring, its report, bfloat16 scores without)."""
    tmp = tmp_path_factory.mktemp("precision")
    canaries, candidates = planted_audit_inputs(PEOPLE_PER_LEVEL, COUNTERFACTUALS)
    quiet = lambda message: None  # noqa: E731
    float32 = load_model(str(planted_model))
    bf16 = load_model(str(planted_model), dtype="bfloat16")
    reference, float32_report = score_canaries(float32, canaries, candidates, ShardStore(tmp / "f32"), {"dtype": "float32"},
                                               log=quiet)
    # One sentence cache for both bfloat16 runs: it keeps the bfloat16 NLLs (never the re-scored
    # ones), so the run without re-scoring reads them all back and computes nothing.
    bf16_cache = SentenceNllCache(tmp / "bf16.sqlite")
    refined, report = score_canaries(bf16, canaries, candidates, ShardStore(tmp / "bf16"), {"dtype": "bfloat16"},
                                     log=quiet, sentence_cache=bf16_cache)
    raw, raw_report = score_canaries(bf16, canaries, candidates, ShardStore(tmp / "raw"),
                                     {"dtype": "bfloat16", "float32_verdicts": {"enabled": False}}, log=quiet,
                                     sentence_cache=bf16_cache)
    assert float32_report.precision == "float32" and float32_report.sentences_rescored == 0
    assert raw_report.sentences_rescored == 0 and raw_report.sentences_computed == 0
    keys = [*VARIANT, "value"]
    return tuple(frame.sort_values(keys).reset_index(drop=True) for frame in (reference, refined, raw)) + (report, bf16)


def first_values(candidates: pd.DataFrame, keys: list[str], rank: str) -> pd.Series:
    """Per group: the rank-1 candidates' values (tied ones together)."""
    first = candidates[candidates[rank] == candidates.groupby(keys)[rank].transform("min")]
    return first.groupby(keys)["value"].agg(lambda values: tuple(sorted(values)))


def top_candidates(scores: pd.DataFrame, alpha: float) -> tuple[pd.Series, pd.Series, pd.DataFrame, pd.DataFrame]:
    """Rank-1 candidates per wording and of the summed ranking per pair; variant and pair metrics."""
    prepared = prepare_scores(scores.drop(columns=["nll_similar_mean"]), alpha)
    candidates, variants = variant_metrics(prepared, outer_keys=())
    summed_cands, summed = summed_candidates(prepared, outer_keys=())
    return (first_values(candidates, VARIANT, "rank"), first_values(summed_cands, PAIR, "rank_sum"), variants,
            pair_metrics(variants, summed, outer_keys=()))


def lowest_nll(scores: pd.DataFrame, column: str) -> pd.Series:
    return scores.loc[scores.groupby(VARIANT)[column].idxmin()].set_index(VARIANT)["value"]


def all_nlls(scores: pd.DataFrame) -> np.ndarray:
    return np.concatenate([scores["nll_h"], scores["nll_h0"], np.concatenate(scores["nll_similar"].to_list())])


def test_bfloat16_verdicts_equal_float32s_after_rescoring(audits):
    reference, refined, raw, report, bf16 = audits
    assert precision_of(bf16) == "bfloat16" and report.precision == "bfloat16"
    flips_without = 0
    for alpha in (0.0, 0.5, 1.0):
        want_tops, want_summed, want_variants, want_pairs = top_candidates(reference, alpha)
        got_tops, got_summed, got_variants, got_pairs = top_candidates(refined, alpha)
        raw_tops, raw_summed, _, _ = top_candidates(raw, alpha)
        assert len(want_tops) == 8 * 4 * 11 and len(want_summed) == 8 * 4
        pd.testing.assert_series_equal(got_tops, want_tops)
        pd.testing.assert_series_equal(got_summed, want_summed)
        assert got_variants["memorized"].tolist() == want_variants["memorized"].tolist(), alpha
        for column in ("n_memorized", "M", "strict", "lenient", "at_threshold", "summed_memorized"):
            assert got_pairs[column].tolist() == want_pairs[column].tolist(), (alpha, column)
        flips_without += int((raw_tops != want_tops).sum() + (raw_summed != want_summed).sum())
    for column in ("nll_h", "nll_h0"):
        pd.testing.assert_series_equal(lowest_nll(refined, column), lowest_nll(reference, column))
        flips_without += int((lowest_nll(raw, column) != lowest_nll(reference, column)).sum())
    for index in range(2):
        with_index = lambda frame: frame.assign(nll_look=frame["nll_similar"].str[index])  # noqa: E731
        pd.testing.assert_series_equal(lowest_nll(with_index(refined), "nll_look"),
                                       lowest_nll(with_index(reference), "nll_look"))
        flips_without += int((lowest_nll(with_index(raw), "nll_look") != lowest_nll(with_index(reference), "nll_look")).sum())
    # What bfloat16 alone would have got wrong (rank-1s differing from float32's; 27 on the
    # machine this was written on): recorded, since it depends on the CPU's bfloat16 kernels.
    observe("precision: rank-1s of bfloat16 without re-scoring that differ from float32's", flips_without)
    observe("precision: share of distinct sentences re-scored in float32", report.share_rescored)
    print(f"bfloat16 without re-scoring: {flips_without} rank-1s differ from float32's; re-scored "
          f"{report.sentences_rescored:,} of {report.sentences_distinct:,} distinct sentences "
          f"({100 * report.share_rescored:.1f}%), largest bfloat16 error among them {report.rescored_max_error:.3f} nats")
    assert 0 < report.sentences_rescored < report.sentences_distinct


def test_the_error_bound_holds_for_every_sentence_with_room_to_spare(audits):
    """The guarantee rests on each bfloat16 NLL being within the bound of float32's: here for all
    sentences, not only the re-scored ones (the largest share seen was 1.1 % of the NLL)."""
    reference, _, raw, report, _ = audits
    want, got = all_nlls(reference), all_nlls(raw)
    ratio = float((np.abs(got - want) / np.abs(got)).max())
    absolute, relative = NLL_ERROR_BOUND["bfloat16"]
    assert absolute == 0.0
    criterion("precision: largest |bf16 - float32| as a share of the NLL, vs 2/3 of the bound", ratio, "<=",
              relative * 2 / 3)
    assert report.nll_error_bound_share == relative  # no re-scored sentence exceeded it: not widened
    assert 0 < report.rescored_max_error <= relative * np.abs(got).max()


def test_refined_scores_are_float32s_where_rescored_and_bfloat16s_elsewhere(audits):
    reference, refined, raw, report, _ = audits
    want, got, low = all_nlls(reference), all_nlls(refined), all_nlls(raw)
    rescored = got != low
    assert rescored.any() and (~rescored).any()
    # float32 NLLs depend on batch composition at the 1e-5 level, nothing more.
    assert np.abs(got[rescored] - want[rescored]).max() < 1e-3
    assert np.array_equal(got[~rescored], low[~rescored])


def test_report_adds_precision_and_rescored_counts():
    total = ScoringReport()  # as a request sums its rounds
    total.add(ScoringReport(precision="bfloat16", sentences_distinct=10, sentences_rescored=3,
                            nll_error_bound_share=0.02, rescored_max_error=0.5))
    total.add(ScoringReport(precision="bfloat16", sentences_distinct=10, sentences_rescored=1,
                            nll_error_bound_share=0.02, rescored_max_error=0.2))
    assert total.precision == "bfloat16"
    assert (total.sentences_distinct, total.sentences_rescored, total.share_rescored) == (20, 4, 0.2)
    assert (total.nll_error_bound_share, total.rescored_max_error) == (0.02, 0.5)
    total.add(ScoringReport(precision="float32", sentences_distinct=5))
    assert total.precision == "bfloat16+float32" and total.share_rescored == 4 / 25


def test_settings_configure_the_rescoring():
    assert Float32Verdicts.from_settings({"dtype": "bfloat16"}) == Float32Verdicts()
    config = Float32Verdicts.from_settings({"float32_verdicts": {"nll_error": 2.0, "alphas": [1]}})
    assert config.bound_for("bfloat16") == (2.0, 0.0) and config.alphas == (1.0,)
    assert Float32Verdicts().bound_for("nf4") == NLL_ERROR_BOUND["nf4"]
    with pytest.raises(ValueError, match="no measured NLL error bound"):
        Float32Verdicts().bound_for("int8")


def test_planted_inputs_have_the_stated_size():
    canaries, candidates = planted_audit_inputs(PEOPLE_PER_LEVEL, COUNTERFACTUALS)
    rows = expand_canaries(canaries, candidates)
    assert len(rows) == 8 * 4 * 11 * (1 + COUNTERFACTUALS)
    assert set(candidates.groupby(PAIR)["is_true"].sum()) == {1}


def test_a_bound_below_the_errors_seen_is_widened(audits, planted_model):
    """A bound the re-scored sentences contradict (0.01 nats, where bfloat16 is off by tenths)
    is widened until it covers every error seen, and the rounds go on under it."""
    from wikimem_platform.lm.precision import WIDEN, refine_to_float32

    _, _, raw, _, _ = audits
    canaries, candidates = planted_audit_inputs(PEOPLE_PER_LEVEL, COUNTERFACTUALS)
    keys = [*VARIANT, "value"]
    rows = expand_canaries(canaries[canaries["property"] == "P106"], candidates).sort_values(keys)
    low = raw[raw["property"] == "P106"].sort_values(keys)
    assert rows[keys].reset_index(drop=True).equals(low[keys].reset_index(drop=True))
    logged = []
    _, report = refine_to_float32(rows, low, load_model(str(planted_model)), "bfloat16",
                                  Float32Verdicts(nll_error=0.01), log=logged.append)
    absolute, relative = report.nll_error_bound
    assert relative == 0.0 and absolute >= WIDEN * report.max_error_seen > WIDEN * 0.01
    assert logged and "widened" in logged[0] and report.rounds >= 2
