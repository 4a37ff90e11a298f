"""Calibration study (issue 17.5): does WikiMem's similar-name term cancel real knowledge?

    s(h,v) = [NLL(h0,v) - NLL(h,v)] - alpha * [NLL(h0,v) - mean_h~ NLL(h~,v)]   (memorization.py)

The paper's look-alikes S(h) alter ONE name part ("Kcarab Obama", "Barack Amabo"; half the tokens
of a longer name); when one part alone carries a fact (Obama -> United States) the look-alike
"knows" it too and alpha = 1 subtracts real knowledge. The default (alpha = 1, one-part
look-alikes) stays the audit's definition; this module measures the alternatives on one scores
table, against two groups of subjects known to differ in what the model knows: members vs
non-members of a planted model, or well-known vs lesser-known real people (`positive` names the
group expected to know more).

- Settings (`SETTINGS`): NLL(h) alone (no h0, no look-alikes), alpha = 0, and alpha in {0.5, 1}
  with one-part (the `nll_similar` column) or all-part look-alikes (`nll_similar_all_parts`,
  `canaries.names.all_parts_similar_names`).
- Per setting and pair: M (memorization.pair_metrics) and the truth confidence, the mean over the
  scored wordings of the share of counterfactuals the best truth beats (ties one half;
  wording.wording_confidences). Separation between the groups = AUROC of M (the audit's own
  number; 0.5 = chance), ties broken by the AUROC of the truth confidence (M is a share of 11 and
  ties often; the confidence is finer). Beside them the rank-1 rate per group (share of canaries
  with a truth first) and its gap.
- Look-alike knowledge (`lookalike_hits`): every name variant ranks the candidates by its own
  NLL(x, v) (lower is better) — the real name, the generic subject h0, each look-alike — and
  the share of wordings whose ground truth ranks first is counted (memorization's tie rule). A
  look-alike that hits as often as the real name carries the fact; subtracting it cancels it.
- Disagreement flag (`flag_disagreements`): raw (alpha = 0) vs calibrated M of a pair differ by
  at least `DISAGREEMENT_M_GAP`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from wikimem_platform.canaries.names import all_parts_similar_names
from wikimem_platform.lm.scorer import CachingScorer, Scorer
from wikimem_platform.vocabulary import CONTEXTUALIZED_KINDS
from wikimem_platform.wikimem.memorization import (
    EQUIVALENCE_THRESHOLD,
    included_variants,
    kind_column,
    mark_equivalents,
    OUTER_KEYS,
    PAIR_KEYS,
    pair_metrics,
    prepare_scores,
    similar_mean,
    VARIANT_KEYS,
    variant_metrics,
)
from wikimem_platform.wikimem.prompt_sensitivity import m_mem
from wikimem_platform.wikimem.scoring import expand_canaries, reads_continuations, sentence_nlls, sentence_prefixes
from wikimem_platform.wikimem.wording import wording_confidences

ONE_PART, ALL_PARTS = "one_part", "all_parts"
# The scores-table list column of NLL(h~, v), one entry per look-alike, for each kind of look-alike.
LOOKALIKE_COLUMNS = {ONE_PART: "nll_similar", ALL_PARTS: "nll_similar_all_parts"}
NAME, GENERIC = "name", "generic"  # the real name h and the generic subject h0 in `lookalike_hits`


@dataclass(frozen=True)
class Setting:
    """One way to score: alpha, which look-alikes (None: not read), whether NLL(h0) is subtracted."""
    name: str
    alpha: float
    lookalikes: str | None
    generic: bool = True


PAPER_SETTING = "alpha=1 one-part"
SETTINGS = (
    Setting("NLL(h) alone", 0.0, None, generic=False),  # the "raw NLL" ranking
    Setting("alpha=0", 0.0, None),
    Setting("alpha=0.5 one-part", 0.5, ONE_PART),
    Setting(PAPER_SETTING, 1.0, ONE_PART),
    Setting("alpha=0.5 all-parts", 0.5, ALL_PARTS),
    Setting("alpha=1 all-parts", 1.0, ALL_PARTS),
)
SEPARATION, SEPARATION_TIEBREAK = "M_auroc", "confidence_auroc"

# Raw and calibrated verdicts disagree strongly when M (alpha = 0) and M (alpha = 1) differ by at
# least half the wordings: then one setting ranks a truth first in a majority of the 11 wordings
# (or exactly half) while the other does in at most half, i.e. their majority verdicts cannot
# agree, and it takes >= 6 of 11 wordings changing side, far more than one noisy wording.
DISAGREEMENT_M_GAP = 0.5
RAW_ALPHA = 0.0
RAW_M = "M_raw"
DISAGREEMENT = "calibration_disagreement"


# --------------------------------------------------------------------------- inputs

def _scored(frame: pd.DataFrame) -> pd.DataFrame:
    """Baseline + paraphrase rows (the wordings M is a share of)."""
    return frame[included_variants(frame, False, CONTEXTUALIZED_KINDS)]


def _lookalike_mean(scores: pd.DataFrame, kind: str) -> np.ndarray:
    column = LOOKALIKE_COLUMNS[kind]
    if column in scores.columns:
        return similar_mean(scores[column])
    if kind == ONE_PART and "nll_similar_mean" in scores.columns:
        return scores["nll_similar_mean"].to_numpy(dtype=float)
    raise KeyError(f"scores lacks the {kind} look-alike column {column!r} (needed by the {kind} settings)")


def setting_frame(scores: pd.DataFrame, setting: Setting) -> pd.DataFrame:
    """`scores` arranged so that prepare_scores(frame, setting.alpha) computes the setting's s."""
    frame = scores.drop(columns=["nll_similar_mean"], errors="ignore")
    if not setting.generic:
        frame = frame.assign(nll_h0=0.0)  # alpha = 0 and NLL(h0) = 0: s = -NLL(h)
    if setting.lookalikes is not None:
        frame["nll_similar_mean"] = _lookalike_mean(scores, setting.lookalikes)
    return frame


def _group_series(groups: Mapping[str, str] | pd.Series, positive: str, subjects: Sequence[str]) -> pd.Series:
    """subject_qid -> group label of the audited subjects; exactly two labels, one of them `positive`."""
    series = pd.Series(groups) if not isinstance(groups, pd.Series) else groups
    series = series[~series.index.duplicated()].reindex(pd.unique(pd.Series(list(subjects)))).dropna()
    labels = sorted(map(str, series.unique()))
    if positive not in labels or len(labels) != 2:
        raise ValueError(f"groups: the audited subjects must fall into exactly two groups, one of them "
                         f"positive={positive!r}; found {labels}")
    return series.astype(str)


def with_equivalents(scores: pd.DataFrame, embed: Callable[[list[str]], np.ndarray] | None = None,
                     value_aliases: Mapping[str, Sequence[str]] | None = None,
                     threshold: float = EQUIVALENCE_THRESHOLD) -> pd.DataFrame:
    """`scores` with its is_equivalent column computed once (every setting then reuses it)."""
    if "is_equivalent" in scores.columns:
        return scores
    if embed is None and not value_aliases:
        return scores.assign(is_equivalent=False)
    return scores.assign(is_equivalent=mark_equivalents(scores, embed, value_aliases, threshold).to_numpy())


# --------------------------------------------------------------------------- settings

def setting_pairs(scores: pd.DataFrame, setting: Setting) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(variants, pairs) of one setting. variants: subject_qid, property, variant_id, kind,
    truth_rank, memorized (scored wordings only); pairs: subject_qid, property, n_variants, M,
    truth_confidence (mean over the scored wordings)."""
    frame = setting_frame(scores, setting)
    _, variants = variant_metrics(prepare_scores(frame, setting.alpha), outer_keys=())
    pairs = pair_metrics(variants, outer_keys=())[[*PAIR_KEYS, "n_variants", "M"]]
    rankings = _scored(wording_confidences(frame, setting.alpha).rankings)
    confidence = rankings.groupby(list(PAIR_KEYS))["truth_confidence"].mean().rename("truth_confidence")
    pairs = pairs.join(confidence, on=list(PAIR_KEYS))
    kind = kind_column(variants)
    keep = [*VARIANT_KEYS, *([kind] if kind else []), "truth_rank", "memorized"]
    return _scored(variants)[keep].reset_index(drop=True), pairs


def _separation_row(setting: Setting, variants: pd.DataFrame, pairs: pd.DataFrame, is_positive: pd.Series) -> dict:
    pair_pos = pairs["subject_qid"].map(is_positive).to_numpy(dtype=bool)
    var_pos = variants["subject_qid"].map(is_positive).to_numpy(dtype=bool)
    memorized = variants["memorized"].to_numpy(dtype=float)
    rank1 = {side: float(memorized[mask].mean()) if mask.any() else np.nan
             for side, mask in (("positive", var_pos), ("negative", ~var_pos))}
    return {
        "setting": setting.name, "alpha": setting.alpha, "lookalikes": setting.lookalikes or "none",
        "subtracts_generic": setting.generic, "is_default": setting.name == PAPER_SETTING,
        SEPARATION: m_mem(pairs["M"], pair_pos),
        SEPARATION_TIEBREAK: m_mem(pairs["truth_confidence"], pair_pos),
        "rank1_rate_positive": rank1["positive"], "rank1_rate_negative": rank1["negative"],
        "rank1_rate_gap": rank1["positive"] - rank1["negative"],
        "M_mean_positive": float(pairs.loc[pair_pos, "M"].mean()),
        "M_mean_negative": float(pairs.loc[~pair_pos, "M"].mean()),
        "n_pairs_positive": int(pair_pos.sum()), "n_pairs_negative": int((~pair_pos).sum()),
    }


def best_setting(table: pd.DataFrame) -> str:
    """The setting with the highest AUROC of M, ties broken by the AUROC of the truth confidence
    (then by the table's order, which puts the simpler setting first)."""
    ranked = table.assign(_order=np.arange(len(table))).sort_values(
        [SEPARATION, SEPARATION_TIEBREAK, "_order"], ascending=[False, False, True], na_position="last")
    return str(ranked["setting"].iloc[0])


# --------------------------------------------------------------------------- look-alikes

def _name_variants(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per (scores row, name variant): name_kind, lookalike_index, s = -NLL(variant, v)."""
    base_columns = [*VARIANT_KEYS, *([k] if (k := kind_column(scores)) else []), "value", "is_g"]
    base = scores[base_columns].reset_index(drop=True)
    frames = [base.assign(name_kind=NAME, lookalike_index=0, s=-scores["nll_h"].to_numpy(dtype=float)),
              base.assign(name_kind=GENERIC, lookalike_index=0, s=-scores["nll_h0"].to_numpy(dtype=float))]
    for kind, column in LOOKALIKE_COLUMNS.items():
        if column not in scores.columns:
            continue
        lists = scores[column].reset_index(drop=True)
        lengths = lists.map(len).to_numpy()
        rows = np.repeat(np.arange(len(base)), lengths)
        index = np.concatenate([np.arange(n) for n in lengths]) if len(lengths) else np.array([], dtype=int)
        flat = np.concatenate([np.asarray(v, dtype=float) for v in lists]) if lengths.sum() else np.array([])
        frames.append(base.iloc[rows].reset_index(drop=True).assign(name_kind=kind, lookalike_index=index, s=-flat))
    out = pd.concat(frames, ignore_index=True)
    return out[out["s"].notna()].reset_index(drop=True)


def lookalike_hits(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (subject, property, name variant): how often its own NLL ranks a ground truth first.

    `scores` must carry is_g (as `prepare_scores` adds it). Columns: subject_qid, property,
    name_kind (name | generic | one_part | all_parts), lookalike_index, n_variants, n_rank1,
    rank1_share, n_rank1_shared (wordings where the real name ranks a truth first too) and
    name_rank1_share (the real name's share, to compare with).
    """
    candidates = _name_variants(scores)
    _, variants = variant_metrics(candidates, outer_keys=("name_kind", "lookalike_index"))
    variants = _scored(variants)
    name_hits = variants.loc[variants["name_kind"] == NAME, [*VARIANT_KEYS, "memorized"]]
    variants = variants.merge(name_hits.rename(columns={"memorized": "name_memorized"}), on=list(VARIANT_KEYS),
                              how="left")
    variants["shared"] = variants["memorized"].astype(bool) & variants["name_memorized"].fillna(False).astype(bool)
    keys = [*PAIR_KEYS, "name_kind", "lookalike_index"]
    hits = variants.groupby(keys, sort=True).agg(n_variants=("memorized", "size"), n_rank1=("memorized", "sum"),
                                                  n_rank1_shared=("shared", "sum")).reset_index()
    hits[["n_rank1", "n_rank1_shared"]] = hits[["n_rank1", "n_rank1_shared"]].astype(int)
    hits["rank1_share"] = hits["n_rank1"] / hits["n_variants"]
    own = hits[hits["name_kind"] == NAME].set_index(list(PAIR_KEYS))["rank1_share"].rename("name_rank1_share")
    return hits.join(own, on=list(PAIR_KEYS))


def lookalike_summary(hits: pd.DataFrame, groups: pd.Series) -> pd.DataFrame:
    """Per group and name variant: mean rank-1 share over pairs, beside the real name's, and the
    share of the real name's rank-1 hits that the variant hits too (what alpha = 1 cancels)."""
    hits = hits.assign(group=hits["subject_qid"].map(groups)).dropna(subset=["group"])
    summary = hits.groupby(["group", "name_kind", "lookalike_index"], sort=True).agg(
        n_pairs=("rank1_share", "size"), rank1_share=("rank1_share", "mean"),
        name_rank1_share=("name_rank1_share", "mean"), n_rank1_shared=("n_rank1_shared", "sum"),
    ).reset_index()
    name_total = hits[hits["name_kind"] == NAME].groupby("group")["n_rank1"].sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        summary["share_of_name_hits"] = summary["n_rank1_shared"] / summary["group"].map(name_total).to_numpy(dtype=float)
    return summary


# --------------------------------------------------------------------------- the study

@dataclass
class CalibrationStudy:
    settings: pd.DataFrame          # one row per setting: separation, rank-1 rates per group, best
    variants: pd.DataFrame          # setting, subject_qid, property, variant_id, kind, truth_rank, memorized, group
    pairs: pd.DataFrame             # setting, subject_qid, property, n_variants, M, truth_confidence, group
    lookalikes: pd.DataFrame        # `lookalike_hits` + group
    lookalike_summary: pd.DataFrame  # `lookalike_summary`
    best: str                       # the setting that separates the groups best
    positive: str                   # the group expected to know more
    negative: str


def calibration_study(scores: pd.DataFrame, groups: Mapping[str, str] | pd.Series, positive: str,
                      settings: Sequence[Setting] = SETTINGS,
                      embed: Callable[[list[str]], np.ndarray] | None = None,
                      value_aliases: Mapping[str, Sequence[str]] | None = None,
                      equivalence_threshold: float = EQUIVALENCE_THRESHOLD) -> CalibrationStudy:
    """Evaluate `scores` under every setting and say which separates the two groups best.

    scores: memorization's input (one model) plus `nll_similar_all_parts` (a list per row) for the
    all-part settings; groups: subject_qid -> group label (e.g. member / non-member, or the
    cohort), two labels among the audited subjects; positive: the label expected to know more.
    """
    if not settings:
        raise ValueError("settings: give at least one calibration setting")
    scores = with_equivalents(scores, embed, value_aliases, equivalence_threshold)
    group_of = _group_series(groups, positive, scores["subject_qid"])
    scores = scores[scores["subject_qid"].isin(group_of.index)].reset_index(drop=True)
    is_positive = group_of.eq(positive)
    rows, variant_frames, pair_frames = [], [], []
    for setting in settings:
        variants, pairs = setting_pairs(scores, setting)
        rows.append(_separation_row(setting, variants, pairs, is_positive))
        variant_frames.append(variants.assign(setting=setting.name))
        pair_frames.append(pairs.assign(setting=setting.name))
    table = pd.DataFrame(rows)
    best = best_setting(table)
    table["separates_best"] = table["setting"].eq(best)
    negative = next(label for label in group_of.unique() if label != positive)
    hits = lookalike_hits(prepare_scores(scores, alpha=0.0))
    add_group = lambda frame: frame.assign(group=frame["subject_qid"].map(group_of).to_numpy())  # noqa: E731
    first = lambda frame: frame[["setting", *[c for c in frame.columns if c != "setting"]]]  # noqa: E731
    return CalibrationStudy(
        settings=table,
        variants=add_group(first(pd.concat(variant_frames, ignore_index=True))),
        pairs=add_group(first(pd.concat(pair_frames, ignore_index=True))),
        lookalikes=add_group(hits),
        lookalike_summary=lookalike_summary(hits, group_of),
        best=best, positive=positive, negative=str(negative),
    )


# --------------------------------------------------------------------------- scoring the all-part look-alikes

ALL_PARTS_PER_SUBJECT = 2  # as many as the paper's one-part S(h) (canaries.build's n_similar)


def with_all_parts_lookalikes(canaries: pd.DataFrame, n: int = ALL_PARTS_PER_SUBJECT) -> pd.DataFrame:
    """`canaries` with subject_similar replaced by look-alikes that alter every name part (the
    subject's aliases avoided, as the builder does for the one-part ones); the one-part list is
    kept as subject_similar_one_part."""
    aliases = canaries["subject_aliases"] if "subject_aliases" in canaries.columns else pd.Series([[]] * len(canaries))
    memo: dict[tuple, list[str]] = {}

    def looks(name: str, avoid) -> list[str]:
        key = (name, tuple(avoid if isinstance(avoid, (list, tuple, np.ndarray)) else ()))
        if key not in memo:
            memo[key] = all_parts_similar_names(name, n=n, avoid=list(key[1]))
        return memo[key]

    out = canaries.copy()
    out["subject_similar_one_part"] = canaries["subject_similar"]
    out["subject_similar"] = [looks(name, avoid) for name, avoid in zip(canaries["subject"], aliases)]
    return out


def score_all_parts(lm: Scorer, scores: pd.DataFrame, canaries: pd.DataFrame, candidates: pd.DataFrame,
                    n: int = ALL_PARTS_PER_SUBJECT, sentence_cache=None,
                    progress: Callable[[int, int], None] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """(scores + nll_similar_all_parts, the look-alike names per subject, sentences computed).

    Only the all-part look-alike sentences go through the model (`scoring.sentence_nlls`: the
    shared-prefix engine, or a served release's server), and only those not in `sentence_cache` (a `scoring.SentenceNllCache`
    of the model, read first and filled after): NLL(h), NLL(h0) and the one-part NLLs come from
    `scores`. Canaries are restricted to the (subject, property, variant) rows that `scores`
    holds. Names: subject_qid, subject, one_part (list), all_parts (list).
    """
    held = scores[list(VARIANT_KEYS)].drop_duplicates()
    chosen = with_all_parts_lookalikes(canaries.merge(held, on=list(VARIANT_KEYS), how="inner"), n)
    rows = expand_canaries(chosen, candidates)
    counts = rows["sentences_similar"].map(len).to_numpy()
    flat = [sentence for group in rows["sentences_similar"] for sentence in group]
    scorer = CachingScorer(lm, sentence_cache)  # read first, filled after
    prefixes = sentence_prefixes(rows) if reads_continuations(lm) else None
    nll = sentence_nlls(scorer, flat, cache={}, progress=progress, prefixes=prefixes)  # a served release: its server
    rows[LOOKALIKE_COLUMNS[ALL_PARTS]] = [part.tolist() for part in np.split(nll, np.cumsum(counts)[:-1])] \
        if len(rows) else []
    merge_keys = [*VARIANT_KEYS, "value"]
    out = scores.drop(columns=[LOOKALIKE_COLUMNS[ALL_PARTS]], errors="ignore").merge(
        rows[[*merge_keys, LOOKALIKE_COLUMNS[ALL_PARTS]]].drop_duplicates(merge_keys), on=merge_keys, how="left",
        validate="many_to_one")
    missing = out[LOOKALIKE_COLUMNS[ALL_PARTS]].isna()
    out.loc[missing, LOOKALIKE_COLUMNS[ALL_PARTS]] = pd.Series([[]] * int(missing.sum()), index=out.index[missing],
                                                                 dtype=object)
    names = chosen.drop_duplicates("subject_qid")[["subject_qid", "subject", "subject_similar_one_part",
                                                    "subject_similar"]]
    names = names.rename(columns={"subject_similar_one_part": ONE_PART, "subject_similar": ALL_PARTS})
    return out, names.reset_index(drop=True), scorer.computed


# --------------------------------------------------------------------------- memorization table flag

def flag_disagreements(candidates: pd.DataFrame, pairs: pd.DataFrame, raw_alpha: float = RAW_ALPHA,
                       gap: float = DISAGREEMENT_M_GAP) -> pd.DataFrame:
    """`pairs` (calibrated, memorization.pair_metrics) with M_raw (M at `raw_alpha`) and
    calibration_disagreement = |M - M_raw| >= gap.

    candidates: the calibrated run's candidate table (evaluate_wikimem's, with is_equivalent), so
    the raw verdicts use the same ground-truth equivalences without embedding again.
    """
    frame = candidates.drop(columns=["s", "is_g", "rank", "delta"], errors="ignore")
    outer = tuple(k for k in OUTER_KEYS if k in frame.columns and k in pairs.columns)
    _, variants = variant_metrics(prepare_scores(frame, alpha=raw_alpha), outer_keys=outer)
    raw = pair_metrics(variants, outer_keys=outer)[[*outer, *PAIR_KEYS, "M"]].rename(columns={"M": RAW_M})
    out = pairs.drop(columns=[RAW_M, DISAGREEMENT], errors="ignore").merge(raw, on=[*outer, *PAIR_KEYS], how="left")
    out[DISAGREEMENT] = (out["M"] - out[RAW_M]).abs().ge(gap - 1e-12).fillna(False).astype(bool)
    return out


# --------------------------------------------------------------------------- figure

def study_figure(table: pd.DataFrame, positive: str, negative: str, title: str | None = None):
    """Rank-1 rate per group under each setting (bars), the AUROC of M as a line (right axis)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for side, label, color in (("positive", positive, "#1e8449"), ("negative", negative, "#7f8c8d")):
        fig.add_trace(go.Bar(x=table["setting"], y=table[f"rank1_rate_{side}"], name=f"rank-1 rate, {label}",
                             marker_color=color))
    fig.add_trace(go.Scatter(x=table["setting"], y=table[SEPARATION], name="AUROC of M", yaxis="y2",
                             mode="lines+markers", marker=dict(size=10, color="#c0392b")))
    fig.update_layout(title=title or "Calibration settings: rank-1 rate per group and separation",
                      barmode="group", yaxis=dict(title="rank-1 rate", range=[0, 1.02]),
                      yaxis2=dict(title="AUROC of M (0.5 = chance)", overlaying="y", side="right", range=[0, 1.02]))
    return fig
