"""Per-model summaries (group "summaries", one `models` partition per model): CRM and MIA.

Wiring only: the generation paradigms, CRM rates and attacks live in wikimem_platform.crm.metrics,
wikimem_platform.lm.generation, wikimem_platform.mia and wikimem_platform.mia.membership.

A release served at an endpoint is audited through its server: CRM from its completions (and
reconstruction log-likelihoods where it gives token-id prompt log-probabilities), MIA with the
attacks its access allows (`mia.unavailable_attacks`; none at generation access, whose table
is empty and says why).
"""

from typing import Literal

import pandas as pd
from dagster import AssetExecutionContext, Config, MetadataValue, Output, asset
from pydantic import Field, field_validator

from assets.metadata import plot_path, preview
from assets.partitions import models_partitions
from resources.placement import LM_OP_TAGS, LM_POOL
from resources.scoring import RegistryResource, ScoringResource
from wikimem_platform.crm import metrics as crm
from wikimem_platform.lm.loading import other_shipped_model
from wikimem_platform.mia import auroc_figure, membership, unavailable_attacks
from wikimem_platform.planted.validation import ground_truth
from wikimem_platform.versions import source_version
from wikimem_platform.vocabulary import (
    BASELINE,
    CANARY_KINDS,
    DEFAULT_CRITERION,
    DEFAULT_CUE_TAU,
    MAX_NEW_TOKENS,
    MEMORIZED_COLUMNS,
)

GROUP = "summaries"
AUTO_REFERENCE = "auto"  # mia_summary's reference model: the other shipped model


def _metric_key(value) -> str:
    return f"{value:g}".replace(".", "_")


class CrmSummaryConfig(Config):
    paradigms: list[str] = Field(default=list(crm.PARADIGMS), description=f"CRM paradigms to run, of {', '.join(crm.PARADIGMS)}.")
    max_examples: int = Field(default=200, description="Examples per paradigm (seeded sample); 0 = every example.")
    taus: list[float] = Field(default=list(crm.TAUS), description="Cue thresholds tau the CRM rates are reported at.")
    flag_tau: float = Field(default=DEFAULT_CUE_TAU, description="A memorized fact is cue-resistant when its cue < flag_tau.")
    memorized_column: Literal[MEMORIZED_COLUMNS] = Field(
        default=DEFAULT_CRITERION, description="Which verdict of the memorization table counts as memorized.")
    max_new_tokens: int = Field(default=MAX_NEW_TOKENS, description="Greedy completion length of the generation paradigms.")
    verbatim_jsonl: str = Field(default="", description=(
        "Texts for the verbatim paradigm (JSONL: text, value, optional label member / non-member) when the "
        "model's training text is not known; a planted model's own biographies are used without it."))
    seed: int = 0


@asset(group_name=GROUP, partitions_def=models_partitions, kinds={"pytorch", "pandas"},
       code_version=source_version("wikimem_platform.crm.metrics"), pool=LM_POOL, op_tags=LM_OP_TAGS)
def crm_summary(
    context: AssetExecutionContext,
    config: CrmSummaryConfig,
    scoring: ScoringResource,
    model_registry: RegistryResource,
    canaries: pd.DataFrame,
    claims: pd.DataFrame,
    property_table: pd.DataFrame,
    memorization: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """Greedy-generation hit rate and reconstruction log-likelihood per paradigm, overall and
    for cue < tau; WikiMem's memorized share likewise (paradigm "wikimem")."""
    entry = model_registry.registry().get(context.partition_key)
    lm = scoring.load(entry, served=True)  # a served release completes through its server
    verbatim = (membership.planted_verbatim_texts(entry.source) if ground_truth(entry.source) is not None
                else membership.verbatim_texts_from_jsonl(config.verbatim_jsonl) if config.verbatim_jsonl else None)
    if "verbatim" in config.paradigms:
        context.log.info(f"verbatim paradigm: {0 if verbatim is None else len(verbatim)} texts of known wording")
    audit = crm.crm_audit(
        lm, canaries, memorization, paradigms=config.paradigms, claims=claims,
        property_labels=dict(zip(property_table["property"], property_table["label"])),
        max_examples=config.max_examples, taus=config.taus, flag_tau=config.flag_tau,
        memorized_column=config.memorized_column, max_new_tokens=config.max_new_tokens, seed=config.seed,
        verbatim_texts=verbatim,
    )
    rates = audit.rates
    numbers = {
        f"hit_rate_{row['paradigm']}_" + ("all" if row["subset"] == "all" else f"cue_lt_{_metric_key(row['tau'])}"): float(row["hit_rate"])
        for row in rates.to_dict("records") if pd.notna(row["hit_rate"])
    }
    flagged = audit.flagged
    context.log.info(f"CRM for {context.partition_key}: {numbers}")
    return Output(
        rates,
        metadata={
            "rows": len(rates),
            "model": entry.key,
            "access": lm.access,
            "examples": len(audit.examples),
            "memorized_and_cue_resistant": int(flagged["memorized_and_cue_resistant"].sum()),
            "memorized": int(flagged[config.memorized_column].sum()),
            **numbers,
            "rates": MetadataValue.md(rates.round(4).to_markdown(index=False)),
            "plot": MetadataValue.path(plot_path(context, GROUP, "crm_hit_rate", crm.rates_figure(rates))),
            "cue_roc_plot": MetadataValue.path(plot_path(context, GROUP, "crm_cue_roc", crm.cue_roc_figure(audit.cue_roc))),
            **{f"cue_auroc_{paradigm}": float(value)
               for paradigm, value in audit.cue_roc.groupby("paradigm")["auroc"].first().items()},
            "cue_resistant_facts": preview(flagged[flagged["memorized_and_cue_resistant"]][["subject_qid", "property", "M", "cue"]]),
            "sample_outputs": preview(audit.examples[["paradigm", "prompt", "output", "hit", "cue"]]),
        },
    )


class MiaSummaryConfig(Config):
    set_kind: Literal[membership.SET_KINDS] = Field(
        default="auto", description="Member/non-member set: auto = planted model dir, else jsonl_path, else association.")
    jsonl_path: str = Field(default="", description="{text, label} JSON lines, for set_kind jsonl (or auto).")
    planted_members_from: Literal["training", "held_out"] = Field(
        default="training", description="Planted sets: members are the training texts or fresh held-out biographies.")
    association_kinds: list[str] = Field(default=[BASELINE], description=f"Canary kinds in the association set, of {', '.join(CANARY_KINDS)}.")
    max_per_class: int = Field(default=100, description="Texts per class (seeded sample); 0 = all.")
    k: float = Field(default=0.2, description="Share of lowest-probability tokens for min-k% and min-k%++.")
    n_neighbours: int = Field(default=5, description="Neighbours per text for the neighbourhood attack; 0 = none.")
    reference_model: str = Field(default=AUTO_REFERENCE, description=(
        f"Reference model of the reference attack: '{AUTO_REFERENCE}' = the other shipped model (the smallest one "
        "for a model that is not shipped), a registry key (name@revision), or '' = no reference attack."))
    n_bootstrap: int = Field(default=1000, description="Bootstrap resamples for the AUROC confidence interval.")
    prefix_shots: int = Field(default=3, description="Texts of each class in ReCaLL's and Con-ReCall's prefixes; 0 = no ReCaLL.")
    gradient_norm: bool = Field(default=True, description="Run the gradient-norm attack (one backward pass per text).")
    samia_samples: int = Field(default=5, description="SaMIA: sampled continuations per text (0 = no SaMIA).")
    value_windows: list[int] = Field(default=[], description=(
        "[min_tokens, max_tokens], e.g. [50, 150] (CRM §4.4): cut each text to a window of the model's tokens centred "
        "on its personal value; texts without a window of that size are dropped. [] = whole texts."))
    seed: int = 0

    @field_validator("value_windows")
    @classmethod
    def _window_bounds(cls, value: list[int]) -> list[int]:
        membership.window_bounds(value, "value_windows")
        return value


@asset(group_name=GROUP, partitions_def=models_partitions, kinds={"pytorch", "pandas"},
       code_version=source_version("wikimem_platform.mia"), pool=LM_POOL, op_tags=LM_OP_TAGS)
def mia_summary(
    context: AssetExecutionContext,
    config: MiaSummaryConfig,
    scoring: ScoringResource,
    model_registry: RegistryResource,
    canaries: pd.DataFrame,
    candidates: pd.DataFrame,
    humans: pd.DataFrame,
    memorization: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """One row per attack: AUROC with bootstrap CI, TPR at FPR 0.1% and 1%, class sizes, set kind."""
    registry = model_registry.registry()
    entry = registry.get(context.partition_key)
    lm = scoring.load(entry, served=True)
    if not lm.capabilities.scores_text:
        reason = (f"{entry.key} is served at {lm.access} access: no log-probability of a given text, so no "
                  "membership attack")
        context.log.warning(reason)
        return Output(pd.DataFrame(columns=["attack", "auroc", "set_kind", "set_description"]),
                      metadata={"rows": 0, "model": entry.key, "access": lm.access, "not_available": reason})
    unavailable = unavailable_attacks(lm)
    if unavailable:
        context.log.info(f"{entry.key} is served at an endpoint: not run here — "
                         + "; ".join(f"{attack} ({why})" for attack, why in unavailable.items()))
    texts = membership.membership_set(
        config.set_kind, entry.source, jsonl_path=config.jsonl_path, planted_members_from=config.planted_members_from,
        canaries=canaries, candidates=candidates, audited_pairs=memorization,
        association_kinds=tuple(config.association_kinds), max_per_class=config.max_per_class or None, seed=config.seed,
        value_windows=config.value_windows, tokenizer=lm.tokenizer,
    )
    description = texts["set_description"].iloc[0] if len(texts) else ""
    windows = {f"windows_{key}": int(count) for key, count in texts.attrs.get(membership.WINDOW_FIELD, {}).items()}
    context.log.info(f"{len(texts)} texts, {int(texts['label'].sum())} members: {description} {windows or ''}")
    reference, reference_name = None, "none"
    if config.reference_model == AUTO_REFERENCE:
        reference_name = other_shipped_model(entry.source)
        reference = scoring.load_reference(reference_name)
    elif config.reference_model:
        reference_name = config.reference_model
        reference = scoring.load_reference(registry.get(reference_name))  # the release's model stays loaded
    _, table = membership.run_mia(
        lm, texts, reference_lm=reference, k=config.k, n_neighbours=config.n_neighbours,
        reference_corpus=membership.reference_corpus_texts(humans), n_bootstrap=config.n_bootstrap, seed=config.seed,
        prefix_shots=0 if "recall" in unavailable else config.prefix_shots,
        gradient_norm=config.gradient_norm and "gradient_norm" not in unavailable,
        samia_samples=0 if "samia" in unavailable else config.samia_samples,
    )
    figure = auroc_figure(table, title=f"{entry.key}: {description}")
    return Output(
        table,
        metadata={
            "rows": len(table),
            "model": entry.key,
            "set_kind": str(table["set_kind"].iloc[0]) if len(table) else "",
            "set_description": description,
            "reference_model": reference_name,
            "access": lm.access,
            "attacks_not_run": MetadataValue.md("\n".join(f"- {a}: {why}" for a, why in unavailable.items()) or "none"),
            **windows,
            **{f"auroc_{row['attack']}": float(row["auroc"]) for row in table.to_dict("records")},
            "attacks": MetadataValue.md(table.drop(columns=["set_description"]).round(4).to_markdown(index=False)),
            "plot": MetadataValue.path(plot_path(context, GROUP, "mia_auroc", figure)),
        },
    )
