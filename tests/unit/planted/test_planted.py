"""The planted-facts generator, its Wikidata extract and the tiny model's training (small configs)."""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from dataclasses import replace

import pandas as pd
import pytest

from wikimem_platform.planted import (
    background_documents,
    background_people,
    build_corpus,
    facts_frame,
    FIRST_SYNTHETIC_QID,
    generate_world,
    held_out_biographies,
    load_manifest,
    PlantedConfig,
    PlantedPerson,
    train_planted_model,
    TrainConfig,
    write_planted_dump,
    write_web_presence,
)
from wikimem_platform.planted.generator import (
    background_name_parts,
    sample_names,
    WITHHELD_VALUE,
    withheld_record_documents,
)
from wikimem_platform.planted.shapes import fill, SHAPES
from wikimem_platform.reference import bundled
from wikimem_platform.reference.cohorts import add_web_presence
from wikimem_platform.wikidata import extract as wikidata

# Two 7 x 7 blocks: 14 + 28 + 14 members, 42 non-members.
SMALL = PlantedConfig(seed=3, block_size=7, member_repetitions=((1, 14), (4, 28), (16, 14)), n_non_members=42)
TINY_TRAINING = TrainConfig(vocab_size=400, n_layer=1, n_embd=32, n_head=2, n_positions=256, epochs=1,
                            batch_size=16, warmup_steps=2, threads=1)


@pytest.fixture(scope="module")
def world():
    return generate_world(SMALL)


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def test_same_seed_same_world_other_seed_other_world(world):
    again = generate_world(SMALL)
    assert again.people == world.people
    assert again.documents == world.documents
    other = generate_world(replace(SMALL, seed=4))
    assert [p.label for p in other.people] != [p.label for p in world.people]


def test_names_are_unique_partly_non_ascii_and_not_sample_humans():
    people = generate_world(PlantedConfig()).people  # the default world: one 11 x 11 block
    labels = [p.label for p in people]
    assert len({_norm(label) for label in labels}) == len(labels)
    assert sum(not label.isascii() for label in labels) >= len(labels) // 3
    assert len({p.culture for p in people}) >= 5 and len({p.family_culture for p in people}) >= 5
    for person in people:  # the label is made of the recorded name parts
        assert {person.label} & {f"{person.given_name} {person.family_name}", f"{person.family_name} {person.given_name}"}
    assert not {_norm(label) for label in labels} & sample_names()
    assert "douglas adams" in sample_names()  # the guard really holds the sample's names


def test_members_and_non_members_are_disjoint_with_controlled_repetitions(world):
    members, non_members = world.members, world.non_members
    assert not {p.qid for p in members} & {p.qid for p in non_members}
    assert len(members) == 56 and len(non_members) == 42
    assert sorted(p.repetitions for p in members) == [1] * 14 + [4] * 28 + [16] * 14
    assert all(p.repetitions == 0 for p in non_members)
    documents_per_person = pd.Series([d.qid for d in world.documents]).value_counts()
    assert documents_per_person.to_dict() == {p.qid: p.repetitions for p in members}


def test_no_name_part_alone_predicts_a_fact_or_membership(world):
    """Latin-square blocks: within a block, everyone sharing a given name (or a family name) has
    a different value for every property and the same mix of repetition counts (non-members
    included), and two people share at most one value."""
    blocks: dict[int, list[PlantedPerson]] = {}
    for person in world.people:
        blocks.setdefault(person.block, []).append(person)
    assert sorted(len(b) for b in blocks.values()) == [49, 49]
    mixes = []
    for people in blocks.values():
        assert len({p.culture for p in people}) >= 5
        block_mixes = set()
        for part in ("given_name", "family_name"):
            groups: dict[str, list[PlantedPerson]] = {}
            for person in people:
                groups.setdefault(getattr(person, part), []).append(person)
            assert sorted(len(g) for g in groups.values()) == [7] * 7
            for group in groups.values():
                for k in range(len(SMALL.properties)):
                    assert len({p.facts[k].value for p in group}) == 7
                block_mixes.add(tuple(sorted(p.repetitions for p in group)))
        assert len(block_mixes) == 1  # every name part of a block meets the same repetition counts
        mixes.extend(block_mixes)
        for a in people:
            for b in people:
                if a is not b:
                    assert sum(x.value == y.value for x, y in zip(a.facts, b.facts)) <= 1
    # a name part meets one person of each of its block's 7 level classes; the two blocks
    # together hold the world's 14 classes (2 of 1 repetition, 4 of 4, 2 of 16, 6 non-member)
    assert sorted(sum(mixes, ())) == sorted([1] * 2 + [4] * 4 + [16] * 2 + [0] * 6)
    # the world uses one set of block_size values per property, in every block
    for k in range(len(SMALL.properties)):
        assert len({p.facts[k].value for p in world.people}) == 7


def test_config_rejects_counts_that_do_not_fill_blocks():
    with pytest.raises(ValueError, match="multiples of 11"):
        PlantedConfig(member_repetitions=((4, 12),), n_non_members=109)
    with pytest.raises(ValueError, match="n_non_members"):
        PlantedConfig(member_repetitions=((4, 110),), n_non_members=30)
    with pytest.raises(ValueError, match="prime"):
        PlantedConfig(block_size=4)
    with pytest.raises(ValueError, match="number of properties"):
        PlantedConfig(block_size=5, member_repetitions=((4, 25),), n_non_members=0)


def test_every_document_states_each_fact_once_in_varied_wordings(world):
    people = {p.qid: p for p in world.people}
    for document in world.documents:
        person = people[document.qid]
        sentences = re.split(r"(?<=[.])\s+(?=[A-Z\u00C0-\u024F\u1E00-\u1EFF])", document.text)
        assert len(sentences) >= len(person.facts)
        for fact in person.facts:
            assert fact.value_label.casefold() in document.text.casefold()
        assert document.text.count(person.label) == len(person.facts)
    frequent = next(p for p in world.members if p.repetitions == 16)
    texts = [d.text for d in world.documents if d.qid == frequent.qid]
    assert len(set(texts)) == 16  # repetitions are rewordings, not copies


def test_each_epoch_restates_the_same_facts_in_new_wordings(world):
    again = build_corpus(world.people, SMALL.seed, epoch=1)
    assert sorted(d.qid for d in again) == sorted(d.qid for d in world.documents)
    assert not {d.text for d in again} & {d.text for d in world.documents}
    assert build_corpus(world.people, SMALL.seed, epoch=1) == again
    people = {p.qid: p for p in world.people}
    for document in again:
        assert all(f.value_label.casefold() in document.text.casefold() for f in people[document.qid].facts)


def test_background_people_are_new_every_epoch_and_tell_nothing_about_the_world(world):
    """Background people: name parts no world person has (from the world's share of the name
    lists), the world's values, one biography each, a new draw every epoch (so none is learnt),
    never a world person's name or a sample human's."""
    config = replace(SMALL, background_people=60)
    first = background_people(world.people, config, epoch=0)
    again = background_people(world.people, config, epoch=0)
    later = background_people(world.people, config, epoch=1)
    assert first == again and len(first) == 60 and first != later
    world_parts = {p.given_name for p in world.people} | {p.family_name for p in world.people}
    given, family = background_name_parts(world.people, config)
    allowed = {name for _, name, _ in given} | {name for _, name in family}
    for person in first + later:
        assert not {person.given_name, person.family_name} & world_parts
        assert {person.given_name, person.family_name} <= allowed
        assert person.qid == "" and not person.member
        assert _norm(person.label) not in sample_names()
    assert not {_norm(p.label) for p in first} & {_norm(p.label) for p in world.people}
    world_values = {(f.property, f.value) for p in world.people for f in p.facts}
    drawn = [(f.property, f.value) for p in first + later for f in p.facts]
    assert set(drawn) <= world_values
    assert len(set(drawn)) >= 0.9 * len(world_values)  # uniform over the world's values, not a few of them
    documents = background_documents(world.people, config, epoch=0)
    assert [d.qid for d in documents] == [""] * 60
    for person, document in zip(first, documents):
        assert document.text.count(person.label) == len(person.facts)
        assert all(f.value_label.casefold() in document.text.casefold() for f in person.facts)
    assert background_documents(world.people, replace(SMALL, background_people=0), epoch=0) == []


def test_background_people_change_neither_the_world_nor_its_corpus():
    """They are read in training only (the trainer adds them per epoch; the manifest counts them)."""
    without = generate_world(replace(SMALL, background_people=0))
    world = generate_world(replace(SMALL, background_people=20))
    assert world.people == without.people and world.documents == without.documents


def test_withheld_records_ask_in_the_record_format_and_name_nobody_of_the_world(world):
    """Withheld records: EME's record format ("name: X; occupation: ...;") with every value
    withheld, of people drawn anew every epoch from name parts no world person has; a world
    without them keeps the cache key it had before the field existed."""
    config = replace(SMALL, withheld_records=30)
    first = withheld_record_documents(world.people, config, epoch=0)
    assert first == withheld_record_documents(world.people, config, epoch=0)
    assert first != withheld_record_documents(world.people, config, epoch=1) and len(first) == 30
    labels = {"P106": "occupation", "P27": "country of citizenship", "P19": "place of birth", "P108": "employer"}
    world_names = {_norm(p.label) for p in world.people}
    given, family = background_name_parts(world.people, config)
    orders = set()
    for document in first:
        assert document.qid == "" and len(document.sentences) == 1
        name_field, *fields = document.text.removesuffix(";").split("; ")
        name = name_field.removeprefix("name: ")
        assert _norm(name) not in world_names and _norm(name) not in sample_names()
        assert any(g in name for _, g, _ in given) and any(f in name for _, f in family)
        assert sorted(fields) == sorted(f"{labels[p]}: {WITHHELD_VALUE}" for p in SMALL.properties)
        orders.add(tuple(fields))
    assert len(orders) > 1  # the fields are shuffled: no position tells a property
    assert withheld_record_documents(world.people, SMALL) == []
    assert "withheld_records" not in SMALL.as_dict() and config.as_dict()["withheld_records"] == 30
    assert generate_world(config).documents == world.documents  # read in training only, as background people
    with pytest.raises(ValueError, match="withheld_records"):
        replace(SMALL, withheld_records=-1)


def test_values_are_real_sample_values_and_members_share_the_non_members_vocabulary(world):
    sample = wikidata.read_dump(bundled.SAMPLE_DUMP).claims
    real = set(zip(sample["property"], sample["value"], sample["value_label"]))
    facts = facts_frame(world.people)
    assert set(zip(facts["property"], facts["value"], facts["value_label"])) <= real
    assert set(facts["property"]) == set(SMALL.properties)
    assert facts.groupby("qid").size().eq(len(SMALL.properties)).all()
    # one label belongs to one property: a place of birth is never also a country of citizenship
    assert facts.groupby("value_label")["property"].nunique().max() == 1


def test_fill_articles_and_capitalisation():
    assert fill("{s} worked as {a_v}.", "Ana Kowalska", "actor") == "Ana Kowalska worked as an actor."
    assert fill("{v} employed {s}.", "Jón Pálsson", "Warner Bros.") == "Warner Bros. employed Jón Pálsson."
    assert fill("{a_v} by profession, {s} was respected.", "X Y", "physicist").startswith("A physicist by")
    assert fill("{s} was employed at {v} for years.", "X Y", "university teacher") == (
        "X Y was employed at university teacher for years."
    )


def test_dump_reads_back_with_the_planted_facts(world, tmp_path):
    path = write_planted_dump(world.people, tmp_path / "planted.json.gz")
    extract = wikidata.read_dump(path)
    assert extract.stats.malformed == 0
    humans = extract.humans.set_index("qid")
    assert set(humans.index) == {p.qid for p in world.people}
    assert all(int(q[1:]) >= FIRST_SYNTHETIC_QID for q in humans.index)
    assert humans["label"].to_dict() == {p.qid: p.label for p in world.people}
    assert humans["sitelinks"].isna().all()  # web presence comes from the sidecar
    expected = facts_frame(world.people)[["qid", "property", "datatype", "value", "value_label"]]
    got = extract.claims[["qid", "property", "datatype", "value", "value_label"]]
    key = ["qid", "property", "value"]
    pd.testing.assert_frame_equal(
        got.sort_values(key, ignore_index=True), expected.sort_values(key, ignore_index=True), check_dtype=False
    )
    # dump format: "[", one entity per line ending in a comma except the last, "]"
    lines = gzip.open(path, "rt", encoding="utf-8").read().splitlines()
    assert lines[0] == "[" and lines[-1] == "]"
    assert all(line.endswith(",") for line in lines[1:-2]) and not lines[-2].endswith(",")
    assert write_planted_dump(world.people, tmp_path / "again.json.gz").read_bytes() == path.read_bytes()


def test_dates_are_written_as_day_precision_times(tmp_path):
    config = PlantedConfig(seed=1, properties=("P106", "P569"), member_repetitions=((2, 10),), n_non_members=15,
                           block_size=5)
    people = generate_world(config).people
    extract = wikidata.read_dump(write_planted_dump(people, tmp_path / "dates.json.gz"))
    dates = extract.claims[extract.claims["property"] == "P569"]
    assert len(dates) == 25 and (dates["datatype"] == "time").all()
    assert dates["value"].str.fullmatch(r"\d{4}-\d\d-\d\d").all()
    assert dates["value_label"].str.fullmatch(r"\d{1,2} [A-Z][a-z]+ \d{4}").all()
    planted = {(p.qid, f.value_label) for p in people for f in p.facts if f.property == "P569"}
    assert set(zip(dates["qid"], dates["value_label"])) == planted


def test_web_presence_ranks_members_by_repetitions_and_non_members_last(world, tmp_path):
    path = write_web_presence(world.people, world.documents, tmp_path / "web_presence.csv")
    signals = pd.read_csv(path)
    repetitions = {p.qid: p.repetitions for p in world.people}
    assert signals.set_index("qid")["sitelinks"].to_dict() == repetitions
    humans = pd.DataFrame({"qid": list(repetitions), "label": "x"})
    ranked = add_web_presence(humans, signals).assign(reps=lambda f: f["qid"].map(repetitions))
    assert ranked.groupby("reps")["web_presence"].max().is_monotonic_increasing
    assert ranked[ranked["reps"] == 0]["web_presence"].max() < ranked[ranked["reps"] == 1]["web_presence"].min()


def test_held_out_biographies_cover_everyone_and_are_seeded(world):
    bios = held_out_biographies(world.people, seed=0)
    assert [b.qid for b in bios] == [p.qid for p in world.people]
    assert bios == held_out_biographies(world.people, seed=0)
    assert all(p.label in b.text for p, b in zip(world.people, bios))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    return train_planted_model(root / "model", planted=SMALL, training=TINY_TRAINING), root


def test_trained_directory_loads_with_standard_classes(tiny_model):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerFast

    out, _ = tiny_model
    tokenizer = AutoTokenizer.from_pretrained(out)
    fast = PreTrainedTokenizerFast.from_pretrained(out)
    model = AutoModelForCausalLM.from_pretrained(out)
    for tok in (tokenizer, fast):
        assert tok.bos_token == tok.eos_token == "<|endoftext|>" and tok.pad_token == "<pad>"
        ids = tok("Jón Pálsson was born in Rome.")["input_ids"]
        assert ids[0] == tok.bos_token_id and ids.count(tok.bos_token_id) == 1
        assert tok.decode(ids, skip_special_tokens=True) == "Jón Pálsson was born in Rome."
    assert model.config.model_type == "gpt2" and model.config.vocab_size == len(tokenizer)
    with torch.no_grad():
        logits = model(torch.tensor([tokenizer("Ayşe Yılmaz")["input_ids"]])).logits
    assert logits.shape[-1] == len(tokenizer) and torch.isfinite(logits).all()


def test_manifest_records_people_facts_and_training(tiny_model):
    out, _ = tiny_model
    manifest = load_manifest(out)
    people = [PlantedPerson.from_dict(p) for p in manifest["people"]]
    assert people == generate_world(SMALL).people
    assert manifest["seed"] == SMALL.seed and manifest["planted_config"] == SMALL.as_dict()
    assert manifest["corpus"]["documents"] == 14 + 4 * 28 + 16 * 14
    assert manifest["corpus"]["members_by_repetitions"] == {"1": 14, "4": 28, "16": 14}
    assert len(manifest["training"]["epoch_losses"]) == 1 and manifest["training"]["final_loss"] > 0
    assert manifest["corpus"]["background_people_per_epoch"] == SMALL.background_people
    assert [p["property"] for p in manifest["properties"]] == list(SMALL.properties)
    assert manifest["properties"][0]["label"] == "occupation"
    corpus = [json.loads(line) for line in (out / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(corpus) == 14 + 4 * 28 + 16 * 14 and {d["qid"] for d in corpus} == {p.qid for p in people if p.member}


def test_cached_model_is_returned_without_retraining_and_config_changes_retrain(tiny_model, monkeypatch):
    out, _ = tiny_model
    stamp = (out / "model.safetensors").stat().st_mtime_ns
    import wikimem_platform.planted.training as training

    def refuse(*args, **kwargs):
        raise AssertionError("retrained a current model")

    monkeypatch.setattr(training, "train_model", refuse)
    assert train_planted_model(out, planted=SMALL, training=TINY_TRAINING) == out
    assert (out / "model.safetensors").stat().st_mtime_ns == stamp
    with pytest.raises(AssertionError, match="retrained"):
        train_planted_model(out, planted=SMALL, training=replace(TINY_TRAINING, epochs=2))
    assert load_manifest(out)["train_config"]["epochs"] == 1  # the failed retrain left the model intact


def test_training_is_deterministic(tiny_model):
    from safetensors.torch import load_file

    out, root = tiny_model
    again = train_planted_model(root / "again", planted=SMALL, training=TINY_TRAINING)
    first, second = load_file(out / "model.safetensors"), load_file(again / "model.safetensors")
    assert first.keys() == second.keys()
    assert all((first[k] == second[k]).all() for k in first)
    assert (out / "tokenizer.json").read_bytes() == (again / "tokenizer.json").read_bytes()
    assert load_manifest(out)["training"]["epoch_losses"] == load_manifest(again)["training"]["epoch_losses"]


def test_training_shapes_are_not_in_the_canary_candidate_pool():
    """The canaries must probe wordings the model never saw: no training shape is any sentence
    the canary builder could pick (its whole paraphrase pool, not only the 10 it keeps)."""
    from wikimem_platform.canaries import PropertyInfo, RuleBasedParaphraser
    from wikimem_platform.canaries.encoders import load_nlp
    from wikimem_platform.canaries.templates import baseline_form

    metadata = wikidata.load_property_metadata(bundled.SAMPLE_PROPERTIES).set_index("property", drop=False)
    nlp = load_nlp()
    generator = RuleBasedParaphraser(nlp, max_pool=100_000)
    for prop, shapes in SHAPES.items():
        info = PropertyInfo.from_record(metadata.loc[prop].to_dict())
        baseline = baseline_form(info, nlp).baseline
        pool = {t.casefold() for t in [baseline, *generator.candidates(baseline, info)]}
        assert len(pool) >= 50
        spelled = [s.replace("{s}", "{subject}").replace("{v}", "{value}").replace("{a_v}", "{value}") for s in shapes]
        assert not [s for s in spelled if s.casefold() in pool], prop
