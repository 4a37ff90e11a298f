"""Data-subject request assets (group "requests", one `requests` partition per request).

Wiring only: the person's canaries, the scoring, the verdicts and the letter live in
wikimem_platform.subject_requests. Logs carry the request id and counts, never the person's
name or facts; those stay in the instance's storage (Parquet, the answer files).
"""

from datetime import UTC, datetime
from typing import Literal

import pandas as pd
from dagster import (
    AllPartitionMapping,
    AssetExecutionContext,
    AssetIn,
    AssetOut,
    Config,
    Failure,
    MetadataValue,
    Output,
    asset,
    multi_asset,
)
from pydantic import Field

from assets.metadata import by_release
from assets.partitions import requests_partitions
from assets.reports import run_lineage
from resources.placement import LM_OP_TAGS, LM_POOL
from resources.scoring import RegistryResource, ScoringResource
from wikimem_platform.canaries.encoders import load_encoder
from wikimem_platform.reference.value_forms import DEFAULT_MAX_FORMS
from wikimem_platform.security.keys import subject_reference
from wikimem_platform.subject_requests.answer import compose_answer, models_lineage, release_outcomes, retain_by_release
from wikimem_platform.subject_requests.answer_files import answer_dir
from wikimem_platform.subject_requests.audit import audit_person_on_releases, person_subject, PersonPlan
from wikimem_platform.subject_requests.languages import default_languages, plan_request
from wikimem_platform.subject_requests.controller import ControllerError, load_controller
from wikimem_platform.subject_requests.intake import RequestStatus
from wikimem_platform.subject_requests.letter import write_answer
from wikimem_platform.subject_requests.reference import property_metadata
from wikimem_platform.versions import source_version
from wikimem_platform.unlearning.forget_sets import DEFAULT_FORGET_CRITERION
from wikimem_platform.vocabulary import CRITERIA, M_THRESHOLD, MAX_NEW_TOKENS
from wikimem_platform.wikimem import controls
from wikimem_platform.wikimem.memorization import aliases_by_value

GROUP = "requests"


class RequestPlanConfig(Config):
    properties: list[str] = Field(default=[], description="Audit only these properties (Wikidata ids); empty = every fact of the person.")
    on_demand: bool = Field(default=True, description="Build templates and counterfactual pools for properties the reference data lacks.")
    n_controls: int = Field(default=controls.DEFAULT_N_CONTROLS, ge=0, description=(
        "Invented people given the person's facts and scored the same way; each verdict then needs p <= control_alpha "
        "against them (19 is the fewest at which p can reach 0.05). 0 = none: a verdict rests on M alone, and a fact "
        "ranked first in one wording by chance reads as 'weakly associated'. Only facts the model ranks first in some "
        "wording are compared; their controls' sentences are shared with every person of the same name shape and origin."))
    control_alpha: float = Field(default=controls.DEFAULT_ALPHA, gt=0, lt=1, description=(
        "Level of the comparison with the invented people: a fact is memorized or weakly associated only at p <= "
        "control_alpha. Scoring stops a fact's controls once enough of them match the person to put p above it."))
    max_controls: int = Field(default=controls.MAX_CONTROLS, ge=0, description=(
        "A fact that beats all n_controls invented people without a control's margin (p would exceed control_alpha "
        "had one more matched it) gets more, doubling (39, 79, ...) up to this many, before it is called memorized "
        "or weakly associated: p can then reach 0.01. At most n_controls: no more."))
    truth_forms: int = Field(default=DEFAULT_MAX_FORMS, ge=0, description=(
        "Other forms of each true value scored as the same truth, at most this many per value: the value's aliases "
        "('United States', 'USA' for 'United States of America') from the extract and the shipped short forms, "
        "letters only, never a counterfactual's label or alias. A long label otherwise loses to short counterfactuals "
        "on summed NLL. The controls get the same forms. 0 = the label only (docs/value_form_bias.json)."))


class RequestScoresConfig(Config):
    max_new_tokens: int = Field(default=MAX_NEW_TOKENS, description="Greedy completion length of the model's answers.")


class RequestAnswerConfig(Config):
    m_threshold: float = Field(default=M_THRESHOLD, description="Memorized at threshold: M >= m_threshold.")
    alpha: float = Field(default=1.0, description="Weight of the value the model prefers when a fact has several true values.")
    forget_criterion: Literal[CRITERIA] = Field(default=DEFAULT_FORGET_CRITERION, description="Which facts enter the forget set.")


@multi_asset(
    outs={
        "request_subject": AssetOut(group_name=GROUP, kinds={"sql", "pandas"}, description="The person: QID or private key, name, aliases."),
        "request_facts": AssetOut(group_name=GROUP, kinds={"pandas"}, description="The person's facts, as rows of the claims table."),
    },
    partitions_def=requests_partitions,
    code_version=source_version("wikimem_platform.subject_requests"),
)
def request_subject(context: AssetExecutionContext, model_registry: RegistryResource, humans: pd.DataFrame, claims: pd.DataFrame):
    """The request's subject and facts: from the extract (QID) or from the requester's facts file."""
    store = model_registry.requests()
    request = store.get(context.partition_key)
    if request.status in (RequestStatus.RECEIVED, RequestStatus.QUEUED, RequestStatus.FAILED, RequestStatus.INTERRUPTED):
        request = store.set_status(request.id, RequestStatus.AUDITING)  # its run has started
    subject, facts = person_subject(request, humans, claims, property_metadata())
    context.log.info(f"{request.id}: {request.kind} request, {len(facts)} facts, due {request.due_at:%Y-%m-%d}")
    meta = {"status": request.status, "kind": request.kind, "due_at": request.due_at.isoformat(timespec="seconds"),
            "in_wikidata": request.subject_qid is not None}
    # never the QID or the key in the clear: a keyed pseudonym (the UI shows metadata to every role)
    yield Output(subject, "request_subject", metadata={**meta, "subject": subject_reference(request.subject_key)})
    yield Output(facts, "request_facts", metadata={"rows": len(facts), "properties": int(facts["property"].nunique())})


@multi_asset(
    outs={
        "request_canaries": AssetOut(group_name=GROUP, kinds={"pandas"}, description="The person's canaries (11 wordings + contextualized, h0, S(h))."),
        "request_candidates": AssetOut(group_name=GROUP, kinds={"pandas"}, description="Per property: the truths (with their other forms) and the counterfactual values."),
        "request_coverage": AssetOut(group_name=GROUP, kinds={"pandas"}, description="Per property: audited, built on demand, or not covered and why."),
        "request_control_canaries": AssetOut(group_name=GROUP, kinds={"pandas"}, description="The same canaries for invented people with the person's facts (n_controls)."),
        "request_control_candidates": AssetOut(group_name=GROUP, kinds={"pandas"}, description="The invented people's candidates: the person's, per control."),
    },
    partitions_def=requests_partitions,
    code_version=source_version("wikimem_platform.subject_requests", "wikimem_platform.canaries"),
)
def request_canaries(
    context: AssetExecutionContext,
    config: RequestPlanConfig,
    model_registry: RegistryResource,
    request_subject: pd.DataFrame,
    request_facts: pd.DataFrame,
    humans: pd.DataFrame,
    claims: pd.DataFrame,
    property_table: pd.DataFrame,
    canary_templates: pd.DataFrame,
    counterfactuals: pd.DataFrame,
    value_aliases: pd.DataFrame,
    entity_terms: pd.DataFrame,
):
    """Canaries and candidates exactly as in a cohort audit, on-demand templates for the rest; each
    true value's other forms as the same truth (`truth_forms`); in every language the request names
    (English and the person's citizenship's by default), from that language's templates and labels."""
    request = model_registry.requests().get(context.partition_key)
    languages = request.language_codes() or default_languages(request_facts)
    plan = plan_request(
        request_subject, request_facts, languages, terms=entity_terms, property_table=property_table,
        templates=canary_templates, counterfactuals=counterfactuals, claims=claims, humans=humans,
        metadata=property_metadata(), properties=config.properties, on_demand=config.on_demand,
        n_controls=config.n_controls, control_alpha=config.control_alpha, max_controls=config.max_controls,
        value_aliases=aliases_by_value(value_aliases),
        truth_forms=config.truth_forms,
    )
    counts = plan.coverage["coverage"].value_counts().to_dict()
    context.log.info(f"{context.partition_key}: {len(plan.canaries)} canaries in {', '.join(plan.languages)}, "
                     f"{len(plan.candidates)} candidates, {plan.n_controls} invented controls; coverage {counts}")
    yield Output(plan.canaries, "request_canaries", metadata={"rows": len(plan.canaries)})
    yield Output(plan.candidates, "request_candidates", metadata={"rows": len(plan.candidates)})
    yield Output(plan.coverage, "request_coverage", metadata={"rows": len(plan.coverage), "coverage": MetadataValue.json(counts)})
    stored_canaries, stored_candidates = plan.stored_controls()  # the controls and the person's kin names
    control_canaries = stored_canaries if plan.n_controls else plan.canaries.iloc[:0]
    control_candidates = stored_candidates if plan.n_controls else plan.candidates.iloc[:0]
    yield Output(control_canaries, "request_control_canaries", metadata={"rows": len(control_canaries), "controls": plan.n_controls})
    yield Output(control_candidates, "request_control_candidates", metadata={"rows": len(control_candidates)})


@multi_asset(
    outs={
        "request_scores": AssetOut(group_name=GROUP, kinds={"pytorch", "pandas"}, description="NLL(h, v), NLL(h0, v), NLL(S(h), v) per registered release."),
        "request_completions": AssetOut(group_name=GROUP, kinds={"pytorch", "pandas"}, description="Greedy completions of the canary prefixes per release."),
        "request_control_scores": AssetOut(group_name=GROUP, kinds={"pytorch", "pandas"}, description="The invented controls' NLLs per release (empty without controls)."),
        "request_model_audits": AssetOut(group_name=GROUP, kinds={"pandas"}, description="Per registered release: audited or why not, cache use, time."),
    },
    partitions_def=requests_partitions,
    code_version=source_version("wikimem_platform.wikimem.scoring", "wikimem_platform.subject_requests"),
    pool=LM_POOL,
    op_tags=LM_OP_TAGS,
)
def request_scores(
    context: AssetExecutionContext,
    config: RequestScoresConfig,
    scoring: ScoringResource,
    model_registry: RegistryResource,
    request_subject: pd.DataFrame,
    request_facts: pd.DataFrame,
    request_canaries: pd.DataFrame,
    request_candidates: pd.DataFrame,
    request_coverage: pd.DataFrame,
    request_control_canaries: pd.DataFrame,
    request_control_candidates: pd.DataFrame,
    value_aliases: pd.DataFrame,
):
    """The person on every registered release, one at a time (an endpoint release through its
    server); a release that fails to load or score is recorded as not audited and the others go on."""
    plan = PersonPlan(request_subject, request_facts, request_canaries, request_candidates, request_coverage,
                      request_control_canaries, request_control_candidates)
    result = audit_person_on_releases(
        # an endpoint release is audited where it is served (its prompt log-probabilities and completions)
        model_registry.registry().list(), lambda entry: scoring.load(entry, served=True), plan,
        shards_for=lambda key: scoring.request_shards_for(context.partition_key, key),  # the request's own: one purge
        sentence_cache=scoring.sentence_cache, settings=scoring.settings(), label=context.partition_key,
        log=context.log.info, warn=context.log.warning, max_new_tokens=config.max_new_tokens, value_aliases=value_aliases,
    )
    audits = result.audits
    yield Output(result.scores, "request_scores", metadata={"rows": len(result.scores), "models_audited": int(audits["audited"].sum())})
    yield Output(result.completions, "request_completions", metadata={"rows": len(result.completions)})
    yield Output(result.control_scores, "request_control_scores", metadata={"rows": len(result.control_scores)})
    yield Output(audits, "request_model_audits", metadata={
        "models": len(audits), "models_failed": int((~audits["audited"]).sum()),
        "sentences_computed": int(audits["sentences_computed"].sum()),
        "control_sentences_computed": int(audits["control_sentences_computed"].sum()),
        "audits": MetadataValue.md(audits.drop(columns=["fingerprint"]).round(1).to_markdown(index=False)),
    })


@asset(
    group_name=GROUP,
    partitions_def=requests_partitions,
    # Every release's cohort memorization (the retain utility of an erasure's verification);
    # releases never audited are simply missing.
    ins={"memorization": AssetIn(partition_mapping=AllPartitionMapping(), metadata={"allow_missing_partitions": True})},
    kinds={"sql", "pandas"},
    code_version=source_version("wikimem_platform.subject_requests", "wikimem_platform.unlearning"),
)
def request_answer(
    context: AssetExecutionContext,
    config: RequestAnswerConfig,
    scoring: ScoringResource,
    model_registry: RegistryResource,
    memorization,  # dict of releases (a bare DataFrame when one exists, None when none)
    request_subject: pd.DataFrame,
    request_facts: pd.DataFrame,
    request_canaries: pd.DataFrame,
    request_candidates: pd.DataFrame,
    request_coverage: pd.DataFrame,
    request_scores: pd.DataFrame,
    request_completions: pd.DataFrame,
    request_model_audits: pd.DataFrame,
    request_control_canaries: pd.DataFrame,
    request_control_scores: pd.DataFrame,
    property_table: pd.DataFrame,
    value_aliases: pd.DataFrame,
) -> Output[pd.DataFrame]:
    """The answer: verdicts per release and property, JSON + HTML letter, lineage; marks it answered."""
    store = model_registry.requests()
    request = store.get(context.partition_key)
    plan = PersonPlan(request_subject, request_facts, request_canaries, request_candidates, request_coverage,
                      control_canaries=request_control_canaries)
    entries = {e.key: e for e in model_registry.registry().list()}
    outcomes = release_outcomes(request_model_audits, request_scores, request_completions, request_control_scores, entries)
    labels = dict(zip(property_table["property"], property_table["label"]))
    labels.update(dict(zip(request_coverage["property"], request_coverage["property_label"])))
    settings = {"run_config": context.run.run_config or {}, "answer": config.model_dump(), "scoring": scoring.settings()}
    lineage = run_lineage(context, {"models": models_lineage(outcomes, entries)}, settings)
    storage = context.instance.storage_directory()
    try:
        controller = load_controller(storage)
    except ControllerError as error:
        raise Failure(description=f"the controller configuration is broken: {error} (`wikimem controller set`)") from None
    if controller is None:
        context.log.warning("no controller configured (`wikimem controller set`): the letter marks what must be "
                            "completed before it is sent")
    document, table = compose_answer(request, plan, outcomes, labels, lineage, embed=load_encoder(),
                                     controller=controller.model_dump() if controller else None,
                                     m_threshold=config.m_threshold, alpha=config.alpha, forget_criterion=config.forget_criterion,
                                     release_pairs=by_release(context, "memorization", memorization), retain_by_model=retain_by_release(entries),
                                     value_aliases=aliases_by_value(value_aliases), letter_language=request.letter_language)
    folder = answer_dir(storage, request.id)
    write_answer(document, folder)
    request = store.set_status(request.id, RequestStatus.ANSWERED, when=datetime.now(UTC))
    document["request"] = request.summary()
    files = write_answer(document, folder, pdf=True)  # with the answered status and time, and printed
    if files.pdf is None:
        context.log.warning("no Chromium: the letter was not printed to answer.pdf (apt-get install -y chromium)")
    context.log.info(f"{request.id}: answered ({len(table)} verdicts over {len(outcomes)} releases)")
    counts = table["verdict"].value_counts().to_dict() if len(table) else {}
    return Output(
        table.drop(columns=["completion"]),
        metadata={
            "status": request.status,
            "due_at": request.due_at.isoformat(timespec="seconds"),
            "answered_at": request.answered_at.isoformat(timespec="seconds"),
            "headline": document["headline"],
            "verdicts": MetadataValue.json(counts),
            "memorized": int(counts.get("memorized", 0)),
            "weakly_associated": int(counts.get("weakly associated", 0)),
            "not_memorized": int(counts.get("not memorized", 0)),
            "answer_html": MetadataValue.path(str(files.html)),
            "answer_json": MetadataValue.path(str(files.json)),
            "technical_annex": MetadataValue.path(str(files.annex)),
            **({"answer_pdf": MetadataValue.path(str(files.pdf))} if files.pdf else {}),
            "config_hash": lineage["config_hash"][:16],
            **verification_metadata(document.get("verification") or []),
        },
    )


def verification_metadata(checks: list[dict]) -> dict:
    """The latest erasure verification as numbers the UI plots per partition."""
    if not checks:
        return {}
    check = checks[-1]
    meta = {"verified_on": check["after"], "erased": bool(check["erased"]),
            "facts_forgotten": int(check["counts"]["forgotten"]), "facts_still_memorized": int(check["counts"]["still memorized"])}
    if check["retain"]["utility"] is not None:
        meta["retain_utility"] = float(check["retain"]["utility"])
    if check["privleak_auroc_after"] is not None:
        meta["privleak_auroc_after"] = float(check["privleak_auroc_after"])
    return meta
