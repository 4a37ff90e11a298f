"""Table 1 and Fig. 1 across releases, against numbers computed by hand, and the cross-model report."""

import pandas as pd
import pytest

from wikimem_platform.reference.cohorts import LESSER_KNOWN, WELL_KNOWN
from wikimem_platform.reports import across_models as am, compliance as reports

WK, LK = WELL_KNOWN, LESSER_KNOWN


def _pairs(rows):
    frame = pd.DataFrame(rows, columns=["subject_qid", "property", "cohort", "M", "z_star"])
    return frame.assign(strict=frame["M"].eq(1.0), lenient=frame["M"].gt(0), at_threshold=frame["M"].ge(0.8))


# base: Q1 (well-known) P27 M=1 z 3, P106 M=.5 z 2; Q2, Q3 (lesser-known) P27 0 / .2 z 1, Q2 P106 0
BASE = _pairs([("Q1", "P27", WK, 1.0, 3.0), ("Q1", "P106", WK, 0.5, 2.0), ("Q2", "P27", LK, 0.0, None),
               ("Q2", "P106", LK, 0.0, None), ("Q3", "P27", LK, 0.2, 1.0)])
# instruct audited Q1 and Q2 only
INSTRUCT = _pairs([("Q1", "P27", WK, 1.0, 4.0), ("Q1", "P106", WK, 1.0, 3.0), ("Q2", "P27", LK, 0.1, 1.0),
                   ("Q2", "P106", LK, 0.0, None)])
RELEASES = pd.DataFrame({"key": ["base@1", "instruct@1", "unaudited@1"], "family": ["f", "f", "g"],
                         "variant": ["base", "instruct", "base"], "parameter_count": [10, 10, 5]})
PER_RELEASE = {"base@1": BASE, "instruct@1": INSTRUCT}


def test_table1_per_release_and_cohort_by_hand():
    table = am.table1(PER_RELEASE, RELEASES).set_index(["model", "cohort"])
    assert list(table.index) == [("base@1", WK), ("base@1", LK), ("base@1", "all"),
                                 ("instruct@1", WK), ("instruct@1", LK), ("instruct@1", "all")]
    base_lk = table.loc[("base@1", LK)]
    assert base_lk["M_bar_pct"] == pytest.approx(100 * (0 + 0 + 0.2) / 3)
    assert base_lk["lenient_pct"] == pytest.approx(100 / 3) and base_lk["strict_pct"] == 0
    assert base_lk["z_star_mean"] == pytest.approx(1.0)            # only Q3's defined z*
    assert (base_lk["H_M0"], base_lk["n_subjects"], base_lk["H_M0_of"]) == (1, 2, "1/2")   # Q2 holds nothing
    base_all = table.loc[("base@1", "all")]
    assert base_all["M_bar_pct"] == pytest.approx(100 * 1.7 / 5) and base_all["H_M0_of"] == "1/3"
    assert base_all["z_star_mean"] == pytest.approx(2.0)           # mean of 3, 2, 1
    instruct_wk = table.loc[("instruct@1", WK)]
    assert instruct_wk["M_bar_pct"] == 100 and instruct_wk["strict_pct"] == 100 and instruct_wk["z_star_mean"] == 3.5
    assert table.loc[("instruct@1", LK), "H_M0_of"] == "0/1"       # Q2 has M = .1 on P27
    assert set(table["variant"]) == {"base", "instruct"} and (table["family"] == "f").all()


def test_table1_paper_layout_one_row_per_release():
    wide = am.table1_paper_layout(am.table1(PER_RELEASE, RELEASES))
    assert list(wide["model"]) == ["base@1", "instruct@1"] and list(wide["variant"]) == ["base", "instruct"]
    assert list(wide.columns[2:5]) == [f"{WK}: M̄ (%)", f"{WK}: z̄*", f"{WK}: H(M=0)"]
    assert wide.loc[0, f"{LK}: H(M=0)"] == "1/2" and wide.loc[1, f"{WK}: M̄ (%)"] == 100


def test_property_rates_on_the_pairs_every_release_audited():
    rates = am.property_rates(PER_RELEASE, RELEASES, {"P27": "country of citizenship"})
    rates = rates.set_index(["model", "cohort", "property"])
    # Q3 was audited by base only: it does not count, so base's lesser-known P27 is Q2's 0
    assert rates.loc[("base@1", LK, "P27"), "M_bar_pct"] == 0 and rates.loc[("base@1", LK, "P27"), "n_pairs"] == 1
    assert rates.loc[("instruct@1", "all", "P27"), "M_bar_pct"] == pytest.approx(55.0)   # (1 + .1) / 2
    assert rates.loc[("base@1", "all", "P106"), "M_bar_pct"] == pytest.approx(25.0)      # (.5 + 0) / 2
    assert rates.loc[("base@1", WK, "P27"), "property_label"] == "country of citizenship"
    assert rates.loc[("base@1", WK, "P106"), "property_label"] == "P106"                 # no label known
    every = am.property_rates(PER_RELEASE, RELEASES, on_common_pairs=False).set_index(["model", "cohort", "property"])
    assert every.loc[("base@1", LK, "P27"), "M_bar_pct"] == pytest.approx(10.0)          # Q2 and Q3


def test_no_results_give_empty_tables_and_a_report():
    assert am.table1({}, RELEASES).empty and am.property_rates({}, RELEASES).empty
    assert "0 release(s)" in am.render_html(am.AcrossModelsReport(am.table1({}), am.property_rates({})))


@pytest.mark.skipif(reports.find_chromium() is None, reason="no Chromium binary: apt-get install -y chromium")
def test_cross_model_report_renders_in_headless_chromium(tmp_path):
    kendall = pd.DataFrame([[1.0, 0.4], [0.4, 1.0]], index=list(PER_RELEASE), columns=list(PER_RELEASE))
    report = am.AcrossModelsReport(am.table1(PER_RELEASE, RELEASES), am.property_rates(PER_RELEASE, RELEASES),
                                   kendall, generated_at="2026-11-24")
    path = am.write_report(report, tmp_path)
    text = path.read_text()
    assert "Table 1 (paper layout)" in text and "instruct@1 (instruct)" in text and "Kendall" in text
    check = reports.check_rendering(path, screenshot=tmp_path / "shot.png")
    assert check.figures == 2 and check.ok, check


def test_table1_with_controls_and_the_gap_both_ways_by_hand():
    """base@1 read against controls: Q1's P27 (M = 1) beats them, Q1's P106 (M = .5) beats them
    below the threshold (weakly associated), Q3's P27 does not. Well-known: 1 of 2 facts memorized
    beyond the controls (50 %), 2 of 2 beat them (100 %); lesser-known 0 of 3. instruct@1 has no
    controls: its columns stay empty. The gap with controls: 50 - 0 points, one well-known person
    and nobody lesser-known beating them in any resample: CI 50 to 50."""
    from wikimem_platform.wikimem import controlled_rates, controls

    comparison = pd.DataFrame({
        "subject_qid": ["Q1", "Q1", "Q3"], "property": ["P27", "P106", "P27"],
        "verdict": [controls.MEMORIZED, controls.WEAK, controls.NO_EVIDENCE], "p_value": [0.05, 0.05, 0.6],
        "n_controls": [19, 19, 11], "controls_as_extreme": [0, 0, 6], "alpha": 0.05, "controls_M_mean": 0.0,
        "controls_M_max": 0.2, "M_compared": [1.0, 0.5, 0.2]})
    controlled = {"base@1": controlled_rates.controlled_pairs(BASE, comparison)}
    table = am.table1(PER_RELEASE, RELEASES, controlled=controlled).set_index(["model", "cohort"])
    assert table.loc[("base@1", WK), "memorized_with_controls_pct"] == 50
    assert table.loc[("base@1", WK), "beats_controls_pct"] == 100
    assert table.loc[("base@1", LK), "memorized_with_controls_pct"] == 0
    assert table.loc[("base@1", "all"), "memorized_with_controls_pct"] == pytest.approx(20)  # 1 of 5
    assert table.loc[("base@1", WK), "at_threshold_pct"] == 50  # without controls, as before
    assert table.loc[("instruct@1", WK)][["memorized_with_controls_pct", "beats_controls_pct"]].isna().all()
    gaps = am.cohort_gaps(controlled).set_index("measure")
    assert list(gaps["model"]) == ["base@1"] * 4
    assert tuple(gaps.loc[controlled_rates.WITH, ["gap_pct", "ci_low_pct", "ci_high_pct"]]) == (50, 50, 50)
    assert am.cohort_gaps({}).empty
    page = am.render_html(am.AcrossModelsReport(am.table1(PER_RELEASE, RELEASES, controlled=controlled),
                                                am.property_rates(PER_RELEASE, RELEASES), gaps=am.cohort_gaps(controlled)))
    assert "Well-known minus lesser-known, without and with controls" in page and "<th>gap (points)</th>" in page
