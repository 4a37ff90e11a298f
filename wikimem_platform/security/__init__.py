"""Protecting what requesters give the platform: file modes (`files`), the instance secret that
keys every stored digest of personal text (`keys`), the access log (`access_log`), scrubbing of
error texts (`scrub`), sign-in users and roles (`users`) and the purge of a request (`purge`).

No Dagster import here: the Dagster layer and the webserver wrapper call these.
"""
