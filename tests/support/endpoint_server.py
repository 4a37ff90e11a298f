"""A real HTTP server on 127.0.0.1 that answers like an OpenAI-compatible completions server,
from a script (429, malformed JSON, no log-probabilities, ...) or as a toy language model whose
log-probabilities are a known function of the token ids: the endpoint client's tests compute
every NLL by hand. Text prompts are tokenized without any start token, as vLLM does for SmolLM2.

Given a real model (`model=`, a LoadedModel), it serves that model the way vLLM does, on its own
code path: the prompt log-probabilities of each token-id prompt from one forward pass, the top k
next-token log-probabilities of a prompt asked with ``logprobs: k, max_tokens: 1`` (keyed
"token_id:N" as vLLM's return_tokens_as_token_ids, or by token text), and greedy completions of
token-id prompts one at a time (no padding) through `generate`.

With ``echo_error=STATUS`` it is a server that echoes its input in its errors (issue 60): every
completions request is answered with that HTTP status and an error message quoting the first
prompt as text (token ids decoded by `tokenizer`) and the request as JSON, as some inference
servers do; `echoed` keeps each body sent.

Hostile modes (issue 61), each a real socket misbehaving: ``hostile="drip"`` sends a declared
1,000-byte answer one byte every 0.5 s; ``"huge"`` declares and streams 500 MB; ``"chunked"`` an
endless chunked body; ``"header-drip"`` its headers a byte at a time; ``"redirect"`` answers 307 to
``redirect_to``. Each stops when the client hangs up (or after HOSTILE_SECONDS). With
``prefix_cache=DELTA`` the toy model behaves as vLLM with prefix caching on (vLLM issue #42019):
a prompt's tokens inside a prefix it has seen before (whole blocks of CACHE_BLOCK tokens) get
their log-probabilities shifted by DELTA, so the same prompts scored in another order differ."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOSTILE_SECONDS = 30.0  # the longest a hostile answer goes on when nobody hangs up
CACHE_BLOCK = 4  # tokens per block of the fake prefix cache (vLLM: 16 on GPU, 128 on CPU)


def toy_logprob(token_id: int) -> float:
    """The toy server's log p(token | anything before it): a known function of the id."""
    return -(0.5 + (token_id % 97) / 10)


def toy_nll(ids) -> float:
    return -sum(toy_logprob(t) for t in ids[1:])


class ScriptedServer:
    """A real HTTP server: answers `script` entries in order (status, body bytes, headers), then
    behaves as a toy LM (echo + logprobs for token-id prompts; text prompts tokenized by
    `tokenizer` without any start token, as vLLM does for SmolLM2)."""

    def __init__(self, script=(), tokenizer=None, echo_extra_token: bool = False, reverse_choices: bool = False,
                 fail_after: int | None = None, logprob_shift: float = 0.0, model=None,
                 token_ids: bool = True, has_tokenize: bool = True, metrics: str | None = None,
                 token_id_keys: bool = True, echo_error: int | None = None, hostile: str | None = None,
                 redirect_to: str | None = None, prefix_cache: float = 0.0, host: str = "127.0.0.1"):
        self.script = list(script)
        self.hostile, self.redirect_to = hostile, redirect_to
        self.prefix_cache = prefix_cache  # != 0: log-probabilities depend on what was seen before
        self._seen_blocks: set[tuple[int, ...]] = set()
        self._cache_lock = threading.Lock()
        self.hung_up_after: list[float] = []  # seconds each hostile answer ran before the client left
        self.echo_error = echo_error  # an HTTP status: every completions request fails with its prompt echoed
        self.echoed: list[bytes] = []
        self.fail_after = fail_after  # completions requests answered before every later one gets HTTP 400
        self.logprob_shift = logprob_shift  # added to every log-probability: "other weights" behind a URL
        self.tokenizer = tokenizer
        self.token_ids = token_ids  # False: token-id prompts refused (HTTP 400), as some servers do
        self.has_tokenize = has_tokenize  # False: no /tokenize (404), as a provider's API
        self.metrics = metrics  # the Prometheus /metrics page (None: 404)
        self.model = model  # a LoadedModel served for real (log-probabilities and greedy completions)
        self.token_id_keys = token_id_keys  # False: top log-probabilities keyed by token text (a server without vLLM's
        # return_tokens_as_token_ids)
        self._model_lock = threading.Lock()
        self.echo_extra_token = echo_extra_token
        self.reverse_choices = reverse_choices
        self.requests: list[tuple[str, dict, dict]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, status, body: bytes, headers=None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                server.requests.append((self.path, {}, dict(self.headers)))
                if self.path == "/v1/models":
                    card = {"id": "toy"}
                    if server.model is not None:  # as vLLM lists a served model's context
                        card["max_model_len"] = int(server.model.model.config.max_position_embeddings)
                    self._answer(200, json.dumps({"data": [card]}).encode())
                elif self.path == "/metrics" and server.metrics is not None:
                    self._answer(200, server.metrics.encode())
                else:
                    self._answer(404, b'{"error": {"message": "not found"}}')

            def _hostile(self) -> None:
                """Misbehave as `server.hostile` says until the client hangs up."""
                started, mode = time.monotonic(), server.hostile
                try:
                    if mode == "redirect":
                        self.send_response(307)
                        self.send_header("Location", server.redirect_to)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    if mode == "header-drip":
                        for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(0.5)
                            if time.monotonic() - started > HOSTILE_SECONDS:
                                return
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    if mode == "chunked":
                        self.send_header("Transfer-Encoding", "chunked")
                    else:
                        self.send_header("Content-Length", str(1000 if mode == "drip" else 500_000_000))
                    self.end_headers()
                    block = b'{"choices": [' + b" " * 65_000
                    while time.monotonic() - started < HOSTILE_SECONDS:
                        if mode == "drip":
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(0.5)
                        elif mode == "chunked":
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
                        else:
                            self.wfile.write(block)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass
                finally:
                    server.hung_up_after.append(time.monotonic() - started)

            def do_POST(self):
                payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append((self.path, payload, dict(self.headers)))
                if server.hostile is not None:
                    return self._hostile()
                if server.script:
                    status, body, headers = server.script.pop(0)
                    return self._answer(status, body, headers)
                if self.path == "/tokenize" and server.tokenizer is not None and server.has_tokenize:
                    ids = server.tokenizer(payload["prompt"], add_special_tokens=payload["add_special_tokens"])["input_ids"]
                    return self._answer(200, json.dumps({"tokens": ids, "count": len(ids)}).encode())
                if self.path != "/v1/completions":
                    return self._answer(404, b'{"error": {"message": "not found"}}')
                if server.echo_error is not None:
                    body = server.echo_body(payload)
                    server.echoed.append(body)
                    return self._answer(server.echo_error, body)
                if server.fail_after is not None:
                    if server.fail_after <= 0:
                        return self._answer(400, b'{"error": {"message": "quota exhausted"}}')
                    server.fail_after -= 1
                if not server.token_ids and any(isinstance(p, list) for p in payload["prompt"]):
                    return self._answer(400, b'{"error": {"message": "prompt must be a string or a list of strings"}}')
                choices = []
                for index, prompt in enumerate(payload["prompt"]):
                    if isinstance(prompt, list):
                        ids = prompt
                    elif server.tokenizer is not None:
                        ids = server.tokenizer(prompt)["input_ids"]
                    else:
                        ids = [ord(c) for c in prompt]  # a tokenizer of characters
                    if server.echo_extra_token:
                        ids = [1, *ids]
                    if server.model is not None:
                        choices.append({"index": index, **server.model_choice(ids, payload)})
                        continue
                    generated = 5
                    choice = {"index": index, "text": "x", "finish_reason": "length"}
                    if payload.get("echo") and payload.get("logprobs") is not None:
                        shifts = server.cache_shifts(ids)
                        values = [None] + [toy_logprob(t) + server.logprob_shift + shift for t, shift in
                                           zip(ids[1:], shifts[1:])] + [toy_logprob(generated)]
                        choice["logprobs"] = {"token_logprobs": values, "tokens": [str(t) for t in [*ids, generated]]}
                    choices.append(choice)
                if server.reverse_choices:
                    choices.reverse()
                body = {"choices": choices, "usage": {"prompt_tokens": sum(len(p) for p in payload["prompt"]),
                                                      "completion_tokens": len(choices)}}
                self._answer(200, json.dumps(body).encode())

        self.httpd = ThreadingHTTPServer((host, 0), Handler)  # host "0.0.0.0": reachable by a non-loopback address too
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def cache_shifts(self, ids: list[int]) -> list[float]:
        """Per token, what the fake prefix cache adds: `prefix_cache` inside the longest run of
        whole blocks seen before, 0 elsewhere; this prompt's blocks are then seen."""
        if not self.prefix_cache:
            return [0.0] * len(ids)
        with self._cache_lock:
            cached = 0
            for end in range(CACHE_BLOCK, len(ids) + 1, CACHE_BLOCK):
                if tuple(ids[:end]) not in self._seen_blocks:
                    break
                cached = end
            self._seen_blocks.update(tuple(ids[:end]) for end in range(CACHE_BLOCK, len(ids) + 1, CACHE_BLOCK))
        return [self.prefix_cache if i < cached else 0.0 for i in range(len(ids))]

    def echo_body(self, payload: dict) -> bytes:
        """An error that quotes the request: its first prompt as text, then the request as JSON."""
        first = payload["prompt"][0] if isinstance(payload.get("prompt"), list) else payload.get("prompt")
        if isinstance(first, list):
            text = self.tokenizer.decode(first, skip_special_tokens=True) if self.tokenizer is not None else str(first)
        else:
            text = str(first)
        request = json.dumps({"prompt": text, "model": payload.get("model")})
        message = f"Internal Server Error while processing prompt {text!r}; request body: {request}"
        return json.dumps({"error": {"message": message, "type": "InternalServerError"}}).encode()

    def model_choice(self, ids: list[int], payload: dict) -> dict:
        """One choice from the real model: with echo, the prompt's log-probabilities (None for the
        first token) and one greedy token; else the greedy completion's text (max_tokens new
        tokens, stopped at end of sequence, special tokens dropped)."""
        import torch

        lm = self.model
        eos = lm.tokenizer.eos_token_id
        with self._model_lock, torch.inference_mode():
            input_ids = torch.tensor([ids], device=lm.device)
            if payload.get("echo"):
                logp = torch.log_softmax(lm.model(input_ids=input_ids).logits[0].float(), dim=-1)
                values = [None] + [float(logp[i - 1, t]) for i, t in enumerate(ids) if i > 0]
                nxt = int(logp[-1].argmax())
                return {"text": lm.tokenizer.decode([nxt]), "finish_reason": "length",
                        "logprobs": {"token_logprobs": [*values, float(logp[-1, nxt])],
                                     "tokens": [str(t) for t in [*ids, nxt]]}}
            if payload.get("logprobs") and int(payload.get("max_tokens", 16)) == 1:  # top-logprobs access
                logp = torch.log_softmax(lm.model(input_ids=input_ids).logits[0, -1].float(), dim=-1)
                values, tokens = torch.topk(logp, int(payload["logprobs"]))
                by_id = bool(payload.get("return_tokens_as_token_ids")) and self.token_id_keys
                top = {(f"token_id:{int(t)}" if by_id else lm.tokenizer.decode([int(t)])): float(v)
                       for v, t in zip(values, tokens)}
                first = int(tokens[0])
                return {"text": lm.tokenizer.decode([first]), "finish_reason": "length",
                        "logprobs": {"tokens": [next(iter(top))], "token_logprobs": [float(values[0])],
                                     "top_logprobs": [top]}}
            out = lm.model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                    max_new_tokens=int(payload["max_tokens"]), do_sample=False, num_beams=1,
                                    temperature=None, top_p=None, top_k=None, pad_token_id=eos, eos_token_id=eos)
        new = out[0, len(ids):].tolist()
        new = new[:new.index(eos)] if eos in new else new
        return {"text": lm.tokenizer.decode(new, skip_special_tokens=True), "finish_reason": "stop"}

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
