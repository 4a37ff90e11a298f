"""Train the planted-facts model (or reuse it: training is cached by config hash).

    .venv/bin/python scripts/train_planted.py                       # -> the default cache dir
    .venv/bin/python scripts/train_planted.py --out /tmp/planted --epochs 40

Prints the training record and the corpus statistics from the manifest. To audit the model
against its ground truth through the platform's own assets, run scripts/validate_planted.py.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from wikimem_platform.planted import (  # noqa: E402
    PlantedConfig,
    TrainConfig,
    default_planted_dir,
    load_manifest,
    train_planted_model,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="model directory (default: the cache; reused if current)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="training threads (default: TrainConfig's)")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--force", action="store_true", help="retrain even if the directory is current")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    training = TrainConfig(seed=args.seed)
    overrides = {k: v for k, v in (("threads", args.threads), ("epochs", args.epochs)) if v is not None}
    training = replace(training, **overrides)
    started = time.perf_counter()
    out = train_planted_model(args.out or default_planted_dir(), seed=args.seed, planted=PlantedConfig(seed=args.seed),
                              training=training, force=args.force)
    manifest = load_manifest(out)
    print(json.dumps({"model": str(out), "wall_seconds": round(time.perf_counter() - started, 1),
                      "training": manifest["training"], "corpus": manifest["corpus"]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
