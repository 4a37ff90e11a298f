"""The calibration study per model release (issue 17.5): which weighting of WikiMem's similar-name
term separates the subjects that the model should know from those it should not.

Wiring only: the settings, separation, look-alike shares and figure live in
wikimem_platform.wikimem.calibration. The all-part look-alike sentences are the only ones scored here
(the release's model, the shared-prefix engine, the release's sentence cache); every other NLL
comes from `scores`. The audit's own verdicts (`memorization`) keep the paper's definition.
"""

import pandas as pd
from dagster import AssetExecutionContext, Config, MetadataValue, Output, asset
from pydantic import Field

from assets.metadata import plot_path, preview
from assets.partitions import models_partitions
from resources.placement import LM_OP_TAGS, LM_POOL
from resources.scoring import RegistryResource, ScoringResource
from wikimem_platform.canaries.encoders import load_encoder
from wikimem_platform.planted.validation import ground_truth
from wikimem_platform.progress import LOG_EVERY_SECONDS, throttled
from wikimem_platform.reference.cohorts import LESSER_KNOWN, WELL_KNOWN
from wikimem_platform.versions import source_version
from wikimem_platform.wikimem import calibration
from wikimem_platform.wikimem.memorization import aliases_by_value

# Not in the audit groups (sensors/registry.py MODEL_GROUPS): the study scores about two thirds of an
# audit again, so a user materializes it for the releases where the question matters.
GROUP = "studies"
MEMBER, NON_MEMBER = "member", "non-member"


class CalibrationStudyConfig(Config):
    max_subjects_per_cohort: int = Field(
        default=20, description="Subjects per cohort whose scored pairs enter the study (0 = all): the all-part "
                                "look-alikes cost about two thirds of the audit's own scoring again.")
    lookalikes_per_subject: int = Field(default=calibration.ALL_PARTS_PER_SUBJECT,
                                        description="All-part look-alikes per subject.")


def study_groups(source: str, subjects: pd.DataFrame) -> tuple[pd.Series, str]:
    """subject_qid -> group and the positive group: members vs non-members where the model is a
    planted one audited on its planted people, else well-known vs lesser-known."""
    manifest = ground_truth(source)
    if manifest is not None:
        member = {p["qid"]: bool(p["member"]) for p in manifest["people"]}
        if subjects["qid"].isin(member).all():
            return subjects["qid"].map(member).map({True: MEMBER, False: NON_MEMBER}).set_axis(subjects["qid"]), MEMBER
    cohorts = subjects.set_index("qid")["cohort"]
    return cohorts[cohorts.isin([WELL_KNOWN, LESSER_KNOWN])], WELL_KNOWN


def _markdown(frame: pd.DataFrame) -> MetadataValue:
    return MetadataValue.md(frame.round(3).to_markdown(index=False))


@asset(group_name=GROUP, partitions_def=models_partitions, kinds={"pytorch", "pandas", "plotly"}, pool=LM_POOL,
       op_tags=LM_OP_TAGS, code_version=source_version("wikimem_platform.wikimem.calibration", "wikimem_platform.mia.membership",
                                                       "wikimem_platform.canaries"))
def calibration_study(
    context: AssetExecutionContext,
    config: CalibrationStudyConfig,
    scoring: ScoringResource,
    model_registry: RegistryResource,
    scores: pd.DataFrame,
    canaries: pd.DataFrame,
    candidates: pd.DataFrame,
    subjects: pd.DataFrame,
    value_aliases: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """One row per calibration setting (alpha x look-alikes that alter one / every name part):
    AUROC of M between the groups, rank-1 rate per group; the best setting and each name
    variant's own rank-1 share as metadata."""
    entry = model_registry.registry().get(context.partition_key)
    audited = subjects[subjects["qid"].isin(scores["subject_qid"])]
    if config.max_subjects_per_cohort:
        audited = audited.groupby("cohort", sort=False).head(config.max_subjects_per_cohort)
    groups, positive = study_groups(entry.source, audited)
    chosen = scores[scores["subject_qid"].isin(groups.index)]
    lm = scoring.load(entry, served=True)  # a served release: its look-alikes through its server
    with_all_parts, names, computed = calibration.score_all_parts(
        lm, chosen, canaries, candidates, n=config.lookalikes_per_subject, sentence_cache=scoring.sentence_cache(lm),
        progress=throttled(context.log.info, "all-part look-alikes", every=LOG_EVERY_SECONDS))
    study = calibration.calibration_study(with_all_parts, groups, positive, embed=load_encoder(),
                                          value_aliases=aliases_by_value(value_aliases))
    table = study.settings
    best = table.set_index("setting").loc[study.best]
    default = table.set_index("setting").loc[calibration.PAPER_SETTING]
    numbers = {"best_setting": study.best, "best_M_auroc": float(best[calibration.SEPARATION]),
               "default_M_auroc": float(default[calibration.SEPARATION]),
               "best_confidence_auroc": float(best[calibration.SEPARATION_TIEBREAK]),
               "default_confidence_auroc": float(default[calibration.SEPARATION_TIEBREAK])}
    context.log.info(f"calibration study of {entry.key} ({study.positive} vs {study.negative}, "
                     f"{groups.value_counts().to_dict()} subjects): {numbers}")
    figure = calibration.study_figure(table, study.positive, study.negative,
                                      title=f"{entry.key}: calibration settings, {study.positive} vs {study.negative}")
    examples = study.lookalikes.merge(names, on="subject_qid", how="left")
    return Output(
        table,
        metadata={
            "rows": len(table),
            "groups": f"{study.positive} (positive) vs {study.negative}",
            "n_subjects": len(groups),
            "sentences_computed": computed,
            **{k: (v if isinstance(v, str) else round(v, 4)) for k, v in numbers.items()},
            "settings": _markdown(table),
            "lookalike_rank1_shares": _markdown(study.lookalike_summary),
            "lookalike_names": preview(names),
            "pairs_where_lookalikes_know_most": preview(
                examples[examples["name_kind"] == calibration.ONE_PART].sort_values("n_rank1_shared", ascending=False)),
            "plot": MetadataValue.path(plot_path(context, GROUP, "calibration_study", figure)),
        },
    )
