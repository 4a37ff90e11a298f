"""The project's own import graph, read from the source (nothing is imported or run).

One home for what the code depends on: code versions follow it (`versions.source_version` hashes
a module with everything it imports, transitively), and the suite keeps it free of cycles, of
imports back up into a module's own package and of unexplained function-local imports.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# Top-level packages and modules of the checkout whose imports form the graph.
# `cli` (the command line) imports both the domain library and the Dagster layer; nothing imports it.
PROJECT_ROOTS = ("wikimem_platform", "assets", "resources", "sensors", "expectations", "definitions", "cli")
# A function-local import of a project module must say why on its line: `# lazy: <reason>`.
LAZY_REASON = "# lazy:"


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported project module
    line: int
    local: bool  # inside a function (run when called, not when the module loads)
    reason: str  # what follows `# lazy:` on the line, if anything


def module_files(root: Path, roots: tuple[str, ...] = PROJECT_ROOTS) -> dict[str, Path]:
    """Dotted module name -> source file, for every module under the given top-level names."""
    files: dict[str, Path] = {}
    for top in roots:
        single = root / f"{top}.py"
        if single.is_file():
            files[top] = single
        for path in sorted((root / top).rglob("*.py")) if (root / top).is_dir() else []:
            parts = path.relative_to(root).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def _is_package(name: str, files: dict[str, Path]) -> bool:
    return files[name].name == "__init__.py"


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports_in(name: str, path: Path, files: dict[str, Path]) -> tuple[Import, ...]:
    stat = path.stat()
    return _parsed_imports(name, path, stat.st_mtime_ns, stat.st_size, tuple(sorted(files)), _is_package(name, files))


@cache  # keyed by the file's modification time and size: a changed file is read again
def _parsed_imports(name: str, path: Path, _mtime: int, _size: int, modules: tuple[str, ...],
                    is_package: bool) -> tuple[Import, ...]:
    files = set(modules)
    source = path.read_text()
    lines = source.splitlines()
    package = name if is_package else name.rpartition(".")[0]
    found: list[Import] = []

    def add(target: str, node: ast.stmt, local: bool) -> None:
        while target and target not in files:  # `import a.b.c` of a name inside a module: the module
            target = target.rpartition(".")[0]
        if target and target != name:
            text = lines[node.lineno - 1]
            reason = text.split(LAZY_REASON, 1)[1].strip() if LAZY_REASON in text else ""
            found.append(Import(name, target, node.lineno, local, reason))

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                continue  # for type checkers only: never run
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, child, local)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - child.level + 1]
                    module = ".".join([*base, *([child.module] if child.module else [])])
                else:
                    module = child.module or ""
                for alias in child.names:  # `from pkg import submodule` imports the submodule
                    full = f"{module}.{alias.name}"
                    add(full if full in files else module, child, local)
            visit(child, local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source, filename=str(path)), False)
    return tuple(found)


def project_imports(root: Path, roots: tuple[str, ...] = PROJECT_ROOTS) -> tuple[Import, ...]:
    """Every import of a project module by a project module (type-checking-only imports left out)."""
    files = module_files(root, roots)
    return tuple(found for name, path in files.items() for found in _imports_in(name, path, files))


def dependencies(root: Path, names: tuple[str, ...], roots: tuple[str, ...] = PROJECT_ROOTS) -> list[str]:
    """The named modules and every project module they import, transitively (function-local imports
    included: they run too), with the packages whose `__init__` an import runs. A package named
    counts all its modules."""
    files = module_files(root, roots)
    edges: dict[str, set[str]] = {}
    for found in project_imports(root, roots):
        edges.setdefault(found.source, set()).add(found.target)
    todo = []
    for name in names:
        if name not in files:
            raise KeyError(f"{name}: not a module of the project")
        todo.append(name)
        if _is_package(name, files):
            todo += [other for other in files if other.startswith(name + ".")]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parents = name.split(".")
        todo += [".".join(parents[:i]) for i in range(1, len(parents)) if ".".join(parents[:i]) in files]
        todo += sorted(edges.get(name, ()))
    return sorted(seen)


def cycles(imports: tuple[Import, ...] | list[Import]) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others (Tarjan's strongly
    connected components of more than one module)."""
    edges: dict[str, set[str]] = {}
    for found in imports:
        edges.setdefault(found.source, set()).add(found.target)
        edges.setdefault(found.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:  # recursion depth is bounded by the number of modules
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return sorted(groups)


def imports_back_up(imports: tuple[Import, ...] | list[Import]) -> list[Import]:
    """Imports of a module's own package (or a package above it) from inside it: the package's
    `__init__` usually imports the module back, a circle waiting to happen."""
    return [found for found in imports if found.source.startswith(found.target + ".")]
