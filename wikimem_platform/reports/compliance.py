"""Compliance reports per model release: a self-contained HTML file, a forget set and lineage.

The HTML embeds plotly.js once (it renders offline, in an archive, years later); every number in
it comes from the stored results of one release, and its lineage section says which ones: model
source, revision and fingerprint, code version, the data versions and materialization ids of
every upstream table, the configuration and its hash. The forget set (JSONL, one memorized fact
per line) is what an Art. 17 erasure or an unlearning run takes as input.
"""

from __future__ import annotations

import hashlib
import html
import importlib.metadata
import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from wikimem_platform import eme
from wikimem_platform.crm import metrics as crm_module
from wikimem_platform.mia import auroc_figure, BLIND_SHIFT_AUROC, TARGET_FPRS, too_few_nonmembers, tpr_column
from wikimem_platform.mia.evaluation import normalized_auroc
from wikimem_platform.mia.model_pass import served_unavailable
from wikimem_platform.reports.page_policy import csp_meta, PAGE_CSP, SCRIPTED_PAGE_CSP, with_csp  # noqa: F401 (re-exported)
from wikimem_platform.storage import write_atomically
from wikimem_platform.unlearning.forget_sets import (
    CONTROL_COLUMNS,
    controls_words,
    DEFAULT_FORGET_CRITERION,
    has_controls,
    write_jsonl,
)
from wikimem_platform.vocabulary import AT_THRESHOLD, CRITERIA, DEFAULT_CRITERION, LENIENT, STRICT
from wikimem_platform.wikimem import controlled_rates, wording
from wikimem_platform.wikimem.memorization import cohort_table, memorized

# --------------------------------------------------------------------------- lineage

def config_hash(config) -> str:
    """Stable SHA-256 of a JSON-able configuration (key order does not matter)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def code_version(repo_dir: str | Path | None = None) -> dict:
    """Package version and, when the code runs from a git checkout, its commit and dirty flag."""
    try:
        version = importlib.metadata.version("wikimem-platform")
    except importlib.metadata.PackageNotFoundError:
        version = None
    info = {"package": "wikimem-platform", "package_version": version, "git_commit": None, "git_dirty": None}
    if repo_dir is None:
        return info
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo_dir, capture_output=True, text=True, timeout=10)
        if commit.returncode == 0:
            info["git_commit"] = commit.stdout.strip()
            status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo_dir,
                                    capture_output=True, text=True, timeout=30)
            info["git_dirty"] = bool(status.stdout.strip()) if status.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def lineage(
    subject: Mapping,
    *,
    repo_dir: str | Path | None,
    data_assets: list,
    run: Mapping,
    config: Mapping,
    tools: Mapping | None = None,
) -> dict:
    """What a report or an answer was made from, in one shape: `subject` (what it is about, e.g.
    {"model": ...} or {"models": [...]}) first, then the code (`code_version` of `repo_dir`, with
    the orchestrator's versions in `tools`), the upstream data (`data_assets`: one dict per
    materialization, as the orchestrator records them), the run (id, job, ...), the settings and
    their hash."""
    return {
        **subject,
        "code": {**code_version(repo_dir), **(tools or {})},
        "data_assets": data_assets,
        "run": dict(run),
        "config": config,
        "config_hash": config_hash(config),
    }


# --------------------------------------------------------------------------- figures

def _empty_figure(title: str, message: str):
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_layout(title=title, xaxis_visible=False, yaxis_visible=False)
    return fig


def rate_by_property_figure(pairs: pd.DataFrame, property_labels: Mapping[str, str]):
    """Mean M (%) per property, one bar per cohort."""
    import plotly.graph_objects as go

    if not len(pairs):
        return _empty_figure("Memorization rate by property", "no audited pair")
    frame = pairs.assign(cohort=pairs["cohort"].fillna("all") if "cohort" in pairs else "all")
    rates = frame.groupby(["property", "cohort"], sort=True).agg(M=("M", "mean"), n=("M", "size")).reset_index()
    fig = go.Figure()
    for cohort, block in rates.groupby("cohort", sort=True):
        names = [f"{property_labels.get(p, p)} ({p})" for p in block["property"]]
        fig.add_trace(go.Bar(x=names, y=block["M"] * 100, name=str(cohort), customdata=block["n"],
                             hovertemplate="%{x}: %{y:.1f}% (%{customdata} pairs)<extra>" + str(cohort) + "</extra>"))
    fig.update_layout(title="Memorization rate by property (mean M, %)", barmode="group",
                      yaxis_title="mean M (%)", yaxis_range=[0, 100])
    return fig


def z_star_figure(pairs: pd.DataFrame):
    """Distribution of z* over the pairs with at least one memorized wording, per cohort."""
    import plotly.graph_objects as go

    defined = pairs[pairs["z_star"].notna()] if len(pairs) else pairs
    if not len(defined):
        return _empty_figure("z* distribution", "z* is undefined: no pair has a wording with the truth at rank 1")
    fig = go.Figure()
    cohorts = defined["cohort"].fillna("all") if "cohort" in defined else pd.Series("all", index=defined.index)
    for cohort, block in defined.groupby(cohorts, sort=True):
        fig.add_trace(go.Histogram(x=block["z_star"], name=str(cohort), opacity=0.7, nbinsx=20))
    fig.update_layout(title="Memorization strength z* (pairs with a memorized wording)", barmode="overlay",
                      xaxis_title="z*", yaxis_title="pairs")
    return fig


def cohort_figure(pairs: pd.DataFrame):
    """Table 1 per cohort as bars: mean M, lenient / at-threshold / strict shares, H_{M=0} share."""
    import plotly.graph_objects as go

    if not len(pairs):
        return _empty_figure("Cohort comparison", "no audited pair")
    table = cohort_table(pairs)
    if "cohort" not in table.columns:
        table["cohort"] = "all"
    measures = {"M_bar_pct": "mean M", "lenient_pct": "lenient (M > 0)", "at_threshold_pct": "at threshold",
                "strict_pct": "strict (M = 1)"}
    fig = go.Figure()
    for column, name in measures.items():
        fig.add_trace(go.Bar(x=table["cohort"], y=table[column], name=name))
    fig.add_trace(go.Bar(x=table["cohort"], y=table["H_M0_share"] * 100, name="subjects with nothing memorized"))
    fig.update_layout(title="Cohort comparison (%)", barmode="group", yaxis_title="%", yaxis_range=[0, 100])
    return fig


def variant_comparison(model: Mapping, pairs: pd.DataFrame, others: Mapping[str, tuple[Mapping, pd.DataFrame]]):
    """Base vs instruct: mean M per cohort for this release and the registered releases of the other
    variant (same family when there is one), on the pairs all of them audited. None if only one
    variant has results."""
    import plotly.graph_objects as go

    variant = model.get("variant")
    other_variant = [k for k, (m, _) in others.items() if m.get("variant") not in (None, variant)]
    if not other_variant:
        return None, f"Only {variant or 'one'} models have stored results: no base vs instruct comparison."
    family = model.get("family")
    same_family = [k for k in other_variant if family and others[k][0].get("family") == family]
    chosen = same_family or other_variant
    releases = {model["key"]: (model, pairs), **{k: others[k] for k in chosen}}
    keys = ["subject_qid", "property"]
    common = None
    for _, frame in releases.values():
        index = pd.MultiIndex.from_frame(frame[keys])
        common = index if common is None else common.intersection(index)
    fig = go.Figure()
    for key, (meta, frame) in releases.items():
        on_common = frame[pd.MultiIndex.from_frame(frame[keys]).isin(common)]
        cohorts = on_common["cohort"].fillna("all") if "cohort" in on_common else pd.Series("all", index=on_common.index)
        by_cohort = on_common.groupby(cohorts, sort=True)["M"].mean() * 100
        fig.add_trace(go.Bar(x=list(by_cohort.index), y=by_cohort.values, name=f"{key} ({meta.get('variant')})"))
    scope = f"family {family}" if same_family else "all registered releases"
    fig.update_layout(title=f"Base vs instruct ({scope}; {len(common)} pairs audited by all)", barmode="group",
                      yaxis_title="mean M (%)", yaxis_range=[0, 100])
    return fig, f"Compared on the {len(common)} (subject, property) pairs every release audited."


def crm_figure(crm: pd.DataFrame):

    return crm_module.rates_figure(crm)


def mia_figure(mia: pd.DataFrame):

    return auroc_figure(mia)


# --------------------------------------------------------------------------- report

@dataclass
class ReportInputs:
    model: dict  # key, name, revision, source_kind, source, variant, family, ..., fingerprint
    pairs: pd.DataFrame  # the release's memorization table
    forget: pd.DataFrame  # forget_set(...)
    property_labels: dict = field(default_factory=dict)
    others: dict = field(default_factory=dict)  # other releases: key -> (model dict, memorization table)
    crm: pd.DataFrame | None = None  # crm_summary rates, None if not computed
    mia: pd.DataFrame | None = None  # mia_summary table, None if not computed
    eme: pd.DataFrame | None = None  # eme_probe table (one row per arm and fact), None if not computed
    wordings: dict = field(default_factory=dict)  # release key -> wording_sensitivity table (this one's and others')
    controlled: pd.DataFrame | None = None  # controlled_memorization (the pairs read against controls), None if not computed
    lineage: dict = field(default_factory=dict)
    criterion: str = DEFAULT_CRITERION
    forget_criterion: str = DEFAULT_FORGET_CRITERION


@dataclass
class ReportFiles:
    html: Path
    forget_set: Path
    lineage: Path
    summary: dict


def report_summary(inputs: ReportInputs) -> dict:
    """The headline numbers (also the asset's UI metadata)."""
    pairs = inputs.pairs
    numbers = {
        "pairs": int(len(pairs)),
        "subjects": int(pairs["subject_qid"].nunique()) if len(pairs) else 0,
        "properties": int(pairs["property"].nunique()) if len(pairs) else 0,
        "memorized_pairs": int(memorized(pairs, inputs.criterion).sum()) if len(pairs) else 0,
        "forget_set_facts": int(len(inputs.forget)),
        "cued_facts_in_forget_set": int(inputs.forget["cue_flag"].fillna(False).sum()) if len(inputs.forget) else 0,
        "M_bar_pct": float(pairs["M"].mean() * 100) if len(pairs) else 0.0,
    }
    if len(pairs) and "cohort" in pairs:
        for row in cohort_table(pairs).to_dict("records"):
            numbers[f"M_bar_pct_{row['cohort']}"] = float(row["M_bar_pct"])
    controlled = inputs.controlled
    if controlled is not None and len(controlled):
        numbers["memorized_with_controls"] = int(controlled[controlled_rates.WITH].sum())
        numbers["beats_controls"] = int(controlled[controlled_rates.BEATS].sum())
    if has_controls(inputs.forget):
        numbers["forget_set_facts_beyond_controls"] = int(inputs.forget["beats_controls"].fillna(False).sum())
    return numbers


SUMMARY_LABELS = {
    "pairs": "facts tested (person–property pairs)",
    "subjects": "people audited",
    "properties": "properties tested",
    "memorized_pairs": "facts memorized (under the report's criterion)",
    "forget_set_facts": "facts in the forget set (under the erasure criterion)",
    "cued_facts_in_forget_set": "of those, facts whose prompt already shows part of the value",
    "M_bar_pct": "mean M (%): average share of wordings ranking the true value first",
    "memorized_with_controls": "facts memorized and beating invented people with the same facts (p ≤ α)",
    "beats_controls": "facts beating the invented people at all (memorized or weakly associated)",
    "forget_set_facts_beyond_controls": "facts in the forget set that beat the invented people (the others stay in)",
}
CRITERION_WORDS = {STRICT: "ranked first in every wording (M = 1)", AT_THRESHOLD: "M ≥ 0.8",
                   LENIENT: "ranked first in at least one wording (M > 0)"}
WIDE_CI = 0.3  # an AUROC whose 95% CI is wider than this says little: too few texts


def summary_label(key: str) -> str:
    if key.startswith("M_bar_pct_"):
        return f"mean M (%), {key.removeprefix('M_bar_pct_')} people"
    return SUMMARY_LABELS.get(key, key)


def _person_names(pairs: pd.DataFrame) -> pd.Series:
    """Each pair's person as named (the label where stored, else the QID)."""
    for column in ("subject", "subject_label"):
        if column in pairs:
            return pairs[column].fillna(pairs["subject_qid"]).astype(str)
    return pairs["subject_qid"].astype(str)


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def normalized(mia: pd.DataFrame) -> pd.Series:
    """max(AUROC, 1 - AUROC) per row: a classifier that is reliably wrong separates as well."""

    return mia["auroc_normalized"] if "auroc_normalized" in mia else mia["auroc"].map(normalized_auroc)


def blind_baseline_warning(mia: pd.DataFrame) -> str:
    """A warning paragraph when the model-free bag-of-words baseline separates the set, in either
    direction (normalized AUROC; '' if not)."""

    blind = mia[mia["attack"] == "bag_of_words"] if "attack" in mia else mia.iloc[0:0]
    if blind.empty or not normalized(blind).iloc[0] >= BLIND_SHIFT_AUROC:
        return ""
    return (f"<p class='warning'><strong>The member and non-member texts differ in their words:</strong> a classifier "
            f"on the words alone, with no model, reaches AUROC {blind['auroc'].iloc[0]:.2f} (either sign: "
            f"{normalized(blind).iloc[0]:.2f} ≥ {BLIND_SHIFT_AUROC}). The split itself is shifted, so the attacks' "
            "AUROCs below may measure that shift rather than what the model memorized.</p>")


def small_sample_warning(mia: pd.DataFrame) -> str:
    """A warning naming every AUROC whose 95% CI is wider than WIDE_CI ('' if none)."""
    if mia is None or not len(mia) or "auroc_ci_low" not in mia:
        return ""
    width = mia["auroc_ci_high"] - mia["auroc_ci_low"]
    wide = mia[width > WIDE_CI]
    if wide.empty:
        return ""
    sizes = ""
    if {"n_members", "n_nonmembers"} <= set(mia.columns):
        sizes = f" (on {int(wide['n_members'].max())} member and {int(wide['n_nonmembers'].max())} non-member texts)"
    listed = "; ".join(f"{r['attack']}: {r['auroc']:.2f}, 95% CI {r['auroc_ci_low']:.2f}–{r['auroc_ci_high']:.2f}"
                       for r in wide.to_dict("records"))
    return (f"<p class='warning'><strong>Too few texts to conclude:</strong> {_count(len(wide), 'AUROC')} "
            f"rest{'s' if len(wide) == 1 else ''} on so few texts{sizes} that the 95% confidence interval is wider "
            f"than {WIDE_CI}: {html.escape(listed)}. Read these as inconclusive, neither as leakage nor as its absence; "
            "audit with more texts per class.</p>")


def plain_summary(inputs: ReportInputs, summary: Mapping) -> str:
    """The report's first paragraphs, in words: who was audited, what was memorized about how
    many of them, how the forget set relates to it, and what MIA and CRM say (with warnings)."""
    pairs = inputs.pairs
    if not len(pairs):
        return "<p><b>In short:</b> no fact was audited for this release.</p>"
    names = _person_names(pairs)
    chosen = memorized(pairs, inputs.criterion)
    erase = memorized(pairs, inputs.forget_criterion)
    people_with = names[chosen].nunique()
    out = [f"Of {_count(summary['subjects'], 'person', 'people')} audited on {_count(summary['pairs'], 'fact')} "
           f"({_count(summary['properties'], 'property', 'properties')}), the model memorized "
           f"{_count(int(chosen.sum()), 'fact')} ({CRITERION_WORDS.get(inputs.criterion, inputs.criterion)}) about "
           f"{_count(people_with, 'person', 'people')}."]
    both, only_erase = int((chosen & erase).sum()), int((erase & ~chosen).sum())
    out.append(f"The forget set holds {_count(summary['forget_set_facts'], 'fact')}, those "
               f"{CRITERION_WORDS.get(inputs.forget_criterion, inputs.forget_criterion)}: "
               f"{both} of the memorized facts and {only_erase} more that the model leans towards"
               + (f"; {summary['cued_facts_in_forget_set']} of them are cued (the prompt already shows part of the value)."
                  if summary.get("cued_facts_in_forget_set") else "."))
    if "forget_set_facts_beyond_controls" in summary:
        beyond = summary["forget_set_facts_beyond_controls"]
        out.append(f"{beyond} of them {'beats' if beyond == 1 else 'beat'} invented people given the same facts; the "
                   "others stay in the forget set (erasure errs on the side of inclusion).")
    if "cohort" in pairs:
        for cohort, block in pairs.groupby(pairs["cohort"].fillna("all"), sort=True):
            who = sorted(_person_names(block).unique())
            out.append(f"{cohort.capitalize()} people ({len(who)}: {', '.join(who)}): mean M "
                       f"{block['M'].mean():.0%}, {int(memorized(block, inputs.criterion).sum())} of {len(block)} facts memorized.")
    paragraphs = [f"<p><b>In short:</b> {html.escape(' '.join(out))}</p>", controls_paragraph(inputs.controlled)]
    mia = inputs.mia
    if mia is not None and len(mia):
        attacks = mia[mia["attack"] != "bag_of_words"] if "attack" in mia else mia
        if len(attacks):
            best = attacks.assign(_n=normalized(attacks)).sort_values("_n", ascending=False).iloc[0]
            ci = (f" (95% CI {best['auroc_ci_low']:.2f}–{best['auroc_ci_high']:.2f})" if "auroc_ci_low" in best else "")
            paragraphs.append(f"<p>Membership inference: the strongest attack ({html.escape(str(best['attack']))}) tells "
                              f"training texts from others with AUROC {best['auroc']:.2f}{ci}; 0.5 is chance.</p>")
        paragraphs += [small_sample_warning(mia), blind_baseline_warning(mia)]
    crm = inputs.crm
    if crm is not None and len(crm) and {"subset", "hit_rate"} <= set(crm.columns):
        overall = crm[crm["subset"] == "all"]
        for row in overall.to_dict("records"):
            paragraphs.append(f"<p>Cue-resistant memorization ({html.escape(str(row.get('paradigm', '')))}): the model "
                              f"produced the value in {row['hit_rate']:.0%} of {int(row['n'])} examples.</p>")
    return "".join(p for p in paragraphs if p)


def controls_paragraph(controlled: pd.DataFrame | None) -> str:
    """What the invented-person controls change, in words ('' when they were not computed)."""
    if controlled is None or not len(controlled):
        return ""
    without, with_controls = int(controlled[controlled_rates.WITHOUT].sum()), int(controlled[controlled_rates.WITH].sum())
    weak = int(controlled[controlled_rates.BEATS].sum()) - with_controls
    n = int(controlled["n_controls"].max()) if controlled["n_controls"].notna().any() else 0
    alpha = controlled["alpha"].dropna()
    level = f"p ≤ {alpha.iloc[0]:g}" if len(alpha) else "p ≤ α"
    strong = (f"{with_controls} of the {_count(without, 'fact')} with M ≥ 0.8 {'is' if with_controls == 1 else 'are'} "
              f"memorized beyond what the model would say of anyone with those facts ({level})" if without
              else "no fact reached M ≥ 0.8")
    weaker = (f"{_count(weak, 'more fact')} {'beats' if weak == 1 else 'beat'} the controls with M below 0.8 "
              "(weakly associated)" if weak else "no other fact beats them")
    text = (f"Read against up to {n} invented people given the same facts (controls), {strong}; {weaker}. "
            "The other facts are no evidence about these people.")
    return f"<p>{html.escape(text)}</p>"


def controls_tables(controlled: pd.DataFrame | None) -> str:
    """Table 1 with and without controls per cohort, and the cohort gap with its bootstrap CI both ways."""
    if controlled is None:
        return "<p class='note'>Not computed: no controlled_memorization stored for this release.</p>"
    if not len(controlled):
        return "<p class='note'>No controls were asked for (n_controls = 0).</p>"
    gaps = controlled_rates.cohort_gap(controlled)
    gaps["measure"] = gaps["measure"].map(GAP_MEASURE_WORDS)
    return (f"<p class='note'>{html.escape(CONTROLS_NOTE)}</p>" + html_table(controlled_rates.rates(controlled))
            + (html_table(gaps) if len(gaps) else "<p class='note'>One cohort only: no well-known vs lesser-known gap.</p>"))


GAP_MEASURE_WORDS = {controlled_rates.WITHOUT: "memorized (M ≥ 0.8), without controls",
                     controlled_rates.WITH: "memorized, beyond the controls",
                     controlled_rates.SOME_WORDING: "ranked first in some wording (M > 0), without controls",
                     controlled_rates.BEATS: "beats the controls (p ≤ α), any M"}
CONTROLS_NOTE = (
    "Each audited person is compared with invented people (names of the same shape, nobody in Wikidata) given the "
    "person's facts and scored on the same wordings and candidates. A fact counts as memorized with controls when "
    "M ≥ 0.8 and at most a share α of the invented people get a result at least as strong (p ≤ α). The gap is "
    "well-known minus lesser-known, with a 95% bootstrap interval over people resampled within each cohort.")


def mia_table(mia: pd.DataFrame) -> pd.DataFrame:
    """The MIA rows as shown: a TPR the non-member count cannot support says so instead of a number."""

    shown = mia.drop(columns=["set_description"], errors="ignore")
    for target in TARGET_FPRS:
        column = tpr_column(target)
        if column in shown:
            shown[column] = [too_few_nonmembers(target) if pd.isna(value) else f"{value:.3f}" for value in shown[column]]
    return shown


# What a reader sees instead of a column's name: (header, what the number means). One home for
# every table of the reports; columns not listed keep their name.
COLUMNS: dict[str, tuple[str, str]] = {
    "cohort": ("cohort", "well-known or lesser-known people (by Wikipedia presence)"),
    "model": ("release", ""),
    "n_pairs": ("facts tested", "(person, property) pairs audited"),
    "n_subjects": ("people", "people audited"),
    "M_bar_pct": ("mean M (%)", "average share of the wordings in which the true value ranks first"),
    "z_star_mean": ("mean z*", "how far the true value stands out where it ranks first (higher = stronger)"),
    "z_star_mean_canary": ("mean z* per wording", "z* averaged over the memorized wordings"),
    "strict_pct": ("all wordings (%)", "share of facts ranked first in every wording (M = 1)"),
    "lenient_pct": ("some wording (%)", "share of facts ranked first in at least one wording (M > 0)"),
    "at_threshold_pct": ("memorized (%)", "share of facts memorized at the threshold (M >= 0.8)"),
    "summed_memorized_pct": ("summed (%)", "share of facts whose true value ranks first with all wordings added up"),
    "H_M0": ("nothing memorized", "people with no fact ranked first in any wording"),
    "H_M0_share": ("nothing memorized, share", "share of the people with no fact ranked first in any wording"),
    "subject_qid": ("Wikidata id", ""),
    "subject_label": ("person", ""),
    "subject": ("person", ""),
    "property": ("property", ""),
    "property_label": ("fact", ""),
    "value": ("value id", ""),
    "value_label": ("value", ""),
    "M": ("M", "share of the wordings in which the true value ranks first"),
    "z_star": ("z*", "how far the true value stands out (higher = stronger)"),
    "strict": ("all wordings", "ranked first in every wording"),
    "at_threshold": ("memorized", "M >= 0.8"),
    "lenient": ("some wording", "ranked first in at least one wording"),
    "cue": ("cue", "how much of the value the prompt already shows (0-1)"),
    "cue_flag": ("cued", "cue >= 0.5: a completion proves less"),
    "paradigm": ("test", ""),
    "tau": ("cue limit", "examples whose prompt shows less of the value than this"),
    "subset": ("examples", ""),
    "n": ("examples", "how many examples the rate is over"),
    "n_hits": ("hits", "examples where the model produced the value"),
    "hit_rate": ("hit rate", "share of examples where the model produced the value"),
    "recon_ll_mean": ("mean log-likelihood", "of the value given the prompt (higher = more expected)"),
    "recon_ll_median": ("median log-likelihood", "of the value given the prompt"),
    "attack": ("attack", ""),
    "auroc": ("AUROC", "how well the attack tells member texts from non-members (0.5 = chance)"),
    "auroc_ci_low": ("95% CI low", "bootstrap confidence interval of the AUROC"),
    "auroc_ci_high": ("95% CI high", "bootstrap confidence interval of the AUROC"),
    "auroc_normalized": ("AUROC, either sign", "max(AUROC, 1 - AUROC): leakage whichever way the attack points"),
    "n_members": ("member texts", "texts in the training data"),
    "n_nonmembers": ("non-member texts", "texts not in the training data"),
    "n_bootstrap": ("bootstrap samples", ""),
    "arm": ("prompt", ""),
    "prompt_method": ("prompt", ""),
    "prefix_length": ("soft-prompt tokens", ""),
    "training_data": ("soft prompt trained on", ""),
    "prompt": ("prompt", ""),
    "output": ("the model wrote", ""),
    "detection": ("score", ""),
    "delta": ("best - worst", "gap between the most and least revealing wording"),
    "sigma": ("spread", "standard deviation over the wordings"),
    "mean": ("mean", "over the wordings"),
    "best_variant": ("best wording #", ""), "worst_variant": ("worst wording #", ""),
    "best_kind": ("best wording kind", ""), "worst_kind": ("worst wording kind", ""),
    "best_template": ("best wording", ""), "worst_template": ("worst wording", ""),
    "best_score": ("best AUC", ""), "worst_score": ("worst AUC", ""),
    "tau_dev_test": ("Kendall τ, halves", "do the same wordings reveal most on both halves of the people (1 = same order)"),
    "n_wordings": ("wordings", ""),
    "kind": ("wording kind", ""),
    "rank1_rate": ("ranked first", "share of people whose true value this wording ranks first"),
    "release": ("release", ""),
    "pairs": ("facts tested", "(person, property) pairs audited"),
    "subjects": ("people", "people audited"),
    "pairs_compared": ("facts compared", "facts ranked first in some wording, read against the controls"),
    "memorized_without_controls_pct": ("memorized (%)", "share of facts with M >= 0.8 (the paper's Table 1)"),
    "memorized_with_controls_pct": ("memorized, beyond controls (%)", "M >= 0.8 and p <= alpha against the controls"),
    "beats_controls_pct": ("beats controls (%)", "memorized or weakly associated: p <= alpha"),
    "alpha": ("α", "the level a fact must beat the controls at"),
    "n_controls": ("controls", "invented people per person (at most)"),
    "measure": ("measure", ""),
    "against_controls": ("against invented people", "p: share of invented people given the same facts (controls) "
                         "as strong as the person, +1 correction; beats them at p <= alpha. Erased either way"),
    "memorized beyond controls": ("memorized beyond controls",
                                  "facts memorized that also beat invented people given the same facts (p <= alpha)"),
    "well_known_pct": ("well-known (%)", ""), "lesser_known_pct": ("lesser-known (%)", ""),
    "gap_pct": ("gap (points)", "well-known minus lesser-known"),
    "ci_low_pct": ("95% CI low", "bootstrap over people within each cohort"),
    "ci_high_pct": ("95% CI high", "bootstrap over people within each cohort"),
    "n_well_known": ("well-known people", ""), "n_lesser_known": ("lesser-known people", ""),
}
# Columns whose values are shares, scores or rates: never shown as integers even when whole.
_FRACTIONAL = ("auroc", "rate", "share", "pct", "tau", "z_star", "cue", "_ll_", "auc", "utility", "delta", "sigma",
               "mean", "score", "tpr")


def column_label(name: str) -> tuple[str, str]:
    """(header, meaning) of a column: listed, a family (rank1_rate_<cohort>, tpr_at_fpr_<t>), or its name."""
    if name in COLUMNS:
        return COLUMNS[name]
    if name.startswith("rank1_rate_"):
        return f"ranked first ({name.removeprefix('rank1_rate_')})", COLUMNS["rank1_rate"][1]
    if name.startswith("tpr_at_fpr_"):
        fpr = float(name.removeprefix("tpr_at_fpr_"))
        return f"TPR at {fpr:.1%} FPR", "share of member texts caught while wrongly flagging at most this share of non-members"
    return name, ""


def _whole_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts and ids held as floats (a column with a gap becomes float) shown as integers."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if (values.dtype.kind == "f" and not any(part in str(column).lower() for part in _FRACTIONAL)
                and values.notna().any() and np.all(np.mod(values.dropna(), 1) == 0)):
            out[column] = values.astype("Int64")
    return out


def html_table(frame: pd.DataFrame, max_rows: int | None = 200, decimals: int = 3, na_rep: str = "",
               legend: bool = True) -> str:
    """A frame as the reports' HTML table (class "data"), its first ``max_rows`` rows (None: all):
    plain headers with their meanings below (`COLUMNS`), whole numbers as integers, scrolling
    inside its own box rather than past the page."""
    shown = _whole_numbers(frame if max_rows is None else frame.head(max_rows))
    labels = {column: column_label(str(column)) for column in shown.columns}
    shown = shown.rename(columns={column: header for column, (header, _) in labels.items()})
    note = f"<p>First {max_rows} of {len(frame)} rows.</p>" if max_rows is not None and len(frame) > max_rows else ""
    meanings = list(dict.fromkeys(f"<b>{html.escape(h)}</b>: {html.escape(m)}" for h, m in labels.values() if m))
    key = f"<p class='legend'>{'; '.join(meanings)}.</p>" if legend and meanings else ""
    table = shown.to_html(index=False, na_rep=na_rep, float_format=lambda x: f"{x:.{decimals}f}", border=0, classes="data")
    return f"<div class='scroll'>{table}</div>{key}{note}"


def lineage_html(lineage: Mapping) -> str:
    """The lineage section: the model (a report) or the models (a request's answer), the code,
    every upstream materialization, the run and the configuration with its hash."""
    esc = html.escape
    code = lineage.get("code", {})
    if "models" in lineage:
        models = pd.DataFrame(lineage["models"])
        parts = ["<h3>Models</h3>", html_table(models) if len(models) else "<p>No registered model.</p>"]
    else:
        model = lineage.get("model", {})
        parts = ["<h3>Model</h3><table class='data'>"]
        for key in ("key", "source_kind", "source", "revision", "family", "variant", "parameter_count", "quantization",
                    "fingerprint", "registered_at"):
            parts.append(f"<tr><th>{esc(key)}</th><td>{esc(str(model.get(key, '')))}</td></tr>")
        parts.append("</table>")
    parts.append("<h3>Code</h3><table class='data'>")
    for key, value in code.items():
        parts.append(f"<tr><th>{esc(key)}</th><td>{esc(str(value))}</td></tr>")
    parts.append("</table><h3>Data assets</h3>")
    assets = pd.DataFrame(lineage.get("data_assets", []))
    parts.append(html_table(assets) if len(assets) else "<p>No upstream materialization recorded.</p>")
    run = lineage.get("run", {})
    parts.append("<h3>Run and configuration</h3><table class='data'>")
    for key, value in run.items():
        parts.append(f"<tr><th>{esc(key)}</th><td>{esc(str(value))}</td></tr>")
    parts.append(f"<tr><th>config_hash</th><td><code>{esc(str(lineage.get('config_hash', '')))}</code></td></tr>")
    parts.append(f"<tr><th>report generated at</th><td>{esc(str(lineage.get('generated_at', '')))}</td></tr></table>")
    config = json.dumps(lineage.get("config", {}), indent=2, sort_keys=True, default=str)
    parts.append(f"<details><summary>Configuration</summary><pre>{esc(config)}</pre></details>")
    return "".join(parts)


EME_NOTE = ("Each person's record is cut down to their name and a few other facts, and the model is asked for one "
            "more (\"name: ...; occupation: ...; place of birth:\"). Text prompts are asked as written; soft prompts "
            "are trained on other people's records only (never on the people audited here), so a fact the model "
            "emits is one it recalls. Fabricated: soft prompts trained on records whose values were moved to people "
            "they are not true of. Control: the same training on the architecture with random weights.")


def eme_tables(examples: pd.DataFrame, rates: pd.DataFrame, group: str | None) -> str:
    """The EME rate table (arm x group) and the facts the audited model emitted."""

    table = eme.rate_table(rates, group).reset_index()
    emitted = examples[(examples["model_role"] == eme.AUDITED) & examples["hit"].astype(bool)]
    emitted = emitted[["subject_qid", "property", "prompt_method", "prefix_length", "training_data", "prompt", "output"]]
    return (html_table(table) + f"<h3>Facts emitted ({len(emitted)})</h3>"
            + (html_table(emitted) if len(emitted) else "<p>None.</p>"))


WORDING_NOTE = ("Every fact is asked in several wordings (a plain statement, ten paraphrases, one with context). Each "
                "wording is scored alone: how often the true value beats the made-up alternatives (AUC: 0.5 = chance, "
                "1 = always). A wide gap between the best and the worst wording means that a verdict drawn from one "
                "wording would under- or overstate what the model holds; WikiMem's M is a share over eleven wordings "
                "for that reason. Kendall τ says whether the wordings that reveal the most on one half of the people "
                "(or on one model) also do on the other (1 = same order, 0 = unrelated).")


def wording_tables(key: str, wordings: Mapping[str, pd.DataFrame]) -> str:
    """Per property: the most and least revealing wording, Δ, σ, τ between halves of the people;
    with other releases, τ between releases."""

    properties = wording.property_table(wordings[key])
    properties = properties[properties["detection"] == wording.TRUTH_AUC].drop(columns=["detection"])
    out = html_table(properties.round(3))
    kinds = wording.kind_comparison(wordings[key])
    if len(kinds) and kinds.columns.str.startswith(wording.RANK1_RATE).any():
        out += ("<h3>Plain and contextualized canaries: share of people whose true value ranks first</h3>"
                + html_table(kinds.round(3)))
    if len(wordings) > 1:
        across = wording.across_models(dict(wordings))
        out += "<h3>Kendall τ of the wordings' scores between releases</h3>" + html_table(across.kendall.round(3).rename_axis("release").reset_index())
    return out


def served_notes(model: Mapping) -> dict[str, str]:
    """Per section (wikimem, crm, mia, eme), what auditing a release where it is served leaves
    out or reads differently, in words; empty for a release whose weights were loaded here."""
    if model.get("source_kind") != "endpoint":
        return {}
    stored = json.loads(model.get("endpoint") or "{}")
    access = stored.get("access") or "prompt-logprobs"
    where = f"Served at {model.get('source')} ({access} access): audited through its server."
    if access == "generation":
        return {"crm": f"{where} Hits are read from its completions; it gives no log-probabilities, so no "
                       "reconstruction log-likelihood.",
                "mia": f"{where} It gives no log-probabilities, so no membership attack could be run.",
                "eme": f"{where} Text prompts only: a soft prompt needs the model's weights."}
    if access == "top-logprobs":
        k = stored.get("top_k") or 20
        return {"wikimem": f"{where} Ranked from its {k} most likely next tokens and their log-probabilities: each "
                           f"candidate value is read token by token after the text before it; a token outside the top "
                           f"{k} is censored at the {k}th log-probability (candidates censored at the same point tie, "
                           "and a tie is never memorized). Only the wordings that name the person before the value "
                           "are scored.",
                "crm": f"{where} Hits are read from its completions; it gives no prompt log-probabilities, so no "
                       "reconstruction log-likelihood.",
                "mia": f"{where} It gives its most likely next tokens only, not the probability of a given text, so "
                       "no membership attack could be run.",
                "eme": f"{where} Text prompts only: a soft prompt needs the model's weights."}
    prompt_mode = stored.get("prompt_mode") or "token-ids"
    token_ids = prompt_mode == "token-ids"
    left_out = served_unavailable(prompt_mode)
    return {"crm": f"{where} Hits are read from its completions" + ("." if token_ids else
                   "; it refuses token-id prompts, so no reconstruction log-likelihood."),
            "mia": f"{where} Not run: " + "; ".join(f"{attack} ({why})" for attack, why in left_out.items()) + ".",
            "eme": f"{where} Text prompts only: a soft prompt needs the model's weights."}


def render_html(inputs: ReportInputs, summary: Mapping) -> str:
    """The whole report as one HTML document with plotly.js inlined once."""
    esc = html.escape
    model = inputs.model
    served = served_notes(model)
    sections: list[tuple[str, object, str]] = [
        ("Memorization rate by property", rate_by_property_figure(inputs.pairs, inputs.property_labels),
         served.get("wikimem", "")),
        ("Cohort comparison", cohort_figure(inputs.pairs), ""),
        ("Memorization strength", z_star_figure(inputs.pairs), ""),
    ]
    comparison, note = variant_comparison(model, inputs.pairs, inputs.others)
    sections.append(("Base vs instruct", comparison, note))
    sections.append(("Cue-resistant memorization (CRM)", crm_figure(inputs.crm) if inputs.crm is not None and len(inputs.crm) else None,
                     served.get("crm", "") if inputs.crm is not None else "Not computed: no crm_summary stored for this release."))
    sections.append(("Membership inference (MIA)", mia_figure(inputs.mia) if inputs.mia is not None and len(inputs.mia) else None,
                     served.get("mia", "") if inputs.mia is not None else "Not computed: no mia_summary stored for this release."))
    eme_rates = eme_group = None
    if inputs.eme is not None and len(inputs.eme):
        eme_group = eme.ground_truth_group(inputs.eme)
        eme_rates = eme.audit_rates(inputs.eme, [eme_group] if eme_group else [])
    sections.append(("Entity-level extraction (EME)",
                     eme.rates_figure(eme_rates, eme_group, "Facts the model emitted, by prompt") if eme_rates is not None else None,
                     " ".join(filter(None, [EME_NOTE, served.get("eme")])) if eme_rates is not None
                     else "Not computed: no eme_probe stored for this release."))
    this_wordings = inputs.wordings.get(model["key"])
    sections.append(("Which wordings reveal the most",
                     wording.wording_figure(this_wordings, title="Each wording's AUC, per property")
                     if this_wordings is not None else None,
                     WORDING_NOTE if this_wordings is not None else "Not computed: no wording_sensitivity stored for this release."))
    body = []
    first = True
    for title, figure, text in sections:
        body.append(f"<h2>{esc(title)}</h2>")
        if text:
            body.append(f"<p class='note'>{esc(text)}</p>")
        if figure is not None:
            body.append(figure.to_html(full_html=False, include_plotlyjs=first, default_height="420px",
                                       config={"displaylogo": False}))
            first = False
        if title.startswith("Cue") and inputs.crm is not None:
            body.append(html_table(inputs.crm))
        if title.startswith("Entity") and eme_rates is not None:
            body.append(eme_tables(inputs.eme, eme_rates, eme_group))
        if title.startswith("Which wordings") and this_wordings is not None:
            body.append(wording_tables(model["key"], inputs.wordings))
        if title.startswith("Membership") and inputs.mia is not None:
            body.append(small_sample_warning(inputs.mia) + blind_baseline_warning(inputs.mia)
                        + html_table(mia_table(inputs.mia)))
    table1 = cohort_table(inputs.pairs) if len(inputs.pairs) else pd.DataFrame()
    headline = "".join(f"<tr><th>{esc(summary_label(k))}</th><td>{v:.1f}</td></tr>" if isinstance(v, float)
                       else f"<tr><th>{esc(summary_label(k))}</th><td>{v}</td></tr>" for k, v in summary.items())
    forget_view = forget_table(inputs.forget)
    people = people_table(inputs.pairs, inputs.criterion, inputs.controlled)
    name = model.get("display_name") or model["key"]
    return "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>" + csp_meta(SCRIPTED_PAGE_CSP) +
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>Compliance report: {esc(name)}</title>",
        "<style>body{font-family:sans-serif;margin:2em auto;padding:0 1em;max-width:1200px;overflow-wrap:break-word}"
        "table.data{border-collapse:collapse;margin:.5em 0}"
        "table.data td,table.data th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f2f2f2}"
        ".scroll{max-width:100%;overflow-x:auto}.legend{color:#555;font-size:85%}"
        ".note{color:#555}.warning{background:#fff4e5;border-left:4px solid #e69500;padding:.4em .8em}"
        ".plotly-graph-div{max-width:100%}</style></head><body>",
        f"<h1>Compliance report: {esc(name)}</h1>",
        f"<p class='note'>Release <code>{esc(model['key'])}</code> ({esc(str(model.get('variant', '')))}, "
        f"{esc(str(model.get('source_kind', '')))} <code>{esc(str(model.get('source', '')))}</code>); memorized: "
        f"{esc(CRITERION_WORDS.get(inputs.criterion, inputs.criterion))}; forget set: "
        f"{esc(CRITERION_WORDS.get(inputs.forget_criterion, inputs.forget_criterion))}. Generated "
        f"{esc(str(inputs.lineage.get('generated_at', ''))[:19].replace('T', ' '))} UTC.</p>",
        plain_summary(inputs, summary),
        f"<div class='scroll'><table class='data'>{headline}</table></div>",
        "<h2>People audited</h2>",
        html_table(people, max_rows=None) if len(people) else "<p>No audited pair.</p>",
        "<h2>Table 1 (per cohort)</h2>", html_table(table1) if len(table1) else "<p>No audited pair.</p>",
        "<h2>Against invented people with the same facts (controls)</h2>", controls_tables(inputs.controlled),
        *body,
        f"<h2>Forget set ({len(inputs.forget)} facts)</h2>",
        "<p>Also written as <code>forget_set.jsonl</code> next to this file.</p>",
        html_table(forget_view) if len(forget_view) else "<p>Empty: no fact memorized under this criterion.</p>",
        "<details><summary><b>Lineage</b> (technical: model, code, data and settings this report was computed from; "
        "also in <code>lineage.json</code>)</summary>", lineage_html(inputs.lineage), "</details>",
        "</body></html>",
    ])


def forget_table(forget: pd.DataFrame) -> pd.DataFrame:
    """The forget set as the report lists it: the controls' verdict in words (one column, where
    any fact was compared with controls) instead of its five columns."""
    view = forget.drop(columns=["model", *CONTROL_COLUMNS], errors="ignore")
    if has_controls(forget):
        view["against_controls"] = [controls_words(row) for row in forget.to_dict("records")]
    return view


def people_table(pairs: pd.DataFrame, criterion: str = DEFAULT_CRITERION,
                 controlled: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per person audited: cohort, facts tested, memorized, mean M; with `controlled`
    (controlled_memorization), also the facts memorized beyond the invented-person controls."""
    if not len(pairs):
        return pd.DataFrame()
    frame = pairs.assign(person=_person_names(pairs), memorized_fact=memorized(pairs, criterion),
                         cohort=pairs["cohort"].fillna("all") if "cohort" in pairs else "all")
    if controlled is not None and len(controlled):
        beyond = controlled.set_index(["subject_qid", "property"])[controlled_rates.WITH]
        keys = pd.MultiIndex.from_frame(frame[["subject_qid", "property"]])
        frame["beyond_controls"] = beyond.reindex(keys).fillna(False).astype(bool).to_numpy()
    aggregates = dict(facts=("M", "size"), memorized_facts=("memorized_fact", "sum"), mean_M=("M", "mean"))
    if "beyond_controls" in frame:
        aggregates["beyond_controls"] = ("beyond_controls", "sum")
    table = frame.groupby(["cohort", "person"], sort=True).agg(**aggregates).reset_index()
    table["memorized_facts"] = table["memorized_facts"].astype(int)
    if "beyond_controls" in table:
        table["beyond_controls"] = table["beyond_controls"].astype(int)
    return table.rename(columns={"facts": "facts tested", "memorized_facts": "facts memorized", "mean_M": "mean M",
                                 "beyond_controls": "memorized beyond controls"})


def write_report(inputs: ReportInputs, out_dir: str | Path) -> ReportFiles:
    """report.html, forget_set.jsonl and lineage.json in `out_dir` (written whole, then renamed)."""
    if inputs.criterion not in CRITERIA or inputs.forget_criterion not in CRITERIA:
        raise ValueError(f"criteria must be among {', '.join(CRITERIA)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    inputs.lineage.setdefault("generated_at", datetime.now(UTC).isoformat(timespec="seconds"))
    summary = report_summary(inputs)
    files = ReportFiles(out / "report.html", out / "forget_set.jsonl", out / "lineage.json", summary)
    for path, write in (
        (files.html, lambda p: p.write_text(render_html(inputs, summary), encoding="utf-8")),
        (files.forget_set, lambda p: write_jsonl(inputs.forget, p)),
        (files.lineage, lambda p: p.write_text(json.dumps({**inputs.lineage, "summary": summary}, indent=2, default=str))),
    ):
        write_atomically(path, write)
    return files


# --------------------------------------------------------------------------- rendering check

@dataclass
class RenderCheck:
    figures: int  # plotly figure containers in the page
    rendered: int  # of those, drawn by plotly.js (an SVG inside after the scripts ran)
    screenshot: Path | None
    screenshot_nonblank: bool | None

    @property
    def ok(self) -> bool:
        return self.figures > 0 and self.rendered == self.figures and self.screenshot_nonblank is not False


# Headless Chromium as every check and print here runs it: no sandbox (containers), no GPU, and
# offline: every request, loopback included, goes to a proxy that is not there (port 9, discard),
# so a page can fetch nothing and call no beacon, whatever it asks for.
CHROMIUM_HEADLESS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>", "--disable-background-networking",
                     "--no-first-run", "--disable-extensions", "--disable-sync")

def find_chromium() -> str | None:
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def png_nonblank(path: str | Path, min_share: float = 0.005) -> bool:
    """Whether a PNG shows anything: share of non-trivial bytes in its filtered scanlines.

    A blank page filters to zeros (and 0xFF); charts, text and colours leave other bytes. No
    imaging library needed.
    """
    import struct
    import zlib

    data = Path(path).read_bytes()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return False
    position, idat = 8, b""
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        if kind == b"IDAT":
            idat += data[position + 8:position + 8 + length]
        position += 12 + length
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8)
    return bool(len(raw)) and float(((raw != 0) & (raw != 255)).mean()) >= min_share


def check_rendering(html_path: str | Path, screenshot: str | Path | None = None, chromium: str | None = None,
                    timeout: float = 180) -> RenderCheck:
    """Open the report in headless Chromium (offline) and count the plotly figures it drew."""
    import re

    chromium = chromium or find_chromium()
    if chromium is None:
        raise FileNotFoundError("no Chromium binary (install the Debian package `chromium`)")
    url = Path(html_path).resolve().as_uri()
    flags = [chromium, *CHROMIUM_HEADLESS, "--hide-scrollbars",
             "--virtual-time-budget=20000", "--window-size=1280,4000"]
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True, timeout=timeout).stdout
    starts = [m.start() for m in re.finditer(r'<div[^>]*class="[^"]*plotly-graph-div', dom)]
    segments = [dom[a:b] for a, b in zip(starts, [*starts[1:], len(dom)])]
    rendered = sum('class="main-svg"' in segment for segment in segments)
    nonblank = None
    if screenshot is not None:
        subprocess.run([*flags, f"--screenshot={Path(screenshot).resolve()}", url], capture_output=True, timeout=timeout)
        nonblank = Path(screenshot).exists() and png_nonblank(screenshot)
    return RenderCheck(len(starts), rendered, Path(screenshot) if screenshot else None, nonblank)


@dataclass
class PageCheck:
    """What a reader sees of a page in headless Chromium at a given window width."""

    text: str  # document.body.innerText
    scroll_width: int  # document.documentElement.scrollWidth: wider than the viewport = the page runs off
    viewport_width: int

    @property
    def fits(self) -> bool:
        return self.scroll_width <= self.viewport_width


_MEASURE_ID = "wikimem-page-check"
_MEASURE = ("<script>window.addEventListener('load',()=>{const out=document.createElement('pre');"
            f"out.id='{_MEASURE_ID}';out.textContent=JSON.stringify({{text:document.body.innerText,"
            "scrollWidth:document.documentElement.scrollWidth,viewport:window.innerWidth});"
            "document.body.appendChild(out);});</script>")


def check_page(html_path: str | Path, width: int = 1280, chromium: str | None = None, timeout: float = 180) -> PageCheck:
    """Open a page in headless Chromium at `width` px and read its text and width, as a reader would
    (a copy with a measuring script beside the page, so relative links and assets resolve)."""
    import re

    chromium = chromium or find_chromium()
    if chromium is None:
        raise FileNotFoundError("no Chromium binary (install the Debian package `chromium`)")
    page = Path(html_path)
    probe = page.with_name(f".{page.stem}.page-check.html")
    # the page's own policy (a letter's allows no script) swapped for one that runs only the inline measuring script
    text = with_csp(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text(encoding="utf-8")),
                    SCRIPTED_PAGE_CSP)
    probe.write_text(text.replace("</body>", _MEASURE + "</body>") if "</body>" in text else text + _MEASURE, encoding="utf-8")
    try:
        dom = subprocess.run([chromium, *CHROMIUM_HEADLESS,
                              "--hide-scrollbars", "--virtual-time-budget=20000", f"--window-size={width},900",
                              "--dump-dom", probe.resolve().as_uri()], capture_output=True, text=True, timeout=timeout).stdout
    finally:
        probe.unlink(missing_ok=True)
    found = re.search(rf'<pre id="{_MEASURE_ID}">(.*?)</pre>', dom, re.S)
    if found is None:
        raise RuntimeError(f"Chromium did not load {page}")
    measured = json.loads(html.unescape(found.group(1)))
    return PageCheck(measured["text"], int(measured["scrollWidth"]), int(measured["viewport"]))
