"""Periodic work: reaping jobs, liveness heartbeats, expiring old rows and files.

Each app registers its own duties (``register`` in its ``AppConfig.ready()``); the scheduler
runs whatever is registered and imports no other app.

One scheduler runs at a time across all hosts (a PostgreSQL advisory lock); a second one waits
as a hot standby. Each periodic duty runs on its own interval and never stops the others.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils.module_loading import import_string

from memadmin.jobs import runner

logger = logging.getLogger(__name__)
SCHEDULER_LOCK = 0x6D656D61  # "mema"


@dataclasses.dataclass
class Duty:
    name: str
    every: float
    run: Callable[[], object]
    next_at: float = 0.0


@dataclasses.dataclass(frozen=True)
class Periodic:
    """A registered duty: ``run`` is a dotted path (imported when the scheduler starts, so
    registering costs nothing), ``every`` seconds or a settings name read at that time."""

    name: str
    every: float | str
    run: str


_registry: dict[str, Periodic] = {}


def register(name: str, *, every: float | str, run: str) -> None:
    """Add a periodic duty. Each app calls this from its ``AppConfig.ready()`` for its own work,
    so the scheduler knows no app; registering a name twice replaces it (ready() may rerun)."""
    _registry[name] = Periodic(name, every, run)


def _seconds(every: float | str) -> float:
    return float(getattr(settings, every)) if isinstance(every, str) else every


def default_duties() -> list[Duty]:
    """Every registered duty, in registration order (the order of INSTALLED_APPS)."""
    return [Duty(p.name, _seconds(p.every), import_string(p.run)) for p in _registry.values()]


def enqueue_worker_heartbeat() -> None:
    from memadmin.jobs.tasks import worker_heartbeat

    worker_heartbeat.enqueue()


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
    holding = waiting_said = False
    while not should_stop():
        if not holding:
            close_old_connections()
            holding = try_lock()
            if not holding:
                if not waiting_said:
                    logger.info("scheduler: another scheduler holds the leader lock (PostgreSQL "
                                "advisory lock %s); this one waits and takes over if it stops",
                                SCHEDULER_LOCK)
                    waiting_said = True
                time.sleep(5 * tick)
                continue
            logger.info("scheduler: active (holds the leader lock: only one scheduler runs "
                        "periodic work at a time)")
        runner.beat("scheduler")
        run_due(duties, time.monotonic())
        time.sleep(tick)
