"""`wikimem`, the command line (`cli.main:main`; also `python -m cli`).

Beside the Dagster layer, not inside the domain library: it is the one part of the project that
imports both `wikimem_platform/` and the Dagster layer (`cli.instance` -> `sensors.materialize`,
`sensors.instance_purge`), and nothing imports it (tests/unit/test_code_graph.py).
"""
