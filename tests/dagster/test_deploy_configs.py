"""Every file under deploy/ (and the Dockerfile) checked against the schema of what reads it.

Instance yaml: Dagster's instance schema, then each configured class's own `config_type()` (the
instance schema leaves a class's `config` open, so only the class catches a typo there).
Run config: the real jobs of the code location with the executor swapped in (`validate_run_config`).
Helm values: the vendored chart schema (deploy/k8s/chart/). Compose/workspace: Dagster's workspace
schema and cross-references between the files. Each family has a test that a typo fails.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from dagster import DagsterInvalidConfigError, validate_run_config
from dagster._config import validate_config
from dagster._core.instance.config import dagster_instance_config
from dagster._core.workspace.config_schema import ensure_workspace_config
from dagster._serdes import class_from_code_pointer

from resources.placement import CELERY_QUEUE_TAG, GPU_QUEUE, K8S_CONFIG_TAG, LM_K8S_CONFIG, LM_OP_TAGS, LM_POOL

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
INSTANCE_FILES = ["k8s/dagster.yaml", "celery/dagster.yaml", "docker/dagster.yaml"]
CHECKED_FILES = {  # every file in deploy/ must be here, i.e. checked by some test below
    *INSTANCE_FILES,
    "README.md",
    "k8s/values.yaml",
    "k8s/pvc.yaml",
    "k8s/run_config.yaml",
    "k8s/chart/values.schema.json",
    "k8s/chart/concurrency.schema.json",
    "k8s/chart/SOURCE.md",
    "celery/run_config.yaml",
    "docker/workspace.yaml",
    "docker/docker-compose.yaml",
    "docker/initdb/10-wikimem.sql",
}
# Integration packages the configured classes live in (optional deployment dependencies).
OPTIONAL_PACKAGES = {"dagster_k8s": "dagster-k8s", "dagster_docker": "dagster-docker", "dagster_postgres": "dagster-postgres"}


def _load(rel: str):
    return yaml.safe_load((DEPLOY / rel).read_text())


def test_every_deploy_file_is_checked():
    present = {p.relative_to(DEPLOY).as_posix() for p in DEPLOY.rglob("*") if p.is_file()}
    assert present == CHECKED_FILES, f"unchecked: {present - CHECKED_FILES}; missing: {CHECKED_FILES - present}"


# ---------------------------------------------------------------- instance (dagster.yaml) files


def _class_sections(config: dict):
    """(section, module, class, config) for every configurable-class section of an instance config."""
    for section, value in config.items():
        if isinstance(value, dict) and {"module", "class"} <= value.keys():
            yield section, value["module"], value["class"], value.get("config") or {}


def _import_class(module: str, cls: str):
    top = module.split(".")[0]
    if top in OPTIONAL_PACKAGES:
        pytest.importorskip(top, reason=f"{OPTIONAL_PACKAGES[top]} (optional deployment dependency) not installed")
    return class_from_code_pointer(module, cls)


def _validate_instance(directory: Path, filename: str) -> dict:
    """Dagster's own instance loading (schema + cross-checks), then each class's config_type()."""
    config, _ = dagster_instance_config(str(directory), config_filename=filename)
    raw = yaml.safe_load((directory / filename).read_text())
    for section, module, cls, cls_config in _class_sections(raw):
        klass = _import_class(module, cls)
        result = validate_config(klass.config_type(), cls_config)
        if not result.success:
            raise DagsterInvalidConfigError(f"{filename}: {section} ({cls}) config", result.errors, cls_config)
    if "postgres" in raw.get("storage", {}):
        pytest.importorskip("dagster_postgres", reason="dagster-postgres (the postgres extra) not installed")
        from dagster_postgres import PostgresRunStorage

        result = validate_config(PostgresRunStorage.config_type(), raw["storage"]["postgres"])
        if not result.success:
            raise DagsterInvalidConfigError(f"{filename}: storage.postgres", result.errors, raw["storage"])
    return config


@pytest.mark.parametrize("rel", INSTANCE_FILES)
def test_instance_yaml_is_valid(rel):
    path = DEPLOY / rel
    config = _validate_instance(path.parent, path.name)
    assert config["concurrency"]["pools"]["default_limit"] == 1  # the "lm" pool admits one step
    assert list(_class_sections(config))  # a run launcher / coordinator is configured


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@pytest.mark.parametrize("rel", INSTANCE_FILES)
def test_a_run_left_starting_is_failed_and_retried_once_everywhere(rel):
    """A killed daemon's STARTING run must not hold the lm pool in any deployment: each instance file
    has the root dagster.yaml's run monitoring start timeout and its retry policy (retry the launch
    machinery, never a failed audit); the Helm values say the same for the chart to render."""
    root = yaml.safe_load((REPO / "dagster.yaml").read_text())
    config = _load(rel)
    monitoring = config["run_monitoring"]
    assert monitoring["enabled"] is True
    for key in ("start_timeout_seconds", "poll_interval_seconds"):
        assert monitoring[key] == root["run_monitoring"][key], (rel, key)
    assert config["run_retries"] == root["run_retries"]
    assert root["run_retries"] == {"enabled": True, "max_retries": 1, "retry_on_asset_or_op_failure": False}
    if rel.startswith("k8s/"):
        daemon = _load("k8s/values.yaml")["dagsterDaemon"]
        assert daemon["runMonitoring"] == {_camel(k): v for k, v in monitoring.items()}
        assert daemon["runRetries"] == {_camel(k): v for k, v in config["run_retries"].items()}


INSTANCE_TYPOS = {  # id: (section the file must have, mutation)
    "top-level-key": ("concurrency", lambda c: c.update(concurency=c.pop("concurrency"))),
    "concurrency-key": ("concurrency", lambda c: c["concurrency"]["pools"].update(default_limt=1)),
    "run-launcher-config-key": ("run_launcher", lambda c: c["run_launcher"]["config"].update(netwrok="x")),
    "run-coordinator-key": ("run_coordinator", lambda c: c["run_coordinator"]["config"].update(dequeue_interval_secs=5)),
    "storage-key": ("storage", lambda c: c["storage"]["postgres"].update(postgres_ulr="x")),
    "runs-limit-in-two-places": ("run_coordinator", lambda c: c["run_coordinator"]["config"].update(max_concurrent_runs=2)),
}


@pytest.mark.parametrize(
    ("rel", "mutate"),
    [
        pytest.param(rel, mutate, id=f"{rel}-{name}")
        for rel in INSTANCE_FILES
        for name, (section, mutate) in INSTANCE_TYPOS.items()
        if section in yaml.safe_load((DEPLOY / rel).read_text())
    ],
)
def test_instance_yaml_typo_fails(rel, mutate, tmp_path):
    config = _load(rel)
    mutate(config)
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(DagsterInvalidConfigError):
        _validate_instance(tmp_path, "dagster.yaml")


# ---------------------------------------------------------------- run config (executors)


@pytest.fixture(scope="module")
def jobs():
    from definitions import defs

    found = list(defs.resolve_all_job_defs())
    assert found
    return found


def _k8s_executor():
    pytest.importorskip("dagster_k8s", reason="dagster-k8s (optional deployment dependency) not installed")
    from dagster_k8s import k8s_job_executor

    return k8s_job_executor


def _celery_executor():
    pytest.importorskip("dagster_celery", reason="dagster-celery (optional deployment dependency) not installed")
    from dagster_celery import celery_executor

    return celery_executor


EXECUTORS = {"k8s/run_config.yaml": _k8s_executor, "celery/run_config.yaml": _celery_executor}


@pytest.fixture(autouse=True)
def _celery_urls(monkeypatch):
    """The celery run config reads its URLs from the environment; validation resolves them."""
    monkeypatch.setenv("DAGSTER_CELERY_BROKER_URL", "pyamqp://guest:guest@rabbitmq:5672//")
    monkeypatch.setenv("DAGSTER_CELERY_BACKEND_URL", "rpc://")


@pytest.mark.parametrize("rel", sorted(EXECUTORS))
def test_run_config_validates_for_every_job(rel, jobs):
    executor = EXECUTORS[rel]()
    run_config = _load(rel)
    for job in jobs:
        validate_run_config(job.with_executor_def(executor), run_config)


@pytest.mark.parametrize(
    ("rel", "mutate"),
    [
        ("k8s/run_config.yaml", lambda c: c["execution"]["config"].update(max_concurent=2)),
        ("k8s/run_config.yaml", lambda c: c["execution"]["config"]["step_k8s_config"].update(
            containr_config=c["execution"]["config"]["step_k8s_config"].pop("container_config"))),
        ("celery/run_config.yaml", lambda c: c["execution"]["config"].update(brokr="x")),
    ],
    ids=["k8s-executor-key", "k8s-step-config-key", "celery-executor-key"],
)
def test_run_config_typo_fails(rel, mutate, jobs):
    executor = EXECUTORS[rel]()
    run_config = _load(rel)
    mutate(run_config)
    with pytest.raises(DagsterInvalidConfigError):
        validate_run_config(jobs[0].with_executor_def(executor), run_config)


def test_celery_worker_reads_the_run_config():
    """`dagster-celery worker start -y deploy/celery/run_config.yaml` validates the same block."""
    pytest.importorskip("dagster_celery", reason="dagster-celery (optional deployment dependency) not installed")
    from dagster_celery.cli import get_validated_config

    config = get_validated_config(str(DEPLOY / "celery/run_config.yaml"))
    assert config["config_source"]["task_default_queue"] != GPU_QUEUE  # non-model steps stay off the GPU hosts


# ---------------------------------------------------------------- op tags (resources/placement.py)


def test_lm_op_tags_match_the_executors():
    pytest.importorskip("dagster_k8s", reason="dagster-k8s (optional deployment dependency) not installed")
    pytest.importorskip("dagster_celery", reason="dagster-celery (optional deployment dependency) not installed")
    from dagster_celery.tags import DAGSTER_CELERY_QUEUE_TAG
    from dagster_k8s.job import USER_DEFINED_K8S_CONFIG_KEY, get_user_defined_k8s_config

    assert K8S_CONFIG_TAG == USER_DEFINED_K8S_CONFIG_KEY
    assert CELERY_QUEUE_TAG == DAGSTER_CELERY_QUEUE_TAG
    assert LM_OP_TAGS[CELERY_QUEUE_TAG] == GPU_QUEUE
    assert LM_POOL == "lm"
    # What the k8s executor does with a step's tags: json-decode, validate, build the container config.
    k8s = get_user_defined_k8s_config(LM_OP_TAGS)
    resources = k8s.container_config["resources"]
    assert resources["requests"]["nvidia.com/gpu"] == resources["limits"]["nvidia.com/gpu"] == "1"
    assert {"cpu", "memory"} <= resources["requests"].keys()


def test_lm_op_tags_typo_fails():
    pytest.importorskip("dagster_k8s", reason="dagster-k8s (optional deployment dependency) not installed")
    from dagster_k8s.job import get_user_defined_k8s_config

    bad = {"containr_config": LM_K8S_CONFIG["container_config"]}
    with pytest.raises(DagsterInvalidConfigError):
        get_user_defined_k8s_config({**LM_OP_TAGS, K8S_CONFIG_TAG: json.dumps(bad)})


# ---------------------------------------------------------------- Helm values vs the chart schema

K8S_SCHEMA_HOST = "https://kubernetesjsonschema.dev/"


def _helm_errors(values: dict) -> list[str]:
    """Errors Helm would report for chart defaults merged with `values` (see chart/SOURCE.md)."""
    from jsonschema import Draft7Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT7

    schema = json.loads((DEPLOY / "k8s/chart/values.schema.json").read_text())
    concurrency = json.loads((DEPLOY / "k8s/chart/concurrency.schema.json").read_text())

    # Kubernetes object schemas are not vendored: every pointer the chart schema uses into
    # kubernetesjsonschema.dev resolves to {} (accept anything), offline.
    stubs: dict[str, dict] = {}
    for ref in re.findall(r'"\$ref": "(https://[^"#]+)#/([^"]+)"', json.dumps(schema)):
        node = stubs.setdefault(ref[0], {})
        for part in ref[1].split("/"):
            node = node.setdefault(part, {})

    def offline(uri: str):
        assert uri.startswith(K8S_SCHEMA_HOST), uri
        return Resource.from_contents(stubs[uri], default_specification=DRAFT7)

    validator = Draft7Validator(schema, registry=Registry(retrieve=offline))

    def relevant(error) -> bool:
        if error.validator == "required":  # a map path: the chart's defaults supply the key
            return any(isinstance(p, int) for p in error.absolute_path)
        if error.validator in ("anyOf", "oneOf"):
            branches: dict[int, list] = {}
            for sub in error.context:
                branches.setdefault(sub.relative_schema_path[0], []).append(sub)
            return not any(not any(relevant(s) for s in subs) for subs in branches.values())
        return True

    errors = [e for e in validator.iter_errors(values) if relevant(e)]
    if "concurrency" in values:
        errors += list(Draft7Validator(concurrency).iter_errors(values["concurrency"]))
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


def test_helm_values_match_chart_schema():
    values = _load("k8s/values.yaml")
    assert _helm_errors(values) == []
    deployment = values["dagster-user-deployments"]["deployments"][0]
    assert deployment["dagsterApiGrpcArgs"] == ["-m", "definitions"] and deployment["port"] == 3030
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert values["concurrency"]["enabled"] and values["concurrency"]["pools"] == {"defaultLimit": 1}
    # The run launcher, the code server and the step pods (run_config.yaml) mount the same claims.
    claims = {v["persistentVolumeClaim"]["claimName"] for v in deployment["volumes"]}
    launcher = values["runLauncher"]["config"]["k8sRunLauncher"]
    assert claims == {v["persistentVolumeClaim"]["claimName"] for v in launcher["volumes"]}
    steps = _load("k8s/run_config.yaml")["execution"]["config"]["step_k8s_config"]
    assert claims == {v["persistent_volume_claim"]["claim_name"] for v in steps["pod_spec_config"]["volumes"]}
    pvcs = [doc for doc in yaml.safe_load_all((DEPLOY / "k8s/pvc.yaml").read_text())]
    assert claims == {doc["metadata"]["name"] for doc in pvcs if doc["kind"] == "PersistentVolumeClaim"}
    cache = {e["name"]: e.get("value") for e in deployment["env"]}["WIKIMEM_CACHE_DIR"]
    assert cache in {m["mountPath"] for m in deployment["volumeMounts"]}


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda v: v["runLauncher"]["config"]["k8sRunLauncher"].update(volumeMount=[]), id="launcher-key"),
        pytest.param(lambda v: v["runLauncher"].update(type="K8sRunLaucher"), id="launcher-type"),
        pytest.param(lambda v: v["dagster-user-deployments"]["deployments"][0].pop("port"), id="deployment-missing-port"),
        pytest.param(lambda v: v["concurrency"]["pools"].update(default_limit=1), id="concurrency-key"),
        pytest.param(lambda v: v["postgresql"].update(postgresqlPassword=1234), id="wrong-type"),
    ],
)
def test_helm_values_typo_fails(mutate):
    values = _load("k8s/values.yaml")
    mutate(values)
    assert _helm_errors(values)


# ---------------------------------------------------------------- docker compose + workspace


def _compose_problems(compose: dict, instance: dict, workspace: dict) -> list[str]:
    """Cross-file references of the compose deployment that Docker would only find at run time."""
    problems = []
    base = DEPLOY / "docker"
    services = compose["services"]
    for name, service in services.items():
        for mount in service.get("volumes", []):
            source = mount.split(":")[0]
            if source.startswith((".", "/")) and not source.startswith("/var/run/"):
                if not (base / source).exists():
                    problems.append(f"{name}: mounts missing {source}")
            elif not source.startswith("/") and source not in compose.get("volumes", {}):
                problems.append(f"{name}: undeclared volume {source}")
        if "build" in service:
            context = base / service["build"]["context"]
            if not (context / service["build"].get("dockerfile", "Dockerfile")).is_file():
                problems.append(f"{name}: no Dockerfile in {context}")
        for mount in service.get("volumes", []):  # the Docker socket is root on the host (issue 60)
            if "docker.sock" in mount:
                problems.append(f"{name}: mounts the Docker socket")
    if instance["run_launcher"]["class"] == "DockerRunLauncher":
        launcher = instance["run_launcher"]["config"]
        named = {v.get("name", k) for k, v in (compose.get("volumes") or {}).items() if v}
        for volume in launcher["container_kwargs"]["volumes"]:
            if volume.split(":")[0] not in named:
                problems.append(f"run launcher mounts {volume.split(':')[0]}, not a named compose volume")
        if launcher["network"] not in {n.get("name") for n in compose["networks"].values()}:
            problems.append(f"run launcher network {launcher['network']} is not a compose network name")
    for location in workspace["load_from"]:
        server = location["grpc_server"]
        service = services.get(server["host"])
        if service is None:
            problems.append(f"workspace names no service {server['host']}")
        elif str(server["port"]) not in service.get("command", []):
            problems.append(f"{server['host']} does not serve on port {server['port']}")
    return problems


def test_docker_compose_deployment():
    compose, instance, workspace = _load("docker/docker-compose.yaml"), _load("docker/dagster.yaml"), _load("docker/workspace.yaml")
    ensure_workspace_config(workspace, str(DEPLOY / "docker/workspace.yaml"))
    assert _compose_problems(compose, instance, workspace) == []
    code = compose["services"]["wikimem_code"]
    assert code["command"] == ["dagster", "code-server", "start", "-m", "definitions", "-h", "0.0.0.0", "-p", "4000"]
    assert {"wikimem_postgres", "wikimem_webserver", "wikimem_daemon"} <= compose["services"].keys()


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda c, i, w: c["services"]["wikimem_postgres"]["volumes"].append("./initdbb:/x"), id="missing-file"),
        pytest.param(lambda c, i, w: c["services"]["wikimem_daemon"]["volumes"].append(
            "/var/run/docker.sock:/var/run/docker.sock"), id="docker-socket"),
        pytest.param(lambda c, i, w: w["load_from"][0]["grpc_server"].update(port=4001), id="port"),
    ],
)
def test_docker_compose_mismatch_fails(mutate):
    compose, instance, workspace = _load("docker/docker-compose.yaml"), _load("docker/dagster.yaml"), _load("docker/workspace.yaml")
    mutate(compose, instance, workspace)
    assert _compose_problems(compose, instance, workspace)


def test_workspace_typo_fails():
    workspace = _load("docker/workspace.yaml")
    workspace["load_from"][0]["grpc_sever"] = workspace["load_from"][0].pop("grpc_server")
    with pytest.raises(DagsterInvalidConfigError):
        ensure_workspace_config(workspace, str(DEPLOY / "docker/workspace.yaml"))


# ---------------------------------------------------------------- Dockerfile


def test_dockerfile_declares_torch_choice_and_installs_project():
    text = (REPO / "Dockerfile").read_text()
    args = dict(re.findall(r"^ARG (\w+)=?(.*)$", text, flags=re.M))
    assert {"TORCH_VARIANT", "TORCH_INDEX_URL", "TORCH_VERSION"} <= args.keys()
    pins = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"torch=={args['TORCH_VERSION']}" in pins  # the image's torch is the project's pin
    assert re.search(r'^RUN pip install "?\.\[postgres,deploy\]"?', text, flags=re.M)
    ignored = (REPO / ".dockerignore").read_text().split()
    assert {".venv", ".dagster_home", ".git"} <= set(ignored)


@pytest.mark.slow
def test_docker_image_builds(tmp_path):
    if shutil.which("docker") is None:
        pytest.skip("docker CLI not installed: the image build is not checked here")
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.skip("docker CLI present but no daemon reachable: the image build is not checked here")
    subprocess.run(["docker", "build", "-t", "wikimem-platform:test", str(REPO)], check=True)
    out = subprocess.run(["docker", "run", "--rm", "wikimem-platform:test", "python", "-c", "import definitions"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


# ---------------------------------------------------------------- README


def test_readme_names_the_files_it_uses():
    text = (DEPLOY / "README.md").read_text()
    for rel in ["k8s/values.yaml", "k8s/run_config.yaml", "celery/run_config.yaml", "docker/docker-compose.yaml"]:
        assert f"deploy/{rel}" in text
    assert "dagster instance concurrency set lm" in text
