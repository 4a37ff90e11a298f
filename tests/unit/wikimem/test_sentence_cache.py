"""The persistent sentence-NLL cache: what goes in comes out, per model and settings, across
processes, and score_canaries reads it before computing anything."""

import multiprocessing

import pytest

from wikimem_platform.wikimem.scoring import SentenceNllCache


def test_put_get_round_trip_and_separation_by_model_and_settings(tmp_path):
    cache = SentenceNllCache.for_model(tmp_path, "file:abc", {"dtype": "float32"})
    cache.put_many({"Ilse Marwitz's occupation is journalist.": 31.25, "This person's occupation is journalist.": 27.5})
    assert cache.get_many(["This person's occupation is journalist.", "never scored", "This person's occupation is journalist."]) \
        == {"This person's occupation is journalist.": 27.5}
    cache.put_many({"This person's occupation is journalist.": 99.0})  # a value once stored is kept
    assert cache.get_many(["This person's occupation is journalist."])["This person's occupation is journalist."] == 27.5
    assert len(cache) == 2
    again = SentenceNllCache.for_model(tmp_path, "file:abc", {"dtype": "float32"})
    assert again.path == cache.path and len(again) == 2
    assert SentenceNllCache.for_model(tmp_path, "file:abd", {"dtype": "float32"}).path != cache.path
    assert SentenceNllCache.for_model(tmp_path, "file:abc", {"dtype": "bfloat16"}).path != cache.path
    many = {f"sentence {i}": float(i) for i in range(1200)}  # more than one lookup chunk
    cache.put_many(many)
    assert cache.get_many(list(many)) == many


def _write(path, start):
    SentenceNllCache(path).put_many({f"s{i}": float(i) for i in range(start, start + 500)})


def test_two_processes_write_the_same_file(tmp_path):
    path = tmp_path / "shared.sqlite"
    SentenceNllCache(path)
    workers = [multiprocessing.get_context("spawn").Process(target=_write, args=(path, start)) for start in (0, 250)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert len(SentenceNllCache(path)) == 750


@pytest.mark.slow
def test_score_canaries_reads_the_cache_before_the_model(tmp_path, smollm2):
    import pandas as pd

    from wikimem_platform.wikimem.scoring import ShardStore, expand_canaries, score_canaries

    canaries = pd.DataFrame([{"subject_qid": "Q1", "property": "P106", "variant_id": 0, "kind": "baseline",
                              "template": "{subject}'s occupation is {value}.", "subject": "Ilse Marwitz",
                              "subject_generic": "This person", "subject_similar": ["Esli Marwitz"]}])
    candidates = pd.DataFrame([{"subject_qid": "Q1", "property": "P106", "value": v, "value_label": v, "is_true": v == "journalist"}
                               for v in ("journalist", "baker", "pilot")])
    cache = SentenceNllCache(tmp_path / "cache.sqlite")
    first, report = score_canaries(smollm2, canaries, candidates, ShardStore(tmp_path / "a"), sentence_cache=cache, log=lambda m: None)
    assert report.sentences_computed == 9 and len(cache) == 9
    rows = expand_canaries(canaries, candidates)
    stored = cache.get_many(list(rows["sentence_h"]))
    assert [stored[s] for s in rows["sentence_h"]] == pytest.approx(list(first["nll_h"]))
    second, report = score_canaries(smollm2, canaries, candidates, ShardStore(tmp_path / "b"), sentence_cache=cache, log=lambda m: None)
    assert report.sentences_computed == 0
    assert second["nll_h"].tolist() == first["nll_h"].tolist()


@pytest.mark.slow
def test_a_scoring_shard_logs_counts_rate_and_eta_while_it_runs(tmp_path, smollm2, monkeypatch):
    """Issue 17.6: the `scores` step says how far it is between shards (here every forward)."""
    import dataclasses
    import re

    import pandas as pd

    from wikimem_platform.wikimem import scoring
    from wikimem_platform.wikimem.scoring import ShardStore, score_canaries

    monkeypatch.setattr(scoring, "LOG_EVERY_SECONDS", 0.0)
    canaries = pd.DataFrame([{"subject_qid": "Q1", "property": "P106", "variant_id": 0, "kind": "baseline",
                              "template": "{subject}'s occupation is {value}.", "subject": "Ilse Marwitz",
                              "subject_generic": "This person", "subject_similar": ["Esli Marwitz"]}])
    values = [f"occupation number {i}" for i in range(150)]
    candidates = pd.DataFrame([{"subject_qid": "Q1", "property": "P106", "value": v, "value_label": v, "is_true": i == 0}
                               for i, v in enumerate(values)])
    lines: list[str] = []
    small_batches = dataclasses.replace(smollm2, batch_size=8)  # 256 tree nodes per forward: several forwards
    score_canaries(small_batches, canaries, candidates, ShardStore(tmp_path / "a"), log=lines.append)
    progress = [line for line in lines if re.fullmatch(r"shard 1/1 P106: [\d,]+/450 sentences, [\d.]+/s, ETA \d+ s", line)]
    assert len(progress) >= 2, lines  # during the shard, not only at its end
    done = [int(re.match(r"shard 1/1 P106: ([\d,]+)/", line).group(1).replace(",", "")) for line in progress]
    assert done == sorted(done) and done[-1] == 450
