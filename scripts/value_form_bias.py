"""Does a value's form decide its rank? Measured on invented people (issue 33, deliverable 5).

    .venv/bin/python scripts/value_form_bias.py --people 60 --controls 1 --seed 0

An invented person (a control: a made-up name carrying a real person's facts) is in no training
data, so where the true value lands among the ~100 counterfactuals must not depend on what the
value looks like. This script builds controls for sample people of the bundled sample exactly as
a request audit does (`subject_requests.audit.plan_person_audit`: the person's templates,
counterfactual pools and context facts, names of the person's shape and origin), scores them
through the same engine (`wikimem.scoring.score_canaries`, SmolLM2 by default), and reads the
truth's rank on the score the controls are compared on (generic-subject calibration,
`controls.COMPARED_ALPHA`; the raw NLL too, for reference):

- the truth's summed rank (s summed over the baseline + 10 paraphrases, ranked once) and the
  per-wording rank-1 rate (M: the share of the 11 wordings with the truth first);
- their Spearman correlation with the truth label's length in the model's tokens and with the
  value's frequency in the extract (claims of that property holding it), with a bootstrap 95 % CI
  over facts; the rank-1 rate per token-length bin with the number of facts;
- before (the truth scored under its label only) and after (its short forms and aliases scored as
  the same truth, `reference.value_forms`). Both come from one scoring: "before" is the same
  scores without the form rows, so the two differ by the forms and nothing else.

Only facts with one true value are read (a fact with several has no single label length), and
only the 11 wordings M and the summed rank read are scored (not the contextualized one). Scores
are kept in a shard store and sentence cache under --work: a re-run scores nothing again. Writes
--out (JSON) and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DEFAULT_PROPERTIES = ["P27", "P106", "P509", "P103", "P1412", "P19"]
TOKEN_BINS = [(1, 1, "1"), (2, 2, "2"), (3, 3, "3"), (4, 5, "4-5"), (6, 99, "6+")]


def spearman_ci(x, y, n_boot: int, seed: int) -> dict:
    """Spearman's rho of x and y with a percentile bootstrap 95 % CI (facts resampled)."""
    import numpy as np
    from scipy.stats import spearmanr

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return {"rho": None, "ci95": [None, None], "n": int(len(x))}
    rho = float(spearmanr(x, y).statistic)
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(x), len(x))
        if np.all(x[idx] == x[idx][0]) or np.all(y[idx] == y[idx][0]):
            continue
        boots.append(spearmanr(x[idx], y[idx]).statistic)
    lo, hi = np.nanpercentile(boots, [2.5, 97.5]) if boots else (np.nan, np.nan)
    return {"rho": round(rho, 3), "ci95": [round(float(lo), 3), round(float(hi), 3)], "n": int(len(x))}


def read_ranks(scores, raw: bool):
    """Per (control, property): M over the 11 wordings and the truth's summed rank."""
    from wikimem_platform.wikimem import controls
    from wikimem_platform.wikimem.memorization import evaluate_wikimem

    frame = scores.assign(nll_h0=0.0) if raw else scores  # raw: s = -NLL(h, v)
    pairs = evaluate_wikimem(frame, alpha=controls.COMPARED_ALPHA).pairs
    return pairs[["subject_qid", "property", "M", "summed_truth_rank"]]


def summarize(facts, n_boot: int, seed: int) -> dict:
    """Correlations and per-bin rank-1 rates of one reading (columns M, rank, tokens, frequency)."""
    out = {
        "n_facts": int(len(facts)),
        "rank_1_rate": round(float(facts["M"].mean()), 4),
        "chance_rank_1_rate": round(float((1 / facts["n_candidates"]).mean()), 4),
        "mean_summed_rank_percentile": round(float((facts["rank"] / facts["n_candidates"]).mean()), 3),
        "spearman_rank_vs_tokens": spearman_ci(facts["tokens"], facts["rank"], n_boot, seed),
        "spearman_rank_vs_frequency": spearman_ci(facts["frequency"], facts["rank"], n_boot, seed + 1),
        "spearman_rank1_rate_vs_tokens": spearman_ci(facts["tokens"], facts["M"], n_boot, seed + 2),
        "by_tokens": [],
    }
    out["spearman_rank_vs_tokens_per_property"] = {
        prop: spearman_ci(block["tokens"], block["rank"], n_boot, seed)
        for prop, block in facts.groupby("property") if len(block) >= 10}
    out["by_forms"] = [{"facts": name, "n_facts": int(len(block)),
                        "rank_1_rate": round(float(block["M"].mean()), 4) if len(block) else None,
                        "mean_summed_rank_percentile": round(float((block["rank"] / block["n_candidates"]).mean()), 3)
                        if len(block) else None}
                       for name, block in (("without forms", facts[facts["n_forms"] == 0]),
                                           ("with forms", facts[facts["n_forms"] > 0]))]
    for lo, hi, name in TOKEN_BINS:
        block = facts[(facts["tokens"] >= lo) & (facts["tokens"] <= hi)]
        out["by_tokens"].append({
            "tokens": name, "n_facts": int(len(block)),
            "rank_1_rate": round(float(block["M"].mean()), 4) if len(block) else None,
            "median_summed_rank": float(block["rank"].median()) if len(block) else None,
        })
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--people", type=int, default=60, help="sample people whose facts the controls carry")
    parser.add_argument("--controls", type=int, default=1, help="invented people per sample person")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="smollm2-135m-instruct", help="a shipped model name or a model directory")
    parser.add_argument("--properties", nargs="+", default=DEFAULT_PROPERTIES)
    parser.add_argument("--max-forms", type=int, default=3, help="forms per true value in the 'after' reading")
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/wikimem_value_form_bias"))
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "value_form_bias.json")
    args = parser.parse_args(argv)
    started = time.monotonic()

    import numpy as np
    import pandas as pd
    from tqdm import tqdm

    from wikimem_platform.canaries import build_templates
    from wikimem_platform.lm.loading import load_model
    from wikimem_platform.reference import bundled
    from wikimem_platform.reference.counterfactuals import draw_counterfactuals
    from wikimem_platform.reference.properties import DEFAULT_MIN_HUMANS, build_property_table
    from wikimem_platform.reference.value_forms import DEFAULT_MAX_FORMS, form_of, is_form, without_forms
    from wikimem_platform.subject_requests.audit import plan_person_audit
    from wikimem_platform.vocabulary import CONTEXTUALIZED_KINDS
    from wikimem_platform.wikidata.extract import load_property_metadata, read_dump
    from wikimem_platform.wikimem.memorization import aliases_by_value
    from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore, score_canaries

    extract = read_dump(bundled.SAMPLE_DUMP)
    humans, claims = extract.humans, extract.claims
    metadata = load_property_metadata(bundled.SAMPLE_PROPERTIES)
    table = build_property_table(claims, metadata, min_humans=DEFAULT_MIN_HUMANS)
    properties = [p for p in args.properties if p in set(table["property"])]
    table = table[table["property"].isin(properties)].reset_index(drop=True)

    # sample people: a human with at least two single-valued facts among the properties
    mine = claims[claims["property"].isin(properties)]
    per_fact = mine.groupby(["qid", "property"]).size()
    single = per_fact[per_fact == 1].reset_index()[["qid", "property"]]
    usable = single.groupby("qid").size()
    usable = sorted(usable[usable >= 2].index)
    rng = np.random.default_rng(args.seed)
    people = list(rng.choice(usable, size=min(args.people, len(usable)), replace=False))
    print(f"{len(people)} sample people of {len(usable)} with two or more single-valued facts among "
          f"{', '.join(properties)}; {args.controls} invented control(s) each", flush=True)

    counterfactuals = draw_counterfactuals(claims, humans, properties, per_property=100, seed=0,
                                           exclude_humans=set(people))
    templates = build_templates(table)
    aliases = aliases_by_value(extract.value_aliases)
    canaries, candidates = [], []
    for qid in tqdm(people, desc="controls", unit="person"):
        subject = humans.loc[humans["qid"] == qid, ["qid", "label", "aliases", "description"]] \
            .assign(in_wikidata=True).reset_index(drop=True)
        keep = single.loc[single["qid"] == qid, "property"]
        facts = claims[(claims["qid"] == qid) & claims["property"].isin(properties)].reset_index(drop=True)
        try:
            plan = plan_person_audit(subject, facts, property_table=table, templates=templates,
                                     counterfactuals=counterfactuals, claims=claims, humans=humans, metadata=metadata,
                                     properties=list(keep), on_demand=False, n_controls=args.controls, seed=args.seed,
                                     value_aliases=aliases, truth_forms=args.max_forms)
        except ValueError as error:  # too few name parts of this shape
            tqdm.write(f"{qid}: no controls ({error})")
            continue
        if plan.control_canaries is None or plan.control_canaries.empty:
            continue
        # a control's id is its name's (shared across requests); here two people may draw the same
        # name with other facts, so the id is made unique to the person
        def own(frame):
            return frame.assign(subject_qid=frame["subject_qid"] + "@" + qid)
        # the baseline + 10 paraphrases: what M and the summed rank read (the contextualized
        # wording, which states the copied facts, enters neither)
        wordings = plan.control_canaries[plan.control_canaries["property"].isin(keep)]
        canaries.append(own(wordings[~wordings["kind"].isin(CONTEXTUALIZED_KINDS)]))
        candidates.append(own(plan.control_candidates[plan.control_candidates["property"].isin(keep)]))
    canaries = pd.concat(canaries, ignore_index=True)
    candidates = pd.concat(candidates, ignore_index=True)
    n_forms = int(is_form(candidates["value"]).sum())
    print(f"{canaries[['subject_qid', 'property']].drop_duplicates().shape[0]} control facts, "
          f"{len(candidates):,} candidates ({n_forms} of them forms of a truth)", flush=True)

    lm = load_model(args.model, device="cpu")
    work = args.work / lm.name.replace("/", "_")
    bar = tqdm(desc="scoring", unit="sentence")
    state = {"offset": 0, "last": 0}

    def progress(done: int, total: int) -> None:
        if done < state["last"]:  # a new shard
            state["offset"] += state["last"]
        state["last"] = done
        bar.total = max(bar.total or 0, state["offset"] + total)
        bar.n = state["offset"] + done
        bar.refresh()

    t0 = time.monotonic()
    scores, report = score_canaries(lm, canaries, candidates, ShardStore(work / "shards"), log=tqdm.write,
                                    progress=progress,
                                    sentence_cache=SentenceNllCache.for_model(work / "sentences", lm.fingerprint))
    bar.close()
    scoring_seconds = time.monotonic() - t0
    print(f"scores: {len(scores):,} rows, {report.sentences_computed:,} sentences through the model in "
          f"{scoring_seconds:.0f} s", flush=True)

    # one row per control fact: the truth, its label's length in tokens, its frequency, its forms
    truths = candidates[candidates["is_true"].astype(bool)][["subject_qid", "property", "value", "value_label"]]
    forms = candidates[is_form(candidates["value"])]
    form_count = forms.assign(value=[form_of(v) for v in forms["value"]]).groupby(["subject_qid", "property"]).size()
    frequency = claims.groupby(["property", "value"]).size()
    tokenizer = lm.tokenizer
    token_len = {lab: len(tokenizer(" " + lab, add_special_tokens=False)["input_ids"])
                 for lab in truths["value_label"].unique()}
    n_cands = without_forms(candidates).groupby(["subject_qid", "property"]).size()
    facts = truths.assign(
        tokens=truths["value_label"].map(token_len),
        frequency=[int(frequency.get((p, v), 0)) for p, v in zip(truths["property"], truths["value"])],
        n_forms=[int(form_count.get(k, 0)) for k in zip(truths["subject_qid"], truths["property"])],
        n_candidates=[int(n_cands.get(k, 0)) for k in zip(truths["subject_qid"], truths["property"])],
    )

    # the first k forms of each truth (they are appended in the order chosen): k = 0 is "before"
    form_rows = candidates[is_form(candidates["value"])]
    ordinal = form_rows.assign(truth=[form_of(v) for v in form_rows["value"]]) \
        .groupby(["subject_qid", "property", "truth"]).cumcount()
    order = dict(zip(zip(form_rows["subject_qid"], form_rows["property"], form_rows["value"]), ordinal))

    def first_forms(k: int):
        keep = [not f or order.get((q, p, v), k) < k
                for q, p, v, f in zip(scores["subject_qid"], scores["property"], scores["value"], is_form(scores["value"]))]
        return scores[keep]

    readings, per_fact_rows = {}, {}
    sweep = [("before", 0), *((f"after_{k}_forms", k) for k in range(1, args.max_forms)), ("after", args.max_forms)]
    for score_name, raw in (("calibrated", False), ("raw_nll", True)):
        for when, k in sweep if not raw else [("before", 0), ("after", args.max_forms)]:
            pairs = read_ranks(first_forms(k), raw).rename(columns={"summed_truth_rank": "rank"})
            merged = facts.merge(pairs, on=["subject_qid", "property"], how="inner")
            readings[f"{score_name}/{when}"] = summarize(merged, args.bootstrap, args.seed)
            if score_name == "calibrated" and when in ("before", "after"):
                per_fact_rows[when] = merged
    keys = ["subject_qid", "property"]
    per_fact = per_fact_rows["before"].merge(
        per_fact_rows["after"][keys + ["M", "rank"]].rename(columns={"M": "M_after", "rank": "rank_after"}), on=keys)
    # fairness of the forms: on invented people, a fact with forms must not be ranked first more often
    by_forms = [{"forms": name, "n_facts": int(len(b)),
                 "rank_1_rate_before": round(float(b["M"].mean()), 4) if len(b) else None,
                 "rank_1_rate_after": round(float(b["M_after"].mean()), 4) if len(b) else None}
                for name, b in (("none", per_fact[per_fact["n_forms"] == 0]),
                                ("one or more", per_fact[per_fact["n_forms"] > 0]))]
    result = {
        "what": "truth rank of invented-person controls vs the truth label's token length and the value's "
                "frequency in the extract; before = truth under its label only, after = its short forms and "
                "aliases scored as the same truth (reference.value_forms)",
        "model": lm.name, "fingerprint": lm.fingerprint, "seed": args.seed, "people": len(people),
        "controls_per_fact": args.controls, "max_forms": args.max_forms, "properties": properties,
        "default_truth_forms": DEFAULT_MAX_FORMS,
        "readings_note": "before = the truth under its label only; after_K_forms = with up to K forms; after = with "
                         "up to max_forms; the request audit's default is default_truth_forms",
        "wordings": "baseline + 10 paraphrases (M and the summed rank); compared score = NLL(h0,v) - NLL(h,v)",
        "n_control_facts": int(len(facts)), "facts_with_forms": int((facts["n_forms"] > 0).sum()),
        "facts_per_property": {k: int(v) for k, v in facts["property"].value_counts().items()},
        "form_rows": n_forms, "sentences_computed": int(report.sentences_computed),
        "scoring_seconds": round(scoring_seconds, 1), "total_seconds": round(time.monotonic() - started, 1),
        "readings": readings, "rank_1_rate_by_forms": by_forms,
        "facts": per_fact[keys + ["value", "value_label", "tokens", "frequency", "n_forms", "n_candidates",
                                  "M", "rank", "M_after", "rank_after"]].to_dict("records"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, default=float) + "\n")

    print(f"\n{len(facts)} control facts ({(facts['n_forms'] > 0).sum()} with forms), "
          f"{args.controls} control(s) per fact, {lm.name}")
    print(f"{'reading':<30}{'rank-1':>8}{'chance':>8}  {'rho(rank, tokens) [95% CI]':<30}{'rho(rank, freq) [95% CI]':<28}"
          f"{'rank-1 / pct rank, facts with forms'}")
    for name, r in readings.items():
        t, f = r["spearman_rank_vs_tokens"], r["spearman_rank_vs_frequency"]
        with_forms = r["by_forms"][1]
        print(f"{name:<30}{r['rank_1_rate']:>8.3f}{r['chance_rank_1_rate']:>8.3f}  "
              f"{t['rho']!s:>6} [{t['ci95'][0]}, {t['ci95'][1]}]{'':<8}{f['rho']!s:>6} [{f['ci95'][0]}, {f['ci95'][1]}]"
              f"{'':<6}{with_forms['rank_1_rate']} / {with_forms['mean_summed_rank_percentile']}")
    print("\nrank-1 rate per token-length bin (calibrated): tokens, n facts, before -> after")
    for b0, b1 in zip(readings["calibrated/before"]["by_tokens"], readings["calibrated/after"]["by_tokens"]):
        print(f"  {b0['tokens']:>4} {b0['n_facts']:>5}  {b0['rank_1_rate']!s:>7} -> {b1['rank_1_rate']!s:>7}"
              f"   median summed rank {b0['median_summed_rank']} -> {b1['median_summed_rank']}")
    print("rank-1 rate by forms (calibrated):", by_forms)
    print(f"\nwrote {args.out}; {time.monotonic() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
