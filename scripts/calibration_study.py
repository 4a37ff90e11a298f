"""The calibration study (issue 17.5) on real people, outside Dagster, for one shipped model.

    .venv/bin/python scripts/calibration_study.py --model gemma-3-270m --per-cohort 4 --include Q76

The bundled sample with the data defaults (cohorts of 100 by web presence, 100 counterfactuals
per property), the first N subjects of each cohort (plus --include, e.g. Barack Obama, Q76, into
the well-known group) and the given properties; canaries as the canary assets build them (11
wordings + the contextualized one); scores through the engine with a shard store and sentence
cache under --work (a re-run scores nothing again), the all-part look-alikes on top; then every
calibration setting, well-known vs lesser-known. Prints the settings table, the look-alike rank-1
shares, the raw-vs-calibrated disagreement flags, and every included subject's truth rank per
wording under each setting; writes the tables as CSV under --work.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def real_inputs(properties: list[str], per_cohort: int, include: list[str]):
    """(subjects, canaries, candidates) of the bundled sample with the data assets' defaults."""
    import pandas as pd

    from wikimem_platform.reference import bundled
    from wikimem_platform.canaries import build_canaries, build_templates
    from wikimem_platform.reference.cohorts import WELL_KNOWN, add_web_presence, draw_cohorts
    from wikimem_platform.reference.counterfactuals import build_candidates, draw_counterfactuals
    from wikimem_platform.reference.properties import DEFAULT_MIN_HUMANS, build_property_table
    from wikimem_platform.wikidata.extract import load_property_metadata, read_dump

    extract = read_dump(bundled.SAMPLE_DUMP)
    humans = add_web_presence(extract.humans, pd.read_csv(bundled.SAMPLE_WEB_PRESENCE))
    table = build_property_table(extract.claims, load_property_metadata(bundled.SAMPLE_PROPERTIES),
                                 min_humans=DEFAULT_MIN_HUMANS)
    eligible = set(extract.claims.loc[extract.claims["property"].isin(table["property"]), "qid"])
    cohorts = draw_cohorts(humans, eligible)
    has_all = extract.claims[extract.claims["property"].isin(properties)].groupby("qid")["property"].nunique()
    usable = cohorts[cohorts["qid"].map(has_all).eq(len(properties))]
    subjects = usable.groupby("cohort", sort=False).head(per_cohort)
    extra = humans[humans["qid"].isin(include) & ~humans["qid"].isin(subjects["qid"])]
    subjects = pd.concat([subjects, extra.assign(cohort=WELL_KNOWN)[["qid", "label", "aliases", "cohort"]]],
                         ignore_index=True)
    counterfactuals = draw_counterfactuals(extract.claims, humans, properties, per_property=100, seed=0,
                                           exclude_humans=set(cohorts["qid"]) | set(subjects["qid"]))
    candidates = build_candidates(subjects, extract.claims, counterfactuals)
    chosen = table[table["property"].isin(properties)]
    canaries = build_canaries(subjects, extract.claims, table, build_templates(chosen))
    canaries = canaries[canaries["property"].isin(properties)]
    return subjects, canaries, candidates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="gemma-3-270m", help="a shipped model name or a model directory")
    parser.add_argument("--properties", nargs="+", default=["P27", "P106"])
    parser.add_argument("--per-cohort", type=int, default=4)
    parser.add_argument("--include", nargs="*", default=["Q76"], help="more well-known subjects (QIDs)")
    parser.add_argument("--work", type=Path, default=ROOT / ".calibration_study")
    args = parser.parse_args(argv)

    import pandas as pd

    from wikimem_platform.wikimem import calibration
    from wikimem_platform.canaries.encoders import load_encoder
    from wikimem_platform.reference.cohorts import WELL_KNOWN
    from wikimem_platform.wikimem.memorization import evaluate_wikimem, prepare_scores, variant_metrics
    from wikimem_platform.lm.loading import load_model
    from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore, score_canaries

    started = time.monotonic()
    subjects, canaries, candidates = real_inputs(args.properties, args.per_cohort, args.include)
    print(f"{len(subjects)} subjects: {subjects.groupby('cohort')['label'].apply(list).to_dict()}", flush=True)
    lm = load_model(args.model, device="cpu")
    work = args.work / lm.name.replace("/", "_")
    sentence_cache = SentenceNllCache.for_model(work / "sentences", lm.fingerprint)
    scores, report = score_canaries(lm, canaries, candidates, ShardStore(work / "shards"),
                                    sentence_cache=sentence_cache)
    print(f"scores: {len(scores):,} rows, {report.sentences_computed:,} sentences computed "
          f"in {report.seconds:.0f} s", flush=True)
    t0 = time.monotonic()
    with_all, names, computed = calibration.score_all_parts(lm, scores, canaries, candidates,
                                                            sentence_cache=sentence_cache)
    print(f"all-part look-alikes: {computed:,} sentences computed in {time.monotonic() - t0:.0f} s", flush=True)
    print(names.to_string(index=False))

    embed = load_encoder()
    groups = subjects.set_index("qid")["cohort"]
    study = calibration.calibration_study(with_all, groups, WELL_KNOWN, embed=embed)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    print("\nSETTINGS (positive = well-known):")
    print(study.settings.round(3).to_string(index=False))
    print(f"best: {study.best}")
    print("\nLOOK-ALIKE RANK-1 SHARES (own NLL):")
    print(study.lookalike_summary.round(3).to_string(index=False))

    result = evaluate_wikimem(with_all.assign(cohort=with_all["subject_qid"].map(groups)), embed=embed)
    flagged = calibration.flag_disagreements(result.candidates, result.pairs)
    flagged = flagged.merge(subjects[["qid", "label"]].rename(columns={"qid": "subject_qid"}), on="subject_qid")
    print(f"\nDISAGREEMENT (|M - M_raw| >= {calibration.DISAGREEMENT_M_GAP}): "
          f"{int(flagged[calibration.DISAGREEMENT].sum())} of {len(flagged)} pairs")
    print(flagged[["label", "property", "cohort", "M", calibration.RAW_M, calibration.DISAGREEMENT]]
          .round(3).to_string(index=False))

    # Every included subject's truth rank in all 12 wordings (the contextualized one last) per setting.
    included = calibration.with_equivalents(with_all[with_all["subject_qid"].isin(args.include)], embed)
    for setting in calibration.SETTINGS:
        frame = calibration.setting_frame(included, setting)
        _, variants = variant_metrics(prepare_scores(frame, setting.alpha), outer_keys=())
        for (qid, prop), block in variants.groupby(["subject_qid", "property"]):
            label = subjects.set_index("qid").at[qid, "label"]
            print(f"{label} {prop} {setting.name:>22}: truth rank per wording "
                  f"{block.sort_values('variant_id')['truth_rank'].astype(int).tolist()}; "
                  f"rank 1 in {int(block['memorized'].sum())} of {len(block)}")
    for name, frame in (("settings", study.settings), ("pairs", study.pairs), ("variants", study.variants),
                        ("lookalikes", study.lookalikes), ("lookalike_summary", study.lookalike_summary),
                        ("memorization_flagged", flagged)):
        frame.to_csv(work / f"{name}.csv", index=False)
    print(f"\ntables under {work}; {time.monotonic() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
