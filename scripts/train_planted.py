"""Train the planted-facts model and run the sanity experiment on it.

    .venv/bin/python scripts/train_planted.py --out /tmp/planted            # train (or reuse)
    .venv/bin/python scripts/train_planted.py --out /tmp/planted --evaluate # + sanity experiment

The sanity experiment scores facts the way WikiMem does, with wordings the model never saw:
the platform's own canary templates (baseline + 10 paraphrases per property, built by
`canaries.build_templates`; checked to be disjoint from the training shapes). For each
(person, property) the true value competes with every other value of the property's vocabulary
(99 for most properties, as many as the ~100 counterfactuals). Reported per group (members by
repetition count, non-members): the share of templates where the true value ranks first, under
plain NLL and under the calibrated score s(h, v) = [NLL(h0,v) - NLL(h,v)] - mean_S(h)[NLL(h0,v) -
NLL(h~,v)], then lenient (M > 0) and threshold (M >= 0.8) memorization rates, and the loss-based
membership-inference AUROC (members' training documents, and fresh biographies in the same
shapes, against non-members' fresh biographies).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from wikimem_platform.planted import (  # noqa: E402
    PlantedConfig,
    PlantedPerson,
    TrainConfig,
    load_manifest,
    train_planted_model,
)
from wikimem_platform.planted.shapes import SHAPES  # noqa: E402


def canary_templates(properties: list[str]) -> pd.DataFrame:
    """The platform's canary templates for the planted properties (needs spaCy and MiniLM)."""
    from wikimem_platform import bundled, wikidata
    from wikimem_platform.canaries import build_templates

    metadata = wikidata.load_property_metadata(bundled.SAMPLE_PROPERTIES)
    return build_templates(metadata[metadata["property"].isin(properties)])


def shape_clashes(templates: pd.DataFrame) -> list[str]:
    """Canary templates that are also training shapes (after the same placeholder spelling)."""
    shapes = {s.replace("{s}", "{subject}").replace("{v}", "{value}").lower() for p in SHAPES.values() for s in p}
    return [t for t in templates["template"] if t.lower() in shapes]


def score_facts(lm, people: list[PlantedPerson], vocabulary: dict[str, list[dict]], templates: pd.DataFrame,
                max_templates: int, cache: dict[str, float], max_candidates: int | None = None,
                seed: int = 0) -> pd.DataFrame:
    """One row per (person, property, template): plain-NLL and calibrated rank-1 of the truth."""
    from wikimem_platform.canaries import generic_subject, render, similar_names
    from wikimem_platform.nll import score_sentences

    rows = []
    for prop, group in templates.groupby("property", sort=False):
        group = group.sort_values("variant_id").head(max_templates)
        all_labels = [v["label"] for v in vocabulary[prop]]
        for person in people:
            truth = next(f.value_label for f in person.facts if f.property == prop)
            labels = all_labels
            if max_candidates and len(all_labels) > max_candidates:
                rng = np.random.default_rng([seed, int(person.qid[1:]), int(prop[1:])])
                others = [label for label in all_labels if label != truth]
                labels = [truth] + [others[i] for i in rng.permutation(len(others))[: max_candidates - 1]]
            similar = similar_names(person.label, 2)
            for template in group["template"]:
                h0 = generic_subject(template)
                sentences = [render(template, person.label, v) for v in labels]
                sentences += [render(template, h0, v) for v in labels]
                for name in similar:
                    sentences += [render(template, name, v) for v in labels]
                nll = score_sentences(lm, sentences, cache=cache).reshape(2 + len(similar), len(labels))
                n_h, n_0, n_s = nll[0], nll[1], nll[2:]
                calibrated = (n_0 - n_h) - ((n_0 - n_s).mean(axis=0) if len(similar) else 0.0)
                true_index = labels.index(truth)
                rows.append(
                    {
                        "qid": person.qid,
                        "repetitions": person.repetitions,
                        "member": person.member,
                        "property": prop,
                        "template": template,
                        "plain_rank1": bool(np.argmin(n_h) == true_index),
                        "calibrated_rank1": bool(np.argmax(calibrated) == true_index),
                        "plain_rank": int((n_h < n_h[true_index]).sum() + 1),
                        "n_candidates": len(labels),
                    }
                )
    return pd.DataFrame(rows)


def document_losses(lm, texts: list[str]) -> np.ndarray:
    """Mean per-token NLL of each text (start token first; the end token not scored)."""
    from wikimem_platform.nll import score_sentences

    totals = score_sentences(lm, texts)
    lengths = np.array([len(ids) - 1 for ids in lm.encode(texts)])
    return totals / lengths


def evaluate(out_dir: Path, n_per_group: int, max_templates: int, seed: int = 0,
             max_candidates: int | None = None) -> dict:
    import torch
    from sklearn.metrics import roc_auc_score

    from wikimem_platform.models import load_model

    torch.set_num_threads(1)
    manifest = load_manifest(out_dir)
    people = [PlantedPerson.from_dict(p) for p in manifest["people"]]
    properties = [p["property"] for p in manifest["properties"]]
    vocabulary: dict[str, dict[str, dict]] = {p: {} for p in properties}
    for person in people:
        for fact in person.facts:
            vocabulary[fact.property][fact.value] = {"value": fact.value, "label": fact.value_label}
    vocab_lists = {p: sorted(v.values(), key=lambda x: x["label"]) for p, v in vocabulary.items()}

    started = time.perf_counter()
    templates = canary_templates(properties)
    clashes = shape_clashes(templates)
    lm = load_model(out_dir)

    rng = np.random.default_rng(seed)
    groups: dict[str, list[PlantedPerson]] = {}
    for reps in sorted({p.repetitions for p in people}):
        pool = [p for p in people if p.repetitions == reps]
        size = n_per_group * (2 if reps == 0 else 1)
        groups[f"r={reps}" if reps else "non-member"] = [pool[i] for i in rng.permutation(len(pool))[:size]]
    cache: dict[str, float] = {}
    frames = [score_facts(lm, members, vocab_lists, templates, max_templates, cache, max_candidates, seed)
              for members in groups.values()]
    scores = pd.concat(frames, ignore_index=True)
    pairs = scores.groupby(["qid", "property", "repetitions", "member"], as_index=False).agg(
        M_plain=("plain_rank1", "mean"), M_cal=("calibrated_rank1", "mean"), median_plain_rank=("plain_rank", "median")
    )
    summary = {}
    for name, frame in pairs.groupby(pairs["repetitions"].map(lambda r: f"r={r}" if r else "non-member")):
        per_template = scores[scores["qid"].isin(frame["qid"])]
        summary[name] = {
            "pairs": len(frame),
            "plain_rank1_per_template": round(per_template["plain_rank1"].mean(), 4),
            "calibrated_rank1_per_template": round(per_template["calibrated_rank1"].mean(), 4),
            "plain_lenient": round((frame["M_plain"] > 0).mean(), 4),
            "plain_threshold_0.8": round((frame["M_plain"] >= 0.8).mean(), 4),
            "calibrated_lenient": round((frame["M_cal"] > 0).mean(), 4),
            "calibrated_threshold_0.8": round((frame["M_cal"] >= 0.8).mean(), 4),
            "median_true_rank_plain": float(frame["median_plain_rank"].median()),
        }
    # Precision / recall / FPR proxies: positives = member facts repeated >= 4 times,
    # negatives = non-member facts (as many pairs as the positives, like the two cohorts).
    strong = pairs[pairs["repetitions"] >= 4]
    negative = pairs[~pairs["member"]]
    proxies = {}
    for score in ("M_plain", "M_cal"):
        for rule, flag in (("lenient", lambda m: m > 0), ("threshold_0.8", lambda m: m >= 0.8)):
            tp, fp = int(flag(strong[score]).sum()), int(flag(negative[score]).sum())
            proxies[f"{score}_{rule}"] = {
                "recall_r>=4": round(tp / len(strong), 4),
                "fpr_non_members": round(fp / len(negative), 4),
                "precision_equal_sizes": round(tp / (tp + fp * len(strong) / len(negative)), 4) if tp + fp else None,
            }

    corpus = [json.loads(line) for line in (out_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    held_out = {d["qid"]: d["text"] for d in map(json.loads, (out_dir / "held_out_biographies.jsonl").read_text(encoding="utf-8").splitlines())}
    member_ids = [p.qid for p in people if p.member]
    non_member_ids = [p.qid for p in people if not p.member]
    first_doc = {}
    for document in corpus:
        first_doc.setdefault(document["qid"], document["text"])  # a member's training biography
    member_train = document_losses(lm, [first_doc[q] for q in member_ids])
    member_fresh = document_losses(lm, [held_out[q] for q in member_ids])
    non_member = document_losses(lm, [held_out[q] for q in non_member_ids])
    labels = np.r_[np.ones(len(member_ids)), np.zeros(len(non_member_ids))]
    reps = np.array([p.repetitions for p in people if p.member])
    mia = {
        "auroc_training_docs_vs_non_members": round(roc_auc_score(labels, -np.r_[member_train, non_member]), 4),
        "auroc_fresh_bios_vs_non_members": round(roc_auc_score(labels, -np.r_[member_fresh, non_member]), 4),
        "mean_loss": {
            "member_training_docs": round(float(member_train.mean()), 4),
            "member_fresh_bios": round(float(member_fresh.mean()), 4),
            "non_member_bios": round(float(non_member.mean()), 4),
        },
    }
    for r in sorted(set(reps)):
        sel = reps == r
        lab = np.r_[np.ones(sel.sum()), np.zeros(len(non_member_ids))]
        mia[f"auroc_fresh_r={r}"] = round(roc_auc_score(lab, -np.r_[member_fresh[sel], non_member]), 4)
        mia[f"auroc_training_r={r}"] = round(roc_auc_score(lab, -np.r_[member_train[sel], non_member]), 4)
    return {
        "templates_per_property": int(min(max_templates, templates.groupby("property").size().min())),
        "canary_templates_that_are_training_shapes": clashes,
        "groups": summary,
        "proxies": proxies,
        "mia": mia,
        "eval_seconds": round(time.perf_counter() - started, 1),
        "per_property_calibrated_rank1": scores.assign(strong=scores["repetitions"] >= 4)
        .groupby(["property", "strong"])["calibrated_rank1"].mean().round(3).unstack().to_dict(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="model directory (reused if current)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="training threads (default: TrainConfig's)")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--force", action="store_true", help="retrain even if the directory is current")
    parser.add_argument("--evaluate", action="store_true", help="run the sanity experiment afterwards")
    parser.add_argument("--eval-people", type=int, default=40, help="people per group (non-members: twice)")
    parser.add_argument("--eval-templates", type=int, default=11, help="canary templates per property")
    parser.add_argument("--eval-candidates", type=int, default=None,
                        help="candidates per fact (truth + others; default: the whole vocabulary)")
    parser.add_argument("--json", type=Path, default=None, help="write the evaluation here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    training = TrainConfig(seed=args.seed)
    overrides = {k: v for k, v in (("threads", args.threads), ("epochs", args.epochs)) if v is not None}
    if overrides:
        training = TrainConfig(**{**training.__dict__, **overrides})
    started = time.perf_counter()
    out = train_planted_model(args.out, seed=args.seed, planted=PlantedConfig(seed=args.seed), training=training,
                              force=args.force)
    manifest = load_manifest(out)
    print(json.dumps({"model": str(out), "wall_seconds": round(time.perf_counter() - started, 1),
                      "training": manifest["training"], "corpus": manifest["corpus"]}, indent=1))
    if args.evaluate:
        result = evaluate(out, args.eval_people, args.eval_templates, args.seed, args.eval_candidates)
        print(json.dumps(result, indent=1, ensure_ascii=False))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
