"""A small audit configuration shared by the scoring tests: real sample, real model, few rows."""

from dagster import DagsterInstance, materialize

from assets import canaries as canary_assets
from assets import data as data_assets
from assets import scoring as scoring_assets
from tests.support.checks import CANARY_CHECKS
from tests.support.checks import DATA_CHECKS
from tests.support.checks import SCORING_CHECKS
from resources import ParquetIOManager, RegistryResource, ScoringResource

UPSTREAM = [data_assets.wikidata_extract, data_assets.property_table, data_assets.subjects,
            data_assets.counterfactuals, data_assets.candidates,
            canary_assets.canary_templates, canary_assets.canaries]
UPSTREAM_CONFIG = {
    "ops": {
        "property_table": {"config": {"min_humans": 2000}},  # P106, P27, P19, P20
        "subjects": {"config": {"size": 2}},
        "counterfactuals": {"config": {"per_property": 20}},
    }
}


def scores_config(properties=("P106",), per_cohort=1) -> dict:
    return {"ops": {"scores": {"config": {"properties": list(properties), "max_subjects_per_cohort": per_cohort}}}}


def resources(tmp_path, registry_url: str) -> dict:
    return {
        "io_manager": ParquetIOManager(base_dir=str(tmp_path / "parquet")),
        "scoring": ScoringResource(shard_dir=str(tmp_path / "shards"), nll_cache_dir=str(tmp_path / "nll_cache")),
        "model_registry": RegistryResource(url=registry_url),
    }


def materialize_upstream(instance: DagsterInstance, tmp_path, registry_url: str):
    return materialize([*UPSTREAM, *DATA_CHECKS, *CANARY_CHECKS], instance=instance,
                       resources=resources(tmp_path, registry_url), run_config=UPSTREAM_CONFIG)


def materialize_scores(instance: DagsterInstance, tmp_path, registry_url: str, partition: str, **config):
    return materialize(
        [*UPSTREAM, scoring_assets.scores, scoring_assets.memorization, *SCORING_CHECKS],
        selection=[scoring_assets.scores, scoring_assets.memorization],
        instance=instance, partition_key=partition,
        resources=resources(tmp_path, registry_url), run_config=scores_config(**config),
    )
