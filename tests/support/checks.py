"""The asset checks of each expectations module, collected the way the code location collects them
(by module, no hand-kept lists), for tests that materialize a few assets with their checks."""

from dagster import load_asset_checks_from_modules

from expectations import across_models, canaries, data, probes, requests, scoring, summaries, wording

DATA_CHECKS = load_asset_checks_from_modules([data])
CANARY_CHECKS = load_asset_checks_from_modules([canaries])
SCORING_CHECKS = load_asset_checks_from_modules([scoring])
SUMMARY_CHECKS = load_asset_checks_from_modules([summaries, wording])
REQUEST_CHECKS = load_asset_checks_from_modules([requests])
PROBE_CHECKS = load_asset_checks_from_modules([probes])
ACROSS_CHECKS = load_asset_checks_from_modules([across_models])
