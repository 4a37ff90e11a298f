"""Audits at top-logprobs access (issue 36) against the same model's full audit: the planted model
served by a real local HTTP server that gives only its 20 most likely next tokens
(`tests.support.endpoint_server`), beside the same model loaded here. Per canary variant the
rank-1 verdict read from the top 20 agrees with the full NLLs' nearly everywhere, a fact the
model's top 20 never showed after the person's name is never memorized, and a data-subject request
with invented controls gives the same verdict per fact, each naming the access that produced it.

Measured at k = 20 on 8 planted people x 4 properties (2 per group: members read 16, 4 and 1
times, non-members; 360 variants, the weights' restricted to the wordings top-logprobs reads):
95.3 % of variants agree (with 3 per group, 540 variants: 95.7 %); non-members 0 variants
memorized (the weights: 1); every pair of the members read 4 and 16 times has the same verdict.
The 16,072 continuations asked 21,852 prefixes; 3,938 were censored."""

import numpy as np
import pandas as pd
import pytest

from tests.fixtures.planted import Release
from tests.support.criteria import criterion
from tests.support.endpoint_server import ScriptedServer
from wikimem_platform.lm.endpoint import EndpointConfig, EndpointModel
from wikimem_platform.lm.loading import load_model
from wikimem_platform.planted import load_manifest
from wikimem_platform.subject_requests.answer import model_verdicts, plain_sentence, release_outcomes
from wikimem_platform.subject_requests.audit import audit_person_on_releases
from wikimem_platform.wikimem.memorization import H_CENSORED, pair_metrics, prepare_scores, variant_metrics
from wikimem_platform.wikimem.scoring import score_canaries, SentenceNllCache, ShardStore

SETTINGS = {"dtype": "float32"}
VARIANT_KEYS = ["subject_qid", "property", "variant_id"]
MIN_VARIANT_AGREEMENT = 0.90  # measured 0.96
PER_GROUP = 2  # people per group (members read 16, 4, 1 times; non-members)


def top_k_model(server, lm, planted_model, k: int = 20) -> EndpointModel:
    config = EndpointConfig(url=f"{server.url}/v1", served_model="toy", tokenizer=str(planted_model),
                            access="top-logprobs", top_k=k, concurrency=2, prompts_per_request=32)
    return EndpointModel(config, name="planted-top", tokenizer=lm.tokenizer)


@pytest.fixture(scope="module")
def lm(planted_model):
    return load_model(str(planted_model), device="cpu")


@pytest.fixture(scope="module")
def study(lm, planted_model, planted_reference, tmp_path_factory):
    """Variant and pair verdicts of PER_GROUP people per group (members read 16, 4 and 1 times, non-members),
    4 properties each, from the weights and from the top 20."""
    tmp = tmp_path_factory.mktemp("top_logprobs_study")
    people = load_manifest(planted_model)["people"]
    groups = {reps: [p["qid"] for p in people if p["member"] and p["repetitions"] == reps][:PER_GROUP]
              for reps in (16, 4, 1)}
    groups[0] = [p["qid"] for p in people if not p["member"]][:PER_GROUP]
    variants, pairs = [], []
    with ScriptedServer(model=lm) as server:
        served = top_k_model(server, lm, planted_model)
        for reps, qids in groups.items():
            for qid in qids:
                plan = planted_reference.plan(qid, n_properties=4, n_controls=0)
                full, _ = score_canaries(lm, plan.canaries, plan.candidates, ShardStore(tmp / "weights"), SETTINGS,
                                         log=lambda _: None)
                top, report = score_canaries(served, plan.canaries, plan.candidates, ShardStore(tmp / "top"), SETTINGS,
                                             log=lambda _: None)
                full = full.merge(top[VARIANT_KEYS].drop_duplicates(), on=VARIANT_KEYS)  # the wordings top-k reads
                by = {}
                for name, scores in (("weights", full), ("top", top)):
                    by[name] = variant_metrics(prepare_scores(scores))[1]
                    pairs.append(pair_metrics(by[name])[["subject_qid", "property", "M"]].assign(source=name, reps=reps))
                variants.append(by["weights"][[*VARIANT_KEYS, "memorized"]].merge(
                    by["top"][[*VARIANT_KEYS, "memorized"]], on=VARIANT_KEYS, how="left", suffixes=("_weights", "_top"))
                    .assign(reps=reps, censored_truth=_censored_truths(top)))
        censoring = served.censoring
    variants = pd.concat(variants, ignore_index=True)
    variants["memorized_top"] = variants["memorized_top"].fillna(False).astype(bool)  # truth dropped: no ranking
    pairs = pd.concat(pairs, ignore_index=True).pivot_table(index=["subject_qid", "property", "reps"], columns="source",
                                                           values="M").reset_index()
    print(variants.groupby("reps")[["memorized_weights", "memorized_top"]].sum(), censoring)
    return variants, pairs, censoring


def _censored_truths(top: pd.DataFrame) -> int:
    return int((top["is_true"] & top[H_CENSORED]).sum())


@pytest.mark.slow
def test_rank_one_read_from_the_top_20_agrees_with_the_full_nlls(study):
    variants, pairs, censoring = study
    agreement = float((variants["memorized_weights"] == variants["memorized_top"]).mean())
    print(f"{len(variants)} variants, agreement {agreement:.3f}; {censoring.censored} of {censoring.sentences} "
          f"continuations censored, {censoring.nodes_asked} prefixes asked")
    assert len(variants) > 250
    assert 0 < censoring.censored < censoring.sentences  # both kinds of reading happened
    criterion("top-logprobs: variants with the full NLLs' rank-1 verdict", agreement, ">=", MIN_VARIANT_AGREEMENT,
              n=len(variants))
    # a fact about someone the model never read is not memorized from its top 20
    strangers = variants[variants["reps"] == 0]
    criterion("top-logprobs: non-members' variants memorized", strangers["memorized_top"].mean(), "<=", 0.0,
              n=len(strangers))
    # the members read 4 and 16 times: the same verdict per fact (M >= 0.8) as the full audit
    strong = pairs[pairs["reps"] >= 4]
    assert len(strong) == 4 * 2 * PER_GROUP
    criterion("top-logprobs: facts read >= 4 times with the full audit's verdict",
              ((strong["weights"] >= 0.8) == (strong["top"] >= 0.8)).mean(), ">=", 1.0, n=len(strong))
    assert (strong["top"] >= 0.8).mean() >= 0.75  # and there is something to agree on


@pytest.fixture(scope="module")
def request_audit(lm, planted_model, planted_reference, tmp_path_factory):
    qid = next(p["qid"] for p in load_manifest(planted_model)["people"] if p["member"] and p["repetitions"] == 16)
    # 3 controls at alpha 0.5: the access's mechanics, not the name prior, whose check would be read at
    # that alpha too (kin_per_token=0: the controls as drawn)
    plan = planted_reference.plan(qid, n_properties=2, n_controls=3, control_alpha=0.5, kin_per_token=0)
    tmp = tmp_path_factory.mktemp("top_logprobs_request")
    with ScriptedServer(model=lm) as server:
        served = top_k_model(server, lm, planted_model)
        models = {"planted@main": lm, "planted-top@1": served}
        result = audit_person_on_releases(
            [Release("planted@main"), Release("planted-top@1", source=server.url)], lambda r: models[r.key], plan,
            shards_for=lambda key: tmp / "shards" / key.replace("@", "-"),
            sentence_cache=lambda m: SentenceNllCache.for_model(tmp / "nll", m.fingerprint, SETTINGS),
            settings=SETTINGS, label="dsr-top", log=lambda _: None)
        # the same request again: every continuation, censored or not, comes from the sentence cache
        again = audit_person_on_releases(
            [Release("planted-top@1", source=server.url)], lambda r: models[r.key], plan,
            shards_for=lambda key: tmp / "shards-again" / key.replace("@", "-"),
            sentence_cache=lambda m: SentenceNllCache.for_model(tmp / "nll", m.fingerprint, SETTINGS),
            settings=SETTINGS, label="dsr-top-2", log=lambda _: None)
    return plan, result, again


@pytest.mark.slow
def test_a_request_at_top_logprobs_gives_the_full_audits_verdicts_and_names_its_access(request_audit):
    plan, result, again = request_audit
    audits = result.audits.set_index("model")
    assert audits["audited"].all(), audits["error"].tolist()
    assert audits.loc["planted-top@1", "access"] == "top-logprobs"
    assert audits.loc["planted-top@1", "precision"] == "endpoint:top-logprobs"
    read, censored = audits.loc["planted-top@1", ["continuations", "continuations_censored"]]
    assert read > 0 and 0 <= censored < read and audits.loc["planted@main", "continuations"] == 0
    from wikimem_platform.subject_requests.letter import _precision_cell  # the annex's precision column

    cell = _precision_cell({"audited": True, "precision": "endpoint:top-logprobs", "continuations": read,
                            "continuations_censored": censored})
    assert cell == f"endpoint:top-logprobs ({censored:,} of {read:,} continuations censored)"
    served = result.scores[result.scores["model"] == "planted-top@1"]
    assert H_CENSORED in served.columns and served[H_CENSORED].notna().all()
    entries = {key: Release(key) for key in result.audits["model"]}
    outcomes = release_outcomes(result.audits, result.scores, result.completions, result.control_scores, entries)
    labels = dict(zip(plan.canaries["property"], plan.canaries["property_label"]))
    local, remote = (model_verdicts(o.audit, plan, labels)[0] for o in outcomes)
    assert list(remote["access"]) == ["top-logprobs"] * 2
    assert list(local["verdict"]) == list(remote["verdict"]) and (local["verdict"] != "not memorized").any()
    assert remote["n_controls"].notna().any()  # read against the invented people, at the same access
    for row in remote.to_dict("records"):
        assert "top-logprobs access" in plain_sentence(row, "you")
        assert "does not show that the model does not hold" not in plain_sentence(row, "you")
    # a fact not found at this access is no evidence either way, and the sentence says so
    unseen = dict(remote.to_dict("records")[0], verdict="not memorized", M=0.0, n_memorized=0)
    assert "it does not show that the model does not hold the fact" in plain_sentence(unseen, "you")
    # the cached continuations keep their censoring: the same scores and verdicts without a request
    key = ["subject_qid", "property", "variant_id", "value"]
    first = served.drop(columns="model").sort_values(key).reset_index(drop=True)
    second = again.scores.drop(columns="model").sort_values(key).reset_index(drop=True)
    first[H_CENSORED] = first[H_CENSORED].astype(bool)  # object beside the weights' rows, which have none
    pd.testing.assert_frame_equal(first[second.columns], second)
    assert int(again.audits["sentences_computed"].iloc[0]) == 0
    assert np.isfinite(second["nll_h"]).all() and (second["nll_h"] >= 0).all()
