"""Ground-truth validation of the audit on a planted model (a model whose memorized facts are known).

Materializes only for a `models` partition whose registered source is a planted-model directory
(it carries a manifest) audited on the planted people; for any other model, or a planted model
audited on real subjects, there is no ground truth and nothing is written (a warning says why).
Subjects partly planted, partly not, are an error (a mixed data source).
"""

from typing import Iterator

import pandas as pd
from dagster import AssetExecutionContext, Config, MetadataValue, Output, asset

from assets.metadata import preview
from assets.partitions import models_partitions
from resources.placement import LM_OP_TAGS, LM_POOL
from resources.scoring import RegistryResource, ScoringResource
from wikimem_platform.mia import mean_nlls
from wikimem_platform.mia.membership import planted_membership
from wikimem_platform.planted.validation import (
    audits_planted_people,
    by_repetitions,
    FLAG_COLUMNS,
    flag_rates,
    ground_truth,
    join_ground_truth,
    loss_membership,
    threshold_sweep,
)
from wikimem_platform.versions import source_version
from wikimem_platform.vocabulary import AT_THRESHOLD

GROUP = "validation"


class PlantedValidationConfig(Config):
    recall_min_repetitions: int = 4  # recall pools facts read at least this many times per epoch
    n_bootstrap: int = 1000


@asset(group_name=GROUP, partitions_def=models_partitions, output_required=False, kinds={"pytorch", "pandas"},
       code_version=source_version("wikimem_platform.planted"), pool=LM_POOL, op_tags=LM_OP_TAGS)
def planted_validation(
    context: AssetExecutionContext,
    config: PlantedValidationConfig,
    scoring: ScoringResource,
    model_registry: RegistryResource,
    memorization: pd.DataFrame,
) -> Iterator[Output[pd.DataFrame]]:
    """Precision, recall and false-positive rate of each memorization flag against the planted
    manifest, by repetition count, and the loss attack's AUROC (members vs non-members)."""
    entry = model_registry.registry().get(context.partition_key)
    manifest = ground_truth(entry.source)
    if manifest is None:
        context.log.info(f"{entry.key} is not a planted model (no manifest in {entry.source}): nothing to validate")
        return
    if not audits_planted_people(memorization, manifest):
        context.log.warning(
            f"{entry.key} was audited on subjects none of whom is planted (a real data source?): no ground truth "
            "to validate against; materialize the data assets from the planted extract (scripts/validate_planted.py)"
        )
        return
    joined = join_ground_truth(memorization, manifest)
    rates = pd.DataFrame([flag_rates(joined, flag, config.recall_min_repetitions) for flag in FLAG_COLUMNS])
    per_repetition = by_repetitions(joined)

    texts = planted_membership(entry.source, members_from="held_out")
    context.log.info(f"Loss attack on {len(texts)} held-out biographies ({int(texts['label'].sum())} members)")
    membership = loss_membership(mean_nlls(scoring.load(entry), list(texts["text"])), texts["label"].to_numpy(),
                                 n_bootstrap=config.n_bootstrap)

    numbers = {}
    for row in rates.to_dict("records"):
        for key in ("precision", f"recall_r{config.recall_min_repetitions}plus", "false_positive_rate"):
            numbers[f"{row['flag']}_{key}"] = float(row[key])
        for key in ("flagged", f"planted_facts_r{config.recall_min_repetitions}plus_scored", "non_member_facts_scored"):
            numbers[f"{row['flag']}_{key}"] = int(row[key])  # what the shares above are shares of
    numbers["loss_mia_auroc"] = membership["auroc"]
    numbers["loss_mia_auroc_ci_low"] = membership["auroc_ci_low"]
    context.log.info(f"Planted validation for {entry.key}: {numbers}")
    yield Output(
        per_repetition,
        metadata={
            **numbers,
            "flag_rates": MetadataValue.md(rates.round(4).to_markdown(index=False)),
            "by_repetitions": MetadataValue.md(per_repetition.round(4).to_markdown(index=False)),
            "threshold_sweep": MetadataValue.md(threshold_sweep(joined, config.recall_min_repetitions).round(4)
                                                .to_markdown(index=False)),
            "membership_loss_attack": MetadataValue.json(membership),
            "missed_planted_facts": preview(
                joined[joined["member"] & ~joined[AT_THRESHOLD]].sort_values("repetitions", ascending=False)[
                    ["subject_qid", "property", "repetitions", "M"]
                ]
            ),
            "manifest_config_hash": manifest["config_hash"],
        },
    )
