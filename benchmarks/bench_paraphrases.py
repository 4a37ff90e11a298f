"""How long paraphrase generation and ranking take for the ~25 person properties of the sample.

    .venv/bin/python benchmarks/bench_paraphrases.py [--repeat 2]   (PYTHONPATH=. if not pip-installed)

Prints model loading, pool generation (spaCy parses of labels/aliases), ranking (one MiniLM
batch + POS tags + MMR) and the end-to-end build_templates time. Target: well under 2 minutes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time

import pandas as pd

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from wikimem_platform.reference import bundled
from wikimem_platform.canaries import PropertyInfo, RuleBasedParaphraser, build_templates, rank_pools  # noqa: E402
from wikimem_platform.canaries.encoders import SentenceEncoder, load_nlp, load_sentence_model  # noqa: E402
from wikimem_platform.canaries.templates import baseline_form  # noqa: E402

PROPERTIES = (
    "P19 P20 P27 P106 P569 P570 P101 P103 P108 P1303 P1412 P26 P264 P3373 P39 P413 P463 P509 "
    "P641 P69 P21 P735 P734 P22 P25"
).split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None, help="torch threads while embedding")
    args = parser.parse_args()
    with gzip.open(bundled.SAMPLE_PROPERTIES, "rt", encoding="utf-8") as handle:
        records = {r["id"]: r for r in map(json.loads, handle)}
    table = pd.DataFrame([{**records[p], "property": p} for p in PROPERTIES])

    start = time.perf_counter()
    nlp, model = load_nlp(), load_sentence_model()
    SentenceEncoder(model)(["warm up"])
    print(f"load spaCy + MiniLM: {time.perf_counter() - start:.1f} s")

    for run in range(args.repeat):
        encode = SentenceEncoder(model, threads=args.threads)  # empty memory: every sentence embedded
        start = time.perf_counter()
        generator = RuleBasedParaphraser(nlp)
        props = [PropertyInfo.from_record(r) for r in table.to_dict("records")]
        items = []
        for prop in props:
            baseline = baseline_form(prop, nlp).baseline
            items.append((baseline, generator.candidates(baseline, prop), prop.datatype))
        generated = time.perf_counter()
        ranked = rank_pools(items, encode, nlp)
        done = time.perf_counter()
        pool = sum(len(r.pool) for r in ranked)
        print(
            f"run {run}: {len(props)} properties, {pool} pool sentences "
            f"({pool / len(props):.0f} per property): generate {generated - start:.1f} s, "
            f"rank {done - generated:.1f} s"
        )
        start = time.perf_counter()
        templates = build_templates(table, nlp=nlp, encode=SentenceEncoder(model, threads=args.threads))
        print(f"run {run}: build_templates end to end {time.perf_counter() - start:.1f} s, {len(templates)} rows")


if __name__ == "__main__":
    main()
