"""GX suites and asset checks for the per-model CRM and MIA summaries."""

import pandas as pd
from dagster import AssetCheckExecutionContext, AssetCheckResult, asset_check

from assets.partitions import models_partitions
from assets.summaries import crm_summary, mia_summary
from expectations.gx import check_result, gxe
from resources.scoring import RegistryResource
from wikimem_platform.lm.endpoint import NO_TEXT_PROBABILITY
from wikimem_platform.mia import RATE_COLUMNS



def crm_summary_suite() -> list:
    return [
        gxe.ExpectColumnValuesToBeBetween(column="hit_rate", min_value=0, max_value=1),
        gxe.ExpectColumnValuesToBeBetween(column="n", min_value=0),
        gxe.ExpectColumnValuesToBeBetween(column="recon_ll_mean", max_value=0),  # a log-probability
        gxe.ExpectColumnValuesToBeInSet(column="hits_within_n", value_set=[True]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["paradigm", "subset"]),
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
    ]


def crm_summary_for_checks(rates: pd.DataFrame) -> pd.DataFrame:
    """Rates with an explicit n_hits <= n flag."""
    return rates.assign(hits_within_n=(rates["n_hits"] >= 0) & (rates["n_hits"] <= rates["n"]))


def mia_summary_suite() -> list:
    return [
        *[gxe.ExpectColumnValuesToBeBetween(column=c, min_value=0, max_value=1) for c in RATE_COLUMNS],
        *[gxe.ExpectColumnValuesToNotBeNull(column=c) for c in ("auroc", "set_kind", "set_description")],
        gxe.ExpectColumnValuesToBeUnique(column="attack"),  # one row per attack
        gxe.ExpectColumnValuesToBeBetween(column="n_members", min_value=1),
        gxe.ExpectColumnValuesToBeBetween(column="n_nonmembers", min_value=1),
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
    ]


@asset_check(asset=crm_summary, blocking=True, partitions_def=models_partitions, description="Hit rates in [0, 1], n_hits <= n, log-likelihoods <= 0, one row per paradigm and subset.")
def crm_summary_check(crm_summary: pd.DataFrame) -> AssetCheckResult:
    return check_result(crm_summary_for_checks(crm_summary), "crm_summary", crm_summary_suite())


def no_attack_suite() -> list:
    """A release whose access gives no probability of a given text (generation, top-logprobs):
    no attack can have been run, so any row would be a number nothing measured."""
    return [gxe.ExpectTableRowCountToBeBetween(min_value=0, max_value=0)]


@asset_check(asset=mia_summary, blocking=True, partitions_def=models_partitions,
             description="AUROC, its CI and TPRs in [0, 1]; one row per attack; set kind named (no row at all where "
                         "the release's access gives no probability of a given text).")
def mia_summary_check(context: AssetCheckExecutionContext, model_registry: RegistryResource,
                      mia_summary: pd.DataFrame) -> AssetCheckResult:
    access = model_registry.registry().get(context.partition_key).access
    if access in NO_TEXT_PROBABILITY:
        return check_result(mia_summary, "mia_summary", no_attack_suite())
    return check_result(mia_summary, "mia_summary", mia_summary_suite())
