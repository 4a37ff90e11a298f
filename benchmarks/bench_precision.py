"""Verdicts at low precision: a planted model audited in float32, then in bfloat16 (and NF4) with
and without the float32 re-scoring of near-ties (`wikimem_platform.lm.precision`, issue 37).

Per precision: how many rank-1s differ from float32's without re-scoring and with it (every
ranking a verdict reads: s(h, v) at alpha 0, 0.5 and 1 per wording, s summed per pair, each name
form's lowest NLL; memorized, M and its flags), the share of distinct sentences re-scored, the
largest low-precision error seen, and the time of the low-precision pass, of the re-scoring, and
of a whole float32 pass.

Workload: people of the planted world, `--people-per-level` at each repetition level (16, 4, 1
and 0 readings), 4 properties x 11 hand-written wordings x (true value + `--counterfactuals`
other values of the world) x {h, h0, 2 x S(h)} (the test `tests/unit/lm/test_precision.py`
asserts the same on CPU with the defaults).

    .venv/bin/python benchmarks/bench_precision.py --model ~/.cache/wikimem/models/planted-tiny
    python3 benchmarks/bench_precision.py --model DIR --device cuda --dtypes bfloat16 nf4
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from wikimem_platform.canaries.names import similar_names  # noqa: E402
from wikimem_platform.canaries.text import generic_subject  # noqa: E402
from wikimem_platform.wikimem.memorization import (  # noqa: E402
    pair_metrics,
    prepare_scores,
    summed_candidates,
    variant_metrics,
)
from wikimem_platform.planted import PlantedConfig, generate_world  # noqa: E402

WORDINGS = {
    "P106": ["{subject}'s occupation is {value}.", "{subject} works as {value}.", "The occupation of {subject} is {value}.",
             "{value} is the occupation of {subject}.", "{subject} is employed as {value}.",
             "{subject}'s profession is {value}.", "By profession, {subject} is {value}.", "{subject} has the job of {value}.",
             "The profession of {subject} is {value}.", "{subject} makes a living as {value}.", "{subject}'s job is {value}."],
    "P27": ["{subject}'s country of citizenship is {value}.", "{subject} is a citizen of {value}.",
            "The citizenship of {subject} is {value}.", "{value} is the country of citizenship of {subject}.",
            "{subject} holds the citizenship of {value}.", "{subject}'s nationality is {value}.",
            "By nationality, {subject} belongs to {value}.", "{subject} has the nationality of {value}.",
            "The nationality of {subject} is {value}.", "{subject} is a national of {value}.",
            "{subject}'s citizenship is {value}."],
    "P19": ["{subject}'s place of birth is {value}.", "{subject} was born in {value}.", "The birthplace of {subject} is {value}.",
            "{value} is the place of birth of {subject}.", "{subject} is a native of {value}.",
            "{subject}'s birthplace is {value}.", "{subject} came into the world in {value}.", "{subject}'s hometown is {value}.",
            "The place of birth of {subject} is {value}.", "{value} is where {subject} was born.",
            "{subject} was born in the city of {value}."],
    "P108": ["{subject}'s employer is {value}.", "{subject} works for {value}.", "The employer of {subject} is {value}.",
             "{value} is the employer of {subject}.", "{subject} is employed by {value}.", "{subject} has worked for {value}.",
             "{subject}'s workplace is {value}.", "{value} employs {subject}.", "The workplace of {subject} is {value}.",
             "{subject} is on the staff of {value}.", "{subject}'s employer was {value}."],
}
VARIANT = ["subject_qid", "property", "variant_id"]
PAIR = ["subject_qid", "property"]
ALPHAS = (0.0, 0.5, 1.0)


def planted_audit_inputs(people_per_level: int = 2, counterfactuals: int = 20, seed: int = 0
                         ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(canaries, candidates) as `scoring.score_canaries` takes them, for `people_per_level`
    planted people per repetition level. The wordings are written here (the pipeline's come from
    spaCy and a paraphrase model, not needed to compare precisions); candidates are the true value
    and `counterfactuals` other values of the planted world's vocabulary for the property."""
    world = generate_world(PlantedConfig())
    rng = np.random.default_rng(seed)
    levels: dict[int, list] = {}
    for person in world.people:
        levels.setdefault(person.repetitions, []).append(person)
    canaries, candidates = [], []
    for level in sorted(levels):
        for person in levels[level][:people_per_level]:
            similar = similar_names(person.label, 2)
            for fact in person.facts:
                for variant_id, template in enumerate(WORDINGS[fact.property]):
                    canaries.append(dict(subject_qid=person.qid, property=fact.property, variant_id=variant_id,
                                         kind="baseline" if variant_id == 0 else "paraphrase", template=template,
                                         subject=person.label, subject_generic=generic_subject(template),
                                         subject_similar=similar))
                others = [v for v in world.vocabulary[fact.property] if v.label != fact.value_label]
                candidates.append(dict(subject_qid=person.qid, property=fact.property, value=fact.value,
                                       value_label=fact.value_label, is_true=True))
                for index in rng.choice(len(others), counterfactuals, replace=False):
                    candidates.append(dict(subject_qid=person.qid, property=fact.property, value=others[index].value,
                                           value_label=others[index].label, is_true=False))
    return pd.DataFrame(canaries), pd.DataFrame(candidates)


def _first_values(candidates: pd.DataFrame, keys: list[str], rank: str) -> pd.Series:
    first = candidates[candidates[rank] == candidates.groupby(keys)[rank].transform("min")]
    return first.groupby(keys)["value"].agg(lambda values: tuple(sorted(values)))


def _lowest(scores: pd.DataFrame, nll: np.ndarray) -> pd.Series:
    frame = scores[VARIANT + ["value"]].assign(_nll=nll)
    return frame.loc[frame.groupby(VARIANT)["_nll"].idxmin()].set_index(VARIANT)["value"]


def verdict_differences(reference: pd.DataFrame, other: pd.DataFrame) -> dict[str, int]:
    """How many groups' rank-1 (and verdicts) differ between two scores tables of the same rows."""
    keys = [*VARIANT, "value"]
    reference = reference.sort_values(keys).reset_index(drop=True)
    other = other.sort_values(keys).reset_index(drop=True)
    out: dict[str, int] = {}
    for alpha in ALPHAS:
        tables = []
        for scores in (reference, other):
            prepared = prepare_scores(scores.drop(columns=["nll_similar_mean"]), alpha)
            candidates, variants = variant_metrics(prepared, outer_keys=())
            summed_cands, summed = summed_candidates(prepared, outer_keys=())
            tables.append((_first_values(candidates, VARIANT, "rank"), _first_values(summed_cands, PAIR, "rank_sum"),
                           variants, pair_metrics(variants, summed, outer_keys=())))
        (tops, sums, variants, pairs), (tops2, sums2, variants2, pairs2) = tables
        out[f"rank1 s(alpha={alpha:g})"] = int((tops != tops2).sum())
        out[f"memorized s(alpha={alpha:g})"] = int((variants["memorized"].values != variants2["memorized"].values).sum())
        out[f"M s(alpha={alpha:g})"] = int((pairs["M"].values != pairs2["M"].values).sum())
        out[f"rank1 summed s(alpha={alpha:g})"] = int((sums != sums2).sum())
        out[f"summed_memorized s(alpha={alpha:g})"] = int(
            (pairs["summed_memorized"].values != pairs2["summed_memorized"].values).sum())
    for name, column in (("NLL(h)", "nll_h"), ("NLL(h0)", "nll_h0")):
        out[f"rank1 {name}"] = int((_lowest(reference, reference[column].to_numpy())
                                    != _lowest(other, other[column].to_numpy())).sum())
    for index in range(int(reference["nll_similar"].map(len).max())):
        look = lambda scores: scores["nll_similar"].map(lambda v: v[index] if len(v) > index else np.inf).to_numpy()  # noqa: E731
        out[f"rank1 NLL(h~{index + 1})"] = int((_lowest(reference, look(reference)) != _lowest(other, look(other))).sum())
    return out


def _synchronize(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main(argv: list[str] | None = None) -> list[dict]:
    import torch

    from wikimem_platform.lm.loading import load_model
    from wikimem_platform.lm.nll import score_sentences
    from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore, score_canaries

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a planted model directory")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtypes", nargs="+", default=["bfloat16"], help="bfloat16 float16 nf4")
    parser.add_argument("--people-per-level", type=int, default=2)
    parser.add_argument("--counterfactuals", type=int, default=20)
    parser.add_argument("--inputs", help="read (canaries, candidates) from this JSON file instead of building them "
                                         "(a machine without the planted world's dependencies)")
    parser.add_argument("--save-inputs", help="write the built (canaries, candidates) to this JSON file and stop")
    args = parser.parse_args(argv)
    if args.inputs:
        stored = json.loads(Path(args.inputs).read_text())
        canaries, candidates = pd.DataFrame(stored["canaries"]), pd.DataFrame(stored["candidates"])
    else:
        canaries, candidates = planted_audit_inputs(args.people_per_level, args.counterfactuals)
    if args.save_inputs:
        Path(args.save_inputs).write_text(json.dumps({"canaries": canaries.to_dict("records"),
                                                      "candidates": candidates.to_dict("records")}))
        return []
    tmp = Path(tempfile.mkdtemp(prefix="bench-precision-"))
    quiet = lambda message: None  # noqa: E731

    def audit(lm, name: str, settings: dict, cache: SentenceNllCache | None = None, **kwargs):
        _synchronize(lm.device)
        started = time.perf_counter()
        scores, report = score_canaries(lm, canaries, candidates, ShardStore(tmp / name), settings, log=quiet,
                                        sentence_cache=cache, **kwargs)
        _synchronize(lm.device)
        return scores, report, time.perf_counter() - started

    float32 = load_model(args.model, device=args.device, dtype="float32")
    score_sentences(float32, canaries["template"].head(64).tolist())  # first-call overheads out of the timings
    reference, report32, seconds32 = audit(float32, "float32", {"dtype": "float32"})
    device = (torch.cuda.get_device_name(float32.device) if float32.device.type == "cuda" else "cpu")
    print(f"device {device}; torch {torch.__version__}; model {float32.name}; {report32.sentences_scored:,} sentences "
          f"({report32.sentences_distinct:,} distinct) in {seconds32:.1f} s in float32", flush=True)
    rows = []
    for dtype in args.dtypes:
        if dtype == "nf4":
            lm = load_model(args.model, device=args.device, load_in_4bit=True, allow_4bit_on_cpu=args.device == "cpu")
        else:
            lm = load_model(args.model, device=args.device, dtype=dtype)
        cache = SentenceNllCache(tmp / f"{dtype}.sqlite")
        raw, _, seconds_low = audit(lm, f"{dtype}-raw", {"dtype": dtype, "float32_verdicts": {"enabled": False}}, cache)
        refined, report, seconds_refined = audit(lm, dtype, {"dtype": dtype}, cache, float32_model=float32)
        without, with_ = verdict_differences(reference, raw), verdict_differences(reference, refined)
        row = {"device": device, "dtype": dtype, "sentences_distinct": report.sentences_distinct,
               "sentences_rescored": report.sentences_rescored, "share_rescored": report.share_rescored,
               "bound_nats": report.nll_error_bound_nats, "bound_share": report.nll_error_bound_share,
               "max_error_seen": report.rescored_max_error, "seconds_float32": seconds32,
               "seconds_low": seconds_low, "seconds_rescoring": seconds_refined,
               "differences_without": sum(without.values()), "differences_with": sum(with_.values()),
               "groups_without": without, "groups_with": with_}
        rows.append(row)
        print(f"{dtype:9s}: {row['differences_without']} rank-1 / verdict differences to float32 without re-scoring "
              f"({', '.join(f'{k} {v}' for k, v in without.items() if v)}), {row['differences_with']} with it; "
              f"re-scored {report.sentences_rescored:,} of {report.sentences_distinct:,} distinct sentences "
              f"({100 * report.share_rescored:.1f}%), bound max({report.nll_error_bound_nats:g} nats, "
              f"{100 * report.nll_error_bound_share:g}% of NLL), largest {dtype} error among them "
              f"{report.rescored_max_error:.3f} nats; {dtype} pass {seconds_low:.1f} s + re-scoring "
              f"{seconds_refined:.1f} s vs float32 pass {seconds32:.1f} s", flush=True)
        del lm
    return rows


if __name__ == "__main__":
    main()
