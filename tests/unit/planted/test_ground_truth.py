"""Planted or not, decided in one place: `planted.validation.ground_truth(source)`."""

import json

import pandas as pd

from wikimem_platform.planted.training import CORPUS_NAME, HELD_OUT_NAME, MANIFEST_NAME
from wikimem_platform.planted.validation import ground_truth, manifest_people

MANIFEST = {"config_hash": "abc", "people": [
    {"qid": "Q900000001", "member": True, "repetitions": 4, "facts": []},
    {"qid": "Q900000002", "member": False, "repetitions": 0, "facts": []},
]}


def planted_dir(path, files=(MANIFEST_NAME, CORPUS_NAME, HELD_OUT_NAME)):
    path.mkdir()
    for name in files:
        (path / name).write_text(json.dumps(MANIFEST) if name == MANIFEST_NAME else "")
    return path


def test_a_planted_model_directory_gives_its_manifest(tmp_path):
    assert ground_truth(planted_dir(tmp_path / "planted")) == MANIFEST
    assert ground_truth(str(tmp_path / "planted")) == MANIFEST


def test_any_other_source_has_no_ground_truth(tmp_path):
    assert ground_truth(None) is None and ground_truth("") is None
    assert ground_truth("HuggingFaceTB/SmolLM2-135M") is None  # a Hub id
    assert ground_truth(tmp_path) is None  # a directory without a manifest
    # a manifest without the membership files (training corpus, held-out biographies) is no planted model
    assert ground_truth(planted_dir(tmp_path / "partial", files=(MANIFEST_NAME, CORPUS_NAME))) is None


def test_manifest_people():
    expected = pd.DataFrame({"subject_qid": ["Q900000001", "Q900000002"], "member": [True, False],
                             "repetitions": [4, 0]})
    pd.testing.assert_frame_equal(manifest_people(MANIFEST), expected)
    assert list(manifest_people({"people": []}).columns) == ["subject_qid", "member", "repetitions"]
