"""Dagster resources: Parquet storage, the scoring resource, the model registry."""

from resources.io import ParquetIOManager
from resources.scoring import RegistryResource, ScoringResource

__all__ = ["ParquetIOManager", "RegistryResource", "ScoringResource"]
