"""The project's import graph stays a tree of stages: no cycle, no import back up into a module's
own package, no function-local import of a project module without its reason. Each rule is also
checked on a hand-made package, so the checks themselves can fail."""

from __future__ import annotations

from pathlib import Path

from wikimem_platform.code_graph import (
    cycles,
    dependencies,
    imports_back_up,
    module_files,
    project_imports,
)
from wikimem_platform.versions import PROJECT_ROOT


def write_package(root: Path, modules: dict[str, str]) -> Path:
    for name, source in modules.items():
        path = root / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root


def test_the_project_has_no_import_cycle():
    """Function-local imports count: a circle hidden inside a function is still a circle."""
    found = cycles(project_imports(PROJECT_ROOT))
    assert not found, "modules that import each other: " + "; ".join(" <-> ".join(group) for group in found)


def test_no_module_imports_its_own_package():
    assert [f"{i.source}:{i.line}" for i in imports_back_up(project_imports(PROJECT_ROOT))] == []


def test_function_local_project_imports_say_why():
    unexplained = [f"{i.source}:{i.line} -> {i.target}" for i in project_imports(PROJECT_ROOT) if i.local and not i.reason]
    assert unexplained == [], "hoist these imports to module level, or say why on the line: `# lazy: <reason>`"


def test_the_domain_library_never_imports_the_dagster_layer():
    upward = [f"{i.source} -> {i.target}" for i in project_imports(PROJECT_ROOT)
              if i.source.startswith("wikimem_platform") and not i.target.startswith("wikimem_platform")]
    assert upward == []


def test_the_cli_reaches_the_dagster_layer_by_import_and_nothing_imports_the_cli():
    """`cli/` is the one part that imports both layers: its edges to the Dagster layer are real
    imports this graph sees (never a module name in a string), and no module outside it imports it."""
    imports = project_imports(PROJECT_ROOT)
    edges = {(i.source, i.target) for i in imports}
    assert {("cli.instance", "sensors.materialize"), ("cli.instance", "sensors.instance_purge")} <= edges
    assert ("cli.commands", "cli.instance") in edges and ("cli.main", "cli.commands") in edges
    assert not [f"{i.source} -> {i.target}" for i in imports if i.target.split(".")[0] == "cli" and i.source.split(".")[0] != "cli"]
    sources = "\n".join(path.read_text() for name, path in module_files(PROJECT_ROOT).items() if name.split(".")[0] == "cli")
    assert "import_module" not in sources and "importlib" not in sources and "__import__" not in sources
    # the Dagster layer is reached from cli.instance alone
    assert {i.source for i in imports if i.source.startswith("cli") and i.target.split(".")[0] in DAGSTER_LAYER} == {"cli.instance"}


DAGSTER_LAYER = ("assets", "resources", "sensors", "expectations", "definitions")


def test_a_planted_cycle_an_import_back_up_and_an_unexplained_lazy_import_are_found(tmp_path):
    root = write_package(tmp_path, {
        "pkg.__init__": "from pkg.stage import a\n",
        "pkg.stage.__init__": '"""A stage."""\n',
        "pkg.stage.a": "from pkg.stage import b\n",
        "pkg.stage.b": "import json\n\ndef f():\n    from pkg.stage.a import f  # lazy: a test\n    from pkg import stage\n",
        "pkg.stage.c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.stage import a\n",
    })
    imports = project_imports(root, ("pkg",))
    assert cycles(imports) == [["pkg.stage.a", "pkg.stage.b"]]
    assert [(i.source, i.target) for i in imports_back_up(imports)] == [("pkg.stage.b", "pkg.stage")]
    local = {(i.target, i.reason) for i in imports if i.local}
    assert local == {("pkg.stage.a", "a test"), ("pkg.stage", "")}
    assert not any(i.source == "pkg.stage.c" for i in imports), "type-checking imports never run"
    # what a module runs: itself, what it imports (transitively), the packages on the way
    assert dependencies(root, ("pkg.stage.a",), ("pkg",)) == ["pkg", "pkg.stage", "pkg.stage.a", "pkg.stage.b"]
    assert set(module_files(root, ("pkg",))) == {"pkg", "pkg.stage", "pkg.stage.a", "pkg.stage.b", "pkg.stage.c"}
