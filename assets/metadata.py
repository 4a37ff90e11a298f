"""What the assets show in the Dagster UI: markdown previews of frames and plotly plots saved as
self-contained HTML under the instance's storage (linked from the materialization's metadata)."""

from pathlib import Path

import pandas as pd
from dagster import AssetExecutionContext, MetadataValue

from wikimem_platform.reports.page_policy import SCRIPTED_PAGE_CSP, with_csp
from wikimem_platform.storage import path_safe_key, write_atomically

PREVIEW_ROWS = 10
UNPARTITIONED_FOLDER = "all"


def preview(frame: pd.DataFrame, rows: int = PREVIEW_ROWS) -> MetadataValue:
    """A markdown preview table for the UI (lists shown as comma-joined text)."""
    head = frame.head(rows).map(lambda v: ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else v)
    return MetadataValue.md(head.to_markdown(index=False))


def plot_path(context: AssetExecutionContext, area: str, name: str, figure) -> str:
    """Write a self-contained plotly HTML under the instance's storage (one folder per partition,
    `all` for an asset across releases); returns its path."""
    folder = path_safe_key(context.partition_key) if context.has_partition_key else UNPARTITIONED_FOLDER
    directory = Path(context.instance.storage_directory()) / area / folder
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.html"
    page = with_csp(figure.to_html(include_plotlyjs=True), SCRIPTED_PAGE_CSP)  # plotly inlined; nothing loaded
    write_atomically(path, lambda tmp: tmp.write_text(page, encoding="utf-8"))
    return str(path)


def by_release(context: AssetExecutionContext, name: str, value) -> dict:
    """An all-partitions input as {release: table}: Dagster hands a bare DataFrame when the
    `models` partitions hold one release, and nothing when its table is missing."""
    if isinstance(value, dict):
        return value
    return {} if value is None else {context.asset_partition_keys_for_input(name)[0]: value}
