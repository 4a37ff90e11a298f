"""Write the bundled planted-facts extract: the default planted world as a Wikidata dump.

    .venv/bin/python scripts/build_planted_sample.py            # -> wikimem_platform/data/planted/

The people, their facts and the web-presence sidecar depend only on `PlantedConfig()` and the
bundled real sample (values are real sample values), not on training: the planted model trained
with the default config (`train_planted_model`) has exactly these people in its manifest, and
`tests/e2e/test_planted_pipeline.py` checks the shipped files equal a fresh build.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wikimem_platform.reference import bundled
from wikimem_platform.planted import PlantedConfig, generate_world, write_planted_dump, write_web_presence  # noqa: E402


def build(out_dir: Path, config: PlantedConfig | None = None) -> tuple[Path, Path]:
    world = generate_world(config or PlantedConfig())
    out_dir.mkdir(parents=True, exist_ok=True)
    dump = write_planted_dump(world.people, out_dir / bundled.PLANTED_DUMP.name)
    web = write_web_presence(world.people, world.documents, out_dir / bundled.PLANTED_WEB_PRESENCE.name)
    return dump, web


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=bundled.PLANTED_DIR)
    args = parser.parse_args(argv)
    for path in build(args.out):
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
