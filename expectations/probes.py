"""Checks of the probes group: the entity-memorization table's arms, answers and cues."""

import pandas as pd
from dagster import AssetCheckResult, asset_check

from assets.partitions import models_partitions
from assets.probes import eme_probe
from expectations.gx import check_result, gxe
from wikimem_platform.eme import METHODS
from wikimem_platform.eme.audit import ARM_COLUMNS, AUDITED, CONTROL, ENSEMBLE, TRAINING_DATA
from wikimem_platform.eme.records import TEXT_PROMPTS
from wikimem_platform.lm.generation import substring_hit


def eme_probe_suite() -> list:
    return [
        gxe.ExpectColumnValuesToBeInSet(column="prompt_method", value_set=[*TEXT_PROMPTS, *METHODS, ENSEMBLE]),
        gxe.ExpectColumnValuesToBeInSet(column="model_role", value_set=[AUDITED, CONTROL]),
        gxe.ExpectColumnValuesToBeInSet(column="training_data", value_set=["none", *TRAINING_DATA]),
        gxe.ExpectColumnValuesToBeBetween(column="cue", min_value=0, max_value=1),
        gxe.ExpectColumnValuesToMatchRegex(column="subject_qid", regex=r"^Q\d+$"),
        *[gxe.ExpectColumnValuesToNotBeNull(column=c) for c in ("prompt", "output", "hit")],
        # the prompt never shows the answer: such prompts were excluded before generation
        gxe.ExpectColumnValuesToBeInSet(column="prompt_shows_answer", value_set=[False]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=[*ARM_COLUMNS, "subject_qid", "property"]),
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
    ]


def eme_probe_for_checks(examples: pd.DataFrame) -> pd.DataFrame:
    """The table with an explicit flag: does a prompt contain one of its targets (it must not)."""

    return examples.assign(prompt_shows_answer=[substring_hit(p, list(t)) for p, t in
                                                zip(examples["prompt"], examples["targets"])])


@asset_check(asset=eme_probe, blocking=True, partitions_def=models_partitions,
             description="Known arms and roles, cues in [0, 1], no prompt showing its answer, one row per arm and fact.")
def eme_probe_check(eme_probe: pd.DataFrame) -> AssetCheckResult:
    return check_result(eme_probe_for_checks(eme_probe), "eme_probe", eme_probe_suite())
