"""Where model-loading steps run when the platform is scaled out on Dagster's own executors.

Every asset that loads a language model carries `pool=LM_POOL` (the instance limits that pool:
`concurrency.pools.default_limit`, or `dagster instance concurrency set lm N` for N GPUs) and
`op_tags=LM_OP_TAGS`. The tags are only read by the executors they name:

* `"dagster-k8s/config"` by `dagster_k8s.k8s_job_executor` (and the K8sRunLauncher for the run
  pod): the step's pod asks for one `nvidia.com/gpu` and a CPU/memory floor, so Kubernetes
  schedules it onto a GPU node.
* `"dagster-celery/queue"` by `dagster_celery.celery_executor`: the step is sent to the `gpu`
  queue, which only workers started with `-q gpu` consume; other steps go to the default
  queue (`dagster`).

The in-process and multiprocess executors (the local default) ignore both tags, so nothing changes
on a laptop. On a CPU-only cluster, override the GPU request per step in the executor's run config
(`k8s_job_executor`: `per_step_k8s_config: {<step>: {container_config: {resources: ...}}}` with
`merge_behavior: SHALLOW`, or `step_k8s_config` for every step); for Celery, start a worker with
`-q gpu` on a CPU host.

The tag keys are written out instead of imported: dagster-k8s and dagster-celery are optional
deployment dependencies, not needed to load the code location. tests/dagster/test_deploy_configs.py
checks they equal `dagster_k8s.job.USER_DEFINED_K8S_CONFIG_KEY` and
`dagster_celery.tags.DAGSTER_CELERY_QUEUE_TAG`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from dagster import DagsterInstance, ExecutorDefinition, multi_or_in_process_executor

from wikimem_platform.security.urls import host_port
from wikimem_platform.settings import EXECUTORS, get_settings, Settings

LM_POOL = "lm"
"""Concurrency pool of every step that loads a language model (one model in memory per slot)."""


def ensure_lm_pool(instance: DagsterInstance) -> bool:
    """Give the `lm` pool its limit (the instance's `concurrency.pools.default_limit`) before any
    run that needs it is queued; True when it was missing.

    Dagster's run queue (1.13) reads which pools have a limit *before* it sets a pool it has not
    seen to the default limit, so on a fresh instance every run queued before its first pass is
    started at once: three request runs launched by one sensor tick loaded three models together
    while the UI showed "lm: 0 / 1". Called by the sensors before they launch runs and by the
    start scripts; a limit set by hand (`dagster instance concurrency set lm 2`) is kept."""
    storage = instance.event_log_storage
    if LM_POOL in storage.get_concurrency_keys() or not instance.global_op_concurrency_default_limit:
        return False
    storage.initialize_concurrency_limit_to_default(LM_POOL)
    return True


ENDPOINT_TAG = "wikimem/endpoint"
"""Run tag naming the inference server(s) an audit run sends requests to (host:port, sorted,
comma-joined). The instance limits runs per unique value of it (dagster.yaml:
`concurrency.runs.tag_concurrency_limits`, `applyLimitPerUniqueValue`), so two runs never load
one server at once, whatever the `lm` pool allows: a served release needs no local slot to
overload its server. A request run audits every release, so its value names every server; two
request runs, or a request run and a model audit of one of its servers, queue for each other
only where the values are equal (with one server registered, always)."""


def endpoint_tags(entries: Iterable) -> dict[str, str]:
    """{ENDPOINT_TAG: "host:port,..."} for the registry entries served at an endpoint, {} if none:
    never a URL's user or password (a run tag is shown in the UI to everyone)."""
    hosts = sorted({host_port(e.source) for e in entries if e.source_kind == "endpoint"})
    return {ENDPOINT_TAG: ",".join(hosts)} if hosts else {}


K8S_CONFIG_TAG = "dagster-k8s/config"
CELERY_QUEUE_TAG = "dagster-celery/queue"
GPU_QUEUE = "gpu"

LM_K8S_CONFIG: dict[str, Any] = {
    "container_config": {
        "resources": {
            "requests": {"cpu": "2", "memory": "16Gi", "nvidia.com/gpu": "1"},
            "limits": {"memory": "32Gi", "nvidia.com/gpu": "1"},
        }
    },
}

LM_OP_TAGS: dict[str, str] = {
    # Dagster stores op tag values as strings; the k8s executor json-decodes this one.
    K8S_CONFIG_TAG: json.dumps(LM_K8S_CONFIG),
    CELERY_QUEUE_TAG: GPU_QUEUE,
}
"""Op tags of every model-loading step (see the module docstring)."""

# --------------------------------------------------------------------------- the executor
EXECUTOR_ENV = Settings.env_name("executor")
LOCAL, K8S, CELERY = EXECUTORS
# Local runs launched by the sensors, the schedule and `wikimem demo` execute in one process unless
# their run config says otherwise (on 2 cores a process per step costs more in imports than it gains).
IN_PROCESS_EXECUTION = {"execution": {"config": {"in_process": {}}}}


def executor_name() -> str:
    """$WIKIMEM_EXECUTOR: local (default: in-process or multiprocess, chosen per run), k8s or celery."""
    return get_settings().executor  # a value other than these is refused naming the variable (SettingsError)


def executor() -> ExecutorDefinition:
    """The code location's executor for this deployment (deploy/README.md sets it per engine)."""
    name = executor_name()
    if name == K8S:
        from dagster_k8s import k8s_job_executor

        return k8s_job_executor
    if name == CELERY:
        from dagster_celery import celery_executor

        return celery_executor
    return multi_or_in_process_executor


def default_execution() -> dict:
    """Run config the platform's own runs start from: in-process locally, the executor's defaults
    (overridable by the audit config file, e.g. deploy/k8s/run_config.yaml) elsewhere."""
    return IN_PROCESS_EXECUTION if executor_name() == LOCAL else {}


__all__ = ["CELERY_QUEUE_TAG", "ENDPOINT_TAG", "EXECUTOR_ENV", "GPU_QUEUE", "K8S_CONFIG_TAG", "LM_K8S_CONFIG", "LM_OP_TAGS", "LM_POOL",
           "default_execution", "endpoint_tags", "executor"]
