"""One NER model's memorization audit across a prompt set (paper §3.3, §4.1, Tables 4-7).

Per entity type: the trained names (in-sample) and never-trained names (out-of-sample) are each
split into dev and test halves (`splits.halves`, so both halves hold both); every prompt k gives
every name a confidence C_k(e); a prompt's M-MEM is the AUC of in- vs out-of-sample confidences.
Then the spread over prompts (Δ, σ, Kendall τ between dev and test), and the strategies of the
paper: the baselines (∅-PT, One-PT, Mix-PT), the best and worst prompt chosen on dev (B-PT,
W-PT), their token-removal modifications (BM-PT, WM-PT, on a bounded number of dev names) and
the five ensembles (weights: dev M-MEM). The math is `prompt_sensitivity`'s.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from wikimem_platform.ner.confidence import SCORE_BATCH_SIZE, score_pairs
from wikimem_platform.ner.engineering import iterative_removal, STEP_COLUMNS
from wikimem_platform.ner.prompts import EMPTY_PROMPT, generate_prompts, mix_prompt, ONE_PROMPT, PROMPTS_PER_TYPE
from wikimem_platform.ner.schema import ENTITY_TYPES, SENTENCE_TYPES
from wikimem_platform.ner.training import load_ner_model, manifest_names, NerModel
from wikimem_platform.planted.training import torch_settings
from wikimem_platform.splits import halves, seeded_draw
from wikimem_platform.wikimem import prompt_sensitivity as ps

logger = logging.getLogger(__name__)

DEV, TEST = "dev", "test"
# Strategy names as in the paper's Tables 6 and 7, with their group.
EMPTY_PT, ONE_PT, MIX_PT = "∅-PT", "One-PT", "Mix-PT"
BEST_PT, WORST_PT, BEST_MODIFIED_PT, WORST_MODIFIED_PT = "B-PT", "W-PT", "BM-PT", "WM-PT"
ENSEMBLE_NAMES = {ps.MAJORITY_VOTE: "MV", ps.AVERAGE: "AVG-C", ps.WEIGHTED: "WED-C", ps.MAXIMUM: "MAX-C",
                  ps.MINIMUM: "MIN-C"}
STRATEGY_GROUPS = {EMPTY_PT: "BSL", ONE_PT: "BSL", MIX_PT: "BSL", BEST_PT: "OPT", WORST_PT: "OPT",
                   BEST_MODIFIED_PT: "PTE", WORST_MODIFIED_PT: "PTE", **{n: "EPT" for n in ENSEMBLE_NAMES.values()}}
MIX_PROMPT_LABEL = "(one of Table 3's five per name)"
QUIET_BELOW = 1000  # scoring calls with fewer sentences are not logged (prompt engineering's)

NAME_COLUMNS = ["entity_type", "name", "is_in", "split"]
PROMPT_SCORE_COLUMNS = ["entity_type", "prompt_id", "sentence_type", "prompt", "m_mem_dev", "m_mem_test"]
SENSITIVITY_COLUMNS = ["entity_type", "delta", "sigma", "mean", "best", "worst", "best_prompt", "worst_prompt",
                       "delta_test", "sigma_test", "tau_dev_test", "n_prompts", "n_dev_names", "n_test_names"]
STRATEGY_COLUMNS = ["entity_type", "group", "strategy", "prompt", "m_mem_dev", "m_mem_test"]
CONFIDENCE_COLUMNS = ["entity_type", "prompt_id", "name", "is_in", "split", "confidence"]
ENGINEERING_COLUMNS = ["entity_type", "chain", *STEP_COLUMNS]


@dataclass(frozen=True)
class NerAuditConfig:
    """What one audit runs; the defaults are the paper's prompt set size."""

    prompts_per_type: int = PROMPTS_PER_TYPE
    names_per_class: int = 0  # in- and out-of-sample names per type (seeded choice); 0: all the model's
    # Dev names per class that prompt engineering scores its candidate prompts on (0: all dev
    # names): each step scores every one-token-shorter prompt, so the cost grows with length².
    pte_names_per_class: int = 20
    seed: int = 0
    entity_types: tuple[str, ...] = ENTITY_TYPES
    batch_size: int = SCORE_BATCH_SIZE
    # Torch threads while scoring (restored after; None: leave as set). One, as in training: on a
    # 2-core machine whose other core is busy, a second thread spins and runs 2-3x slower.
    threads: int | None = 1


@dataclass
class NerAudit:
    prompt_scores: pd.DataFrame  # PROMPT_SCORE_COLUMNS: every prompt's M-MEM on dev and test
    sensitivity: pd.DataFrame  # SENSITIVITY_COLUMNS: Δ, σ (dev; and test), best/worst, τ(dev, test) per type
    strategies: pd.DataFrame  # STRATEGY_COLUMNS: Tables 6-7, one row per type x strategy
    engineering: pd.DataFrame  # ENGINEERING_COLUMNS: the token-removal chains (M-MEM on the PTE names)
    names: pd.DataFrame  # NAME_COLUMNS: the audited names and their split
    confidences: pd.DataFrame = field(repr=False)  # CONFIDENCE_COLUMNS: C_k(e) for every prompt and name


def detection_names(names: pd.DataFrame, names_per_class: int = 0, seed: int = 0) -> pd.DataFrame:
    """The audited names with their half: per type, up to `names_per_class` in- and as many
    out-of-sample names (seeded choice), each class split by `halves`, so dev and test both hold
    in- and out-of-sample names. Columns: entity_type, name, is_in, split."""
    frames = []
    for (entity_type, is_in), block in names.groupby(["entity_type", "is_in"], sort=True):
        chosen = sorted(block["name"], key=lambda n: seeded_draw(f"ner-audit|{entity_type}|{n}", seed))
        if names_per_class:
            chosen = chosen[:names_per_class]
        dev, test = halves(chosen, seed)
        frames.append(pd.DataFrame({"entity_type": entity_type, "name": dev + test, "is_in": bool(is_in),
                                    "split": [DEV] * len(dev) + [TEST] * len(test)}))
    return pd.concat(frames, ignore_index=True)[NAME_COLUMNS]


def _pte_names(names: pd.DataFrame, per_class: int, seed: int) -> pd.DataFrame:
    """The dev names prompt engineering may use: up to `per_class` of each class (seeded)."""
    dev = names[names["split"] == DEV]
    if not per_class:
        return dev
    picked = [block.assign(order=[seeded_draw(f"ner-pte|{n}", seed) for n in block["name"]])
              .nsmallest(per_class, "order").drop(columns="order") for _, block in dev.groupby("is_in")]
    return pd.concat(picked, ignore_index=True)


class _TypeScorer:
    """C(e) of one type's names under any prompt text, each (prompt, name) scored once."""

    def __init__(self, ner: NerModel, entity_type: str, batch_size: int):
        self.ner, self.entity_type, self.batch_size = ner, entity_type, batch_size
        self.cache: dict[tuple[str, str], float] = {}

    def _score(self, wanted: list[tuple[str, str]]) -> None:
        wanted = [pair for pair in dict.fromkeys(wanted) if pair not in self.cache]
        if not wanted:
            return
        pairs = pd.DataFrame(wanted, columns=["prompt", "name"]).assign(entity_type=self.entity_type)
        # Prompt engineering asks for a few sentences at a time: only the big calls are logged.
        progress = None if len(wanted) >= QUIET_BELOW else (lambda done, total: None)
        scored = score_pairs(self.ner, pairs, self.batch_size, progress)
        self.cache.update(zip(zip(scored["prompt"], scored["name"]), scored["confidence"]))

    def confidences(self, prompts: Sequence[str], names: Sequence[str]) -> pd.DataFrame:
        """A names × prompts table of C(e)."""
        prompts = list(dict.fromkeys(prompts))
        self._score([(p, n) for p in prompts for n in names])
        return pd.DataFrame({p: [self.cache[(p, n)] for n in names] for p in prompts}, index=list(names))

    def per_name(self, prompt_of: dict[str, str]) -> pd.Series:
        """C(e) of each name under its own prompt (Mix-PT)."""
        self._score([(p, n) for n, p in prompt_of.items()])
        return pd.Series({n: self.cache[(p, n)] for n, p in prompt_of.items()}, dtype=float)


def _split_scores(confidence: pd.Series, names: pd.DataFrame) -> tuple[float, float]:
    """M-MEM of one confidence per name on dev and on test."""
    out = []
    for split in (DEV, TEST):
        block = names[names["split"] == split]
        out.append(ps.m_mem(confidence.reindex(block["name"]).to_numpy(), block["is_in"].to_numpy()))
    return out[0], out[1]


def _prompt_engineering(scorer: _TypeScorer, best: str, worst: str, pte: pd.DataFrame) -> pd.DataFrame:
    """The two token-removal chains (§4.1 PTE), M-MEM measured on the `pte` names."""

    def pte_scorer(texts: Sequence[str]) -> list[float]:
        conf = scorer.confidences(list(texts), pte["name"].tolist())
        return [ps.m_mem(conf[t].to_numpy(), pte["is_in"].to_numpy()) for t in texts]

    chains = [iterative_removal(prompt, pte_scorer, keep_high).assign(entity_type=scorer.entity_type, chain=chain)
              for chain, prompt, keep_high in (("best", best, True), ("worst", worst, False))]
    return pd.concat(chains, ignore_index=True)[ENGINEERING_COLUMNS]


def _audit_type(ner: NerModel, entity_type: str, prompts: pd.DataFrame, names: pd.DataFrame,
                config: NerAuditConfig) -> dict:
    if prompts["prompt"].duplicated().any() or prompts["prompt_id"].duplicated().any():
        raise ValueError(f"{entity_type}: prompt texts and ids must be distinct within a type")
    scorer = _TypeScorer(ner, entity_type, config.batch_size)
    all_names = names["name"].tolist()
    is_in = names.set_index("name")["is_in"]
    dev_names, test_names = (names[names["split"] == s] for s in (DEV, TEST))
    logger.info("NER audit %s: %d prompts x %d names", entity_type, len(prompts), len(all_names))
    text_of = dict(zip(prompts["prompt_id"], prompts["prompt"]))
    table = scorer.confidences(prompts["prompt"].tolist(), all_names)
    table.columns = list(text_of)  # prompt texts are distinct within a type: columns become prompt ids
    dev_table, test_table = table.loc[dev_names["name"]], table.loc[test_names["name"]]
    dev_scores = ps.prompt_scores(dev_table, dev_names["is_in"].tolist())
    test_scores = ps.prompt_scores(test_table, test_names["is_in"].tolist())
    spread, spread_test = ps.sensitivity(dev_scores), ps.sensitivity(test_scores)

    strategies = []

    def add(strategy: str, prompt: str | None, dev: float, test: float) -> None:
        strategies.append({"entity_type": entity_type, "group": STRATEGY_GROUPS[strategy], "strategy": strategy,
                           "prompt": prompt, "m_mem_dev": dev, "m_mem_test": test})

    for strategy, prompt in ((EMPTY_PT, EMPTY_PROMPT), (ONE_PT, ONE_PROMPT[entity_type])):
        add(strategy, prompt, *_split_scores(scorer.confidences([prompt], all_names)[prompt], names))
    mixed = scorer.per_name({n: mix_prompt(n, entity_type, config.seed) for n in all_names})
    add(MIX_PT, MIX_PROMPT_LABEL, *_split_scores(mixed, names))
    for strategy, prompt_id in ((BEST_PT, spread["best"]), (WORST_PT, spread["worst"])):
        add(strategy, text_of[prompt_id], dev_scores[prompt_id], test_scores[prompt_id])

    pte = _pte_names(names, config.pte_names_per_class, config.seed)
    engineering = _prompt_engineering(scorer, text_of[spread["best"]], text_of[spread["worst"]], pte)
    modified = engineering[engineering["step"] > 0]
    for strategy, pick in ((BEST_MODIFIED_PT, "idxmax"), (WORST_MODIFIED_PT, "idxmin")):
        if modified.empty:
            add(strategy, None, np.nan, np.nan)
            continue
        prompt = modified.at[getattr(modified["m_mem"], pick)(), "prompt"]
        add(strategy, prompt, *_split_scores(scorer.confidences([prompt], all_names)[prompt], names))

    ensembles_dev = ps.ensemble_scores(dev_table, dev_names["is_in"].tolist(), dev_scores)
    ensembles_test = ps.ensemble_scores(test_table, test_names["is_in"].tolist(), dev_scores)
    for rule, label in ENSEMBLE_NAMES.items():
        add(label, None, ensembles_dev[rule], ensembles_test[rule])

    scores = prompts.assign(m_mem_dev=prompts["prompt_id"].map(dev_scores),
                            m_mem_test=prompts["prompt_id"].map(test_scores))[PROMPT_SCORE_COLUMNS]
    sensitivity = {
        "entity_type": entity_type, "delta": spread["delta"], "sigma": spread["sigma"], "mean": spread["mean"],
        "best": spread["best"], "worst": spread["worst"], "best_prompt": text_of.get(spread["best"]),
        "worst_prompt": text_of.get(spread["worst"]), "delta_test": spread_test["delta"],
        "sigma_test": spread_test["sigma"], "tau_dev_test": ps.kendall_tau(dev_scores, test_scores),
        "n_prompts": spread["n_prompts"], "n_dev_names": len(dev_names), "n_test_names": len(test_names),
    }
    long = table.rename_axis("name").reset_index().melt(id_vars="name", var_name="prompt_id", value_name="confidence")
    long = long.assign(entity_type=entity_type, is_in=long["name"].map(is_in),
                       split=long["name"].map(names.set_index("name")["split"]))[CONFIDENCE_COLUMNS]
    return {"prompt_scores": scores, "sensitivity": sensitivity, "strategies": strategies,
            "engineering": engineering, "confidences": long}


def ner_audit(model: NerModel | str | Path, prompts: pd.DataFrame | None = None, names: pd.DataFrame | None = None,
              config: NerAuditConfig | None = None) -> NerAudit:
    """Audit one NER model. `model`: a loaded `NerModel` or its directory; `prompts`: a
    `generate_prompts` table (default: `config.prompts_per_type` per type); `names`: entity_type,
    name, is_in (default: the model manifest's in- and out-of-sample names)."""
    config = config or NerAuditConfig()
    ner = model if isinstance(model, NerModel) else load_ner_model(model)
    if prompts is None:
        prompts = generate_prompts(config.prompts_per_type, config.seed, config.entity_types)
    if names is None:
        names = manifest_names(ner.manifest)
    audited = detection_names(names[names["entity_type"].isin(config.entity_types)], config.names_per_class,
                              config.seed)
    with torch_settings(config.threads) if config.threads else contextlib.nullcontext():
        parts = [_audit_type(ner, t, prompts[prompts["entity_type"] == t].reset_index(drop=True),
                             audited[audited["entity_type"] == t].reset_index(drop=True), config)
                 for t in config.entity_types]
    return NerAudit(
        prompt_scores=pd.concat([p["prompt_scores"] for p in parts], ignore_index=True),
        sensitivity=pd.DataFrame([p["sensitivity"] for p in parts], columns=SENSITIVITY_COLUMNS),
        strategies=pd.DataFrame([row for p in parts for row in p["strategies"]], columns=STRATEGY_COLUMNS),
        engineering=pd.concat([p["engineering"] for p in parts], ignore_index=True),
        names=audited,
        confidences=pd.concat([p["confidences"] for p in parts], ignore_index=True),
    )


@dataclass
class NerAcrossModels:
    """Is a good prompt good on another model, and on other names?

    table: index (entity_type, prompt_id), one column "<release> <split>" per release and split
    (dev, test): the prompt's M-MEM. kendall: per entity type, Kendall τ-b between every two columns.
    """

    table: pd.DataFrame
    kendall: dict[str, pd.DataFrame]


def across_models(per_model: Mapping[str, pd.DataFrame]) -> NerAcrossModels:
    """The releases' `NerAudit.prompt_scores` (by release key) side by side, and τ between every
    two (release, split) columns per entity type."""
    columns = {f"{key} {split}": frame.set_index(["entity_type", "prompt_id"])[f"m_mem_{split}"]
               for key, frame in per_model.items() for split in (DEV, TEST)}
    table = pd.DataFrame(columns)
    kendall = {entity_type: ps.kendall_matrix(block) for entity_type, block in table.groupby(level="entity_type")}
    return NerAcrossModels(table, kendall)


def strategy_table(strategies: pd.DataFrame) -> pd.DataFrame:
    """Tables 6-7 shape: one row per (group, strategy), one M-MEM column per (type, split), and
    Δ (highest − lowest strategy) as a last row."""
    long = strategies.melt(id_vars=["entity_type", "group", "strategy"], value_vars=["m_mem_dev", "m_mem_test"],
                           var_name="split", value_name="m_mem")
    long["split"] = long["split"].str.removeprefix("m_mem_")
    wide = long.pivot(index=["group", "strategy"], columns=["entity_type", "split"], values="m_mem")
    rows = list(dict.fromkeys(zip(strategies["group"], strategies["strategy"])))
    columns = list(dict.fromkeys((t, split) for t in strategies["entity_type"] for split in (DEV, TEST)))
    wide = wide.reindex(index=pd.MultiIndex.from_tuples(rows, names=["group", "strategy"]), columns=columns)
    wide.loc[("", "Δ"), :] = wide.max() - wide.min()
    return wide


def prompt_scores_figure(prompt_scores: pd.DataFrame, split: str = DEV, title: str | None = None):
    """Plotly boxes with every prompt as a point: M-MEM by sentence type, one colour per entity
    type (the paper's Fig 3), with the no-memorization line at 0.5."""
    import plotly.graph_objects as go

    column = f"m_mem_{split}"
    fig = go.Figure()
    for entity_type, block in prompt_scores.groupby("entity_type", sort=False):
        fig.add_trace(go.Box(x=block["sentence_type"].tolist(), y=block[column].tolist(), name=entity_type,
                             boxpoints="all", jitter=0.4, pointpos=0, text=block["prompt"].tolist(),
                             hovertemplate="%{text}<br>M-MEM %{y:.3f}<extra>" + entity_type + "</extra>"))
    fig.add_hline(y=0.5, line_dash="dot", annotation_text="no memorization")
    fig.update_layout(title=title or f"M-MEM of every prompt ({split} names)", boxmode="group",
                      xaxis={"title": "sentence type", "categoryorder": "array", "categoryarray": list(SENTENCE_TYPES)},
                      yaxis_title="M-MEM (AUC, in- vs out-of-sample)")
    return fig
