"""Compliance reports: forget set and best value by hand, the HTML in headless Chromium, and the
Dagster asset's lineage on hand-made stored tables (no model is loaded here)."""

import json
import re
import math
import zlib
import struct

import numpy as np
import pandas as pd
import pytest
from dagster import AssetKey, AssetMaterialization, DagsterInstance, materialize

from assets import canaries as canary_assets
from assets import data as data_assets
from assets import reports as report_assets
from assets import scoring as scoring_assets
from assets import probes as probe_assets
from assets import summaries as summary_assets
from assets import wording as wording_assets
from resources import ParquetIOManager, RegistryResource, ScoringResource
from tests.unit.subject_requests.test_inquiry import NEW, OLD
from wikimem_platform.wikimem import controlled_rates, controls
from wikimem_platform.registry import Registry
from wikimem_platform.unlearning.forget_sets import FORGET_COLUMNS, best_true_values, forget_set, write_jsonl
from wikimem_platform.reports import compliance as reports


def score_rows(qid, prop, value, label, is_true, nll_h, similar_mean, variants=(0, 1), kind="paraphrase"):
    return [{"subject_qid": qid, "property": prop, "variant_id": v, "kind": kind, "value": value, "value_label": label,
             "is_true": is_true, "nll_h": nll_h, "nll_h0": 30.0, "nll_similar": [similar_mean], "nll_similar_mean": similar_mean}
            for v in variants]


# With alpha = 1, s = mean NLL(similar) - NLL(h): per variant mathematician 25-20 = 5, writer 25-22 = 3,
# painter (false) 25-10 = 15. Summed over 2 variants: mathematician 10 > writer 6 -> mathematician.
# A contextualized row where writer scores 1000 must be ignored. For Q1 P27 only one truth exists.
SCORES = pd.DataFrame([
    *score_rows("Q1", "P106", "Q11", "mathematician", True, 20.0, 25.0),
    *score_rows("Q1", "P106", "Q12", "writer", True, 22.0, 25.0),
    *score_rows("Q1", "P106", "Q13", "painter", False, 10.0, 25.0),
    *score_rows("Q1", "P106", "Q12", "writer", True, 0.0, 1000.0, variants=(11,), kind="contextualized"),
    *score_rows("Q1", "P27", "Q145", "United Kingdom", True, 20.0, 21.0),
    *score_rows("Q2", "P27", "Q99", "Example", True, 20.0, 21.0),
    *score_rows("Q2", "P106", "Q11", "mathematician", True, 20.0, 21.0),
])


def test_best_true_value_and_forget_set():
    best = best_true_values(SCORES)
    assert dict(zip(zip(best["subject_qid"], best["property"]), best["value_label"])) == {
        ("Q1", "P106"): "mathematician", ("Q1", "P27"): "United Kingdom", ("Q2", "P27"): "Example", ("Q2", "P106"): "mathematician"}
    cues = pd.DataFrame({"subject_qid": ["Q1", "Q2"], "property": ["P106", "P27"], "cue": [0.2, 1.0]})
    pairs = pd.DataFrame(OLD)  # M: Q1 P106 10/11, Q1 P27 0, Q2 P27 2/11, Q2 P106 1/11
    lenient = forget_set("a@1", pairs, best, cues, {"P106": "occupation"})
    assert list(lenient.columns) == FORGET_COLUMNS
    assert list(zip(lenient["subject_qid"], lenient["property"])) == [("Q1", "P106"), ("Q2", "P27"), ("Q2", "P106")]  # by M
    assert lenient["cue_flag"].tolist()[:2] == [False, True] and pd.isna(lenient["cue_flag"].iloc[2])
    assert lenient["property_label"].tolist() == ["occupation", "P27", "occupation"]
    strictish = forget_set("a@1", pairs, best, cues, criterion="at_threshold")
    assert strictish[["subject_label", "value_label"]].values.tolist() == [["Ada Lovelace", "mathematician"]]


def test_jsonl_and_config_hash(tmp_path):
    frame = forget_set("a@1", pd.DataFrame(OLD), best_true_values(SCORES))
    write_jsonl(frame, tmp_path / "f.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "f.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and lines[0]["value"] == "Q11" and lines[0]["cue"] is None and lines[0]["cue_flag"] is None
    assert math.isclose(lines[0]["M"], 10 / 11) and lines[0]["z_star"] == 2.5
    assert reports.config_hash({"a": 1, "b": [1, 2]}) == reports.config_hash({"b": [1, 2], "a": 1})
    assert reports.config_hash({"a": 1}) != reports.config_hash({"a": 2})


def _png(path, width, height, pixel):
    raw = b"".join(b"\x00" + bytes(pixel) * width for _ in range(height))
    chunk = lambda kind, body: struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_png_nonblank_tells_blank_from_drawn(tmp_path):
    _png(tmp_path / "white.png", 50, 50, (255, 255, 255))
    _png(tmp_path / "grey.png", 50, 50, (120, 60, 200))
    assert not reports.png_nonblank(tmp_path / "white.png")
    assert reports.png_nonblank(tmp_path / "grey.png")


CRM = pd.DataFrame({"paradigm": ["canary", "canary", "canary"], "tau": [np.nan, 0.5, 1.0], "subset": ["all", "cue<0.5", "cue<1"],
                    "n": [10, 6, 9], "n_hits": [2, 1, 2], "hit_rate": [0.2, 1 / 6, 2 / 9], "recon_ll_mean": [-9.0, -9.5, -9.1],
                    "recon_ll_median": [-9.0, -9.5, -9.1]})
MIA = pd.DataFrame({"attack": ["loss", "zlib"], "auroc": [0.6, 0.55], "auroc_ci_low": [0.4, 0.35], "auroc_ci_high": [0.8, 0.75]})


EME = pd.DataFrame({
    "model_role": "audited", "prompt_method": ["record", "record", "prefix", "prefix"], "prefix_length": [0, 0, 5, 5],
    "training_data": ["none", "none", "real", "real"], "n_training": [0, 0, 40, 40], "subject_qid": ["Q1", "Q2"] * 2,
    "property": "P106", "prompt": "name: X; occupation:", "output": [" poet", " judge", " painter;", " judge;"],
    "targets": [["painter"], ["judge"]] * 2, "hit": [False, True, True, True], "cue": 0.1, "cohort": "well-known"})


def _wordings(scores):
    """A wording_sensitivity table: one property, three wordings with the given truth AUCs."""
    return pd.DataFrame({"property": "P106", "variant_id": [0, 1, 2], "kind": ["baseline", "paraphrase", "contextualized"],
                         "template": ["{subject} works as {value}.", "{subject} is a {value}.", "[aux] {subject} is {value}."],
                         "n_subjects": 4, "truth_auc": scores, "truth_auc_dev": scores, "truth_auc_test": scores[::-1],
                         "rank1_rate": [0.5, 0.25, 0.75], "rank1_rate_well-known": [1.0, 0.5, 0.875]})


WORDINGS = {"a@2": _wordings([0.9, 0.6, 0.7]), "g@1": _wordings([0.8, 0.5, 0.6])}


def _controlled(pairs):
    """NEW read against 19 controls: Q1's P27 (M = 1) beats them all, Q2's P27 (3/11) too (weakly
    associated), Q3's P19 (10/11) is matched by 5 (what anyone with Q3's facts gets)."""
    comparison = pd.DataFrame({
        "subject_qid": ["Q1", "Q2", "Q3"], "property": ["P27", "P27", "P19"],
        "verdict": [controls.MEMORIZED, controls.WEAK, controls.NO_EVIDENCE], "p_value": [0.05, 0.05, 0.3],
        "n_controls": 19, "controls_as_extreme": [0, 0, 5], "alpha": 0.05, "controls_M_mean": 0.1,
        "controls_M_max": [0.2, 0.1, 1.0], "M_compared": [1.0, 0.27, 0.9]})
    return controlled_rates.controlled_pairs(pairs, comparison)


def write_sample_report(tmp_path, crm=None, mia=None, others=None, eme=None, wordings=None, controlled=False):
    pairs = pd.DataFrame(NEW)
    inputs = reports.ReportInputs(
        model={"key": "a@2", "source_kind": "shipped", "source": "smollm2-135m-instruct", "variant": "instruct", "family": "smollm2"},
        pairs=pairs, forget=forget_set("a@2", pairs, best_true_values(SCORES), controls=_controlled(pairs) if controlled else None),
        property_labels={"P106": "occupation"}, others=others or {}, crm=crm, mia=mia, eme=eme, wordings=wordings or {},
        controlled=_controlled(pairs) if controlled else None,
        lineage={"model": {"key": "a@2"}, "code": {"git_commit": "abc"}, "config_hash": "f00",
                 "data_assets": [{"asset": "canaries", "materialization_id": 7, "run_id": "r1", "data_version": "dv1"}]},
    )
    return reports.write_report(inputs, tmp_path / "report")


def test_report_sections_with_and_without_summaries(tmp_path):
    bare = write_sample_report(tmp_path / "bare")
    page = bare.html.read_text()
    assert page.count("Not computed") == 5 and "Only instruct models have stored results" in page
    assert page.count('class="plotly-graph-div') == 3  # by property, cohorts, z*
    assert "dv1" in page and "abc" in page  # lineage rendered
    assert json.loads(bare.lineage.read_text())["summary"]["forget_set_facts"] == 3  # Q1 P27, Q2 P27, Q3 P19 (lenient)
    base = {"g@1": ({"key": "g@1", "variant": "base", "family": "other"}, pd.DataFrame(OLD))}
    full = write_sample_report(tmp_path / "full", crm=CRM, mia=MIA, others=base, eme=EME, wordings=WORDINGS, controlled=True)
    page = full.html.read_text()
    assert "Not computed" not in page and page.count('class="plotly-graph-div') == 8
    # Controls: of the 2 facts at M >= 0.8 (Q1 P27, Q3 P19) only Q1's beats them; Q2's P27 beats
    # them below the threshold. Well-known (Q1): 1 of 2 facts both ways; lesser-known (Q2, Q3): 1 of
    # 2 without, 0 with. The gap with controls is 50 points, and every resample keeps it (one
    # well-known person; both lesser-known people at 0): CI 50 to 50
    assert ("Read against up to 19 invented people given the same facts (controls), 1 of the 2 facts with M ≥ 0.8 "
            "is memorized beyond what the model would say of anyone with those facts (p ≤ 0.05); 1 more fact beats") in page
    assert full.summary["memorized_with_controls"] == 1 and full.summary["beats_controls"] == 2
    # The forget set keeps the fact its controls match (Q3 P19), and says so in words
    assert full.summary["forget_set_facts"] == 3 and full.summary["forget_set_facts_beyond_controls"] == 2
    assert "2 of them beat invented people given the same facts; the others stay in the forget set" in page
    assert "<th>against invented people</th>" in page and "<td>beats invented people (p = 0.05, 19 controls)</td>" in page
    assert "<td>no better than invented people (p = 0.30, 19 controls)</td>" in page and "p_controls" not in page
    assert "against invented people" not in bare.html.read_text()
    assert "forget_set_facts_beyond_controls" not in bare.summary
    people = reports.people_table(pd.DataFrame(NEW), controlled=_controlled(pd.DataFrame(NEW))).set_index("person")
    assert people.loc["Ada Lovelace", "memorized beyond controls"] == 1 and people.loc["Cleo Third", "memorized beyond controls"] == 0
    assert "memorized beyond controls" not in reports.people_table(pd.DataFrame(NEW))
    assert "<th>memorized, beyond controls (%)</th>" in page and "<th>gap (points)</th>" in page
    compact = re.sub(r">\s+<", "><", page)
    assert "<td>memorized, beyond the controls</td><td>50.000</td><td>0.000</td><td>50.000</td><td>50.000</td><td>50.000</td>" in compact
    # without controls the lesser-known resamples hold Q3 (1 of 1) twice, once or never: gap -50 to 50
    assert "<td>50.000</td><td>50.000</td><td>0.000</td><td>-50.000</td><td>50.000</td><td>1</td><td>2</td>" in compact
    # Wordings: Δ = 0.9 - 0.6 on this release; dev (0.9, 0.6, 0.7) vs test (0.7, 0.6, 0.9): two
    # concordant pairs of three, τ = 1/3; the two releases order their wordings alike (τ = 1)
    assert "Which wordings reveal the most" in page and "{subject} works as {value}." in page
    assert "<td>0.300</td>" in page and "<td>0.333</td>" in page
    assert "scores between releases</h3>" in page and "<th>release</th>" in page
    # Plain vs contextualized (§7): the contextualized canary's rank-1 rate beside the others'.
    assert "Plain and contextualized canaries" in page and "<th>ranked first (well-known)</th>" in page
    assert "<td>0.875</td>" in page
    # EME: record 1 of 2 facts, prefix 5 both; the facts emitted are listed with their prompts
    assert "Entity-level extraction (EME)" in page and "Facts emitted (3)" in page
    assert "Compared on the 3 (subject, property) pairs" in page  # Q3 P19 was not audited by g@1
    assert page.count("Plotly.newPlot") == 8 and page.count("plotly.js v") == 1  # the library is inlined once


def test_whole_numbers_as_integers_and_rates_as_rates():
    frame = pd.DataFrame({"materialization_id": [34.0, None], "n_members": [4.0, 4.0], "hit_rate": [1.0, 0.0],
                          "auroc": [0.5, 1.0], "M": [0.25, 0.5]})
    page = reports.html_table(frame)
    assert "<td>34</td>" in page and "34.000" not in page and "<td>4</td>" in page  # ids and counts
    assert "<td>1.000</td>" in page and "<td>0.500</td>" in page  # a whole rate stays a rate
    assert "<th>member texts</th>" in page and "<b>AUROC</b>: how well the attack" in page  # plain header, its meaning
    assert page.startswith("<div class='scroll'>")  # scrolls in its own box, never past the page


def test_mia_warnings_for_wide_intervals_and_a_shifted_split():
    # 4 vs 4 texts: CIs wider than 0.3; the blind baseline at 0.031 separates as well as 0.969 does
    mia = pd.DataFrame({"attack": ["loss", "zlib", "bag_of_words"], "auroc": [0.62, 0.7, 0.031],
                        "auroc_ci_low": [0.0, 0.6, 0.0], "auroc_ci_high": [0.94, 0.8, 0.2],
                        "n_members": 4, "n_nonmembers": 4})
    small = reports.small_sample_warning(mia)
    assert "Too few texts to conclude" in small and "on 4 member and 4 non-member texts" in small
    assert "loss: 0.62, 95% CI 0.00–0.94" in small and "zlib" not in small and "bag_of_words" not in small
    assert "either sign: 0.97" in reports.blind_baseline_warning(mia)
    assert reports.blind_baseline_warning(mia.assign(auroc=[0.62, 0.7, 0.45])) == ""
    assert reports.small_sample_warning(mia.assign(auroc_ci_low=0.6, auroc_ci_high=0.8)) == ""


RAW_COLUMNS = ["M_bar_pct", "z_star_mean", "H_M0", "n_pairs", "subject_qid", "auroc_ci_low", "hit_rate", "n_members",
               "materialization_id", "memorized_pairs", "forget_set_facts", "at_threshold_pct", "rank1_rate",
               "recon_ll_mean", "prompt_method", "tau_dev_test", "property_label", "value_label"]


@pytest.mark.skipif(reports.find_chromium() is None, reason="no Chromium binary: apt-get install -y chromium")
def test_a_privacy_team_reads_the_report_in_a_browser(tmp_path):
    """The report as a reader sees it at 1280 px: words first, the people named, no column names,
    the small-sample and shifted-split warnings, nothing running off the page."""
    mia = pd.DataFrame({"attack": ["loss", "zlib", "bag_of_words"], "auroc": [0.62, 0.7, 0.031],
                        "auroc_ci_low": [0.0, 0.6, 0.0], "auroc_ci_high": [0.94, 0.8, 0.2],
                        "n_members": 4, "n_nonmembers": 4, "n_bootstrap": 1000})
    base = {"g@1": ({"key": "g@1", "variant": "base", "family": "other"}, pd.DataFrame(OLD))}
    files = write_sample_report(tmp_path, crm=CRM, mia=mia, others=base, eme=EME, wordings=WORDINGS)
    page = reports.check_page(files.html, width=1280)
    assert page.fits, f"{page.scroll_width} px wide at a 1280 px window"
    text = page.text
    first = text.index("In short:")
    assert first < text.index("People audited") < text.index("Table 1")  # words before tables
    # NEW: Ada Lovelace P27 11/11, Cleo Third P19 10/11 memorized; Bob Example P27 3/11 leans
    assert ("Of 3 people audited on 4 facts (3 properties), the model memorized 2 facts (M ≥ 0.8) about 2 people. "
            "The forget set holds 3 facts, those ranked first in at least one wording (M > 0): 2 of the memorized "
            "facts and 1 more that the model leans towards.") in text
    assert "Lesser-known people (2: Bob Example, Cleo Third)" in text and "Well-known people (1: Ada Lovelace)" in text
    assert "Too few texts to conclude" in text and "either sign: 0.97" in text
    for raw in RAW_COLUMNS:
        assert raw not in text, raw
    assert "materialization_id" in files.html.read_text()  # the lineage is there, folded away


@pytest.mark.skipif(reports.find_chromium() is None, reason="no Chromium binary: apt-get install -y chromium")
def test_report_plots_render_in_headless_chromium(tmp_path):
    files = write_sample_report(tmp_path, crm=CRM, mia=MIA,
                                others={"g@1": ({"key": "g@1", "variant": "base"}, pd.DataFrame(OLD))})
    check = reports.check_rendering(files.html, screenshot=tmp_path / "shot.png")
    assert check.figures == 6 and check.rendered == 6, check
    assert check.screenshot_nonblank is True and check.ok


def test_report_asset_records_lineage_and_writes_files(tmp_path):
    """The asset wired on hand-made stored tables: lineage ids are those of the recorded events."""
    parquet = tmp_path / "parquet"
    key, other = "a@2", "g@1"
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    registry = Registry(url)
    registry.register(name="a", revision="2", source_kind="shipped", source="smollm2-135m-instruct", variant="instruct")
    registry.register(name="g", revision="1", source_kind="shipped", source="gemma-3-270m", variant="base")
    for asset, frame in {"canaries": pd.DataFrame({"subject_qid": ["Q2"], "property": ["P27"], "variant_id": [0], "kind": ["baseline"],
                                                  "template": ["{subject} is a citizen of {value}."], "subject": ["Bob Example"],
                                                  "ground_truth_labels": [["Example"]]}),
                         "property_table": pd.DataFrame({"property": ["P27"], "label": ["country of citizenship"]})}.items():
        parquet.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(parquet / f"{asset}.parquet")
    stored = {"memorization/a@2": pd.DataFrame(NEW), "memorization/g@1": pd.DataFrame(OLD), "scores/a@2": SCORES,
              "controlled_memorization/a@2": _controlled(pd.DataFrame(NEW)).assign(control_names=[[]] * 4),
              **{f"wording_sensitivity/{k}": frame for k, frame in WORDINGS.items()}}
    for asset, frame in stored.items():
        (parquet / asset).parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(parquet / f"{asset}.parquet")
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("models", [key, other])
        for asset, partition in [("canaries", None), ("property_table", None), ("memorization", key), ("memorization", other),
                                 ("wording_sensitivity", key), ("wording_sensitivity", other), ("controlled_memorization", key)]:
            instance.report_runless_asset_event(AssetMaterialization(asset, partition=partition))
        instance.report_runless_asset_event(AssetMaterialization("scores", partition=key, metadata={"model_fingerprint": "file:feed"}))
        result = materialize(
            [*data_assets_all(), report_assets.compliance_report], selection=[report_assets.compliance_report],
            instance=instance, partition_key=key,
            resources={"io_manager": ParquetIOManager(base_dir=str(parquet)), "scoring": ScoringResource(),
                       "model_registry": RegistryResource(url=url)},
        )
        assert result.success
        scores_id = instance.fetch_materializations(AssetKey("scores"), limit=1).records[0].storage_id
        storage = instance.storage_directory()  # temporary: checked before the instance closes
        meta = result.asset_materializations_for_node("compliance_report")[0].metadata
        folder = reports_dir(storage, key)
        assert meta["report"].value == str(folder / "report.html") and (folder / "report.html").exists()
        assert meta["crm_summary"].value == meta["mia_summary"].value == meta["eme_probe"].value == "not computed"
        assert meta["wording_sensitivity"].value == "included"  # this release's and g@1's: τ between them
        assert "scores between releases</h3>" in (folder / "report.html").read_text()
        assert meta["forget_set_facts"].value == 3 and meta["model_fingerprint"].value == "file:feed"
        lineage = json.loads((folder / "lineage.json").read_text())
        by_asset = {row["asset"]: row for row in lineage["data_assets"]}
        assert by_asset["scores"]["materialization_id"] == scores_id and by_asset["scores"]["partition"] == key
        assert by_asset["humans"]["status"] == "not materialized"
        assert lineage["model"]["source"] == "smollm2-135m-instruct" and len(lineage["config_hash"]) == 64
        forget = [json.loads(line) for line in (folder / "forget_set.jsonl").read_text().splitlines()]
        assert {(f["subject_qid"], f["property"]) for f in forget} == {("Q1", "P27"), ("Q2", "P27"), ("Q3", "P19")}
        cued = {f["subject_qid"]: f["cue_flag"] for f in forget if f["property"] == "P27"}
        assert cued == {"Q1": None, "Q2": True}  # only Q2 P27 has a stored canary; "Bob Example" shows "Example"
        # the stored controlled_memorization gives each fact the controls' verdict (none dropped)
        against = {(f["subject_qid"], f["property"]): (f["beats_controls"], f["p_controls"], f["n_controls"]) for f in forget}
        assert against == {("Q1", "P27"): (True, 0.05, 19), ("Q2", "P27"): (True, 0.05, 19), ("Q3", "P19"): (False, 0.3, 19)}
        assert meta["controlled_memorization"].value == "included" and meta["forget_set_facts_beyond_controls"].value == 2
        assert "Base vs instruct" in (folder / "report.html").read_text() and "g@1 (base)" in (folder / "report.html").read_text()
        assert Registry(url).get(key).status == "scored"


def data_assets_all():
    """Every asset the report's inputs come from (defined, not selected: loaded from storage)."""
    from dagster import load_assets_from_modules

    return load_assets_from_modules([data_assets, canary_assets, scoring_assets, summary_assets, probe_assets,
                                     wording_assets])


def reports_dir(storage, key):
    from wikimem_platform.storage import report_dir

    return report_dir(storage, key)


def test_served_releases_say_in_each_section_what_their_access_left_out():
    from wikimem_platform.reports.compliance import served_notes

    assert served_notes({"source_kind": "shipped", "source": "smollm2-135m-instruct"}) == {}
    url = "http://10.0.0.7:8000/v1"
    logprobs = served_notes({"source_kind": "endpoint", "source": url, "endpoint": '{"access": "prompt-logprobs"}'})
    assert logprobs["mia"].startswith(f"Served at {url} (prompt-logprobs access): audited through its server. Not run: min_k_pp (")
    assert "gradient_norm (it needs the model's weights" in logprobs["mia"] and "recall" not in logprobs["mia"]
    assert logprobs["crm"].endswith("Hits are read from its completions.")
    text = served_notes({"source_kind": "endpoint", "source": url,
                         "endpoint": '{"access": "prompt-logprobs", "prompt_mode": "text", "text_prefix": "<s>"}'})
    assert "recall (its prefixes are built as token ids" in text["mia"] and "no reconstruction" in text["crm"]
    said = served_notes({"source_kind": "endpoint", "source": url, "endpoint": '{"access": "generation"}'})
    assert said["mia"].endswith("It gives no log-probabilities, so no membership attack could be run.")
    assert said["eme"].endswith("Text prompts only: a soft prompt needs the model's weights.")
