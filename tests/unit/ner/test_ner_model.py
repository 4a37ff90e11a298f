"""The NER audit on a really fine-tuned model whose training names are known (NER prompt paper
§3.3-§5.3): no out-of-sample name was ever trained on, trained names get a measurably higher
confidence, the best dev prompt still detects memorization on test names (whether it beats the
bare name there is recorded, not asserted: on this model it does not hold for every seed)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.support.criteria import criterion, observe
from tests.support.trained import TEST_SEED, with_threads
from wikimem_platform.ner.audit import (
    BEST_MODIFIED_PT,
    BEST_PT,
    EMPTY_PT,
    ENSEMBLE_NAMES,
    ner_audit,
    NerAudit,
    NerAuditConfig,
    prompt_scores_figure,
    STRATEGY_GROUPS,
    strategy_table,
    WORST_MODIFIED_PT,
    WORST_PT,
)
from wikimem_platform.ner.corpus import leaked_names
from wikimem_platform.ner.engineering import prompt_tokens
from wikimem_platform.ner.schema import ENTITY_TYPES, MASK
from wikimem_platform.ner.training import (
    default_ner_dir,
    is_trained,
    load_manifest,
    load_ner_model,
    manifest_names,
    ner_config_hash,
    NerTrainConfig,
    read_training_sentences,
    train_ner_model,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]  # the first run trains the model

# A reduced audit: the asset runs 400 prompts per type on every name; this keeps the warm module
# under a minute on two busy cores (about 16,000 sentences; 20 names per class in each half, so
# single prompts' M-MEM carry a few points of name-sampling noise).
TEST_AUDIT = NerAuditConfig(prompts_per_type=40, names_per_class=40, pte_names_per_class=6)


@pytest.fixture(scope="session")
def ner_model_dir() -> Path:
    """The default NER model, trained once and cached by config hash under the models cache
    (`<cache>/ner-minilm-<hash>`). Cold (measured on the 2-core dev machine, one thread): 200 s
    with the other core nearly idle (193-227 s of CPU in the training loop), 354 s while two
    other jobs ran; warm: a manifest check. The audit below (40 prompts per type, 40 names per
    class, ~16,000 sentences) takes 44-52 s."""
    config = ner_test_config()
    return train_ner_model(default_ner_dir(config), config)


@pytest.fixture(scope="module")
def audit(ner_model_dir) -> NerAudit:
    return ner_audit(load_ner_model(ner_model_dir), config=TEST_AUDIT)


def ner_test_config() -> NerTrainConfig:
    """The default config, with the run's seed and thread count (tests/support/trained.py)."""
    return with_threads(NerTrainConfig(seed=TEST_SEED))


def test_the_model_is_cached_under_its_config_hash(ner_model_dir):
    assert is_trained(ner_model_dir, ner_config_hash(ner_test_config()))
    assert ner_model_dir.name.endswith(ner_config_hash(ner_test_config()))
    assert train_ner_model(ner_model_dir, ner_test_config()) == ner_model_dir  # current: returned without training


def test_no_out_of_sample_name_is_in_any_training_sentence(ner_model_dir):
    manifest = load_manifest(ner_model_dir)
    names = manifest_names(manifest)
    texts = [s.text for s in read_training_sentences(ner_model_dir)]
    assert leaked_names(names.loc[~names["is_in"], "name"], texts) == []
    # The check finds names that are there: every in-sample name is.
    assert leaked_names(names.loc[names["is_in"], "name"], texts) == sorted(names.loc[names["is_in"], "name"])
    assert not set(names.loc[names["is_in"], "name"]) & set(names.loc[~names["is_in"], "name"])
    for entity_type in ENTITY_TYPES:
        counts = names[names["entity_type"] == entity_type].groupby("is_in").size()
        assert counts[True] == counts[False] >= 40, entity_type
    assert manifest["training"]["final_loss"] < manifest["training"]["epoch_losses"][0]


def test_trained_names_get_higher_confidence(audit):
    mean_confidence = audit.confidences.groupby(["entity_type", "is_in"])["confidence"].mean().unstack()
    criterion("NER: confidence, trained minus untrained names (lowest entity type)",
              (mean_confidence[True] - mean_confidence[False]).min(), ">", 0, context=mean_confidence)
    mean_m_mem = audit.prompt_scores.groupby("entity_type")[["m_mem_dev", "m_mem_test"]].mean()
    criterion("NER: mean M-MEM over prompts (lowest entity type and half)", mean_m_mem.min().min(), ">", 0.55,
              context=mean_m_mem)


def test_best_dev_prompt_detects_memorization_on_test(audit):
    table = audit.strategies.set_index(["entity_type", "strategy"])
    report = strategy_table(audit.strategies).round(3)
    criterion("NER: M-MEM on test of the best dev prompt (lowest entity type)",
              min(table.loc[(entity_type, BEST_PT), "m_mem_test"] for entity_type in ENTITY_TYPES), ">", 0.5, context=report)
    per = table.loc["PER"]
    # The paper's Table 6 finding (the best dev prompt beats the bare name on test) is recorded,
    # not asserted: on this model it is a coin flip. Kendall τ between the prompts' dev and test
    # M-MEM is ~0.1 for PER, B-PT wins in 60% of 200 random splits of the seed-0 model's names
    # (scripts/ner_split_robustness.py), and the seed-1 model loses it for every type even with
    # all 100 + 100 names (PER 0.739 vs 0.774). README "Memorization in NER models".
    observe("NER: PER M-MEM on test, best dev prompt minus the bare name",
            per.loc[BEST_PT, "m_mem_test"] - per.loc[EMPTY_PT, "m_mem_test"])
    criterion("NER: PER M-MEM on dev, best minus worst prompt", per.loc[BEST_PT, "m_mem_dev"] - per.loc[WORST_PT, "m_mem_dev"],
              ">", 0)


def test_sensitivity_and_prompt_tables_are_complete_and_finite(audit):
    sensitivity = audit.sensitivity.set_index("entity_type")
    assert list(sensitivity.index) == list(ENTITY_TYPES)
    for column in ("delta", "sigma", "delta_test", "sigma_test", "tau_dev_test"):
        assert np.isfinite(sensitivity[column]).all(), column
    assert (sensitivity["delta"] > 0).all() and (sensitivity["sigma"] > 0).all()
    assert (sensitivity["delta"] >= sensitivity["sigma"]).all()
    assert (sensitivity["n_prompts"] == 40).all()
    scores = audit.prompt_scores
    assert len(scores) == 120 and scores[["m_mem_dev", "m_mem_test"]].notna().all().all()
    for entity_type, row in sensitivity.iterrows():
        block = scores[scores["entity_type"] == entity_type].set_index("prompt_id")
        assert row["delta"] == pytest.approx(block["m_mem_dev"].max() - block["m_mem_dev"].min())
        assert block.loc[row["best"], "prompt"] == row["best_prompt"]
    names = audit.names
    assert set(names.groupby(["entity_type", "is_in", "split"]).size().index.droplevel(0)) == {
        (True, "dev"), (True, "test"), (False, "dev"), (False, "test")}
    assert len(audit.confidences) == sum(40 * (names["entity_type"] == t).sum() for t in ENTITY_TYPES)


def test_strategies_table_has_every_strategy_of_tables_6_and_7(audit):
    strategies = audit.strategies
    assert strategies.groupby("entity_type").size().to_dict() == {t: len(STRATEGY_GROUPS) for t in ENTITY_TYPES}
    assert set(strategies["strategy"]) == set(STRATEGY_GROUPS)
    assert strategies[["m_mem_dev", "m_mem_test"]].apply(np.isfinite).all().all()
    assert set(strategies.loc[strategies["group"] == "EPT", "strategy"]) == set(ENSEMBLE_NAMES.values())
    table = strategies.set_index(["entity_type", "strategy"])
    for entity_type in ENTITY_TYPES:
        # B-PT and W-PT are the extremes of the prompt set on dev, and the best-modified prompt
        # is a shorter version of one of the two.
        block = audit.prompt_scores[audit.prompt_scores["entity_type"] == entity_type]
        assert table.loc[(entity_type, BEST_PT), "m_mem_dev"] == pytest.approx(block["m_mem_dev"].max())
        assert table.loc[(entity_type, WORST_PT), "m_mem_dev"] == pytest.approx(block["m_mem_dev"].min())
        originals = [table.loc[(entity_type, s), "prompt"] for s in (BEST_PT, WORST_PT)]
        for strategy in (BEST_MODIFIED_PT, WORST_MODIFIED_PT):
            modified = [t for t, _ in prompt_tokens(table.loc[(entity_type, strategy), "prompt"])]
            assert MASK in modified
            assert any(_is_shorter_subsequence(modified, [t for t, _ in prompt_tokens(o)]) for o in originals)


def test_token_removal_chains_end_with_one_token_besides_mask(audit):
    engineering = audit.engineering
    for (entity_type, chain), steps in engineering.groupby(["entity_type", "chain"]):
        assert steps["step"].tolist() == list(range(len(steps)))
        assert len(steps) >= 2, (entity_type, chain)
        last = [token for token, _ in prompt_tokens(steps["prompt"].iloc[-1])]
        assert len(last) == 2 and MASK in last, last
        assert math.isfinite(steps["m_mem"].iloc[-1])


def _is_shorter_subsequence(short: list[str], long: list[str]) -> bool:
    remaining = iter(long)
    return len(short) < len(long) and all(token in remaining for token in short)


def test_figure_has_a_box_per_entity_type(audit):
    figure = prompt_scores_figure(audit.prompt_scores)
    assert [trace.name for trace in figure.data] == list(ENTITY_TYPES)
    assert sum(len(trace.y) for trace in figure.data) == len(audit.prompt_scores)
    assert isinstance(strategy_table(audit.strategies), pd.DataFrame)


def test_a_registered_ner_release_gets_its_own_audit_run_and_assets(ner_model_dir, tmp_path, monkeypatch):
    """The registry infers the task from the model's config; the sensor sends a token-classification
    release to the `ner_audit` job (no reference data needed); `ner_memorization` materializes on
    its partition and the cross-release table holds its dev and test columns."""
    from dagster import DagsterInstance, build_sensor_context, load_assets_from_modules, materialize

    from assets import canaries as canary_assets
    from assets import data as data_assets
    from assets import ner as ner_assets
    from assets import scoring as scoring_assets
    from assets import wording as wording_assets
    from resources import ParquetIOManager, RegistryResource, ScoringResource
    from sensors import registry as sensors
    from wikimem_platform.registry import Registry

    monkeypatch.delenv(sensors.AUDIT_CONFIG_ENV, raising=False)
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    entry = Registry(url).register_source(str(ner_model_dir), name="ner-minilm")
    assert entry.task == "token-classification"
    resources = {"model_registry": RegistryResource(url=url), "io_manager": ParquetIOManager(base_dir=str(tmp_path / "pq"))}
    with DagsterInstance.ephemeral() as instance:
        with build_sensor_context(instance=instance, resources={"model_registry": resources["model_registry"]}) as context:
            result = sensors.model_registry_sensor(context)
        [request] = result.run_requests
        assert (request.job_name, request.partition_key) == (sensors.ner_audit_job.name, entry.key)
        instance.add_dynamic_partitions("models", [entry.key])
        small = {"prompts_per_type": 8, "names_per_class": 10, "pte_names_per_class": 4}
        audited = materialize([ner_assets.ner_memorization], instance=instance, partition_key=entry.key,
                              resources=resources, run_config={"ops": {"ner_memorization": {"config": small}}})
        table = audited.asset_value("ner_memorization")
        assert len(table) == 3 * 8 and table[["m_mem_dev", "m_mem_test"]].stack().between(0, 1).all()
        meta = audited.asset_materializations_for_node("ner_memorization")[0].metadata
        assert {"PER_delta", "LOC_sigma", "ORG_tau_dev_test"} <= set(meta) and Path(meta["plot"].value).is_file()
        assert "B-PT" in meta["strategies"].value and "MIN-C" in meta["strategies"].value
        # The cross-release job builds both tables; with no causal release audited, the wording one is empty.
        defined = load_assets_from_modules([data_assets, canary_assets, scoring_assets, wording_assets, ner_assets])
        across_assets = [ner_assets.ner_memorization_across_models, wording_assets.wording_sensitivity_across_models]
        across = materialize(defined, selection=across_assets, instance=instance,
                             resources={**resources, "scoring": ScoringResource()})
        assert across.asset_value("wording_sensitivity_across_models").empty
        assert across.asset_materializations_for_node("wording_sensitivity_across_models")[0].metadata["releases"].value == 0
        wide = across.asset_value("ner_memorization_across_models")
        assert {f"{entry.key} dev", f"{entry.key} test"} <= set(wide.columns) and len(wide) == 24
        assert "kendall_tau_PER" in across.asset_materializations_for_node("ner_memorization_across_models")[0].metadata
