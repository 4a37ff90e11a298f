"""Where the bundled data sources live (shipped in the package).

- the real Wikidata sample, built by scripts/build_sample.py from ../shared;
- the planted-facts extract (fictional people whose facts the planted model was trained on),
  built by scripts/build_planted_sample.py from the default `planted.PlantedConfig`.
"""

from pathlib import Path

DATA_DIR = Path(__file__).parent.parent / "data"
SAMPLE_DUMP = DATA_DIR / "wikidata_sample.json.gz"
SAMPLE_WEB_PRESENCE = DATA_DIR / "web_presence.csv"
SAMPLE_PROPERTIES = DATA_DIR / "properties.jsonl.gz"
PLANTED_DIR = DATA_DIR / "planted"
PLANTED_DUMP = PLANTED_DIR / "wikidata_planted.json.gz"
PLANTED_WEB_PRESENCE = PLANTED_DIR / "web_presence.csv"
