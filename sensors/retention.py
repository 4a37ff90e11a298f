"""Retention by schedule (GDPR Art. 5(1)(e)): every day, each answered request whose answer is
older than the controller's `retention_days` is purged (`security.purge`, the instance's runs and
event logs included), and access-log rows older than `access_log_days` go. The run log names
request ids and counts only. By hand: `wikimem request purge --older-than DAYS`.
"""


from dagster import DefaultScheduleStatus, OpExecutionContext, job, op, schedule

from resources.scoring import RegistryResource, ScoringResource
from sensors.instance_purge import erase_request_runs
from wikimem_platform.security.access_log import AccessLog
from wikimem_platform.security.purge import expired_requests, purge_request
from wikimem_platform.settings import get_settings, Settings
from wikimem_platform.subject_requests.controller import retention_periods

RETENTION_CRON_ENV = Settings.env_name("retention_cron")


@op(description="Purge every answered request past the retention period; prune the access log.")
def purge_expired_requests(context: OpExecutionContext, model_registry: RegistryResource, scoring: ScoringResource) -> None:
    storage = context.instance.storage_directory()
    days, log_days = retention_periods(storage)
    store = model_registry.requests()
    expired = expired_requests(store, days)
    context.log.info(f"retention {days} days after the answer: {len(expired)} request(s) to purge")
    for request in expired:
        report = purge_request(request.id, storage, store, who="retention schedule",
                               erase_runs=lambda request_id: erase_request_runs(request_id, instance=context.instance),
                               # where this code location keeps shards and sentence caches, if not in storage
                               shard_root=scoring.shard_dir, cache_roots=[scoring.nll_cache_dir] if scoring.nll_cache_dir else None)
        context.log.info(report.line())
    pruned = AccessLog(store.url).prune(log_days)
    context.log.info(f"access log: {pruned} row(s) older than {log_days} days deleted")


@job(description="Retention: purges requests past the controller's retention period.", tags={"wikimem/retention": "daily"})
def request_retention_job():
    purge_expired_requests()


@schedule(job=request_retention_job, cron_schedule=get_settings().retention_cron,
          execution_timezone="UTC", default_status=DefaultScheduleStatus.RUNNING,
          description="Purges every request answered longer ago than the controller's retention period.")
def request_retention_schedule():
    return {}
