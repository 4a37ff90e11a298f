"""Removing a release or a request cleans up on the instance (issue 38): its queued runs are
canceled and its dynamic partition deleted, so a wrong registration leaves no audit running and no
partition "missing" forever in the UI; its materializations stay in the event log."""

import shutil

from dagster import DagsterInstance, DagsterRunStatus
from dagster._core.remote_origin import InProcessCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.storage.dagster_run import DagsterRun
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

from tests.dagster.test_sensors import SMOL
from tests.support.dagster_process import REPO
from cli.main import main
from wikimem_platform.registry import Registry
from wikimem_platform.subject_requests import intake


def queued_run(instance, job_name: str, partition: str, run_id: str) -> None:
    """A run waiting in the queue, as a sensor leaves it (its origin: the repository's code location)."""
    origin = RemoteJobOrigin(RemoteRepositoryOrigin(
        InProcessCodeLocationOrigin(LoadableTargetOrigin(python_file=str(REPO / "definitions.py"))), "__repository__"), job_name)
    instance.add_run(DagsterRun(job_name=job_name, run_id=run_id, status=DagsterRunStatus.QUEUED,
                                remote_job_origin=origin, tags={"dagster/partition": partition}))


def test_removing_a_release_and_a_request_cancels_their_runs_and_deletes_their_partitions(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    key = Registry(url).register(name="smol", **SMOL).key
    request = intake.RequestStore(url).add(intake.ResolvedSubject("Q42", "Douglas Adams", "Q42"), "access")
    with DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("models", [key, "other@1"])
        instance.add_dynamic_partitions("requests", [request.id])
        queued_run(instance, "model_audit", key, "audit-smol")
        queued_run(instance, "model_audit", "other@1", "audit-other")
        queued_run(instance, "request_audit", request.id, "audit-request")

    base = ["--home", str(home), "--registry-url", url]
    assert main([*base, "models", "remove", key]) == 0
    out = capsys.readouterr().out
    assert f"removed {key}" in out and "1 queued or running run(s) canceled (audit-smol)" in out
    assert "its partition deleted (its materializations stay in the event log)" in out
    assert main([*base, "request", "remove", request.id]) == 0
    assert "1 queued or running run(s) canceled (audit-request)" in capsys.readouterr().out
    with DagsterInstance.get() as instance:
        status = {run_id: instance.get_run_by_id(run_id).status for run_id in ("audit-smol", "audit-other", "audit-request")}
        assert status == {"audit-smol": DagsterRunStatus.CANCELED, "audit-other": DagsterRunStatus.QUEUED,
                          "audit-request": DagsterRunStatus.CANCELED}
        assert instance.get_dynamic_partitions("models") == ["other@1"]
        assert instance.get_dynamic_partitions("requests") == []
    # removing again: the key is unknown, said so, nothing else touched
    assert main([*base, "models", "remove", key]) == 2
    assert key in capsys.readouterr().err
