"""CRM metrics by hand: cue per example and per fact, rates under cue < tau, cue-resistant flags."""

import numpy as np
import pandas as pd
import pytest

from wikimem_platform.crm import metrics as crm


def test_example_cue_is_the_max_over_targets():
    # prompt -> "theoccupationofmarcopolois"
    # "Polo player" -> "poloplayer" (10): longest common piece "polo" (4) -> 0.4
    # "writer" (6): no bigram of it (wr ri it te er) in the prompt, single letters yes -> 1/6
    assert crm.example_cue("The occupation of Marco Polo is", ["Polo player", "writer"]) == pytest.approx(0.4)
    assert crm.example_cue("The occupation of Marco Polo is", ["writer"]) == pytest.approx(1 / 6)
    assert crm.example_cue("anything", []) == 0.0
    # the paper's example: the e-mail's local part is the name -> high cue; digits in an email
    assert crm.example_cue("The email of Jane Doe is", ["jane.doe@example.co.uk"], "email") == pytest.approx(4 / 7)
    assert crm.example_cue("ivan9123456789@mail.ru", ["+7 (912) 345-67-89"], "phone") == pytest.approx(10 / 11)
    frame = crm.add_cues(pd.DataFrame({"prompt": ["My name is Jane Doe"], "targets": [["Jane Doe"]]}))
    assert frame["cue"].tolist() == [1.0]


def examples():
    # cue 0.1 hit, 0.3 miss, 0.6 hit, 1.0 hit; recon -1, -2, -3, -4
    return pd.DataFrame({"paradigm": "twin", "cue": [0.1, 0.3, 0.6, 1.0],
                         "hit": [True, False, True, True], "recon_ll": [-1.0, -2.0, -3.0, -4.0]})


def test_crm_rates_by_hand():
    rates = crm.crm_rates(examples(), taus=(0.2, 0.35, 0.5, 0.75, 1.0)).set_index("subset")
    assert rates.index.tolist() == ["all", "cue<0.2", "cue<0.35", "cue<0.5", "cue<0.75", "cue<1"]
    assert np.isnan(rates.at["all", "tau"]) and rates.at["cue<0.35", "tau"] == 0.35
    # all: 3/4 hits, recon mean -2.5
    assert (rates.at["all", "n"], rates.at["all", "hit_rate"], rates.at["all", "recon_ll_mean"]) == (4, 0.75, -2.5)
    # cue < 0.2: the first only
    assert (rates.at["cue<0.2", "n"], rates.at["cue<0.2", "hit_rate"]) == (1, 1.0)
    # cue < 0.35 and < 0.5: first two -> 1/2, recon -1.5
    for subset in ("cue<0.35", "cue<0.5"):
        assert (rates.at[subset, "n"], rates.at[subset, "n_hits"], rates.at[subset, "recon_ll_mean"]) == (2, 1, -1.5)
    # cue < 0.75 and < 1 (strict: the fully cued one is out): 2/3, recon -2, median -2
    assert rates.at["cue<1", "hit_rate"] == pytest.approx(2 / 3)
    assert rates.at["cue<0.75", "recon_ll_median"] == -2.0


def test_crm_rates_empty_subset_and_groups():
    frame = pd.concat([examples(), examples().assign(paradigm="canary", cue=0.9, hit=False)])
    rates = crm.crm_rates(frame, taus=(0.5,))
    canary = rates[rates["paradigm"] == "canary"].set_index("subset")
    assert canary.at["cue<0.5", "n"] == 0 and np.isnan(canary.at["cue<0.5", "hit_rate"])
    assert canary.at["all", "hit_rate"] == 0.0
    twin = rates[rates["paradigm"] == "twin"].set_index("subset")
    assert twin.at["cue<0.5", "hit_rate"] == 0.5
    # no recon column: NaN means, rates still there
    no_recon = crm.crm_rates(examples().drop(columns="recon_ll"), taus=(0.5,))
    assert no_recon["recon_ll_mean"].isna().all() and no_recon["hit_rate"].tolist() == [0.75, 0.5]


def canaries():
    def row(qid, subject, prop, variant, kind, template, labels):
        return dict(subject_qid=qid, subject=subject, property=prop, variant_id=variant, kind=kind,
                    template=template, ground_truth_labels=labels)
    return pd.DataFrame([
        # "Douglas Adams's family name is ." contains "adams" -> 1.0
        row("Q42", "Douglas Adams", "P734", 0, "baseline", "{subject}'s family name is {value}.", ["Adams"]),
        # "This surname, , is common." -> "thissurnameiscommon": "am" of "adams" -> 2/5
        row("Q42", "Douglas Adams", "P734", 1, "paraphrase", "This surname, {value}, is common.", ["Adams"]),
        # contextualized: left out by default (would be 1.0 as well)
        row("Q42", "Douglas Adams", "P734", 11, "contextualized", "{subject} wrote. Family name: {value}.", ["Adams"]),
        # "marcopolosoccupationis" vs "explorer" (8): "lo" -> 2/8
        row("Q6101", "Marco Polo", "P106", 0, "baseline", "{subject}'s occupation is {value}.", ["explorer"]),
    ])


def test_fact_cues_max_and_mean_over_variants():
    cues = crm.fact_cues(canaries()).set_index(["subject_qid", "property"])
    assert cues.at[("Q42", "P734"), "cue"] == 1.0
    assert cues.at[("Q42", "P734"), "cue_mean"] == pytest.approx((1.0 + 0.4) / 2)
    assert cues.at[("Q42", "P734"), "n_variants"] == 2
    assert cues.at[("Q6101", "P106"), "cue"] == pytest.approx(0.25)
    with_context = crm.fact_cues(canaries(), include_contextualized=True).set_index(["subject_qid", "property"])
    assert with_context.at[("Q42", "P734"), "n_variants"] == 3


def test_memorized_and_cue_resistant_flag():
    pairs = pd.DataFrame({"subject_qid": ["Q42", "Q6101", "Q6101", "Q1"],
                          "property": ["P734", "P106", "P27", "P106"],
                          "M": [1.0, 0.9, 0.0, 1.0], "at_threshold": [True, True, False, True],
                          "lenient": [True, True, False, True]})
    flagged = crm.flag_cue_resistant(pairs, crm.fact_cues(canaries()), tau=0.5).set_index(["subject_qid", "property"])
    # Q42: memorized but its name shows the value (cue 1.0); Q6101 P106: memorized, cue 0.25;
    # Q6101 P27: no canary -> cue NaN, not flagged; Q1: no canary either
    assert flagged["memorized_and_cue_resistant"].to_dict() == {
        ("Q42", "P734"): False, ("Q6101", "P106"): True, ("Q6101", "P27"): False, ("Q1", "P106"): False}
    assert np.isnan(flagged.at[("Q1", "P106"), "cue"])
    # a lower tau removes the flag
    assert not crm.flag_cue_resistant(pairs, crm.fact_cues(canaries()), tau=0.2)["memorized_and_cue_resistant"].any()
    with pytest.raises(KeyError):
        crm.flag_cue_resistant(pairs, crm.fact_cues(canaries()), memorized_column="strict")
    # WikiMem's memorized share by cue: facts with a cue: Q42 (1.0, memorized), Q6101 P106 (0.25, memorized)
    rates = crm.wikimem_rates(crm.flag_cue_resistant(pairs, crm.fact_cues(canaries())), taus=(0.5, 1.0))
    assert rates[["subset", "n", "hit_rate"]].values.tolist() == [["all", 2, 1.0], ["cue<0.5", 1, 1.0], ["cue<1", 1, 1.0]]


def test_build_examples_rejects_unknown_paradigm():
    with pytest.raises(ValueError):
        crm.build_examples(canaries(), paradigms=("canary", "telepathy"))


def test_verbatim_examples_prompt_with_the_text_before_the_value_split_by_training():
    texts = pd.DataFrame({"text": ["Ilse Marwitz works as a journalist in Berlin.", "Born in Ulm, he was a physicist.",
                                   "No value here."],
                          "value": ["journalist", "physicist", "baker"], "member": [True, False, True]})
    examples = crm.build_examples(canaries(), paradigms=("verbatim",), verbatim_texts=texts)
    assert examples["prompt"].tolist() == ["Ilse Marwitz works as a", "Born in Ulm, he was a"]
    assert examples["joiner"].tolist() == [" ", " "] and examples["targets"].tolist() == [["journalist"], ["physicist"]]
    assert examples["paradigm"].tolist() == [crm.VERBATIM, crm.VERBATIM_HELD_OUT]  # the text without its value is skipped
    assert len(crm.build_examples(canaries(), paradigms=("verbatim",))) == 0  # no text of known wording: nothing


def test_user_verbatim_texts_need_text_and_value(tmp_path):
    from wikimem_platform.mia import membership

    good = tmp_path / "texts.jsonl"
    good.write_text('{"text": "Her e-mail is a@b.org.", "value": "a@b.org"}\n'
                    '{"text": "His is c@d.org.", "value": "c@d.org", "label": "non-member"}\n')
    assert membership.verbatim_texts_from_jsonl(good)["member"].tolist() == [True, False]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "no value field"}\n')
    with pytest.raises(ValueError, match="line 1: needs non-empty 'text' and 'value'"):
        membership.verbatim_texts_from_jsonl(bad)


def test_cue_roc_by_hand():
    # canary: cues 0.9 (hit), 0.5 (hit), 0.4 (miss), 0.1 (miss) -> the cue orders hits first: AUROC 1.
    # twin: 0.2 (hit), 0.8 (miss), 0.6 (hit), 0.6 (miss): pairs hit > miss: 0.2 beats none, 0.6
    # ties 0.6 (1/2) and loses to 0.8 -> 0.5 / 4 = 0.125. extraction: only misses -> left out.
    examples = pd.DataFrame({"paradigm": ["canary"] * 4 + ["twin"] * 4 + ["extraction"] * 2,
                             "cue": [0.9, 0.5, 0.4, 0.1, 0.2, 0.8, 0.6, 0.6, 0.3, 0.1],
                             "hit": [True, True, False, False, True, False, True, False, False, False]})
    roc = crm.cue_roc(examples)
    auroc = roc.groupby("paradigm")["auroc"].first().to_dict()
    assert auroc == {"canary": 1.0, "twin": pytest.approx(0.125)}
    canary = roc[roc["paradigm"] == "canary"]
    assert (canary["fpr"].iloc[0], canary["tpr"].iloc[-1]) == (0.0, 1.0) and canary["n_hits"].iloc[0] == 2
    assert len(crm.cue_roc_figure(roc).data) == 3  # two paradigms and the chance line


def test_normalized_auroc_counts_a_wrong_sign_as_leakage():
    from wikimem_platform import mia

    assert mia.normalized_auroc(0.3) == pytest.approx(0.7) and mia.normalized_auroc(0.8) == 0.8
    assert mia.evaluate_attack([1.0, 2.0, 3.0, 4.0], [1, 1, 0, 0], n_bootstrap=10)["auroc_normalized"] == 1.0
