"""Dagster resources: Parquet storage (more follow with scoring)."""

from resources.io import ParquetIOManager

__all__ = ["ParquetIOManager"]
