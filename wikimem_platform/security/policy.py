"""Who may do what in the Dagster UI and its GraphQL API: the four roles, the GraphQL mutations each
may run (deny by default: a mutation Dagster adds later is refused until it is listed here), the
query fields a viewer may not read, and the redaction of request data in what a viewer is sent.

Pure functions over graphql-core's parser (Dagster depends on it): the webserver wrapper
(`webserver.app`) calls them; no Dagster import here.

Why a parser and not a regex: a mutation is a root field of a `mutation` operation, possibly behind an
alias (`a: wipeAssets`), a fragment spread or an inline fragment, and a document may hold several
operations; the word "mutation" inside a string argument or a comment is no mutation. Every operation
of a document is checked, whatever `operationName` selects, so a refused field can never hide in an
operation next to the executed one.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    parse,
)

VIEWER, PRIVACY_OFFICER, OPERATOR, ADMIN = "viewer", "privacy_officer", "operator", "admin"
ROLES = (VIEWER, PRIVACY_OFFICER, OPERATOR, ADMIN)
ROLE_HELP = {
    VIEWER: "read-only UI: the asset graph, runs and schedules, with request data redacted",
    PRIVACY_OFFICER: "reads requests and their answers (/answers/<id>); read-only otherwise",
    OPERATOR: "launches, re-executes and terminates runs; starts and stops sensors and schedules",
    ADMIN: "everything: also deletes runs, wipes assets, manages users and reads the access log",
}

# Mutations anyone signed in may send: the UI sends them on its own and they change nothing of the
# platform's data (telemetry is off in dagster.yaml; the "what's new" flag).
HARMLESS = frozenset({"logTelemetry", "setNuxSeen"})

OPERATOR_MUTATIONS = frozenset({
    "launchRun", "launchPipelineExecution", "launchMultipleRuns", "launchRunReexecution",
    "launchPipelineReexecution", "terminateRun", "terminateRuns", "terminatePipelineExecution",
    "startSensor", "stopSensor", "resetSensor", "setSensorCursor", "sensorDryRun",
    "startSchedule", "stopRunningSchedule", "resetSchedule", "scheduleDryRun",
    "launchPartitionBackfill", "cancelPartitionBackfill", "resumePartitionBackfill",
    "reexecutePartitionBackfill", "reloadRepositoryLocation", "reloadWorkspace",
    "setAutoMaterializePaused", "addDynamicPartition",
})
# Only an admin: destroys history or evidence, or changes what the platform believes happened.
ADMIN_ONLY_MUTATIONS = frozenset({
    "deleteRun", "deletePipelineRun", "wipeAssets", "deleteDynamicPartitions",
    "reportRunlessAssetEvents", "reportAssetCheckEvaluations", "setConcurrencyLimit",
    "deleteConcurrencyLimit", "freeConcurrencySlots", "freeConcurrencySlotsForRun",
    "shutdownRepositoryLocation", "setAppManagedComponent", "deleteAppManagedComponent",
    "refreshComponentState",
})

ALLOWED_MUTATIONS: dict[str, frozenset[str]] = {
    VIEWER: HARMLESS,
    PRIVACY_OFFICER: HARMLESS,
    OPERATOR: HARMLESS | OPERATOR_MUTATIONS,
    ADMIN: HARMLESS | OPERATOR_MUTATIONS | ADMIN_ONLY_MUTATIONS,
}

# Query and subscription root fields a viewer may not read at all: raw stdout/stderr of steps
# (anything a step printed, names included) and the structured run log outside the redacting path.
VIEWER_REFUSED_FIELDS = frozenset({"capturedLogs", "capturedLogsMetadata", "logsForRun"})

# Dagster's own permission names (dagster._core.workspace.permissions.Permissions) and the mutation
# that each gates: the UI greys out a button whose permission is false.
PERMISSION_MUTATION = {
    "launch_pipeline_execution": "launchRun", "launch_pipeline_reexecution": "launchRunReexecution",
    "start_schedule": "startSchedule", "stop_running_schedule": "stopRunningSchedule",
    "schedule_dry_run": "scheduleDryRun", "edit_sensor": "startSensor", "sensor_dry_run": "sensorDryRun",
    "update_sensor_cursor": "setSensorCursor", "terminate_pipeline_execution": "terminateRun",
    "delete_pipeline_run": "deleteRun", "reload_repository_location": "reloadRepositoryLocation",
    "reload_workspace": "reloadWorkspace", "wipe_assets": "wipeAssets",
    "report_runless_asset_events": "reportRunlessAssetEvents",
    "launch_partition_backfill": "launchPartitionBackfill", "cancel_partition_backfill": "cancelPartitionBackfill",
    "edit_dynamic_partitions": "addDynamicPartition", "toggle_auto_materialize": "setAutoMaterializePaused",
    "edit_concurrency_limit": "setConcurrencyLimit", "edit_app_managed_components": "setAppManagedComponent",
    "refresh_component_state": "refreshComponentState",
}


def check_role(role: str) -> str:
    if role not in ROLES:
        raise ValueError(f"role {role!r} is not one of {', '.join(ROLES)}")
    return role


def sees_request_data(role: str) -> bool:
    """Whether GraphQL answers reach this role unredacted. Operators do: they diagnose and re-run
    failed request runs (the partition key is the request id). Viewers never."""
    return role in (PRIVACY_OFFICER, OPERATOR, ADMIN)


def reads_answers(role: str) -> bool:
    return role in (PRIVACY_OFFICER, ADMIN)


def manages_users(role: str) -> bool:
    return role == ADMIN


def may_write_rest(role: str) -> bool:
    """Dagster's REST writes (/report_asset_materialization/..., ...) report events as facts."""
    return role == ADMIN


# --------------------------------------------------------------------------- GraphQL documents


@dataclass(frozen=True)
class Operations:
    """The root fields a document asks for, per operation type (aliases resolved to field names)."""
    query: frozenset[str]
    mutation: frozenset[str]
    subscription: frozenset[str]


class Refused(Exception):
    """A GraphQL document this role may not send; `status` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 403):
        super().__init__(message)
        self.message, self.status = message, status


def root_fields(document: str | DocumentNode) -> Operations:
    """Every root field of every operation (fragments followed, cycles cut). Raises Refused(400)
    for a document graphql-core cannot parse (it would not execute either)."""
    if isinstance(document, str):
        try:
            document = parse(document)
        except GraphQLError as error:
            raise Refused(f"GraphQL document does not parse: {error.message}", status=400) from None
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    found: dict[str, set[str]] = {"query": set(), "mutation": set(), "subscription": set()}

    def collect(selections, into: set[str], seen: frozenset[str]) -> None:
        for selection in selections:
            if isinstance(selection, FieldNode):
                into.add(selection.name.value)
            elif isinstance(selection, InlineFragmentNode):
                collect(selection.selection_set.selections, into, seen)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                if name in fragments and name not in seen:
                    collect(fragments[name].selection_set.selections, into, seen | {name})

    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            collect(definition.selection_set.selections, found[definition.operation.value], frozenset())
    return Operations(*(frozenset(found[k]) for k in ("query", "mutation", "subscription")))


def authorize(role: str, document: str) -> Operations:
    """Raise Refused unless `role` may send `document` (every mutation on its allow-list; a viewer
    none of the refused read fields); the root fields otherwise."""
    check_role(role)
    ops = root_fields(document)
    denied = sorted(ops.mutation - ALLOWED_MUTATIONS[role] - {"__typename"})
    if denied:
        raise Refused(f"role {role} may not run {', '.join(denied)}")
    if role == VIEWER:
        refused = sorted((ops.query | ops.subscription) & VIEWER_REFUSED_FIELDS)
        if refused:
            raise Refused(f"role viewer may not read {', '.join(refused)} (step logs hold request data)")
    return ops


# The per-object flags of Dagster's schema (AssetNode.hasMaterializePermission, Run.hasTerminatePermission,
# ...) and the mutation each gates; a flag not listed is false for a role without any mutation.
FLAG_MUTATION = {
    "hasMaterializePermission": "launchRun", "hasLaunchExecutionPermission": "launchRun",
    "hasLaunchReexecutionPermission": "launchRunReexecution", "hasTerminatePermission": "terminateRun",
    "hasDeletePermission": "deleteRun", "hasWipePermission": "wipeAssets",
    "hasReportRunlessAssetEventPermission": "reportRunlessAssetEvents",
    "hasCancelPermission": "cancelPartitionBackfill", "hasResumePermission": "resumePartitionBackfill",
    "hasLaunchBackfillPermission": "launchPartitionBackfill", "hasStartPermission": "startSensor",
    "hasStopPermission": "stopSensor", "hasCursorUpdatePermissions": "setSensorCursor",
}


def flag_allowed(role: str, flag: str) -> bool:
    mutation = FLAG_MUTATION.get(flag)
    if mutation is None:
        return role in (OPERATOR, ADMIN)
    return mutation in ALLOWED_MUTATIONS[role]


def _restrict_flags(out: dict, role: str) -> None:
    for k, v in out.items():
        if isinstance(v, bool) and v and k.startswith("has") and k.endswith(("Permission", "Permissions")):
            out[k] = flag_allowed(role, k)


def permission_allowed(role: str, permission: str) -> bool | None:
    """Whether the role holds a Dagster UI permission (None: a permission this table does not know)."""
    mutation = PERMISSION_MUTATION.get(permission)
    return None if mutation is None else mutation in ALLOWED_MUTATIONS[role]


# --------------------------------------------------------------------------- redaction for viewers

REQUEST_ID = re.compile(r"dsr-\d{8}-[0-9a-z]{4,}")
REDACTED = "[redacted: request data]"
REQUEST_GROUP, REQUEST_ASSET_PREFIX, REQUEST_TAG = "requests", "request_", "wikimem/request"


def pseudonym(request_id: str, key: bytes) -> str:
    """A stable stand-in for a request id (the same in every answer of one instance, so the UI's
    partition lists still work; not reversible without the key)."""
    return "dsr-hidden-" + hmac.new(key, request_id.encode(), hashlib.sha256).hexdigest()[:8]


def is_request_asset(node: dict) -> bool:
    path = (node.get("assetKey") or {}).get("path") if isinstance(node.get("assetKey"), dict) else None
    return node.get("groupName") == REQUEST_GROUP or bool(path and str(path[0]).startswith(REQUEST_ASSET_PREFIX))


def redact(value, key: bytes, role: str | None = None, permissions: bool = True):
    """A viewer's copy of a GraphQL result (`data` or a subscription payload).

    Not per asset but everywhere, because request data reaches a run from its config and its
    partition: every metadata entry becomes a text entry "[redacted ...]" (labels kept, so the asset
    graph and the check results still show *that* something was recorded), every event's and error's
    message and stack, every run config and every step's stdout/stderr pointer; every request id
    anywhere becomes its pseudonym. Structure, names, statuses, timings and the graph stay.
    With `role`, Dagster's permission flags are set to what the role may do (greyed-out buttons).
    """

    def walk(node, parent_key: str | None = None):
        if isinstance(node, dict):
            typename = node.get("__typename") or ""
            if typename.endswith("MetadataEntry"):
                return {"__typename": "TextMetadataEntry", "label": node.get("label", ""),
                        "description": None, "text": REDACTED}
            out = {}
            for k, v in node.items():
                if k in ("message", "stack", "description") and isinstance(v, str) and (
                        typename.endswith(("Event", "Error")) or parent_key in ("error", "cause", "causes", "errorChain")):
                    out[k] = REDACTED
                elif k in ("stack",) and isinstance(v, list):
                    out[k] = []
                elif k == "runConfigYaml" and isinstance(v, str):
                    out[k] = "{}\n"
                elif k in ("runConfig", "runConfigData") and isinstance(v, (dict, str)):
                    out[k] = {} if isinstance(v, dict) else "{}"
                elif k in ("metadataEntries", "metadata") and isinstance(v, list):
                    out[k] = [walk(e, k) for e in v]
                else:
                    out[k] = walk(v, k)
            if "key" in out and "value" in out and isinstance(out.get("key"), str) \
                    and out["key"].startswith("wikimem/") and isinstance(out["value"], str):
                out["value"] = REQUEST_ID.sub(lambda m: pseudonym(m.group(0), key), out["value"])
            if role:
                _restrict_flags(out, role)
            if role and isinstance(out.get("permission"), str) and isinstance(out.get("value"), bool):
                allowed = permission_allowed(role, out["permission"])
                if allowed is not None:
                    out["value"] = bool(out["value"] and allowed)
                    if not out["value"] and "disabledReason" in out:
                        out["disabledReason"] = f"Your role ({role}) may not do this."
            return out
        if isinstance(node, list):
            return [walk(v, parent_key) for v in node]
        if isinstance(node, str) and "dsr-" in node:
            return REQUEST_ID.sub(lambda m: pseudonym(m.group(0), key), node)
        return node

    return walk(value)


def restrict_permissions(value, role: str):
    """Permission flags only (for roles that see request data): the UI greys out what the role may not do."""

    def walk(node):
        if isinstance(node, dict):
            out = {k: walk(v) for k, v in node.items()}
            _restrict_flags(out, role)
            if isinstance(out.get("permission"), str) and isinstance(out.get("value"), bool):
                allowed = permission_allowed(role, out["permission"])
                if allowed is not None:
                    out["value"] = bool(out["value"] and allowed)
                    if not out["value"] and "disabledReason" in out:
                        out["disabledReason"] = f"Your role ({role}) may not do this."
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(value)
