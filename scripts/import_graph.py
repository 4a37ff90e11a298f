"""Figures of the project's import graph: modules, imports, cycles, imports back up into a module's
own package, function-local imports of project modules (and how many say why).

    .venv/bin/python scripts/import_graph.py [CHECKOUT]      # default: this checkout
"""

import sys
from collections import Counter
from pathlib import Path

from wikimem_platform.code_graph import cycles, imports_back_up, module_files, project_imports


def main(root: Path) -> None:
    files = module_files(root)
    imports = project_imports(root)
    domain = [name for name in files if name.split(".")[0] == "wikimem_platform"]
    flat = [name for name in domain if name.count(".") == 1 and files[name].name != "__init__.py"]
    packages = [name for name in domain if files[name].name == "__init__.py" and name != "wikimem_platform"]
    local = [found for found in imports if found.local]
    print(f"modules: {len(files)} ({len(domain)} in wikimem_platform: {len(flat)} flat modules at its top, "
          f"{len(packages)} packages)")
    print(f"imports of project modules: {len(imports)} ({len({(i.source, i.target) for i in imports})} distinct edges)")
    groups = cycles(imports)
    print(f"cycles: {len(groups)}" + "".join(f"\n  {' <-> '.join(group)}" for group in groups))
    back = imports_back_up(imports)
    print(f"imports back up into the module's own package: {len(back)}"
          + "".join(f"\n  {i.source}:{i.line} -> {i.target}" for i in back))
    print(f"function-local imports of project modules: {len(local)} "
          f"({sum(bool(i.reason) for i in local)} with a stated reason)")
    for source, count in Counter(i.source for i in local if not i.reason).most_common():
        print(f"  {source}: {count}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
