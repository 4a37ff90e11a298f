"""A data-subject request audited on a release served behind an OpenAI-compatible endpoint
(issue 36): the planted model served by a real local HTTP server (`tests.support.endpoint_server`,
its own forward pass and `generate`, as vLLM serves a model) is audited beside the same model
loaded here, controls included: the same NLLs, completions, extractions and verdicts, every fact
naming the access that produced it, and soft prompts skipped on the served model with the reason."""

import numpy as np
import pandas as pd
import pytest

from tests.fixtures.planted import Release
from tests.support.endpoint_server import ScriptedServer
from wikimem_platform.eme.soft_prompts import SoftPromptStore
from wikimem_platform.lm.endpoint import EndpointConfig, EndpointModel
from wikimem_platform.lm.loading import load_model
from wikimem_platform.planted import load_manifest
from wikimem_platform.subject_requests.answer import model_verdicts, plain_sentence, release_outcomes
from wikimem_platform.subject_requests.audit import (
    audit_person_on_model,
    audit_person_on_releases,
    CONTROL_PROBE_PREFIX,
)
from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore

SETTINGS = {"dtype": "float32"}
NLL_TOLERANCE = 1e-3  # nats



@pytest.fixture(scope="module")
def plan(planted_model, planted_reference):
    """The member read 16 times, two properties, 3 invented controls."""
    qid = next(p["qid"] for p in load_manifest(planted_model)["people"] if p["member"] and p["repetitions"] == 16)
    return planted_reference.plan(qid, n_properties=2, n_controls=3, control_alpha=0.5)


@pytest.fixture(scope="module")
def served(planted_model, plan, tmp_path_factory):
    """The plan audited on the planted model loaded here and on the same model served at a local
    endpoint."""
    lm = load_model(str(planted_model), device="cpu")
    tmp = tmp_path_factory.mktemp("endpoint_request")
    with ScriptedServer(model=lm) as server:
        endpoint = EndpointModel(EndpointConfig(url=f"{server.url}/v1", served_model="toy", tokenizer=str(planted_model),
                                                concurrency=2, prompts_per_request=32),
                                 name="planted-served", tokenizer=lm.tokenizer)
        models = {"planted@main": lm, "planted-served@1": endpoint}
        messages = []
        result = audit_person_on_releases(
            [Release("planted@main"), Release("planted-served@1", source=server.url)], lambda r: models[r.key], plan,
            shards_for=lambda key: tmp / "shards" / key.replace("@", "-"),
            sentence_cache=lambda m: SentenceNllCache.for_model(tmp / "nll", m.fingerprint, SETTINGS),
            settings=SETTINGS, label="dsr-1", log=messages.append)
        sent = list(server.requests)  # what the request audit sent (the audit below sends more)
        # a soft prompt store given: the served model cannot take one, and the log says why
        skipped = []
        alone = audit_person_on_model(endpoint, plan, ShardStore(tmp / "shards" / "planted-served-1"),
                                      SentenceNllCache.for_model(tmp / "nll", endpoint.fingerprint, SETTINGS), SETTINGS,
                                      log=skipped.append, soft_prompts=SoftPromptStore(tmp / "soft"))
        yield {"plan": plan, "result": result, "requests": sent, "lm": lm, "endpoint": endpoint,
               "messages": messages, "skipped": skipped, "alone": alone}


def _model(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    return frame[frame["model"] == key].drop(columns="model").reset_index(drop=True)


def test_the_served_release_is_audited_with_the_local_numbers_and_completions(served):
    result, lm, endpoint = served["result"], served["lm"], served["endpoint"]
    audits = result.audits.set_index("model")
    assert audits["audited"].all(), audits["error"].tolist()
    assert audits.loc["planted@main", "access"] == "weights"
    assert audits.loc["planted-served@1", "access"] == "prompt-logprobs"
    assert audits.loc["planted-served@1", "fingerprint"] == endpoint.fingerprint != lm.fingerprint
    assert audits.loc["planted-served@1", "precision"] == "endpoint:prompt-logprobs"
    keys = ["subject_qid", "property", "variant_id", "value"]
    for frame in (result.scores, result.control_scores):
        a = _model(frame, "planted@main").sort_values(keys).reset_index(drop=True)
        b = _model(frame, "planted-served@1").sort_values(keys).reset_index(drop=True)
        assert len(a) == len(b) > 50 and a[keys].equals(b[keys])
        gaps = np.concatenate([np.abs(a["nll_h"] - b["nll_h"]), np.abs(a["nll_h0"] - b["nll_h0"])])
        assert gaps.max() < NLL_TOLERANCE
    # completions: the canary wordings, the record prompt as written, and the controls' where the
    # person's named the value, all through the server's greedy completion, word for word
    order = ["probe", "property", "prompt"]
    a = _model(result.completions, "planted@main").sort_values(order).reset_index(drop=True)
    b = _model(result.completions, "planted-served@1").sort_values(order).reset_index(drop=True)
    assert {"canary", "record"} <= set(b["probe"]) and b["probe"].str.startswith(CONTROL_PROBE_PREFIX).any()
    assert a[[*order, "completion", "hit"]].equals(b[[*order, "completion", "hit"]])
    assert b["hit"].any()  # the member's facts are said, so the controls' completions were asked for
    generated = [p for path, p, _ in served["requests"] if path == "/v1/completions" and not p.get("echo")]
    assert sum(len(p["prompt"]) for p in generated) == len(b)  # every completion came from the server
    assert all(p["temperature"] == 0 and isinstance(p["prompt"][0], list) for p in generated)  # greedy, token ids


def test_every_fact_carries_its_access_and_the_verdicts_agree(served):
    result, plan = served["result"], served["plan"]
    entries = {key: Release(key) for key in result.audits["model"]}
    outcomes = release_outcomes(result.audits, result.scores, result.completions, result.control_scores, entries)
    labels = dict(zip(plan.canaries["property"], plan.canaries["property_label"]))
    local, remote = (model_verdicts(o.audit, plan, labels)[0] for o in outcomes)
    assert list(local["access"]) == ["weights"] * 2 and list(remote["access"]) == ["prompt-logprobs"] * 2
    same = ["property", "verdict", "M", "n_memorized", "truth_rank", "completion_hit", "completion_evidence", "emitted",
            "n_controls", "controls_as_extreme", "p_value", "p_family", "family_reading", "name_suggests"]
    pd.testing.assert_frame_equal(local[same], remote[same])
    # the member read 16 times beats its controls: something to agree on (at alpha 0.5 the name check
    # may then still call it the name's doing, the same on both)
    assert (local["p_value"] <= plan.control_alpha).any()
    assert local["n_controls"].notna().any()  # and read against the invented people on both
    for row in remote.to_dict("records"):
        assert "through the model as it is served (an OpenAI-compatible endpoint, prompt-logprobs access" in \
            plain_sentence(row, "you")
    for row in local.to_dict("records"):
        assert "endpoint" not in plain_sentence(row, "you")


def test_soft_prompts_are_skipped_on_a_served_model_with_the_reason(served):
    assert ("soft prompts skipped: planted-served is served at an endpoint and a soft prompt needs the model's weights; "
            "the record prompts are asked as written only") in served["skipped"]
    alone = served["alone"]
    assert alone.access == "prompt-logprobs" and alone.report.sentences_computed == 0  # all from its cache
    assert set(alone.completions["probe"]) == {"canary", "record"}

