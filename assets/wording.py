"""How much each audit depends on the wording of its canaries (NER prompt-sensitivity paper).

Wiring only: the scores, spreads, ensembles and τ live in wikimem_platform.wikimem.wording and
wikimem_platform.wikimem.prompt_sensitivity.

- `wording_sensitivity` (group "summaries", one `models` partition per release): every canary
  wording's detection score (truths vs counterfactuals; members vs non-members on a planted
  model), Δ and σ per property, τ between two halves of the subjects, and the ways to combine
  wordings (best wording, five ensembles) beside WikiMem's strict / lenient / threshold rules.
- `wording_sensitivity_across_models` (group "across_models"): the wording × release table and
  Kendall τ between releases — does a wording that reveals much on one model do so on another?
  Refreshed after every successful audit (sensors/across_models.py).
"""

import pandas as pd
from dagster import AllPartitionMapping, AssetExecutionContext, AssetIn, Config, MetadataValue, Output, asset
from pydantic import Field

from assets.metadata import by_release, plot_path, preview
from assets.partitions import models_partitions
from resources.scoring import RegistryResource
from wikimem_platform.canaries.encoders import load_encoder
from wikimem_platform.planted.validation import ground_truth, manifest_people
from wikimem_platform.versions import source_version
from wikimem_platform.wikimem import prompt_sensitivity, wording
from wikimem_platform.wikimem.memorization import aliases_by_value

GROUP = "summaries"
ACROSS_MODELS_GROUP = "across_models"
CODE_VERSION = source_version("wikimem_platform.wikimem.wording", "wikimem_platform.wikimem.prompt_sensitivity", "wikimem_platform.wikimem.memorization")


class WordingSensitivityConfig(Config):
    seed: int = Field(default=0, description="Seed of the two halves of the subjects: wordings are chosen on one, judged on the other.")
    include_contextualized: bool = Field(
        default=True, description="Count the contextualized canary among the wordings (it never counts in M).")


def _markdown(frame: pd.DataFrame) -> MetadataValue:
    return MetadataValue.md(frame.round(3).to_markdown(index=False))


@asset(group_name=GROUP, partitions_def=models_partitions, kinds={"pandas", "plotly"}, code_version=CODE_VERSION)
def wording_sensitivity(
    context: AssetExecutionContext,
    config: WordingSensitivityConfig,
    model_registry: RegistryResource,
    scores: pd.DataFrame,
    canary_templates: pd.DataFrame,
    subjects: pd.DataFrame,
    value_aliases: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """One row per canary wording: its detection scores (all subjects, dev and test halves) and
    its rank-1 rate, overall and per cohort."""
    entry = model_registry.registry().get(context.partition_key)
    manifest = ground_truth(entry.source)
    members = manifest_people(manifest) if manifest is not None else None
    result = wording.wording_sensitivity(
        scores, canary_templates, members, seed=config.seed,
        include_contextualized=config.include_contextualized, embed=load_encoder(),
        value_aliases=aliases_by_value(value_aliases), cohorts=subjects.set_index("qid")["cohort"],
    )
    overall = result.overall
    numbers = {f"{row['detection']}_{name}": float(row[name])
               for row in overall.to_dict("records") for name in ("delta", "sigma", "tau_dev_test") if pd.notna(row[name])}
    context.log.info(f"wording sensitivity of {entry.key}: {numbers}")
    figure = wording.wording_figure(result.wordings, title=f"{entry.key}: how much each wording reveals")
    strategies = result.strategies[result.strategies["property"] == wording.ALL_PROPERTIES]
    return Output(
        result.wordings,
        metadata={
            "rows": len(result.wordings),
            "membership_known": members is not None,
            **numbers,
            "per_property": _markdown(result.properties),
            "plain_vs_contextualized": _markdown(wording.kind_comparison(result.wordings)),
            "strategies_on_test_half": _markdown(strategies.drop(columns=["property"])),
            "best_wordings": preview(result.wordings.sort_values(wording.TRUTH_AUC, ascending=False)),
            "plot": MetadataValue.path(plot_path(context, GROUP, "wording_sensitivity", figure)),
        },
    )


@asset(
    group_name=ACROSS_MODELS_GROUP,
    ins={"wording_sensitivity": AssetIn(partition_mapping=AllPartitionMapping(),
                                        metadata={"allow_missing_partitions": True})},
    kinds={"pandas", "plotly"},
    code_version=CODE_VERSION,
)
def wording_sensitivity_across_models(context: AssetExecutionContext, wording_sensitivity) -> Output[pd.DataFrame]:
    """Wording × release table of truth_auc, Kendall τ between releases, the most and least
    revealing wording per property."""
    per_model = by_release(context, "wording_sensitivity", wording_sensitivity)
    if not per_model:  # no causal release audited yet (e.g. only NER releases)
        return Output(pd.DataFrame(columns=[*wording.WORDING_KEYS, "kind", "template"]), metadata={"releases": 0})
    across = wording.across_models(per_model)
    table = across.scores.reset_index().merge(across.wordings, on=wording.WORDING_KEYS, how="left")
    heatmap = prompt_sensitivity.kendall_heatmap(across.kendall, "Kendall τ of wording scores between releases")
    return Output(
        table,
        metadata={
            "releases": len(per_model),
            "kendall_tau": MetadataValue.md(across.kendall.round(3).to_markdown()),
            "most_and_least_revealing": _markdown(across.revealing),
            "plot": MetadataValue.path(plot_path(context, ACROSS_MODELS_GROUP, "wording_kendall", heatmap)),
        },
    )
