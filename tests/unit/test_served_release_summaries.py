"""The per-model summaries of a release served behind an endpoint (issue 36: endpoint releases
flow through the model audit like local ones): the planted model served by a real local HTTP
server (`tests.support.endpoint_server`, its own forward pass and `generate`, as vLLM serves a
model) against the same model loaded here. MIA: every attack the server's per-token
log-probabilities allow gives the local scores, and the rest are refused by name; CRM: the same
completions, hits and reconstruction log-likelihoods; EME: the same text-prompt answers, soft
prompts skipped with the reason."""

import numpy as np
import pandas as pd
import pytest

from tests.support.endpoint_server import ScriptedServer
from wikimem_platform import eme
from wikimem_platform.crm import examples as crm_examples
from wikimem_platform.eme.records import TEXT_PROMPTS
from wikimem_platform.lm.endpoint import EndpointConfig, EndpointModel
from wikimem_platform.lm.loading import load_model
from wikimem_platform.mia import membership, run_attacks, unavailable_attacks
from wikimem_platform.mia.model_pass import context_length
from wikimem_platform.mia.neighbours import word_neighbours
from wikimem_platform.planted import load_manifest

TOLERANCE = 1e-3  # nats: one unpadded forward per prompt on the server, batched on this side


@pytest.fixture(scope="module")
def both(planted_model):
    lm = load_model(str(planted_model), device="cpu")
    with ScriptedServer(model=lm) as server:
        served = EndpointModel(EndpointConfig(url=f"{server.url}/v1", served_model="toy", tokenizer=str(planted_model),
                                              concurrency=2, prompts_per_request=16),
                               name="planted-served", tokenizer=lm.tokenizer)
        yield lm, served


def test_membership_attacks_through_the_server_give_the_local_scores(both, planted_model):
    lm, served = both
    texts = membership.planted_membership(planted_model, max_per_class=12, seed=0)
    shots = texts[~texts["label"]]["text"].head(2).tolist()
    options = dict(neighbours=word_neighbours(texts["text"].tolist(), n=2, seed=0), nonmember_shots=shots,
                   member_shots=texts[texts["label"]]["text"].head(2).tolist(),
                   reference_corpus=texts["text"].tolist())
    local = run_attacks(lm, texts["text"].tolist(), **options)
    remote = run_attacks(served, texts["text"].tolist(), **options)
    assert context_length(served) == context_length(lm) == 128  # from the server's model list
    # min-k%++ needs the next-token distribution: the one attack of this pass the server cannot give
    assert set(local.columns) - set(remote.columns) == {"min_k_pp"} and set(remote.columns) < set(local.columns)
    for column in remote.columns:
        assert np.allclose(remote[column], local[column], atol=TOLERANCE, equal_nan=True), column
    assert set(unavailable_attacks(served)) == {"min_k_pp", "gradient_norm", "samia"} and not unavailable_attacks(lm)
    with pytest.raises(ValueError, match=r"gradient_norm: not available for planted-served, served at an endpoint "
                                         r"\(it needs the model's weights"):
        run_attacks(served, texts["text"].tolist()[:2], gradient_norm=True)


def test_crm_examples_through_the_server_give_the_local_completions_and_reconstructions(both, planted_model):
    lm, served = both
    people = [p for p in load_manifest(planted_model)["people"] if p["member"]][:6]
    examples = pd.DataFrame([{"prompt": f"{p['label']} worked as", "targets": [f["value_label"] for f in p["facts"]]}
                             for p in people])
    local = crm_examples.run_examples(lm, examples, max_new_tokens=8)
    remote = crm_examples.run_examples(served, examples, max_new_tokens=8)
    assert remote["output"].tolist() == local["output"].tolist()
    assert remote["hit"].tolist() == local["hit"].tolist()
    assert np.allclose(remote["recon_ll"], local["recon_ll"], atol=TOLERANCE)
    assert remote["recon_ll"].notna().all()


def test_eme_through_the_server_asks_the_text_prompts_and_skips_soft_prompts_with_the_reason(both, planted_model, tmp_path):
    lm, served = both
    facts, cohorts = eme.planted_inputs(planted_model)
    config = eme.EmeConfig(methods=("prefix",), prefix_lengths=(5,), max_eval_people=8, seed=0)
    said = []
    remote = eme.eme_audit(served, facts, eme.SoftPromptStore(tmp_path / "soft"), config, cohorts=cohorts, log=said.append)
    local = eme.eme_audit(lm, facts, eme.SoftPromptStore(tmp_path / "soft"),
                          eme.EmeConfig(methods=(), control="none", prefix_lengths=(5,), max_eval_people=8, seed=0),
                          cohorts=cohorts)
    assert any("soft prompts and the untrained control are skipped (they need the model's weights)" in m for m in said)
    assert set(remote.examples["prompt_method"]) == set(TEXT_PROMPTS) and remote.prompts.empty
    key = ["prompt_method", "subject_qid", "property"]
    merged = remote.examples.merge(local.examples, on=key, suffixes=("_served", "_local"))
    assert len(merged) == len(local.examples) == len(remote.examples) > 0
    assert (merged["output_served"] == merged["output_local"]).all()
