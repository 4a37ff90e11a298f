"""Run config -> the domain library's config dataclasses.

A Dagster `Config` (a pydantic model) holds what the launchpad shows: field names, defaults and
descriptions. The library's frozen dataclass holds what an audit runs. `to_library` passes every
field the two share by name (lists as tuples: the dataclasses are frozen and hashable), so a field
added to both needs no copying line, and a field only the run config has (a path, a sample size
the asset uses) stays out.
"""

import dataclasses
from typing import TypeVar

from dagster import Config

T = TypeVar("T")


def to_library(config: Config, dataclass_type: type[T], **overrides) -> T:
    """`dataclass_type` from the run config's shared fields (by name), then `overrides`."""
    names = {f.name for f in dataclasses.fields(dataclass_type) if f.init}
    shared = {name: getattr(config, name) for name in type(config).model_fields if name in names}
    values = {name: tuple(value) if isinstance(value, list) else value for name, value in shared.items()}
    return dataclass_type(**{**values, **overrides})
