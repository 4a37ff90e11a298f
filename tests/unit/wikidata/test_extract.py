"""Dump-parser tests on real dump-format entities (Q42, Oliver Kahn, opentapioca) and on
corrupted input."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import pytest

from wikimem_platform.wikidata.extract import MalformedDumpError, format_time, read_dump

DATA = Path(__file__).resolve().parents[2] / "data"


def real_entities() -> list[dict]:
    q42 = json.loads((DATA / "Q42.json").read_text())
    kahn = next(iter(json.loads((DATA / "oliver_kahn_wbgetentities.json").read_text())["entities"].values()))
    lines = (DATA / "opentapioca_10_nonhuman.json").read_text().splitlines()
    nonhumans = [json.loads(line.rstrip(",")) for line in lines if line not in ("[", "]")]
    return [q42, kahn, *nonhumans]


def write_dump(path: Path, lines: list[str]) -> Path:
    """Write raw entity lines in the dump layout: [, one per line with trailing commas, ]."""
    body = "[\n" + ",\n".join(lines) + "\n]\n"
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(body)
    elif path.suffix == ".bz2":
        with bz2.open(path, "wt", encoding="utf-8") as handle:
            handle.write(body)
    else:
        path.write_text(body, encoding="utf-8")
    return path


def value_entity(qid: str, label: str) -> str:
    return json.dumps({"type": "item", "id": qid, "labels": {"en": {"language": "en", "value": label}}, "claims": {}})


def human(qid: str, labels: dict[str, str], claims: dict | None = None) -> str:
    claims = dict(claims or {})
    claims["P31"] = [
        {"mainsnak": {"snaktype": "value", "property": "P31", "datatype": "wikibase-item",
                      "datavalue": {"type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 5, "id": "Q5"}}},
         "type": "statement", "rank": "normal"}
    ]
    return json.dumps({"type": "item", "id": qid, "labels": {k: {"language": k, "value": v} for k, v in labels.items()}, "claims": claims}, ensure_ascii=False)


@pytest.fixture(scope="module")
def real_dump(tmp_path_factory) -> Path:
    # Value labels are written AFTER the humans citing them, as in the real dump's id order.
    values = [value_entity("Q6625963", "novelist"), value_entity("Q214917", "playwright"), value_entity("Q350", "Cambridge"),
              value_entity("Q1028181", "painter"), value_entity("Q937857", "association football player")]
    lines = [json.dumps(e, ensure_ascii=False) for e in real_entities()] + values
    return write_dump(tmp_path_factory.mktemp("dump") / "real.json.gz", lines)


def test_real_entities_keep_only_humans_with_resolved_labels(real_dump):
    extract = read_dump(real_dump)
    assert list(extract.humans["qid"]) == ["Q42", "Q131261"]  # the 10 opentapioca items are not humans
    adams = extract.humans.set_index("qid").loc["Q42"]
    assert adams["label"] == "Douglas Adams"
    assert "Douglas Noël Adams" in adams["aliases"]
    assert adams["sitelinks"] == 107  # the real entity's sitelinks
    claims = extract.claims[extract.claims["qid"] == "Q42"]
    occupations = claims[claims["property"] == "P106"].set_index("value")["value_label"].to_dict()
    assert occupations["Q6625963"] == "novelist" and occupations["Q214917"] == "playwright"
    assert claims[claims["property"] == "P19"]["value_label"].tolist() == ["Cambridge"]
    birth = claims[claims["property"] == "P569"].iloc[0]
    assert (birth["datatype"], birth["value"], birth["value_label"]) == ("time", "1952-03-11", "11 March 1952")
    assert extract.stats.label_passes == 1  # labels came after the humans: spilled, resolved in one pass
    assert read_dump(real_dump, mode="full").stats.label_passes == 2  # the reference reads twice
    assert extract.stats.claims_unresolved_value > 0  # values without a label entity are dropped, counted
    assert extract.stats.malformed == 0


def test_old_format_numeric_ids_are_read(real_dump):
    """Oliver Kahn's wbgetentities answer has numeric-id only and no datatype on some snaks."""
    claims = read_dump(real_dump).claims
    kahn = claims[claims["qid"] == "Q131261"]
    assert kahn[kahn["property"] == "P106"]["value_label"].tolist() == ["association football player"]


@pytest.mark.parametrize("suffix", [".json", ".json.gz", ".json.bz2"])
def test_compressions_read_the_same(tmp_path, suffix):
    lines = [human("Q1", {"en": "Ada Lovelace"}), value_entity("Q2", "x")]
    extract = read_dump(write_dump(tmp_path / f"d{suffix}", lines))
    assert extract.humans["label"].tolist() == ["Ada Lovelace"]


def test_corrupted_lines_are_counted_and_skipped(tmp_path):
    good = [human(f"Q{i}", {"en": f"Person {i}"}) for i in range(1, 201)]
    broken = [
        good[0][: len(good[0]) // 2],  # truncated line
        '{"type": "item", "id": "Q9", bad json}',
        '"just a string"',
    ]
    unicode_human = human("Q500", {"en": "José Saramago", "ru": "Жозе Сарамаго"})
    no_english = human("Q501", {"fr": "Seulement Français"})
    path = write_dump(tmp_path / "d.json", good + broken + [unicode_human, no_english])
    extract = read_dump(path, max_malformed_share=0.02)
    stats = extract.stats
    assert stats.malformed == 3
    assert stats.lines == 205
    assert stats.humans_without_english_label == 1
    assert len(extract.humans) == 201
    assert "José Saramago" in set(extract.humans["label"])
    assert stats.malformed_examples[0].startswith("line ")


def test_malformed_share_over_threshold_fails_clearly(tmp_path):
    lines = [human("Q1", {"en": "A"}), "{not json", "{also not json"]
    with pytest.raises(MalformedDumpError, match=r"2 of 3 lines .* malformed \(66\.67% > allowed 1\.00%\)"):
        read_dump(write_dump(tmp_path / "d.json", lines))


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="dump not found"):
        read_dump(tmp_path / "nope.json.gz")


@pytest.mark.parametrize(
    "value, expected",
    [
        ({"time": "+1952-03-11T00:00:00Z", "precision": 11}, ("1952-03-11", "11 March 1952")),
        ({"time": "+1952-03-00T00:00:00Z", "precision": 10}, ("1952-03", "March 1952")),
        ({"time": "+1952-00-00T00:00:00Z", "precision": 9}, ("1952", "1952")),
        ({"time": "+1950-00-00T00:00:00Z", "precision": 8}, ("1950s", "1950s")),
        ({"time": "+1901-00-00T00:00:00Z", "precision": 7}, ("C20", "20th century")),
        ({"time": "-0044-03-15T00:00:00Z", "precision": 11}, ("-0044-03-15", "15 March 44 BC")),
    ],
)
def test_time_values_follow_precision(value, expected):
    assert format_time(value) == expected
