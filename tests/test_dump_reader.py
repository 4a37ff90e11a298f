"""The fast dump reader (one pass, typed partial decoding, workers) against the reference full parse.

Real entities: the bundled sample, the planted sample and the parser fixtures of tests/data;
adversarial lines built from a real human of the sample (Q5 where only the full parse can tell).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.test_wikidata import human, real_entities, value_entity, write_dump
from wikimem_platform import bundled
from wikimem_platform.dump_reader import HUMAN_HINT, parse_block
from wikimem_platform.wikidata import MalformedDumpError, is_human, load_property_metadata, read_dump

FRAMES = ("humans", "claims", "value_aliases", "properties")
HOW_READ = ("label_passes", "workers")  # how the extract was read, not what it holds
SMALL_BLOCK = 64 << 10  # many blocks, so that the workers get several each


def assert_same_extract(reference, other) -> None:
    for name in FRAMES:
        pd.testing.assert_frame_equal(getattr(reference, name), getattr(other, name), obj=name)
    expected = {k: v for k, v in reference.stats.as_dict().items() if k not in HOW_READ}
    assert {k: v for k, v in other.stats.as_dict().items() if k not in HOW_READ} == expected


def plain_copy(path: Path, tmp_path: Path) -> Path:
    """The dump uncompressed, so that workers read byte ranges of it themselves."""
    target = tmp_path / (path.name.removesuffix(".gz") if path.suffix == ".gz" else path.name)
    with gzip.open(path, "rb") as source, open(target, "wb") as out:
        shutil.copyfileobj(source, out)
    return target


@pytest.fixture(scope="module")
def fixtures_dump(tmp_path_factory) -> Path:
    """The parser fixtures (Q42, Oliver Kahn in the old format, 10 non-humans) and their values."""
    values = [value_entity("Q6625963", "novelist"), value_entity("Q214917", "playwright"), value_entity("Q350", "Cambridge")]
    lines = [json.dumps(e, ensure_ascii=False) for e in real_entities()] + values
    return write_dump(tmp_path_factory.mktemp("fixtures") / "fixtures.json.gz", lines)


@pytest.mark.parametrize("source", ["sample", "planted", "fixtures"])
def test_fast_reader_gives_the_full_parse_extract(source, fixtures_dump, tmp_path):
    path = {"sample": bundled.SAMPLE_DUMP, "planted": bundled.PLANTED_DUMP, "fixtures": fixtures_dump}[source]
    reference = read_dump(path, mode="full")
    assert len(reference.humans) and len(reference.claims)
    assert_same_extract(reference, read_dump(path))  # one process, compressed stream
    assert_same_extract(reference, read_dump(path, workers=2, block_bytes=SMALL_BLOCK))  # stream fed to workers
    plain = plain_copy(path, tmp_path)
    assert_same_extract(reference, read_dump(plain, workers=2, block_bytes=SMALL_BLOCK))  # byte ranges


def q5_value(**value) -> dict:
    return {"type": "statement", "rank": "normal",
            "mainsnak": {"snaktype": "value", "property": "P31", "datatype": "wikibase-item",
                         "datavalue": {"type": "wikibase-entityid", "value": value}}}


def entity(qid: str, label: str, claims: dict, **extra) -> dict:
    return {"type": "item", "id": qid, "labels": {"en": {"language": "en", "value": label}}, "claims": claims, **extra}


def adversarial_lines() -> dict[str, tuple[str, bool]]:
    """Lines the byte test alone would misjudge, with whether the full parse keeps them as humans."""
    person = {"mainsnak": {"snaktype": "value", "property": "P31", "datavalue": {
        "type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 215627, "id": "Q215627"}}},
        "type": "statement", "rank": "normal"}
    with_q5_qualifier = {**person, "qualifiers": {"P642": [{"snaktype": "value", "property": "P642", "datavalue": {
        "type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 5, "id": "Q5"}}}]}}
    with_q5_reference = {**person, "references": [{"snaks": {"P248": [{"snaktype": "value", "property": "P248",
                         "datavalue": {"type": "wikibase-entityid", "value": {"entity-type": "item", "id": "Q5"}}}]}}]}
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    escaped = json.dumps(entity("Q9001", "Escaped Human", {"P31": [q5_value(id="Q5")]}), **compact)
    escaped = escaped.replace('"id":"Q5"', '"id":"\\u0051\\u0035"')
    return {
        "escaped id": (escaped, True),
        "numeric-id only": (json.dumps(entity("Q9002", "Old Format", {"P31": [q5_value(**{"entity-type": "item", "numeric-id": 5})]}), **compact), True),
        "numeric-id as text": (json.dumps(entity("Q9003", "Text Id", {"P31": [q5_value(**{"numeric-id": "5"})]}), **compact), True),
        "spaced json": (json.dumps(entity("Q9004", "Spaced Human", {"P31": [q5_value(id="Q5")]}), ensure_ascii=True), True),
        "ascii escapes": (json.dumps(entity("Q9005", "José Saramago", {"P31": [q5_value(id="Q5")]}), ensure_ascii=True), True),
        "Q5 in a qualifier": (json.dumps(entity("Q9101", "Qualified", {"P31": [with_q5_qualifier]}), **compact), False),
        "Q5 in a reference": (json.dumps(entity("Q9102", "Referenced", {"P31": [with_q5_reference]}), **compact), False),
        "Q5 in a label": (json.dumps(entity("Q9103", 'Item "id":"Q5"', {"P31": [person]}), **compact), False),
        "Q5 in another property": (json.dumps(entity("Q9104", "Subclass", {"P279": [q5_value(id="Q5")]}), **compact), False),
        "Q5 as a P31 string": (json.dumps(entity("Q9105", "String", {"P31": [{"mainsnak": {"snaktype": "value", "property": "P31", "datavalue": {"type": "string", "value": "Q5"}}, "rank": "normal"}]}), **compact), False),
        "Q5 the item itself": (json.dumps(entity("Q5", "human", {"P279": [person]}), **compact), False),
    }


def test_the_byte_route_never_decides_alone():
    """Every adversarial line is kept or dropped exactly as the full parse does it, whichever decoder
    its bytes route it to; lines that fool the byte test in both directions are among them."""
    cases = adversarial_lines()
    routed_to_human_decoder = {name for name, (line, _) in cases.items() if HUMAN_HINT in line.encode()}
    assert {"Q5 in a qualifier", "Q5 in a reference", "Q5 in another property", "Q5 the item itself"} <= routed_to_human_decoder
    # A label cannot hold the hint's bytes (its quotes are escaped); these humans lack them too.
    assert {"Q5 in a label", "escaped id", "numeric-id only", "numeric-id as text", "spaced json"}.isdisjoint(
        routed_to_human_decoder)
    for name, (line, expected) in cases.items():
        assert is_human(json.loads(line)) is expected, name  # the reference agrees with the case
        humans = parse_block(line.encode() + b"\n").rows["humans"]  # columns: qid first
        kept = set(humans[0]) if humans else set()
        assert (json.loads(line)["id"] in kept) is expected, name


def test_adversarial_dump_reads_the_same_in_every_mode(tmp_path):
    lines = [line for line, _ in adversarial_lines().values()]
    reference = read_dump(write_dump(tmp_path / "adv.json", lines), mode="full")
    assert set(reference.humans["qid"]) == {"Q9001", "Q9002", "Q9003", "Q9004", "Q9005"}
    for path in (tmp_path / "adv.json", write_dump(tmp_path / "adv.json.gz", lines)):
        assert_same_extract(reference, read_dump(path, workers=2, block_bytes=512))
        assert_same_extract(reference, read_dump(path))


def corrupted_dump_lines() -> tuple[list[str], list[int]]:
    """300 humans with broken lines spread over the file, so that several blocks hold some; and the
    file line numbers of the broken ones ("[" is line 1)."""
    good = [human(f"Q{i}", {"en": f"Person {i}"}) for i in range(1, 301)]
    broken = {
        10: good[9][: len(good[9]) // 2],  # truncated
        120: '{"type": "item", "id": "Q9", bad json}',
        200: '"just a string"',
        250: '{"type": "item", "labels": {}}',  # no id
        290: '{"type": "item", "id": "Q8", "x": "\\ud800", "y": [1, }',  # lone surrogate, then broken
    }
    lines = list(good)
    for position, line in sorted(broken.items(), reverse=True):
        lines.insert(position, line)
    nan_line = '{"type": "item", "id": "Q7", "x": NaN}'  # not strict JSON, but json.loads reads it
    lines.append(nan_line)
    return lines, [i + 2 for i, line in enumerate(lines) if line in broken.values()]


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_malformed_lines_are_counted_alike_in_parallel_blocks(tmp_path, suffix):
    lines, broken_at = corrupted_dump_lines()
    path = write_dump(tmp_path / f"broken{suffix}", lines)
    reference = read_dump(path, mode="full", max_malformed_share=0.05)
    assert reference.stats.malformed == 5 and reference.stats.entities == 301
    assert [e.split(":")[0] for e in reference.stats.malformed_examples] == [f"line {n}" for n in broken_at]
    for workers in (1, 2):
        assert_same_extract(reference, read_dump(path, workers=workers, block_bytes=2048, max_malformed_share=0.05))

    share = reference.stats.malformed_share  # 5 / 306
    with pytest.raises(MalformedDumpError) as full_error:
        read_dump(path, mode="full", max_malformed_share=share * 0.99)
    for workers in (1, 2):
        with pytest.raises(MalformedDumpError) as fast_error:
            read_dump(path, workers=workers, block_bytes=2048, max_malformed_share=share * 0.99)
        assert str(fast_error.value) == str(full_error.value)
    read_dump(path, workers=2, block_bytes=2048, max_malformed_share=share)  # at the threshold: passes


def test_value_aliases_keep_english_aliases_of_cited_values():
    """Elizabeth II's spouse (P26) is a human of the sample with English aliases of his own."""
    extract = read_dump(bundled.SAMPLE_DUMP)
    aliases = extract.value_aliases.set_index("value")["aliases"]
    spouses = extract.claims[(extract.claims["qid"] == "Q9682") & (extract.claims["property"] == "P26")]
    assert spouses["value"].tolist() == ["Q80976"]
    philip = extract.humans.set_index("qid").loc["Q80976", "aliases"]
    assert philip and aliases["Q80976"] == philip
    assert "Barack Hussein Obama II" in aliases["Q76"]
    cited = set(extract.claims.loc[extract.claims["datatype"] == "wikibase-item", "value"])
    assert set(aliases.index) <= cited  # only values of kept claims
    assert extract.value_aliases["value"].str[1:].astype(int).is_monotonic_increasing
    assert extract.value_aliases["aliases"].map(len).gt(0).all()


def property_entity(record: dict) -> str:
    """A property entity in the dump format, from the bundled (real) property metadata."""
    terms = {"labels": {"en": {"language": "en", "value": record["label"]}},
             "descriptions": {"en": {"language": "en", "value": record["description"]}} if record["description"] else {},
             "aliases": {"en": [{"language": "en", "value": a} for a in record["aliases"]]} if record["aliases"] else {}}
    return json.dumps({"type": "property", "datatype": record["datatype"], "id": record["property"], **terms,
                       "claims": {}}, ensure_ascii=False)


def test_property_entities_of_a_dump_give_the_property_metadata(tmp_path):
    metadata = load_property_metadata(bundled.SAMPLE_PROPERTIES).set_index("property", drop=False)
    chosen = metadata.loc[["P19", "P26", "P106", "P569"]]
    lines = [property_entity(r) for r in chosen.to_dict("records")] + [human("Q1", {"en": "Ada Lovelace"})]
    path = write_dump(tmp_path / "props.json.gz", lines)
    for extract in (read_dump(path), read_dump(path, mode="full")):
        assert extract.stats.properties == 4
        expected = chosen[["property", "label", "description", "aliases", "datatype"]].reset_index(drop=True)
        pd.testing.assert_frame_equal(extract.properties, expected.astype(extract.properties.dtypes.to_dict()))


def test_deprecated_statements_are_not_claims(tmp_path):
    def occupation(qid: str, rank: str) -> dict:
        return {"mainsnak": {"snaktype": "value", "property": "P106", "datatype": "wikibase-item",
                             "datavalue": {"type": "wikibase-entityid", "value": {"entity-type": "item", "id": qid}}},
                "type": "statement", "rank": rank}

    lines = [human("Q1", {"en": "Ada"}, {"P106": [occupation("Q10", "deprecated"), occupation("Q11", "preferred")]}),
             value_entity("Q10", "forger"), value_entity("Q11", "mathematician")]
    path = write_dump(tmp_path / "ranks.json", lines)
    for extract in (read_dump(path), read_dump(path, mode="full")):
        assert extract.claims[extract.claims["property"] == "P106"]["value_label"].tolist() == ["mathematician"]


def test_gzip_members_and_truncation_read_as_the_gzip_module_reads_them(tmp_path):
    lines = [human(f"Q{i}", {"en": f"Person {i}"}) for i in range(1, 41)]
    body = ("[\n" + ",\n".join(lines) + "\n]\n").encode()
    members = tmp_path / "members.json.gz"  # two gzip members, as concatenated files give
    members.write_bytes(gzip.compress(body[:1000]) + gzip.compress(body[1000:]))
    assert_same_extract(read_dump(members, mode="full"), read_dump(members, workers=2, block_bytes=512))
    truncated = tmp_path / "truncated.json.gz"
    truncated.write_bytes(gzip.compress(body)[:-200])
    for mode in ("full", "fast"):
        with pytest.raises(EOFError, match="ended before the end-of-stream marker"):
            read_dump(truncated, mode=mode)


def test_bad_reader_settings_are_clear_errors(tmp_path):
    path = write_dump(tmp_path / "d.json", [human("Q1", {"en": "A"})])
    with pytest.raises(ValueError, match=r"mode must be one of \('fast', 'full'\), got 'quick'"):
        read_dump(path, mode="quick")
    with pytest.raises(ValueError, match="workers must be >= 1, got 0"):
        read_dump(path, workers=0)
    with pytest.raises(ValueError, match="mode='full' reads in one process"):
        read_dump(path, mode="full", workers=2)
    with pytest.raises(FileNotFoundError, match="dump not found"):
        read_dump(tmp_path / "nope.json", workers=2)


def test_extract_asset_fans_out_over_workers(tmp_path):
    """The multi-asset with `workers: 2` on the planted sample: same frames as the library's full
    parse, the third output `value_aliases` stored like the others."""
    from dagster import AssetKey, DagsterInstance, materialize

    from assets import data as data_assets
    from resources import ParquetIOManager

    with DagsterInstance.ephemeral() as instance:
        result = materialize(
            [data_assets.wikidata_extract], instance=instance,
            resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
            run_config={"ops": {"wikidata_extract": {"config": {
                "dump_path": str(bundled.PLANTED_DUMP), "web_presence_path": None, "workers": 2}}}},
        )
        assert result.success
        reference = read_dump(bundled.PLANTED_DUMP, mode="full")
        pd.testing.assert_frame_equal(result.asset_value("claims"), reference.claims)
        pd.testing.assert_frame_equal(result.asset_value("value_aliases"), reference.value_aliases)
        [event] = [m for m in result.get_asset_materialization_events() if m.asset_key == AssetKey("humans")]
        assert event.materialization.metadata["workers"].value == 2
        [aliases] = [m for m in result.get_asset_materialization_events() if m.asset_key == AssetKey("value_aliases")]
        assert aliases.materialization.metadata["rows"].value == len(reference.value_aliases)
