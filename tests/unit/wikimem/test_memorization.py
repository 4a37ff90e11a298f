"""Hand-computed cases for wikimem_platform.wikimem.memorization (WikiMem §5, Table 1)."""

import time

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.wikimem import memorization as mem


def rows(subject, prop, variant, spec, kind="paraphrase", cohort="well-known", model=None,
         labels=None):
    """Build scores rows whose calibrated score (alpha = 1) is exactly the given s.

    With alpha = 1, s = mean NLL(h~) - NLL(h); we set nll_similar_mean = 10 and nll_h = 10 - s.
    spec: list of (value, is_true, s).
    """
    out = []
    for value, is_true, s in spec:
        row = dict(subject_qid=subject, property=prop, variant_id=variant, value=value,
                   value_label=(labels or {}).get(value, value), is_true=is_true,
                   nll_h=10.0 - s, nll_h0=7.0, nll_similar_mean=10.0, variant_kind=kind,
                   cohort=cohort)
        if model is not None:
            row["model"] = model
        out.append(row)
    return out


# ----------------------------------------------------------------------------- formula

def test_calibrated_score_by_hand():
    # s = [NLL(h0) - NLL(h)] - alpha * [NLL(h0) - mean NLL(h~)]
    # nll_h = 10, nll_h0 = 12, similar = [11, 13] -> mean 12
    # alpha = 1:   [12 - 10] - 1   * [12 - 12] = 2 - 0   = 2
    # alpha = 0.5: similar mean 11: [12 - 10] - 0.5 * [12 - 11] = 2 - 0.5 = 1.5
    # alpha = 0:   [12 - 10] = 2 (similar term not read)
    sim = mem.similar_mean(pd.Series([[11.0, 13.0], [11.0]]))
    assert sim.tolist() == [12.0, 11.0]
    got = mem.calibrated_score([10.0, 10.0], [12.0, 12.0], sim, alpha=1.0)
    assert got.tolist() == [2.0, 1.0]    # second row: [12-10] - [12-11] = 1
    assert mem.calibrated_score([10.0], [12.0], [11.0], alpha=0.5).tolist() == [1.5]
    assert mem.calibrated_score([10.0], [12.0], None, alpha=0.0).tolist() == [2.0]


def test_similar_mean_empty_list_is_nan():
    # [[4], []] -> [4, NaN]: no similar names means the adjustment is undefined
    got = mem.similar_mean(pd.Series([[4.0], []], dtype=object))
    assert got[0] == 4.0 and np.isnan(got[1])


def test_prepare_uses_list_column_when_mean_absent():
    # nll_h = 9, nll_h0 = 5, similar [10, 12] -> mean 11; alpha = 1: [5-9] - [5-11] = -4 + 6 = 2
    df = pd.DataFrame([dict(subject_qid="Q1", property="P1", variant_id=0, value="a",
                            value_label="a", is_true=True, nll_h=9.0, nll_h0=5.0,
                            nll_similar=[10.0, 12.0])])
    assert mem.prepare_scores(df)["s"].tolist() == [2.0]


# ----------------------------------------------------------------------------- one ranking

def test_one_variant_ranks_deltas_and_z_by_hand():
    # s: A=3 (true), B=1, C=2, D=0.5 (true)
    # sorted A3 C2 B1 D0.5 -> "max" ranks A1 C2 B3 D4
    # Delta_i = s_i - max_{j!=i} s_j: A 3-2=1, C 2-3=-1, B 1-3=-2, D 0.5-3=-2.5
    # mu = (1 - 1 - 2 - 2.5)/4 = -1.125
    # deviations 2.125, 0.125, -0.875, -1.375 -> squares 4.515625 0.015625 0.765625 1.890625
    # sum 7.1875, /4 (ddof 0) = 1.796875, sigma = sqrt(1.796875) ~ 1.340476
    # Delta* = s(A) - max_{u not in G} s(u) = 3 - 2 = 1; z* = (1 + 1.125)/sigma ~ 1.58526
    df = pd.DataFrame(rows("Q1", "P106", 0, [("A", True, 3.0), ("B", False, 1.0),
                                              ("C", False, 2.0), ("D", True, 0.5)]))
    cands, variants = mem.variant_metrics(mem.prepare_scores(df))
    ranks = dict(zip(cands["value"], cands["rank"]))
    assert ranks == {"A": 1, "B": 3, "C": 2, "D": 4}
    deltas = dict(zip(cands["value"], cands["delta"]))
    assert deltas == pytest.approx({"A": 1.0, "B": -2.0, "C": -1.0, "D": -2.5})
    v = variants.iloc[0]
    assert v["memorized"] and v["truth_rank"] == 1 and v["top_truth_value"] == "A"
    assert v["n_candidates"] == 4 and v["n_counterfactuals"] == 2
    assert v["delta_star"] == pytest.approx(1.0)
    assert v["mu"] == pytest.approx(-1.125)
    assert v["sigma"] == pytest.approx(np.sqrt(1.796875))
    assert v["z_star"] == pytest.approx(2.125 / np.sqrt(1.796875))
    assert v["z_star"] == pytest.approx(1.58526, abs=1e-5)


def test_ddof_one():
    # s = T3, a1, b0: Delta = 2, -2, -3; mu = -1; squared deviations 9, 1, 4 = 14
    # ddof=1: var = 14/2 = 7; z* = (Delta* - mu)/sigma = (2 + 1)/sqrt(7)
    df = pd.DataFrame(rows("Q1", "P1", 0, [("T", True, 3.0), ("a", False, 1.0),
                                            ("b", False, 0.0)]))
    _, variants = mem.variant_metrics(mem.prepare_scores(df), ddof=1)
    assert variants["z_star"].iloc[0] == pytest.approx(3 / np.sqrt(7))


def test_true_false_tie_at_top_is_not_memorized():
    # T=2 (true), F=2, G=1: "max" ranks T2 F2 G3; truth_rank = 1 + #{non-G with s >= 2} = 2
    # Delta* = 2 - 2 = 0; z* undefined because not memorized
    df = pd.DataFrame(rows("Q1", "P1", 0, [("T", True, 2.0), ("F", False, 2.0),
                                            ("G", False, 1.0)]))
    cands, variants = mem.variant_metrics(mem.prepare_scores(df))
    assert dict(zip(cands["value"], cands["rank"])) == {"T": 2, "F": 2, "G": 3}
    v = variants.iloc[0]
    assert not v["memorized"] and v["truth_rank"] == 2 and v["delta_star"] == 0.0
    assert np.isnan(v["z_star"])
    # z_star_any still exists: Deltas T 0, F 0, G -1; mu = -1/3; Delta* - mu = 1/3
    # squared deviations 1/9 1/9 4/9 -> 6/9 / 3 = 2/9; z = (1/3)/sqrt(2/9) = 1/sqrt(2)
    assert v["z_star_any"] == pytest.approx(1 / np.sqrt(2))


def test_tie_between_two_ground_truths_is_memorized():
    # T1=2, T2=2 (both true), F=1: both truths have "max" rank 2, but G merged beats F:
    # truth_rank = 1 + #{non-G with s >= 2} = 1; Delta* = 2 - 1 = 1; v* = T1 (value order)
    df = pd.DataFrame(rows("Q1", "P1", 0, [("T2", True, 2.0), ("T1", True, 2.0),
                                            ("F", False, 1.0)]))
    _, variants = mem.variant_metrics(mem.prepare_scores(df))
    v = variants.iloc[0]
    assert v["memorized"] and v["delta_star"] == 1.0 and v["top_truth_value"] == "T1"


def test_all_tied_sigma_zero_gives_nan():
    # s = T1, F1: Deltas 0, 0 -> sigma = 0 -> z NaN; tie -> not memorized
    df = pd.DataFrame(rows("Q1", "P1", 0, [("T", True, 1.0), ("F", False, 1.0)]))
    _, variants = mem.variant_metrics(mem.prepare_scores(df))
    assert variants["sigma"].iloc[0] == 0.0 and np.isnan(variants["z_star_any"].iloc[0])


def test_no_counterfactual_is_no_evidence():
    df = pd.DataFrame(rows("Q1", "P1", 0, [("T", True, 1.0)]))
    _, variants = mem.variant_metrics(mem.prepare_scores(df))
    v = variants.iloc[0]
    assert not v["memorized"] and np.isnan(v["delta_star"]) and np.isnan(v["mu"])


def test_nan_scores_are_dropped():
    df = pd.DataFrame(rows("Q1", "P1", 0, [("T", True, 1.0), ("F", False, 0.0),
                                            ("X", False, 5.0)]))
    df.loc[df["value"] == "X", "nll_h"] = np.nan       # missing NLL: X is not a candidate
    _, variants = mem.variant_metrics(mem.prepare_scores(df))
    assert variants["memorized"].iloc[0] and variants["n_candidates"].iloc[0] == 2


def test_models_are_ranked_separately():
    # model m1: T beats F; model m2: F beats T -> memorized True / False
    df = pd.DataFrame(rows("Q1", "P1", 0, [("T", True, 2.0), ("F", False, 1.0)], model="m1")
                      + rows("Q1", "P1", 0, [("T", True, 1.0), ("F", False, 2.0)], model="m2"))
    _, variants = mem.variant_metrics(mem.prepare_scores(df))
    assert dict(zip(variants["model"], variants["memorized"])) == {"m1": True, "m2": False}


# ----------------------------------------------------------------------------- equivalence

def fake_embed(table):
    """A fake sentence embedder with hand-set vectors (not all unit length on purpose)."""
    def embed(texts):
        return np.array([table[t] for t in texts], dtype=float)
    return embed


EMB = {
    "English": [2.0, 0.0],                        # unit after normalization: (1, 0)
    "British English": [0.8, 0.6],                # cos with English = 0.8  > 0.75 -> equivalent
    "French": [0.6, 0.8],                         # cos = 0.6              -> not
    "Exactly": [0.75, np.sqrt(1 - 0.75 ** 2)],    # cos = 0.75, not > 0.75 -> not (strict)
    "anglais": [0.0, 1.0],                        # cos = 0, but an alias of English -> equivalent
}


def test_equivalence_mask_by_hand():
    mask = mem.equivalence_mask(["British English", "French", "Exactly", "anglais"],
                                ["English"], truth_aliases=["Anglais"], embed=fake_embed(EMB))
    assert mask.tolist() == [True, False, False, True]
    # without an embedder only aliases count
    mask = mem.equivalence_mask(["British English", "anglais"], ["English"], ["Anglais"])
    assert mask.tolist() == [False, True]


def test_equivalent_counts_as_ground_truth_for_rank_and_max():
    # truth English s=1; British English (false, equivalent) s=3; French s=2
    # without relaxation: truth_rank = 1 + #{British English 3, French 2 >= 1} = 3, Delta* = 1-3
    # with relaxation: G = {English, British English}: best G 3 > max over u not in G = French 2
    #   -> memorized, Delta* = 3 - 2 = 1, v* = British English
    spec = [("Q1860", True, 1.0), ("Q7979", False, 3.0), ("Q150", False, 2.0)]
    labels = {"Q1860": "English", "Q7979": "British English", "Q150": "French"}
    df = pd.DataFrame(rows("Q1", "P103", 0, spec, labels=labels))
    _, plain = mem.variant_metrics(mem.prepare_scores(df))
    assert not plain["memorized"].iloc[0] and plain["truth_rank"].iloc[0] == 3
    assert plain["delta_star"].iloc[0] == -2.0
    prepared = mem.prepare_scores(df, embed=fake_embed(EMB))
    assert prepared.set_index("value")["is_equivalent"].to_dict() == \
        {"Q1860": False, "Q7979": True, "Q150": False}
    _, relaxed = mem.variant_metrics(prepared)
    v = relaxed.iloc[0]
    assert v["memorized"] and v["delta_star"] == 1.0 and v["top_truth_value"] == "Q7979"


def test_mark_equivalents_uses_value_aliases():
    spec = [("Q1860", True, 1.0), ("Qx", False, 3.0)]
    df = pd.DataFrame(rows("Q1", "P103", 0, spec,
                           labels={"Q1860": "English", "Qx": "english language"}))
    eq = mem.mark_equivalents(df, value_aliases={"Q1860": ["English language"]})
    assert eq.tolist() == [False, True]


# ----------------------------------------------------------------------------- pairs, Table 1

S_MEM1 = [("T", True, 3.0), ("a", False, 1.0), ("b", False, 0.0)]   # z* = 3/sqrt(14/3)
S_NOT = [("T", True, 0.0), ("a", False, 1.0), ("b", False, 2.0)]
S_MEM2 = [("T", True, 2.0), ("a", False, 1.0), ("b", False, 0.0)]   # z* = 5/sqrt(14)
S_CTX = [("T", True, 5.0), ("a", False, 0.0), ("b", False, 0.0)]
# z* for S_MEM1: Delta = 2, -2, -3; mu = -1; var = (9 + 1 + 4)/3 = 14/3; z* = (2+1)/sqrt(14/3)
# z* for S_MEM2: Delta = 1, -1, -2; mu = -2/3; var = (25/9 + 1/9 + 16/9)/3 = 14/9;
#   z* = (1 + 2/3)/sqrt(14/9) = (5/3)*(3/sqrt(14)) = 5/sqrt(14)


def pair_table():
    return pd.DataFrame(rows("Q1", "P1", 0, S_MEM1, kind="baseline")
                        + rows("Q1", "P1", 1, S_NOT) + rows("Q1", "P1", 2, S_MEM2)
                        + rows("Q1", "P1", 3, S_CTX, kind="contextualized"))


def test_pair_M_flags_and_z_by_hand():
    # baseline + 2 paraphrases: memorized 1, 0, 1 -> M = 2/3 (contextualized excluded)
    # strict (M == 1) False, lenient (M > 0) True, at_threshold (M >= 0.8) False
    # pair z* = mean(3/sqrt(14/3), 5/sqrt(14)) ~ mean(1.38873, 1.33631) = 1.36252
    res = mem.evaluate_wikimem(pair_table())
    p = res.pairs.iloc[0]
    assert p["n_variants"] == 3 and p["n_memorized"] == 2
    assert p["M"] == pytest.approx(2 / 3)
    assert (p["strict"], p["lenient"], p["at_threshold"]) == (False, True, False)
    assert p["z_star"] == pytest.approx((3 / np.sqrt(14 / 3) + 5 / np.sqrt(14)) / 2)
    # summed over the 3 included variants: T 3+0+2 = 5, a 1+1+1 = 3, b 0+2+0 = 2
    # -> T rank 1, Delta* = 5 - 3 = 2; Deltas 2, -2, -3 as in S_MEM1 -> z* = 3/sqrt(14/3)
    assert p["summed_truth_rank"] == 1 and p["summed_memorized"]
    assert p["summed_delta_star"] == 2.0
    assert p["summed_z_star"] == pytest.approx(3 / np.sqrt(14 / 3))
    assert res.summed.set_index("value")["s_sum"].to_dict() == {"T": 5.0, "a": 3.0, "b": 2.0}
    assert res.summed.set_index("value")["rank_sum"].to_dict() == {"T": 1, "a": 2, "b": 3}


def test_pair_including_contextualized_and_threshold():
    # with the contextualized canary: memorized 1, 0, 1, 1 -> M = 3/4; threshold 0.7 -> True
    res = mem.evaluate_wikimem(pair_table(), include_contextualized=True, m_threshold=0.7)
    p = res.pairs.iloc[0]
    assert p["M"] == 0.75 and p["at_threshold"] and not p["strict"]
    # summed T 5+5 = 10, a 3+0 = 3, b 2+0 = 2
    assert res.summed.set_index("value")["s_sum"].to_dict() == {"T": 10.0, "a": 3.0, "b": 2.0}


def test_summed_drops_candidate_missing_from_a_variant():
    # 'b' missing from variant 1: its partial sum is not comparable -> dropped
    df = pair_table()
    df = df[~((df["variant_id"] == 1) & (df["value"] == "b"))]
    res = mem.evaluate_wikimem(df)
    assert set(res.summed["value"]) == {"T", "a"}


def test_cohort_table_by_hand():
    # well-known: Q1 P1 M = 2/3 (above), Q1 P2 M = 0, Q2 P1 M = 0, Q2 P2 M = 0
    #   M_bar = mean(2/3, 0, 0, 0) * 100 = 16.667; H_M0 = 1 (Q2) of 2 subjects
    #   mean z* over pairs with a memorized variant = the Q1 P1 value
    #   strict 0 %, lenient 25 %
    # lesser-known: Q3 P1 M = 1 (one baseline, memorized) -> M_bar 100, H_M0 0 of 1,
    #   z* = 5/sqrt(14), strict 100 %
    df = pd.concat([
        pair_table(),
        pd.DataFrame(rows("Q1", "P2", 0, S_NOT, kind="baseline")),
        pd.DataFrame(rows("Q2", "P1", 0, S_NOT, kind="baseline")),
        pd.DataFrame(rows("Q2", "P2", 0, S_NOT, kind="baseline")),
        pd.DataFrame(rows("Q3", "P1", 0, S_MEM2, kind="baseline", cohort="lesser-known")),
    ], ignore_index=True)
    table = mem.evaluate_wikimem(df).cohorts.set_index("cohort")
    wk, lk = table.loc["well-known"], table.loc["lesser-known"]
    assert wk["M_bar_pct"] == pytest.approx(100 * (2 / 3) / 4)
    assert (wk["H_M0"], wk["n_subjects"], wk["n_pairs"]) == (1, 2, 4)
    assert wk["H_M0_share"] == 0.5
    assert wk["z_star_mean"] == pytest.approx((3 / np.sqrt(14 / 3) + 5 / np.sqrt(14)) / 2)
    assert wk["strict_pct"] == 0.0 and wk["lenient_pct"] == 25.0
    assert (lk["M_bar_pct"], lk["H_M0"], lk["n_subjects"], lk["strict_pct"]) == (100.0, 0, 1, 100.0)
    assert lk["z_star_mean"] == pytest.approx(5 / np.sqrt(14))
    # canary-pooled mean z* for well-known: the two memorized canaries, same two values
    assert wk["z_star_mean_canary"] == pytest.approx((3 / np.sqrt(14 / 3) + 5 / np.sqrt(14)) / 2)


def test_scale_one_million_rows_is_fast():
    # 200 subjects x 5 properties x 11 variants x 91 candidates = 1.001M rows. s ~ N(0, 1) plus
    # +8 for the true value: the max of 90 N(0,1) draws exceeds 8 - |noise| practically never
    # (seeded), so every variant is memorized: M = 1 everywhere, H_M0 = 0 in both cohorts.
    rng = np.random.default_rng(0)
    n_s, n_p, n_v, n_c = 200, 5, 11, 91
    idx = pd.MultiIndex.from_product([range(n_s), range(n_p), range(n_v), range(n_c)],
                                     names=["s", "p", "v", "c"]).to_frame(index=False)
    s = rng.normal(size=len(idx)) + np.where(idx["c"] == 0, 8.0, 0.0)
    df = pd.DataFrame({
        "subject_qid": "Q" + idx["s"].astype(str), "property": "P" + idx["p"].astype(str),
        "variant_id": idx["v"], "value": "V" + idx["c"].astype(str),
        "value_label": "v" + idx["c"].astype(str), "is_true": idx["c"] == 0,
        "nll_h": 10.0 - s, "nll_h0": 7.0, "nll_similar_mean": 10.0,
        "cohort": np.where(idx["s"] < 100, "well-known", "lesser-known"),
    })
    t0 = time.perf_counter()
    res = mem.evaluate_wikimem(df)
    elapsed = time.perf_counter() - t0
    assert len(res.variants) == n_s * n_p * n_v and res.pairs["strict"].all()
    assert res.cohorts["H_M0"].tolist() == [0, 0]
    assert elapsed < 60, elapsed


def test_kind_column_from_the_canary_builder():
    # the canary builder names the column `kind`; it must exclude contextualized canaries too
    df = pair_table().rename(columns={"variant_kind": "kind"})
    assert mem.evaluate_wikimem(df).pairs["M"].iloc[0] == pytest.approx(2 / 3)



def test_an_alias_of_a_real_ground_truth_counts_as_that_ground_truth():
    """Issue 17.1 on real entities: the extract keeps Barack Obama's (Q76) English aliases as a
    value entity (he is the sibling, P3373, of Maya Soetoro-Ng, Q4382677, in the bundled sample);
    a counterfactual labelled with one of them ("Barack Hussein Obama") that outranks every other
    candidate is the ground truth under another name, so the pair is memorized, as in footnote 7.
    Without the aliases (the embedding half off) it would be a counterfactual at rank 1."""
    from wikimem_platform.reference import bundled
    from wikimem_platform.wikidata import extract as wikidata

    extract = wikidata.read_dump(bundled.SAMPLE_DUMP)
    fact = extract.claims[(extract.claims["qid"] == "Q4382677") & (extract.claims["value"] == "Q76")]
    assert list(fact["property"]) == ["P3373"] and list(fact["value_label"]) == ["Barack Obama"]
    aliases = mem.aliases_by_value(extract.value_aliases)
    assert "Barack Hussein Obama" in aliases["Q76"]
    labels = {"Q76": "Barack Obama", "Qalias": "Barack Hussein Obama", "Q1": "Ann Dunham", "Q2": "Lolo Soetoro"}
    spec = [("Q76", True, 2.0), ("Qalias", False, 3.0), ("Q1", False, 1.0), ("Q2", False, 0.5)]
    scores = pd.DataFrame([r for v in range(3) for r in rows("Q4382677", "P3373", v, spec, labels=labels)])
    assert mem.count_alias_equivalents(scores, aliases) == 1
    with_aliases = mem.evaluate_wikimem(scores, value_aliases=aliases).pairs.iloc[0]
    without = mem.evaluate_wikimem(scores).pairs.iloc[0]
    assert with_aliases["M"] == 1.0 and with_aliases["strict"]
    assert without["M"] == 0.0 and not without["lenient"]
    assert mem.aliases_by_value(None) == {} and mem.count_alias_equivalents(scores, {}) == 0
