"""The instance secret: every digest of personal text the platform stores or logs (a private
person's subject key, the sentence cache's keys, logged subject references) is a MAC under it,
so a guessed name or sentence cannot be confirmed from what is stored.

Taken from $WIKIMEM_INSTANCE_SECRET, else from ``<DAGSTER_HOME>/instance_secret`` (created on
first use: 32 random bytes, mode 0600). Losing it only costs the sentence cache's reuse and the
duplicate-request check across the change; it never makes stored data readable.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from functools import lru_cache
from pathlib import Path

from wikimem_platform.settings import get_settings, instance_paths, Settings

SECRET_ENV = Settings.env_name("instance_secret")
SECRET_FILE = "instance_secret"


def instance_home() -> Path:
    """$DAGSTER_HOME, else ./.dagster_home (as the registry and the instance default)."""
    return instance_paths().home


def secret_path(home: str | os.PathLike | None = None) -> Path:
    return Path(home or instance_home()) / SECRET_FILE


def instance_secret(home: str | os.PathLike | None = None) -> bytes:
    """The secret bytes (created 0600 on first use when neither the environment nor the file has one)."""
    from_env = get_settings().instance_secret
    if from_env:
        return from_env.get_secret_value().encode("utf-8")
    return _file_secret(str(secret_path(home)))


@lru_cache(maxsize=8)
def _file_secret(path: str) -> bytes:
    file = Path(path)
    if not file.exists():
        file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:  # O_EXCL: two processes starting at once agree on the first one's secret
            fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32))
    text = file.read_text().strip()
    if len(text) < 32:
        raise ValueError(f"{file}: the instance secret is shorter than 32 characters; delete the file to make a new one")
    return text.encode("utf-8")


def purpose_key(purpose: str, secret: bytes | None = None) -> bytes:
    """The key of one use of the secret (so a subject key never equals a cache key of the same text)."""
    return hashlib.blake2b(purpose.encode("utf-8"), key=(secret or instance_secret())[:64], digest_size=32).digest()


def keyed_digest(text: str, purpose: str, size: int = 16, secret: bytes | None = None) -> bytes:
    """Keyed BLAKE2b (BLAKE2's own MAC mode, as strong as an HMAC and faster on the hot path of the
    sentence cache) of `text` under the instance secret's key for `purpose`."""
    return hashlib.blake2b(text.encode("utf-8"), key=purpose_key(purpose, secret), digest_size=size).digest()


def keyed_hex(text: str, purpose: str, chars: int = 12, secret: bytes | None = None) -> str:
    return keyed_digest(text, purpose, size=max(8, (chars + 1) // 2), secret=secret).hex()[:chars]


def subject_reference(subject_key: str) -> str:
    """What logs and run metadata may show of a request's subject (a QID or a private key): a keyed
    pseudonym, the same for every request about the person on this instance, that no guess of a
    QID, name or facts can be checked against."""
    return "subject-" + keyed_hex(subject_key, "subject-reference")
