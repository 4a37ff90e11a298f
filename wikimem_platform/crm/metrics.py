"""Cue-resistant memorization (CRM, Luo et al. §3): memorization counted only where the prompt
does not already show the target.

- `add_cues`: the overlap cue of each generation example (`cue.cue_for` of the prompt against
  each target; the example's cue is the MAX over its targets: if the prompt reveals any true
  value or alias, a hit on the example may be cue-driven).
- `crm_rates`: hit rate and mean reconstruction log-likelihood over all examples and over those
  with cue < tau for each tau of a grid (CRM hit rate / CRM reconstruction at tau).
- `fact_cues` / `flag_cue_resistant`: the same control for WikiMem results. A canary's cue is
  the cue of the canary with its value removed (everything the model sees around the value,
  subject name included) against each ground-truth label; per fact (subject, property) the cue
  is the MAX over the 11 variants and the true labels (conservative: a fact counts as
  cue-resistant only if no wording shows its value), `cue_mean` the mean over variants of the
  per-variant max, for reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from wikimem_platform.canaries.text import render, unmarked_value
from wikimem_platform.crm import examples as crm_examples
from wikimem_platform.crm.cue import cue_for, text_cue
from wikimem_platform.lm.endpoint import scores_token_ids
from wikimem_platform.vocabulary import CONTEXTUALIZED_KINDS, DEFAULT_CRITERION, DEFAULT_CUE_TAU, MAX_NEW_TOKENS

TAUS = (0.2, 0.35, 0.5, 0.75, 1.0)
RATE_COLUMNS = ["tau", "subset", "n", "n_hits", "hit_rate", "recon_ll_mean", "recon_ll_median"]


def example_cue(prompt: str, targets: Sequence[str], kind: str = "text") -> float:
    """Max over the targets of cue(prompt, target); 0.0 without targets."""
    return max((cue_for(kind, prompt, t) for t in targets if t), default=0.0)


def add_cues(examples: pd.DataFrame) -> pd.DataFrame:
    """Copy of `examples` (prompt, targets[, cue_kind]) with a `cue` column (max over targets)."""
    kinds = examples["cue_kind"] if "cue_kind" in examples else pd.Series("text", index=examples.index)
    return examples.assign(cue=[example_cue(p, list(t), k) for p, t, k in
                                zip(examples["prompt"], examples["targets"], kinds)])


def crm_rates(examples: pd.DataFrame, taus: Sequence[float] = TAUS,
              group_by: Sequence[str] = ("paradigm",)) -> pd.DataFrame:
    """Hit rate and reconstruction log-likelihood, overall and restricted to cue < tau.

    `examples`: cue, hit (bool) and optionally recon_ll (NaN ignored) plus the `group_by`
    columns. One row per group and subset: subset "all" (tau NaN) or "cue<tau". n counts the
    examples in the subset; hit_rate is NaN when n == 0 (no evidence either way).
    """
    groups = [c for c in group_by if c in examples.columns]
    recon = examples["recon_ll"] if "recon_ll" in examples else pd.Series(np.nan, index=examples.index)
    frame = examples.assign(_recon=recon.astype(float), _hit=examples["hit"].astype(bool))
    parts = frame.groupby(groups, sort=True, dropna=False) if groups else [((), frame)]
    rows = []
    for key, block in parts:
        key = key if isinstance(key, tuple) else (key,)
        base = dict(zip(groups, key))
        for tau in (np.nan, *taus):
            subset = block if np.isnan(tau) else block[block["cue"] < tau]
            n = len(subset)
            rows.append({**base, "tau": tau, "subset": "all" if np.isnan(tau) else f"cue<{tau:g}",
                         "n": n, "n_hits": int(subset["_hit"].sum()),
                         "hit_rate": float(subset["_hit"].mean()) if n else np.nan,
                         "recon_ll_mean": float(subset["_recon"].mean()) if n else np.nan,
                         "recon_ll_median": float(subset["_recon"].median()) if n else np.nan})
    return pd.DataFrame(rows, columns=[*groups, *RATE_COLUMNS])


def cue_roc(examples: pd.DataFrame, group_by: Sequence[str] = ("paradigm",)) -> pd.DataFrame:
    """How well the cue alone predicts a hit (the CRM paper's cue analysis as ROC curves): per
    group, the ROC points of cue as a score for hit, with its AUROC (0.5: hits do not follow the
    cue; 1: every hit has a higher cue than every miss). Groups with only hits or only misses
    are left out. Columns: *group_by, fpr, tpr, threshold, auroc, n, n_hits."""
    from sklearn.metrics import roc_auc_score, roc_curve

    groups = [c for c in group_by if c in examples.columns]
    frame = examples.dropna(subset=["cue"])
    parts = frame.groupby(groups, sort=True) if groups else [((), frame)]
    out = []
    for key, block in parts:
        hits = block["hit"].astype(bool).to_numpy()
        if hits.all() or not hits.any():
            continue
        cue = block["cue"].to_numpy(dtype=float)
        fpr, tpr, thresholds = roc_curve(hits, cue)
        key = key if isinstance(key, tuple) else (key,)
        out.append(pd.DataFrame({**dict(zip(groups, key)), "fpr": fpr, "tpr": tpr, "threshold": thresholds,
                                 "auroc": roc_auc_score(hits, cue), "n": len(block), "n_hits": int(hits.sum())}))
    columns = [*groups, "fpr", "tpr", "threshold", "auroc", "n", "n_hits"]
    return pd.concat(out, ignore_index=True)[columns] if out else pd.DataFrame(columns=columns)


def cue_roc_figure(roc: pd.DataFrame):
    """Plotly figure: one ROC curve of cue -> hit per paradigm, chance diagonal."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for paradigm, block in roc.groupby("paradigm", sort=True):
        fig.add_trace(go.Scatter(x=block["fpr"], y=block["tpr"], mode="lines",
                                 name=f"{paradigm} (AUROC {block['auroc'].iloc[0]:.2f}, {block['n_hits'].iloc[0]} hits)"))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line_dash="dash", name="chance"))
    fig.update_layout(title="Does the cue alone predict a hit? (ROC of cue -> hit)", xaxis_title="false positive rate",
                      yaxis_title="true positive rate", xaxis_range=[0, 1], yaxis_range=[0, 1])
    return fig


def canary_context(template: str, subject: str) -> str:
    """The canary as the model sees it around the value: the value placeholder removed."""
    return render(unmarked_value(template), subject, None).replace("{value}", " ")


def fact_cues(canaries: pd.DataFrame, include_contextualized: bool = False) -> pd.DataFrame:
    """Per (subject_qid, property): cue (max over variants and true labels), cue_mean, n_variants.

    Contextualized canaries (other true facts prepended) are left out by default, as in M.
    """
    use = canaries if include_contextualized else canaries[~canaries["kind"].isin(CONTEXTUALIZED_KINDS)]
    per_variant = use[["subject_qid", "property"]].copy()
    per_variant["variant_cue"] = [
        max((text_cue(canary_context(t, s), v) for v in labels if v), default=0.0)
        for t, s, labels in zip(use["template"], use["subject"], use["ground_truth_labels"])]
    out = per_variant.groupby(["subject_qid", "property"], sort=True)["variant_cue"].agg(
        cue="max", cue_mean="mean", n_variants="size").reset_index()
    return out


def flag_cue_resistant(pairs: pd.DataFrame, cues: pd.DataFrame, tau: float = DEFAULT_CUE_TAU,
                       memorized_column: str = DEFAULT_CRITERION) -> pd.DataFrame:
    """WikiMem pairs with `cue`, `cue_mean` and `memorized_and_cue_resistant`.

    memorized_and_cue_resistant = pairs[memorized_column] and cue < tau. Default memorized
    column: `at_threshold` (M >= the memorization asset's threshold, 0.8 by default: most
    wordings agree); `lenient` or `strict` are the alternatives. A pair without canaries gets
    cue NaN and is never flagged.
    """
    if memorized_column not in pairs.columns:
        raise KeyError(f"pairs has no column {memorized_column!r}")
    out = pairs.drop(columns=["cue", "cue_mean"], errors="ignore").merge(
        cues[["subject_qid", "property", "cue", "cue_mean"]], on=["subject_qid", "property"], how="left")
    out["memorized_and_cue_resistant"] = out[memorized_column].astype(bool) & (out["cue"] < tau)
    return out


def wikimem_rates(flagged: pd.DataFrame, taus: Sequence[float] = TAUS,
                  memorized_column: str = DEFAULT_CRITERION) -> pd.DataFrame:
    """CRM view of WikiMem: share of facts memorized overall and among facts with cue < tau
    (no reconstruction log-likelihood: WikiMem ranks candidates, it does not generate)."""
    examples = pd.DataFrame({"paradigm": "wikimem", "cue": flagged["cue"].astype(float),
                             "hit": flagged[memorized_column].astype(bool), "recon_ll": np.nan})
    return crm_rates(examples.dropna(subset=["cue"]), taus)


# --------------------------------------------------------------------------- one model's audit

PARADIGMS = ("canary", "twin", "triplet", "extraction", "verbatim")
# Verbatim examples from texts the model was not trained on (held-out biographies, user texts
# labelled non-member) are their own paradigm: the hit rate on training vs held-out texts.
VERBATIM, VERBATIM_HELD_OUT = "verbatim", "verbatim_held_out"


@dataclass
class CrmAudit:
    rates: pd.DataFrame     # crm_rates rows per paradigm, plus the "wikimem" rows; cue_auroc per paradigm
    examples: pd.DataFrame  # every generation example with output, hit, recon_ll, cue
    flagged: pd.DataFrame   # WikiMem pairs with cue, cue_mean, memorized_and_cue_resistant
    cue_roc: pd.DataFrame   # ROC points of cue -> hit per paradigm (`cue_roc`)


def build_examples(canaries: pd.DataFrame, paradigms: Sequence[str] = PARADIGMS,
                   claims: pd.DataFrame | None = None,
                   property_labels: Mapping[str, str] | None = None,
                   verbatim_texts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Generation examples of the chosen paradigms from the canaries (see `crm.examples`):
    canary prefixes, twin / triplet prompts from the subject's name and property label,
    cue-free extraction prompts per property whose targets are all true values audited, and
    verbatim prefixes of texts whose wording is known (`verbatim_texts`: text, value, member;
    none without them): the text before the value, the value as target."""
    unknown = set(paradigms) - set(PARADIGMS)
    if unknown:
        raise ValueError(f"unknown paradigms {sorted(unknown)}; choose from {PARADIGMS}")
    parts = []
    if "canary" in paradigms:
        parts.append(crm_examples.canary_examples(canaries))
    if {"twin", "triplet"} & set(paradigms):
        people = crm_examples.canary_associative_people(canaries, claims, property_labels)
        assoc = crm_examples.associative_examples(people)
        parts.append(assoc[assoc["paradigm"].isin(paradigms)])
    if "extraction" in paradigms:
        labels = canaries.drop_duplicates(["subject_qid", "property"])
        values = {lab: [v for vs in g["ground_truth_labels"] for v in vs]
                  for lab, g in labels.groupby("property_label", sort=True)}
        parts.append(crm_examples.extraction_examples(values))
    if "verbatim" in paradigms and verbatim_texts is not None and len(verbatim_texts):
        verbatim = crm_examples.verbatim_value_examples(verbatim_texts["text"].tolist(), verbatim_texts["value"].tolist())
        member = verbatim_texts["member"].to_numpy(dtype=bool)[verbatim["text_id"].to_numpy(dtype=int)]
        parts.append(verbatim.assign(paradigm=np.where(member, VERBATIM, VERBATIM_HELD_OUT)))
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=crm_examples.EXAMPLE_COLUMNS)


def crm_audit(lm, canaries: pd.DataFrame, pairs: pd.DataFrame, *, paradigms: Sequence[str] = PARADIGMS,
              claims: pd.DataFrame | None = None, property_labels: Mapping[str, str] | None = None,
              max_examples: int = 0, taus: Sequence[float] = TAUS, flag_tau: float = DEFAULT_CUE_TAU,
              memorized_column: str = DEFAULT_CRITERION, max_new_tokens: int = MAX_NEW_TOKENS,
              verbatim_texts: pd.DataFrame | None = None, seed: int = 0, progress=None) -> CrmAudit:
    """Generation paradigms + CRM rates for one model on the WikiMem facts in `pairs`.

    Only canaries of the (subject, property) pairs in `pairs` (the memorization result) are
    used; `max_examples` > 0 keeps at most that many examples per paradigm (seeded sample).
    """
    keys = pairs[["subject_qid", "property"]].drop_duplicates()
    chosen = canaries.merge(keys, on=["subject_qid", "property"], how="inner")
    examples = build_examples(chosen, paradigms, claims, property_labels, verbatim_texts)
    if max_examples and len(examples):
        examples = (examples.sample(frac=1.0, random_state=seed).groupby("paradigm", sort=False)
                    .head(max_examples).sort_index())
    # a release served at generation access (or with text prompts only) has no token-id NLLs:
    # its hits are read from the server's completions, without reconstruction log-likelihoods
    ran = crm_examples.run_examples(lm, examples, max_new_tokens=max_new_tokens, progress=progress,
                                    with_reconstruction=scores_token_ids(lm))
    ran = add_cues(ran)
    flagged = flag_cue_resistant(pairs, fact_cues(chosen), flag_tau, memorized_column)
    rates = pd.concat([crm_rates(ran, taus), wikimem_rates(flagged, taus, memorized_column)],
                      ignore_index=True)
    roc = cue_roc(ran)
    rates["cue_auroc"] = rates["paradigm"].map(roc.groupby("paradigm")["auroc"].first())
    return CrmAudit(rates, ran, flagged, roc)


def rates_figure(rates: pd.DataFrame):
    """Plotly figure: hit rate against tau, one line per paradigm."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for paradigm, block in rates.groupby("paradigm", sort=True):
        restricted = block[block["subset"] != "all"]
        fig.add_trace(go.Scatter(x=restricted["tau"], y=restricted["hit_rate"], mode="lines+markers",
                                 name=str(paradigm), customdata=restricted["n"],
                                 hovertemplate="cue < %{x}: %{y:.3f} (n = %{customdata})"))
    fig.update_layout(title="CRM hit rate among examples with cue < tau", xaxis_title="tau",
                      yaxis_title="hit rate", yaxis_range=[0, 1])
    return fig
