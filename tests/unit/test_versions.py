"""Code versions follow the code: a change anywhere in what a module imports, however indirectly,
changes its version (so stored shards and cached sentence NLLs are not reused while stale), and a
change elsewhere does not."""

from __future__ import annotations

import shutil
from pathlib import Path

from wikimem_platform.code_graph import project_imports
from wikimem_platform.versions import PROJECT_ROOT, code_hash, source_version
from wikimem_platform.wikimem.scoring import SCORING_VERSION

SCORING = ("wikimem_platform.wikimem.scoring",)


def copy_domain(tmp_path: Path) -> Path:
    shutil.copytree(PROJECT_ROOT / "wikimem_platform", tmp_path / "wikimem_platform",
                    ignore=shutil.ignore_patterns("__pycache__", "data"))
    return tmp_path


def touch(path: Path) -> None:
    path.write_text(path.read_text() + "\n# changed\n")


def test_the_scoring_version_is_the_hash_of_scoring_and_all_it_imports():
    assert SCORING_VERSION == source_version(*SCORING) == code_hash(PROJECT_ROOT, SCORING)


def test_a_change_to_model_loading_or_batching_changes_the_scoring_version(tmp_path):
    root = copy_domain(tmp_path)
    direct = {i.target for i in project_imports(root, ("wikimem_platform",)) if i.source == SCORING[0]}
    assert "wikimem_platform.lm.batching" not in direct, "batching is reached only through the NLL engine"
    versions = [code_hash(root, SCORING)]
    touch(root / "wikimem_platform/lm/loading.py")  # LoadedModel.encode: the start tokens of every NLL
    versions.append(code_hash(root, SCORING))
    touch(root / "wikimem_platform/lm/batching.py")  # imported by lm.nll, not by scoring itself
    versions.append(code_hash(root, SCORING))
    assert len(set(versions)) == 3


def test_a_change_outside_what_scoring_runs_leaves_its_version(tmp_path):
    root = copy_domain(tmp_path)
    before = code_hash(root, SCORING)
    touch(root / "wikimem_platform/reports/compliance.py")
    assert code_hash(root, SCORING) == before
    assert code_hash(root, ("wikimem_platform.reports.compliance",)) != code_hash(copy_domain(tmp_path / "fresh"),
                                                                                  ("wikimem_platform.reports.compliance",))
