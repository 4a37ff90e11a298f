"""Every way the platform starts the UI starts it behind sign-in, on loopback unless authenticated,
without the Docker socket and not as root (issue 60). Parses the files; starts nothing (except the
wrapper's argument check and the pure policy, which need no server)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from webserver.__main__ import build_parser, check_arguments, is_loopback
from wikimem_platform.security import policy

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


def _yaml(rel: str):
    return yaml.safe_load((DEPLOY / rel).read_text())


# ---------------------------------------------------------------- docker compose


def test_compose_publishes_loopback_only_and_runs_the_wrapper():
    services = _yaml("docker/docker-compose.yaml")["services"]
    for name, service in services.items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} on every interface"
    web = services["wikimem_webserver"]
    assert web["entrypoint"][:3] == ["python", "-m", "webserver"] and "--no-auth" not in web["entrypoint"]
    assert "WIKIMEM_SESSION_SECRET" in web["environment"] and ":?" in web["environment"]["WIKIMEM_SESSION_SECRET"]


def test_no_docker_socket_anywhere():
    compose = (DEPLOY / "docker/docker-compose.yaml").read_text()
    services = yaml.safe_load(compose)["services"]
    for name, service in services.items():
        assert not any("docker.sock" in str(v) for v in service.get("volumes", [])), name
    assert _yaml("docker/dagster.yaml")["run_launcher"]["class"] != "DockerRunLauncher"


def test_no_bare_dagster_webserver_in_deploy_files():
    for path in [*DEPLOY.rglob("*.yaml"), REPO / "scripts/dev.sh"]:
        for line in path.read_text().splitlines():
            code = line.split("#")[0]
            assert not re.search(r"dagster(-webserver| dev)\b", code), f"{path}: {line.strip()}"


# ---------------------------------------------------------------- image


def test_dockerfile_runs_as_non_root_and_shims_the_webserver():
    text = (REPO / "Dockerfile").read_text()
    users = re.findall(r"^USER\s+(\S+)", text, flags=re.M)
    assert users and users[-1].split(":")[0] not in ("root", "0"), users
    assert re.search(r"useradd[^\n]*--uid 10001[^\n]*wikimem", text)
    assert "chown -R wikimem:wikimem /opt/dagster" in text
    assert 'exec python -m webserver "$@"' in text  # `dagster-webserver` (the Helm chart's command) is the wrapper


# ---------------------------------------------------------------- Helm values


def test_helm_values_run_the_wrapper_non_root_with_a_session_secret():
    values = _yaml("k8s/values.yaml")
    web = values["dagsterWebserver"]
    assert web["image"]["repository"] == values["dagster-user-deployments"]["deployments"][0]["image"]["repository"]
    secret = {e["name"]: e for e in web["env"]}["WIKIMEM_SESSION_SECRET"]
    assert secret["valueFrom"]["secretKeyRef"]["name"]
    for component in (web, values["dagsterDaemon"], values["dagster-user-deployments"]["deployments"][0]):
        assert component["podSecurityContext"]["runAsNonRoot"] is True
        assert component["podSecurityContext"]["runAsUser"] != 0
        assert component["securityContext"]["allowPrivilegeEscalation"] is False
    assert web.get("service", {}).get("type", "ClusterIP") == "ClusterIP"


# ---------------------------------------------------------------- dev.sh


def test_dev_sh_signs_in_by_default():
    text = (REPO / "scripts/dev.sh").read_text()
    assert "-m webserver -h 127.0.0.1" in text
    assert "dagster-daemon run -w workspace.yaml" in text
    no_auth = [line for line in text.splitlines() if "--no-auth" in line and not line.lstrip().startswith("#")]
    assert no_auth and all("auth=(--no-auth)" in line for line in no_auth)  # only under WIKIMEM_DEV_NO_AUTH=1
    assert 'WIKIMEM_DEV_NO_AUTH:-}" = "1"' in text
    assert "os.setpgrp()" in text and "trap stop TERM INT HUP" in text  # the process-group handling stays
    # umask 077 before the instance folder is made: the daemon, the UI and their runs inherit it
    assert text.index("umask 077") < text.index('mkdir -p "$DAGSTER_HOME"')


def test_every_container_and_pod_shares_the_instance_secret():
    compose = yaml.safe_load((DEPLOY / "docker/docker-compose.yaml").read_text())
    for name, service in compose["services"].items():
        if service.get("image", "").startswith("wikimem-platform") or "build" in service:
            assert "WIKIMEM_INSTANCE_SECRET" in service["environment"], name
    values = yaml.safe_load((DEPLOY / "k8s/values.yaml").read_text())
    secret = {"name": "WIKIMEM_INSTANCE_SECRET",
              "valueFrom": {"secretKeyRef": {"name": "wikimem-instance", "key": "WIKIMEM_INSTANCE_SECRET"}}}
    assert secret in values["dagsterWebserver"]["env"]
    assert all(secret in d["env"] for d in values["dagster-user-deployments"]["deployments"])
    assert {"name": "wikimem-instance"} in values["runLauncher"]["config"]["k8sRunLauncher"]["envSecrets"]


# ---------------------------------------------------------------- the wrapper's start-up rules


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::", "example.org"])
def test_no_auth_is_refused_off_loopback(host):
    with pytest.raises(SystemExit, match="--no-auth refused"):
        check_arguments(build_parser().parse_args(["--no-auth", "-h", host]))


def test_no_auth_on_loopback_warns():
    assert check_arguments(build_parser().parse_args(["--no-auth", "-h", "127.0.0.1"])) == "none"
    assert is_loopback("::1") and is_loopback("localhost") and not is_loopback("0.0.0.0")
    assert check_arguments(build_parser().parse_args(["-h", "0.0.0.0"])) == "local"  # sign-in: any host
    with pytest.raises(SystemExit, match="--trusted-proxy"):
        check_arguments(build_parser().parse_args(["--proxy-auth"]))


def test_cli_refuses_no_auth_off_loopback_without_a_traceback():
    result = subprocess.run([sys.executable, "-m", "webserver", "--no-auth", "-h", "0.0.0.0"], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "--no-auth refused" in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------- the GraphQL policy


def test_policy_finds_mutations_however_written():
    fields = policy.root_fields("""
        query Q { version(note: "mutation { wipeAssets }") }  # mutation { deleteRun }
        mutation M { a: launchRun(executionParams: {}) { __typename } ...F ... on Mutation { stopSensor(id: "x") { __typename } } }
        fragment F on Mutation { wipeAssets(assetPartitionRanges: []) { __typename } ...F }
    """)
    assert fields.mutation == {"launchRun", "wipeAssets", "stopSensor"} and fields.query == {"version"}
    with pytest.raises(policy.Refused, match="may not run wipeAssets$"):  # stopSensor is the operator's
        policy.authorize(policy.OPERATOR, "mutation { stopSensor(id: \"x\") { __typename } wipeAssets { __typename } }")
    with pytest.raises(policy.Refused, match="deleteRun, stopSensor"):
        policy.authorize(policy.VIEWER, "mutation { stopSensor(id: \"x\") { __typename } b: deleteRun { __typename } }")
    assert policy.authorize(policy.OPERATOR, "mutation { launchRun(executionParams: {}) { __typename } }")
    with pytest.raises(policy.Refused):
        policy.authorize(policy.ADMIN, "mutation { someFutureMutation { __typename } }")  # deny by default
    with pytest.raises(policy.Refused) as unparsable:
        policy.authorize(policy.ADMIN, "mutation {")
    assert unparsable.value.status == 400


def test_viewer_redaction_keeps_the_graph():
    key = b"k" * 32
    data = {"assetNodes": [{"assetKey": {"path": ["request_answer"]}, "groupName": "requests", "hasMaterializePermission": True}],
            "events": [{"__typename": "MaterializationEvent", "message": "Jane Doe", "partition": "dsr-20261203-ab12cd",
                        "metadataEntries": [{"__typename": "JsonMetadataEntry", "label": "facts", "jsonString": "{\"name\": \"Jane\"}"}]}],
            "run": {"runConfigYaml": "ops: {name: Jane}", "tags": [{"key": "wikimem/request", "value": "dsr-20261203-ab12cd"}]}}
    out = policy.redact(data, key, role=policy.VIEWER)
    text = str(out)
    assert "Jane" not in text and "dsr-20261203-ab12cd" not in text
    assert out["assetNodes"][0]["assetKey"] == {"path": ["request_answer"]} and out["assetNodes"][0]["groupName"] == "requests"
    assert out["assetNodes"][0]["hasMaterializePermission"] is False
    assert out["events"][0]["metadataEntries"][0] == {"__typename": "TextMetadataEntry", "label": "facts",
                                                      "description": None, "text": policy.REDACTED}
    assert out["events"][0]["partition"] == policy.pseudonym("dsr-20261203-ab12cd", key)
