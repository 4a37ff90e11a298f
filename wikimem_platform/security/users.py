"""The people who sign in to the Dagster UI: name, role (`policy.ROLES`) and an scrypt hash of the
password, in table ``platform_users`` of the registry database (beside ``access_log``).

scrypt from the standard library (memory-hard, salted per user, parameters stored in the hash so
they can be raised later); comparison in constant time; an unknown name costs the same hash as a
wrong password, so timing does not tell which names exist. `version` goes up with every password
or role change and is part of the session cookie: a change signs the user out everywhere.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from datetime import UTC, datetime

from sqlmodel import Field, Session, SQLModel, create_engine, select

from wikimem_platform.registry import default_registry_url
from wikimem_platform.security.policy import ROLES, check_role

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
MIN_PASSWORD = 12
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1


class PlatformUser(SQLModel, table=True):
    __tablename__ = "platform_users"

    name: str = Field(primary_key=True)
    role: str
    password_hash: str
    version: int = 1
    created_at: datetime
    updated_at: datetime


def hash_password(password: str, n: int = SCRYPT_N, r: int = SCRYPT_R, p: int = SCRYPT_P) -> str:
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=64 * 1024 * 1024, dklen=32)
    b64 = lambda b: base64.b64encode(b).decode("ascii")  # noqa: E731
    return f"scrypt${n}${r}${p}${b64(salt)}${b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                             maxmem=64 * 1024 * 1024, dklen=len(expected))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, expected)


_DUMMY_HASH = hash_password("not a password of anyone", n=SCRYPT_N)


def check_name(name: str) -> str:
    if not NAME.fullmatch(name or ""):
        raise ValueError(f"name {name!r}: 1-64 characters, letters, digits and . _ @ - (starting with a letter or digit)")
    return name


def check_password(password: str) -> str:
    if len(password or "") < MIN_PASSWORD:
        raise ValueError(f"password: at least {MIN_PASSWORD} characters")
    return password


class UserStore:
    def __init__(self, url: str | None = None):
        self.url = url or default_registry_url()
        self.engine = create_engine(self.url)
        SQLModel.metadata.create_all(self.engine, tables=[PlatformUser.__table__])

    def add(self, name: str, role: str, password: str) -> PlatformUser:
        check_name(name), check_role(role), check_password(password)
        now = datetime.now(UTC)
        with Session(self.engine, expire_on_commit=False) as session:
            if session.get(PlatformUser, name) is not None:
                raise ValueError(f"name {name!r}: a user of that name exists (`users set-role` changes a role)")
            user = PlatformUser(name=name, role=role, password_hash=hash_password(password), created_at=now, updated_at=now)
            session.add(user)
            session.commit()
        return user

    def get(self, name: str) -> PlatformUser | None:
        with Session(self.engine, expire_on_commit=False) as session:
            return session.get(PlatformUser, name)

    def list(self) -> list[PlatformUser]:
        with Session(self.engine, expire_on_commit=False) as session:
            return list(session.exec(select(PlatformUser).order_by(PlatformUser.name)))

    def count(self) -> int:
        return len(self.list())

    def remove(self, name: str) -> None:
        with Session(self.engine) as session:
            user = session.get(PlatformUser, name)
            if user is None:
                raise KeyError(f"name {name!r}: no such user ({self._known(session)})")
            session.delete(user)
            session.commit()

    def set_role(self, name: str, role: str) -> PlatformUser:
        check_role(role)
        return self._change(name, role=role)

    def set_password(self, name: str, password: str) -> PlatformUser:
        check_password(password)
        return self._change(name, password_hash=hash_password(password))

    def _change(self, name: str, **fields) -> PlatformUser:
        with Session(self.engine, expire_on_commit=False) as session:
            user = session.get(PlatformUser, name)
            if user is None:
                raise KeyError(f"name {name!r}: no such user ({self._known(session)})")
            for key, value in fields.items():
                setattr(user, key, value)
            user.version += 1
            user.updated_at = datetime.now(UTC)
            session.add(user)
            session.commit()
            session.refresh(user)
        return user

    @staticmethod
    def _known(session: Session) -> str:
        names = [u.name for u in session.exec(select(PlatformUser).order_by(PlatformUser.name))]
        return "users: " + ", ".join(names) if names else "no users yet"

    def authenticate(self, name: str, password: str) -> PlatformUser | None:
        """The user if the password is theirs (the same work either way when the name is unknown)."""
        user = self.get(name) if NAME.fullmatch(name or "") else None
        ok = verify_password(password, user.password_hash if user else _DUMMY_HASH)
        return user if user is not None and ok and user.role in ROLES else None
