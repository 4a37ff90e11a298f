"""The data assets materialized in-process on the bundled sample, with every check."""

from __future__ import annotations

import pandas as pd
import pytest
from dagster import AssetKey, DagsterInstance, materialize

from assets import data as data_assets
from tests.support.checks import DATA_CHECKS
from expectations.data import claims_suite, counterfactual_counts, counterfactual_counts_suite, subjects_suite
from expectations.gx import check_result, validate_frame
from resources import ParquetIOManager

DATA_ASSETS = [data_assets.wikidata_extract, data_assets.property_table, data_assets.subjects,
               data_assets.counterfactuals, data_assets.candidates]


@pytest.fixture(scope="module")
def materialized(tmp_path_factory):
    base = tmp_path_factory.mktemp("parquet")
    with DagsterInstance.ephemeral() as instance:
        result = materialize(
            [*DATA_ASSETS, *DATA_CHECKS],
            instance=instance,
            resources={"io_manager": ParquetIOManager(base_dir=str(base))},
            run_config={"ops": {"subjects": {"config": {"size": 50, "seed": 0}}}},
        )
        yield result


def output(result, key: str) -> pd.DataFrame:
    return result.asset_value(key) if hasattr(result, "asset_value") else result.output_for_node(key)


def test_all_data_checks_pass(materialized):
    evaluations = materialized.get_asset_check_evaluations()
    assert len(evaluations) == len(DATA_CHECKS)
    failed = [(e.asset_key.to_user_string(), e.check_name, e.metadata) for e in evaluations if not e.passed]
    assert not failed, failed


def test_douglas_adams_has_labelled_occupations(materialized):
    claims = materialized.asset_value("claims")
    adams = claims[(claims["qid"] == "Q42") & (claims["property"] == "P106")]
    assert {"novelist", "playwright", "screenwriter"} <= set(adams["value_label"])
    humans = materialized.asset_value("humans").set_index("qid")
    assert humans.loc["Q42", "label"] == "Douglas Adams"


def test_cohorts_are_disjoint_and_ordered_by_web_presence(materialized):
    subjects = materialized.asset_value("subjects")
    well = subjects[subjects["cohort"] == "well-known"]
    lesser = subjects[subjects["cohort"] == "lesser-known"]
    assert len(well) == len(lesser) == 50
    assert not set(well["qid"]) & set(lesser["qid"])
    assert well["web_presence"].min() > lesser["web_presence"].max()
    assert well["web_presence"].is_monotonic_decreasing and lesser["web_presence"].is_monotonic_decreasing
    # Unknown web presence (BEAR-only humans) is never drawn as "lesser-known".
    humans = materialized.asset_value("humans").set_index("qid")
    assert humans.loc[subjects["qid"], "web_presence"].notna().all()
    assert "Q42" in set(well["qid"])


def test_property_table_and_counterfactuals_on_real_facts(materialized):
    table = materialized.asset_value("property_table")
    assert {"P106", "P19", "P27", "P569"} <= set(table["property"])
    assert len(table) >= 15
    cfs = materialized.asset_value("counterfactuals")
    assert cfs.groupby("property").size().max() <= 100
    assert not cfs.duplicated(["property", "value"]).any()
    subjects = set(materialized.asset_value("subjects")["qid"])
    assert not subjects & set(cfs["human_qid"])  # counterfactuals come from other humans
    candidates = materialized.asset_value("candidates")
    per_pair = candidates.groupby(["subject_qid", "property"])["is_true"].agg(["sum", "size"])
    assert (per_pair["sum"] >= 1).all() and (per_pair["size"] > per_pair["sum"]).all()


def test_extract_metadata_reports_skips(materialized):
    [event] = [
        m for m in materialized.get_asset_materialization_events()
        if m.asset_key == AssetKey("humans")
    ]
    metadata = event.materialization.metadata
    assert metadata["malformed_lines_skipped"].value == 0
    assert metadata["rows"].value > 1000


def test_gx_check_fails_on_a_broken_frame():
    broken = pd.DataFrame(
        {
            "qid": ["Q1", "Q1", "not-a-qid"],
            "label": ["Ada", "Ada", " "],
            "aliases": [[], [], []],
            "cohort": ["well-known", "well-known", "famous"],
            "web_presence": [0.9, 0.9, None],
            "cohort_rank": [1, 1, 2],
        }
    )
    result = check_result(broken, "subjects", subjects_suite())
    assert not result.passed
    assert result.metadata["failed_expectations"].value == 5  # regex, label, unique, cohort, web presence
    validation = validate_frame(broken.iloc[[0]], "subjects", subjects_suite())
    failed = {r.expectation_config.type for r in validation.results if not r.success}
    assert failed == {"expect_table_row_count_to_be_between"}


def test_gx_claims_check_rejects_unknown_datatype():
    claims = pd.DataFrame(
        {"qid": ["Q1"], "property": ["P18"], "datatype": ["commonsMedia"], "value": ["x.jpg"], "value_label": ["x.jpg"]}
    )
    assert not validate_frame(claims, "claims", claims_suite()).success


def test_gx_counterfactual_counts_flag_a_property_without_counterfactuals():
    table = pd.DataFrame({"property": ["P106", "P19"]})
    cfs = pd.DataFrame({"property": ["P106"] * 3})
    counts = counterfactual_counts(table, cfs)
    assert counts.set_index("property")["counterfactuals"].to_dict() == {"P106": 3, "P19": 0}
    assert not validate_frame(counts, "counts", counterfactual_counts_suite()).success


def test_entity_terms_hold_the_configured_languages(materialized):
    terms = materialized.asset_value("entity_terms")
    q42 = terms[terms["qid"] == "Q42"].set_index("language")
    assert q42.loc["de", "description"] == "britischer Schriftsteller" and q42.loc["pl", "label"] == "Douglas Adams"
    assert set(terms["language"]) == {"en", "de", "fr", "es", "it", "pl", "nl", "pt"}
    [event] = [m for m in materialized.get_asset_materialization_events() if m.asset_key == AssetKey("entity_terms")]
    assert event.materialization.metadata["rows_per_language"].value["pl"] > 2000


def test_a_bad_language_fails_the_extract_before_any_chunk_is_read(tmp_path):
    with DagsterInstance.ephemeral() as instance:
        result = materialize([data_assets.wikidata_extract], instance=instance, raise_on_error=False,
                             resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
                             run_config={"ops": {"wikidata_extract": {"config": {"languages": ["de", "Polish"]}}}})
    assert not result.success
    [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert failure.step_key == "wikidata_extract.plan_dump_chunks"
    assert "languages: 'Polish' is not a Wikidata language code" in failure.event_specific_data.error.to_string()
