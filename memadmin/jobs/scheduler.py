"""Periodic work: reaping jobs, liveness heartbeats, expiring old rows and files.

One scheduler runs at a time across all hosts (a PostgreSQL advisory lock); a second one waits
as a hot standby. Each periodic duty runs on its own interval and never stops the others.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

from django.db import close_old_connections, connection
from django.utils import timezone

from memadmin.jobs import runner

logger = logging.getLogger(__name__)
SCHEDULER_LOCK = 0x6D656D61  # "mema"


@dataclasses.dataclass
class Duty:
    name: str
    every: float
    run: Callable[[], object]
    next_at: float = 0.0


def enqueue_worker_heartbeat() -> None:
    from memadmin.jobs.tasks import worker_heartbeat

    worker_heartbeat.enqueue()


def expire_operation_records() -> int:
    from memadmin.memory.models import OperationRecord

    deleted, _ = OperationRecord.objects.filter(expires_at__lt=timezone.now()).delete()
    return deleted


def poll_health() -> object:
    from memadmin.providers.health import poll_all

    return poll_all()


def expire_health_history() -> object:
    from memadmin.providers.health import expire_history

    return expire_history()


def expire_export_files() -> int:
    from memadmin.memory.exports import expire_export_files as expire

    return expire()


def subject_requests_upkeep() -> object:
    from memadmin.gdpr.services import subject_requests_upkeep as upkeep

    return upkeep()


def vacuum_after_erasures() -> object:
    from memadmin.gdpr.services import vacuum_after_erasures as vacuum

    return vacuum()


def default_duties() -> list[Duty]:
    from django.conf import settings

    return [
        Duty("poll provider health", settings.MEMADMIN_HEALTH_INTERVAL, poll_health),
        Duty("expire health history", 3600, expire_health_history),
        Duty("reap jobs", 15, runner.reap),
        Duty("worker heartbeat", 30, enqueue_worker_heartbeat),
        Duty("expire operation records", 3600, expire_operation_records),
        Duty("expire export files", 3600, expire_export_files),
        Duty("subject request upkeep", 300, subject_requests_upkeep),
        Duty("vacuum after erasures", 3600, vacuum_after_erasures),
    ]


def try_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [SCHEDULER_LOCK])
        return bool(cursor.fetchone()[0])


def run_due(duties: list[Duty], now: float) -> None:
    for duty in duties:
        if now < duty.next_at:
            continue
        duty.next_at = now + duty.every
        try:
            duty.run()
        except Exception:
            logger.exception("scheduler duty %r failed", duty.name)


def run_forever(duties: list[Duty], tick: float = 1.0,
                should_stop: Callable[[], bool] = lambda: False) -> None:
    holding = False
    while not should_stop():
        if not holding:
            close_old_connections()
            holding = try_lock()
            if not holding:
                time.sleep(5 * tick)
                continue
            logger.info("scheduler: active")
        runner.beat("scheduler")
        run_due(duties, time.monotonic())
        time.sleep(tick)
