"""Where the bundled real sample lives (built by scripts/build_sample.py, shipped in the package)."""

from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
SAMPLE_DUMP = DATA_DIR / "wikidata_sample.json.gz"
SAMPLE_WEB_PRESENCE = DATA_DIR / "web_presence.csv"
SAMPLE_PROPERTIES = DATA_DIR / "properties.jsonl.gz"
