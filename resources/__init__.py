"""Dagster resources: storage and (later) the model-scoring resource."""

from resources.io import ParquetIOManager

__all__ = ["ParquetIOManager"]
