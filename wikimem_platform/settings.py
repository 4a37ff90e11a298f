"""Every environment variable the platform reads, in one typed object (pydantic-settings), and the
one place the instance folder, its storage folder and the registry's URL are worked out.

`get_settings()` reads the environment when asked (a test's `monkeypatch.setenv` takes effect at
once): the values are parsed once per distinct environment and kept. A bad value raises
`SettingsError`, whose message names the variable, the value and what it may be. A command that
was given a value (`wikimem --home DIR`) passes it with `overridden(dagster_home=DIR)` for as long
as it runs, instead of writing it into the process's environment.

The README's table of settings is `settings_table()` (tests/unit/test_settings.py keeps it current).
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasGenerator, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

ENV_PREFIX = "WIKIMEM_"
DEFAULT_HOME = ".dagster_home"  # relative to the working directory
STORAGE_FOLDER = "storage"  # Dagster's default storage folder below the instance folder
REGISTRY_FILE = "wikimem_registry.db"  # the registry's SQLite file in the instance folder
Executor = Literal["local", "k8s", "celery"]
EXECUTORS = typing.get_args(Executor)
DEFAULT_REAUDIT_CRON = "0 3 * * 1"  # Mondays, 03:00 UTC
DEFAULT_RETENTION_CRON = "17 3 * * *"  # daily, at night
BOOLEAN_TEXT = "1/0, true/false, yes/no, on/off"


def _env_name(field_name: str) -> str:
    return ENV_PREFIX + field_name.upper()


class Settings(BaseSettings):
    """The platform's settings, each from one environment variable (WIKIMEM_<FIELD>, and the two
    that belong to others, DAGSTER_HOME and HF_HUB_OFFLINE, by their own names). An empty variable
    counts as unset. Field descriptions are the README table's last column."""

    model_config = SettingsConfigDict(
        case_sensitive=True, env_ignore_empty=True, extra="ignore", frozen=True, validate_by_name=True,
        alias_generator=AliasGenerator(validation_alias=_env_name),
    )

    dagster_home: Path | None = Field(
        None, validation_alias="DAGSTER_HOME", json_schema_extra={"default_text": f"./{DEFAULT_HOME}"},
        description="The Dagster instance folder: its dagster.yaml, runs, `storage/`, the registry's SQLite file, "
                    "the instance secret. `wikimem --home DIR` overrides it for one command.")
    registry_url: str | None = Field(
        None, json_schema_extra={"type_text": "SQLAlchemy URL", "default_text": f"SQLite `{REGISTRY_FILE}` in DAGSTER_HOME"},
        description="The database of the model registry, the requests, the UI's users and the access log "
                    "(`wikimem --registry-url` overrides it).")
    allowed_model_roots: Annotated[list[str], NoDecode] = Field(
        default_factory=list, json_schema_extra={"type_text": "folders, `:`-separated", "default_text": "any folder"},
        description="The only folders a local model (Hugging Face folder, GGUF file) may be registered from.")
    cache_dir: Path | None = Field(
        None, json_schema_extra={"default_text": "~/.cache/wikimem/models"},
        description="The model cache (dequantized GGUF weights, trained planted and NER models); read by "
                    "`wikimem_platform.lm.loading`.")
    allow_group_access: bool = Field(
        False, description="Let the instance's group read its files (umask 027): for an operators' group that "
                           "reads the answers on purpose. World access is never allowed.")
    instance_secret: SecretStr | None = Field(
        None, json_schema_extra={"default_text": "DAGSTER_HOME/instance_secret (made on first use)"},
        description="The key of every digest of personal text the platform stores or logs (one secret for "
                    "every container of an instance).")
    session_secret: SecretStr | None = Field(
        None, json_schema_extra={"type_text": "secret, 32 characters or more",
                                 "default_text": "DAGSTER_HOME/session_secret (made on first use)"},
        description="Signs the UI's sign-in cookies (`python -m webserver`); changing it signs everybody out.")
    new_password: SecretStr | None = Field(
        None, json_schema_extra={"default_text": "asked for twice on the terminal"},
        description="The password `wikimem users add` / `set-password` store (scripts and containers, "
                    "where no terminal asks).")
    executor: Executor = Field(
        "local", description="The code location's executor: in-process or multiprocess on this machine, a "
                             "Kubernetes job per step, or Celery workers (deploy/README.md).")
    sensor_interval: int = Field(
        10, ge=1, json_schema_extra={"type_text": "seconds, 1 or more"},
        description="How often the registry and request sensors look for new releases and requests.")
    audit_config: Path | None = Field(
        None, json_schema_extra={"default_text": "DAGSTER_HOME/wikimem_audit.yaml if it exists"},
        description="Run config (YAML or JSON) of the runs the sensors and schedules launch.")
    reaudit_cron: str = Field(
        DEFAULT_REAUDIT_CRON, json_schema_extra={"type_text": "cron, UTC"},
        description="When `model_reaudit_schedule` re-audits every registered release.")
    retention_cron: str = Field(
        DEFAULT_RETENTION_CRON, json_schema_extra={"type_text": "cron, UTC"},
        description="When `request_retention_schedule` purges the requests past their retention period.")
    vllm_venv: Path | None = Field(
        None, json_schema_extra={"default_text": "<checkout>/.vllm-venv"},
        description="The virtual environment of the vLLM server the endpoint tests start "
                    "(`scripts/setup_vllm.sh`); read by `wikimem_platform.lm.vllm_server`.")
    hf_hub_offline: bool = Field(
        False, validation_alias="HF_HUB_OFFLINE",
        json_schema_extra={"default_text": "1 in the CLI and wherever the sentence model loads"},
        description="Hugging Face's own switch: no hub access. Registering a hub id then needs it in the "
                    "local Hugging Face cache.")

    @field_validator("allowed_model_roots", mode="before")
    @classmethod
    def _split_roots(cls, value):
        return value.split(os.pathsep) if isinstance(value, str) else value

    @classmethod
    def env_name(cls, field_name: str) -> str:
        """The environment variable of a field."""
        return str(cls.model_fields[field_name].validation_alias)

    def instance_paths(self, home: str | os.PathLike | None = None, storage: str | os.PathLike | None = None,
                       registry_url: str | None = None) -> InstancePaths:
        """The instance folder, its storage folder and the registry URL: each the value given (a command's
        --home, --storage, --registry-url), else its variable, else the default."""
        folder = Path(home or self.dagster_home or DEFAULT_HOME).expanduser().resolve()
        return InstancePaths(
            home=folder,
            storage=Path(storage).expanduser().resolve() if storage else folder / STORAGE_FOLDER,
            registry_url=registry_url or self.registry_url or f"sqlite:///{folder / REGISTRY_FILE}",
        )


@dataclass(frozen=True)
class InstancePaths:
    home: Path  # the Dagster instance folder
    storage: Path  # where the assets' results live (Parquet, reports, answers)
    registry_url: str  # the registry database (SQLAlchemy URL)


ENV_NAMES = tuple(Settings.env_name(name) for name in Settings.model_fields)


class SettingsError(ValueError):
    """An environment variable with a value the platform cannot use: the message names the
    variable, the value and what it may be (the CLI prints it as `error: ...`)."""

    @classmethod
    def of(cls, error: ValidationError) -> SettingsError:
        by_env = {Settings.env_name(name): name for name in Settings.model_fields}
        lines = []
        for problem in error.errors():
            env = str(problem["loc"][0]) if problem["loc"] else "?"
            field = by_env.get(env)
            expected = f" (expected {type_text(field)})" if field and problem["type"] != "literal_error" else ""
            lines.append(f"${env}={problem['input']!r}: {problem['msg']}{expected}")
        return cls("; ".join(lines))


_overrides: list[tuple[tuple[str, object], ...]] = []  # innermost last (see `overridden`)


def get_settings() -> Settings:
    """The settings of the environment as it is now (and of any `overridden` values)."""
    return _read(tuple(os.environ.get(name) for name in ENV_NAMES), _overrides[-1] if _overrides else ())


@lru_cache(maxsize=32)
def _read(_environment: tuple, overrides: tuple) -> Settings:
    try:
        return Settings(**dict(overrides))
    except ValidationError as error:
        raise SettingsError.of(error) from None


@contextmanager
def overridden(**values) -> Iterator[Settings]:
    """These settings (by field name) instead of the environment's while the block runs: a command's
    own arguments, passed down without writing them into os.environ (where child processes and every
    later caller would inherit them)."""
    unknown = set(values) - set(Settings.model_fields)
    if unknown:
        raise KeyError(f"no such setting: {', '.join(sorted(unknown))}")
    merged = dict(_overrides[-1]) if _overrides else {}
    merged.update({name: value for name, value in values.items() if value is not None})
    _overrides.append(tuple(sorted(merged.items())))
    try:
        yield get_settings()
    finally:
        _overrides.pop()


def instance_paths(home: str | os.PathLike | None = None, storage: str | os.PathLike | None = None,
                   registry_url: str | None = None) -> InstancePaths:
    """The instance folder, storage folder and registry URL (`Settings.instance_paths`): what is
    given, else the environment, else ./.dagster_home, its storage/ and SQLite in it."""
    return get_settings().instance_paths(home, storage, registry_url)


# --------------------------------------------------------------------------- the README's table

# Variables read by others (Dagster's instance config, shell scripts), listed with the settings so
# that one table names every variable of a deployment.
READ_ELSEWHERE = (
    ("WIKIMEM_DAGSTER_PG_URL", "SQLAlchemy URL", "-",
     "Dagster's Postgres storage, when `dagster.yaml` names it (`postgres_url: {env: WIKIMEM_DAGSTER_PG_URL}`; "
     "deploy/); read by Dagster."),
    ("WIKIMEM_STORAGE_DIR", "path", "-",
     "The shared storage folder of a Celery deployment (`deploy/celery/dagster.yaml`); read by Dagster."),
    ("WIKIMEM_DEV_NO_AUTH", "1 or unset", "unset",
     "`scripts/dev.sh` starts the UI without sign-in (loopback only, local development)."),
    ("WIKIMEM_SKIP_VLLM", "1 or unset", "unset", "`scripts/setup.sh` does not install vLLM's environment."),
)
TABLE_START = "<!-- settings table: generated by wikimem_platform.settings.settings_table() -->"
TABLE_END = "<!-- end of settings table -->"


def type_text(field_name: str) -> str:
    """What a variable may hold, in words."""
    field = Settings.model_fields[field_name]
    extra = field.json_schema_extra or {}
    if "type_text" in extra:
        return str(extra["type_text"])
    annotation = field.annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    if typing.get_origin(annotation) is Literal:
        return " | ".join(typing.get_args(annotation))
    return {bool: f"boolean ({BOOLEAN_TEXT})", int: "integer", str: "text", Path: "path",
            SecretStr: "secret"}.get(annotation, str(annotation))


def _default_text(field_name: str) -> str:
    field = Settings.model_fields[field_name]
    extra = field.json_schema_extra or {}
    if "default_text" in extra:
        return str(extra["default_text"])
    default = field.get_default(call_default_factory=True)
    if isinstance(default, bool):
        return "1" if default else "0"
    return f"`{default}`" if isinstance(default, str) else str(default)


def settings_table() -> str:
    """The Markdown table of every variable: name, type, default, what it does."""
    rows = ["| Variable | Type | Default | What it does |", "|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        kind = type_text(name).replace("|", "\\|")  # a Markdown cell
        rows.append(f"| `{Settings.env_name(name)}` | {kind} | {_default_text(name)} | {field.description} |")
    rows += [f"| `{name}` | {kind} | {default} | {text} |" for name, kind, default, text in READ_ELSEWHERE]
    return "\n".join(rows)


def readme_with_table(readme: str) -> str:
    """The README with the generated table between its markers (the test compares; writing it is
    `python -m wikimem_platform.settings`)."""
    before, start, rest = readme.partition(TABLE_START)
    if not start:
        raise ValueError(f"the README has no {TABLE_START!r} marker")
    _, end, after = rest.partition(TABLE_END)
    if not end:
        raise ValueError(f"the README has no {TABLE_END!r} marker")
    return f"{before}{TABLE_START}\n{settings_table()}\n{TABLE_END}{after}"


if __name__ == "__main__":  # rewrite the README's table from the model
    import sys

    path = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    path.write_text(readme_with_table(path.read_text(encoding="utf-8")), encoding="utf-8")
