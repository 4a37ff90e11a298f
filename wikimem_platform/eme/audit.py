"""One model's entity-memorization audit: text prompts, soft prompts, fabricated records, data
volume, the ensemble, and the same soft-prompt training on a control model.

Every *arm* asks the model for the same evaluated people's facts and differs only in how it
asks: `prompt_method` ("record" / "sentence" text prompts, or a soft-prompt method on top of the
record prompt, or "ensemble"), `prefix_length` (0 for text prompts), `training_data` ("none",
"real", "fabricated"), `n_training` (training records) and `model_role` ("audited" or
"control"). Soft prompts are trained only on records of the training split; the evaluated people
are the rest (`records.split_people`), so a hit is the model recalling a fact nobody showed the
prompt. Rates use `crm.crm_rates`: overall and among prompts with cue < tau.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from wikimem_platform.crm.metrics import crm_rates, TAUS
from wikimem_platform.eme.ensemble import ensemble_choice, extracted_entity
from wikimem_platform.eme.records import (
    DEFAULT_N_IDENTIFIERS,
    entity_examples,
    fabricate,
    facts_from_claims,
    planted_inputs,
    properties_by_usage,
    split_people,
    TEXT_PROMPTS,
)
from wikimem_platform.eme.soft_prompts import (
    DEFAULT_METHOD,
    METHODS,
    SoftPromptConfig,
    SoftPromptStore,
    training_texts,
    with_soft_prompt,
)
from wikimem_platform.lm.generation import greedy_generate, substring_hit
from wikimem_platform.lm.loading import LoadedModel
from wikimem_platform.lm.scorer import Scorer
from wikimem_platform.planted.validation import ground_truth
from wikimem_platform.progress import throttled
from wikimem_platform.vocabulary import MAX_NEW_TOKENS

if TYPE_CHECKING:
    import torch

TRAINING_DATA = ("real", "fabricated")
ARM_COLUMNS = ["model_role", "prompt_method", "prefix_length", "training_data", "n_training"]
AUDITED, CONTROL = "audited", "control"
ENSEMBLE = "ensemble"
Log = Callable[[str], None]


@dataclass(frozen=True)
class EmeConfig:
    """What one audit runs (see the module docstring); defaults fit a CPU and a small sample."""

    n_identifiers: int = DEFAULT_N_IDENTIFIERS
    train_share: float = 0.5
    split_seed: int = 0
    text_prompts: tuple[str, ...] = TEXT_PROMPTS
    methods: tuple[str, ...] = (DEFAULT_METHOD,)
    prefix_lengths: tuple[int, ...] = (5, 10)
    training_data: tuple[str, ...] = TRAINING_DATA
    # Data-volume sweep (Table 1): training-record counts for the default method at the first
    # prefix length, real and fabricated; counts at or above the available records are skipped.
    volumes: tuple[int, ...] = ()
    epochs: int = 60
    batch_size: int = 16
    learning_rate: float = 3e-2
    # The control (Zhou et al. Fig. 5b): "untrained" (the audited architecture with random
    # weights: it cannot know anyone), "none", or a loaded control model passed to `eme_audit`.
    control: str = "untrained"
    max_eval_people: int = 0  # 0: every evaluated person
    max_training_people: int = 0  # 0: every training person (a seeded sample otherwise)
    max_new_tokens: int = MAX_NEW_TOKENS
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = set(self.methods) - set(METHODS)
        if unknown:
            raise ValueError(f"methods: unknown {sorted(unknown)}; allowed: {list(METHODS)}")
        unknown = set(self.training_data) - set(TRAINING_DATA)
        if unknown:
            raise ValueError(f"training_data: unknown {sorted(unknown)}; allowed: {list(TRAINING_DATA)}")
        unknown = set(self.text_prompts) - set(TEXT_PROMPTS)
        if unknown:
            raise ValueError(f"text_prompts: unknown {sorted(unknown)}; allowed: {list(TEXT_PROMPTS)}")
        if self.control not in ("untrained", "none", "given"):
            raise ValueError(f"control must be 'untrained', 'none' or 'given', got {self.control!r}")
        if any(n < 1 for n in self.prefix_lengths):
            raise ValueError(f"prefix_lengths must be >= 1, got {self.prefix_lengths}")

    def soft_prompt(self, method: str, length: int) -> SoftPromptConfig:
        return SoftPromptConfig(method=method, n_virtual_tokens=length, epochs=self.epochs,
                                batch_size=self.batch_size, learning_rate=self.learning_rate, seed=self.seed)


@dataclass
class EmeAudit:
    examples: pd.DataFrame  # one row per arm x evaluated prompt: output, entity, hit, cue
    rates: pd.DataFrame  # crm_rates per arm (and `group_by` columns)
    prompts: pd.DataFrame  # every soft prompt used: arm, path, training people, loss, seconds
    split: dict = field(default_factory=dict)  # training / evaluated people, excluded prompts


@dataclass
class AuditPeople:
    """Whom one release's audit evaluates and whose records may train its soft prompts."""

    facts: pd.DataFrame  # FACT_COLUMNS of every person the audit may use
    cohorts: pd.DataFrame  # subject_qid and the `group` column the rates are split by
    never_train: list[str]  # people no soft prompt may be trained on
    evaluate_only: list[str] | None  # the people evaluated (None: the split decides)
    group: str  # "repetitions" (planted ground truth) or "cohort"
    planted: bool  # ground truth known: a planted model audited on its planted people


def audit_people(source, subjects: pd.DataFrame, claims: pd.DataFrame, humans: pd.DataFrame,
                 property_table: pd.DataFrame) -> AuditPeople:
    """On a planted model audited on its planted people (`planted.ground_truth`): the planted
    facts, members by repetitions and non-members, the non-members never trained on. Otherwise
    the audited cohorts (`subjects`: qid, cohort) are evaluated and the extract's other people
    (`claims`, `humans`) train the prompts."""
    planted_people = planted_inputs(source) if ground_truth(source) is not None else None
    planted = bool(planted_people is not None and subjects["qid"].isin(planted_people[1]["subject_qid"]).any())
    if planted:  # ground truth: members (by repetitions) and non-members, never trained on
        facts, cohorts = planted_people
        return AuditPeople(facts, cohorts, cohorts.loc[~cohorts["member"], "subject_qid"].tolist(), None,
                           "repetitions", True)
    labels = dict(zip(property_table["property"], property_table["label"]))
    facts = facts_from_claims(claims, humans, labels)
    cohorts = subjects[["qid", "cohort"]].rename(columns={"qid": "subject_qid"})
    return AuditPeople(facts, cohorts, subjects["qid"].tolist(), subjects["qid"].tolist(), "cohort", False)


def untrained_copy(lm: LoadedModel, seed: int = 0) -> LoadedModel:
    """The audited architecture with seeded random weights: the control that never saw anyone."""
    import torch

    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(lm.model.config).to(device=lm.device, dtype=lm.dtype)
    model.eval()
    fingerprint = hashlib.sha256(f"untrained:{seed}:{lm.fingerprint}".encode()).hexdigest()
    return dataclasses.replace(lm, model=model, name=f"{lm.name}-untrained", fingerprint=fingerprint)


def _mean_token_nll(lm: Scorer, texts: Sequence[str]) -> np.ndarray:
    """Per-token NLL of each whole text (log perplexity): the ensemble's tie-breaker."""
    totals = lm.score_sentences(list(texts))
    lengths = np.array([max(len(ids) - 1, 1) for ids in lm.encode(list(texts))])
    return totals / lengths


def _generate(lm: Scorer, examples: pd.DataFrame, arm: Mapping, max_new_tokens: int,
              log: Log) -> pd.DataFrame:
    started = time.perf_counter()
    out = examples.copy()
    # peft's prompt / p-tuning wrappers drop position ids: batch equal lengths only (no padding)
    unpadded = arm["prompt_method"] in ("prompt", "p-tuning")
    out["output"] = greedy_generate(lm, out["prompt"].tolist(), max_new_tokens, unpadded=unpadded)
    out["entity"] = [extracted_entity(o) for o in out["output"]]
    out["hit"] = [substring_hit(o, list(t)) for o, t in zip(out["output"], out["targets"])]
    for key, value in arm.items():
        out[key] = value
    log(f"{_arm_name(arm)}: {int(out['hit'].sum())}/{len(out)} facts emitted "
        f"({time.perf_counter() - started:.1f} s)")
    return out


def _arm_name(arm: Mapping) -> str:
    parts = [arm["model_role"], arm["prompt_method"]]
    if arm["prefix_length"]:
        parts.append(f"length {arm['prefix_length']}")
    if arm["training_data"] != "none":
        parts.append(f"{arm['training_data']} x{arm['n_training']}")
    return ", ".join(str(p) for p in parts)


def eme_audit(lm: Scorer, facts: pd.DataFrame, store: SoftPromptStore, config: EmeConfig = EmeConfig(),
              *, never_train: Sequence[str] = (), evaluate_only: Sequence[str] | None = None,
              control_lm: LoadedModel | None = None, group_by: Sequence[str] = (),
              cohorts: pd.DataFrame | None = None, taus: Sequence[float] = TAUS,
              log: Log | None = None) -> EmeAudit:
    """Run every arm of `config` on `lm` for the people of the fact table `facts`.

    never_train: people who must be evaluated, never trained on (request subjects; a planted
    world's non-members). evaluate_only: evaluate just these people (default: everyone not in the
    training split). cohorts: subject_qid plus columns to group rates by (`group_by`), e.g.
    member / repetitions, or the well-known / lesser-known cohort.
    """
    log = log or (lambda message: None)
    if not lm.capabilities.can_use_soft_prompts and (config.methods or config.control == "untrained"):
        log(f"EME on {lm.name}, served at an endpoint: the text prompts are asked through its server; soft prompts "
            "and the untrained control are skipped (they need the model's weights)")
        config = dataclasses.replace(config, methods=(), control="none")
    train_people, evaluated = split_people(facts["subject_qid"], config.train_share, config.split_seed, never_train)
    if evaluate_only is not None:
        wanted = set(evaluate_only)
        evaluated = [q for q in evaluated if q in wanted]
    rng = np.random.default_rng(config.seed)
    if config.max_eval_people and len(evaluated) > config.max_eval_people:
        evaluated = sorted(rng.choice(evaluated, config.max_eval_people, replace=False).tolist())
    if config.max_training_people and len(train_people) > config.max_training_people:
        train_people = sorted(rng.choice(train_people, config.max_training_people, replace=False).tolist())
    train_facts = facts[facts["subject_qid"].isin(train_people)]
    eval_facts = facts[facts["subject_qid"].isin(evaluated)]
    overlap = set(train_facts["subject_qid"]) & set(eval_facts["subject_qid"])
    if overlap:  # split_people guarantees it; a soft prompt trained on an evaluated person is void
        raise AssertionError(f"{len(overlap)} people are both trained on and evaluated")

    order = properties_by_usage(facts)
    eval_examples = {style: entity_examples(eval_facts, config.n_identifiers, order, style) for style in config.text_prompts}
    record_examples, excluded = eval_examples.get("record") or entity_examples(eval_facts, config.n_identifiers, order, "record")
    training_sets = _training_sets(train_facts, config, order)
    log(f"EME: {len(train_people)} training people, {len(evaluated)} evaluated, "
        f"{len(record_examples)} record prompts ({excluded} excluded: the prompt shows the answer)")

    parts, prompts = [], []
    roles = [(AUDITED, lm)]
    if config.control == "untrained":
        roles.append((CONTROL, untrained_copy(lm, config.seed)))
    elif config.control == "given" and control_lm is not None:
        roles.append((CONTROL, control_lm))
    for role, model in roles:
        for style in config.text_prompts if role == AUDITED else ("record",):
            examples = eval_examples[style][0] if style in eval_examples else record_examples
            arm = dict(model_role=role, prompt_method=style, prefix_length=0, training_data="none", n_training=0)
            parts.append(_generate(model, examples, arm, config.max_new_tokens, log))
        for data_kind, n_training, method, length in _soft_arms(config, training_sets, role):
            texts = training_sets[(data_kind, n_training)]
            details = {"training_people": sorted(set(train_people)), "split_seed": config.split_seed,
                       "train_share": config.train_share, "training_data": data_kind, "model_role": role}
            stored = store.get_or_train(model, texts, config.soft_prompt(method, length), details,
                                        progress=throttled(log, f"training {method} prompt, length {length}", "steps"))
            arm = dict(model_role=role, prompt_method=method, prefix_length=length,
                       training_data=data_kind, n_training=len(texts))
            prompts.append({**arm, "path": str(stored.path), "train_seconds": stored.manifest["train_seconds"],
                            "final_loss": stored.manifest["losses"][-1], "n_training_people": len(set(train_people))})
            wrapped = with_soft_prompt(model, stored)
            parts.append(_generate(wrapped, record_examples, arm, config.max_new_tokens, log))
    examples = pd.concat(parts, ignore_index=True)
    examples = pd.concat([examples, _ensembles(lm, examples, config)], ignore_index=True)
    if cohorts is not None:
        examples = examples.merge(cohorts, on="subject_qid", how="left")
    rates = audit_rates(examples, group_by, taus)
    split = {"training_people": sorted(train_people), "evaluated_people": sorted(evaluated),
             "excluded_prompts": int(excluded), "n_record_prompts": len(record_examples)}
    return EmeAudit(examples, rates, pd.DataFrame(prompts), split)


def audit_rates(examples: pd.DataFrame, group_by: Sequence[str] = (), taus: Sequence[float] = TAUS) -> pd.DataFrame:
    """`crm.crm_rates` per arm (and `group_by` columns): hit rate overall and for cue < tau."""
    return crm_rates(examples, taus, group_by=[*ARM_COLUMNS, *[c for c in group_by if c in examples]])


def ground_truth_group(examples: pd.DataFrame) -> str | None:
    """What rates are split by: repetitions where known (planted), else the cohort, else nothing."""
    return next((c for c in ("repetitions", "cohort") if c in examples and examples[c].notna().any()), None)


def _training_sets(train_facts: pd.DataFrame, config: EmeConfig, order: Sequence[str]) -> dict:
    """(data kind, n records) -> training texts: all records, and the volume sweep's subsets
    (a seeded shuffle cut at each volume, so smaller sets are contained in larger ones)."""
    sets = {}
    for kind in config.training_data:
        source = train_facts if kind == "real" else fabricate(train_facts, config.seed)
        examples, _ = entity_examples(source, config.n_identifiers, order, "record")
        examples = examples.sample(frac=1.0, random_state=config.seed).reset_index(drop=True)
        texts = training_texts(examples)
        sets[(kind, len(texts))] = texts
        for volume in config.volumes:
            if 0 < volume < len(texts):
                sets[(kind, volume)] = texts[:volume]
    return sets


def _soft_arms(config: EmeConfig, training_sets: Mapping, role: str):
    """(data kind, n_training, method, prefix length) of every soft-prompt arm of a model role.

    The audited model: every method x length on all real records, the default method x length on
    all fabricated records (as the paper's Table 1), and the volume sweep (default method, first
    length). The control: the first method and length on
    all real records (the paper's Fig. 5b compares one setting)."""
    full = {kind: max(n for k, n in training_sets if k == kind) for kind, _ in training_sets}
    if not config.methods or not config.prefix_lengths:
        return []
    if role == CONTROL:
        return [("real", full["real"], config.methods[0], config.prefix_lengths[0])] if "real" in full else []
    sweep_method = DEFAULT_METHOD if DEFAULT_METHOD in config.methods else config.methods[0]
    arms = [("real", full["real"], method, length) for method in config.methods
            for length in config.prefix_lengths if "real" in full]
    arms += [("fabricated", full["fabricated"], sweep_method, length)
             for length in config.prefix_lengths if "fabricated" in full]
    arms += [(kind, n, sweep_method, config.prefix_lengths[0]) for kind, n in sorted(training_sets)
             if n != full[kind]]
    return arms


def _ensembles(lm: Scorer, examples: pd.DataFrame, config: EmeConfig) -> pd.DataFrame:
    """The paper's ensemble of the soft-prompt methods per (training data, length), where at
    least two methods ran on all the training records of the audited model."""
    soft = examples[(examples["model_role"] == AUDITED) & examples["prompt_method"].isin(METHODS)]
    if soft.empty:
        return examples.iloc[0:0]
    full = soft.groupby("training_data")["n_training"].transform("max")
    soft = soft[soft["n_training"] == full]
    parts = []
    for (data_kind, length), block in soft.groupby(["training_data", "prefix_length"], sort=True):
        methods = [m for m in METHODS if m in set(block["prompt_method"])]
        if len(methods) < 2:
            continue
        wide = block.pivot_table(index=["subject_qid", "property"], columns="prompt_method",
                                 values="entity", aggfunc="first")
        base = block[block["prompt_method"] == methods[0]].set_index(["subject_qid", "property"])
        base = base.loc[wide.index]
        candidates = [[wide.at[key, m] for m in methods] for key in wide.index]
        chosen, rule = ensemble_choice(
            candidates, base["prompt"].tolist(), base["joiner"].tolist(),
            lambda texts: _mean_token_nll(lm, texts))
        out = base.reset_index().copy()
        out["output"] = chosen
        out["entity"] = chosen
        out["ensemble_rule"] = rule
        out["hit"] = [substring_hit(c, list(t)) for c, t in zip(chosen, out["targets"])]
        out["prompt_method"] = ENSEMBLE
        out["training_data"] = data_kind
        out["prefix_length"] = length
        parts.append(out)
    return pd.concat(parts, ignore_index=True) if parts else examples.iloc[0:0]


# --------------------------------------------------------------------------- per person

def person_extractions(lm: Scorer, facts: pd.DataFrame, store: SoftPromptStore | None = None,
                       n_identifiers: int = DEFAULT_N_IDENTIFIERS, property_order: Sequence[str] | None = None,
                       max_new_tokens: int = MAX_NEW_TOKENS, log: Log | None = None,
                       targets: set[str] | None = None) -> pd.DataFrame:
    """One person's record prompts (fact table `facts` of that person) asked as written and
    through every soft prompt already stored for this model that was trained on real records of
    *other* people (the release's `eme_probe` trains them; a request never trains one, so it
    costs seconds). targets: ask only the prompts of these properties (the record still names the
    other facts). Columns as `eme_audit`'s examples."""
    log = log or (lambda message: None)
    if facts["subject_qid"].nunique() > 1:
        raise ValueError("person_extractions takes the facts of one person")
    examples, _ = entity_examples(facts, n_identifiers, property_order, "record")
    if targets is not None and len(examples):
        examples = examples[examples["property"].isin(targets)].reset_index(drop=True)
    if examples.empty:
        return examples.assign(**{c: [] for c in ARM_COLUMNS}, output=[], entity=[], hit=[])
    qid = examples["subject_qid"].iloc[0]
    usable = {}  # arm -> the newest stored prompt of that arm
    for stored in store.stored(lm) if store is not None else []:
        manifest = stored.manifest
        if manifest.get("training_data") != "real" or manifest.get("model_role") != AUDITED \
                or qid in set(manifest.get("training_people", ())):
            continue
        config = stored.config
        arm = (config.method, config.n_virtual_tokens, int(manifest["n_texts"]))
        usable[arm] = stored
    record = dict(model_role=AUDITED, prompt_method="record", prefix_length=0, training_data="none", n_training=0)
    parts = [_generate(lm, examples, record, max_new_tokens, log)]
    for (method, length, n_training), stored in usable.items():
        arm = dict(model_role=AUDITED, prompt_method=method, prefix_length=length, training_data="real", n_training=n_training)
        parts.append(_generate(with_soft_prompt(lm, stored), examples, arm, max_new_tokens, log))
    return pd.concat(parts, ignore_index=True)


# --------------------------------------------------------------------------- reporting

def arm_label(row: Mapping) -> str:
    """A short name for an arm: "record", "prefix 5", "prefix 5 fabricated x50", "control prefix 5"."""
    label = str(row["prompt_method"])
    if row["prefix_length"]:
        label += f" {int(row['prefix_length'])}"
    if row["training_data"] == "fabricated":
        label += " fabricated"
    if row.get("volume_sweep"):
        label += f" x{int(row['n_training'])}"
    if row["model_role"] == CONTROL:
        label = f"control {label}"
    return label


def rate_table(rates: pd.DataFrame, group: str | None = None) -> pd.DataFrame:
    """Hit rate per arm (rows, in a fixed order) and `group` value (columns), all prompts."""
    rows = rates[rates["subset"] == "all"].copy()
    largest = rows.groupby(["model_role", "training_data"])["n_training"].transform("max")
    rows["volume_sweep"] = rows["n_training"] < largest
    rows["arm"] = [arm_label(r) for r in rows.to_dict("records")]
    rows = rows.sort_values(["model_role", "training_data", "prefix_length", "n_training"], kind="stable")
    if group is None or group not in rows:
        return rows.drop_duplicates("arm").set_index("arm")[["n", "hit_rate"]]
    return rows.pivot_table(index="arm", columns=group, values="hit_rate", sort=False)


def rates_figure(rates: pd.DataFrame, group: str | None = None, title: str = "Entity extraction rate"):
    """Plotly bars: the hit rate of every arm, one bar per `group` value (cohort, repetitions)."""
    import plotly.graph_objects as go

    table = rate_table(rates, group)
    fig = go.Figure()
    columns = [c for c in table.columns if c != "n"] if group else ["hit_rate"]
    for column in columns:
        fig.add_trace(go.Bar(x=table.index.tolist(), y=table[column].tolist(),
                             name=f"{group} = {column}" if group else "hit rate"))
    fig.update_layout(title=title, barmode="group", yaxis_title="share of facts the model emitted",
                      yaxis_range=[0, 1], xaxis_title="prompt")
    return fig
