"""Sign-in and roles around dagster-webserver's ASGI app (see the package docstring for why we wrap
rather than use dagster-authkit).

`SignIn` is pure ASGI middleware (not BaseHTTPMiddleware) so that it sees both the HTTP requests and
the GraphQL websocket (`/graphql`, protocol graphql-ws) that the UI uses for run logs:

- who: a signed session cookie (local users, `wikimem users add`), or the user and groups an
  authenticating reverse proxy sends (Remote-User / Remote-Groups), believed only from configured
  proxy addresses; "no-auth" only for local development on loopback.
- what: every GraphQL document (HTTP GET/POST and each websocket `start`) goes through
  `wikimem_platform.security.policy.authorize` (mutations deny-by-default per role); a viewer's
  answers are rewritten by `policy.redact` (HTTP bodies and websocket `data` frames).
- CSRF: the cookie is SameSite=Strict and HttpOnly; every state-changing request (POST /graphql,
  the login form, logout) must carry an Origin (or Referer) of this server when it carries one, and
  POST /graphql must be JSON or application/graphql (no "simple" cross-site form post); the login
  form also has a double-submit token.
- routes: /login, /logout, /whoami, /answers/{id} and /answers/{id}/pdf (privacy officer, admin;
  each read goes to the access log), /access-log (admin).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import ipaddress
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response

from wikimem_platform.security import policy
from wikimem_platform.settings import get_settings, Settings
from wikimem_platform.subject_requests.answer_files import LETTER, PDF, answer_dir

SESSION_COOKIE, LOGIN_CSRF_COOKIE = "wikimem_session", "wikimem_login_csrf"
SECRET_ENV, SECRET_FILE = Settings.env_name("session_secret"), "session_secret"
SESSION_MAX_AGE = 8 * 3600
LOGIN_FAILURES, LOGIN_LOCKOUT_S = 5, 60
ANSWER_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"
SECURITY_HEADERS = [(b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin")]


# --------------------------------------------------------------------------- session secret and cookie


def session_secret(home: str | os.PathLike) -> bytes:
    """$WIKIMEM_SESSION_SECRET, else <instance>/session_secret (32 random bytes, 0600, made once).
    Changing it signs everybody out."""
    given = get_settings().session_secret
    if given:
        value = given.get_secret_value().encode()
        if len(value) < 32:
            raise ValueError(f"${SECRET_ENV} is shorter than 32 characters")
        return value
    path = Path(home) / SECRET_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32))
    if path.stat().st_mode & 0o077:
        raise PermissionError(f"{path}: other users can read the session secret; chmod 600 it")
    return path.read_text().strip().encode()


class Signer:
    """payload.signature, both base64url; HMAC-SHA256 with a purpose prefix; a timestamp inside."""

    def __init__(self, secret: bytes, purpose: str = "session"):
        self.key = hashlib.sha256(purpose.encode() + b"\0" + secret).digest()

    def sign(self, data: dict) -> str:
        payload = base64.urlsafe_b64encode(json.dumps({**data, "t": int(time.time())}).encode()).rstrip(b"=")
        sig = base64.urlsafe_b64encode(hmac.new(self.key, payload, hashlib.sha256).digest()).rstrip(b"=")
        return (payload + b"." + sig).decode()

    def verify(self, token: str | None, max_age: int) -> dict | None:
        if not token or token.count(".") != 1:
            return None
        payload, sig = token.encode().split(b".")
        expected = base64.urlsafe_b64encode(hmac.new(self.key, payload, hashlib.sha256).digest()).rstrip(b"=")
        if not hmac.compare_digest(sig, expected):
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(payload + b"=" * (-len(payload) % 4)))
        except ValueError:
            return None
        if not isinstance(data, dict) or time.time() - data.get("t", 0) > max_age:
            return None
        return data


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class User:
    name: str
    role: str


@dataclass
class AuthConfig:
    mode: str = "local"                      # local | proxy | none
    storage_dir: str = ""                    # the instance's storage directory (answers live under it)
    home: str = ""                           # the instance folder (session secret file)
    registry_url: str | None = None          # users and access log (default: the registry's)
    trusted_proxies: tuple[str, ...] = ()    # proxy mode: addresses or networks the headers are believed from
    user_header: str = "remote-user"
    groups_header: str = "remote-groups"
    session_max_age: int = SESSION_MAX_AGE
    secret: bytes | None = None
    stores: dict = field(default_factory=dict)


def role_from_groups(groups: str) -> str | None:
    """The highest role named by the proxy's groups ("admin" or "wikimem-admin", comma/space separated)."""
    names = {g.strip().lower().removeprefix("wikimem-").replace("-", "_") for g in groups.replace(",", " ").split()}
    for role in reversed(policy.ROLES):  # admin first
        if role in names:
            return role
    return None


def _client_trusted(client: str | None, trusted: tuple[str, ...]) -> bool:
    if not client:
        return False
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(net, strict=False) for net in trusted)


def _cookie(header: str | None, name: str) -> str | None:
    for part in (header or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def _set_cookie(response: Response, name: str, value: str, secure: bool, max_age: int | None) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/", httponly=True, samesite="strict", secure=secure)


def _same_origin(headers: Headers, scheme: str) -> bool:
    """No Origin/Referer (a non-browser client: no ambient cookie to abuse) or one naming this host."""
    origin = headers.get("origin") or headers.get("referer")
    if not origin:
        return True
    if origin == "null":
        return False
    parts = urlsplit(origin)
    return parts.netloc == headers.get("host", "") and parts.scheme in ("http", "https")


# --------------------------------------------------------------------------- pages


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:3rem auto;padding:0 1rem}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}"
        "form.login{max-width:20rem;display:grid;gap:.6rem}input{padding:.4rem}.err{color:#b00}</style>"
        f"</head><body>{body}</body></html>", status_code=status,
        headers={"cache-control": "no-store", "content-security-policy":
                 "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"})


def login_page(token: str, next_path: str, error: str = "", status: int = 200) -> HTMLResponse:
    err = f"<p class=err role=alert>{html.escape(error)}</p>" if error else ""
    return _page("Sign in · wikimem", f"""<h1>Sign in to the wikimem platform</h1>{err}
<form class=login method=post action="/login">
<input type=hidden name=csrf value="{html.escape(token)}"><input type=hidden name=next value="{html.escape(next_path)}">
<label>Name <input name=username autocomplete=username required autofocus></label>
<label>Password <input name=password type=password autocomplete=current-password required></label>
<button type=submit>Sign in</button></form>""", status)


def _safe_next(value: str | None) -> str:
    return value if value and value.startswith("/") and not value.startswith("//") and "\\" not in value else "/"


def _json_error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"errors": [{"message": message}]}, status_code=status)


# --------------------------------------------------------------------------- the middleware


class SignIn:
    """ASGI wrapper: authenticate, authorize, redact; the inner app is dagster-webserver's."""

    def __init__(self, app, config: AuthConfig):
        self.app, self.config = app, config
        self.secret = config.secret or session_secret(config.home)
        self.signer = Signer(self.secret, "session")
        self.csrf_signer = Signer(self.secret, "login-csrf")
        self.pseudonym_key = hashlib.sha256(b"pseudonym\0" + self.secret).digest()
        self.failures: dict[str, list[float]] = {}
        self._users = None
        self._log = None

    # stores are made lazily (and in a thread: they touch the database)
    @property
    def users(self):
        if self._users is None:
            from wikimem_platform.security.users import UserStore

            self._users = UserStore(self.config.registry_url)
        return self._users

    @property
    def access_log(self):
        if self._log is None:
            from wikimem_platform.security.access_log import AccessLog

            self._log = AccessLog(self.config.registry_url)
        return self._log

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            await self._http(scope, receive, self._with_headers(send))
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:  # lifespan
            await self.app(scope, receive, send)

    @staticmethod
    def _with_headers(send):
        async def wrapped(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": list(message.get("headers", [])) + SECURITY_HEADERS}
            await send(message)
        return wrapped

    # ------------------------------------------------------------------ who

    async def _user(self, scope) -> User | None:
        headers = Headers(scope=scope)
        mode = self.config.mode
        if mode == "none":
            return User("developer (no sign-in)", policy.ADMIN)
        if mode == "proxy":
            client = (scope.get("client") or (None,))[0]
            if not _client_trusted(client, self.config.trusted_proxies):
                return None
            name = headers.get(self.config.user_header)
            role = role_from_groups(headers.get(self.config.groups_header, ""))
            return User(name, role) if name and role else None
        data = self.signer.verify(_cookie(headers.get("cookie"), SESSION_COOKIE), self.config.session_max_age)
        if not data or not isinstance(data.get("u"), str):
            return None
        stored = await run_in_threadpool(self.users.get, data["u"])
        if stored is None or stored.version != data.get("v") or stored.role not in policy.ROLES:
            return None  # removed, or password/role changed since the cookie was made
        return User(stored.name, stored.role)

    # ------------------------------------------------------------------ HTTP

    async def _http(self, scope, receive, send):
        request = Request(scope, receive)
        path, method = scope["path"], scope["method"]
        secure = scope.get("scheme") == "https" or (
            self.config.mode == "proxy" and request.headers.get("x-forwarded-proto") == "https"
            and _client_trusted((scope.get("client") or (None,))[0], self.config.trusted_proxies))

        if path == "/login":
            return await self._login(request, secure)(scope, receive, send)
        if path == "/logout":
            if method not in ("GET", "POST") or not _same_origin(request.headers, scope.get("scheme", "http")):
                return await PlainTextResponse("cross-site sign-out refused", 403)(scope, receive, send)
            response = RedirectResponse("/login", status_code=303)
            response.delete_cookie(SESSION_COOKIE, path="/", samesite="strict", httponly=True, secure=secure)
            return await response(scope, receive, send)

        user = await self._user(scope)
        if user is None:
            return await self._anonymous(request)(scope, receive, send)
        scope.setdefault("state", {})
        scope["state"]["wikimem_user"] = user

        if path == "/whoami":
            return await JSONResponse({"name": user.name, "role": user.role})(scope, receive, send)
        if path == "/access-log":
            return await (await self._access_log_page(user))(scope, receive, send)
        if path.startswith("/answers/"):
            return await (await self._answer(request, user))(scope, receive, send)
        if path == "/graphql":
            return await self._graphql(scope, receive, send, request, user)
        if not policy.sees_request_data(user.role) and (path.startswith(("/logs/", "/download_debug/", "/download/"))
                                                        or path in ("/notebook", "/dagit/notebook")):
            return await PlainTextResponse(f"role {user.role} may not download step logs or run exports", 403)(scope, receive, send)
        if method not in ("GET", "HEAD", "OPTIONS") and not policy.may_write_rest(user.role):
            return await PlainTextResponse(f"role {user.role} may not {method} {path}", 403)(scope, receive, send)
        if method not in ("GET", "HEAD", "OPTIONS") and not _same_origin(request.headers, scope.get("scheme", "http")):
            return await PlainTextResponse("cross-site request refused", 403)(scope, receive, send)
        await self.app(scope, receive, send)

    def _anonymous(self, request: Request) -> Response:
        if self.config.mode == "proxy":
            return PlainTextResponse("sign in through the authenticating proxy (no trusted user and role headers)", 401)
        wants_html = "text/html" in request.headers.get("accept", "")
        if request.url.path == "/graphql" or not wants_html or request.method != "GET":
            return _json_error("sign in first (POST /login)", 401)
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)

    def _login(self, request: Request, secure: bool):
        """GET: the form; POST: check the double-submit token and the password (awaitable response)."""
        if self.config.mode != "local":
            return PlainTextResponse("sign-in is handled by the authenticating proxy" if self.config.mode == "proxy"
                                     else "sign-in is off (--no-auth)", 404)

        async def respond(scope, receive, send):
            if request.method == "GET":
                token = secrets.token_urlsafe(24)
                response = login_page(token, _safe_next(request.query_params.get("next")))
                _set_cookie(response, LOGIN_CSRF_COOKIE, token, secure, 600)
                return await response(scope, receive, send)
            if request.method != "POST":
                return await PlainTextResponse("Method Not Allowed", 405)(scope, receive, send)
            body = (await request.body()).decode("utf-8", "replace")
            form = {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}
            token = _cookie(request.headers.get("cookie"), LOGIN_CSRF_COOKIE)
            next_path = _safe_next(form.get("next"))
            fresh = secrets.token_urlsafe(24)

            def again(message: str, status: int) -> Response:
                response = login_page(fresh, next_path, message, status)
                _set_cookie(response, LOGIN_CSRF_COOKIE, fresh, secure, 600)
                return response

            if not _same_origin(request.headers, request.url.scheme) or not token \
                    or not hmac.compare_digest(token, form.get("csrf", "")):
                return await again("The form expired or came from another site; sign in again.", 403)(scope, receive, send)
            name, password = form.get("username", ""), form.get("password", "")
            client = (scope.get("client") or ("?",))[0]
            key = f"{name}|{client}"
            now = time.monotonic()
            recent = [t for t in self.failures.get(key, []) if now - t < LOGIN_LOCKOUT_S]
            if len(recent) >= LOGIN_FAILURES:
                return await again(f"Too many failed sign-ins; wait {LOGIN_LOCKOUT_S} s.", 429)(scope, receive, send)
            user = await run_in_threadpool(self.users.authenticate, name, password)
            if user is None:
                self.failures[key] = recent + [now]
                return await again("Wrong name or password.", 401)(scope, receive, send)
            self.failures.pop(key, None)
            response = RedirectResponse(next_path, status_code=303)
            _set_cookie(response, SESSION_COOKIE, self.signer.sign({"u": user.name, "v": user.version}), secure,
                        self.config.session_max_age)
            response.delete_cookie(LOGIN_CSRF_COOKIE, path="/")
            return await response(scope, receive, send)

        return respond

    # ------------------------------------------------------------------ GraphQL over HTTP

    async def _graphql(self, scope, receive, send, request: Request, user: User):
        method = scope["method"]
        content_type = request.headers.get("content-type", "")
        body = b""
        if method == "GET":
            if "text/html" in request.headers.get("accept", "") and "query" not in request.query_params:
                return await self.app(scope, receive, send)  # the GraphiQL page
            document = request.query_params.get("query")
        elif method == "POST":
            if not _same_origin(request.headers, scope.get("scheme", "http")):
                return await _json_error("cross-site GraphQL request refused", 403)(scope, receive, send)
            body = await request.body()
            # The same source Dagster's endpoint reads (dagster_webserver.graphql.graphql_http_endpoint);
            # a form-encoded or text/plain post (query in the URL) would be a CSRF "simple request".
            if "application/json" in content_type:
                try:
                    data = json.loads(body or b"null")
                except ValueError:
                    return await _json_error("GraphQL request is invalid JSON", 400)(scope, receive, send)
                document = data.get("query") if isinstance(data, dict) else None
                if isinstance(data, list):
                    return await _json_error("batched GraphQL requests are not accepted", 400)(scope, receive, send)
            elif "application/graphql" in content_type:
                document = body.decode("utf-8", "replace")
            else:
                return await _json_error("POST /graphql needs Content-Type application/json", 415)(scope, receive, send)
        else:
            return await self.app(scope, receive, send)
        if document is not None:
            if not isinstance(document, str):
                return await _json_error("query must be a string", 400)(scope, receive, send)
            try:
                ops = policy.authorize(user.role, document)
            except policy.Refused as refused:
                return await _json_error(refused.message, refused.status)(scope, receive, send)
            if method == "GET" and ops.mutation - policy.HARMLESS:
                return await _json_error("mutations only by POST", 405)(scope, receive, send)

        replay = _replay(body, receive) if method == "POST" else receive
        inner_scope = scope
        if user.role != policy.ADMIN:
            # The answer is rewritten (redaction, permission flags): ask for it uncompressed.
            inner_scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != b"accept-encoding"]}
        await self.app(inner_scope, replay, self._rewriting_send(send, user))

    def _rewrite(self, result: dict, user: User) -> dict:
        if not policy.sees_request_data(user.role):
            if "data" in result:
                result["data"] = policy.redact(result["data"], self.pseudonym_key, role=user.role)
            if "errors" in result:
                result["errors"] = [{**e, "message": policy.REQUEST_ID.sub("dsr-hidden", str(e.get("message", "")))}
                                    for e in result["errors"] if isinstance(e, dict)]
        elif user.role != policy.ADMIN and "data" in result:
            result["data"] = policy.restrict_permissions(result["data"], user.role)
        return result

    def _rewriting_send(self, send, user: User):
        if user.role == policy.ADMIN:
            return send
        start: dict = {}
        chunks: list[bytes] = []

        async def wrapped(message):
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                return await send(message)
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            if dict(headers).get(b"content-type", b"").startswith(b"application/json"):
                try:
                    body = json.dumps(self._rewrite(json.loads(body), user)).encode()
                except ValueError:
                    pass
            await send({**start, "headers": headers + [(b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body, "more_body": False})

        return wrapped

    # ------------------------------------------------------------------ GraphQL websocket

    async def _websocket(self, scope, receive, send):
        headers = Headers(scope=scope)
        user = await self._user(scope)
        if user is None or not _same_origin(headers, "http"):
            status, text = (401, "sign in first") if user is None else (403, "cross-site websocket refused")
            if "websocket.http.response" in (scope.get("extensions") or {}):
                await send({"type": "websocket.http.response.start", "status": status,
                            "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "websocket.http.response.body", "body": text.encode()})
            else:
                await send({"type": "websocket.close", "code": 4401 if status == 401 else 4403})
            return

        async def guarded_receive():
            while True:
                message = await receive()
                if message["type"] != "websocket.receive" or not message.get("text"):
                    return message
                try:
                    frame = json.loads(message["text"])
                except ValueError:
                    return message
                if not isinstance(frame, dict) or frame.get("type") not in ("start", "subscribe"):
                    return message
                payload = frame.get("payload") or {}
                try:
                    policy.authorize(user.role, payload.get("query") or "")
                except policy.Refused as refused:
                    await send({"type": "websocket.send", "text": json.dumps(
                        {"type": "error", "id": frame.get("id"), "payload": {"message": refused.message}})})
                    continue
                return message

        async def redacting_send(message):
            if message["type"] == "websocket.send" and message.get("text") and user.role != policy.ADMIN:
                try:
                    frame = json.loads(message["text"])
                except ValueError:
                    frame = None
                if isinstance(frame, dict) and isinstance(frame.get("payload"), dict):
                    frame["payload"] = self._rewrite(frame["payload"], user)
                    message = {**message, "text": json.dumps(frame)}
            await send(message)

        await self.app(scope, guarded_receive, redacting_send)

    # ------------------------------------------------------------------ our pages

    async def _answer(self, request: Request, user: User) -> Response:
        parts = request.url.path.strip("/").split("/")
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "pdf"):
            return PlainTextResponse("not found", 404)
        request_id, pdf = parts[1], len(parts) == 3
        if not policy.reads_answers(user.role):
            return PlainTextResponse(f"role {user.role} may not read answers (privacy_officer or admin)", 403)
        if not policy.REQUEST_ID.fullmatch(request_id):
            return PlainTextResponse("not a request id (dsr-YYYYMMDD-xxxxxx)", 404)
        file = answer_dir(self.config.storage_dir, request_id) / (PDF if pdf else LETTER)
        if not file.is_file():
            return PlainTextResponse(f"no stored answer{' PDF' if pdf else ''} for {request_id}", 404)
        referer = urlsplit(request.headers.get("referer", ""))
        # "ui": followed from a page of this server; "link": opened directly (a mailed or pasted link,
        # also when it passed through the sign-in form first)
        surface = "ui" if referer.netloc == request.headers.get("host") and referer.netloc \
            and not referer.path.startswith("/login") else "link"
        await run_in_threadpool(self.access_log.record, who=user.name, surface=surface,
                                action="read answer pdf" if pdf else "read answer", request_id=request_id, role=user.role)
        headers = {"cache-control": "no-store", "content-security-policy": ANSWER_CSP}
        if pdf:  # read whole in one open (a FileResponse stats, then reopens: a rewrite between would mix two PDFs)
            return Response(file.read_bytes(), media_type="application/pdf",
                            headers={**headers, "content-disposition": f'inline; filename="{request_id}.pdf"'})
        return HTMLResponse(file.read_text(encoding="utf-8"), headers=headers)

    async def _access_log_page(self, user: User) -> Response:
        if not policy.manages_users(user.role):
            return PlainTextResponse(f"role {user.role} may not read the access log (admin)", 403)
        rows = await run_in_threadpool(self.access_log.list)
        cells = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(v) if v is not None else '')}</td>" for v in
                             (r.at.strftime("%Y-%m-%d %H:%M:%S UTC"), r.who, r.role, r.surface, r.action, r.request_id))
            + "</tr>" for r in reversed(rows))
        return _page("Access log · wikimem", "<h1>Access log</h1><p>Every read of a request or its answer, newest first."
                     "</p><table><thead><tr><th>When</th><th>Who</th><th>Role</th><th>Surface</th><th>Action</th>"
                     f"<th>Request</th></tr></thead><tbody>{cells}</tbody></table>")


def _replay(body: bytes, original: Callable) -> Callable:
    """A receive() that hands the already-read body to the inner app once, then the client's own
    messages (its disconnect)."""
    sent = False

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await original()

    return receive
