"""Credentials out of every URL the platform shows or stores (issue 61): one home for it.

An endpoint URL may carry a user and password (``https://svc:pass@llm.internal:8443/v1``) or a key
in its query (``?api_key=...``). The client needs them to connect; nothing else may see them: run
tags, asset metadata, logs and error texts, registry listings, letters and annexes all show
`redact_url(url)` (userinfo dropped, credential-like query values replaced by ``[redacted]``).
`redact_urls_in(text)` does the same to every URL inside a free text (an error message).

`is_loopback(host)` says whether a host is this machine by its literal name (``localhost``,
127.0.0.0/8, ``::1``): no DNS look-up, which a hostile resolver could answer. Only there may an
API key travel over plain http. Stdlib only (`urllib.parse`, `ipaddress`); imports nothing of the
platform.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"
# Query parameters that carry a credential (case-insensitive, '-' and '_' alike).
SECRET_QUERY_KEYS = frozenset({"key", "apikey", "api_key", "token", "access_token", "auth", "password",
                               "passwd", "secret", "sig", "signature", "x-api-key", "code"})
_URL_IN_TEXT = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")


def _secret_key(name: str) -> bool:
    return name.casefold().replace("-", "_") in {k.replace("-", "_") for k in SECRET_QUERY_KEYS}


def redact_url(url: object) -> str:
    """`url` without its user, password and credential-like query values; a bare
    ``user:pass@host:port`` (no scheme) loses its userinfo too. Anything unparsable is shown
    only up to its host."""
    text = "" if url is None else str(url)
    if "://" not in text:
        return text.rsplit("@", 1)[-1] if "@" in text.split("/", 1)[0] else text
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:  # a malformed port or bracket: keep the scheme and what follows the last '@'
        scheme, rest = text.split("://", 1)
        return f"{scheme}://{rest.split('/', 1)[0].rsplit('@', 1)[-1]}"
    netloc = (f"[{host}]" if ":" in host else host) + port
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_secret_key(k) for k, _ in pairs):
            query = urlencode([(k, REDACTED if _secret_key(k) else v) for k, v in pairs], safe="[]")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def redact_urls_in(text: object) -> str:
    """`text` with every URL in it redacted (`redact_url`)."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), "" if text is None else str(text))


def host_port(url: str) -> str:
    """``host:port`` of a URL (the port only where it has one), never its userinfo: what a run tag names."""
    return urlsplit(redact_url(url)).netloc


def has_credentials(url: str) -> bool:
    """Whether the URL carries a user or password in it."""
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return "@" in str(url)
    return parts.username is not None or parts.password is not None


def carries_secrets(url: str) -> bool:
    """Whether the URL holds a credential: a user or password, or a credential-like query value
    (what `redact_url` would hide). Such a URL is not stored: the key comes from the environment."""
    if has_credentials(url):
        return True
    try:
        return any(_secret_key(k) for k, _ in parse_qsl(urlsplit(str(url)).query, keep_blank_values=True))
    except ValueError:
        return False


def is_loopback(host: str | None) -> bool:
    """Whether `host` names this machine literally: localhost, 127.0.0.0/8 or ::1."""
    if not host:
        return False
    host = host.strip("[]").rstrip(".").casefold()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
