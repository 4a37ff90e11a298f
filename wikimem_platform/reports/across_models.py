"""WikiMem's Table 1 and Fig. 1 across every audited release, and the cross-model HTML report.

Inputs are the per-release memorization tables (one row per (subject, property): M, z*, the
strict / lenient / at-threshold flags, cohort) and what the registry says about each release
(family, base or instruct, size). Everything here is pandas and plotly; no model, no Dagster.

- Table 1 (paper: per model and cohort, mean M (%), mean z*, H_{M=0} "6/100"), computed by
  `memorization.cohort_table` with the release as outer key, so one definition serves the
  per-release report and the table across releases; the strict / lenient / threshold shares
  sit beside M-bar.
- Fig. 1 (paper: "per-property memorization rates over all paraphrased template variants, for
  the base and instruct-tuned" model): mean M (%) per property, one bar per release labelled
  with its variant, one panel per cohort. Compared on the (subject, property) pairs every
  release audited, so a difference is the models' and not the sample's.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from wikimem_platform.reference.cohorts import LESSER_KNOWN, WELL_KNOWN
from wikimem_platform.reports.compliance import html_table
from wikimem_platform.reports.page_policy import csp_meta, SCRIPTED_PAGE_CSP
from wikimem_platform.storage import write_atomically
from wikimem_platform.wikimem import controlled_rates
from wikimem_platform.wikimem.memorization import cohort_table

RELEASE = "model"
RELEASE_INFO_COLUMNS = ["family", "variant", "parameter_count"]
PAIR_KEYS = ["subject_qid", "property"]
ALL_COHORTS = "all"
# with controls (controlled_rates): shares of facts memorized beyond the invented-person controls and
# beating them at all; empty for a release whose controls were not computed
CONTROLLED_COLUMNS = [f"{controlled_rates.WITH}_pct", f"{controlled_rates.BEATS}_pct"]
TABLE1_COLUMNS = [RELEASE, *RELEASE_INFO_COLUMNS, "cohort", "n_subjects", "n_pairs", "M_bar_pct", "strict_pct",
                  "lenient_pct", "at_threshold_pct", *CONTROLLED_COLUMNS, "z_star_mean", "H_M0", "H_M0_of"]
GAP_COLUMNS = [RELEASE, *controlled_rates.GAP_COLUMNS]
PAPER_MEASURES = {"M_bar_pct": "M̄ (%)", "z_star_mean": "z̄*", "H_M0_of": "H(M=0)"}
RATE_COLUMNS = [RELEASE, "variant", "cohort", "property", "property_label", "n_pairs", "M_bar_pct"]
REPORT_NOTE = (
    "Each row is one audited model release and one group of people (well-known: much written about them online; "
    "lesser-known: little). M is the share of the wordings of a fact (a plain statement and ten paraphrases) in "
    "which the model ranks the person's true value above 100 made-up alternatives; M-bar is its mean over the "
    "people's facts. strict = every wording, lenient = at least one, at threshold = M at or above the threshold. "
    "z* says how clearly the true value wins when it does (larger = more certain). H(M=0) counts the people of "
    "whom the model holds none of the audited facts.")


GAP_NOTE = (
    "The gap in the share of facts memorized between well-known and lesser-known people, first as the paper counts "
    "(M ≥ 0.8), then counting only facts that also beat invented people given the same facts (p ≤ α). The 95% "
    "interval resamples people within each cohort (2,000 bootstrap samples).")


def stack_releases(per_release: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One table of every release's pairs with the release in column `model` (empty tables are skipped)."""
    frames = [frame.assign(**{RELEASE: key}) for key, frame in per_release.items() if frame is not None and len(frame)]
    if not frames:
        return pd.DataFrame(columns=[RELEASE, *PAIR_KEYS, "M", "z_star", "cohort"])
    return pd.concat(frames, ignore_index=True)


def _cohort_order(cohorts: pd.Series) -> pd.Series:
    """The paper's order: well-known, lesser-known, any other cohort by name, `all` last."""
    fixed = {WELL_KNOWN: 0, LESSER_KNOWN: 1, ALL_COHORTS: 3}
    return cohorts.map(lambda c: (fixed.get(c, 2), str(c)))


def _release_info(releases: pd.DataFrame | None, keys: Sequence[str]) -> pd.DataFrame:
    info = pd.DataFrame({RELEASE: list(keys)})
    if releases is None or not len(releases):
        return info.assign(**{c: None for c in RELEASE_INFO_COLUMNS})
    known = releases.rename(columns={"key": RELEASE})[[RELEASE, *[c for c in RELEASE_INFO_COLUMNS if c in releases]]]
    info = info.merge(known, on=RELEASE, how="left")
    for column in RELEASE_INFO_COLUMNS:
        if column not in info:
            info[column] = None
    return info


def table1(per_release: Mapping[str, pd.DataFrame], releases: pd.DataFrame | None = None,
           cohorts_and_all: bool = True, controlled: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Table 1 across releases: one row per (release, cohort), plus an `all` row per release.

    `releases`: the registry's rows (columns key, family, variant, parameter_count); releases it
    does not list keep empty info. H_M0_of is the paper's "6/100" notation. `controlled`: per
    release, its `controlled_memorization` table: the rates with controls beside those without.
    """
    stacked = stack_releases(per_release)
    if not len(stacked):
        return pd.DataFrame(columns=TABLE1_COLUMNS)
    if "cohort" not in stacked:
        stacked["cohort"] = ALL_COHORTS
    stacked["cohort"] = stacked["cohort"].fillna(ALL_COHORTS)
    parts = [cohort_table(stacked, outer_keys=(RELEASE,))]
    if cohorts_and_all and stacked["cohort"].ne(ALL_COHORTS).any():
        parts.append(cohort_table(stacked.assign(cohort=ALL_COHORTS), outer_keys=(RELEASE,)))
    table = pd.concat(parts, ignore_index=True)
    table["H_M0_of"] = table["H_M0"].astype(str) + "/" + table["n_subjects"].astype(str)
    with_controls = [controlled_rates.rates(frame).assign(**{RELEASE: key})
                     for key, frame in (controlled or {}).items() if frame is not None and len(frame)]
    if with_controls:
        rates = pd.concat(with_controls, ignore_index=True)[[RELEASE, "cohort", *CONTROLLED_COLUMNS]]
        table = table.merge(rates, on=[RELEASE, "cohort"], how="left")
    else:
        table = table.assign(**{c: float("nan") for c in CONTROLLED_COLUMNS})
    table = table.merge(_release_info(releases, table[RELEASE].unique()), on=RELEASE, how="left")
    return _in_order(table, per_release)[TABLE1_COLUMNS]


def cohort_gaps(controlled: Mapping[str, pd.DataFrame] | None) -> pd.DataFrame:
    """Per release with controls: the well-known minus lesser-known gap without and with them, each
    with its bootstrap CI (`controlled_rates.cohort_gap`)."""
    frames = [controlled_rates.cohort_gap(frame).assign(**{RELEASE: key})
              for key, frame in (controlled or {}).items() if frame is not None and len(frame)]
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True)[GAP_COLUMNS] if frames else pd.DataFrame(columns=GAP_COLUMNS)


def _in_order(frame: pd.DataFrame, per_release: Mapping[str, pd.DataFrame], *more: str) -> pd.DataFrame:
    """Releases in the order given, cohorts in the paper's order (then `more` columns as they come)."""
    order = {key: i for i, key in enumerate(per_release)}
    keys = pd.DataFrame({"release": frame[RELEASE].map(order), "cohort": _cohort_order(frame["cohort"])})
    position = sorted(range(len(frame)), key=lambda i: (keys["release"].iat[i], keys["cohort"].iat[i]))
    return frame.iloc[position].reset_index(drop=True)


def table1_paper_layout(table: pd.DataFrame) -> pd.DataFrame:
    """The paper's layout: one row per release, per cohort M-bar (%), z*-bar and H(M=0) side by side."""
    if not len(table):
        return pd.DataFrame()
    cohorts = table[table["cohort"] != ALL_COHORTS] if table["cohort"].ne(ALL_COHORTS).any() else table
    measures = tuple(PAPER_MEASURES)
    wide = cohorts.pivot_table(index=RELEASE, columns="cohort", values=list(measures), aggfunc="first", sort=False)
    ordered = [(measure, cohort) for cohort in dict.fromkeys(cohorts["cohort"]) for measure in measures
               if (measure, cohort) in wide.columns]
    wide = wide[ordered]
    wide.columns = [f"{cohort}: {PAPER_MEASURES[measure]}" for measure, cohort in wide.columns]
    info = table.drop_duplicates(RELEASE)[[RELEASE, "variant"]]
    return info.merge(wide.reset_index(), on=RELEASE, how="left")


def common_pairs(per_release: Mapping[str, pd.DataFrame]) -> pd.MultiIndex:
    """The (subject, property) pairs every release with results audited."""
    common = None
    for frame in per_release.values():
        if frame is None or not len(frame):
            continue
        index = pd.MultiIndex.from_frame(frame[PAIR_KEYS])
        common = index if common is None else common.intersection(index)
    return common if common is not None else pd.MultiIndex.from_tuples([], names=PAIR_KEYS)


def property_rates(per_release: Mapping[str, pd.DataFrame], releases: pd.DataFrame | None = None,
                   property_labels: Mapping[str, str] | None = None, on_common_pairs: bool = True) -> pd.DataFrame:
    """Fig. 1's numbers: mean M (%) per (release, cohort, property), cohort `all` included.

    With `on_common_pairs` only the pairs every release audited count (the paper compares base
    and instruct on the same people).
    """
    stacked = stack_releases(per_release)
    if on_common_pairs and len(stacked):
        keep = common_pairs(per_release)
        stacked = stacked[pd.MultiIndex.from_frame(stacked[PAIR_KEYS]).isin(keep)]
    if not len(stacked):
        return pd.DataFrame(columns=RATE_COLUMNS)
    if "cohort" not in stacked:
        stacked["cohort"] = ALL_COHORTS
    stacked["cohort"] = stacked["cohort"].fillna(ALL_COHORTS)
    both = pd.concat([stacked, stacked.assign(cohort=ALL_COHORTS)]) if stacked["cohort"].ne(ALL_COHORTS).any() else stacked
    rates = both.groupby([RELEASE, "cohort", "property"], sort=False).agg(
        n_pairs=("M", "size"), M_bar_pct=("M", "mean")).reset_index()
    rates["M_bar_pct"] = rates["M_bar_pct"].astype(float) * 100.0
    labels = property_labels or {}
    rates["property_label"] = rates["property"].map(lambda p: labels.get(p, p))
    rates = rates.merge(_release_info(releases, rates[RELEASE].unique())[[RELEASE, "variant"]], on=RELEASE, how="left")
    return _in_order(rates, per_release)[RATE_COLUMNS]


def _release_name(key: str, variant) -> str:
    return f"{key} ({variant})" if isinstance(variant, str) and variant else key


def property_figure(rates: pd.DataFrame, title: str = "Memorization rate per property, base vs instruct"):
    """Fig. 1: mean M (%) per property, one bar per release (named with its variant), one panel per cohort."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    if not len(rates):
        fig = go.Figure()
        fig.add_annotation(text="no release has memorization results", showarrow=False, x=0.5, y=0.5,
                           xref="paper", yref="paper")
        fig.update_layout(title=title, xaxis_visible=False, yaxis_visible=False)
        return fig
    cohorts = list(dict.fromkeys(rates["cohort"]))
    fig = make_subplots(rows=len(cohorts), cols=1, shared_xaxes=True, subplot_titles=cohorts, vertical_spacing=0.12)
    releases = list(dict.fromkeys(rates[RELEASE]))
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
    for row, cohort in enumerate(cohorts, start=1):
        for i, release in enumerate(releases):
            block = rates[(rates["cohort"] == cohort) & (rates[RELEASE] == release)]
            name = _release_name(release, block["variant"].iloc[0] if len(block) else None)
            fig.add_trace(go.Bar(
                x=[f"{label} ({p})" for label, p in zip(block["property_label"], block["property"])],
                y=block["M_bar_pct"], name=name, legendgroup=release, showlegend=row == 1,
                marker_color=colors[i % len(colors)], customdata=block["n_pairs"],
                hovertemplate="%{x}: %{y:.1f}% (%{customdata} pairs)<extra>" + html.escape(name) + "</extra>",
            ), row=row, col=1)
        fig.update_yaxes(title_text="mean M (%)", range=[0, 100], row=row, col=1)
    fig.update_layout(title=title, barmode="group", height=320 * len(cohorts) + 120)
    return fig


def table1_figure(table: pd.DataFrame, title: str = "Table 1: mean memorization rate per release and cohort"):
    """M-bar with the strict / lenient / threshold shares, one group of bars per release, per cohort."""
    import plotly.graph_objects as go

    fig = go.Figure()
    if not len(table):
        return fig.update_layout(title=title)
    measures = {"M_bar_pct": "mean M", "strict_pct": "strict", "at_threshold_pct": "at threshold", "lenient_pct": "lenient"}
    x = [[_release_name(k, v) for k, v in zip(table[RELEASE], table["variant"])], list(table["cohort"])]
    for column, name in measures.items():
        fig.add_trace(go.Bar(x=x, y=table[column], name=name))
    fig.update_layout(title=title, barmode="group", yaxis_title="% of audited facts", yaxis_range=[0, 100])
    return fig


@dataclass
class AcrossModelsReport:
    table1: pd.DataFrame
    rates: pd.DataFrame
    wording_kendall: pd.DataFrame | None = None  # Kendall τ of wording scores between releases
    gaps: pd.DataFrame | None = None  # cohort_gaps: the well-known vs lesser-known gap per release, both ways
    generated_at: str = ""


def _table_html(frame: pd.DataFrame) -> str:
    """Every row, two decimals, a dash where a release has no value."""
    return html_table(frame, max_rows=None, decimals=2, na_rep="–")


def render_html(report: AcrossModelsReport) -> str:
    """The cross-model report as one HTML document (plotly.js inlined once)."""
    esc = html.escape
    releases = list(dict.fromkeys(report.table1[RELEASE])) if len(report.table1) else []
    figures = [("Table 1 as bars", table1_figure(report.table1)),
               ("Memorization rate per property (the paper's Fig. 1)", property_figure(report.rates))]
    body = []
    for i, (title, figure) in enumerate(figures):
        body.append(f"<h2>{esc(title)}</h2>")
        body.append(figure.to_html(full_html=False, include_plotlyjs=i == 0, default_height="460px",
                                   config={"displaylogo": False}))
    kendall = ""
    if report.wording_kendall is not None and len(report.wording_kendall):
        kendall = ("<h2>Do the same wordings reveal the most on every release?</h2><p class='note'>Kendall τ of the "
                   "wordings' scores between releases (1 = same order, 0 = unrelated).</p>"
                   + _table_html(report.wording_kendall.round(3).rename_axis("release").reset_index()))
    return "\n".join([
        "<!DOCTYPE html><html><head><meta charset='utf-8'>" + csp_meta(SCRIPTED_PAGE_CSP)
        + "<title>Memorization across model releases</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}table.data{border-collapse:collapse;margin:.5em 0}"
        "table.data td,table.data th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f2f2f2}"
        ".note{color:#555}</style></head><body>",
        "<h1>Memorization across model releases</h1>",
        f"<p>{len(releases)} release(s) with results: {esc(', '.join(releases)) or 'none'}. "
        f"Generated {esc(report.generated_at)}.</p>",
        f"<p class='note'>{esc(REPORT_NOTE)}</p>",
        "<h2>Table 1 (paper layout)</h2>", _table_html(table1_paper_layout(report.table1)),
        "<h2>Table 1 (every measure)</h2>", _table_html(report.table1),
        "<h2>Well-known minus lesser-known, without and with controls</h2>",
        (f"<p class='note'>{esc(GAP_NOTE)}</p>" + _table_html(report.gaps)) if report.gaps is not None and len(report.gaps)
        else "<p class='note'>No release has controls for both cohorts (controlled_memorization).</p>",
        *body,
        "<h2>Per property</h2>", _table_html(report.rates),
        kendall,
        "</body></html>",
    ])


def report_dir(storage_dir: str | Path) -> Path:
    """The cross-model report's folder, beside the per-release ones (`storage.report_dir`): a release
    key always holds an "@", so no release's folder can take this name."""
    return Path(storage_dir) / "reports" / "across_models"


def write_report(report: AcrossModelsReport, out_dir: str | Path) -> Path:
    """report.html in `out_dir`, written whole then renamed."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.html"
    write_atomically(path, lambda p: p.write_text(render_html(report), encoding="utf-8"))
    return path
