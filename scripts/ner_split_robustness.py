"""Does the best dev prompt beat the bare name on test (NER paper, Table 6) for more than one split?

    .venv/bin/python scripts/ner_split_robustness.py --entity-type PER --prompts 100 --extra-out 400

The NER audit chooses B-PT on one seeded dev/test split of the names. This script asks how much
that verdict owes to the split: it scores the model's names (and, with --extra-out, that many
more never-trained names of the bundled sample, which cost no training) under the first
--prompts grammar prompts of the type and the bare name, then draws --splits random dev/test
halves (in- and out-of-sample names halved apart, as the audit does), picks B-PT on dev each
time and prints how often its test M-MEM beats the bare name's (∅-PT), with both means.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def extra_out_of_sample(entity_type: str, known: set[str], model_dir: Path, count: int, seed: int) -> list[str]:
    """Up to `count` names of the type from the bundled sample that the model never read
    (neither in its manifest nor anywhere in its training sentences), in a seeded order."""
    from wikimem_platform.reference import bundled
    from wikimem_platform.wikidata import extract as wikidata
    from wikimem_platform.ner import corpus
    from wikimem_platform.ner.training import read_training_sentences
    from wikimem_platform.splits import seeded_draw

    extract = wikidata.read_dump(bundled.SAMPLE_DUMP)
    candidates = corpus.candidate_names(extract.humans, extract.claims)
    pool = sorted(set(candidates.loc[candidates["entity_type"] == entity_type, "name"]) - known,
                  key=lambda name: seeded_draw(f"ner-extra|{name}", seed))[: 2 * count]
    read = set(corpus.leaked_names(pool, (s.text for s in read_training_sentences(model_dir))))
    return [name for name in pool if name not in read][:count]


def m_mem_per_prompt(confidences: np.ndarray, is_in: np.ndarray) -> np.ndarray:
    """M-MEM of every column of a names × prompts matrix (`prompt_sensitivity.auc_per_group`)."""
    from wikimem_platform.wikimem.prompt_sensitivity import auc_per_group

    n_names, n_prompts = confidences.shape
    group_id = np.repeat(np.arange(n_prompts), n_names)
    return auc_per_group(confidences.T.reshape(-1), np.tile(is_in, n_prompts), group_id, n_prompts)


def main() -> None:
    import pandas as pd

    from wikimem_platform.ner.confidence import score_pairs
    from wikimem_platform.ner.prompts import EMPTY_PROMPT, generate_prompts
    from wikimem_platform.ner.training import default_ner_dir, load_ner_model, manifest_names, train_ner_model

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", type=Path, default=None, help="a NER model trained here (default: the default one)")
    parser.add_argument("--entity-type", default="PER", choices=["PER", "LOC", "ORG"])
    parser.add_argument("--prompts", type=int, default=100, help="prompts of the type (of the audit's 400)")
    parser.add_argument("--extra-out", type=int, default=0, help="never-trained names added to the out-of-sample side")
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    model_dir = args.model_dir or train_ner_model(default_ner_dir())
    ner = load_ner_model(model_dir)
    names = manifest_names(ner.manifest)
    names = names[names["entity_type"] == args.entity_type]
    inside = sorted(names.loc[names["is_in"], "name"])
    outside = sorted(names.loc[~names["is_in"], "name"])
    extra = extra_out_of_sample(args.entity_type, set(names["name"]), model_dir, args.extra_out, args.seed)
    # as the audit draws them: a quarter per sentence type
    prompts = generate_prompts(args.prompts, entity_types=(args.entity_type,))["prompt"].tolist()
    prompts.append(EMPTY_PROMPT)
    everyone = inside + outside + extra
    pairs = pd.DataFrame([(p, n, args.entity_type) for p in prompts for n in everyone],
                         columns=["prompt", "name", "entity_type"])
    print(f"{model_dir.name}: {len(inside)} in-sample, {len(outside)} out-of-sample (+{len(extra)} never-trained) "
          f"{args.entity_type} names x {len(prompts) - 1} prompts + the bare name = {len(pairs):,} sentences")
    scored = score_pairs(ner, pairs)
    matrix = scored.pivot_table(index="name", columns="prompt", values="confidence").loc[everyone, prompts]
    bare = prompts.index(EMPTY_PROMPT)

    rng = np.random.default_rng(args.seed)
    for label, out_names in (("model's out-of-sample names", outside), (f"+ {len(extra)} never-trained", outside + extra)):
        if label.startswith("+") and not extra:
            continue
        rows = inside + out_names
        values, is_in = matrix.loc[rows].to_numpy(), np.array([True] * len(inside) + [False] * len(out_names))
        best_test, bare_test, mean_test = [], [], []
        for _ in range(args.splits):
            dev = np.zeros(len(rows), dtype=bool)
            for side in (np.flatnonzero(is_in), np.flatnonzero(~is_in)):
                dev[rng.permutation(side)[: len(side) // 2]] = True
            dev_scores = m_mem_per_prompt(values[dev], is_in[dev])
            test_scores = m_mem_per_prompt(values[~dev], is_in[~dev])
            dev_scores[bare] = -np.inf  # B-PT is chosen among the prompts
            best_test.append(test_scores[int(np.argmax(dev_scores))])
            bare_test.append(test_scores[bare])
            mean_test.append(np.delete(test_scores, bare).mean())
        best_test, bare_test = np.array(best_test), np.array(bare_test)
        print(f"{label}: over {args.splits} random dev/test splits, B-PT test M-MEM {best_test.mean():.3f}, "
              f"∅-PT {bare_test.mean():.3f}, mean prompt {np.mean(mean_test):.3f}; "
              f"B-PT > ∅-PT in {np.mean(best_test > bare_test):.0%} of splits")
    everyone_scores = m_mem_per_prompt(matrix.to_numpy(), np.array([n in set(inside) for n in everyone]))
    prompt_scores = np.delete(everyone_scores, bare)
    print(f"all names at once: ∅-PT {everyone_scores[bare]:.3f}; prompts mean {prompt_scores.mean():.3f}, "
          f"best {prompt_scores.max():.3f}; {np.mean(prompt_scores > everyone_scores[bare]):.0%} of prompts above ∅-PT")


if __name__ == "__main__":
    main()
