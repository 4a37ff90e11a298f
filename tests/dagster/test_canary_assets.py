"""Data + canary assets materialized in-process on the bundled sample, with every check."""

import pandas as pd
import pytest
from dagster import DagsterInstance, materialize

from assets import canaries as canary_assets
from assets import data as data_assets
from tests.support.checks import CANARY_CHECKS
from expectations.canaries import canary_rows_suite, variants_suite
from tests.support.checks import DATA_CHECKS
from expectations.gx import validate_frame
from resources import ParquetIOManager
from wikimem_platform.canaries.checks import canary_rows_for_checks, variants_per_pair

ASSETS = [data_assets.wikidata_extract, data_assets.property_table, data_assets.subjects,
          data_assets.counterfactuals, data_assets.candidates,
          canary_assets.canary_templates, canary_assets.canaries]


@pytest.fixture(scope="module")
def materialized(tmp_path_factory):
    with DagsterInstance.ephemeral() as instance:
        yield materialize(
            [*ASSETS, *DATA_CHECKS, *CANARY_CHECKS],
            instance=instance,
            resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path_factory.mktemp("parquet")))},
            run_config={"ops": {"subjects": {"config": {"size": 20}}}},
        )


@pytest.mark.slow
def test_canary_assets_pass_all_checks(materialized):
    evaluations = materialized.get_asset_check_evaluations()
    assert {e.check_name for e in evaluations} >= {"canaries_check", "canary_variants_check"}
    failed = [(e.check_name, e.metadata) for e in evaluations if not e.passed]
    assert not failed, failed


@pytest.mark.slow
def test_canaries_cover_every_subject_fact_with_eleven_variants(materialized):
    canaries = materialized.asset_value("canaries")
    subjects = materialized.asset_value("subjects")
    assert set(canaries["subject_qid"]) == set(subjects["qid"])
    counts = canaries.groupby(["subject_qid", "property", "kind"]).size().unstack(fill_value=0)
    assert (counts["baseline"] == 1).all() and (counts["paraphrase"] == 10).all()
    assert (counts.get("contextualized", 0) <= 1).all()
    adams = canaries[(canaries["subject_qid"] == "Q42") & (canaries["property"] == "P106")]
    assert "novelist" in adams["ground_truth_labels"].iloc[0]
    assert adams["subject_similar"].map(lambda names: "Douglas Adams" not in names).all()


def test_canary_checks_fail_on_broken_canaries():
    broken = pd.DataFrame(
        {
            "subject_qid": ["Q1", "Q1"], "property": ["P106", "P106"], "kind": ["baseline", "paraphrase"],
            "template": ["{subject}'s occupation is {value} and {value}.", "{subject} works."],
            "subject": ["Ada Lovelace", "Ada Lovelace"], "subject_generic": ["This person", ""],
            "subject_similar": [["Ada Ecalevol"], ["Ada Ecalevol", "Ada Lovelace"]],
            "ground_truth_labels": [["mathematician"], ["mathematician"]],
        }
    )
    result = validate_frame(canary_rows_for_checks(broken), "canaries", canary_rows_suite())
    failed = {(r.expectation_config.type, r.expectation_config.kwargs.get("column")) for r in result.results if not r.success}
    assert failed == {
        ("expect_column_values_to_be_in_set", "value_placeholders"),
        ("expect_column_values_to_match_regex", "subject_generic"),
        ("expect_column_values_to_be_between", "n_similar"),
        ("expect_column_values_to_be_in_set", "similar_equals_subject"),
        ("expect_column_values_to_be_in_set", "contains_value"),
    }
    assert not validate_frame(variants_per_pair(broken), "variants", variants_suite()).success


@pytest.mark.slow
def test_canary_templates_show_what_the_meaning_filter_dropped(materialized):
    (event,) = materialized.asset_materializations_for_node("canary_templates")
    metadata = event.metadata
    by_rule = metadata["dropped_by_property_and_rule"].value
    assert metadata["dropped_paraphrases"].value == sum(n for rules in by_rule.values() for n in rules.values())
    # the properties are in the sample: writes-only/signs-only, faculty/graduated, political seat
    assert by_rule["P1412"]["disjunction"] > 0 and by_rule["P69"]["relation_word"] > 0
    assert by_rule["P39"]["relation_word"] > 0 and by_rule["P106"]["tense"] > 0
    examples = metadata["dropped_examples"].value
    assert "| property" in examples and "keeps only" in examples
