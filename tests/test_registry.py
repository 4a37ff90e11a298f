"""Model registry: real SQLite, validation errors that name the field."""

import pytest

from wikimem_platform.registry import Registry, RegistryError


@pytest.fixture
def registry(tmp_path):
    return Registry(f"sqlite:///{tmp_path / 'registry.db'}", allowed_roots=[tmp_path / "models"])


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
