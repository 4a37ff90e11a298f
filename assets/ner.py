"""Memorization in NER models (group "ner", one `models` partition per token-classification
release; NER prompt-sensitivity paper): M-MEM of every prompt, Δ and σ per entity type, and the
paper's strategies (baselines, best/worst prompt, prompt engineering, five ensembles).

Wiring only: prompts, confidences and strategies live in wikimem_platform.ner, the math in
wikimem_platform.wikimem.prompt_sensitivity. The in-sample (trained) and out-of-sample names come from
the model directory's manifest (a model the platform fine-tuned) or from a JSONL file the user
gives (`names_path`: entity_type, name, is_in per line).
"""

import pandas as pd
from dagster import AllPartitionMapping, AssetExecutionContext, AssetIn, Config, MetadataValue, Output, asset
from pydantic import Field

from assets.config import to_library
from assets.metadata import by_release, plot_path, preview
from assets.partitions import models_partitions
from assets.wording import ACROSS_MODELS_GROUP
from resources.placement import LM_OP_TAGS, LM_POOL
from resources.scoring import RegistryResource
from wikimem_platform import ner
from wikimem_platform.registry import Task
from wikimem_platform.versions import source_version
from wikimem_platform.wikimem import prompt_sensitivity

GROUP = "ner"


class NerMemorizationConfig(Config):
    prompts_per_type: int = Field(default=ner.PROMPTS_PER_TYPE, description="Generated prompts per entity type (the paper's 400).")
    names_per_class: int = Field(default=0, description="In- and out-of-sample names per entity type (seeded choice); 0 = all.")
    pte_names_per_class: int = Field(default=20, description="Dev names per class that prompt engineering scores its candidates on.")
    entity_types: list[str] = Field(default=list(ner.ENTITY_TYPES), description=f"Of {', '.join(ner.ENTITY_TYPES)}.")
    names_path: str = Field(default="", description="JSONL of entity_type, name, is_in; empty = the model manifest's names.")
    seed: int = 0


def _markdown(frame: pd.DataFrame) -> MetadataValue:
    return MetadataValue.md(frame.round(3).to_markdown(index=False))


@asset(group_name=GROUP, partitions_def=models_partitions, kinds={"pytorch", "pandas", "plotly"},
       code_version=source_version("wikimem_platform.ner", "wikimem_platform.wikimem.prompt_sensitivity"),
       pool=LM_POOL, op_tags=LM_OP_TAGS)
def ner_memorization(context: AssetExecutionContext, config: NerMemorizationConfig,
                     model_registry: RegistryResource) -> Output[pd.DataFrame]:
    """One row per prompt: its M-MEM on the dev and test names (strategies and Δ, σ as metadata)."""
    entry = model_registry.registry().get(context.partition_key)
    if entry.task != Task.TOKEN_CLASSIFICATION:
        raise ValueError(f"task: {entry.key} is a {entry.task} model; ner_memorization audits {Task.TOKEN_CLASSIFICATION.value} models")
    audit_config = to_library(config, ner.NerAuditConfig)
    names = ner.read_names(config.names_path) if config.names_path else None
    audit = ner.ner_audit(entry.source, names=names, config=audit_config)
    numbers = {f"{row['entity_type']}_{name}": float(row[name])
               for row in audit.sensitivity.to_dict("records") for name in ("delta", "sigma", "tau_dev_test")
               if pd.notna(row[name])}
    context.log.info(f"NER memorization of {entry.key}: {numbers}")
    figure = ner.prompt_scores_figure(audit.prompt_scores, title=f"{entry.key}: M-MEM of every prompt (dev names)")
    return Output(
        audit.prompt_scores,
        metadata={
            "rows": len(audit.prompt_scores),
            **numbers,
            "sensitivity": _markdown(audit.sensitivity),
            "strategies": _markdown(ner.strategy_table(audit.strategies).reset_index()),
            "best_prompts": preview(audit.prompt_scores.sort_values("m_mem_dev", ascending=False)),
            "plot": MetadataValue.path(plot_path(context, GROUP, "ner_prompt_scores", figure)),
        },
    )


@asset(
    group_name=ACROSS_MODELS_GROUP,
    ins={"ner_memorization": AssetIn(partition_mapping=AllPartitionMapping(), metadata={"allow_missing_partitions": True})},
    kinds={"pandas", "plotly"},
    code_version=source_version("wikimem_platform.ner", "wikimem_platform.wikimem.prompt_sensitivity"),
)
def ner_memorization_across_models(context: AssetExecutionContext, ner_memorization) -> Output[pd.DataFrame]:
    """Prompt × (release, split) M-MEM table and Kendall τ between every two columns: is a good
    prompt good on another model, and on other names?"""
    per_model = by_release(context, "ner_memorization", ner_memorization)
    if not per_model:  # no NER release audited yet
        return Output(pd.DataFrame(columns=["entity_type", "prompt_id"]), metadata={"releases": 0})
    across = ner.across_models(per_model)
    heatmaps = {t: plot_path(context, ACROSS_MODELS_GROUP, f"ner_kendall_{t}",
                             prompt_sensitivity.kendall_heatmap(m, f"Kendall τ of prompt M-MEM, {t}"))
                for t, m in across.kendall.items()}
    return Output(
        across.table.reset_index(),
        metadata={
            "releases": len(per_model),
            **{f"kendall_tau_{t}": MetadataValue.md(m.round(3).to_markdown()) for t, m in across.kendall.items()},
            **{f"plot_{t}": MetadataValue.path(path) for t, path in heatmaps.items()},
        },
    )
