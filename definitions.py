"""The code location: every asset, check, resource, sensor and schedule of wikimem-platform.

Loaded with the repository root as the working directory (see workspace.yaml), so the generic
package names assets/, resources/, sensors/, expectations/ resolve to this project's.
"""

from dagster import Definitions, in_process_executor, load_assets_from_modules

from assets import canaries as canary_assets
from assets import data as data_assets
from assets import reports as report_assets
from assets import requests as request_assets
from assets import scoring as scoring_assets
from assets import summaries as summary_assets
from assets import validation as validation_assets
from expectations.canaries import CANARY_CHECKS
from expectations.data import DATA_CHECKS
from expectations.requests import REQUEST_CHECKS
from expectations.scoring import SCORING_CHECKS
from expectations.summaries import SUMMARY_CHECKS
from resources import ParquetIOManager, RegistryResource, ScoringResource
from sensors.registry import REGISTRY_JOBS, REGISTRY_SCHEDULES, REGISTRY_SENSORS
from sensors.requests import REQUEST_JOBS, REQUEST_SENSORS

defs = Definitions(
    assets=load_assets_from_modules([data_assets, canary_assets, scoring_assets, validation_assets, summary_assets, report_assets, request_assets]),
    asset_checks=[*DATA_CHECKS, *CANARY_CHECKS, *SCORING_CHECKS, *SUMMARY_CHECKS, *REQUEST_CHECKS],
    resources={"io_manager": ParquetIOManager(), "scoring": ScoringResource(), "model_registry": RegistryResource()},
    # One process per run: on 2 cores, a subprocess per step costs more in imports (GX, torch)
    # than it gains; runs of different models still run side by side.
    executor=in_process_executor,
    jobs=[*REGISTRY_JOBS, *REQUEST_JOBS],
    sensors=[*REGISTRY_SENSORS, *REQUEST_SENSORS],
    schedules=REGISTRY_SCHEDULES,
)
