"""The endpoint client against servers that misbehave on purpose (issue 61): real sockets on
127.0.0.1 (`tests.support.endpoint_server` hostile modes) that drip, flood, loop on a chunked
body, send garbage, redirect elsewhere or answer 429 for ever; the API key refused over plain
http before any connection; no credential of a URL in what the platform shows; and a server whose
scores depend on request order (a fake prefix cache) refused by the probe. Each test takes a few
seconds at most: deadlines of 1 s, byte caps of 1 MiB."""

from __future__ import annotations

import json
import socket
import time
import tracemalloc
from types import SimpleNamespace

import pytest

from tests.support.endpoint_server import ScriptedServer, toy_nll
from wikimem_platform.lm.endpoint import (
    check_probe,
    EndpointConfig,
    EndpointError,
    EndpointModel,
    ORDER_TOLERANCE,
    RetryPolicy,
)

ONCE = RetryPolicy(attempts=1)
SECRET = "s3cr3t-pass"


def hostile(server: ScriptedServer, **overrides) -> EndpointModel:
    settings = {"timeout_seconds": 1.0, "retry": ONCE, **overrides}
    return EndpointModel(EndpointConfig(url=server.url, served_model="toy", **settings))


# --------------------------------------------------------------------------- the deadline

@pytest.mark.parametrize("mode", ["drip", "header-drip"])
def test_a_server_dripping_a_byte_every_half_second_is_cut_at_the_calls_deadline(mode):
    """timeout_seconds bounds the whole call: a read timeout alone let a drip hold it for minutes."""
    with ScriptedServer(hostile=mode) as server:
        model = hostile(server)
        started = time.monotonic()
        with pytest.raises(EndpointError, match=r"no complete answer within 1 s \(timeout_seconds, the whole call\)"):
            model.score_token_ids([[0, 1, 2]])
        waited = time.monotonic() - started
        deadline = time.monotonic() + 5
        while not server.hung_up_after and time.monotonic() < deadline:
            time.sleep(0.05)
    assert waited < 3.0, f"held for {waited:.1f} s with a 1 s deadline"
    assert server.hung_up_after and server.hung_up_after[0] < 3.0  # the client hung up, not the server


# --------------------------------------------------------------------------- the byte cap

@pytest.mark.parametrize("mode", ["huge", "chunked"])
def test_a_huge_or_endless_body_is_refused_at_the_byte_cap_without_holding_it(mode):
    """500 MB declared ("huge"), or an endless chunked body with no length: refused at 1 MiB."""
    with ScriptedServer(hostile=mode) as server:
        model = hostile(server, timeout_seconds=20.0, max_response_bytes=2**20)
        tracemalloc.start()
        try:
            with pytest.raises(EndpointError, match=r"longer than max_response_bytes=1,048,576"):
                model.score_token_ids([[0, 1, 2]])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 16 * 2**20, f"peaked at {peak / 2**20:.0f} MiB with a 1 MiB cap"


def test_the_default_cap_fits_the_largest_legitimate_answer_with_margin():
    """16 prompts of 2,048 tokens at vLLM's measured ~148 bytes per echoed token."""
    config = EndpointConfig(url="http://127.0.0.1:1", served_model="m")
    assert config.max_response_bytes >= 4 * 16 * 2048 * 148


@pytest.mark.parametrize("field, value, message", [
    ("max_response_bytes", 10, r"max_response_bytes must be a whole number of bytes in \[1024, 1073741824\] \(got 10\)"),
    ("max_response_bytes", "lots", r"max_response_bytes must be .* \(got 'lots'\)"),
    ("timeout_seconds", 0, r"timeout_seconds must be a number of seconds in \(0, 3600\] \(got 0\)"),
    ("timeout_seconds", 1e9, r"timeout_seconds must be .* \(got 1000000000.0\)"),
])
def test_the_deadline_and_the_byte_cap_are_validated_naming_the_field(field, value, message):
    with pytest.raises(EndpointError, match=message):
        EndpointConfig(url="http://127.0.0.1:1", served_model="m", **{field: value})


# --------------------------------------------------------------------------- what the server says

@pytest.mark.parametrize("body, message", [
    (b"\x00\xffnot json at all", "malformed response: not JSON"),
    (b"[" * 200_000, "malformed response: not JSON"),  # nested past Python's recursion limit
    (b'"just a string"', "malformed completions response: no choices for 1 prompts"),
    (json.dumps({"choices": [{"index": 0, "logprobs": {"token_logprobs": [None, -1.0, -1.0, -1.0]}}],
                 "usage": {"prompt_tokens": "lots", "completion_tokens": [1]}}).encode(), None),
])
def test_garbage_json_is_a_one_line_error_never_a_traceback(body, message):
    with ScriptedServer([(200, body, {})]) as server:
        model = hostile(server)
        if message is None:  # garbage in the usage counts only: the scores stand, the counts fall back to ours
            assert model.score_token_ids([[0, 1, 2]])[0] == pytest.approx(2.0)
            assert model.client.usage.prompt_tokens == 3 and model.client.usage.completion_tokens == 0
            return
        with pytest.raises(EndpointError, match=message) as raised:
            model.score_token_ids([[0, 1, 2]])
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("echoed, message", [
    ([None, -1.0], "echoed 1 prompt tokens for a token-id prompt of 3: it altered"),  # too few
    ([None, -1.0, -1.0, -1.0, -1.0, -1.0], "echoed 5 prompt tokens for a token-id prompt of 3: it altered"),  # too many
])
def test_a_wrong_token_count_is_refused(echoed, message):
    body = json.dumps({"choices": [{"index": 0, "logprobs": {"token_logprobs": echoed}}]}).encode()
    with ScriptedServer([(200, body, {})]) as server:
        with pytest.raises(EndpointError, match=message):
            hostile(server).score_token_ids([[0, 1, 2]])


def test_a_redirect_to_another_host_is_not_followed():
    """307 keeps the body: following it would post the prompts (personal data) elsewhere."""
    with ScriptedServer() as elsewhere, ScriptedServer(hostile="redirect",
                                                      redirect_to=f"{elsewhere.url}/v1/completions") as server:
        with pytest.raises(EndpointError, match=rf"redirected to another host \({elsewhere.url}/v1/completions, "
                                                r"HTTP 307\): not followed"):
            hostile(server).score_token_ids([[0, 1, 2]])
    assert elsewhere.requests == []


def test_a_429_storm_is_retried_as_retry_after_asks_then_given_up():
    storm = [(429, b'{"error": {"message": "slow down"}}', {"Retry-After": "2"})] * 4
    with ScriptedServer(storm) as server:
        model = hostile(server, retry=RetryPolicy(attempts=4, base_seconds=0.1, max_seconds=5.0))
        slept = []
        model.client._sleep = slept.append
        with pytest.raises(EndpointError, match=r"gave up after 4 attempt\(s\): HTTP 429: slow down"):
            model.score_token_ids([[0, 1, 2]])
    assert slept == [2.0, 2.0, 2.0] and len(server.requests) == 4


def test_a_retry_after_longer_than_the_policy_allows_ends_the_retries_at_once():
    """Waiting less than the server asked would not honour it: one request, an error that says so."""
    storm = [(429, b'{"error": {"message": "quota"}}', {"Retry-After": "120"})] * 4
    with ScriptedServer(storm) as server:
        model = hostile(server, retry=RetryPolicy(attempts=4, base_seconds=0.1, max_seconds=5.0))
        slept = []
        model.client._sleep = slept.append
        with pytest.raises(EndpointError, match=r"asks to wait 120 s \(Retry-After\), longer than the retry "
                                                r"policy's max_seconds=5"):
            model.score_token_ids([[0, 1, 2]])
    assert slept == [] and len(server.requests) == 1


# --------------------------------------------------------------------------- the key over plain http

def _non_loopback_ip() -> str:
    """This machine's address on its default route (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("10.255.255.255", 1))
            address = sock.getsockname()[0]
        except OSError:
            address = ""
    if not address or address.startswith("127."):
        pytest.skip("no non-loopback address on this machine to listen on")
    return address


@pytest.mark.parametrize("how", ["api-key", "url-password"])
def test_a_key_is_refused_over_plain_http_to_a_non_loopback_host_before_any_connection(how, monkeypatch):
    address = _non_loopback_ip()
    monkeypatch.setenv("WIKIMEM_TEST_KEY", "sk-secret-123")
    with ScriptedServer(host="0.0.0.0") as server:
        port = server.url.rsplit(":", 1)[1]
        url = f"http://{address}:{port}" if how == "api-key" else f"http://svc:{SECRET}@{address}:{port}"
        config = EndpointConfig(url=url, served_model="toy", retry=ONCE,
                                api_key_env="WIKIMEM_TEST_KEY" if how == "api-key" else None)
        with pytest.raises(EndpointError, match=rf"refused to send .* over plain http to {address}: use https://") as raised:
            EndpointModel(config).score_token_ids([[0, 1, 2]])
        assert server.requests == []  # nothing was sent
        assert SECRET not in str(raised.value) and "sk-secret-123" not in str(raised.value)
        # over loopback the key goes (a local server, an SSH tunnel)
        local = EndpointModel(EndpointConfig(url=server.url, served_model="toy", retry=ONCE, api_key_env="WIKIMEM_TEST_KEY"))
        assert local.score_token_ids([[0, 1, 2]])[0] == pytest.approx(toy_nll([0, 1, 2]))
    assert server.requests[-1][2]["Authorization"] == "Bearer sk-secret-123"


# --------------------------------------------------------------------------- credentials never shown

def test_credentials_are_absent_from_the_run_tag_the_display_and_the_errors(tmp_path, capsys):
    from resources.placement import ENDPOINT_TAG, endpoint_tags
    from cli.main import main
    from wikimem_platform.registry import ModelEntry, Registry, RegistryError

    url = f"https://svc:{SECRET}@llm.internal:8443/v1?api_key={SECRET}"
    entry = SimpleNamespace(source=url, source_kind="endpoint")
    assert endpoint_tags([entry]) == {ENDPOINT_TAG: "llm.internal:8443"}
    model = EndpointModel(EndpointConfig(url=url, served_model="m"))
    shown = [repr(model), json.dumps(model.details), model.fingerprint]
    registry_url = f"sqlite:///{tmp_path / 'registry.db'}"
    registry = Registry(registry_url)
    with pytest.raises(RegistryError, match=r"^url: https://llm.internal:8443/v1\?api_key=\[redacted\]: the URL carries a "
                                            r"credential .*\(--api-key-env NAME") as refused:
        registry.register_endpoint("served", url, "m", probe=False)
    assert registry.list() == []  # nothing stored
    shown.append(str(refused.value))
    # A registry written before registration refused them may hold one: every listing still redacts it.
    stored = registry.validate(ModelEntry(name="served", source=url, source_kind="endpoint",
                                          endpoint=json.dumps(EndpointConfig(url=url, served_model="m").stored())))
    with registry.session() as session:
        session.add(stored)
        session.commit()
    assert main(["--registry-url", registry_url, "models", "list"]) == 0
    shown.append(capsys.readouterr().out)
    with socket.socket() as probe:  # an address where nothing listens: the error names the URL
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = EndpointModel(EndpointConfig(url=f"https://svc:{SECRET}@127.0.0.1:{port}/v1", served_model="m", retry=ONCE))
    with pytest.raises(EndpointError, match=rf"endpoint https://127.0.0.1:{port}/v1/completions: gave up") as raised:
        down.score_token_ids([[0, 1, 2]])
    shown += [str(raised.value), raised.value.url]
    assert "llm.internal:8443" in shown[1] and "served" in shown[4]
    leaked = [text for text in shown if SECRET in text or "svc:" in text]
    assert not leaked, leaked


# --------------------------------------------------------------------------- order-independent scores

@pytest.fixture(scope="module")
def tokenizer(smollm2):
    return smollm2.tokenizer


def test_the_probe_refuses_a_server_whose_scores_depend_on_request_order(tokenizer):
    """A fake prefix cache (vLLM issue #42019): tokens of a prefix seen before come back shifted.
    Scored once in order and once in reverse order at once, the siblings differ: refused, with the
    fix named. The same server without the cache passes with exactly no difference."""
    with ScriptedServer(tokenizer=tokenizer, prefix_cache=0.01) as server:
        model = EndpointModel(EndpointConfig(url=server.url, served_model="toy", retry=ONCE), tokenizer=tokenizer)
        with pytest.raises(EndpointError, match=r"scores depend on request order: 5 prompts sharing a \d+-token prefix.*"
                                                r"--no-enable-prefix-caching"):
            check_probe(model.probe())
    with ScriptedServer(tokenizer=tokenizer) as server:
        model = EndpointModel(EndpointConfig(url=server.url, served_model="toy", retry=ONCE), tokenizer=tokenizer)
        report = check_probe(model.probe())
    assert report.order_prompts == 5 and report.order_prefix_tokens > 128  # longer than vLLM's CPU block of 128
    assert report.order_max_abs_diff == 0.0 < ORDER_TOLERANCE
    assert any("do not depend on request order" in note for note in report.notes)


def test_the_check_before_each_run_refuses_a_server_that_turned_prefix_caching_on(tokenizer):
    """Registered against a server without the cache; the same URL later serves with it on."""
    with ScriptedServer(tokenizer=tokenizer) as server:
        registered = check_probe(EndpointModel(EndpointConfig(url=server.url, served_model="toy", retry=ONCE),
                                               tokenizer=tokenizer).probe()).as_dict()
    with ScriptedServer(tokenizer=tokenizer, prefix_cache=0.01) as server:
        model = EndpointModel(EndpointConfig(url=server.url, served_model="toy", retry=ONCE), tokenizer=tokenizer)
        with pytest.raises(EndpointError, match="scores depend on request order"):
            model.check_unchanged(registered)
