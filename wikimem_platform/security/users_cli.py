"""`wikimem users ...`: who may sign in to the Dagster UI (`python -m webserver`) and with which role.

A password is never an argument (it would land in the shell history and in `ps`): it comes from
$WIKIMEM_NEW_PASSWORD (scripts, containers) or is asked for twice with getpass.
"""

from __future__ import annotations

import getpass

from wikimem_platform.security.policy import ROLE_HELP, ROLES
from wikimem_platform.security.users import UserStore
from wikimem_platform.settings import get_settings, Settings

PASSWORD_ENV = Settings.env_name("new_password")


class UsersCliError(Exception):
    """A refused `wikimem users` command: the CLI's `main` prints it as it prints its own errors
    (`error: <message>`, status 2, no traceback); its own class so this module needs no CLI import."""

    status = 2

    def __init__(self, message: str, *extra: str):
        super().__init__(message)
        self.message, self.extra = message, extra


def _error(message: str) -> UsersCliError:
    return UsersCliError(message)


def _store(args) -> UserStore:
    return UserStore(getattr(args, "registry_url", None))


def _role(value: str) -> str:
    if value not in ROLES:
        raise _error(f"--role {value!r} is not one of {', '.join(ROLES)}")
    return value


def _new_password() -> str:
    given = get_settings().new_password
    if given:
        return given.get_secret_value()
    try:
        first = getpass.getpass("password: ")
        second = getpass.getpass("password again: ")
    except (EOFError, KeyboardInterrupt):
        raise _error(f"password: none given (set ${PASSWORD_ENV} when there is no terminal)") from None
    if first != second:
        raise _error("password: the two entries differ; nothing was stored")
    return first


def cmd_add(args) -> int:
    role = _role(args.role)
    store = _store(args)
    try:
        store.add(args.name, role, _new_password())
    except ValueError as error:
        raise _error(f"{error}; nothing was stored") from error
    print(f"user {args.name} added with role {role}")
    return 0


def cmd_list(args) -> int:
    users = _store(args).list()
    if not users:
        print("no users yet: `wikimem users add NAME --role admin`")
        return 0
    width = max(len(u.name) for u in users)
    for user in users:
        print(f"{user.name:<{width}}  {user.role:<15}  changed {user.updated_at:%Y-%m-%d %H:%M}")
    return 0


def cmd_remove(args) -> int:
    try:
        _store(args).remove(args.name)
    except KeyError as error:
        raise _error(str(error.args[0])) from error
    print(f"user {args.name} removed")
    return 0


def cmd_set_role(args) -> int:
    role = _role(args.role)
    try:
        _store(args).set_role(args.name, role)
    except KeyError as error:
        raise _error(str(error.args[0])) from error
    print(f"user {args.name} now has role {role} (their sessions ended)")
    return 0


def cmd_set_password(args) -> int:
    try:
        _store(args).set_password(args.name, _new_password())
    except (KeyError, ValueError) as error:
        raise _error(f"{error.args[0]}; nothing was changed") from error
    print(f"password of {args.name} changed (their sessions ended)")
    return 0


def add_commands(subparsers) -> None:
    """`users add|list|remove|set-role|set-password` on the CLI's top-level subparsers."""
    roles = "; ".join(f"{r}: {h}" for r, h in ROLE_HELP.items())
    users = subparsers.add_parser("users", help="who may sign in to the Dagster UI, and their roles") \
        .add_subparsers(dest="action", required=True)
    add = users.add_parser("add", help=f"add a user (password from ${PASSWORD_ENV} or asked for)")
    add.add_argument("name")
    add.add_argument("--role", required=True, metavar="ROLE", help=f"one of {', '.join(ROLES)} ({roles})")
    add.set_defaults(func=cmd_add)
    users.add_parser("list", help="users and their roles").set_defaults(func=cmd_list)
    remove = users.add_parser("remove", help="remove a user (their sessions end)")
    remove.add_argument("name")
    remove.set_defaults(func=cmd_remove)
    set_role = users.add_parser("set-role", help="change a user's role (their sessions end)")
    set_role.add_argument("name")
    set_role.add_argument("role", metavar="ROLE", help=f"one of {', '.join(ROLES)}")
    set_role.set_defaults(func=cmd_set_role)
    set_password = users.add_parser("set-password", help=f"change a password (from ${PASSWORD_ENV} or asked for)")
    set_password.add_argument("name")
    set_password.set_defaults(func=cmd_set_password)
