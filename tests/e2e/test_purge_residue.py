"""The residue scan (issue 60): a request for an invented person with unique marker strings runs
end to end on the planted model through the real assets, on an instance kept on disk (SQLite event
log, registry, Parquet, shards, sentence cache), is purged, and then every byte under the instance
and every cache file the run wrote is searched for each marker (UTF-8, JSON-escaped, lower-cased)
and for the digests an unsalted scheme would have stored (the name-and-facts subject key, each of
the person's sentences as the sentence cache keyed it): zero hits. The same after a retention purge
(the schedule's job) and after a run killed mid-way and purged.

Before each purge the same scan finds the markers: it is a scan that can fail.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
import yaml
from dagster import AssetSelection, DagsterInstance, DagsterRunStatus, RunsFilter, materialize

from assets import requests as request_assets
from assets import scoring as scoring_assets
from resources import ParquetIOManager, RegistryResource, ScoringResource
from sensors.retention import request_retention_job
from tests.e2e.test_planted_pipeline import planted_data_config
from tests.support.scoring_setup import UPSTREAM
from cli.main import main
from wikimem_platform.labels import normalize_label
from wikimem_platform.planted import registry_fields
from wikimem_platform.registry import Registry
from wikimem_platform.subject_requests import intake
from wikimem_platform.subject_requests.answer_files import answer_dir
from wikimem_platform.subject_requests.controller import save_controller
from wikimem_platform.wikimem.scoring import expand_canaries

REPO = Path(__file__).resolve().parents[2]
REQUEST_ASSETS = [request_assets.request_subject, request_assets.request_canaries, request_assets.request_scores,
                  request_assets.request_answer]
CONTROLLER = {"name": "Beispiel KI GmbH", "address": "Beispielweg 5, 10115 Berlin", "contact": "privacy@example.org",
              "dpo": "Dr. Lena Vogt, dpo@example.org", "supervisory_authority": "BlnBDI, Alt-Moabit 59-61, 10555 Berlin"}


def person(tag: str, born: int) -> dict:
    """An invented person whose every field is a string found nowhere else (tag and year keep them apart)."""
    return {"name": f"Quirinella Vozzbrück{tag}", "aliases": [f"Q. Vozzbrück-Ilm{tag}"],
            "facts": {"occupation": f"aerostat cartographer{tag}", "place of birth": f"Nether Quimbly{tag}",
                      "date of birth": f"{born}-07-19"},
            "languages": ["en"]}


def markers(document: dict, reference: str) -> list[str]:
    facts = document["facts"]
    born = facts["date of birth"]
    return [document["name"], *document["aliases"], facts["occupation"], facts["place of birth"], born,
            f"19 July {born[:4]}", reference]


def forms(text: str) -> set[bytes]:
    """The marker as a file may hold it: UTF-8, JSON-escaped (ASCII-only and not), lower-cased."""
    out = set()
    for variant in (text, text.lower()):
        for escaped in (variant, json.dumps(variant)[1:-1], json.dumps(variant, ensure_ascii=False)[1:-1]):
            out.add(escaped.encode("utf-8"))
    return out


def unsalted_digests(document: dict, sentences: set[str]) -> set[bytes]:
    """What today's keyed digests replaced: the subject key from a plain SHA-256 of the name and facts
    (`person-` + 12 hex), and each sentence's plain 16-byte BLAKE2b (raw, and as hex)."""
    canonical = {"name": normalize_label(document["name"]),
                 "facts": {"P106": [normalize_label(document["facts"]["occupation"])],
                           "P19": [normalize_label(document["facts"]["place of birth"])],
                           "P569": [normalize_label(document["facts"]["date of birth"])]}}
    key = hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()[:12]
    out = {key.encode()}
    for sentence in sentences:
        digest = hashlib.blake2b(sentence.encode("utf-8"), digest_size=16).digest()
        out |= {digest, digest.hex().encode()}
    return out


def scan(roots: list[Path], needles: set[bytes], newer_than: float | None = None,
         extra_roots: list[Path] = ()) -> list[tuple[str, bytes]]:
    """Every (file, needle) found: every file under `roots`, and the files under `extra_roots`
    changed since `newer_than` (the shared model cache: only what this test's runs wrote)."""
    hits = []
    files = [p for root in roots for p in root.rglob("*") if p.is_file()]
    files += [p for root in extra_roots if root.is_dir() for p in root.rglob("*")
              if p.is_file() and p.stat().st_mtime >= (newer_than or 0)]
    for path in files:
        data = path.read_bytes()
        lowered = data.lower()
        hits += [(str(path), n) for n in needles if n in data or n in lowered]
    return hits


class Instance:
    """A Dagster instance on disk (the repository's dagster.yaml) with the registry in it."""

    def __init__(self, tmp: Path, planted_model: Path):
        self.home = tmp / "home"
        self.home.mkdir()
        shutil.copy(REPO / "dagster.yaml", self.home / "dagster.yaml")
        os.environ["DAGSTER_HOME"] = str(self.home)
        self.url = f"sqlite:///{self.home / 'wikimem_registry.db'}"
        self.instance = DagsterInstance.get()
        self.storage = Path(self.instance.storage_directory())
        self.store = intake.RequestStore(self.url)
        self.cli = ["--registry-url", self.url, "--storage", str(self.storage)]
        self.resources = {"io_manager": ParquetIOManager(), "scoring": ScoringResource(),
                          "model_registry": RegistryResource(url=self.url)}
        self.release = Registry(self.url).register(**registry_fields(planted_model), display_name="Planted tiny model")
        save_controller(self.storage, **CONTROLLER, retention_days=30)
        assert materialize(UPSTREAM, instance=self.instance, resources=self.resources,
                           run_config=planted_data_config(planted_model)).success
        self.instance.add_dynamic_partitions("models", [self.release.key])
        assert materialize([*UPSTREAM, scoring_assets.scores, scoring_assets.memorization],
                           selection=[scoring_assets.scores, scoring_assets.memorization], instance=self.instance,
                           partition_key=self.release.key, resources=self.resources).success

    def add(self, document: dict, tmp: Path, reference: str, kind: str = "access") -> intake.SubjectRequest:
        facts = tmp / f"facts-{reference}.yaml"
        facts.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
        known = {r.id for r in self.store.list()}
        assert main([*self.cli, "request", "add", "--facts", str(facts), "--kind", kind, "--reference", reference]) == 0
        facts.unlink()  # the requester's file is theirs, not the platform's
        [request] = [r for r in self.store.list() if r.id not in known]
        self.instance.add_dynamic_partitions("requests", [request.id])
        return request

    def run(self, request_id: str) -> None:
        assert materialize([*UPSTREAM, scoring_assets.scores, scoring_assets.memorization, *REQUEST_ASSETS],
                           selection=AssetSelection.groups("requests"), instance=self.instance,
                           partition_key=request_id, resources=self.resources).success

    def sentences(self, request_id: str) -> set[str]:
        parquet = self.storage / "parquet"
        rows = expand_canaries(pd.read_parquet(parquet / "request_canaries" / f"{request_id}.parquet"),
                               pd.read_parquet(parquet / "request_candidates" / f"{request_id}.parquet"))
        return set(rows["sentence_h"])

    def residue(self, needles: set[bytes], started: float) -> list[tuple[str, bytes]]:
        cache = Path(os.environ.get("WIKIMEM_CACHE_DIR") or Path.home() / ".cache" / "wikimem" / "models")
        return scan([self.home], needles, newer_than=started, extra_roots=[cache])


@pytest.fixture(scope="module")
def world(tmp_path_factory, planted_model):
    tmp = tmp_path_factory.mktemp("purge")
    before = os.environ.get("DAGSTER_HOME")
    instance = Instance(tmp, planted_model)
    yield instance, tmp
    instance.instance.dispose()
    if before is None:
        os.environ.pop("DAGSTER_HOME", None)
    else:
        os.environ["DAGSTER_HOME"] = before


def needles_of(world_instance: Instance, request_id: str, document: dict, reference: str) -> set[bytes]:
    found = set().union(*(forms(m) for m in markers(document, reference)))
    return found | unsalted_digests(document, world_instance.sentences(request_id))


def assert_present_then_absent(instance: Instance, needles: set[bytes], started: float, purge) -> None:
    before = instance.residue(needles, started)
    holders = {Path(path).relative_to(instance.home).parts[:3] for path, _ in before if Path(path).is_relative_to(instance.home)}
    assert len(before) > 0 and len(holders) >= 3, holders  # the scan finds the person where the run put them
    purge()
    after = instance.residue(needles, started)
    assert after == [], "\n".join(f"{path}: {needle!r}" for path, needle in after)


def test_a_purged_request_leaves_no_byte_of_the_person(world, capsys):
    instance, tmp = world
    started = time.time()
    document, reference = person("", 1938), "ticket QZ-88231"
    request = instance.add(document, tmp, reference, kind="erasure")
    instance.run(request.id)
    assert (answer_dir(instance.storage, request.id) / "answer.html").is_file()
    assert main([*instance.cli, "request", "show", request.id]) == 0  # a read, in the access log
    assert main([*instance.cli, "forget-set", "--request", request.id, "--format", "tofu",
                 "--out", str(instance.home / "exports" / "tofu")]) == 0
    needles = needles_of(instance, request.id, document, reference)
    capsys.readouterr()
    assert_present_then_absent(instance, needles, started,
                               lambda: main([*instance.cli, "request", "remove", request.id, "--purge"]) == 0 or
                               pytest.fail("purge failed"))
    out = capsys.readouterr().out
    assert f"{request.id}: purged" in out and "run(s) with their event logs" in out
    record = instance.store.get(request.id)  # the accountability record: no personal data
    assert record.is_purged and record.status == "answered" and record.answered_at and record.purged_by
    assert not instance.instance.get_runs(RunsFilter(tags={"dagster/partition": request.id}))
    assert main([*instance.cli, "access-log", "--request", request.id]) == 0
    log = capsys.readouterr().out
    assert "show request" in log and "export forget set (tofu)" in log


def test_a_retention_purge_leaves_no_byte(world):
    instance, tmp = world
    started = time.time()
    document, reference = person("-r", 1941), "ticket QZ-55117"
    request = instance.add(document, tmp, reference)
    instance.run(request.id)
    keep = instance.add(person("-k", 1944), tmp, "ticket QZ-10001")  # answered yesterday: within 30 days, kept
    instance.run(keep.id)
    needles = needles_of(instance, request.id, document, reference)
    answered = instance.store.get(request.id).answered_at
    with intake.Session(instance.store.engine) as session:  # answered 31 days ago, past the controller's 30
        row = session.get(intake.SubjectRequest, request.id)
        row.answered_at = answered - timedelta(days=31)
        session.add(row)
        session.commit()

    def retention():
        result = request_retention_job.execute_in_process(instance=instance.instance,
                                                          resources={"model_registry": RegistryResource(url=instance.url),
                                                                     "scoring": ScoringResource()})
        assert result.success

    assert_present_then_absent(instance, needles, started, retention)
    assert instance.store.get(request.id).purged_by == "retention schedule"
    kept = instance.store.get(keep.id)
    assert not kept.is_purged and (answer_dir(instance.storage, keep.id) / "answer.json").is_file()


KILLED_RUN = """
import os, sys
from dagster import AssetSelection, DagsterInstance, materialize
from tests.e2e.test_purge_residue import REQUEST_ASSETS
from tests.support.scoring_setup import UPSTREAM
from assets import scoring as scoring_assets
from resources import ParquetIOManager, RegistryResource, ScoringResource
with DagsterInstance.get() as instance:
    materialize([*UPSTREAM, scoring_assets.scores, scoring_assets.memorization, *REQUEST_ASSETS],
                selection=AssetSelection.groups("requests"), instance=instance, partition_key=sys.argv[1],
                resources={"io_manager": ParquetIOManager(), "scoring": ScoringResource(),
                           "model_registry": RegistryResource(url=sys.argv[2])})
"""


def test_a_request_killed_mid_run_and_purged_leaves_no_byte(world):
    instance, tmp = world
    started = time.time()
    document, reference = person("-c", 1947), "ticket QZ-77002"
    request = instance.add(document, tmp, reference)
    shards = instance.storage / "score_shards" / "requests" / request.id
    child = subprocess.Popen([sys.executable, "-c", KILLED_RUN, request.id, instance.url], cwd=REPO,
                             env={**os.environ, "DAGSTER_HOME": str(instance.home)}, start_new_session=True)
    try:  # killed once the model has written some of the request's shards
        deadline = time.monotonic() + 600
        while not (shards.is_dir() and any(shards.rglob("*.parquet"))):
            assert child.poll() is None, "the run ended before it was killed"
            assert time.monotonic() < deadline, "no shard after 10 minutes"
            time.sleep(0.2)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    [run] = instance.instance.get_runs(RunsFilter(tags={"dagster/partition": request.id}))
    assert run.status == DagsterRunStatus.STARTED  # its process is gone; the run record does not know
    instance.instance.report_run_failed(run)  # what Dagster's run monitoring records for a dead worker
    assert not (answer_dir(instance.storage, request.id) / "answer.json").exists()
    needles = needles_of(instance, request.id, document, reference)
    assert_present_then_absent(instance, needles, started,
                               lambda: main([*instance.cli, "request", "purge", request.id]) == 0 or
                               pytest.fail("purge failed"))
    assert instance.store.get(request.id).status == "withdrawn"
