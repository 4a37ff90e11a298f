"""EME on the planted world (exact ground truth): soft prompts trained on some members' records
make the model emit *other* members' facts, more of them the more often a fact was read in
training, and neither non-members' facts nor a model that never saw anyone give anything away.

The model is the planted world trained for 50 epochs (`short_planted_model`): the fully trained
one lets a plain sentence extract every member's fact whatever its repetition count, so no
growth with the count could show on it. Its corpus also holds withheld records ("name: ...;
occupation: unknown; ..."), so the record format has a prior of its own, as in real corpora: the
record prompt alone answers "unknown", and what a soft prompt adds is the fact, not a coin flip.
"""

from pathlib import Path

import pytest

from tests.support.criteria import criterion, observe
from tests.support.trained import TEST_SEED
from wikimem_platform import eme
from wikimem_platform.eme.soft_prompts import StoredPrompt
from wikimem_platform.lm.loading import default_cache_dir, load_model

# Soft prompts trained for the tests are cached by content hash, as the planted model is.
# The split and the soft prompts' training follow the run's seed (tests/support/trained.py).
CONFIG = eme.EmeConfig(methods=("prefix", "p-tuning"), prefix_lengths=(5,), volumes=(50,), epochs=40,
                       seed=TEST_SEED, split_seed=TEST_SEED)


@pytest.fixture(scope="module")
def planted_eme(short_planted_model):
    facts, cohorts = eme.planted_inputs(short_planted_model)
    lm = load_model(str(short_planted_model), device="cpu")
    non_members = cohorts.loc[~cohorts["member"], "subject_qid"].tolist()
    audit = eme.eme_audit(lm, facts, eme.SoftPromptStore(default_cache_dir() / "soft-prompts"), CONFIG,
                          never_train=non_members, cohorts=cohorts, group_by=["member", "repetitions"])
    return audit, facts, cohorts


def rate(audit, **arm):
    """Hit rate of one arm, by repetitions (0 = non-members), on all evaluated prompts."""
    rows = audit.rates[(audit.rates["subset"] == "all")]
    for key, value in arm.items():
        rows = rows[rows[key] == value]
    return rows.set_index("repetitions")["hit_rate"]


def full_volume(audit, training_data="real") -> int:
    """Records the full-volume soft prompt of the audited model was trained on (every training
    person's facts: 184 with the default split; the split follows the run's seed)."""
    prompts = audit.prompts[(audit.prompts["model_role"] == "audited") & (audit.prompts["training_data"] == training_data)]
    return int(prompts["n_training"].max())


def member_rate(audit, training_data, n_training, method="prefix"):
    """Hit rate of a soft-prompt arm on every evaluated member's prompt (all repetitions)."""
    ex = audit.examples
    rows = ex[(ex["model_role"] == "audited") & (ex["prompt_method"] == method) & ex["member"]
              & (ex["training_data"] == training_data) & (ex["n_training"] == n_training)]
    assert len(rows)
    return rows["hit"].mean()


def members(series):
    return series.drop(index=0)


def test_soft_prompts_activate_memorized_facts(planted_eme):
    audit, _, cohorts = planted_eme
    text = rate(audit, model_role="audited", prompt_method="record")
    soft = rate(audit, model_role="audited", prompt_method="prefix", training_data="real", n_training=full_volume(audit))
    print(audit.rates[audit.rates["subset"] == "all"].pivot_table(
        index=["model_role", "prompt_method", "prefix_length", "training_data", "n_training"],
        columns="repetitions", values="hit_rate").round(3).to_string())
    # held-out members: the soft prompt beats the same record prompt without it, at 4 and 16 reads
    gain = members(soft) - members(text)
    criterion("EME: soft prompt minus record hit rate, r = 4", gain.loc[4], ">", 0.05)
    criterion("EME: soft prompt minus record hit rate, r = 16", gain.loc[16], ">", 0.05)
    # and the rate grows with how often a fact was read in training
    criterion("EME: soft prompt hit rate, r = 4 minus r = 1", soft.loc[4] - soft.loc[1], ">", 0)
    criterion("EME: soft prompt hit rate, r = 16 minus r = 4", soft.loc[16] - soft.loc[4], ">", 0)
    criterion("EME: soft prompt hit rate, r = 16", soft.loc[16], ">=", 0.4)
    # non-members' facts stay near zero with the text prompts and the prompts trained on real
    # records; prompts trained on fabricated records teach the model to guess one of the 11
    # values of a property, so they hit about 1 in 11 non-member facts, by chance
    non_member = audit.rates[(audit.rates["subset"] == "all") & (audit.rates["repetitions"] == 0)
                             & (audit.rates["model_role"] == "audited")]
    real = non_member["training_data"] != "fabricated"
    criterion("EME: non-members' hit rate, highest arm (text and real records)", non_member.loc[real, "hit_rate"].max(),
              "<=", 0.05, context=non_member[["prompt_method", "training_data", "hit_rate"]])
    criterion("EME: non-members' hit rate, highest fabricated arm", non_member.loc[~real, "hit_rate"].max(), "<=", 0.15)


def test_control_model_learns_nothing_from_the_same_training(planted_eme):
    audit, _, _ = planted_eme
    control = audit.rates[(audit.rates["subset"] == "all") & (audit.rates["model_role"] == "control")]
    assert set(control["prompt_method"]) == {"record", "prefix"}
    # Per arm over all its prompts: repetition groups are the audited model's reading, nothing to
    # a model that never read anyone, and in the group of 8 people read 16 times (32 facts) one
    # chance hit is 0.031 and a second one 0.062. The largest group rate is reported beside it.
    examples = audit.examples[audit.examples["model_role"] == "control"]
    by_arm = examples.groupby("prompt_method")["hit"].agg(["mean", "size"])
    worst = by_arm["mean"].idxmax()
    criterion("EME: control model's hit rate, highest arm (all its prompts)", by_arm.at[worst, "mean"], "<=", 0.05,
              n=int(by_arm.at[worst, "size"]), context=by_arm)
    observe("EME: control model's hit rate, highest arm and repetition group", control["hit_rate"].max())
    trained = audit.prompts.set_index("model_role").loc["control"]
    assert trained["n_training"] == full_volume(audit)


def test_fabricated_volume_and_ensemble_arms_are_reported(planted_eme):
    audit, _, _ = planted_eme
    arms = audit.rates[audit.rates["subset"] == "all"][eme.audit.ARM_COLUMNS].drop_duplicates()
    soft = arms[arms["model_role"] == "audited"]
    assert {(d, n) for d, n in zip(soft["training_data"], soft["n_training"])} >= {
        ("real", full_volume(audit)), ("real", 50), ("fabricated", 50), ("none", 0)}
    assert (soft["prompt_method"] == "ensemble").any() and (soft["training_data"] == "fabricated").any()
    # fabricated records activate less than real ones (Zhou et al., Table 1), at both volumes
    for n_real, n_fabricated in ((full_volume(audit), full_volume(audit, "fabricated")), (50, 50)):
        criterion(f"EME: members' hit rate, real ({n_real}) minus fabricated ({n_fabricated}) records",
                  member_rate(audit, "real", n_real) - member_rate(audit, "fabricated", n_fabricated), ">", 0)
    # the ensemble picks each answer by agreement or perplexity
    ensemble = audit.examples[audit.examples["prompt_method"] == "ensemble"]
    assert set(ensemble["ensemble_rule"]) <= {"agreement", "perplexity", "none"} and len(ensemble)


def test_no_evaluated_person_is_in_any_training_set(planted_eme):
    audit, facts, _ = planted_eme
    evaluated = set(audit.split["evaluated_people"])
    assert evaluated == set(audit.examples["subject_qid"])
    names = dict(zip(facts["subject_qid"], facts["name"]))
    evaluated_names = {names[q] for q in evaluated}
    assert len(audit.prompts) >= 6
    for path in audit.prompts["path"]:
        stored = StoredPrompt(Path(path), {})
        texts = stored.training_texts()
        assert texts
        trained_on = {t.prompt.split(";")[0].removeprefix("name: ") for t in texts}
        # no evaluated person's record, real or fabricated, is a training text ...
        assert not trained_on & evaluated_names, path
        # ... nor does any evaluated person's full name occur anywhere in one
        assert not any(name in t.prompt for t in texts for name in evaluated_names), path


def test_soft_prompt_generation_is_the_same_batched_or_alone(planted_eme, short_planted_model):
    """peft's prompt wrappers ignore position ids: p-tuning on left-padded batches would change
    the answers, so those arms batch prompts of equal length only (this would fail otherwise)."""
    import json

    from wikimem_platform.eme.soft_prompts import with_soft_prompt
    from wikimem_platform.lm.generation import greedy_generate

    audit, _, _ = planted_eme
    lm = load_model(str(short_planted_model), device="cpu")
    prompts = audit.examples["prompt"].drop_duplicates().head(40).tolist()
    for record in audit.prompts[audit.prompts["model_role"] == "audited"].drop_duplicates("prompt_method").to_dict("records"):
        path = Path(record["path"])
        wrapped = with_soft_prompt(lm, StoredPrompt(path, json.loads((path / "manifest.json").read_text())))
        alone = [greedy_generate(wrapped, [p])[0] for p in prompts]
        unpadded = record["prompt_method"] in ("prompt", "p-tuning")
        assert greedy_generate(wrapped, prompts, unpadded=unpadded) == alone, record["prompt_method"]


def test_a_request_reuses_the_stored_prompts_for_other_people_only(planted_eme, short_planted_model):
    """A data-subject request asks with the person's record as written and through every stored
    soft prompt trained on real records of other people; a prompt trained on the person is skipped."""
    audit, facts, _ = planted_eme
    lm = load_model(str(short_planted_model), device="cpu")
    store = eme.SoftPromptStore(default_cache_dir() / "soft-prompts")
    ex = audit.examples
    soft = ex[(ex["prompt_method"] == "prefix") & (ex["training_data"] == "real") & (ex["n_training"] == full_volume(audit))
              & (ex["model_role"] == "audited") & ex["hit"].astype(bool) & (ex["repetitions"] == 16)]
    person = soft["subject_qid"].iloc[0]
    found = eme.person_extractions(lm, facts[facts["subject_qid"] == person], store)
    arms = found.drop_duplicates(eme.audit.ARM_COLUMNS)
    assert "record" in set(arms["prompt_method"]) and {"prefix", "p-tuning"} <= set(arms["prompt_method"])
    assert set(arms["training_data"]) <= {"none", "real"}  # never a fabricated or control prompt
    # the same prompt through the same stored prompt gives the same answer as in the audit
    mine = found[(found["prompt_method"] == "prefix") & (found["n_training"] == full_volume(audit))].set_index("property")
    for row in soft[soft["subject_qid"] == person].to_dict("records"):
        assert mine.at[row["property"], "output"] == row["output"] and mine.at[row["property"], "hit"]
    # a person who trained the prompts gets the record prompt only
    trained_on = audit.split["training_people"][0]
    alone = eme.person_extractions(lm, facts[facts["subject_qid"] == trained_on], store)
    usable = [p for p in store.stored(lm) if p.manifest["training_data"] == "real"
              and p.manifest["model_role"] == "audited" and trained_on not in p.manifest["training_people"]]
    assert not usable and (alone["prompt_method"] == "record").all()  # every stored prompt was trained on them
    assert len(alone) == (facts["subject_qid"] == trained_on).sum()


def test_generation_reads_the_prefix_the_forward_pass_reads(short_planted_model):
    """The first greedy step with a prefix soft prompt scores the next token exactly as a forward
    pass with the prefix does, and the prefix changes those scores. transformers 5.24.0 with peft
    0.21.2 broke this (first-step scores up to 3.1 logits off the prefixed pass; the prefix arms'
    hit rates no longer told real from fabricated training); pyproject keeps transformers below
    5.24 until it holds."""
    import torch
    from peft import get_peft_model

    from wikimem_platform.eme.soft_prompts import SoftPromptConfig, peft_config

    lm = load_model(str(short_planted_model), device="cpu")
    torch.manual_seed(0)
    prefixed = get_peft_model(lm.model, peft_config(SoftPromptConfig(method="prefix")))
    prefixed.eval()
    for prompt in ("name: Grażyna Pfeiffer; date of birth:", "name: Hildur Mai; occupation:"):
        ids = lm.tokenizer(prompt, return_tensors="pt")
        with torch.inference_mode():
            with prefixed.disable_adapter():
                bare = prefixed(**ids).logits[0, -1]
            forward = prefixed(**ids).logits[0, -1]
            generated = prefixed.generate(**ids, max_new_tokens=1, do_sample=False, temperature=None, top_p=None,
                                          top_k=None, output_scores=True, return_dict_in_generate=True,
                                          pad_token_id=lm.tokenizer.eos_token_id)
        assert (forward - bare).abs().max() > 0.1  # the prefix matters
        torch.testing.assert_close(generated.scores[0][0], forward, rtol=1e-4, atol=1e-4)
