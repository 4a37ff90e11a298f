"""``python -m webserver``: dagster-webserver's UI behind sign-in (see the package docstring).

Sign-in is on unless --no-auth, and --no-auth is refused on anything but loopback: an
unauthenticated UI launches runs and shows every request. Proxy mode (--proxy-auth) believes the
Remote-User / Remote-Groups headers only from --trusted-proxy addresses.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import sys

LOOPBACK_NAMES = {"localhost", "ip6-localhost"}
BANNER = "!" * 78


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m webserver", add_help=False,
                                     description="The Dagster UI with sign-in and roles (wikimem).")
    parser.add_argument("--help", action="help", help="show this help and exit")
    parser.add_argument("-h", "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("-p", "--port", type=int, default=3000)
    parser.add_argument("-w", "--workspace", action="append", help="workspace.yaml (repeatable)")
    parser.add_argument("-m", "--module-name", help="a code location module instead of a workspace file")
    parser.add_argument("--read-only", action="store_true", help="Dagster's read-only mode (no mutations at all)")
    parser.add_argument("--no-auth", action="store_true",
                        help="no sign-in (local development only; refused on non-loopback hosts)")
    parser.add_argument("--proxy-auth", action="store_true",
                        help="take the user and groups from an authenticating reverse proxy's headers")
    parser.add_argument("--trusted-proxy", action="append", default=[],
                        help="address or network of that proxy (repeatable; required with --proxy-auth)")
    parser.add_argument("--user-header", default="Remote-User")
    parser.add_argument("--groups-header", default="Remote-Groups")
    parser.add_argument("--uvicorn-log-level", "--log-level", dest="log_level", default="warning", help="uvicorn's log level")
    # dagster-webserver's own options, so that a deployment written for it (the Helm chart's webserver
    # command, through the image's `dagster-webserver` shim) starts this wrapper unchanged
    parser.add_argument("-l", "--path-prefix", default="", help="not supported: serve the UI at the root")
    parser.add_argument("--db-statement-timeout", type=int, default=15000)
    parser.add_argument("--db-pool-recycle", type=int, default=3600)
    parser.add_argument("--db-pool-max-overflow", type=int, default=20)
    parser.add_argument("--dagster-log-level", default="info")
    parser.add_argument("--log-format", default="colored")
    parser.add_argument("--code-server-log-level", default="info")
    parser.add_argument("--suppress-warnings", action="store_true")
    parser.add_argument("--live-data-poll-rate", type=int, default=None)
    return parser


def check_arguments(args) -> str:
    """The auth mode, or SystemExit with the reason."""
    if args.path_prefix:
        raise SystemExit("error: --path-prefix is not supported by the sign-in wrapper (serve the UI at the root)")
    if args.no_auth and args.proxy_auth:
        raise SystemExit("error: --no-auth and --proxy-auth exclude each other")
    if args.no_auth:
        if not is_loopback(args.host):
            raise SystemExit(f"error: --no-auth refused for host {args.host!r}: without sign-in the UI may only "
                             "listen on loopback (127.0.0.1, ::1, localhost)")
        return "none"
    if args.proxy_auth:
        if not args.trusted_proxy:
            raise SystemExit("error: --proxy-auth needs --trusted-proxy ADDRESS (the proxy's address or network)")
        for net in args.trusted_proxy:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError:
                raise SystemExit(f"error: --trusted-proxy {net!r} is not an IP address or network") from None
        return "proxy"
    return "local"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    mode = check_arguments(args)
    try:
        from wikimem_platform.security.files import secure_startup
    except ImportError:  # the file-modes check lands separately
        secure_startup = None
    if secure_startup is not None:
        try:
            secure_startup()
        except Exception as error:  # InsecureFilesError: print it, no traceback
            print(f"error: {error}", file=sys.stderr)
            return 2

    import uvicorn
    from dagster import DagsterInstance
    from dagster._core.workspace.context import WorkspaceProcessContext
    from dagster._core.workspace.load_target import ModuleTarget, WorkspaceFileTarget
    from dagster_webserver.app import create_app_from_workspace_process_context
    from dagster_webserver.cli import _lifespan
    from dagster_webserver.version import __version__

    from webserver.app import AuthConfig, SignIn

    if args.module_name:
        target = ModuleTarget(module_name=args.module_name, attribute=None, working_directory=os.getcwd(), location_name=None)
    else:
        target = WorkspaceFileTarget(paths=args.workspace or ["workspace.yaml"])

    logging.basicConfig(level=logging.WARNING)
    if mode == "none":
        print(f"{BANNER}\nWARNING: the Dagster UI runs WITHOUT SIGN-IN on http://{args.host}:{args.port}: anyone who "
              f"can reach this port\nlaunches runs and reads every request. Local development only.\n{BANNER}",
              file=sys.stderr, flush=True)
    with DagsterInstance.get() as instance:
        instance.optimize_for_webserver(args.db_statement_timeout, args.db_pool_recycle, args.db_pool_max_overflow)
        storage_dir = instance.storage_directory()
        config = AuthConfig(mode=mode, storage_dir=storage_dir, home=instance.root_directory,
                            trusted_proxies=tuple(args.trusted_proxy), user_header=args.user_header.lower(),
                            groups_header=args.groups_header.lower())
        signin = SignIn(None, config)  # the secret is read (or made) before Dagster starts loading code
        if mode == "local":
            count = signin.users.count()
            if count == 0:
                print("No users can sign in yet. Add the first one:\n"
                      "  .venv/bin/wikimem users add NAME --role admin     (roles: viewer, privacy_officer, "
                      "operator, admin)", file=sys.stderr, flush=True)
        with WorkspaceProcessContext(instance, version=__version__, read_only=args.read_only,
                                     workspace_load_target=target,
                                     code_server_log_level=args.code_server_log_level) as context:
            signin.app = create_app_from_workspace_process_context(context, "", args.live_data_poll_rate,
                                                                   lifespan=_lifespan)
            print(f"Serving the Dagster UI with sign-in ({mode}) on http://{args.host}:{args.port}", file=sys.stderr, flush=True)
            uvicorn.run(signin, host=args.host, port=args.port, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
