"""Model registry: real SQLite and a real PostgreSQL server, validation errors that name the field."""

import pytest

from wikimem_platform.registry import Registry, RegistryError, Task


@pytest.fixture(params=["sqlite", "postgres"])
def registry(request, tmp_path):
    """The same tests on both backends: SQLite (the default) and PostgreSQL (a throwaway server)."""
    url = f"sqlite:///{tmp_path / 'registry.db'}" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    return Registry(url, allowed_roots=[tmp_path / "models"])


def test_register_list_get_remove(registry):
    first = registry.register(name="smollm2-135m-instruct", source_kind="shipped", source="smollm2-135m-instruct", variant="instruct")
    second = registry.register(name="smollm2-135m-instruct", revision="2", source_kind="shipped", source="smollm2-135m-instruct")
    assert [m.key for m in registry.list()] == ["smollm2-135m-instruct@1", "smollm2-135m-instruct@2"]
    assert registry.get("smollm2-135m-instruct").key == second.key  # bare name: newest revision
    assert registry.get(first.key).variant == "instruct"
    registry.remove(first.key)
    assert [m.key for m in registry.list()] == [second.key]
    with pytest.raises(KeyError):
        registry.get(first.key)


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"name": "Bad Name!", "source_kind": "shipped", "source": "gemma-3-270m"}, "name"),
        ({"name": "m", "source_kind": "ftp", "source": "x"}, "source_kind"),
        ({"name": "m", "source_kind": "shipped", "source": "gpt-5"}, "source"),
        ({"name": "m", "source_kind": "hub", "source": "not a hub id"}, "source"),
        ({"name": "m", "source_kind": "hf-dir", "source": "/does/not/exist"}, "source"),
        ({"name": "m", "source_kind": "shipped", "source": "gemma-3-270m", "variant": "chat"}, "variant"),
        ({"name": "m", "source_kind": "shipped", "source": "gemma-3-270m", "quantization": "int3"}, "quantization"),
        ({"name": "m", "source_kind": "shipped", "source": "gemma-3-270m", "revision": "a b"}, "revision"),
        ({"name": "m", "source_kind": "shipped", "source": "gemma-3-270m", "parameter_count": 0}, "parameter_count"),
        ({"name": "m", "source_kind": "shipped", "source": "gemma-3-270m", "task": "translation"}, "task"),
        ({"name": "m", "source_kind": "shipped", "source": "gemma-3-270m", "task": "token-classification"}, "task"),
    ],
)
def test_invalid_entries_are_refused_naming_the_field(registry, fields, field):
    with pytest.raises(RegistryError) as error:
        registry.register(**fields)
    assert error.value.field == field
    assert str(error.value).startswith(f"{field}: ")
    assert registry.list() == []


def test_duplicate_release_and_paths(registry, tmp_path):
    registry.register(name="m", source_kind="shipped", source="gemma-3-270m")
    with pytest.raises(RegistryError, match=r"revision: m@1 is already registered"):
        registry.register(name="m", source_kind="shipped", source="gemma-3-270m")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "config.json").write_text("{}")
    with pytest.raises(RegistryError, match="outside the allowed model roots"):
        registry.register(name="local", source_kind="hf-dir", source=str(outside))
    inside = tmp_path / "models" / "tiny"
    inside.mkdir(parents=True)
    with pytest.raises(RegistryError, match="no config.json"):
        registry.register(name="local", source_kind="hf-dir", source=str(inside))
    (inside / "config.json").write_text("{}")
    assert registry.register(name="local", source_kind="hf-dir", source=str(inside)).source == str(inside.resolve())
    with pytest.raises(RegistryError, match="not a .gguf file"):
        registry.register(name="g", source_kind="gguf", source=str(inside / "config.json"))


def test_register_by_source_infers_kind_name_and_shipped_metadata(registry, tmp_path):
    smol = registry.register_source("smollm2-135m-instruct")
    assert (smol.key, smol.source_kind, smol.family, smol.variant, smol.parameter_count) == (
        "smollm2-135m-instruct@1", "shipped", "smollm2", "instruct", 134_515_008)
    gemma = registry.register_source("gemma-3-270m", revision="2", variant="instruct")  # explicit fields win
    assert (gemma.key, gemma.family, gemma.variant) == ("gemma-3-270m@2", "gemma-3", "instruct")
    hub = registry.register_source("HuggingFaceTB/SmolLM2-360M")
    assert (hub.name, hub.source_kind, hub.family) == ("smollm2-360m", "hub", None)
    model_dir = tmp_path / "models" / "My Model"
    model_dir.mkdir(parents=True)
    (model_dir / "config.json").write_text("{}")
    local = registry.register_source(str(model_dir))
    assert (local.name, local.source_kind, local.task) == ("my-model", "hf-dir", "causal-lm")
    ner_dir = tmp_path / "models" / "ner"
    ner_dir.mkdir()
    (ner_dir / "config.json").write_text('{"architectures": ["BertForTokenClassification"]}')
    assert registry.register_source(str(ner_dir)).task == "token-classification"  # from the config
    with pytest.raises(RegistryError) as error:
        registry.register_source("no such thing")
    assert error.value.field == "source"
    with pytest.raises(RegistryError, match="does not exist"):
        registry.register_source(str(tmp_path / "models" / "gone.gguf"))  # kind from the suffix, then validated


def test_a_registry_created_before_a_column_existed_gains_it_and_keeps_its_releases(registry):
    """An older database (no `task` column) is upgraded in place: its rows get the default."""
    from sqlalchemy import MetaData, Table, create_engine, text

    from wikimem_platform.registry import ModelEntry

    engine = create_engine(registry.url)
    ModelEntry.__table__.drop(engine)
    before = Table("models", MetaData(), *(c.copy() for c in ModelEntry.__table__.columns if c.name != "task"))
    before.create(engine)
    with engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO models (name, revision, source_kind, source, variant, quantization, trust_remote_code, "
            "registered_at, status) VALUES ('old', '1', 'shipped', 'gemma-3-270m', 'base', 'none', false, "
            "'2026-01-01 00:00:00', 'scored')"))
    upgraded = Registry(registry.url)
    assert [(e.key, e.task, e.status) for e in upgraded.list()] == [("old@1", Task.CAUSAL_LM.value, "scored")]
    assert upgraded.register(name="ner", source_kind="hub", source="org/ner", task="token-classification").task == "token-classification"


def test_url_from_environment(tmp_path, monkeypatch):
    """Any SQLAlchemy URL through $WIKIMEM_REGISTRY_URL (SQLite here; Postgres takes a postgresql:// URL)."""
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    monkeypatch.setenv("WIKIMEM_REGISTRY_URL", url)
    Registry().register(name="m", source_kind="shipped", source="gemma-3-270m")
    assert (tmp_path / "elsewhere.db").exists()
    assert [e.key for e in Registry(url).list()] == ["m@1"]
