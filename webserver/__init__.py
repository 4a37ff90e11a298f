"""The Dagster UI with sign-in and roles: dagster-webserver's ASGI app, wrapped (`webserver.app.SignIn`),
served by uvicorn. Start it as ``python -m webserver -h 127.0.0.1 -p 3000 -w workspace.yaml``; never
start a bare `dagster-webserver` or `dagster dev` where anyone else can reach the port
(`--read-only` forbids mutations but identifies nobody and still shows every request's data).

Why our own wrapper and not dagster-authkit 1.2.0 (read: core/patch.py, core/middleware.py,
core/graphql_analyzer.py, auth/session.py, auth/backends/proxy.py):

- It monkeypatches Dagster internals: `DagsterWebserver.build_middleware`, `.build_routes` and
  `.index_html_endpoint` are replaced at import time (`apply_patches`), and its detection layer
  is tested against Dagster 1.10-1.12, not our 1.13.27. We call the public
  `create_app_from_workspace_process_context` and wrap the Starlette app it returns: nothing of
  Dagster is replaced, an upgrade cannot silently drop the check.
- Its roles are Admin/Editor/Launcher/Viewer, a linear ladder over mutations only; ours need a
  viewer who sees the graph but not request data, which is about *answers*, not mutations.
  authkit passes every query and every websocket frame through untouched, so a viewer would read
  metadata, run logs and run configs of request runs. We rewrite viewers' GraphQL answers
  (`wikimem_platform.security.policy.redact`) on HTTP and on the websocket.
- GraphQL: its analyzer parses with graphql-core and follows fragments (good), but checks only the
  operation `operationName` selects; ours checks every operation of the document. It also only
  authenticates the websocket handshake, it never looks at the `start` frames; ours authorizes
  each one. A POST with a non-JSON content type (Dagster then reads the query from the URL: a
  CSRF "simple request") is refused here.
- Sessions: itsdangerous signed cookies (fine) with its own CSRF double-submit; proxy mode
  (Remote-User/Remote-Groups, trusted IPs) is the same idea as ours. We take the idea, not the
  package: ~400 lines of ours against ~6700 of a community package (LDAP, Redis, rate limiter,
  metrics) we would have to audit on every release, and users live in our registry database
  beside the access log, with the same `wikimem` CLI.

No Dagster import in `wikimem_platform/`: the user store and the policy are there, this package is
the Dagster layer.
"""
