"""Does a model know people better in their own language? People of the bundled sample audited on
Gemma 3 270M in the language of their citizenship (German, French, Polish) and in English.

Each person's facts (occupation, citizenship, place of birth by default) are planned as a request
in two languages (`subject_requests.languages.plan_request`): the own language from its
hand-written templates and labels, English as always; the same counterfactual values where both
languages label them. Per language the share of facts memorized (M >= 0.8, WikiMem's calibrated
ranking over 11 wordings) and ranked first in some wording (M > 0), with 95 % bootstrap CIs over
people, and per fact whether the own-language M is above, equal to or below the English one (a
sign test over the facts that differ).

No invented-person controls: this compares two ways of asking about the same people, it does not
give verdicts about them. Writes the per-fact rows and the summary as JSON (`--out`).

    python scripts/language_study.py --per-language 15 --out docs/language_study.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd
from scipy.stats import binomtest

from wikimem_platform.canaries import build_templates
from wikimem_platform.lm.loading import load_model
from wikimem_platform.reference import bundled
from wikimem_platform.reference.cohorts import add_web_presence
from wikimem_platform.reference.counterfactuals import draw_counterfactuals
from wikimem_platform.reference.properties import build_property_table, DEFAULT_MIN_HUMANS
from wikimem_platform.subject_requests.answer import model_verdicts
from wikimem_platform.subject_requests.audit import audit_person_on_model
from wikimem_platform.subject_requests.languages import COUNTRY_LANGUAGES, plan_request
from wikimem_platform.subject_requests.reference import property_metadata
from wikimem_platform.wikidata.extract import read_dump
from wikimem_platform.wikimem.controlled_rates import share_ci
from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore
from wikimem_platform.vocabulary import LANGUAGE, M_THRESHOLD

PROPERTIES = ["P106", "P27", "P19"]
LANGUAGES = ("de", "fr", "pl")


def people_of(language: str, humans: pd.DataFrame, claims: pd.DataFrame, terms: pd.DataFrame, n: int) -> pd.DataFrame:
    """The n people with the most web presence whose citizenship writes `language` and who have a
    label in it and every studied property."""
    countries = {country for country, codes in COUNTRY_LANGUAGES.items() if language in codes}
    citizens = set(claims.loc[(claims["property"] == "P27") & claims["value"].isin(countries), "qid"])
    labelled = set(terms.loc[(terms["language"] == language) & terms["label"].notna(), "qid"])
    has_all = claims[claims["property"].isin(PROPERTIES)].groupby("qid")["property"].nunique() == len(PROPERTIES)
    chosen = humans[humans["qid"].isin(citizens & labelled & set(has_all[has_all].index))]
    return chosen.nlargest(n, "web_presence") if "web_presence" in chosen else chosen.head(n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="gemma-3-270m")
    parser.add_argument("--per-language", type=int, default=15)
    parser.add_argument("--counterfactuals", type=int, default=20)
    parser.add_argument("--out", default="docs/language_study.json")
    parser.add_argument("--work", default=".language_study", help="shards and sentence cache (kept: a rerun resumes)")
    parser.add_argument("--table", action="store_true", help="print the README tables of --out and stop")
    parser.add_argument("--max-minutes", type=float, default=float("inf"), help="stop after this long (every language keeps its people)")
    args = parser.parse_args()
    if args.table:
        stored = json.loads(Path(args.out).read_text())
        print(markdown(stored["summary"]) + "\n\n" + by_property(stored["facts"]))
        return

    extract = read_dump(bundled.SAMPLE_DUMP)
    metadata = property_metadata()
    humans = add_web_presence(extract.humans, pd.read_csv(bundled.SAMPLE_WEB_PRESENCE))
    claims, terms = extract.claims, extract.terms
    table = build_property_table(claims, metadata, min_humans=DEFAULT_MIN_HUMANS)
    table = table[table["property"].isin(PROPERTIES)]
    templates = build_templates(table)
    people = {code: people_of(code, humans, claims, terms, args.per_language) for code in LANGUAGES}
    studied = set().union(*(set(p["qid"]) for p in people.values()))
    # generous pools: a language keeps only the values it labels
    pool = draw_counterfactuals(claims, humans, PROPERTIES, per_property=4 * args.counterfactuals, seed=0,
                                exclude_humans=studied)
    lm = load_model(args.model)
    work = Path(args.work)
    cache = SentenceNllCache(work / f"nll-{args.model}.sqlite")
    labels = dict(zip(table["property"], table["label"]))
    rows, started = [], time.monotonic()
    # the languages interleaved: a run stopped early (--max-minutes) still has every language
    order = [(code, person) for rank in range(args.per_language) for code, chosen in people.items()
             for person in chosen.iloc[rank:rank + 1].to_dict("records")]
    for code, person in order:
        if time.monotonic() - started > 60 * args.max_minutes:
            print(f"stopped after {args.max_minutes} minutes", flush=True)
            break
        subject = humans[humans["qid"] == person["qid"]][["qid", "label", "aliases", "description"]]
        facts = claims[(claims["qid"] == person["qid"]) & claims["property"].isin(PROPERTIES + ["P21"])]
        plan = plan_request(subject.reset_index(drop=True), facts.reset_index(drop=True), [code, "en"], terms=terms,
                            property_table=table, templates=templates,
                            counterfactuals=_per_language_pool(pool, terms, code, args.counterfactuals),
                            claims=claims, humans=humans, metadata=metadata)
        for language in plan.languages:
            own = plan.in_language(language)
            audit = audit_person_on_model(lm, own, ShardStore(work / "shards"), cache, log=lambda m: None, extract=False)
            verdicts, _ = model_verdicts(audit, own, labels)
            for fact in verdicts.to_dict("records"):
                rows.append({"group": code, LANGUAGE: language, "qid": person["qid"], "name": person["label"],
                             "property": fact["property"], "M": fact["M"], "n_variants": fact["n_variants"],
                             "n_candidates": fact["n_candidates"], "values": fact["values"]})
        print(f"{time.monotonic() - started:7.0f}s {code} {person['qid']}: "
              + ", ".join(f"{r[LANGUAGE]} {r['property']} M={r['M']:.2f}" for r in rows if r["qid"] == person["qid"]),
              flush=True)
        write(args, rows, started)  # after every person: a stopped run keeps what it measured
    print(json.dumps(write(args, rows, started), indent=1, ensure_ascii=False))


def write(args, rows: list[dict], started: float) -> dict:
    """The per-fact rows and their summary as JSON at --out; returns the summary."""
    out = pd.DataFrame(rows)
    summary = summarize(out)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"model": args.model, "properties": PROPERTIES,
                                          "counterfactuals": args.counterfactuals, "m_threshold": M_THRESHOLD,
                                          "seconds": round(time.monotonic() - started),
                                          "summary": summary, "facts": rows},
                                         indent=1, ensure_ascii=False, default=str))
    return summary


def _per_language_pool(pool: pd.DataFrame, terms: pd.DataFrame, code: str, n: int) -> pd.DataFrame:
    """Up to n values per property that the language labels (dates: all), so that both languages
    rank the truth against about as many values; English gets the same values."""
    labelled = set(terms.loc[(terms["language"] == code) & terms["label"].notna(), "qid"])
    keep = pool["value"].isin(labelled) | ~pool["value"].astype(str).str.match(r"^Q\d+$")
    return pool[keep].groupby("property", group_keys=False).head(n).reset_index(drop=True)


def summarize(out: pd.DataFrame) -> dict:
    """Per group (citizens of a language) and language asked: facts, memorized share and first-ranked
    share with CIs; own language against English fact by fact."""
    summary = {}
    if out.empty:
        return summary
    for (group, language), block in out.groupby(["group", LANGUAGE]):
        per_person_mem = [(int((b["M"] >= M_THRESHOLD).sum()), len(b)) for _, b in block.groupby("qid")]
        per_person_any = [(int((b["M"] > 0).sum()), len(b)) for _, b in block.groupby("qid")]
        summary[f"{group}/{language}"] = {"people": block["qid"].nunique(), "facts": len(block),
                                          "memorized": list(share_ci(per_person_mem)), "ranked_first_somewhere": list(share_ci(per_person_any)),
                                          "mean_M": float(block["M"].mean())}
    for group, block in out.groupby("group"):
        wide = block.pivot_table(index=["qid", "property"], columns=LANGUAGE, values="M").dropna()
        if group not in wide or "en" not in wide:
            continue
        higher, lower = int((wide[group] > wide["en"]).sum()), int((wide[group] < wide["en"]).sum())
        test = binomtest(higher, higher + lower) if higher + lower else None
        summary[f"{group}: own language vs English"] = {
            "facts": len(wide), "own_higher": higher, "english_higher": lower, "equal": len(wide) - higher - lower,
            "sign_test_p": None if test is None else float(test.pvalue),
            "memorized_own_only": int(((wide[group] >= M_THRESHOLD) & (wide["en"] < M_THRESHOLD)).sum()),
            "memorized_english_only": int(((wide["en"] >= M_THRESHOLD) & (wide[group] < M_THRESHOLD)).sum())}
    return summary


def markdown(summary: dict) -> str:
    """The summary as the README's tables: per group and language asked, then own vs English."""
    names = {"de": "German", "fr": "French", "pl": "Polish", "en": "English"}
    pct = lambda v: f"{100 * v[0]:.0f} % [{100 * v[1]:.0f}, {100 * v[2]:.0f}]"  # noqa: E731
    lines = ["| people (citizens of) | asked in | people | facts | memorized (M ≥ 0.8) [95 % CI] | ranked first in some wording | mean M |",
             "|---|---|---|---|---|---|---|"]
    for key, row in summary.items():
        if "/" in key:
            group, language = key.split("/")
            lines.append(f"| {names[group]} | {names[language]} | {row['people']} | {row['facts']} | {pct(row['memorized'])} "
                         f"| {pct(row['ranked_first_somewhere'])} | {row['mean_M']:.2f} |")
    lines += ["", "| people (citizens of) | facts | own language higher M | English higher | equal | sign test p | memorized only in own | only in English |",
              "|---|---|---|---|---|---|---|---|"]
    for key, row in summary.items():
        if key.endswith("vs English"):
            group = key.split(":")[0]
            p = "" if row["sign_test_p"] is None else f"{row['sign_test_p']:.3f}"
            lines.append(f"| {names[group]} | {row['facts']} | {row['own_higher']} | {row['english_higher']} | {row['equal']} "
                         f"| {p} | {row['memorized_own_only']} | {row['memorized_english_only']} |")
    return "\n".join(lines)


def by_property(facts: list[dict]) -> str:
    """Mean M per property, own language against English, per group: which facts each language reveals."""
    frame = pd.DataFrame(facts)
    names = {"de": "German", "fr": "French", "pl": "Polish"}
    lines = ["| people (citizens of) | property | mean M, own language | mean M, English | facts |", "|---|---|---|---|---|"]
    for (group, prop), block in frame.groupby(["group", "property"]):
        own, english = block[block[LANGUAGE] == group]["M"], block[block[LANGUAGE] == "en"]["M"]
        lines.append(f"| {names[group]} | {prop} | {own.mean():.2f} | {english.mean():.2f} | {len(own)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
