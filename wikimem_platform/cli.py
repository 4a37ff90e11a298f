"""`wikimem`: the command line of wikimem-platform (registry, inquiries, forget sets, diffs, demo).

Everything here reads the registry and the stored results directly. The demo hands the
materializations to the Dagster layer (`sensors.materialize`: Dagster's Python API against the
instance of DAGSTER_HOME), imported only when the demo runs.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from wikimem_platform.lm.endpoint import ACCESS_LEVELS
from wikimem_platform.security.urls import redact_url
from wikimem_platform.lm.loading import ModelLoadError, SHIPPED_MODELS
from wikimem_platform.registry import check_source, infer_source_kind, Registry, RegistryError, RELEASE_FIELDS, Task
from wikimem_platform.reports import across_models, compliance as reports
from wikimem_platform.security.files import InsecureFilesError, secure_startup
from wikimem_platform.security import access_log, purge
from wikimem_platform.security.users_cli import add_commands as add_user_commands, UsersCliError
from wikimem_platform.storage import StoredResults, json_scalar, report_dir, to_json, path_safe_key
from wikimem_platform.subject_requests import answer, answer_files, inquiry as inq, intake, reference
from wikimem_platform.subject_requests.controller import ControllerError, load_controller, save_controller
from wikimem_platform.unlearning import (
    export as unlearning_export,
    methods,
    stored as unlearning_stored,
    verify as unlearning_verify,
)
from wikimem_platform.unlearning.methods import ADAPTERS, METHODS, RETAIN_LOSSES, TRAINING_DTYPES, UnlearnConfig
from wikimem_platform.wikimem.release_diff import diff_records, diff_summary, diff_utility, release_diff
from wikimem_platform.unlearning.forget_sets import DEFAULT_FORGET_CRITERION, write_jsonl
from wikimem_platform.vocabulary import CRITERIA, DEFAULT_CRITERION, M_THRESHOLD

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
DAGSTER_RUNNER = "sensors.materialize"  # the Dagster-layer module that materializes
INSTANCE_PURGE = "sensors.instance_purge"  # the Dagster-layer share of a purge (runs, event logs)


def repo_root() -> Path | None:
    """The checkout holding the default instance config (dagster.yaml), if this runs from one."""
    for candidate in (Path.cwd(), Path(__file__).resolve().parent.parent):
        if (candidate / "definitions.py").is_file() and (candidate / "dagster.yaml").is_file():
            return candidate
    return None


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
    if not _existing_instance():
        return ""
    canceled, existed = importlib.import_module(DAGSTER_RUNNER).withdraw_partition(partitions, key)
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
    try:
        request = _requests(args).get(args.id)
    except KeyError as error:
        raise CliError.of(error) from error
    stored = _stored(args)
    document = answer_files.read_answer(stored.storage_dir, request.id)
    folder = answer_files.answer_dir(stored.storage_dir, request.id)
    _log_read(args, request.id, "show request" + (" (json)" if args.json else ""))
    if args.json:
        _print_json({"request": request.summary() | {"subject_label": request.subject_label}, "answer": document})
        return 0
    print(pd.DataFrame(_request_rows([request])).to_string(index=False))
    state = intake.deadline_state(request)
    print(f"deadline: {state.message}")
    if request.error:
        print(f"error: {request.error}")
    _print_run_progress(request.id)
    if document is None:
        print("no answer yet")
        return 0
    _print_request_answer(document)
    pdf = folder / answer_files.PDF
    print(f"\nletter: {folder / answer_files.LETTER}" + (f"\npdf:    {pdf}" if pdf.is_file() else "")
          + f"\nannex:  {folder / answer_files.ANNEX}\njson:   {folder / answer_files.DOCUMENT}")
    return 0


def _instance_home(home: str | None) -> Path:
    """The Dagster instance directory ($DAGSTER_HOME, else ./.dagster_home), with the checkout's
    default dagster.yaml on first use; exported for the Dagster layer."""
    path = Path(home or os.environ.get("DAGSTER_HOME") or Path.cwd() / ".dagster_home").resolve()
    path.mkdir(parents=True, exist_ok=True)
    checkout = repo_root()
    if not (path / "dagster.yaml").exists() and checkout is not None:
        shutil.copy(checkout / "dagster.yaml", path / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(path)
    return path


def cmd_request_run(args) -> int:
    """Audit a request now through Dagster's Python API (no daemon), with a progress bar."""
    _existing_requests(args, [args.id])
    store = _requests(args)
    if store.get(args.id).is_purged:
        raise CliError(f"request {args.id!r} was purged: only its record is left, there is nothing to audit")
    if not Registry(args.registry_url).list():
        raise CliError(f"request {args.id!r}: no model is registered (`wikimem models register ...`); nothing was run")
    home = _instance_home(args.home)
    print(f"DAGSTER_HOME={home}: auditing {args.id} on every registered release (the run is in the UI's run list)")
    runner = importlib.import_module(DAGSTER_RUNNER)
    try:
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
    return cmd_request_show(argparse.Namespace(**{**vars(args), "json": False}))


# A run stopped by a signal exits as a shell reports a process killed by it (128 + the signal's number).
SIGNAL_STATUS = {"interrupted (SIGINT)": 130, "interrupted (SIGTERM)": 143}


def _still_stored(store: intake.RequestStore, request_id: str, run_id: str | None) -> None:
    """A request removed while its run ran (`wikimem request remove`) ends the command in one line."""
    try:
        store.get(request_id)
    except KeyError:
        raise CliError(f"request {request_id!r} was removed while its audit run {run_id} ran: the run was stopped "
                       "and nothing more is stored for the request") from None


def _existing_instance() -> bool:
    """Whether a Dagster instance lives in $DAGSTER_HOME (else ./.dagster_home), exported for the
    Dagster layer; commands that only read or clean up on it do nothing without one."""
    home = Path(os.environ.get("DAGSTER_HOME") or ".dagster_home")
    if not (home / "dagster.yaml").is_file():
        return False
    os.environ["DAGSTER_HOME"] = str(home.resolve())
    return True


def _print_run_progress(request_id: str) -> None:
    """The request's newest run on the instance (when there is one): its state, steps done and
    newest progress line from the run's event log."""
    if not _existing_instance():
        return
    run = importlib.import_module(DAGSTER_RUNNER).request_run_progress(request_id)
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
    runs = importlib.import_module(INSTANCE_PURGE).erase_request_runs if _existing_instance() else None
    try:
        return purge.purge_request(request_id, _stored(args).storage_dir, _requests(args), who, erase_runs=runs)
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
    home = _instance_home(args.home)
    registry = Registry(args.registry_url)
    keys = []
    for short_name in args.models:
        try:
            keys.append(registry.get(f"{short_name}@1").key)
        except KeyError:
            keys.append(registry.register_source(short_name).key)
    print(f"DAGSTER_HOME={home}; models: {', '.join(keys)}")
    # The Dagster layer runs the materializations (this library never imports Dagster itself).
    runner = importlib.import_module(DAGSTER_RUNNER)
    runner.add_model_partitions(keys)
    storage = home / "storage"
    runs = [("reference data", REFERENCE_SELECTION, None, None)]
    runs += [(key, MODEL_SELECTION, key, demo_run_config(args.properties, args.subjects_per_cohort)) for key in keys]
    runs.append(("across models", ACROSS_MODELS_SELECTION, None, None))
    for label, selection, partition_key, run_config in runs:
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


# --------------------------------------------------------------------------- parser

def _export_source_arguments(parser: argparse.ArgumentParser, release_help: str) -> None:
    """Where a forget set comes from: a release, or answered erasure requests (forget-set, unlearn)."""
    parser.add_argument("model", nargs="?", help="name@revision, or name for its newest revision")
    parser.add_argument("--request", nargs="+", help="answered erasure requests (one or several ids) instead of a release")
    parser.add_argument("--release", help=release_help)
    parser.add_argument("--criterion", choices=CRITERIA, default=DEFAULT_FORGET_CRITERION,
                        help="which pairs of a release enter the forget set (default lenient: any wording memorized)")
    parser.add_argument("--beyond-controls", action="store_true",
                        help="only the facts that beat invented people given the same facts (p <= alpha; needs the "
                             "release's controlled_memorization, or a request answered with controls). Default: every "
                             "fact, whatever the controls say (erasure errs on the side of inclusion)")


RELEASE_HELP = {
    "display_name": "the name a person knows the model by (default for shipped models: its published name)",
    "purposes": "what the model is used for (Art. 15(1)(a))",
    "recipients": "who receives the model or its output (Art. 15(1)(c))",
    "retention": "how long the model is kept (Art. 15(1)(d))",
    "training_data": "where its training data came from (Art. 15(1)(g))",
    "transfers": "transfers to third countries and their safeguards (Art. 15(2))",
}
CONTROLLER_ARGS = {
    "name": "the controller's legal name", "address": "postal address",
    "contact": "where people write to (e-mail or web form)", "dpo": "the data protection officer: name and contact",
    "supervisory_authority": "the authority a complaint can be lodged with, with its address or web site",
    "automated_decisions": "the Art. 15(1)(h) statement on automated decision-making (default: none)",
    "retention_days": "days a request's data and answer are kept after it is answered, then purged (default 90)",
    "access_log_days": "days a row of the access log is kept (default 365)",
}
CONTROLLER_INTEGERS = {"retention_days", "access_log_days"}


def _release_arguments(parser: argparse.ArgumentParser) -> None:
    for field in RELEASE_FIELDS:
        parser.add_argument("--" + field.replace("_", "-"), help=RELEASE_HELP[field])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wikimem", description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="DAGSTER_HOME (default: $DAGSTER_HOME, else ./.dagster_home)")
    parser.add_argument("--registry-url", help="SQLAlchemy URL of the registry (default: $WIKIMEM_REGISTRY_URL, else SQLite in DAGSTER_HOME)")
    parser.add_argument("--storage", help="the instance's storage directory (default: DAGSTER_HOME/storage)")
    commands = parser.add_subparsers(dest="command", required=True)
    add_user_commands(commands)  # `wikimem users ...`: sign-in users of the Dagster UI and their roles

    models = commands.add_parser("models", help="register, list, remove model releases").add_subparsers(dest="action", required=True)
    register = models.add_parser("register", help="register a release (the sensor audits it)")
    register.add_argument("source", help=f"shipped short name ({', '.join(SHIPPED_MODELS)}), HF directory, .gguf file or hub "
                                         "id; with --endpoint, the release's name")
    register.add_argument("--defer-check", action="store_true",
                          help="register even though the weights cannot be found from this machine now (a hub id "
                               "without hub access, a folder without weights); its audit fails until they can")
    register.add_argument("--endpoint", metavar="URL", help="the model is served there (OpenAI-compatible: vLLM, SGLang, "
                                                             "...); probed before it is registered")
    register.add_argument("--served-model", metavar="ID", help="with --endpoint: the model id the server serves")
    register.add_argument("--api-key-env", metavar="VAR", help="with --endpoint: the environment variable holding the API "
                                                                "key (its name is stored, never the key)")
    register.add_argument("--access", choices=list(ACCESS_LEVELS),
                          help="with --endpoint: prompt log-probabilities (default; the full WikiMem scores), the top-k "
                               "next-token log-probabilities only (the ranking read from them, censored below the k-th), "
                               "or greedy generations only")
    register.add_argument("--top-k", type=int, metavar="K",
                          help="with --access top-logprobs: log-probabilities asked per position (default 20, "
                               "vLLM's and OpenAI's limit)")
    register.add_argument("--tokenizer", metavar="DIR", help="with --endpoint: a local copy of the served model's tokenizer "
                                                              "(token-id prompts with the start-token rule; required for prompt-logprobs and "
                                                              "top-logprobs)")
    register.add_argument("--prompt-mode", choices=["token-ids", "text"],
                          help="with --endpoint: what scoring sends (default: token ids where the server takes them, else "
                               "text that the server's /tokenize turns into the same ids; both checked by the probe)")
    register.add_argument("--name")
    register.add_argument("--revision")
    register.add_argument("--kind", choices=["shipped", "hf-dir", "gguf", "hub"])
    register.add_argument("--family")
    register.add_argument("--parameter-count", type=int)
    register.add_argument("--variant", choices=["base", "instruct"])
    register.add_argument("--quantization", choices=["none", "nf4"])
    register.add_argument("--trust-remote-code", action="store_true")
    register.add_argument("--task", choices=[t.value for t in Task],
                          help="causal-lm (default; inferred from a local model's config) or token-classification (NER)")
    _release_arguments(register)
    register.set_defaults(func=cmd_models_register)
    edit = models.add_parser("edit", help="change what letters tell a person about a release (display name, purposes, ...)")
    edit.add_argument("key", help="name@revision (or name for its newest)")
    _release_arguments(edit)
    edit.set_defaults(func=cmd_models_edit)
    listing = models.add_parser("list", help="registered releases")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=cmd_models_list)
    remove = models.add_parser("remove", help="remove a release (name@revision, or name for its newest)")
    remove.add_argument("key")
    remove.set_defaults(func=cmd_models_remove)

    controller = commands.add_parser("controller", help="who answers requests: controller, DPO, supervisory authority") \
        .add_subparsers(dest="action", required=True)
    setting = controller.add_parser("set", help="set (or change) the controller named in every letter")
    for name, text in CONTROLLER_ARGS.items():
        setting.add_argument("--" + name.replace("_", "-"), help=text, type=int if name in CONTROLLER_INTEGERS else str)
    setting.set_defaults(func=cmd_controller_set)
    controller.add_parser("show", help="the configured controller").set_defaults(func=cmd_controller_show)

    criterion = dict(choices=CRITERIA, default=DEFAULT_CRITERION,
                     help=f"memorized = at_threshold (M >= {M_THRESHOLD}, default), lenient (M > 0) or strict (M = 1)")
    person = commands.add_parser("inquiry", help="Art. 15: what every registered model associates with a person")
    person.add_argument("query", help="a QID (Q42) or a name / alias")
    person.add_argument("--criterion", **criterion)
    person.add_argument("--json", action="store_true")
    person.add_argument("--html", help="also write the answer as an HTML page here")
    person.set_defaults(func=cmd_inquiry)

    request = commands.add_parser("request", help="data-subject requests: access (Art. 15) and erasure (Art. 17)") \
        .add_subparsers(dest="action", required=True)
    add = request.add_parser("add", help="take in a request (the request sensor audits it on every registered model)")
    who = add.add_mutually_exclusive_group(required=True)
    who.add_argument("--qid", help="the person's Wikidata id (Q42)")
    who.add_argument("--name", help="a name, resolved against the extract's labels and aliases")
    who.add_argument("--facts", help="a YAML file describing a person not in Wikidata (name, aliases, facts)")
    add.add_argument("--kind", choices=[k.value for k in intake.RequestKind], default=intake.RequestKind.ACCESS.value)
    add.add_argument("--reference", help="the requester's own reference (letter, ticket number)")
    add.add_argument("--languages", help=("languages to audit the facts in, comma-separated, e.g. de,en (en, de, fr, "
                                          "pl); default: the facts file's, else English and the languages of the "
                                          "person's citizenship"))
    add.add_argument("--letter-language", choices=list(intake.LETTER_LANGUAGES),
                     help="the letter's language (default: the first of --languages that has a letter, else en)")
    add.set_defaults(func=cmd_request_add)
    listing = request.add_parser("list", help="requests with status and due date")
    listing.add_argument("--status", choices=[s.value for s in intake.RequestStatus])
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=cmd_request_list)
    show = request.add_parser("show", help="one request, its deadline and its answer")
    show.add_argument("id")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_request_show)
    run = request.add_parser("run", help="audit a request now, without `dagster dev` (Dagster's Python API, progress bar)")
    run.add_argument("id")
    run.set_defaults(func=cmd_request_run)
    verify = request.add_parser("verify", help="an erasure request on a new revision: forgotten, still and newly memorized, utility")
    verify.add_argument("id")
    verify.add_argument("--release", required=True, help="the new revision, name@revision")
    verify.add_argument("--json", action="store_true")
    verify.add_argument("--purge", action="store_true",
                        help="once the erasure is verified complete, purge the request (send its letter first: it goes too)")
    verify.set_defaults(func=cmd_request_verify)
    remove = request.add_parser("remove", help="delete a request (its answer stays unless --purge)")
    remove.add_argument("id")
    remove.add_argument("--purge", action="store_true",
                        help="delete every copy of its personal data (answer, tables, scores, caches, runs and event "
                             "logs); an accountability record without personal data stays")
    remove.set_defaults(func=cmd_request_remove)
    purging = request.add_parser("purge", help="delete every copy of requests' personal data, by id or past a retention period")
    purging.add_argument("ids", nargs="*", help="request ids")
    purging.add_argument("--older-than", type=int, metavar="DAYS",
                         help="every answered request whose answer is older than DAYS days")
    purging.set_defaults(func=cmd_request_purge)

    reads = commands.add_parser("access-log", help="who read which request's data, when and how (admins)")
    reads.add_argument("--request", help="only this request's reads")
    reads.add_argument("--json", action="store_true")
    reads.set_defaults(func=cmd_access_log)

    forget = commands.add_parser(
        "forget-set", help="Art. 17: the memorized facts of a release or an erasure request, for unlearning tools",
        description="Without --format: the release's forget set as one JSONL (stdout or --out FILE). With --format: "
                    "a folder (--out DIR) with the forget set, a retain set of other people's memorized facts and a "
                    "manifest, in the format an unlearning tool reads.")
    _export_source_arguments(forget, "with --request: only this release's entries (default: every release)")
    forget.add_argument("--format", choices=unlearning_export.FORMATS,
                        help="jsonl (facts), tofu (QA with paraphrased questions and perturbed answers), "
                             "openunlearning (question/answer and text corpora), rwku (probes)")
    forget.add_argument("--out", help="without --format: a JSONL file (default stdout); with --format: a folder")
    forget.set_defaults(func=cmd_forget_set)

    unlearn = commands.add_parser(
        "unlearn", help="reference unlearning (a verification aid) on a forget/retain export, registered as a new revision",
        description="Gradient ascent or NPO with a retain loss, on the forget and retain sets of a release or an "
                    "erasure request, for a Hugging Face model directory; the result is registered as a new revision "
                    "of the same model (the registry sensor audits it). A verification aid, not a product guarantee.")
    _export_source_arguments(unlearn, "with --request: the release to unlearn from")
    unlearn.add_argument("--method", choices=list(METHODS), default=UnlearnConfig.method)
    unlearn.add_argument("--steps", type=int, default=UnlearnConfig.steps)
    unlearn.add_argument("--learning-rate", type=float, default=UnlearnConfig.learning_rate)
    unlearn.add_argument("--batch-size", type=int, default=UnlearnConfig.batch_size, help="texts per step, forget and retain each")
    unlearn.add_argument("--beta", type=float, default=UnlearnConfig.beta, help="NPO's inverse temperature")
    unlearn.add_argument("--retain-weight", type=float, default=UnlearnConfig.retain_weight,
                         help="weight of the retain texts' NLL (gradient difference)")
    unlearn.add_argument("--retain-loss", choices=list(RETAIN_LOSSES), default=UnlearnConfig.retain_loss,
                         help="nll+kl: the retain NLL plus KL to the original model on the sentences an audit ranks for "
                              "each retain fact (competing values, look-alike names); nll: the retain NLL alone")
    unlearn.add_argument("--kl-weight", type=float, default=UnlearnConfig.kl_weight, help="weight of the ranking KL")
    unlearn.add_argument("--adapter", choices=list(ADAPTERS), default=UnlearnConfig.adapter,
                         help="none: fine-tune every weight (default); lora: LoRA adapters (peft), the NPO reference is "
                              "the model with its adapters disabled (no copy), merged into the new revision on output")
    unlearn.add_argument("--lora-rank", type=int, default=UnlearnConfig.lora_rank)
    unlearn.add_argument("--lora-alpha", type=float, default=UnlearnConfig.lora_alpha)
    unlearn.add_argument("--lora-target-modules", nargs="+", default=None,
                         help="module names to adapt (default: every linear projection but the output head)")
    unlearn.add_argument("--lora-learning-rate", type=float, default=UnlearnConfig.lora_learning_rate,
                         help="the learning rate with --adapter lora (--learning-rate is full fine-tuning's)")
    unlearn.add_argument("--seed", type=int, default=0)
    unlearn.add_argument("--device", default="cpu",
                         help="cpu, cuda, cuda:N or auto (as the scoring resource's device); a model whose full "
                              "fine-tuning does not fit the GPU is refused, not moved")
    unlearn.add_argument("--dtype", choices=list(TRAINING_DTYPES), default="float32",
                         help="the weights' dtype while training and in the new revision")
    unlearn.add_argument("--out", help="the new model directory (default: beside the base model)")
    unlearn.add_argument("--no-register", action="store_true", help="write the model, do not register it")
    unlearn.set_defaults(func=cmd_unlearn)

    diff = commands.add_parser("diff", help="facts newly memorized and forgotten between two releases")
    diff.add_argument("old", help="name@revision")
    diff.add_argument("new", help="name@revision")
    diff.add_argument("--criterion", **criterion)
    diff.add_argument("--json", action="store_true")
    diff.set_defaults(func=cmd_diff)

    demo = commands.add_parser(
        "demo",
        help="the main job: register the shipped model and audit it on the bundled sample",
        description=(
            "Register the shipped model(s), then materialize the reference data (bundled Wikidata sample, every "
            "data default) and, per model, scores, memorization, CRM/MIA summaries, wording sensitivity and the "
            "compliance report, then the tables across models, "
            f"through Dagster (runs recorded on the SQLite instance in DAGSTER_HOME). The audit is narrowed to stay within "
            f"15 minutes on 2 CPU cores: properties {' '.join(DEMO_PROPERTIES)}, {DEMO_SUBJECTS_PER_COHORT} subject "
            f"per cohort, {DEMO_CRM_EXAMPLES} CRM examples per paradigm, {DEMO_MIA_PER_CLASS} MIA texts per class."
        ),
    )
    demo.add_argument("--models", nargs="+", default=DEMO_MODELS, choices=sorted(SHIPPED_MODELS),
                      help=f"shipped models to audit (default: {' '.join(DEMO_MODELS)}; gemma-3-270m takes ~2x longer)")
    demo.add_argument("--properties", nargs="+", default=DEMO_PROPERTIES)
    demo.add_argument("--subjects-per-cohort", type=int, default=DEMO_SUBJECTS_PER_COHORT)
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:  # umask 077 before anything is created, and no start on an instance other users can read (issue 60)
        secure_startup(args.home, args.storage, registry_url=args.registry_url)
    except InsecureFilesError as error:
        print(f"error: {error}", file=sys.stderr)
        return CliError.status
    if args.home:
        home = Path(args.home).resolve()
        home.mkdir(parents=True, exist_ok=True)
        os.environ["DAGSTER_HOME"] = str(home)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        return args.func(args)
    except (CliError, UsersCliError) as error:
        print(f"error: {error.message}", *error.extra, sep="\n", file=sys.stderr)
        if getattr(error, "leave_at_once", False):
            # A stopped run (recorded CANCELED, the request marked): leave without the interpreter's
            # shutdown, which would wait on a step still in native code or abort in torch's teardown.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(error.status)
        return error.status


if __name__ == "__main__":
    sys.exit(main())
