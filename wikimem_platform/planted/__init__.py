"""A model with known ground truth: fictional people, facts planted a known number of times.

- ``generate_world(PlantedConfig(...))`` -> people (members / non-members), their facts (real
  values of the bundled sample) and the members' biography corpus; seeded. ``background_documents``
  -> the biographies of the people drawn anew for each training epoch besides them.
- ``train_planted_model(out_dir, seed=0)`` -> a tiny GPT-2 + byte-level BPE tokenizer trained on
  that corpus, as a Hugging Face directory with ``manifest.json``; cached by config hash.
- ``write_planted_dump(people, path)`` / ``write_web_presence`` -> the planted facts as a
  Wikidata dump that ``wikidata.read_dump`` reads, and its web-presence sidecar.
"""

from wikimem_platform.planted.dump import write_planted_dump, write_web_presence
from wikimem_platform.planted.generator import (
    background_documents,
    background_people,
    build_corpus,
    DEFAULT_PROPERTIES,
    Document,
    facts_frame,
    FIRST_SYNTHETIC_QID,
    generate_people,
    generate_world,
    held_out_biographies,
    PlantedConfig,
    PlantedFact,
    PlantedPerson,
    PlantedValue,
    PlantedWorld,
    value_vocabulary,
)
from wikimem_platform.planted.training import (
    default_planted_dir,
    is_trained,
    load_manifest,
    MANIFEST_NAME,
    planted_config_hash,
    PLANTED_MODEL_NAME,
    registry_fields,
    train_planted_model,
    train_tokenizer,
    TrainConfig,
)

__all__ = [
    "DEFAULT_PROPERTIES",
    "FIRST_SYNTHETIC_QID",
    "MANIFEST_NAME",
    "PLANTED_MODEL_NAME",
    "Document",
    "PlantedConfig",
    "PlantedFact",
    "PlantedPerson",
    "PlantedValue",
    "PlantedWorld",
    "TrainConfig",
    "background_documents",
    "background_people",
    "build_corpus",
    "default_planted_dir",
    "facts_frame",
    "generate_people",
    "generate_world",
    "held_out_biographies",
    "is_trained",
    "load_manifest",
    "planted_config_hash",
    "registry_fields",
    "train_planted_model",
    "train_tokenizer",
    "write_planted_dump",
    "write_web_presence",
]
