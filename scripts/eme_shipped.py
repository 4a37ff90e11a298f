#!/usr/bin/env python
"""Entity-memorization extraction on a shipped model and the bundled sample: extraction rates
with text prompts and with soft prompts by prefix length (the numbers of issue 15's note).

    .venv/bin/python scripts/eme_shipped.py --model smollm2-135m-instruct --prefix-lengths 1 5 10 20

Real people's facts: the soft prompts and their training texts are written under --store
(default ./.dagster_home/storage/soft_prompts), never to the shared model cache.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from wikimem_platform import eme
from wikimem_platform.lm.loading import load_model
from wikimem_platform.reference import bundled
from wikimem_platform.reference.properties import build_property_table
from wikimem_platform.wikidata.extract import load_property_metadata, read_dump


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--prefix-lengths", type=int, nargs="+", default=[1, 5, 10])
    parser.add_argument("--methods", nargs="+", default=["prefix"], choices=eme.METHODS)
    parser.add_argument("--properties", type=int, default=6, help="most used item-valued properties")
    parser.add_argument("--people", type=int, default=160, help="people drawn from the sample (seeded)")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--learning-rate", type=float, default=1e-2)
    parser.add_argument("--store", default=".dagster_home/storage/soft_prompts")
    parser.add_argument("--out", default="", help="write the rates as CSV here")
    args = parser.parse_args()

    extract = read_dump(bundled.SAMPLE_DUMP)
    metadata = load_property_metadata(bundled.SAMPLE_PROPERTIES)
    table = build_property_table(extract.claims, metadata, min_humans=50)
    table = table[table["datatype"] == "wikibase-item"].head(args.properties)
    labels = dict(zip(table["property"], table["label"]))
    facts = eme.facts_from_claims(extract.claims, extract.humans, labels)
    # people with at least 3 of those properties (the name and two more identify them)
    counts = facts.groupby("subject_qid")["property"].nunique()
    people = counts[counts >= 3].index.to_series().sample(frac=1.0, random_state=0).head(args.people)
    facts = facts[facts["subject_qid"].isin(people)]
    lm = load_model(args.model, device="cpu")
    config = eme.EmeConfig(methods=tuple(args.methods), prefix_lengths=tuple(args.prefix_lengths),
                           training_data=("real",), control="none", epochs=args.epochs,
                           learning_rate=args.learning_rate)
    started = time.perf_counter()
    audit = eme.eme_audit(lm, facts, eme.SoftPromptStore(args.store), config, log=print)
    rates = audit.rates[audit.rates["subset"].isin(["all", "cue<0.5"])]
    print(f"\n{args.model}: {len(audit.split['training_people'])} training people, "
          f"{len(audit.split['evaluated_people'])} evaluated, {audit.split['n_record_prompts']} prompts, "
          f"{time.perf_counter() - started:.0f} s")
    print(rates.pivot_table(index=["prompt_method", "prefix_length"], columns="subset",
                            values="hit_rate").round(3).to_string())
    print(audit.prompts[["prompt_method", "prefix_length", "n_training", "train_seconds", "final_loss"]].to_string())
    by_property = audit.examples.groupby(["prompt_method", "prefix_length", "property"])["hit"].mean().unstack()
    print(by_property.round(2).to_string())
    if args.out:
        rates.to_csv(args.out, index=False)


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    main()
