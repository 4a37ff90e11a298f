"""The person on every registered release (`audit_person_on_releases`), and the answer's outcomes
rebuilt from what it returned (`release_outcomes`, `models_lineage`): on the planted model, one
release whose loader raises is recorded as not audited and the release after it is audited."""

import pandas as pd
import pytest

from tests.fixtures.planted import Release
from wikimem_platform.lm.loading import load_model
from wikimem_platform.planted import load_manifest
from wikimem_platform.subject_requests.answer import ENTRY_FIELDS, models_lineage, release_outcomes
from wikimem_platform.subject_requests.audit import (
    audit_person_on_model,
    audit_person_on_releases,
    RELEASE_AUDIT_COLUMNS,
)
from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore

SETTINGS = {"dtype": "float32"}


@pytest.fixture(scope="module")
def member_plan(planted_model, planted_reference):
    """A member read 16 times, two of their properties, no controls."""
    qid = next(p["qid"] for p in load_manifest(planted_model)["people"] if p["member"] and p["repetitions"] == 16)
    return planted_reference.plan(qid, n_properties=2, n_controls=0)


def test_a_release_that_fails_is_recorded_and_the_others_go_on(planted_model, member_plan, tmp_path):
    lm = load_model(str(planted_model), device="cpu")
    releases = [Release("broken@main"), Release("planted@main")]
    loaded, messages, warnings = [], [], []

    def load(release):
        loaded.append(release.key)
        if release.key == "broken@main":
            raise OSError("no such model directory")
        return lm

    result = audit_person_on_releases(
        releases, load, member_plan, shards_for=lambda key: tmp_path / "shards" / key.replace("@", "-"),
        sentence_cache=lambda model: SentenceNllCache(tmp_path / "cache.sqlite"), settings=SETTINGS,
        label="dsr-1", log=messages.append, warn=warnings.append,
    )
    assert loaded == ["broken@main", "planted@main"]
    assert warnings == ["dsr-1: broken@main could not be audited: OSError: no such model directory"]
    assert all(m.startswith("dsr-1 on planted@main") for m in messages) and messages
    audits = result.audits
    assert list(audits.columns) == RELEASE_AUDIT_COLUMNS and list(audits["model"]) == ["broken@main", "planted@main"]
    broken, audited = audits.to_dict("records")
    assert not broken["audited"] and broken["error"] == "OSError: no such model directory"
    assert pd.isna(broken["fingerprint"]) and broken["sentences_computed"] == 0 and broken["facts_compared"] == 0
    assert audited["audited"] and pd.isna(audited["error"]) and audited["fingerprint"] == lm.fingerprint
    # the release alone gives the same scores (the second time from its shards and cache)
    alone = audit_person_on_model(lm, member_plan, ShardStore(tmp_path / "shards" / "planted-main"),
                                  SentenceNllCache(tmp_path / "cache.sqlite"), SETTINGS, log=lambda m: None)
    assert set(result.scores["model"]) == {"planted@main"} and set(result.completions["model"]) == {"planted@main"}
    pd.testing.assert_frame_equal(result.scores.drop(columns="model"), alone.scores)
    assert audited["sentences_computed"] > 0 and alone.report.sentences_computed == 0  # nothing twice
    assert result.control_scores.empty  # no controls asked for

    # the answer reads them back: one outcome per release, in order, the failure with its error
    entries = {r.key: r for r in releases[1:]}  # the broken release was removed from the registry since
    outcomes = release_outcomes(audits, result.scores, result.completions, result.control_scores, entries)
    assert [o.key for o in outcomes] == ["broken@main", "planted@main"]
    assert outcomes[0].audit is None and outcomes[0].error == "OSError: no such model directory"
    assert outcomes[0].entry == {name: None for name in ENTRY_FIELDS}
    assert outcomes[1].error is None and outcomes[1].audit.fingerprint == lm.fingerprint
    assert outcomes[1].entry["family"] == "planted" and outcomes[1].entry["display_name"] is None
    assert outcomes[1].audit.control_scores is None
    pd.testing.assert_frame_equal(outcomes[1].audit.scores, alone.scores)
    assert outcomes[1].scoring == {"precision": audited["precision"], "sentences_rescored": audited["sentences_rescored"],
                                   "share_rescored": audited["share_rescored"], "continuations": 0,
                                   "continuations_censored": 0}  # weights: no continuation read from a top k
    lineage = models_lineage(outcomes, entries)
    assert [m["key"] for m in lineage] == ["broken@main", "planted@main"]
    assert lineage[0]["fingerprint"] is None and lineage[0]["registered_at"] is None
    assert lineage[1]["fingerprint"] == lm.fingerprint and lineage[1]["registered_at"] == "2025-01-02T03:04:05+00:00"
