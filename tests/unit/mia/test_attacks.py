"""Hand-computed cases for the membership-inference math (higher score = member)."""

import dataclasses
import zlib

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from wikimem_platform import mia
from wikimem_platform.mia import membership, TokenStats
from wikimem_platform.reports import compliance as reports


def test_token_stats_validates_lengths():
    with pytest.raises(ValueError):
        TokenStats(token_logprobs=[-1.0, -2.0], token_ids=[1])


def test_token_stats_from_logprobs_by_hand():
    # position 0: p = (0.5, 0.5): mu = 2 * 0.5 ln 0.5 = ln 0.5 = -0.693147;
    #   E[(log p)^2] = (ln 0.5)^2 -> var = 0
    # position 1: p = (0.9, 0.1): mu = 0.9 ln 0.9 + 0.1 ln 0.1 = -0.094824 - 0.230259 = -0.325083
    #   E[(log p)^2] = 0.9 * 0.011101 + 0.1 * 5.301898 = 0.540180; var = 0.540180 - 0.105679
    #   = 0.434501; token id 1 was seen -> log p = ln 0.1
    full = np.log([[0.5, 0.5], [0.9, 0.1]])
    st = mia.token_stats_from_logprobs(full, [0, 1], text="ab")
    assert st.token_logprobs == pytest.approx(np.log([0.5, 0.1]))
    assert st.mu == pytest.approx([-0.693147, -0.325083], abs=1e-6)
    assert st.var == pytest.approx([0.0, 0.434501], abs=1e-6)


def test_token_stats_zero_probability_is_finite():
    # p = (1, 0): log p = (0, -inf); 0 * log 0 must count as 0 -> mu = 0, var = 0
    full = np.array([[0.0, -np.inf]])
    st = mia.token_stats_from_logprobs(full, [0])
    assert st.mu[0] == 0.0 and st.var[0] == 0.0 and st.token_logprobs[0] == 0.0


def test_loss_and_zlib_by_hand():
    # log-probs -1, -3 -> mean NLL 2 -> loss = -2
    # zlib.compress(b"aaaa") is 12 bytes (2 header + 6 deflate + 4 adler32) -> zlib = -2/12
    st = TokenStats(token_logprobs=[-1.0, -3.0], text="aaaa")
    assert mia.loss_score(st) == -2.0
    assert len(zlib.compress(b"aaaa")) == 12
    assert mia.zlib_score(st) == pytest.approx(-2 / 12)


def test_min_k_by_hand():
    # log-probs -1 .. -10; k = 0.2 -> int(10 * 0.2) = 2 lowest: -10, -9 -> mean -9.5
    st = TokenStats(token_logprobs=-np.arange(1, 11, dtype=float))
    assert mia.min_k_score(st, k=0.2) == -9.5
    # k = 0.25 -> int(2.5) = 2 -> same
    assert mia.min_k_score(st, k=0.25) == -9.5
    # 3 tokens, k = 0.2 -> int(0.6) = 0 -> at least 1 -> the lowest: -3
    assert mia.min_k_score(TokenStats(token_logprobs=[-1.0, -2.0, -3.0])) == -3.0


def test_min_k_plus_plus_by_hand():
    # log p = -1, -2, -3; mu = -1.5, -1, -2; var = 0.25, 4, 0
    # z = (-1 + 1.5)/0.5 = 1; (-2 + 1)/2 = -0.5; var 0 -> 0
    # k = 0.5 -> int(1.5) = 1 lowest: -0.5; k = 1 -> mean(1, -0.5, 0) = 1/6
    st = TokenStats(token_logprobs=[-1.0, -2.0, -3.0], mu=[-1.5, -1.0, -2.0],
                    var=[0.25, 4.0, 0.0])
    assert mia.min_k_plus_plus_score(st, k=0.5) == -0.5
    assert mia.min_k_plus_plus_score(st, k=1.0) == pytest.approx(1 / 6)


def test_reference_and_neighbourhood_by_hand():
    # target loss 2, reference loss 3 -> 3 - 2 = 1 (target fits the text better -> member-like)
    assert mia.reference_score(2.0, 3.0) == 1.0
    assert mia.reference_score([2.0, 4.0], [3.0, 3.0]).tolist() == [1.0, -1.0]
    # neighbours 2.5, 3.5 -> mean 3; target 2 -> 1
    assert mia.neighbourhood_score(2.0, [2.5, 3.5]) == 1.0


def test_token_frequencies_and_dc_pdd_by_hand():
    # corpus [[5, 5, 7], [9]], V = 10: counts 5:2 7:1 9:1, total 4
    # f = (1 + c) / (4 + 10): f5 = 3/14, f7 = 2/14, f9 = 2/14, others 1/14
    freq = mia.token_frequencies([[5, 5, 7], [9]], vocab_size=10)
    assert freq[[5, 7, 9, 0]] == pytest.approx([3 / 14, 2 / 14, 2 / 14, 1 / 14])
    assert freq.sum() == pytest.approx(1.0)
    # text ids 5, 7, 5, 9 with p = 0.5, 0.25, 0.9, 0.1; first occurrences: positions 0, 1, 3
    # alpha = 0.5 ln(14/3) = 0.770222; 0.25 ln 7 = 0.486478; 0.1 ln 7 = 0.194591
    st = TokenStats(token_logprobs=np.log([0.5, 0.25, 0.9, 0.1]), token_ids=[5, 7, 5, 9])
    assert mia.dc_pdd_score(st, freq, cap=None) == pytest.approx(
        (0.770222 + 0.486478 + 0.194591) / 3, abs=1e-6)
    # cap 0.6: 0.6, 0.486478, 0.194591 -> mean 0.427023
    assert mia.dc_pdd_score(st, freq, cap=0.6) == pytest.approx(0.427023, abs=1e-6)
    # default cap 0.01 (mimir): all clipped -> 0.01
    assert mia.dc_pdd_score(st, freq) == pytest.approx(0.01)


def test_attack_scores_frame():
    stats = [TokenStats(token_logprobs=[-1.0, -3.0], token_ids=[1, 2], mu=[-1.0, -1.0],
                        var=[1.0, 1.0], text="aaaa"),
             TokenStats(token_logprobs=[-2.0, -2.0], token_ids=[3, 3], mu=[-2.0, -2.0],
                        var=[1.0, 1.0], text="aaaa")]
    freq = mia.token_frequencies([[1, 2, 3]], 4)
    frame = mia.attack_scores(stats, k=0.5, reference_mean_nll=[3.0, 3.0],
                              neighbour_mean_nlls=[[2.5, 3.5], [2.0]], token_freq=freq)
    assert list(frame.columns) == ["mean_nll", "loss", "zlib", "zlib_total", "min_k", "min_k_pp",
                                   "reference", "neighbourhood", "dc_pdd"]
    assert frame["loss"].tolist() == [-2.0, -2.0]
    assert frame["min_k"].tolist() == [-3.0, -2.0]
    # min_k_pp text 1: z = (-1+1)/1 = 0, (-3+1)/1 = -2 -> lowest 1: -2; text 2: z = 0, 0 -> 0
    assert frame["min_k_pp"].tolist() == [-2.0, 0.0]
    assert frame["reference"].tolist() == [1.0, 1.0]
    assert frame["neighbourhood"].tolist() == [1.0, 0.0]


# ----------------------------------------------------------------------------- neighbours

def test_pii_neighbours():
    text = "Jane Doe's email is jane@x.com. Write to Jane Doe."
    out = mia.pii_neighbours(text, "Jane Doe", "jane@x.com", ["John Roe", "Jane Doe", "Ann Lee"],
                             ["a@b.org", "c@d.net"], n=2, seed=0)
    assert len(out) == 2
    for nb in out:
        assert "Jane Doe" not in nb and "jane@x.com" not in nb
        assert nb.count("John Roe") + nb.count("Ann Lee") == 2    # both name mentions swapped
        assert ("a@b.org" in nb) != ("c@d.net" in nb)
    # drawn without replacement while enough remain: two distinct names and values
    assert len(set(out)) == 2
    assert out == mia.pii_neighbours(text, "Jane Doe", "jane@x.com",
                                     ["John Roe", "Jane Doe", "Ann Lee"],
                                     ["a@b.org", "c@d.net"], n=2, seed=0)   # seeded
    # a name inside the value is replaced once, with the value (longest first)
    out = mia.pii_neighbours("Mail Jane at Jane@x.com", "Jane", "Jane@x.com", ["Ann"],
                             ["z@y.org"], n=1)
    assert out == ["Mail Ann at z@y.org"]
    with pytest.raises(ValueError):
        mia.pii_neighbours("no pii here", "Jane", "j@x.com", ["Ann"], ["a@b.c"])


def test_perturb_words():
    text = "the quick brown fox jumps over the lazy dog today"
    out = mia.perturb_words(text, n=5, seed=1)
    assert len(out) == 5 and all(nb != text for nb in out)
    assert out == mia.perturb_words(text, n=5, seed=1)                     # seeded
    # 10 words, pct 0.2 -> 2 edits: at most 2 words lost
    assert all(len(nb.split(" ")) >= 8 for nb in out)
    filled = mia.perturb_words(text, n=20, seed=2, fill_words=["zebra"])
    assert any("zebra" in nb for nb in filled)
    with pytest.raises(ValueError):
        mia.perturb_words("single", n=1)


# ----------------------------------------------------------------------------- evaluation

def test_perfect_separation():
    res = mia.evaluate_attack([3.0, 4.0, 1.0, 2.0], [1, 1, 0, 0], n_bootstrap=200)
    assert res["auroc"] == 1.0
    assert res["auroc_ci_low"] == 1.0 and res["auroc_ci_high"] == 1.0
    # 2 non-members cannot support a TPR at 0.1 % or 1 % FPR (1,000 and 100 needed).
    assert np.isnan(res["tpr_at_fpr_0.001"]) and np.isnan(res["tpr_at_fpr_0.01"])
    assert (res["n_members"], res["n_nonmembers"]) == (2, 2)


def test_tpr_at_a_low_fpr_needs_one_over_fpr_non_members():
    assert (mia.min_nonmembers(0.001), mia.min_nonmembers(0.01)) == (1000, 100)
    members, non_members = np.full(5, 2.0), np.linspace(0, 1, 999)
    scores, labels = np.r_[members, non_members], np.r_[np.ones(5, bool), np.zeros(999, bool)]
    res = mia.evaluate_attack(scores, labels, n_bootstrap=10)
    assert np.isnan(res["tpr_at_fpr_0.001"]) and res["tpr_at_fpr_0.01"] == 1.0  # 999 < 1,000 <= ... 100
    res = mia.evaluate_attack(np.r_[scores, -1.0], np.r_[labels, False], n_bootstrap=10)
    assert res["tpr_at_fpr_0.001"] == 1.0  # the 1,000th non-member makes it reportable
    shown = reports.mia_table(pd.DataFrame([{"attack": "loss", "auroc": 1.0, "tpr_at_fpr_0.001": np.nan,
                                              "tpr_at_fpr_0.01": 0.25, "set_description": "x"}]))
    assert shown.iloc[0]["tpr_at_fpr_0.001"] == "n/a: too few non-members (< 1,000)"
    assert shown.iloc[0]["tpr_at_fpr_0.01"] == "0.250" and "set_description" not in shown


def test_the_report_warns_when_words_alone_separate_the_split():
    table = pd.DataFrame({"attack": ["loss", "bag_of_words"], "auroc": [0.9, 0.59]})
    assert reports.blind_baseline_warning(table) == ""
    table.loc[1, "auroc"] = mia.BLIND_SHIFT_AUROC
    assert "AUROC 0.60" in reports.blind_baseline_warning(table) and "shifted" in reports.blind_baseline_warning(table)
    assert reports.blind_baseline_warning(table[table["attack"] == "loss"]) == ""


def test_flipping_labels_flips_auroc():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=300)
    labels = rng.random(300) < 0.5
    scores[labels] += 0.5
    a = mia.evaluate_attack(scores, labels, n_bootstrap=100)["auroc"]
    b = mia.evaluate_attack(scores, ~labels, n_bootstrap=100)["auroc"]
    assert a > 0.5 and a + b == pytest.approx(1.0)
    # negating the scores does the same
    c = mia.evaluate_attack(-scores, labels, n_bootstrap=100)["auroc"]
    assert c == pytest.approx(1 - a)


def test_tpr_at_low_fpr_and_auroc_by_hand():
    # 1000 non-members scored 0, 1, ..., 999; members 1000.5, 999.5, 997.5, 500
    # FPR <= 0.1 %: at most 1 false positive (999) -> threshold in (998, 999] ->
    #   members above: 1000.5 and 999.5 -> TPR 2/4 = 0.5
    # FPR <= 1 %: at most 10 false positives (990..999) -> threshold in (989, 990] ->
    #   members above: 1000.5, 999.5, 997.5 -> 3/4 = 0.75
    # AUROC: members beat 1000, 1000, 998 (0..997) and 500 (0..499) non-members, and member 500
    #   ties non-member 500 (counts 1/2) -> 3498.5 / 4000 = 0.874625
    non = np.arange(1000, dtype=float)
    mem = np.array([1000.5, 999.5, 997.5, 500.0])
    scores = np.concatenate([mem, non])
    labels = np.r_[np.ones(4, bool), np.zeros(1000, bool)]
    res = mia.evaluate_attack(scores, labels, n_bootstrap=300, seed=3)
    assert res["tpr_at_fpr_0.001"] == 0.5
    assert res["tpr_at_fpr_0.01"] == 0.75
    assert res["auroc"] == pytest.approx(3498.5 / 4000)
    assert res["auroc_ci_low"] <= res["auroc"] <= res["auroc_ci_high"]


def test_bootstrap_counts_match_sklearn_with_ties():
    # one "replicate" that is the sample itself must equal roc_auc_score (ties count 1/2):
    # scores m: 1, 2, 2; n: 2, 0 -> pairs (m > n) 1>0 ✓, 2>0 ✓✓, 2=2 ½½, 1<2 0 -> 3 + 1 = 4 / 6
    scores = np.array([1.0, 2.0, 2.0, 2.0, 0.0])
    labels = np.array([True, True, True, False, False])
    assert roc_auc_score(labels, scores) == pytest.approx(4 / 6)

    class Identity:
        """A generator whose 'resample' returns the sample as is."""
        def integers(self, low, high, size):
            return np.broadcast_to(np.arange(high), size)

    boots = mia.evaluation._bootstrap_auroc(scores, labels, 3, Identity())
    assert boots == pytest.approx([4 / 6] * 3)


def test_bootstrap_is_seeded_and_rejects_nan():
    rng = np.random.default_rng(1)
    scores, labels = rng.normal(size=100), np.arange(100) % 2 == 0
    a = mia.evaluate_attack(scores, labels, seed=7)
    assert pd.Series(a).equals(pd.Series(mia.evaluate_attack(scores, labels, seed=7)))  # NaN TPRs equal too
    assert a["auroc_ci_low"] < a["auroc"] < a["auroc_ci_high"]
    with pytest.raises(ValueError):
        mia.evaluate_attack([np.nan, 1.0], [1, 0])


def test_evaluate_attacks_frame():
    frame = mia.attack_scores([TokenStats(token_logprobs=[-1.0]),
                               TokenStats(token_logprobs=[-3.0])])
    table = mia.evaluate_attacks(frame, [1, 0], n_bootstrap=10)
    assert table.set_index("attack")["auroc"].to_dict() == {"loss": 1.0, "min_k": 1.0}


# ----------------------------------------------------------------------------- the shared pass

def test_evaluate_available_drops_and_counts_unscored():
    frame = mia.attack_scores([TokenStats(token_logprobs=[-1.0]), TokenStats(token_logprobs=[-3.0]),
                               TokenStats(token_logprobs=[-2.0])])
    frame["neighbourhood"] = [0.5, np.nan, -0.5]
    table = mia.evaluate_available(frame, [1, 0, 0], n_bootstrap=10).set_index("attack")
    # loss: member -1 beats both non-members -> 1.0; neighbourhood: the NaN row is left out,
    # member 0.5 vs non-member -0.5 -> 1.0 on 2 texts
    assert table.at["loss", "auroc"] == 1.0 and table.at["loss", "n_unscored"] == 0
    assert table.at["neighbourhood", "auroc"] == 1.0
    assert (table.at["neighbourhood", "n_nonmembers"], table.at["neighbourhood", "n_unscored"]) == (1, 1)
    # flipping the labels flips every AUROC (one sign convention for all attacks)
    flipped = mia.evaluate_available(frame, [0, 1, 1], n_bootstrap=10).set_index("attack")
    assert (flipped["auroc"] + table["auroc"]).tolist() == pytest.approx([1.0] * len(table))


TEXTS = ["The capital of France is Paris.", "Marco Polo was a Venetian merchant.", "Hi",
         "The capital of France is Paris."]


def test_token_stats_match_a_direct_forward(tiny_lm):
    import torch

    stats = mia.token_stats(tiny_lm, TEXTS, batch_tokens=16)   # small batches: several forwards
    assert stats[0].token_logprobs == pytest.approx(stats[3].token_logprobs)   # duplicate run once
    for text, st in zip(TEXTS[:3], stats):
        ids = tiny_lm.encode([text])[0]
        assert st.token_ids.tolist() == ids[1:] and st.text == text
        with torch.inference_mode():
            logp = torch.log_softmax(tiny_lm.model(torch.tensor([ids])).logits[0, :-1].double(), -1)
        p = logp.exp()
        mu = (p * logp).sum(-1)
        var = (p * logp ** 2).sum(-1) - mu ** 2
        assert st.token_logprobs == pytest.approx(logp[torch.arange(len(ids) - 1), ids[1:]].numpy(), abs=2e-4)
        assert st.mu == pytest.approx(mu.numpy(), abs=2e-4)
        assert st.var == pytest.approx(var.numpy(), rel=1e-3, abs=2e-4)
    # the NLL engine agrees on the totals
    from wikimem_platform.lm.nll import score_sentences
    assert [st.total_nll for st in stats] == pytest.approx(score_sentences(tiny_lm, TEXTS), abs=1e-3)


RUN_ATTACKS_TEXTS = TEXTS[:2]
RUN_ATTACKS_NEIGHBOURS = [["The capital of France is Rome."], ["Marco Polo was a Venetian."]]


def test_run_attacks_shares_one_pass(tiny_lm):
    texts, neighbours = RUN_ATTACKS_TEXTS, RUN_ATTACKS_NEIGHBOURS
    frame = mia.run_attacks(tiny_lm, texts, reference_lm=tiny_lm, neighbours=neighbours,
                            reference_corpus=["Paris is in France."])
    assert list(frame.columns) == ["mean_nll", "loss", "zlib", "zlib_total", "min_k", "min_k_pp", "reference",
                                   "dc_pdd", "neighbourhood", "lowercase"]
    own = mia.token_stats(tiny_lm, texts + [n[0] for n in neighbours])
    lowered = mia.token_stats(tiny_lm, [t.lower() for t in texts])
    assert frame["lowercase"].tolist() == pytest.approx(
        [lowered[i].mean_nll - own[i].mean_nll for i in range(2)], abs=1e-5)
    assert frame["mean_nll"].tolist() == pytest.approx([st.mean_nll for st in own[:2]], abs=1e-5)
    # neighbourhood = neighbour's mean NLL - the text's
    assert frame["neighbourhood"].tolist() == pytest.approx(
        [own[2].mean_nll - own[0].mean_nll, own[3].mean_nll - own[1].mean_nll], abs=1e-5)
    # the model as its own reference: no difference (engine vs pass agree to float32 noise)
    assert frame["reference"].abs().max() < 1e-4
    assert (frame["dc_pdd"] > 0).all() and (frame["dc_pdd"] <= mia.DC_PDD_CAP).all()


@pytest.mark.slow
def test_a_famous_fact_reads_better_to_the_real_model(smollm2):
    """Real model: only a model that has read about Paris finds its famous fact likelier than a
    merchant's (the pass's plumbing is `test_run_attacks_shares_one_pass`, on a tiny model)."""
    frame = mia.run_attacks(smollm2, RUN_ATTACKS_TEXTS, reference_lm=smollm2, neighbours=RUN_ATTACKS_NEIGHBOURS,
                            reference_corpus=["Paris is in France."])
    assert list(frame.columns) == ["mean_nll", "loss", "zlib", "zlib_total", "min_k", "min_k_pp", "reference",
                                   "dc_pdd", "neighbourhood", "lowercase"]
    assert frame["loss"].iloc[0] > frame["loss"].iloc[1]    # a famous fact reads better


def test_dc_pdd_frequencies_count_the_tokenizers_ids(tiny_lm):
    corpus = ["Paris Paris", "Rome"]
    ids = tiny_lm.tokenizer(corpus, add_special_tokens=False)["input_ids"]
    freq = mia.dc_pdd_frequencies(tiny_lm, corpus)
    total = sum(len(i) for i in ids)
    paris = ids[0][0]
    count = sum(i.count(paris) for i in ids)
    assert freq[paris] == pytest.approx((1 + count) / (total + len(freq)))
    assert freq.sum() == pytest.approx(1.0) and len(freq) >= len(tiny_lm.tokenizer)


# ----------------------------------------------------------------------------- attacks of issue 17.10

def test_new_attack_formulas_by_hand():
    # zlib_total: 3 nats = 3 / ln 2 bits, against zlib's 8 * len(compress("aaaa")) bits.
    stats = TokenStats(token_logprobs=[-1.0, -2.0], text="aaaa")
    assert mia.zlib_total_score(stats) == pytest.approx(-(3 / np.log(2)) / (8 * len(zlib.compress(b"aaaa"))))
    assert mia.lowercase_score(2.0, 2.5) == pytest.approx(0.5)  # casing cost half a nat per token
    # ReCaLL = LL(x|P) / LL(x) = (-3) / (-2); Con-ReCall = (LL(x|P_non) - g LL(x|P_mem)) / LL(x).
    assert mia.recall_score(2.0, 3.0) == pytest.approx(1.5)
    assert mia.con_recall_score(2.0, 3.0, 1.0) == pytest.approx((-3 - -1) / -2)
    assert mia.con_recall_score(2.0, 3.0, 1.0, gamma=0.5) == pytest.approx((-3 + 0.5) / -2)
    frame = mia.attack_scores([stats])
    assert {"zlib", "zlib_total"} <= set(frame.columns)


def test_recall_shots_are_seeded_per_class_and_skip_small_classes():
    labels = np.r_[np.ones(10, bool), np.zeros(6, bool)]
    non, mem = membership.recall_shots(labels, 3, seed=1)
    assert (non, mem) == membership.recall_shots(labels, 3, seed=1) and len(non) == len(mem) == 3
    assert not labels[non].any() and labels[mem].all()
    assert membership.recall_shots(labels, 5, seed=1)[0] == []  # 6 non-members - 5 shots leaves 1 < 2
    assert membership.recall_shots(labels, 0) == ([], [])


def test_bag_of_words_baseline_sees_a_shifted_split_and_not_a_fair_one():
    rng = np.random.default_rng(0)
    vocabulary = [f"word{i}" for i in range(300)]
    fair = [" ".join(rng.choice(vocabulary, 12)) for _ in range(200)]
    labels = np.arange(200) % 2 == 0
    fair_auroc = mia.evaluate_attack(mia.bag_of_words_scores(fair, labels), labels, n_bootstrap=10)["auroc"]
    assert abs(fair_auroc - 0.5) < mia.BLIND_SHIFT_AUROC - 0.5
    shifted = [text + (" in 2024" if member else " in 2019") for text, member in zip(fair, labels)]
    shifted_auroc = mia.evaluate_attack(mia.bag_of_words_scores(shifted, labels), labels, n_bootstrap=10)["auroc"]
    assert shifted_auroc == 1.0
    assert np.isnan(mia.bag_of_words_scores(["a b", "c d", "e f"], [True, False, False])).all()


def test_prefixed_nll_and_gradient_norm_match_direct_computations(tiny_lm):
    import torch

    texts = ["Ada Lovelace was born in London.", "Alan Turing studied at Cambridge."]
    prefix = "Marie Curie was a physicist."
    got = mia.prefixed_mean_nlls(tiny_lm, texts, [prefix])
    prefix_ids = tiny_lm.encode([prefix])[0]
    for text, value in zip(texts, got):
        own = tiny_lm.tokenizer(text, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([prefix_ids + own])
        with torch.inference_mode():
            logp = torch.log_softmax(tiny_lm.model(input_ids=ids).logits[0, :-1].double(), -1)
        picked = logp[torch.arange(len(prefix_ids) - 1, ids.shape[1] - 1), ids[0, len(prefix_ids):]]
        assert value == pytest.approx(float(-picked.mean()), abs=1e-4)

    before = [p.detach().clone() for p in tiny_lm.model.parameters()][:3]
    frozen = [p.requires_grad_(False) for p in tiny_lm.model.parameters()]  # as the scoring resource loads it
    [norm] = mia.gradient_norms(tiny_lm, texts[:1])
    assert not any(p.requires_grad for p in tiny_lm.model.parameters())  # left as found
    tiny_lm.model.requires_grad_(True)
    del frozen
    ids = torch.tensor(tiny_lm.encode(texts[:1]))
    tiny_lm.model.zero_grad(set_to_none=True)
    tiny_lm.model(input_ids=ids, labels=ids).loss.backward()  # transformers' own mean NLL
    expected = torch.stack([p.grad.norm(2) for p in tiny_lm.model.parameters() if p.grad is not None]).mean()
    tiny_lm.model.zero_grad(set_to_none=True)
    assert norm == pytest.approx(float(expected), rel=1e-4)
    assert all(torch.equal(a, b) for a, b in zip(before, list(tiny_lm.model.parameters())[:3]))  # weights untouched
    frame = mia.run_attacks(tiny_lm, texts, nonmember_shots=[prefix], member_shots=texts[:1], gradient_norm=True)
    assert frame["recall"].to_numpy() == pytest.approx(got / frame["mean_nll"].to_numpy(), rel=1e-6)
    assert frame["gradient_norm"].iloc[0] == pytest.approx(-norm, rel=1e-4)
    assert {"lowercase", "con_recall"} <= set(frame.columns)
    # Shots that do not fit the context with the longest text are dropped from the front.
    short = dataclasses.replace(tiny_lm, model=_WithContext(tiny_lm.model, len(prefix_ids) + 12))
    two_shots = mia.prefixed_mean_nlls(short, texts, ["An early shot that no longer fits.", prefix])
    assert two_shots == pytest.approx(got)
    assert np.isnan(mia.prefixed_mean_nlls(dataclasses.replace(tiny_lm, model=_WithContext(tiny_lm.model, 5)),
                                           texts, [prefix])).all()
    # No shot fits with the longest text: the shortest shot alone, the texts that fit after it scored.
    lengths = [len(ids) for ids in tiny_lm.tokenizer(texts, add_special_tokens=False)["input_ids"]]
    tight = dataclasses.replace(tiny_lm, model=_WithContext(tiny_lm.model, len(prefix_ids) + min(lengths)))
    partial = mia.prefixed_mean_nlls(tight, texts, [prefix, prefix + " " + prefix])
    shorter = int(np.argmin(lengths))
    assert lengths[0] != lengths[1] and partial[shorter] == pytest.approx(got[shorter])
    assert np.isnan(partial[1 - shorter])


class _WithContext:
    """A model whose config says it takes `limit` positions (what `prefixed_mean_nlls` reads)."""

    def __init__(self, model, limit: int):
        import types

        self._model, self.config = model, types.SimpleNamespace(max_position_embeddings=limit)

    def __getattr__(self, name):
        return getattr(self._model, name)


def test_rouge1_and_samia_by_hand():
    # candidate {the, cat, sat}, reference {the x2, cat}: overlap 2 (the once, cat), P = R = 2/3.
    assert mia.rouge1_f1("The cat sat", "the cat, the") == pytest.approx(2 / 3)
    assert mia.rouge1_f1("", "the cat") == 0.0 and mia.rouge1_f1("dog", "the cat") == 0.0
    assert mia.samia_score(["the cat sat", "dog"], "the cat the") == pytest.approx((2 / 3 + 0) / 2)
    assert np.isnan(mia.samia_score([], "x"))


def test_samia_samples_through_the_shared_generator_seeded(tiny_lm):
    from wikimem_platform.lm.generation import sample_generate

    texts = ["Ada Lovelace was born in London in 1815 and worked with Babbage.", "Too short."]
    first = mia.samia_scores(tiny_lm, texts, n_samples=3, seed=4)
    assert first[0] == mia.samia_scores(tiny_lm, texts, n_samples=3, seed=4)[0]  # seeded
    assert 0.0 <= first[0] <= 1.0 and np.isnan(first[1])  # under 4 words: no second half to compare
    drawn = sample_generate(tiny_lm, ["Ada Lovelace was born in"], n_samples=4, max_new_tokens=6, seed=1)
    assert len(drawn) == 1 and len(drawn[0]) == 4 and len(set(drawn[0])) > 1  # sampled, not greedy
