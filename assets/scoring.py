"""Per-model scoring assets: one `models` partition per registered model release (name@revision)."""

import pandas as pd
from dagster import (
    AssetExecutionContext,
    Config,
    ConfigMapping,
    DynamicOut,
    DynamicOutput,
    Failure,
    MetadataValue,
    OpExecutionContext,
    Out,
    Output,
    asset,
    graph_asset,
    op,
)
from pydantic import Field

from assets.metadata import preview
from assets.partitions import models_partitions
from resources.placement import LM_OP_TAGS, LM_POOL
from resources.scoring import RegistryResource, ScoringResource
from wikimem_platform.canaries.encoders import load_encoder
from wikimem_platform.versions import source_version
from wikimem_platform.vocabulary import LENIENT, M_THRESHOLD
from wikimem_platform.wikimem import controlled_rates, controls
from wikimem_platform.wikimem.calibration import DISAGREEMENT, flag_disagreements
from wikimem_platform.wikimem.control_scoring import audit_cohort
from wikimem_platform.security.urls import redact_url
from wikimem_platform.wikimem.memorization import (
    H_CENSORED,
    aliases_by_value,
    count_alias_equivalents,
    EQUIVALENCE_THRESHOLD,
    evaluate_wikimem,
    with_truth_censored,
)
from wikimem_platform.wikimem.scoring import (
    combined_precision,
    planned_variants,
    score_canaries,
    SCORE_COLUMNS,
    SCORING_VERSION,
    ShardStore,
)

GROUP = "scoring"
# ScoringReport counters summed over the shard steps into the scores metadata; sentences_rescored:
# distinct sentences of a bfloat16 / NF4 run re-scored in float32 so that its verdicts are
# float32's (wikimem_platform.lm.precision), out of sentences_distinct.
SHARD_REPORT_COUNTS = ("shards_total", "shards_reused", "shards_scored", "sentences_scored", "sentences_computed",
                       "sentences_distinct", "sentences_rescored", "continuations", "continuations_censored")


# What the shard steps of an endpoint release sent to its server (EndpointClient's Usage), summed
# into the scores metadata.
ENDPOINT_COUNTS = tuple(f"endpoint_{name}" for name in ("requests", "retries", "prompts", "prompt_tokens", "completion_tokens"))


class ScoresConfig(Config):
    properties: list[str] = Field(default=[], description="Score only these properties (Wikidata ids); empty = every property of the canaries.")
    max_subjects_per_cohort: int = Field(default=0, description="Subjects per cohort to score; 0 = every subject (small numbers for quick audits).")


def select_canaries(canaries: pd.DataFrame, subjects: pd.DataFrame, config: ScoresConfig) -> pd.DataFrame:
    """The canaries this run scores (a quick audit may take a few subjects and properties)."""
    chosen = canaries
    if config.properties:
        chosen = chosen[chosen["property"].isin(config.properties)]
    if config.max_subjects_per_cohort:
        keep = subjects.groupby("cohort", sort=False).head(config.max_subjects_per_cohort)["qid"]
        chosen = chosen[chosen["subject_qid"].isin(keep)]
    return chosen


@op(out={"shards": DynamicOut(pd.DataFrame, description="The canaries of one property shard."),
         "planned": Out(pd.DataFrame, description="The property of every shard planned (collect_scores checks none is lost).")},
    description="The canaries to score, one dynamic output per property shard.")
def plan_score_shards(context: OpExecutionContext, config: ScoresConfig, canaries: pd.DataFrame, subjects: pd.DataFrame):
    chosen = select_canaries(canaries, subjects, config)
    properties = sorted(chosen["property"].unique())
    context.log.info(f"{len(chosen):,} canaries in {len(properties)} property shard(s): {', '.join(properties)}")
    for prop in properties:
        yield DynamicOutput(chosen[chosen["property"] == prop], mapping_key=prop, output_name="shards")
    yield Output(pd.DataFrame({"property": pd.Series(properties, dtype=str)}), output_name="planned")


@op(pool=LM_POOL, tags=LM_OP_TAGS, description="Score one property shard (reused when already in the shard store).")
def score_shard(
    context: OpExecutionContext,
    scoring: ScoringResource,
    model_registry: RegistryResource,
    shard_canaries: pd.DataFrame,
    candidates: pd.DataFrame,
) -> pd.DataFrame:
    """Score one shard; returns where its scores are (the shard store keeps the numbers, so a
    re-run or a retried step reads them instead of scoring again) and what it cost."""
    entry = model_registry.registry().get(context.partition_key)
    lm = scoring.load(entry, served=True)
    where = (f"endpoint {redact_url(entry.source)}, requests in flight: {lm.details.get('concurrency')}"
             if lm.capabilities.served else scoring.device)
    context.log.info(f"{entry.key} ({entry.source_kind}) on {where}, fingerprint {lm.fingerprint}")
    store = ShardStore(scoring.shards_for(context.partition_key))
    sent_before = lm.usage()
    _, report = score_canaries(lm, shard_canaries, candidates, store, scoring.settings(),
                               log=context.log.info, sentence_cache=scoring.sentence_cache(lm))
    planned = report.shards  # of the canaries this access scores (`scorable_canaries`)
    # What this step sent to a served model (0 for a local one): the run's requests and tokens.
    sent = {f"endpoint_{name}": value - sent_before.get(name, 0)
            for name, value in lm.usage().items()}
    if not planned:  # every wording of this property puts the value first: nothing a top-k server can rank
        return pd.DataFrame([{"property": context.get_mapping_key(), "shard_path": "", "model_fingerprint": lm.fingerprint,
                              "precision": report.precision, "seconds": 0.0,
                              **{name: 0 for name in [*SHARD_REPORT_COUNTS, *ENDPOINT_COUNTS]}}])
    return pd.DataFrame([{
        "property": context.get_mapping_key(), "shard_path": str(store.path(shard)), "model_fingerprint": lm.fingerprint, "precision": report.precision,
        **{name: getattr(report, name) for name in SHARD_REPORT_COUNTS}, "seconds": report.seconds,
        **{name: sent.get(name, 0) if number == 0 else 0 for name in ENDPOINT_COUNTS},
    } for number, shard in enumerate(planned)])


@op(description="Gather the scored shards into the scores table; refuse a table with a planned shard missing.")
def collect_scores(context: OpExecutionContext, shard_reports: list[pd.DataFrame], planned: pd.DataFrame) -> Output[pd.DataFrame]:
    reports = pd.concat(shard_reports, ignore_index=True) if shard_reports else pd.DataFrame()
    # A step lost with its worker (a Celery worker killed mid-step) leaves no event in the run, so
    # "Re-execute from failure" does not select it and the fan-in would silently drop its property.
    missing = sorted(set(planned["property"]) - set(reports.get("property", [])))
    if missing:
        raise Failure(
            description=f"{len(missing)} of {len(planned)} planned property shard(s) were not scored: {', '.join(missing)}. "
                        "Their step was lost (e.g. with a worker that died; its events went with it, so re-execution "
                        "from failure does not select it). Re-execute all steps: finished shards are read back from "
                        "the shard store, not scored again.")
    frames = [pd.read_parquet(path) for path in reports.get("shard_path", []) if path]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=SCORE_COLUMNS)
    counts = {name: int(reports[name].sum()) if len(reports) else 0 for name in SHARD_REPORT_COUNTS}
    sent = {name: int(reports[name].sum()) for name in ENDPOINT_COUNTS if name in reports and reports[name].sum()}
    seconds = float(reports["seconds"].sum()) if len(reports) else 0.0
    return Output(
        table,
        metadata={
            "rows": len(table),
            "model": context.partition_key,
            "model_fingerprint": reports["model_fingerprint"].iloc[0] if len(reports) else "",
            **counts,
            **sent,  # an endpoint release's requests, retries, prompts and tokens sent
            "sentences_per_second": round(counts["sentences_scored"] / seconds, 1) if seconds else 0.0,
            "precision": combined_precision(reports["precision"]) if len(reports) else "",
            "share_rescored_float32": (round(counts["sentences_rescored"] / counts["sentences_distinct"], 4)
                                       if counts["sentences_distinct"] else 0.0),
        },
    )


def _scores_run_config(config: dict) -> dict:
    """`ops: scores: config:` (what audits have always set) goes to the planning step."""
    return {"plan_score_shards": {"config": config}}


@graph_asset(group_name=GROUP, partitions_def=models_partitions, kinds={"pytorch", "pandas"}, code_version=SCORING_VERSION,
             config=ConfigMapping(config_fn=_scores_run_config, config_schema=ScoresConfig.to_config_schema()))
def scores(canaries: pd.DataFrame, candidates: pd.DataFrame, subjects: pd.DataFrame):
    """NLL(h, v), NLL(h0, v), NLL(S(h), v) for every canary and candidate. One step per property
    shard (pool "lm"), so the multiprocess, Celery or Kubernetes executors run them in parallel."""
    shards, planned = plan_score_shards(canaries, subjects)
    return collect_scores(shards.map(lambda shard: score_shard(shard, candidates)).collect(), planned)


class MemorizationConfig(Config):
    alpha: float = Field(default=1.0, description="Weight of the value the model prefers when a pair has several true values.")
    m_threshold: float = Field(default=M_THRESHOLD, description="Memorized at threshold: M >= m_threshold.")
    equivalence_threshold: float = Field(default=EQUIVALENCE_THRESHOLD, description="Counterfactuals this similar to the truth (encoder cosine) count as equivalent.")


@asset(group_name=GROUP, partitions_def=models_partitions, kinds={"pandas", "pytorch"},
       code_version=source_version("wikimem_platform.wikimem.memorization", "wikimem_platform.wikimem.calibration"))
def memorization(
    context: AssetExecutionContext, config: MemorizationConfig, scores: pd.DataFrame, subjects: pd.DataFrame,
    value_aliases: pd.DataFrame, canaries: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """Per (subject, property): M, strict / lenient / threshold flags, z*; Table 1 as metadata.

    A counterfactual counts as a ground truth when its label is one of the truth's Wikidata aliases
    or its encoder embedding is close to the truth's (footnote 7). n_variants_planned (the wordings
    this release's access scores) and truth_censored (a top-logprobs release: a ground truth left
    the server's top k in some wording) are what the memorization check reads."""
    cohorts = subjects[["qid", "label", "cohort"]].rename(columns={"qid": "subject_qid", "label": "subject"})
    aliases = aliases_by_value(value_aliases)
    result = evaluate_wikimem(
        scores.merge(cohorts[["subject_qid", "cohort"]], on="subject_qid", how="left"),
        alpha=config.alpha,
        embed=load_encoder(),
        value_aliases=aliases,
        equivalence_threshold=config.equivalence_threshold,
        m_threshold=config.m_threshold,
    )
    n_candidates = result.variants.groupby(["subject_qid", "property"])["n_candidates"].max().rename("n_candidates")
    # M_raw (alpha = 0) beside M, flagged where they differ by half the wordings or more (issue 17.5).
    pairs = flag_disagreements(result.candidates, result.pairs).join(n_candidates, on=["subject_qid", "property"]).merge(
        cohorts[["subject_qid", "subject"]], on="subject_qid", how="left"
    )
    pairs = pairs.join(planned_variants(canaries, H_CENSORED in scores.columns), on=["subject_qid", "property"])
    pairs = with_truth_censored(pairs, scores)
    table1 = result.cohorts.reset_index()
    numbers = {}
    for row in table1.to_dict("records"):
        cohort = row.get("cohort", "all")
        numbers[f"M_bar_pct_{cohort}"] = float(row["M_bar_pct"])
        if pd.notna(row["z_star_mean"]):  # undefined when no pair of the cohort is memorized
            numbers[f"z_star_mean_{cohort}"] = float(row["z_star_mean"])
        numbers[f"H_M0_{cohort}"] = int(row["H_M0"])
    context.log.info(f"Table 1 for {context.partition_key}: {numbers}")
    return Output(
        pairs,
        metadata={
            "rows": len(pairs),
            **numbers,
            f"{LENIENT}_pairs": int(pairs[LENIENT].sum()),
            f"{DISAGREEMENT}_pairs": int(pairs[DISAGREEMENT].sum()),
            "candidates_equivalent_by_alias": count_alias_equivalents(scores, aliases),
            "table_1": MetadataValue.md(table1.round(3).to_markdown(index=False)),
            "top_memorized": preview(pairs.sort_values(["M", "z_star"], ascending=False)[["subject", "property", "M", "z_star", "cohort"]]),
        },
    )


class ControlsConfig(Config):
    n_controls: int = Field(default=controls.DEFAULT_N_CONTROLS, ge=0, description=(
        "Invented people per audited person, given the person's facts and scored the same way; a fact then counts "
        "only when it beats them (p <= alpha). At least 19 for p to reach 0.05; 0 = no controls (an empty table)."))
    alpha: float = Field(default=controls.DEFAULT_ALPHA, gt=0, lt=1, description="The level a fact must beat the controls at.")
    m_threshold: float = Field(default=M_THRESHOLD, description="Memorized at threshold: M >= m_threshold (as memorization's).")
    seed: int = Field(default=0, description="Seed of the invented names (stored with the table).")


@asset(group_name=GROUP, partitions_def=models_partitions, kinds={"pytorch", "pandas"}, pool=LM_POOL, op_tags=LM_OP_TAGS,
       code_version=source_version("wikimem_platform.wikimem.control_scoring", "wikimem_platform.wikimem.controls",
                                  "wikimem_platform.wikimem.controlled_rates"))
def controlled_memorization(
    context: AssetExecutionContext, config: ControlsConfig, scoring: ScoringResource, model_registry: RegistryResource,
    memorization: pd.DataFrame, scores: pd.DataFrame, canaries: pd.DataFrame, candidates: pd.DataFrame,
    subjects: pd.DataFrame, claims: pd.DataFrame, humans: pd.DataFrame, value_aliases: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """Every audited fact against invented people with the same facts: the memorization table with
    the controls' verdict beside the paper's flag, Table 1 with and without controls, and the
    well-known vs lesser-known gap with a bootstrap CI both ways (metadata)."""
    if config.n_controls == 0 or not len(scores):
        context.log.info("no controls asked for (n_controls = 0) or nothing scored: an empty table")
        empty = controlled_rates.controlled_pairs(memorization.iloc[:0], pd.DataFrame(columns=controls.COMPARISON_COLUMNS))
        return Output(empty.assign(control_names=pd.Series(dtype=object)), metadata={"controls_per_person": 0})
    entry = model_registry.registry().get(context.partition_key)
    lm = scoring.load(entry, served=True)
    done = audit_cohort(
        lm, scores, canaries, candidates, subjects, claims, humans, ShardStore(scoring.shards_for(context.partition_key)),
        scoring.settings(), scoring.sentence_cache(lm), n_controls=config.n_controls, alpha=config.alpha,
        m_threshold=config.m_threshold, seed=config.seed, embed=load_encoder(), value_aliases=aliases_by_value(value_aliases),
        log=context.log.info)
    pairs = controlled_rates.controlled_pairs(memorization, done.comparison, config.m_threshold)
    pairs["control_names"] = pairs["subject_qid"].map(lambda q: done.names.get(q, []))
    table = controlled_rates.rates(pairs)
    gaps = controlled_rates.cohort_gap(pairs)
    report = done.scored.report
    context.log.info(f"controls for {context.partition_key}: {len(done.scored.compared)} facts compared, "
                     f"{report.sentences_computed:,} sentences computed; {table.round(1).to_dict('records')}")
    numbers = {f"{name}_{row['cohort']}": float(row[name]) for row in table.to_dict("records")
               for name in (f"{controlled_rates.WITHOUT}_pct", f"{controlled_rates.WITH}_pct")}
    return Output(pairs, metadata={
        "rows": len(pairs),
        "facts_compared": len(done.scored.compared),
        "controls_per_person": config.n_controls,
        "alpha": config.alpha,
        "control_sentences_computed": report.sentences_computed,
        **numbers,
        "table_1_with_and_without_controls": MetadataValue.md(table.round(2).to_markdown(index=False)),
        "cohort_gap": MetadataValue.md(gaps.round(2).to_markdown(index=False) if len(gaps)
                                       else "one cohort only: no well-known vs lesser-known gap"),
        "beats_controls": preview(pairs[pairs[controlled_rates.BEATS]][
            ["subject", "property", "M", "p_value", "verdict", "cohort"]]),
    })
