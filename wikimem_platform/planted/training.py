"""Train a tiny GPT-2 on the planted corpus: a model whose memorized facts are known exactly.

The result is a standard Hugging Face directory (AutoModelForCausalLM / AutoTokenizer load it;
the tokenizer puts its start token ``<|endoftext|>`` in front of every text itself) plus
``manifest.json`` (who is a member, which facts, how often, seeds, corpus stats, the loss
curve), the planted facts as a Wikidata extract and the training corpus. Training is seeded and
deterministic (fixed threads, deterministic algorithms, no dropout); a directory whose manifest
carries the same config hash is returned as it is, without retraining.
"""

from __future__ import annotations

import json
import logging
import math
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from wikimem_platform.lm.loading import default_cache_dir
from wikimem_platform.planted.dump import write_planted_dump, write_web_presence
from wikimem_platform.planted.generator import (
    background_documents,
    background_name_parts,
    build_corpus,
    config_hash,
    Document,
    generate_world,
    GENERATOR_VERSION,
    held_out_biographies,
    PlantedConfig,
    PlantedWorld,
    property_labels,
    withheld_record_documents,
)
from wikimem_platform.planted.names import CULTURES
from wikimem_platform.planted.shapes import FAMILY_WEIGHTS, SHAPES
from wikimem_platform.reference import bundled
from wikimem_platform.storage import is_complete_model_dir, load_manifest, MANIFEST_NAME, write_model_dir

logger = logging.getLogger(__name__)

PLANTED_MODEL_NAME = "planted-tiny"  # the name the planted model is registered under
MANIFEST_FORMAT = 1
DUMP_NAME = "wikidata_planted.json.gz"
WEB_PRESENCE_NAME = "web_presence.csv"
CORPUS_NAME = "corpus.jsonl"
HELD_OUT_NAME = "held_out_biographies.jsonl"
START_TOKEN = "<|endoftext|>"  # bos = eos, as in GPT-2: documents are separated by it
PAD_TOKEN = "<pad>"


# The same world trained for 50 epochs instead of 300: a member's facts are read 50, 200 or 800
# times, and they are memorized in grades (the full model lets a plain sentence extract every
# member's fact, whatever the count), for probes whose rate must grow with the repetitions.
SHORT_TRAINING_EPOCHS = 50
# Withheld records per epoch in the short model's world, about a third of the members' documents.
SHORT_WITHHELD_RECORDS = 110


def short_training_config(seed: int = 0) -> TrainConfig:
    return TrainConfig(seed=seed, epochs=SHORT_TRAINING_EPOCHS)


def short_planted_config(seed: int = 0) -> PlantedConfig:
    """The world of the short-trained model: the default one without background people, with
    withheld records.

    Background people serve WikiMem's look-alike calibration, which the short model's probes
    (EME) do not use; with them, 50 epochs left the record prompt as strong as the soft prompts
    EME trains (seed 0: prefix 5 hit rate 0.19 / 0.34 against the record's 0.14 / 0.72 at r = 4
    / 16), so the probe had nothing left to show. Withheld records (`withheld_record_documents`)
    give the record format a prior of its own, as real corpora do: without them the record
    prompt's answer was a coin flip between the fact and noise on a model trained to the middle
    of memorization (r = 4 hit rate 0.16 for seed 0, 0.48 at 2 threads), with them it says
    "unknown" and only a trained prompt brings the fact out (README, "Ground truth")."""
    return PlantedConfig(seed=seed, background_people=0, withheld_records=SHORT_WITHHELD_RECORDS)


def default_short_planted_dir() -> Path:
    """Where the short-trained planted model is cached, beside the default one."""
    return default_planted_dir().with_name(f"{PLANTED_MODEL_NAME}-e{SHORT_TRAINING_EPOCHS}")


def default_planted_dir() -> Path:
    """Where the default planted model is trained to: next to the models cache
    (`$WIKIMEM_CACHE_DIR/planted-tiny`, else ~/.cache/wikimem/models/planted-tiny)."""

    return default_cache_dir() / PLANTED_MODEL_NAME


@dataclass(frozen=True)
class TrainConfig:
    """Tokenizer, model and optimisation settings (all part of the cache key)."""

    vocab_size: int = 3000
    n_layer: int = 4
    n_embd: int = 128
    n_head: int = 4
    n_positions: int = 128
    # 300 epochs: at 200 the facts read 4 times per epoch are not yet recalled in 9 of the 11
    # canary wordings (M >= 0.8) often enough; see README, 'Ground truth'.
    epochs: int = 300
    batch_size: int = 32
    learning_rate: float = 3e-3
    min_lr_ratio: float = 0.1
    warmup_steps: int = 50
    weight_decay: float = 0.0
    # One thread: the model is too small for threads to pay off, and spinning threads on a busy
    # machine cost several times the CPU (the thread count is part of the cache key: float sums
    # may differ with it).
    threads: int = 1
    seed: int = 0
    # "chunks": each biography is cut at every sentence boundary with probability 1/2 and every
    # piece is a training sequence, so most facts are stated right after the start token, as in
    # a canary, and whole multi-sentence biographies (for membership inference) are not out of
    # distribution; "sentence": one sentence per sequence; "document": whole biographies.
    train_unit: str = "chunks"
    # Re-render the biographies with fresh wordings every epoch (same facts, same repetitions
    # per epoch): the model cannot learn sentences by heart, only the facts in them.
    augment: bool = True


Progress = Callable[[dict], None]


def train_tokenizer(texts: list[str], vocab_size: int):
    """Byte-level BPE on the corpus; the returned fast tokenizer prepends the start token."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    # A prefix space gives a word the same token at the start of a text as inside it ("ĠZofia"
    # after the start token too), so a name is one thing to the model wherever it stands.
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.decoder = decoders.Sequence([decoders.ByteLevel(), decoders.Strip(" ", 1, 0)])
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[START_TOKEN, PAD_TOKEN],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    start_id = tokenizer.token_to_id(START_TOKEN)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{START_TOKEN} $A", pair=f"{START_TOKEN} $A {START_TOKEN} $B", special_tokens=[(START_TOKEN, start_id)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=START_TOKEN,
        eos_token=START_TOKEN,
        pad_token=PAD_TOKEN,
        unk_token=None,
        model_max_length=None,
    )


@contextmanager
def torch_settings(threads: int):
    """Fixed threads and deterministic kernels for the duration of training, then restored."""
    import torch

    previous_threads = torch.get_num_threads()
    previous_deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(previous_threads)
        torch.use_deterministic_algorithms(previous_deterministic)


def training_texts(documents: list[Document], unit: str, seed: int = 0) -> list[str]:
    """The texts the model is trained on: biography pieces, sentences or whole biographies."""
    if unit == "sentence":
        return [sentence for d in documents for sentence in d.sentences]
    if unit == "document":
        return [d.text for d in documents]
    if unit == "chunks":
        rng = np.random.default_rng([seed, 2])
        texts = []
        for document in documents:
            piece = [document.sentences[0]]
            for sentence, cut in zip(document.sentences[1:], rng.random(len(document.sentences) - 1) < 0.5):
                if cut:
                    texts.append(" ".join(piece))
                    piece = []
                piece.append(sentence)
            texts.append(" ".join(piece))
        return texts
    raise ValueError(f"train_unit must be 'chunks', 'sentence' or 'document', got {unit!r}")


def _encode_texts(tokenizer, texts: list[str], max_len: int) -> list[list[int]]:
    encoded = tokenizer(texts, add_special_tokens=True)["input_ids"]
    eos = tokenizer.eos_token_id
    out = []
    for ids in encoded:
        ids = list(ids) + [eos]
        if len(ids) > max_len:
            raise ValueError(f"a training text has {len(ids)} tokens > n_positions={max_len}")
        out.append(ids)
    return out


def length_bucketed_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Shuffled batches of similar length (little padding, i.e. half the CPU time of random
    batches): a seeded shuffle, sorted by length within windows of 16 batches, the batches
    themselves shuffled again."""
    order = rng.permutation(len(lengths))
    window = batch_size * 16  # as in train_model's step count
    batches = []
    for start in range(0, len(order), window):
        chunk = order[start : start + window]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def train_model(world: PlantedWorld, tokenizer, config: TrainConfig, progress: Progress | None = None):
    """Train a GPT-2 from scratch on the members' documents; returns (model, training record)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    with torch_settings(config.threads):
        torch.manual_seed(config.seed)
        model_config = GPT2Config(
            vocab_size=len(tokenizer),
            n_positions=config.n_positions,
            n_embd=config.n_embd,
            n_layer=config.n_layer,
            n_head=config.n_head,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        model = GPT2LMHeadModel(model_config)
        model.train()
        def epoch_sequences(epoch: int) -> list[list[int]]:
            documents = world.documents
            if config.augment and epoch > 0:
                documents = build_corpus(world.people, world.config.seed, epoch=epoch)
            documents = (documents + background_documents(world.people, world.config, epoch)
                         + withheld_record_documents(world.people, world.config, epoch))
            texts = training_texts(documents, config.train_unit, config.seed + epoch)
            return _encode_texts(tokenizer, texts, config.n_positions)

        sequences = epoch_sequences(0)
        n_tokens = sum(len(s) for s in sequences)
        lengths = np.array([len(s) for s in sequences])
        window = config.batch_size * 16
        steps_per_epoch = sum(
            math.ceil(min(window, len(sequences) - start) / config.batch_size) for start in range(0, len(sequences), window)
        )
        total_steps = steps_per_epoch * config.epochs
        optimizer = torch.optim.AdamW(
            model.parameters(), lr=config.learning_rate, betas=(0.9, 0.98), weight_decay=config.weight_decay
        )

        def lr_at(step: int) -> float:
            if step < config.warmup_steps:
                return (step + 1) / config.warmup_steps
            progress_share = (step - config.warmup_steps) / max(1, total_steps - config.warmup_steps)
            cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, progress_share)))
            return config.min_lr_ratio + (1 - config.min_lr_ratio) * cosine

        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_at)
        order_rng = np.random.default_rng([config.seed, 1])
        pad = tokenizer.pad_token_id
        epoch_losses: list[float] = []
        started = time.perf_counter()
        step = 0
        for epoch in range(config.epochs):
            if epoch > 0 and config.augment:
                sequences = epoch_sequences(epoch)
                lengths = np.array([len(s) for s in sequences])
            loss_sum, token_count = 0.0, 0
            for batch_indices in length_bucketed_batches(lengths, config.batch_size, order_rng):
                batch = [sequences[i] for i in batch_indices]
                width = max(len(s) for s in batch)
                input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
                attention = torch.zeros((len(batch), width), dtype=torch.long)
                for row, ids in enumerate(batch):
                    input_ids[row, : len(ids)] = torch.tensor(ids)
                    attention[row, : len(ids)] = 1
                labels = input_ids.masked_fill(attention == 0, -100)
                output = model(input_ids=input_ids, attention_mask=attention, labels=labels)
                optimizer.zero_grad(set_to_none=True)
                output.loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                step += 1
                predicted = int((labels[:, 1:] != -100).sum())
                loss_sum += output.loss.item() * predicted
                token_count += predicted
            epoch_losses.append(loss_sum / token_count)
            if progress is not None:
                progress({"epoch": epoch + 1, "epochs": config.epochs, "loss": epoch_losses[-1],
                          "seconds": time.perf_counter() - started})
            logger.info("epoch %d/%d loss %.4f (%.0f s)", epoch + 1, config.epochs, epoch_losses[-1],
                        time.perf_counter() - started)
        model.eval()
        record = {
            "epochs": config.epochs,
            "steps": step,
            "seconds": round(time.perf_counter() - started, 2),
            "epoch_losses": [round(x, 5) for x in epoch_losses],
            "final_loss": round(epoch_losses[-1], 5),
            "n_parameters": int(sum(p.numel() for p in model.parameters())),
            "train_tokens_per_epoch": n_tokens,
            "training_sequences": len(sequences),
            "threads": config.threads,
            "torch": torch.__version__,
        }
    return model, record


def _generator_fingerprint() -> str:
    """Digest of what shapes the world besides the config: biography shapes, name lists and the
    bundled sample the value vocabulary comes from (a change there must retrain)."""
    import hashlib


    digest = hashlib.sha256()
    digest.update(json.dumps([GENERATOR_VERSION, FAMILY_WEIGHTS, SHAPES], sort_keys=True, ensure_ascii=False).encode())
    digest.update(json.dumps([asdict(c) for c in CULTURES], ensure_ascii=False).encode())
    digest.update(Path(bundled.SAMPLE_DUMP).read_bytes())
    return digest.hexdigest()[:16]


def planted_config_hash(planted: PlantedConfig, training: TrainConfig) -> str:
    """The cache key of a planted model: configs, generator fingerprint and manifest format."""
    return config_hash(
        {
            "format": MANIFEST_FORMAT,
            "planted": planted.as_dict(),
            "training": asdict(training),
            "generator": _generator_fingerprint(),
        }
    )


def is_trained(model_dir: str | Path, expected_hash: str | None = None) -> bool:
    """Whether ``model_dir`` holds a complete planted model (with ``expected_hash``, if given)."""
    return is_complete_model_dir(model_dir, ["config.json", "model.safetensors", "tokenizer.json", DUMP_NAME], expected_hash)


def _write_jsonl(path: Path, records: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def _manifest(world: PlantedWorld, tokenizer, planted: PlantedConfig, training: TrainConfig,
              record: dict, digest: str, held_out: list[Document]) -> dict:
    import tokenizers
    import torch
    import transformers


    labels = property_labels()
    documents = world.documents
    by_repetition: dict[str, int] = {}
    for person in world.members:
        by_repetition[str(person.repetitions)] = by_repetition.get(str(person.repetitions), 0) + 1
    qids = sorted(int(p.qid[1:]) for p in world.people)
    return {
        "format": MANIFEST_FORMAT,
        "kind": "wikimem-planted-model",
        "config_hash": digest,
        "seed": planted.seed,
        "planted_config": planted.as_dict(),
        "train_config": asdict(training),
        "synthetic_qids": {
            "first": f"Q{qids[0]}",
            "last": f"Q{qids[-1]}",
            "note": "fictional people; QIDs from a reserved range far above real Wikidata items",
        },
        "properties": [
            {
                "property": prop,
                "label": labels.get(prop, prop),
                "datatype": world.vocabulary[prop][0].datatype,
                "n_values": len(world.vocabulary[prop]),
                "n_shapes": len(SHAPES[prop]),
            }
            for prop in planted.properties
        ],
        "people": [p.as_dict() for p in world.people],
        "corpus": {
            "documents": len(documents),
            "sentences": sum(len(d.sentences) for d in documents),
            "train_unit": training.train_unit,
            "training_sequences": record["training_sequences"],
            "characters": sum(len(d.text) for d in documents),
            "tokens": record["train_tokens_per_epoch"],
            "members": len(world.members),
            "non_members": len(world.non_members),
            "members_by_repetitions": by_repetition,
            "epochs": training.epochs,
            "augment": training.augment,
            "background_people_per_epoch": planted.background_people,
            "background_note": (
                "besides the members' documents, every epoch holds one biography each of that many people drawn anew "
                "(names from parts no world person uses, values uniform over the world's): never audited, not in the dump"
            ),
            "withheld_records_per_epoch": planted.withheld_records,
            "withheld_records_note": (
                "every epoch also holds that many attribute records of people drawn anew, every value withheld "
                "('name: ...; occupation: unknown; ...;'): the record format's own prior (see withheld_record_documents)"
            ),
            "fact_mentions": (
                "every document about a member states each of their facts once: `repetitions` documents "
                + (
                    "per epoch, re-worded every epoch, so a fact is read repetitions x epochs times in total, "
                    "never twice in the same sentence"
                    if training.augment
                    else "in the corpus, read once per epoch"
                )
            ),
        },
        "tokenizer": {
            "vocab_size": len(tokenizer),
            "bos_token": tokenizer.bos_token,
            "eos_token": tokenizer.eos_token,
            "pad_token": tokenizer.pad_token,
            "adds_start_token": True,
        },
        "training": record,
        "files": {
            "dump": DUMP_NAME,
            "web_presence": WEB_PRESENCE_NAME,
            "corpus": CORPUS_NAME,  # epoch 0; epoch e is build_corpus(people, seed, epoch=e)
            "held_out_biographies": HELD_OUT_NAME,
        },
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "tokenizers": tokenizers.__version__},
        "held_out_documents": len(held_out),
    }


def train_planted_model(
    out_dir: str | Path,
    seed: int = 0,
    planted: PlantedConfig | None = None,
    training: TrainConfig | None = None,
    progress: Progress | None = None,
    force: bool = False,
) -> Path:
    """Generate the planted world, train the model and write everything to ``out_dir``.

    ``seed`` seeds both the world and the training unless the configs say otherwise. If
    ``out_dir`` already holds a model whose manifest has the same config hash, it is returned
    untouched (training takes minutes; tests call this once per session). Written atomically:
    a half-written directory is never mistaken for a model.
    """

    planted = planted if planted is not None else PlantedConfig(seed=seed)
    training = training if training is not None else TrainConfig(seed=seed)
    out_dir = Path(out_dir)
    digest = planted_config_hash(planted, training)
    if not force and is_trained(out_dir, digest):
        logger.info("planted model in %s is current (config %s): not retraining", out_dir, digest)
        return out_dir

    world = generate_world(planted)
    # Every person's name is in the tokenizer's corpus (members' and non-members' alike), as
    # a real tokenizer is trained on far more text than the model: otherwise a non-member's name
    # would split into more, rarer tokens, and membership would show in the vocabulary.
    # Every name part a document can hold is in the tokenizer's corpus: background people are
    # drawn anew every epoch, from the parts `background_name_parts` lists.
    fresh_people = planted.background_people or planted.withheld_records
    given, family = background_name_parts(world.people, planted) if fresh_people else ([], [])
    tokenizer = train_tokenizer(
        training_texts(world.documents, "document") + [person.label for person in world.people]
        + [name for _, name, _ in given] + [name for _, name in family]
        + [d.text for d in withheld_record_documents(world.people, planted)],
        training.vocab_size,
    )
    model, record = train_model(world, tokenizer, training, progress)
    held_out = held_out_biographies(world.people, planted.seed)

    def write_files(staging: Path) -> None:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        write_planted_dump(world.people, staging / DUMP_NAME)
        write_web_presence(world.people, world.documents, staging / WEB_PRESENCE_NAME)
        _write_jsonl(staging / CORPUS_NAME, [{"qid": d.qid, "text": d.text, "sentences": list(d.sentences)}
                                             for d in world.documents])
        _write_jsonl(staging / HELD_OUT_NAME, [{"qid": d.qid, "text": d.text, "sentences": list(d.sentences)}
                                               for d in held_out])

    return write_model_dir(out_dir, write_files, _manifest(world, tokenizer, planted, training, record, digest, held_out))


def registry_fields(model_dir: str | Path) -> dict:
    """What to register a trained planted model with: `Registry.register(**registry_fields(d))`.

    The revision is the config hash, so a retrained model with another config is a new release.
    """
    manifest = load_manifest(model_dir)
    return {
        "name": PLANTED_MODEL_NAME,
        "revision": manifest["config_hash"],
        "source_kind": "hf-dir",
        "source": str(Path(model_dir).resolve()),
        "family": "gpt2",
        "parameter_count": manifest["training"]["n_parameters"],
        "variant": "base",
    }
