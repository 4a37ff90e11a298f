"""The erasure loop on the model whose ground truth we know (the planted model), through the real
assets, sensor and CLI: erasure requests for three members with facts memorized at threshold ->
answers -> forget and retain sets exported -> reference unlearning (NPO) registered as a new
revision -> that revision's audit -> the request sensor re-audits the answered erasures on it ->
the verification shows their facts no longer memorized at threshold while at least 90 % of the
retain set's facts memorized before still are."""

import json
import time
from pathlib import Path

import pytest
from dagster import AssetSelection, DagsterInstance, build_sensor_context, materialize

from assets import requests as request_assets
from assets import scoring as scoring_assets
from tests.support.checks import REQUEST_CHECKS
from tests.support.criteria import criterion
from resources import ParquetIOManager, RegistryResource
from sensors import requests as request_sensors
from tests.support.scoring_setup import UPSTREAM, resources
from tests.e2e.test_planted_pipeline import planted_data_config
from cli.main import main
from wikimem_platform.planted import load_manifest, registry_fields
from wikimem_platform.registry import Registry
from wikimem_platform.subject_requests import intake
from wikimem_platform.subject_requests.answer import release_name
from wikimem_platform.subject_requests.answer_files import read_answer
from wikimem_platform.storage import StoredResults
from wikimem_platform.unlearning.export import read_export

REQUEST_ASSETS = [request_assets.request_subject, request_assets.request_canaries, request_assets.request_scores,
                  request_assets.request_answer]
MODEL_ASSETS = [scoring_assets.scores, scoring_assets.memorization]
N_PEOPLE = 3


class Loop:
    def __init__(self, tmp: Path):
        self.url = f"sqlite:///{tmp / 'registry.db'}"
        self.registry, self.store = Registry(self.url), intake.RequestStore(self.url)
        self.instance = DagsterInstance.ephemeral(tempdir=str(tmp / "home"))
        self.storage = Path(self.instance.storage_directory())
        self.resources = {**resources(tmp, self.url), "io_manager": ParquetIOManager(base_dir=str(self.storage / "parquet"))}
        self.cli = ["--registry-url", self.url, "--storage", str(self.storage)]

    def audit_release(self, key: str) -> None:
        self.instance.add_dynamic_partitions("models", [key])
        assert materialize([*UPSTREAM, *MODEL_ASSETS], selection=MODEL_ASSETS, instance=self.instance, partition_key=key,
                           resources=self.resources).success

    def run_request(self, request_id: str) -> None:
        assert materialize([*UPSTREAM, *MODEL_ASSETS, *REQUEST_ASSETS, *REQUEST_CHECKS],
                           selection=AssetSelection.groups("requests"), instance=self.instance,
                           partition_key=request_id, resources=self.resources).success

    def tick(self, cursor=None):
        with build_sensor_context(instance=self.instance, resources={"model_registry": RegistryResource(url=self.url)},
                                  cursor=cursor) as context:
            result = request_sensors.subject_request_sensor(context)
        for request in result.dynamic_partitions_requests or []:
            self.instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        return result


@pytest.mark.slow
def test_erasure_is_verified_on_the_unlearned_revision(planted_model, tmp_path, capsys, monkeypatch):
    started = time.monotonic()
    loop = Loop(tmp_path)
    base = loop.registry.register(**registry_fields(planted_model), display_name="Planted tiny model")
    assert materialize(UPSTREAM, instance=loop.instance, resources=loop.resources, run_config=planted_data_config(planted_model)).success
    loop.audit_release(base.key)
    cursor = loop.tick().cursor  # the sensor has seen the base release

    # Three of the most-read members, each with facts the base release memorized at threshold.
    pairs = StoredResults(loop.storage).memorization(base.key)
    repetitions = {p["qid"]: p["repetitions"] for p in load_manifest(planted_model)["people"]}
    memorized = pairs[pairs["at_threshold"]].groupby("subject_qid").size()
    people = [q for q in memorized.sort_values(ascending=False, kind="stable").index if repetitions.get(q) == 16][:N_PEOPLE]
    assert len(people) == N_PEOPLE
    humans = StoredResults(loop.storage).table("humans")
    requests = [loop.store.add(intake.resolve_qid(q, humans), "erasure") for q in people]
    launched = loop.tick(cursor)
    assert sorted(r.partition_key for r in launched.run_requests) == sorted(r.id for r in requests)
    for request in requests:
        loop.run_request(request.id)
    before = {r.id: read_answer(loop.storage, r.id) for r in requests}
    forget_facts = sum(len(a["forget_set"]) for a in before.values())
    memorized_before = sum(f["verdict"] == "memorized" for a in before.values() for f in a["models"][0]["facts"])
    assert memorized_before >= N_PEOPLE

    # Forget and retain sets, then reference unlearning registered as a new revision.
    ids = [r.id for r in requests]
    assert main([*loop.cli, "forget-set", "--request", *ids, "--format", "openunlearning", "--out", str(tmp_path / "ou")]) == 0
    manifest, files = read_export(tmp_path / "ou")
    assert manifest["forget_facts"] == forget_facts and manifest["retain_facts"] >= 10
    assert all(r["question"] and r["answer"] for r in files["forget_qa.jsonl"])
    unlearned_dir = tmp_path / "unlearned"
    assert main([*loop.cli, "unlearn", "--request", *ids, "--method", "npo", "--out", str(unlearned_dir)]) == 0
    [new] = [e for e in loop.registry.list() if e.key != base.key]
    assert new.name == base.name and new.revision.startswith(f"{base.revision}-npo-")
    unlearning = json.loads((unlearned_dir / "unlearning.json").read_text())

    # The new revision's own audit, then the sensor re-audits the answered erasures on it.
    waiting = loop.tick(launched.cursor)
    assert not waiting.run_requests  # the new revision's audit has not run yet
    loop.audit_release(new.key)
    verify = loop.tick(waiting.cursor)
    assert sorted(r.partition_key for r in verify.run_requests) == sorted(ids)
    assert all(r.tags["wikimem/trigger"] == "erasure verification" for r in verify.run_requests)
    for request in requests:
        loop.run_request(request.id)

    checks = [read_answer(loop.storage, r.id)["verification"] for r in requests]
    assert all(len(c) == 1 and c[0]["before"] == base.key and c[0]["after"] == new.key for c in checks)
    checks = [c[0] for c in checks]
    # every fact memorized at threshold before is no longer
    still = sum(c["counts"]["still memorized"] for c in checks)
    criterion("erasure loop: targeted facts still memorized", still, "==", 0, context=[c["facts"] for c in checks])
    forgotten = sum(c["counts"]["forgotten"] for c in checks)
    assert forgotten == memorized_before
    retain = checks[0]["retain"]
    assert retain["retain_facts"] >= 10, retain
    criterion("erasure loop: retain utility", retain["utility"], ">=", 0.90, n=retain["retain_facts"], context=retain)
    criterion("erasure loop: PrivLeak AUROC drop, smallest of the people",
              min(c["privleak_auroc_before"] - c["privleak_auroc_after"] for c in checks), ">", 0)

    # By hand, the same verdict.
    capsys.readouterr()
    code = main([*loop.cli, "request", "verify", ids[0], "--release", new.key])
    out = capsys.readouterr().out
    assert code == 0 and "erased" in out and "retain utility" in out
    letter = (loop.storage / "requests" / ids[0] / "answer.html").read_text()
    new = loop.registry.get(new.key)
    assert new.display_name == base.display_name  # an unlearned revision keeps what letters say of the model
    assert f"Verified erasure, {checks[0]['verified_at'][:10]}: {release_name({'model': new.key, 'display_name': new.display_name})}" in letter
    print(f"\nerasure loop: {N_PEOPLE} people, {memorized_before} facts memorized at threshold, {forgotten} forgotten; "
          f"forget set {forget_facts} facts (lenient), retain {retain['retain_facts']} facts, utility "
          f"{retain['utility']:.3f}; PrivLeak AUROC " + ", ".join(
              f"{c['privleak_auroc_before']:.2f}->{c['privleak_auroc_after']:.2f}" for c in checks)
          + f"; unlearning {unlearning['seconds']} s; whole loop {time.monotonic() - started:.0f} s")

    # A completed erasure ends in a purge: nothing of the person is needed once the erasure holds.
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "no-instance"))  # the loop's instance is in memory
    capsys.readouterr()
    assert main([*loop.cli, "request", "verify", ids[1], "--release", new.key, "--purge"]) == 0
    assert f"{ids[1]}: purged" in capsys.readouterr().out
    record = loop.store.get(ids[1])
    assert record.is_purged and record.person_json is None and read_answer(loop.storage, ids[1]) is None
    assert not list((loop.storage / "parquet").glob(f"*/{ids[1]}.parquet"))
