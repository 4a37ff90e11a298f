"""Membership inference where membership is known: the planted model (fixture `planted_model`).

Acceptance: the loss attack separates members' training documents from non-members' held-out
biographies (AUROC >= 0.95), and a reference attack with an UNTRAINED reference (same
architecture, random weights) is not worse than chance.
"""

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
import torch

from tests.support.criteria import criterion
from wikimem_platform import mia
from wikimem_platform.lm.loading import load_model, LoadedModel
from wikimem_platform.mia import membership


def untrained_reference(lm: LoadedModel, seed: int = 0) -> LoadedModel:
    """The target's architecture and tokenizer with fresh random weights."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(lm.model.config).eval()
    return dataclasses.replace(lm, model=model, name=f"{lm.name}-untrained", fingerprint="untrained")


def planted_attack_table(model_dir: Path, max_per_class: int = 60) -> pd.DataFrame:
    """Every attack (reference: untrained) on the planted model's training-membership set."""
    lm = load_model(model_dir)
    texts = membership.planted_membership(model_dir, max_per_class=max_per_class, seed=0)
    _, table = membership.run_mia(lm, texts, reference_lm=untrained_reference(lm), n_neighbours=2,
                                  n_bootstrap=200)
    return table.set_index("attack")


@pytest.mark.slow
def test_planted_membership_is_detected(planted_model):
    table = planted_attack_table(planted_model)
    assert set(table["set_kind"]) == {membership.PLANTED_TRAINING}
    criterion("MIA: loss AUROC, training documents", table.at["loss", "auroc"], ">=", 0.95)
    criterion("MIA: reference attack AUROC (untrained reference)", table.at["reference", "auroc"], ">=", 0.5)
    assert set(table.index) == {"loss", "zlib", "zlib_total", "min_k", "min_k_pp", "reference", "neighbourhood",
                                "neighbourhood_pii", "lowercase", "recall", "con_recall", "gradient_norm",
                                "samia", "bag_of_words"}
    # Members' training documents and non-members' held-out biographies come from one generator:
    # the words alone must not separate them (else every AUROC above would be suspect).
    criterion("MIA: bag-of-words AUROC (the split is fair)", table.at["bag_of_words", "auroc"], "<", mia.BLIND_SHIFT_AUROC)
    # The 3 + 3 prefix texts are not judged with themselves; in 128 positions only the shortest
    # shot fits, and texts too long to follow it are left out (counted, not hidden).
    assert 6 <= table.at["recall", "n_unscored"] < 60
    # Measured 2026-11-24: zlib_total 0.998, gradient norm 0.989, ReCaLL 0.961, lowercase 0.780.
    for attack, floor in {"zlib_total": 0.9, "gradient_norm": 0.9, "recall": 0.8, "lowercase": 0.65}.items():
        criterion(f"MIA: {attack} AUROC", table.at[attack, "auroc"], ">=", floor)


@pytest.mark.slow
def test_verbatim_prefixes_of_training_texts_make_the_planted_model_say_the_value(planted_model):
    """CRM's verbatim paradigm where the training text is known (issue 17.7): the text before a
    value makes the model emit it for members' training documents, never for non-members'
    held-out biographies. Measured 2026-11-24: 0.875 vs 0.000 (80 examples each)."""
    from wikimem_platform.crm import metrics as crm
    from wikimem_platform.crm import examples as crm_examples

    texts = membership.planted_verbatim_texts(planted_model)
    assert set(texts["member"]) == {True, False} and texts.apply(lambda r: r["value"] in r["text"], axis=1).all()
    sample = pd.concat([block.sample(min(len(block), 80), random_state=0) for _, block in texts.groupby("member")])
    examples = crm.build_examples(pd.DataFrame(), paradigms=("verbatim",), verbatim_texts=sample)
    ran = crm.add_cues(crm_examples.run_examples(load_model(planted_model), examples, max_new_tokens=8))
    rates = crm.crm_rates(ran, (0.5,)).set_index(["paradigm", "subset"])["hit_rate"]
    criterion("CRM verbatim: hit rate, training texts", rates[(crm.VERBATIM, "all")], ">=", 0.7)
    criterion("CRM verbatim: hit rate, training texts with cue < 0.5", rates[(crm.VERBATIM, "cue<0.5")], ">=", 0.7)
    criterion("CRM verbatim: hit rate, held-out texts", rates[(crm.VERBATIM_HELD_OUT, "all")], "<=", 0.05)
