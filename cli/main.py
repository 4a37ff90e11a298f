"""`wikimem`: the command line of wikimem-platform (registry, inquiries, forget sets, diffs, demo).

The parser and `main`.

A package of its own beside the Dagster layer, the one part of the project that imports both the
domain library (`wikimem_platform/`, which never imports Dagster) and the Dagster layer
(`sensors/`, through `cli.instance`): the commands are in `cli.commands`.
"""

from __future__ import annotations

import argparse
import os
import sys

from cli import commands as cli_commands  # (`commands` is the parser's name for its sub-commands)
from cli.commands import CliError, CONTROLLER_ARGS, CONTROLLER_INTEGERS, DEMO_MODELS, DEMO_PROPERTIES
from cli.commands import DEMO_CRM_EXAMPLES, DEMO_MIA_PER_CLASS, DEMO_SUBJECTS_PER_COHORT
from wikimem_platform.lm.endpoint import ACCESS_LEVELS
from wikimem_platform.lm.loading import SHIPPED_MODELS
from wikimem_platform.registry import RELEASE_FIELDS, Task
from wikimem_platform.security.files import InsecureFilesError, secure_startup
from wikimem_platform.security.users_cli import add_commands as add_user_commands, UsersCliError
from wikimem_platform.settings import get_settings, overridden, SettingsError
from wikimem_platform.subject_requests import intake
from wikimem_platform.unlearning import export as unlearning_export
from wikimem_platform.unlearning.forget_sets import DEFAULT_FORGET_CRITERION
from wikimem_platform.unlearning.methods import ADAPTERS, METHODS, RETAIN_LOSSES, TRAINING_DTYPES, UnlearnConfig
from wikimem_platform.vocabulary import CRITERIA, DEFAULT_CRITERION, M_THRESHOLD


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
    register.set_defaults(func=cli_commands.cmd_models_register)
    edit = models.add_parser("edit", help="change what letters tell a person about a release (display name, purposes, ...)")
    edit.add_argument("key", help="name@revision (or name for its newest)")
    _release_arguments(edit)
    edit.set_defaults(func=cli_commands.cmd_models_edit)
    listing = models.add_parser("list", help="registered releases")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=cli_commands.cmd_models_list)
    remove = models.add_parser("remove", help="remove a release (name@revision, or name for its newest)")
    remove.add_argument("key")
    remove.set_defaults(func=cli_commands.cmd_models_remove)

    controller = commands.add_parser("controller", help="who answers requests: controller, DPO, supervisory authority") \
        .add_subparsers(dest="action", required=True)
    setting = controller.add_parser("set", help="set (or change) the controller named in every letter")
    for name, text in CONTROLLER_ARGS.items():
        setting.add_argument("--" + name.replace("_", "-"), help=text, type=int if name in CONTROLLER_INTEGERS else str)
    setting.set_defaults(func=cli_commands.cmd_controller_set)
    controller.add_parser("show", help="the configured controller").set_defaults(func=cli_commands.cmd_controller_show)

    criterion = dict(choices=CRITERIA, default=DEFAULT_CRITERION,
                     help=f"memorized = at_threshold (M >= {M_THRESHOLD}, default), lenient (M > 0) or strict (M = 1)")
    person = commands.add_parser("inquiry", help="Art. 15: what every registered model associates with a person")
    person.add_argument("query", help="a QID (Q42) or a name / alias")
    person.add_argument("--criterion", **criterion)
    person.add_argument("--json", action="store_true")
    person.add_argument("--html", help="also write the answer as an HTML page here")
    person.set_defaults(func=cli_commands.cmd_inquiry)

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
    add.set_defaults(func=cli_commands.cmd_request_add)
    listing = request.add_parser("list", help="requests with status and due date")
    listing.add_argument("--status", choices=[s.value for s in intake.RequestStatus])
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=cli_commands.cmd_request_list)
    show = request.add_parser("show", help="one request, its deadline and its answer")
    show.add_argument("id")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cli_commands.cmd_request_show)
    run = request.add_parser("run", help="audit a request now, without `dagster dev` (Dagster's Python API, progress bar)")
    run.add_argument("id")
    run.set_defaults(func=cli_commands.cmd_request_run)
    verify = request.add_parser("verify", help="an erasure request on a new revision: forgotten, still and newly memorized, utility")
    verify.add_argument("id")
    verify.add_argument("--release", required=True, help="the new revision, name@revision")
    verify.add_argument("--json", action="store_true")
    verify.add_argument("--purge", action="store_true",
                        help="once the erasure is verified complete, purge the request (send its letter first: it goes too)")
    verify.set_defaults(func=cli_commands.cmd_request_verify)
    remove = request.add_parser("remove", help="delete a request (its answer stays unless --purge)")
    remove.add_argument("id")
    remove.add_argument("--purge", action="store_true",
                        help="delete every copy of its personal data (answer, tables, scores, caches, runs and event "
                             "logs); an accountability record without personal data stays")
    remove.set_defaults(func=cli_commands.cmd_request_remove)
    purging = request.add_parser("purge", help="delete every copy of requests' personal data, by id or past a retention period")
    purging.add_argument("ids", nargs="*", help="request ids")
    purging.add_argument("--older-than", type=int, metavar="DAYS",
                         help="every answered request whose answer is older than DAYS days")
    purging.set_defaults(func=cli_commands.cmd_request_purge)

    reads = commands.add_parser("access-log", help="who read which request's data, when and how (admins)")
    reads.add_argument("--request", help="only this request's reads")
    reads.add_argument("--json", action="store_true")
    reads.set_defaults(func=cli_commands.cmd_access_log)

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
    forget.set_defaults(func=cli_commands.cmd_forget_set)

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
    unlearn.set_defaults(func=cli_commands.cmd_unlearn)

    diff = commands.add_parser("diff", help="facts newly memorized and forgotten between two releases")
    diff.add_argument("old", help="name@revision")
    diff.add_argument("new", help="name@revision")
    diff.add_argument("--criterion", **criterion)
    diff.add_argument("--json", action="store_true")
    diff.set_defaults(func=cli_commands.cmd_diff)

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
    demo.set_defaults(func=cli_commands.cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:  # every variable read once, before anything runs: a bad value is one line naming it
        get_settings()
    except SettingsError as error:
        print(f"error: {error}", file=sys.stderr)
        return CliError.status
    try:  # umask 077 before anything is created, and no start on an instance other users can read (issue 60)
        secure_startup(args.home, args.storage, registry_url=args.registry_url)
    except InsecureFilesError as error:
        print(f"error: {error}", file=sys.stderr)
        return CliError.status
    home = None
    if args.home:  # --home is passed down through the settings, not written into the environment
        home = get_settings().instance_paths(args.home).home
        home.mkdir(parents=True, exist_ok=True)
    # Written, not read: Hugging Face's libraries take their offline switch from the environment only.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with overridden(dagster_home=home):
        try:
            return args.func(args)
        except (CliError, UsersCliError, SettingsError) as error:
            message, extra = (error.message, error.extra) if hasattr(error, "message") else (str(error), ())
            print(f"error: {message}", *extra, sep="\n", file=sys.stderr)
            if getattr(error, "leave_at_once", False):
                # A stopped run (recorded CANCELED, the request marked): leave without the interpreter's
                # shutdown, which would wait on a step still in native code or abort in torch's teardown.
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(error.status)
            return getattr(error, "status", CliError.status)


if __name__ == "__main__":
    sys.exit(main())
