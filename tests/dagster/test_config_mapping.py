"""Run configs derived into the library's config dataclasses (`assets.config.to_library`): every
shared field by name, lists as tuples, the launchpad's defaults unchanged."""

import pytest
from dagster import Config

from assets.config import to_library
from assets.ner import NerMemorizationConfig
from assets.probes import EmeProbeConfig
from wikimem_platform import eme, ner


def test_the_eme_probe_config_passes_every_field():
    config = EmeProbeConfig(methods=["prefix", "prompt"], prefix_lengths=[5, 10], volumes=[10, 20], epochs=3,
                            control="none", max_eval_people=7, seed=2)
    expected = eme.EmeConfig(
        n_identifiers=config.n_identifiers, train_share=config.train_share, split_seed=config.split_seed,
        text_prompts=tuple(config.text_prompts), methods=("prefix", "prompt"), prefix_lengths=(5, 10),
        training_data=tuple(config.training_data), volumes=(10, 20), epochs=3, batch_size=config.batch_size,
        learning_rate=config.learning_rate, control="none", max_eval_people=7,
        max_training_people=config.max_training_people, seed=2)
    assert config.eme_config() == expected


def test_the_launchpad_defaults_stay():
    defaults = EmeProbeConfig().eme_config()
    assert defaults.prefix_lengths == (5,) and defaults.epochs == 20 and defaults.max_eval_people == 100
    assert defaults.max_training_people == 50 and defaults.volumes == () and defaults.control == "untrained"
    assert defaults.max_new_tokens == eme.EmeConfig().max_new_tokens  # not in the run config: the library's


def test_the_ner_config_leaves_out_what_only_the_asset_uses():
    config = NerMemorizationConfig(prompts_per_type=5, names_per_class=3, entity_types=["PER"], names_path="x.jsonl", seed=1)
    assert to_library(config, ner.NerAuditConfig) == ner.NerAuditConfig(
        prompts_per_type=5, names_per_class=3, pte_names_per_class=20, seed=1, entity_types=("PER",))


def test_overrides_win_and_library_checks_still_run():
    class Small(Config):
        methods: list[str] = ["bogus"]
        epochs: int = 1

    assert to_library(Small(methods=["prefix"]), eme.EmeConfig, epochs=4).epochs == 4
    with pytest.raises(ValueError, match="methods: unknown"):
        to_library(Small(), eme.EmeConfig)
