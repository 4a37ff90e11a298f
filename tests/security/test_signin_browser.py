"""Acceptance: the real UI behind `python -m webserver`, driven by headless Chromium and an HTTP client.

Anonymous visitors get the login page (HTML) and 401 (GraphQL reads and mutations); a viewer sees the
asset graph, not request data, and is refused the mutations that matter; an operator launches a run;
a privacy officer reads a stored answer and the admin's access log then shows that read.
Screenshots go to $WIKIMEM_SCREENSHOTS (default /tmp/wikimem-signin-screenshots).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.support.dagster_process import REPO, free_port

CHROMIUM = "/usr/bin/chromium"
REQUEST_ID = "dsr-20261203-ab12cd"
SECRET_NAME = "Jane Q. Example"
ROLES = ("viewer", "privacy_officer", "operator", "admin")
SHOTS = Path(os.environ.get("WIKIMEM_SCREENSHOTS", "/tmp/wikimem-signin-screenshots"))
MUTATIONS = {
    "stopSensor": 'mutation { stopSensor(id: "x") { __typename } }',
    "launchRun": "mutation L($p: ExecutionParams!) { launchRun(executionParams: $p) { __typename } }",
    "wipeAssets": 'mutation { wipeAssets(assetPartitionRanges: [{assetKey: {path: ["humans"]}}]) { __typename } }',
    "deleteRun": 'mutation { a: deleteRun(runId: "x") { __typename } }',
}
LAUNCH = {"p": {"selector": {"repositoryLocationName": "wikimem", "repositoryName": "__repository__",
                             "jobName": "request_retention_job"}, "runConfigData": {}}}
ASSET_QUERY = """{ assetOrError(assetKey: {path: ["request_answer"]}) { ... on Asset {
  assetMaterializations(limit: 5) { partition metadataEntries { __typename label ... on TextMetadataEntry { text } } } } } }"""


def password(role: str) -> str:
    return f"password-of-the-{role}"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The wrapper on a free loopback port, with a fresh instance holding users of each role, one
    stored answer and one request-asset materialization naming a person."""
    home = tmp_path_factory.mktemp("signin") / "home"
    home.mkdir(mode=0o700)
    cache = home.parent / "cache"
    cache.mkdir(mode=0o700)
    (home / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    env = {**os.environ, "DAGSTER_HOME": str(home), "WIKIMEM_CACHE_DIR": str(cache),
           "WIKIMEM_REGISTRY_URL": f"sqlite:///{home / 'wikimem_registry.db'}"}
    env.pop("WIKIMEM_SESSION_SECRET", None)
    setup = f"""
import os
from dagster import AssetMaterialization, DagsterInstance
from wikimem_platform.security.users import UserStore
from wikimem_platform.subject_requests.answer_files import answer_dir
store = UserStore()
for role in {ROLES!r}:
    store.add(role.replace('_', '-'), role, 'password-of-the-' + role)
with DagsterInstance.get() as instance:
    instance.add_dynamic_partitions('requests', [{REQUEST_ID!r}])
    instance.report_runless_asset_event(AssetMaterialization(
        'request_answer', partition={REQUEST_ID!r}, metadata={{'subject': {SECRET_NAME!r}}}))
    folder = answer_dir(instance.storage_directory(), {REQUEST_ID!r})
folder.mkdir(parents=True)
(folder / 'answer.html').write_text('<html><body><h1>Answer to request {REQUEST_ID}</h1><p>Dear {SECRET_NAME},</p></body></html>')
(folder / 'answer.pdf').write_bytes(b'%PDF-1.4\\n%%EOF\\n')
"""
    subprocess.run([sys.executable, "-c", setup], cwd=REPO, env=env, check=True, timeout=120)
    port = free_port()
    log = open(home.parent / "webserver.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "webserver", "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"],
                               cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        admin = login(base, "admin")  # waits for the server, then for the code location
        deadline = time.monotonic() + 150
        while True:
            if process.poll() is not None:
                raise RuntimeError((home.parent / "webserver.log").read_text()[-3000:])
            try:
                body = admin.post(base + "/graphql", json={"query": "{ assetNodes { id } }"}, timeout=10).json()
                if body.get("data", {}).get("assetNodes"):
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError((home.parent / "webserver.log").read_text()[-3000:])
            time.sleep(1)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the code server it started
        log.close()


def login(base: str, role: str, timeout: float = 60) -> requests.Session:
    """A requests session signed in through the login form (double-submit token included)."""
    session = requests.Session()
    deadline = time.monotonic() + timeout
    while True:
        try:
            page = session.get(base + "/login", timeout=5)
            break
        except requests.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
    token = re.search(r'name=csrf value="([^"]+)"', page.text).group(1)
    answer = session.post(base + "/login", data={"csrf": token, "username": role.replace("_", "-"),
                                                 "password": password(role), "next": "/"}, allow_redirects=False)
    assert answer.status_code == 303, answer.text
    return session


def gql(session, base: str, query: str, variables: dict | None = None) -> requests.Response:
    return session.post(base + "/graphql", json={"query": query, "variables": variables or {}}, timeout=60)


def test_http_roles(server):
    base = server
    anonymous = requests.Session()
    assert gql(anonymous, base, "{ version }").status_code == 401
    assert gql(anonymous, base, MUTATIONS["stopSensor"]).status_code == 401
    assert anonymous.get(base + "/asset-groups", headers={"accept": "text/html"}, allow_redirects=False).status_code == 303
    assert anonymous.get(base + f"/answers/{REQUEST_ID}", headers={"accept": "text/html"}, allow_redirects=False) \
        .headers["location"].startswith("/login")

    viewer = login(base, "viewer")
    for name, query in MUTATIONS.items():
        answer = gql(viewer, base, query, LAUNCH if name == "launchRun" else None)
        assert answer.status_code == 403 and name in answer.text, (name, answer.text)
    # a mutation word inside a string argument is no mutation; a mutation behind a fragment is one
    assert gql(viewer, base, '{ runsOrError(filter: {runIds: ["mutation { wipeAssets }"]}) { __typename } }').status_code == 200
    sneaky = "mutation { ...F } fragment F on Mutation { wipeAssets(assetPartitionRanges: []) { __typename } }"
    assert gql(viewer, base, sneaky).status_code == 403
    assert viewer.post(base + "/graphql", data={"query": "{ version }"}).status_code == 415  # no form posts
    assert gql(viewer, base, "{ capturedLogs(logKey: [\"x\"]) { stdout } }").status_code == 403
    assert viewer.get(base + f"/answers/{REQUEST_ID}").status_code == 403
    assert viewer.get(base + "/access-log").status_code == 403

    seen = gql(viewer, base, ASSET_QUERY).text
    assert SECRET_NAME not in seen and REQUEST_ID not in seen and "redacted" in seen and "dsr-hidden-" in seen
    partitions = gql(viewer, base, '{ partitionSetsOrError(repositorySelector: {repositoryLocationName: "wikimem", '
                                   'repositoryName: "__repository__"}, pipelineName: "request_audit") { __typename } }')
    assert partitions.status_code == 200
    officer = login(base, "privacy_officer")
    assert SECRET_NAME in gql(officer, base, ASSET_QUERY).text  # the privacy officer reads request data
    assert gql(officer, base, MUTATIONS["launchRun"], LAUNCH).status_code == 403

    operator = login(base, "operator")
    launched = gql(operator, base, MUTATIONS["launchRun"].replace("__typename", "__typename ... on LaunchRunSuccess { run { runId status } }"), LAUNCH)
    assert launched.status_code == 200, launched.text
    assert launched.json()["data"]["launchRun"]["__typename"] == "LaunchRunSuccess", launched.text
    assert gql(operator, base, MUTATIONS["deleteRun"]).status_code == 403
    assert operator.get(base + "/access-log").status_code == 403

    admin = login(base, "admin")
    assert gql(admin, base, MUTATIONS["deleteRun"]).status_code == 200
    # cross-site: a POST whose Origin is another site is refused even with a valid session
    assert admin.post(base + "/graphql", json={"query": "{ version }"}, headers={"origin": "https://evil.example"}).status_code == 403


def test_websocket_needs_sign_in(server):
    websockets = pytest.importorskip("websockets.sync.client", reason="websockets not installed")
    url = server.replace("http", "ws") + "/graphql"
    with pytest.raises(Exception) as refused:
        websockets.connect(url, subprotocols=["graphql-ws"], open_timeout=10)
    assert "401" in str(refused.value) or "4401" in str(refused.value)
    # signed in: the subscription runs; a refused document gets an error frame, the socket stays
    import json

    viewer = login(server, "viewer")
    cookie = "; ".join(f"{c.name}={c.value}" for c in viewer.cookies)
    with websockets.connect(url, subprotocols=["graphql-ws"], additional_headers={"Cookie": cookie}, open_timeout=10) as ws:
        ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "connection_ack"
        ws.send(json.dumps({"type": "start", "id": "1", "payload": {
            "query": 'subscription { capturedLogs(logKey: ["x"]) { stdout } }'}}))
        refused_frame = json.loads(ws.recv(timeout=10))
        assert refused_frame["type"] == "error" and "capturedLogs" in refused_frame["payload"]["message"]
        ws.send(json.dumps({"type": "start", "id": "2", "payload": {
            "query": "mutation { wipeAssets(assetPartitionRanges: []) { __typename } }"}}))
        assert "wipeAssets" in json.loads(ws.recv(timeout=10))["payload"]["message"]


def _browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: the browser half of the sign-in test needs Chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra) not installed")
    return sync_api


def _sign_in(page, base: str, role: str, target: str) -> None:
    page.goto(base + target)
    page.wait_for_selector("form.login")
    page.fill("input[name=username]", role.replace("_", "-"))
    page.fill("input[name=password]", password(role))
    page.click("button[type=submit]")


def test_browser_roles(server):
    sync_api = _browser()
    if SHOTS.exists():
        shutil.rmtree(SHOTS)
    SHOTS.mkdir(parents=True)
    base = server
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        try:
            # anonymous: the login page, whatever page was asked for
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(base + "/asset-groups")
            assert "/login" in page.url and page.locator("form.login").count() == 1
            page.screenshot(path=str(SHOTS / "1-anonymous-login.png"))
            page.fill("input[name=username]", "viewer")
            page.fill("input[name=password]", "wrong password!")
            page.click("button[type=submit]")
            page.wait_for_selector(".err")
            page.screenshot(path=str(SHOTS / "2-wrong-password.png"))
            page.close()

            # viewer: the asset graph renders (sign-in returns to the page asked for); no answers
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            _sign_in(page, base, "viewer", "/asset-groups")
            page.wait_for_url(re.compile(r".*/asset-groups.*"), timeout=30000)
            page.get_by_text("requests", exact=True).first.wait_for(timeout=60000)
            page.wait_for_timeout(1500)
            page.screenshot(path=str(SHOTS / "3-viewer-asset-groups.png"))
            page.goto(base + "/assets/request_answer")
            page.get_by_text("request_answer").first.wait_for(timeout=60000)
            page.wait_for_timeout(3000)
            page.screenshot(path=str(SHOTS / "4-viewer-request-asset.png"))
            assert SECRET_NAME not in page.content() and REQUEST_ID not in page.content()
            assert page.get_by_role("button", name=re.compile("Materialize")).first.is_disabled()
            refused = page.goto(base + f"/answers/{REQUEST_ID}")
            assert refused.status == 403
            page.screenshot(path=str(SHOTS / "5-viewer-answer-refused.png"))
            context.close()

            # privacy officer: the stored answer
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            _sign_in(page, base, "privacy_officer", f"/answers/{REQUEST_ID}")
            page.wait_for_selector("h1")
            assert SECRET_NAME in page.content()
            page.screenshot(path=str(SHOTS / "6-privacy-officer-answer.png"))
            context.close()

            # admin: the access log shows the privacy officer's read
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            _sign_in(page, base, "admin", "/access-log")
            page.wait_for_selector("table")
            rows = page.locator("tbody tr").all_inner_texts()
            assert any("privacy-officer" in r and REQUEST_ID in r and "read answer" in r and "link" in r for r in rows), rows
            page.screenshot(path=str(SHOTS / "7-admin-access-log.png"))
            context.close()
        finally:
            browser.close()
