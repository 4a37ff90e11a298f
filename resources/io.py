"""Parquet storage for every DataFrame asset (partitioned or not), under the instance's storage.

Scores run to millions of rows per model: Parquet on disk, not SQL and not pickles.
"""


import os

import pandas as pd
from dagster import (
    ConfigurableIOManagerFactory,
    InitResourceContext,
    InputContext,
    OutputContext,
    UPathIOManager,
)
from upath import UPath

from wikimem_platform.storage import write_atomically


class _PandasParquetIOManager(UPathIOManager):
    extension = ".parquet"

    def dump_to_path(self, context: OutputContext, obj: pd.DataFrame, path: UPath) -> None:
        if not isinstance(obj, pd.DataFrame):
            raise TypeError(f"{context.asset_key.to_user_string()} returned {type(obj).__name__}, expected a DataFrame")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, lambda tmp: obj.to_parquet(tmp, index=False))  # never a half-written table

    def load_from_path(self, context: InputContext, path: UPath) -> pd.DataFrame:
        return pd.read_parquet(path)

    def _load_partition_from_path(self, context: InputContext, partition_key: str, path: UPath,
                                  backcompat_path: UPath | None = None):
        """A release registered but not audited yet (or whose audit failed) has no table, the normal
        state of a cross-release table's input (`allow_missing_partitions`): said at info level.
        Dagster's own notice is a warning users read as an error ("Couldn't load partition ... and
        skipped it"). Overrides UPathIOManager's hook of Dagster 1.13 (pinned)."""
        missing = not path.exists() and (backcompat_path is None or not backcompat_path.exists())
        if missing and (context.definition_metadata or {}).get("allow_missing_partitions", False):
            context.log.info(f"{partition_key}: no stored {context.upstream_output.asset_key.to_user_string()} "
                             "yet (not audited, or its audit failed); left out of this table")
            return None
        return super()._load_partition_from_path(context, partition_key, path, backcompat_path)


class ParquetIOManager(ConfigurableIOManagerFactory):
    """base_dir defaults to <DAGSTER_HOME storage>/parquet (a temporary dir for ephemeral instances)."""

    base_dir: str | None = None

    def create_io_manager(self, context: InitResourceContext) -> _PandasParquetIOManager:
        base = self.base_dir or os.path.join(context.instance.storage_directory(), "parquet")
        return _PandasParquetIOManager(base_path=UPath(base))
