"""The fast dump reader (one pass, typed partial decoding, workers) against the reference full parse.

Real entities: the bundled sample, the planted sample and the parser fixtures of tests/data;
adversarial lines built from a real human of the sample (Q5 where only the full parse can tell).
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.unit.wikidata.test_extract import human, real_entities, value_entity, write_dump
from wikimem_platform.reference import bundled
from wikimem_platform.wikidata.dump_reader import (
    _CLAIMED,
    _Helpers,
    _SharedWork,
    _TAKEN_BACK,
    BlockResult,
    HUMAN_HINT,
    parse_block,
)
from wikimem_platform.wikidata.extract import is_human, load_property_metadata, MalformedDumpError, read_dump

FRAMES = ("humans", "claims", "value_aliases", "properties", "terms")
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
    bzip2 = plain.with_name(plain.name + ".bz2")
    bzip2.write_bytes(bz2.compress(plain.read_bytes(), 1))
    assert_same_extract(reference, read_dump(bzip2, workers=2, block_bytes=SMALL_BLOCK))  # indexed_bzip2 threads


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


@pytest.mark.parametrize("suffix", [".json", ".json.gz", ".json.bz2"])
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


def test_property_table_takes_the_dump_property_entities_over_the_side_file(tmp_path):
    """The planted sample with a P106 entity appended: the property table's P106 row comes from the
    dump (a changed label), the other properties from the side file; metadata counts both."""
    from dagster import AssetKey, DagsterInstance, materialize

    from assets import data as data_assets
    from resources import ParquetIOManager

    metadata = load_property_metadata(bundled.SAMPLE_PROPERTIES).set_index("property", drop=False)
    p106 = {**metadata.loc["P106"].to_dict(), "label": "occupation (from the dump)"}
    lines = plain_copy(bundled.PLANTED_DUMP, tmp_path).read_text().rstrip().removesuffix("]").rstrip().rstrip(",")
    path = tmp_path / "with-properties.json"
    path.write_text(lines + ",\n" + property_entity(p106) + "\n]\n")
    with DagsterInstance.ephemeral() as instance:
        result = materialize(
            [data_assets.wikidata_extract, data_assets.property_table], instance=instance,
            resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path / "parquet"))},
            run_config={"ops": {"wikidata_extract": {"config": {"dump_path": str(path), "web_presence_path": None}},
                                "property_table": {"config": {"min_humans": 1}}}},
        )
    table = result.asset_value("property_table").set_index("property")
    assert set(table.index) == {"P106", "P108", "P19", "P27"}
    assert table.loc["P106", "label"] == "occupation (from the dump)"
    assert table.loc["P19", "label"] == metadata.loc["P19", "label"]
    assert len(result.asset_value("dump_properties")) == 1
    [event] = [m for m in result.get_asset_materialization_events() if m.asset_key == AssetKey("property_table")]
    assert (event.materialization.metadata["metadata_from_dump"].value,
            event.materialization.metadata["metadata_from_side_file"].value) == (1, 3)


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
    damaged = tmp_path / "damaged.json.gz"  # one flipped bit of the CRC
    compressed = bytearray(gzip.compress(body))
    compressed[-8] ^= 1
    damaged.write_bytes(bytes(compressed))
    with pytest.raises(gzip.BadGzipFile, match="CRC check failed"):
        read_dump(damaged, mode="full")
    with pytest.raises(gzip.BadGzipFile, match=r"damaged\.json\.gz: .*checksum"):
        read_dump(damaged)


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


# --------------------------------------------------------------------------- chunks as steps


def test_plain_dump_is_cut_at_line_starts_and_chunks_assemble_to_the_full_parse(tmp_path):
    from wikimem_platform.wikidata.dump_reader import plan_chunks
    from wikimem_platform.wikidata.extract import assemble_chunks

    plain = plain_copy(bundled.PLANTED_DUMP, tmp_path)
    data = plain.read_bytes()
    chunks = plan_chunks(plain, len(data) // 4)
    assert len(chunks) >= 3
    assert chunks[0].start == 0 and chunks[-1].end == len(data)
    assert all(a.end == b.start and data[b.start - 1:b.start] == b"\n" for a, b in zip(chunks, chunks[1:]))
    reference = read_dump(plain, mode="full")
    assert_same_extract(reference, assemble_chunks(read_chunks(chunks, tmp_path, block_bytes=2048), plain))
    assert_same_extract(reference, assemble_chunks(read_chunks(chunks[:2], tmp_path / "two", workers=2, block_bytes=1024)
                                                   + read_chunks(chunks[2:], tmp_path / "rest"), plain))
    assert [(c.start, c.end) for c in plan_chunks(bundled.PLANTED_DUMP, 100)] == [(0, None)]  # .gz: one chunk
    with pytest.raises(ValueError, match="chunk_bytes must be >= 1, got 0"):
        plan_chunks(plain, 0)


def one_bad_chunk_dump(tmp_path: Path, suffix: str = ".json") -> tuple[Path, list]:
    """The corrupted lines all near the top: the first of five chunks is far over the threshold that
    the dump as a whole is at. ``.json.bz2``: 25 bzip2 streams (as pbzip2 writes them), so that
    there are blocks to cut at (~100 kB of text is one block at any level)."""
    from tests.unit.wikidata.test_bzip2_blocks import write_bz2_streams

    lines, broken_at = corrupted_dump_lines()
    broken = [lines[number - 2] for number in broken_at]
    good = [line for line in lines if line not in broken]
    plain = write_dump(tmp_path / "one-bad-chunk.json", good[:20] + broken + good[20:])
    if suffix == ".json.bz2":
        return write_bz2_streams(tmp_path / "one-bad-chunk.json.bz2", plain.read_bytes(), streams=25), broken
    return plain, broken


def read_chunks(chunks, tmp_path: Path, **options) -> list:
    """Each chunk read into its own parts directory, as the chunk steps do."""
    from wikimem_platform.wikidata.dump_reader import read_chunk

    spilled = []
    for chunk in chunks:
        (tmp_path / f"chunk_{chunk.index}").mkdir(parents=True)
        spilled.append(read_chunk(chunk, tmp_path / f"chunk_{chunk.index}", **options))
    return spilled


@pytest.mark.parametrize("suffix", [".json", ".json.bz2"])
def test_one_corrupted_chunk_fails_only_if_the_whole_dump_crosses_the_threshold(tmp_path, suffix):
    from wikimem_platform.wikidata.dump_reader import plan_chunks
    from wikimem_platform.wikidata.extract import assemble_chunks

    path, _ = one_bad_chunk_dump(tmp_path, suffix)
    reference = read_dump(path, mode="full", max_malformed_share=0.05)
    assert reference.stats.malformed == 5
    share = reference.stats.malformed_share  # 5 of 306 lines
    chunks = plan_chunks(path, path.stat().st_size // 5 + 1)
    spilled = read_chunks(chunks, tmp_path, block_bytes=1024)
    first = spilled[0].stats
    assert len(chunks) == 5 and first.malformed == 5 and first.malformed_share > 3 * share  # the one bad chunk
    assert_same_extract(reference, assemble_chunks(spilled, path, max_malformed_share=share))  # same line numbers
    with pytest.raises(MalformedDumpError) as full_error:
        read_dump(path, mode="full", max_malformed_share=share * 0.99)
    with pytest.raises(MalformedDumpError) as chunked_error:
        assemble_chunks(spilled, path, max_malformed_share=share * 0.99)
    assert str(chunked_error.value) == str(full_error.value)


def extract_job():
    """The extract alone as a job (module level, so that a multiprocess run can rebuild it)."""
    from dagster import Definitions, define_asset_job

    from assets import data as data_assets
    from resources import ParquetIOManager

    defs = Definitions(assets=[data_assets.wikidata_extract], resources={"io_manager": ParquetIOManager()},
                       jobs=[define_asset_job("extract", selection="*")])
    return defs.resolve_job_def("extract")


def extract_run_config(dump: Path, chunk_bytes: int, executor: str = "in_process", **config) -> dict:
    return {"ops": {"wikidata_extract": {"config": {"dump_path": str(dump), "chunk_bytes": chunk_bytes,
                                                    "web_presence_path": None, **config}}},
            "execution": {"config": {executor: {}}}}


def step_keys(result, event_type: str) -> set[str]:
    return {event.step_key for event in result.all_events if event.event_type_value == event_type}


def assert_stored_extract(instance, reference) -> None:
    stored = Path(instance.storage_directory()) / "parquet"
    for name in ("claims", "value_aliases"):
        pd.testing.assert_frame_equal(pd.read_parquet(stored / f"{name}.parquet"), getattr(reference, name), obj=name)
    assert list(pd.read_parquet(stored / "humans.parquet")["qid"]) == list(reference.humans["qid"])


def test_extract_fans_out_over_chunk_steps_and_resumes(tmp_path):
    """A plain dump in four chunks, one step each: the frames of the library's full parse; a run that
    fails in the merging step is re-executed from failure without reading the chunks again."""
    from dagster import DagsterInstance, ReexecutionOptions, execute_job, reconstructable

    plain = plain_copy(bundled.PLANTED_DUMP, tmp_path)
    reference = read_dump(plain, mode="full")
    web_presence = tmp_path / "web_presence.csv"  # missing at first: the merging step fails
    config = extract_run_config(plain, plain.stat().st_size // 4, web_presence_path=str(web_presence))
    (tmp_path / "home").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "home")) as instance:
        job = reconstructable(extract_job)
        failed = execute_job(job, instance, run_config=config)
        assert not failed.success
        parsed = {key for key in step_keys(failed, "STEP_SUCCESS") if key.startswith("wikidata_extract.parse_dump_chunk[")}
        assert len(parsed) >= 4 and step_keys(failed, "STEP_FAILURE") == {"wikidata_extract.collect_dump_chunks"}

        shutil.copy(bundled.PLANTED_WEB_PRESENCE, web_presence)
        resumed = execute_job(job, instance, reexecution_options=ReexecutionOptions.from_failure(failed.run_id, instance))
        assert resumed.success
        assert step_keys(resumed, "STEP_SUCCESS") == {"wikidata_extract.collect_dump_chunks"}  # chunks reused
        assert_stored_extract(instance, reference)
        assert not (Path(instance.storage_directory()) / "wikidata_extract" / failed.run_id).exists()  # parts removed


@pytest.mark.slow  # Dagster end to end: a job on the multiprocess executor, one Python process a step
def test_extract_chunk_steps_run_in_separate_processes(tmp_path):
    """The multiprocess executor: each chunk step in its own process, the parts found by the merging
    step through the instance storage."""
    from dagster import DagsterInstance, execute_job, reconstructable

    plain = plain_copy(bundled.PLANTED_DUMP, tmp_path)
    config = extract_run_config(plain, plain.stat().st_size // 3, "multiprocess")
    (tmp_path / "home").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "home")) as instance:
        result = execute_job(reconstructable(extract_job), instance, run_config=config)
        assert result.success
        assert len({key for key in step_keys(result, "STEP_SUCCESS") if "parse_dump_chunk[" in key}) >= 3
        assert_stored_extract(instance, read_dump(plain, mode="full"))


@pytest.mark.parametrize("suffix", [".json", ".json.bz2"])
def test_extract_steps_count_malformed_lines_across_chunks(tmp_path, suffix):
    """One corrupted chunk among five, through Dagster: counted over the whole dump, and the run
    fails in the merging step only when the dump as a whole crosses the threshold."""
    from dagster import AssetKey, DagsterInstance, materialize

    from assets import data as data_assets
    from resources import ParquetIOManager

    path, _ = one_bad_chunk_dump(tmp_path, suffix)
    share = read_dump(path, mode="full", max_malformed_share=0.05).stats.malformed_share
    resources = {"io_manager": ParquetIOManager(base_dir=str(tmp_path / "parquet"))}
    with DagsterInstance.ephemeral() as instance:
        run_config = extract_run_config(path, path.stat().st_size // 5 + 1, max_malformed_share=share)
        passed = materialize([data_assets.wikidata_extract], instance=instance, resources=resources, run_config=run_config)
        [event] = [m for m in passed.get_asset_materialization_events() if m.asset_key == AssetKey("humans")]
        metadata = event.materialization.metadata
        assert (metadata["chunks"].value, metadata["malformed_lines_skipped"].value, metadata["lines_read"].value) == (5, 5, 306)

        run_config["ops"]["wikidata_extract"]["config"]["max_malformed_share"] = share * 0.99
        failed = materialize([data_assets.wikidata_extract], instance=instance, resources=resources,
                             run_config=run_config, raise_on_error=False)
        assert not failed.success
        [failure] = failed.get_step_failure_events()
        assert failure.step_key == "wikidata_extract.collect_dump_chunks"
        cause = failure.event_specific_data.error.cause
        assert cause.cls_name == "MalformedDumpError" and "5 of 306 lines" in cause.message


def _claimed(helpers: _Helpers, ticket: int, timeout: float = 30.0) -> bool:
    """Wait until a helper has started the task (a spawned helper takes a moment to come up)."""
    deadline = time.monotonic() + timeout
    while helpers.claims[ticket] != _CLAIMED:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_shared_work_keeps_file_order_and_takes_back_blocks_no_helper_started():
    """Results leave in the order the blocks came, whoever parsed them; at the end a block still
    queued for the helper is parsed here instead, one the helper has started is waited for.
    A real helper process; its tasks are standard-library calls (`time.sleep` answers None)."""
    helpers = _Helpers(count=1, tickets=2)
    try:
        work = _SharedWork(helpers, tickets=2)
        running = work.take_ticket()
        helpers.send(running, time.sleep, 0.5)
        work.add(running, lambda: BlockResult(lines=-1))
        work.add_here(BlockResult(lines=2))
        queued = work.take_ticket()
        helpers.send(queued, time.sleep, 0)
        work.add(queued, lambda: BlockResult(lines=3))
        assert work.take_ticket() is None  # both tickets out: the next block is parsed here
        assert _claimed(helpers, running)
        assert list(work.ready()) == []  # the head is still running
        first, *rest = work.drain()
        assert first is None  # the helper's own answer, waited for, not parsed here (-1)
        assert [result.lines for result in rest] == [2, 3]  # the queued block was taken back
        assert helpers.claims[queued] == _TAKEN_BACK
    finally:
        helpers.close()
    assert not any(process.is_alive() for process in helpers.processes)


def test_a_failing_helper_task_raises_with_its_traceback():
    helpers = _Helpers(count=1, tickets=1)
    try:
        helpers.send(0, int, "not a number")
        with pytest.raises(RuntimeError, match="(?s)helper process failed.*ValueError: invalid literal"):
            helpers.answer(0)
    finally:
        helpers.close()


def test_a_helper_that_dies_is_reported():
    helpers = _Helpers(count=1, tickets=1)
    try:
        helpers.send(0, os._exit, 3)
        with pytest.raises(RuntimeError, match="helper process died .exit code 3"):
            helpers.answer(0)
    finally:
        helpers.close()
