"""Who answers: the controller's identity, contact, data protection officer and supervisory
authority, as Art. 13–15 GDPR require a reply to name them.

Kept once per instance in ``<storage>/controller.yaml`` (`wikimem controller set`), read into
every answer when it is written. An instance without it still answers, but the letter says in
red, where the controller block belongs, that it must be completed before it is sent.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from wikimem_platform.storage import write_atomically

CONTROLLER_FILE = "controller.yaml"
DEFAULT_RETENTION_DAYS = 90  # after the answer; the controller sets its own (`wikimem controller set --retention-days`)
DEFAULT_ACCESS_LOG_DAYS = 365
MAX_RETENTION_DAYS = 3650


class ControllerError(ValueError):
    """The controller configuration was refused; the message names the field."""


class Controller(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the controller's legal name")
    address: str = Field(description="postal address")
    contact: str = Field(description="where the person writes to (e-mail or web form)")
    dpo: str = Field(description="the data protection officer: name and contact")
    supervisory_authority: str = Field(description="the authority a complaint can be lodged with: name and address or web site")
    automated_decisions: str = Field(
        default="The models audited here are not used to take decisions based solely on automated processing "
                "that produce legal or similarly significant effects on anyone (Art. 22 GDPR).",
        description="the Art. 15(1)(h) statement on automated decision-making")
    # Storage limitation (Art. 5(1)(e)): how long after its answer a request's data, answer and
    # letter are kept before the retention schedule purges them (the letter says so); and the
    # access log's own period. Finite by construction: no setting keeps either forever.
    retention_days: int = Field(default=DEFAULT_RETENTION_DAYS, ge=1, le=MAX_RETENTION_DAYS,
                                description="days a request's data and answer are kept after it is answered")
    access_log_days: int = Field(default=DEFAULT_ACCESS_LOG_DAYS, ge=1, le=MAX_RETENTION_DAYS,
                                 description="days a row of the access log is kept")

    @field_validator("name", "address", "contact", "dpo", "supervisory_authority", "automated_decisions")
    @classmethod
    def _not_blank(cls, value: str, info) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{info.field_name} must not be empty")
        return value.strip()


REQUIRED = [name for name, field in Controller.model_fields.items() if field.is_required()]


def controller_path(storage_dir: str | os.PathLike) -> Path:
    return Path(storage_dir) / CONTROLLER_FILE


def _validated(fields: dict) -> Controller:
    """The controller, or a ControllerError naming every field at fault."""
    try:
        return Controller(**fields)
    except ValidationError as error:
        problems, missing = [], []
        for problem in error.errors():
            field = ".".join(map(str, problem["loc"])) or "controller"
            if problem["type"] == "missing":
                missing.append(field)
            elif problem["type"] == "extra_forbidden":
                problems.append(f"{field}: unknown field (allowed: {', '.join(Controller.model_fields)})")
            else:
                problems.append(f"{field}: {problem['msg'].removeprefix('Value error, ')}")
        if missing:
            problems.insert(0, f"{', '.join(missing)}: missing (required: {', '.join(REQUIRED)})")
        raise ControllerError("; ".join(problems)) from None


def load_controller(storage_dir: str | os.PathLike) -> Controller | None:
    """The instance's controller, None when none is configured; a broken file is a ControllerError."""
    path = controller_path(storage_dir)
    if not path.is_file():
        return None
    try:
        fields = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise ControllerError(f"{path} is not readable YAML: {error}") from None
    if not isinstance(fields, dict):
        raise ControllerError(f"{path} must hold a mapping of {', '.join(Controller.model_fields)}")
    return _validated(fields)


def retention_periods(storage_dir: str | os.PathLike) -> tuple[int, int]:
    """(request data days, access log days) of the instance: the controller's, else the defaults."""
    try:
        controller = load_controller(storage_dir)
    except ControllerError:
        controller = None
    if controller is None:
        return DEFAULT_RETENTION_DAYS, DEFAULT_ACCESS_LOG_DAYS
    return controller.retention_days, controller.access_log_days


def save_controller(storage_dir: str | os.PathLike, **fields: str | int | None) -> Controller:
    """Set (or change) the controller's fields; the ones not given are kept."""
    try:
        current = load_controller(storage_dir)
    except ControllerError:
        current = None
    merged = {**(current.model_dump() if current else {}), **{k: v for k, v in fields.items() if v is not None}}
    controller = _validated(merged)
    path = controller_path(storage_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(controller.model_dump(), allow_unicode=True, sort_keys=False)
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return controller
