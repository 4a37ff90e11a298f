"""The commands of `wikimem` (registry, controller, inquiries, requests, forget sets, unlearning,
diffs, demo): each reads its arguments and calls library functions.

They read the registry and the stored results directly; what runs on the Dagster instance (the
demo, `request run`, withdrawing a removed release's runs, a purge's runs and event logs) goes
through `cli.instance`, the command line's one door to the Dagster layer.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from cli import instance
from wikimem_platform.lm.loading import ModelLoadError
from wikimem_platform.registry import check_source, infer_source_kind, Registry, RegistryError, RELEASE_FIELDS
from wikimem_platform.reports import across_models, compliance as reports
from wikimem_platform.security import access_log, purge
from wikimem_platform.security.urls import redact_url
from wikimem_platform.storage import StoredResults, json_scalar, report_dir, to_json, path_safe_key
from wikimem_platform.subject_requests import answer, answer_files, inquiry as inq, intake, reference
from wikimem_platform.subject_requests.controller import ControllerError, load_controller, save_controller
from wikimem_platform.unlearning import (
    export as unlearning_export,
    methods,
    stored as unlearning_stored,
    verify as unlearning_verify,
)
from wikimem_platform.unlearning.forget_sets import write_jsonl
from wikimem_platform.unlearning.methods import UnlearnConfig
from wikimem_platform.wikimem.release_diff import diff_records, diff_summary, diff_utility, release_diff

# The demo: the bundled Wikidata sample with every data default (100 + 100 subjects, 100
# counterfactuals per property), and a narrow audit so it ends within ~15 minutes on 2 CPU cores.
DEMO_MODELS = ["smollm2-135m-instruct"]
DEMO_PROPERTIES = ["P106", "P27"]  # occupation, country of citizenship
DEMO_SUBJECTS_PER_COHORT = 1
DEMO_CRM_EXAMPLES = 20  # generation examples per CRM paradigm
DEMO_MIA_PER_CLASS = 50  # member / non-member texts
REFERENCE_SELECTION = "group:data,group:canaries"
MODEL_SELECTION = "group:scoring,group:summaries,group:reports"
# What the across-models sensor runs after an audit on a live instance (no sensor runs here).
ACROSS_MODELS_SELECTION = "group:across_models"


class CliError(Exception):
    """A user error (a bad argument, an unknown key, a refused file): `main` prints `error: <message>`, then
    each extra line, to stderr and exits with status 2, without a traceback."""

    status = 2

    def __init__(self, message: str, *extra: str, status: int | None = None):
        super().__init__(message)
        self.message, self.extra = message, extra
        if status is not None:
            self.status = status

    @classmethod
    def of(cls, error: Exception, *extra: str) -> CliError:
        """A library's refusal as a user error (a KeyError's text is its argument: str() would quote it)."""
        return cls(str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error), *extra)


def _registry(args) -> Registry:
    return Registry(args.registry_url)


def _stored(args) -> StoredResults:
    return StoredResults(args.storage)


def _print_json(obj) -> None:
    print(to_json(obj))


# --------------------------------------------------------------------------- models

def _register_endpoint(registry: Registry, args) -> int:
    """`models register NAME --endpoint URL --served-model ID`: probed, then stored (or nothing)."""
    if not args.served_model:
        raise CliError("--endpoint needs --served-model (the model id the server serves it under)")
    try:
        entry = registry.register_endpoint(
            args.name or args.source, args.endpoint, args.served_model, access=args.access or "prompt-logprobs",
            api_key_env=args.api_key_env, tokenizer=args.tokenizer, prompt_mode=args.prompt_mode, top_k=args.top_k,
            revision=args.revision, family=args.family,
            parameter_count=args.parameter_count, variant=args.variant,
            **{field: getattr(args, field) for field in RELEASE_FIELDS},
        )
    except RegistryError as error:
        raise CliError.of(error, "nothing was registered") from error
    probe = json.loads(entry.endpoint).get("probe") or {}
    print(f"registered {entry.key} (endpoint {redact_url(entry.source)}, served model {args.served_model}, "
          f"access {args.access or 'prompt-logprobs'})")
    if probe.get("nll_token_ids") is not None:
        print(f"probe: {probe['sentence']!r} {probe['local_token_count']} tokens, NLL {probe['nll_token_ids']:.3f} nats "
              f"as token ids (start tokens {probe['start_token_ids']}); as text {probe['text_token_count']} tokens, "
              f"NLL {probe['nll_text']:.3f}")
    if probe.get("nll_continuation") is not None:
        print(f"probe: the end of {probe['sentence']!r} read from the server's top {probe['top_k']} "
              f"(tokens keyed by {probe['top_keys']}): {probe['nll_continuation']:.3f} nats"
              + (", censored" if probe.get("continuation_censored") else ""))
    if probe.get("prompt_mode") == "text":
        print(f"scoring sends text prompts, {probe['text_prefix']!r} in front: {probe['aligned_text_token_count']} "
              f"tokens, NLL {probe['nll_aligned_text']:.3f} nats")
    for note in probe.get("notes", []):
        print(f"note: {note}")
    return 0


def cmd_models_register(args) -> int:
    registry = _registry(args)
    if args.endpoint:
        return _register_endpoint(registry, args)
    if args.served_model or args.api_key_env or args.access or args.tokenizer or args.prompt_mode or args.top_k:
        raise CliError("--served-model, --api-key-env, --access, --top-k, --tokenizer and --prompt-mode go with "
                       "--endpoint URL")
    try:
        if not args.defer_check:
            check_source(args.kind or infer_source_kind(args.source), args.source)
        entry = registry.register_source(
            args.source, name=args.name, revision=args.revision, source_kind=args.kind, family=args.family,
            parameter_count=args.parameter_count, variant=args.variant, quantization=args.quantization,
            trust_remote_code=args.trust_remote_code or None, task=args.task,
            **{field: getattr(args, field) for field in RELEASE_FIELDS},
        )
    except RegistryError as error:
        raise CliError.of(error, "nothing was registered") from error
    print(f"registered {entry.key} ({entry.source_kind}: {entry.source}, {entry.task}, {entry.variant})")
    print("With `dagster dev` running on this DAGSTER_HOME, the registry sensor audits it within seconds.")
    return 0


def cmd_models_list(args) -> int:
    entries = _registry(args).list()
    rows = [{"key": e.key, "display_name": e.display_name, "source_kind": e.source_kind, "source": redact_url(e.source), "family": e.family, "variant": e.variant,
             "task": e.task, "parameter_count": e.parameter_count, "quantization": e.quantization, "status": e.status,
             "registered_at": e.registered_at.isoformat(timespec="seconds"),
             **({field: getattr(e, field) for field in RELEASE_FIELDS[1:]} if args.json else {})} for e in entries]
    if args.json:
        _print_json(rows)
    elif rows:
        print(pd.DataFrame(rows).to_string(index=False))
    else:
        print("no registered model")
    return 0


def cmd_models_edit(args) -> int:
    """Change what letters tell a person about a release."""
    fields = {field: getattr(args, field) for field in RELEASE_FIELDS if getattr(args, field) is not None}
    if not fields:
        raise CliError(f"nothing to change: give at least one of {', '.join('--' + f.replace('_', '-') for f in RELEASE_FIELDS)}")
    try:
        entry = _registry(args).update(args.key, **fields)
    except (KeyError, RegistryError) as error:
        raise CliError.of(error) from error
    print(f"{entry.key}: {', '.join(fields)} changed; letters written from now on use them")
    return 0


# `wikimem controller set`: each field of the controller, with the help its option shows.
CONTROLLER_ARGS = {
    "name": "the controller's legal name", "address": "postal address",
    "contact": "where people write to (e-mail or web form)", "dpo": "the data protection officer: name and contact",
    "supervisory_authority": "the authority a complaint can be lodged with, with its address or web site",
    "automated_decisions": "the Art. 15(1)(h) statement on automated decision-making (default: none)",
    "retention_days": "days a request's data and answer are kept after it is answered, then purged (default 90)",
    "access_log_days": "days a row of the access log is kept (default 365)",
}
CONTROLLER_INTEGERS = {"retention_days", "access_log_days"}


def cmd_controller_set(args) -> int:
    fields = {name: getattr(args, name) for name in CONTROLLER_ARGS}
    try:
        controller = save_controller(_stored(args).storage_dir, **fields)
    except ControllerError as error:
        raise CliError(f"{error}; nothing was stored") from error
    print(f"controller: {controller.name}; every answer written from now on names it")
    return 0


def cmd_controller_show(args) -> int:
    try:
        controller = load_controller(_stored(args).storage_dir)
    except ControllerError as error:
        raise CliError.of(error) from error
    if controller is None:
        print("no controller configured: letters say so until `wikimem controller set` is run")
        return 0
    for name, value in controller.model_dump().items():
        print(f"{name}: {value}")
    return 0


def cmd_models_remove(args) -> int:
    try:
        entry = _registry(args).remove(args.key)
    except KeyError as error:
        raise CliError.of(error) from error
    withdrawn = _withdraw("models", entry.key)
    print(f"removed {entry.key}: no further re-audits{withdrawn}; its results and reports are kept")
    return 0


def _withdraw(partitions: str, key: str) -> str:
    """Cancel the queued and running runs of a removed release or request and delete its partition
    on the instance (when there is one); what was done, for the message."""
    withdrawn = instance.withdraw_partition(partitions, key)
    if withdrawn is None:
        return ""
    canceled, existed = withdrawn
    return ((f"; {len(canceled)} queued or running run(s) canceled ({', '.join(canceled)})" if canceled else "")
            + ("; its partition deleted (its materializations stay in the event log)" if existed else ""))


# --------------------------------------------------------------------------- inquiries

def cmd_inquiry(args) -> int:
    stored = _stored(args)
    models = [inq.ModelRef.of(e) for e in _registry(args).list()]
    answer = inq.person_inquiry(args.query, stored, models, args.criterion)
    if args.html:
        Path(args.html).write_text(inq.inquiry_html(answer), encoding="utf-8")
    if args.json:
        _print_json(answer)
        return 0 if answer["subjects"] else 1
    for requested in answer["request_answers"]:
        _print_request_answer(requested)
    if not answer["subjects"]:
        if answer["request_answers"]:
            return 0
        extra = answer["known_but_not_audited"]
        note = f" ({len(extra)} match(es) in the data, never audited: `wikimem request add --qid ...` audits one)" if extra else ""
        print(f"{args.query!r} is not among the audited subjects{note}")
        return 1
    for subject in answer["subjects"]:
        print(f"{subject['label']} ({subject['qid']}, {subject['cohort']})")
    for model in answer["models"]:
        if not model["audited"]:
            print(f"\n{model['model']}: not audited yet")
            continue
        if not model["facts"]:
            print(f"\n{model['model']}: audited, but not on this person (a narrowed audit)")
            continue
        print(f"\n{model['model']}: {model['n_memorized']} of {model['n_facts']} audited facts memorized ({args.criterion})")
        for fact in model["facts"]:
            values = "; ".join(v["value_label"] for v in fact["values"])
            z = "" if fact["z_star"] is None else f" z*={fact['z_star']:.2f}"
            cue = " [cued]" if fact["cue_flag"] else ""
            mark = "*" if fact["memorized"] else " "
            print(f" {mark} {fact['property_label']} = {values}: M={fact['M']:.2f}{z}{cue}")
    if args.html:
        print(f"\nHTML: {args.html}")
    return 0


# --------------------------------------------------------------------------- data-subject requests

def _requests(args) -> intake.RequestStore:
    return intake.RequestStore(args.registry_url)


def _existing_requests(args, request_ids: list[str]) -> None:
    """A request id that names no request is said so, not reported as "not answered yet"."""
    store = _requests(args)
    for request_id in request_ids:
        try:
            store.get(request_id)
        except KeyError as error:
            raise CliError.of(error) from error


def cmd_request_add(args) -> int:
    stored = _stored(args)
    try:
        ref = reference.intake_reference(stored)
        if args.qid:
            subject = intake.resolve_qid(args.qid, ref.humans)
        elif args.name is not None:
            subject = intake.resolve_name(args.name, ref.humans, ref.claims)
        else:
            subject = intake.resolve_person(intake.load_facts_file(args.facts, ref.metadata, ref.covered))
        request = _requests(args).add(subject, args.kind, args.reference, languages=args.languages,
                                      letter_language=args.letter_language)
    except intake.IntakeError as error:
        raise CliError.of(error, "nothing was stored") from error
    where = f"Wikidata {subject.qid}" if subject.qid else "not in Wikidata: facts supplied"
    languages = request.languages or "English and the languages of the person's citizenship"
    print(f"received {request.id}: {request.kind} request about {request.subject_label} ({where}), "
          f"due {request.due_at:%Y-%m-%d}; audited in: {languages}; letter in: {request.letter_language}")
    models = Registry(args.registry_url).list()
    if models:
        print(f"With `dagster dev` running on this DAGSTER_HOME, the request sensor audits it on the "
              f"{len(models)} registered release(s) within seconds; `wikimem request show {request.id}` follows it.")
    else:
        print("No model is registered yet: the request waits until one is (`wikimem models register ...`).")
    return 0


# The subject column of `request list` and `request show` (the whole name is in --json).
SUBJECT_COLUMN_CHARS = 60


def _request_rows(requests) -> list[dict]:
    return [{"id": r.id, "kind": r.kind, "subject": _cut(r.subject_label, SUBJECT_COLUMN_CHARS), "qid": r.subject_qid or "-", "status": r.status,
             "received": f"{r.received_at:%Y-%m-%d}", "due": f"{r.due_at:%Y-%m-%d}",
             "answered": f"{r.answered_at:%Y-%m-%d}" if r.answered_at else "-"} for r in requests]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def cmd_request_list(args) -> int:
    requests = _requests(args).list(args.status)
    if args.json:
        _print_json([r.summary() | {"subject_label": r.subject_label} for r in requests])
    elif requests:
        print(pd.DataFrame(_request_rows(requests)).to_string(index=False))
    else:
        print("no request")
    return 0


def _print_request_answer(document: dict) -> None:
    request = document["request"]
    print(f"\n{request['kind']} request {request['id']} about {document['subject']['label']}, answered "
          f"{document['generated_at'][:10]}: {document['headline']}")
    for model in document["models"]:
        if not model["audited"]:
            print(f"  {model['model']}: not audited ({model['error']})")
            continue
        for fact in model["facts"]:
            z = "" if fact["z_star"] is None else f" z*={fact['z_star']:.2f}"
            said = f" -> {answer.one_line(fact['completion']['output'])!r}" if fact["completion"] else ""
            asked = f" [{fact['language']}]" if fact.get("language") else ""
            print(f"  {model['model']}: {fact['property_label']}{asked} = {' / '.join(fact['values'])}: {fact['verdict']} "
                  f"(M={fact['M']:.2f}{z}, rank {fact['truth_rank']:.0f} of {fact['n_candidates']}){said}")
    for item in document["not_covered"]:
        asked = f" [{item['language']}]" if item.get("language") else ""
        print(f"  not covered{asked}: {item['property_label']} ({item['property']}): {item['reason']}")


def cmd_request_show(args) -> int:
    if args.json:
        request, document = _read_request(args, args.id, "show request (json)")
        _print_json({"request": request.summary() | {"subject_label": request.subject_label}, "answer": document})
        return 0
    show_request(args, args.id)
    return 0


def _read_request(args, request_id: str, action: str) -> tuple[intake.SubjectRequest, dict | None]:
    """A request and its answer document (None before it is answered); the read goes in the access log."""
    try:
        request = _requests(args).get(request_id)
    except KeyError as error:
        raise CliError.of(error) from error
    document = answer_files.read_answer(_stored(args).storage_dir, request.id)
    _log_read(args, request.id, action)
    return request, document


def show_request(args, request_id: str) -> None:
    """One request as `wikimem request show` prints it: its row, deadline, run and answer, with the
    answer's files (`request run` ends with it too)."""
    request, document = _read_request(args, request_id, "show request")
    folder = answer_files.answer_dir(_stored(args).storage_dir, request.id)
    print(pd.DataFrame(_request_rows([request])).to_string(index=False))
    state = intake.deadline_state(request)
    print(f"deadline: {state.message}")
    if request.error:
        print(f"error: {request.error}")
    _print_run_progress(request.id)
    if document is None:
        print("no answer yet")
        return
    _print_request_answer(document)
    pdf = folder / answer_files.PDF
    print(f"\nletter: {folder / answer_files.LETTER}" + (f"\npdf:    {pdf}" if pdf.is_file() else "")
          + f"\nannex:  {folder / answer_files.ANNEX}\njson:   {folder / answer_files.DOCUMENT}")


def cmd_request_run(args) -> int:
    """Audit a request now through Dagster's Python API (no daemon), with a progress bar."""
    _existing_requests(args, [args.id])
    store = _requests(args)
    if store.get(args.id).is_purged:
        raise CliError(f"request {args.id!r} was purged: only its record is left, there is nothing to audit")
    if not Registry(args.registry_url).list():
        raise CliError(f"request {args.id!r}: no model is registered (`wikimem models register ...`); nothing was run")
    home = instance.prepared_home()
    print(f"DAGSTER_HOME={home}: auditing {args.id} on every registered release (the run is in the UI's run list)")
    runner = instance.runner()
    try:
        with instance.dagster_home(home):
            outcome = runner.process_request(args.id, REFERENCE_SELECTION)
    except runner.RunInterrupted as stopped:
        try:
            _still_stored(store, args.id, stopped.run_id)
            store.set_status(args.id, intake.RequestStatus.INTERRUPTED, error=f"audit run {stopped.run_id} {stopped.reason}")
            raise CliError(f"request {args.id!r}: its audit run {stopped.run_id} was {stopped.reason} and is canceled; "
                           f"the request is marked interrupted (`wikimem request run {args.id}` resumes from the scores "
                           "already stored)", status=SIGNAL_STATUS.get(stopped.reason, CliError.status)) from None
        except CliError as error:
            # Whether or not its step has ended (`stopped.running`: still inside a model's forward
            # pass), a model interrupted mid-forward may abort in torch's teardown at exit.
            error.leave_at_once = True
            raise
    if not outcome.success:
        _still_stored(store, args.id, outcome.run_id)
        store.set_status(args.id, intake.RequestStatus.FAILED, error=f"audit run {outcome.run_id} failed")
        raise CliError(f"request {args.id!r}: the audit run {outcome.run_id} failed (its event log is in the Dagster UI "
                       f"on {home}); the request is marked failed", *outcome.failures)
    show_request(args, args.id)
    return 0


# A run stopped by a signal exits as a shell reports a process killed by it (128 + the signal's number).
SIGNAL_STATUS = {"interrupted (SIGINT)": 130, "interrupted (SIGTERM)": 143}


def _still_stored(store: intake.RequestStore, request_id: str, run_id: str | None) -> None:
    """A request removed while its run ran (`wikimem request remove`) ends the command in one line."""
    try:
        store.get(request_id)
    except KeyError:
        raise CliError(f"request {request_id!r} was removed while its audit run {run_id} ran: the run was stopped "
                       "and nothing more is stored for the request") from None


def _print_run_progress(request_id: str) -> None:
    """The request's newest run on the instance (when there is one): its state, steps done and
    newest progress line from the run's event log."""
    run = instance.request_run_progress(request_id)
    if run is False:  # no instance
        return
    if run is None:
        print("run: none yet on this instance")
        return
    print(f"run {run['run_id']}: {run['status'].lower()}, {run['steps_done']} step(s) done"
          + (f"; {run['progress']}" if run["progress"] else ""))


def cmd_request_verify(args) -> int:
    _existing_requests(args, [args.id])
    registry = _registry(args)
    sources = {e.key: e.source for e in registry.list() if e.source_kind == "hf-dir"}
    try:
        key = registry.get(args.release).key
    except KeyError:
        key = args.release
    try:
        check = unlearning_stored.request_verification(_stored(args), args.id, key, sources)
    except (FileNotFoundError, ValueError) as error:
        raise CliError.of(error) from error
    if args.json:
        if args.purge and check["erased"]:
            check["purged"] = _purge(args, args.id, access_log.cli_user()).line()
        _print_json(check)
        return 0 if check["erased"] else 1
    print(f"{args.id}: {check['before']} -> {check['after']}: " + ", ".join(f"{k} {v}" for k, v in check["counts"].items()))
    for fact in check["facts"]:
        print(f"  {fact['property_label']} = {' / '.join(fact['values'])}: {fact['before']} (M={fact['M_before']:.2f}) -> "
              f"{fact['after']} (M={fact['M_after']:.2f}): {fact['outcome']}")
    retain = check["retain"]
    if retain["utility"] is None:
        print("retain utility: not measured (no cohort audit of both revisions)")
    else:
        print(f"retain utility: {retain['still_memorized']} of {retain['retain_facts']} other people's facts still memorized "
              f"({retain['utility']:.0%})")
    if check["privleak_auroc_after"] is not None:
        print(f"loss-attack AUROC of the forget set: {check['privleak_auroc_before']:.2f} -> {check['privleak_auroc_after']:.2f} "
              "(0.5 = no trace left)")
    print("erased" if check["erased"] else "NOT erased: some facts are still (or newly) memorized")
    if args.purge and check["erased"]:  # a completed erasure: nothing of the person is needed any more
        print(_purge(args, args.id, access_log.cli_user()).line())
    elif args.purge:
        print(f"{args.id} is not purged: its erasure is not complete")
    return 0 if check["erased"] else 1


def _purge(args, request_id: str, who: str) -> purge.PurgeReport:
    """Every copy of one request's personal data deleted (`security.purge`), the instance's runs
    and event logs included where there is an instance."""
    try:
        return purge.purge_request(request_id, _stored(args).storage_dir, _requests(args), who,
                                   erase_runs=instance.run_eraser())
    except KeyError as error:
        raise CliError.of(error) from error


def cmd_request_remove(args) -> int:
    if args.purge:
        report = _purge(args, args.id, access_log.cli_user())
        print(report.line() + "; the request's record (id, kind, dates, outcome, who purged it) stays")
        return 0
    try:
        request = _requests(args).remove(args.id)
    except KeyError as error:
        raise CliError.of(error) from error
    folder = answer_files.answer_dir(_stored(args).storage_dir, request.id)
    withdrawn = _withdraw("requests", request.id)
    print(f"removed {request.id}{withdrawn}" + (f"; its answer stays in {folder} (--purge deletes it)" if folder.exists() else ""))
    return 0


def cmd_request_purge(args) -> int:
    """By id, or every answered request past a retention period (the controller's by default)."""
    if bool(args.ids) == (args.older_than is not None):
        raise CliError("give request ids or --older-than DAYS (not both)")
    store, who = _requests(args), access_log.cli_user()
    if args.ids:
        targets = args.ids
    else:
        if args.older_than < 0:
            raise CliError(f"--older-than: {args.older_than} is negative (give days, 0 or more)")
        targets = [r.id for r in purge.expired_requests(store, args.older_than)]
    for request_id in targets:
        print(_purge(args, request_id, who).line())
    if not targets:
        print(f"no answered request older than {args.older_than} days")
    return 0


def cmd_access_log(args) -> int:
    """The access log (who read which request, when, through what): no personal data but ids."""
    rows = access_log.AccessLog(args.registry_url).list(request_id=args.request)
    if args.json:
        _print_json([r.model_dump() for r in rows])
    elif rows:
        print(pd.DataFrame([{"at": f"{r.at:%Y-%m-%d %H:%M:%S}", "who": r.who, "role": r.role or "-", "surface": r.surface,
                             "request": r.request_id or "-", "action": r.action} for r in rows]).to_string(index=False))
    else:
        print("no access recorded")
    return 0


def _log_read(args, request_id: str, action: str) -> None:
    """A CLI read of a request's data, in the access log (the OS user who ran it)."""
    access_log.AccessLog(args.registry_url).record(access_log.cli_user(), "cli", action, request_id)


def cmd_forget_set(args) -> int:
    stored = _stored(args)
    if (args.model is None) == (args.request is None):
        raise CliError("give a release (name@revision) or --request ID")
    if args.request:
        _existing_requests(args, args.request)
    key = None
    if args.model:
        try:
            key = _registry(args).get(args.model).key
        except KeyError:
            key = args.model  # a release removed from the registry still has its stored results
    try:
        if args.format is None and key:  # the forget set alone, as one JSONL (stdout or --out FILE)
            frame = unlearning_stored.release_forget_set(stored, key, args.criterion,
                                                         beyond_controls=args.beyond_controls)
        else:
            sets = (unlearning_stored.release_export(stored, key, args.criterion, beyond_controls=args.beyond_controls)
                    if key else unlearning_stored.request_export(stored, args.request, args.release,
                                                                 beyond_controls=args.beyond_controls))
    except (FileNotFoundError, ValueError) as error:
        raise CliError.of(error) from error
    if args.format is None and key:
        if args.out:
            write_jsonl(frame, Path(args.out))
            narrowed = ", beating the controls" if args.beyond_controls else ""
            print(f"{len(frame)} facts for {key} ({args.criterion}{narrowed}) written to {args.out}", file=sys.stderr)
        else:
            for row in frame.to_dict("records"):
                print(json.dumps({k: (None if v is pd.NA else json_scalar(v)) for k, v in row.items()}, ensure_ascii=False))
        return 0
    fmt = args.format or "jsonl"
    if args.request:  # a request's export lives in its answer folder, or is recorded there: one purge finds it
        default = answer_files.answer_dir(stored.storage_dir, args.request[0]) / "exports" / fmt
        out = Path(args.out) if args.out else default
        for request_id in args.request:
            _log_read(args, request_id, f"export forget set ({fmt})")
            if args.out:
                purge.record_export(stored.storage_dir, request_id, out)
    else:
        out = Path(args.out or f"forget-{path_safe_key(key)}-{fmt}")
    paths = unlearning_export.write_export(sets, fmt, out)
    print(f"{len(sets.forget)} forget and {len(sets.retain)} retain facts ({fmt}) written to {out}: "
          f"{', '.join(p.name for p in paths)}")
    return 0


def cmd_unlearn(args) -> int:
    """Reference unlearning on an export, registered as a new revision of the same model."""

    stored, registry = _stored(args), _registry(args)
    if (args.model is None) == (args.request is None):
        raise CliError("give a release (name@revision) or --request ID")
    try:
        if args.request:
            sets = unlearning_stored.request_export(stored, args.request, args.release, beyond_controls=args.beyond_controls)
            keys = sets.source["models"]
            if len(keys) != 1:
                raise ValueError(f"the request's forget set spans {len(keys)} releases ({', '.join(keys)}): pick one with --release")
            base = registry.get(keys[0])
        else:
            base = registry.get(args.model)
            sets = unlearning_stored.release_export(stored, base.key, args.criterion, beyond_controls=args.beyond_controls)
        if base.source_kind != "hf-dir":
            raise ValueError(f"{base.key} is a {base.source_kind} release: reference unlearning runs on a Hugging Face model "
                             "directory; export the sets with `wikimem forget-set --format ...` for your own tooling")
    except (FileNotFoundError, ValueError, KeyError) as error:
        raise CliError.of(error) from error
    forget_texts, retain_texts = unlearning_export.texts_for_training(sets)
    ranking_texts = unlearning_export.ranking_texts(sets) if args.retain_loss == "nll+kl" else []
    revision = methods.unlearned_revision(base.revision, sets.forget_hash(), args.method)
    out = Path(args.out) if args.out else Path(base.source).parent / f"{base.name}-{revision}"
    config = UnlearnConfig(method=args.method, steps=args.steps, learning_rate=args.learning_rate, batch_size=args.batch_size,
                           beta=args.beta, retain_weight=args.retain_weight, retain_loss=args.retain_loss,
                           kl_weight=args.kl_weight, seed=args.seed, adapter=args.adapter, lora_rank=args.lora_rank,
                           lora_alpha=args.lora_alpha, lora_target_modules=tuple(args.lora_target_modules or ()),
                           lora_learning_rate=args.lora_learning_rate)
    adapter = f", LoRA rank {args.lora_rank}" if args.adapter == "lora" else ""
    print(f"{base.key}: {args.method}, {args.steps} steps ({args.device}, {args.dtype}{adapter}) on {len(forget_texts)} forget and "
          f"{len(retain_texts)} retain texts"
          + (f" ({len(ranking_texts)} ranking texts for the KL)" if ranking_texts else ""))
    try:
        with tqdm(total=args.steps, desc="unlearning", unit="step") as bar:
            result = methods.unlearn(base.source, forget_texts, retain_texts, out, config, sets.forget_hash(),
                                     retain_facts=list(zip(sets.retain["subject_qid"], sets.retain["property"])),
                                     log=lambda message: bar.set_postfix_str(message.split(": ", 1)[-1]),
                                     progress=lambda done, total: bar.update(done - bar.n), ranking_texts=ranking_texts,
                                     device=args.device, dtype=args.dtype)
    except (ModelLoadError, methods.UnlearningDoesNotFit, ValueError) as error:  # no GPU, it does not fit, a bad setting
        raise CliError.of(error) from error
    print(f"written to {result.model_dir} in {result.manifest['seconds']} s")
    if args.no_register:
        return 0
    try:
        entry = registry.register(name=base.name, revision=revision, source_kind="hf-dir", source=str(result.model_dir),
                                  family=base.family, parameter_count=base.parameter_count, variant=base.variant,
                                  **{field: getattr(base, field) for field in RELEASE_FIELDS})  # what letters say of it
    except RegistryError as error:
        raise CliError.of(error) from error
    print(f"registered {entry.key}: the registry sensor audits it; answered erasure requests are verified on it")
    return 0


def cmd_diff(args) -> int:
    stored = _stored(args)
    frames = {}
    for key in (args.old, args.new):
        if "@" not in key:
            raise CliError(f"{key!r}: give releases as name@revision")
        frames[key] = stored.memorization(key)
        if frames[key] is None:
            raise CliError(f"no stored memorization for {key}")
    diff = release_diff(frames[args.old], frames[args.new], args.criterion)
    summary = diff_summary(diff)
    try:  # an unlearned revision names its retain set: utility is measured on it
        manifest = unlearning_verify.unlearning_manifest(_registry(args).get(args.new).source)
    except KeyError:
        manifest = None
    utility = diff_utility(diff, manifest["retain_facts"] if manifest else None)
    if args.json:
        _print_json({"old": args.old, "new": args.new, "criterion": args.criterion, "summary": summary,
                     "utility": utility, "pairs": diff_records(diff)})
        return 0
    print(f"{args.old} -> {args.new} (memorized = {args.criterion})")
    print(", ".join(f"{k}: {v}" for k, v in summary.items()))
    if utility["utility"] is not None:
        print(f"utility ({utility['scope']}): {utility['still_memorized']} of {utility['memorized_before']} facts "
              f"memorized before still are ({utility['utility']:.0%})")
    for kind in ("newly memorized", "forgotten"):
        block = diff[diff["change"] == kind]
        print(f"\n{kind} ({len(block)}):")
        for row in block.to_dict("records"):
            print(f"  {row['subject']} ({row['subject_qid']}) {row['property']}: M {row['M_old']} -> {row['M_new']}")
    return 0


# --------------------------------------------------------------------------- demo

def demo_run_config(properties: list[str], per_cohort: int) -> dict:
    """Run config of the demo's per-model runs (the data assets keep their defaults)."""
    return {"ops": {
        "scores": {"config": {"properties": properties, "max_subjects_per_cohort": per_cohort}},
        "crm_summary": {"config": {"max_examples": DEMO_CRM_EXAMPLES}},
        "mia_summary": {"config": {"max_per_class": DEMO_MIA_PER_CLASS}},
    }}


def cmd_demo(args) -> int:
    started = time.monotonic()
    home = instance.prepared_home()
    registry = Registry(args.registry_url)
    keys = []
    for short_name in args.models:
        try:
            keys.append(registry.get(f"{short_name}@1").key)
        except KeyError:
            keys.append(registry.register_source(short_name).key)
    print(f"DAGSTER_HOME={home}; models: {', '.join(keys)}")
    # The Dagster layer runs the materializations (the domain library never imports Dagster itself).
    runner = instance.runner()
    with instance.dagster_home(home):
        runner.add_model_partitions(keys)
    storage = home / "storage"
    runs = [("reference data", REFERENCE_SELECTION, None, None)]
    runs += [(key, MODEL_SELECTION, key, demo_run_config(args.properties, args.subjects_per_cohort)) for key in keys]
    runs.append(("across models", ACROSS_MODELS_SELECTION, None, None))
    for label, selection, partition_key, run_config in runs:
        with instance.dagster_home(home):
            outcome = runner.materialize(selection, label, partition_key=partition_key, run_config=run_config)
        if not outcome.success:
            raise SystemExit(f"{label} failed (run {outcome.run_id}; its event log is in the Dagster UI on {home}):\n"
                             + "\n".join(outcome.failures))
        if partition_key:
            folder = report_dir(storage, partition_key)
            print(f"{partition_key}: report {folder / 'report.html'}; forget set {folder / 'forget_set.jsonl'}")
    cross_model = across_models.report_dir(storage) / "report.html"
    print(f"across models: report {cross_model}")
    print(f"demo finished in {time.monotonic() - started:.0f} s")
    return check_reports([*(report_dir(storage, key) / "report.html" for key in keys), cross_model])


def check_reports(paths: list[Path]) -> int:
    """Open each report in headless Chromium (when installed) and say whether its plots rendered."""
    if reports.find_chromium() is None:
        print("chromium not found: rendering not checked (apt-get install -y chromium)")
        return 0
    failed = 0
    for path in paths:
        check = reports.check_rendering(path, screenshot=path.with_suffix(".png"))
        print(f"{path.name}: {check.rendered}/{check.figures} plots rendered in headless Chromium; "
              f"screenshot {check.screenshot} {'shows content' if check.screenshot_nonblank else 'is BLANK'}")
        failed += not check.ok
    return 1 if failed else 0
