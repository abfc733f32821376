"""Polling provider health with hard deadlines, and turning observations into states.

A poll checks every enabled, probed provider concurrently on a long-lived thread pool and waits
at most for the slowest deadline plus a small overhead: a stuck provider is recorded as
"health check timeout" and never stalls the others. A provider whose previous check is still in
flight is not called again; that guard is a lease row in PostgreSQL (``in_flight_until``), so it
holds across processes and a poller that died frees it when the lease runs out.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import Q
from django.utils import timezone

from memadmin.providers.contract import HealthStatus
from memadmin.providers.models import HealthCheck, HealthTransition, ProviderConfig, ProviderHealth
from memadmin.providers.registry import provider_for

logger = logging.getLogger(__name__)

POLL_OVERHEAD = 0.25  # seconds a poll may take beyond the slowest deadline
LEASE_GRACE = dt.timedelta(seconds=5)
DEGRADED_LATENCY_SHARE = 0.8

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """One long-lived pool: leaving a ``with ThreadPoolExecutor()`` block would wait for every
    stuck call (PERF-NOTES), and a pool per poll would leak threads."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=settings.MEMADMIN_HEALTH_THREADS,
                                       thread_name_prefix="health")
        return _pool


def failures_for_down() -> int:
    return settings.MEMADMIN_HEALTH_DOWN_AFTER


@dataclasses.dataclass(frozen=True)
class PollResult:
    provider_id: Any
    status: HealthStatus | None  # None: skipped (its previous check is still in flight)
    state: str | None = None


def _check(config: ProviderConfig, deadline: float) -> HealthStatus:
    """Runs on a pool thread: one health call, then the thread's DB connection is closed."""
    try:
        return provider_for(config).health(deadline=deadline)
    except Exception as exc:  # the contract says health never raises; do not trust it
        logger.exception("health() of provider %s raised", config.pk)
        return HealthStatus(ok=False, message=f"health check failed: {type(exc).__name__}",
                            checked_at=timezone.now(), latency_ms=deadline * 1000)
    finally:
        connection.close()
        _release(config.pk)


def _release(provider_id: Any) -> None:
    try:
        ProviderHealth.objects.filter(provider_id=provider_id).update(in_flight_until=None)
    except Exception:  # the lease then simply expires
        logger.warning("could not release the health lease of %s", provider_id)
    finally:
        connection.close()


def _acquire(config: ProviderConfig, deadline: float, now: dt.datetime) -> bool:
    ProviderHealth.objects.get_or_create(provider=config)
    until = now + dt.timedelta(seconds=deadline * 2) + LEASE_GRACE
    return bool(ProviderHealth.objects.filter(
        Q(in_flight_until__isnull=True) | Q(in_flight_until__lt=now), provider=config,
    ).update(in_flight_until=until))


def poll(configs: Iterable[ProviderConfig]) -> list[PollResult]:
    """Check the given providers concurrently; return within max(deadline) + overhead."""
    started = time.monotonic()
    now = timezone.now()
    futures: dict[Future[HealthStatus], tuple[ProviderConfig, float]] = {}
    results: list[PollResult] = []
    for config in configs:
        deadline = config.health_deadline_ms / 1000
        if not _acquire(config, deadline, now):
            results.append(PollResult(config.pk, None))
            continue
        futures[_executor().submit(_check, config, deadline)] = (config, deadline)
    if futures:
        longest = max(deadline for _, deadline in futures.values())
        wait(futures, timeout=max(0.0, longest + POLL_OVERHEAD - (time.monotonic() - started)))
    for future, (config, deadline) in futures.items():
        if future.done():
            status = future.result()
        else:
            # Still running: recorded as a timeout now; its lease stays until it returns.
            status = HealthStatus(ok=False, message="health check timeout",
                                  checked_at=timezone.now(), latency_ms=deadline * 1000)
        results.append(PollResult(config.pk, status, record(config, status)))
    return results


def pollable(workspace: Any = None) -> list[ProviderConfig]:
    configs = ProviderConfig.objects.filter(enabled=True, probed=True)
    if workspace is not None:
        configs = configs.filter(workspace=workspace)
    return list(configs.select_related("workspace"))


def poll_all() -> list[PollResult]:
    """The scheduler's duty: every enabled, probed provider of every workspace."""
    close_old_connections()
    return poll(pollable())


def next_state(health: ProviderHealth, status: HealthStatus, deadline_ms: int) -> str:
    if status.ok:
        slow = status.latency_ms > DEGRADED_LATENCY_SHARE * deadline_ms
        return "degraded" if slow else "ok"
    failures = health.consecutive_failures + 1
    return "down" if failures >= failures_for_down() else "degraded"


def record(config: ProviderConfig, status: HealthStatus) -> str:
    """Store one observation, move the provider's state, store a transition when it changes,
    and start an alert job for transitions into and out of ``down``."""
    with transaction.atomic():
        health, _ = ProviderHealth.objects.select_for_update().get_or_create(provider=config)
        HealthCheck.objects.create(provider=config, ok=status.ok,
                                   message=status.message[:300], latency_ms=status.latency_ms,
                                   checked_at=status.checked_at)
        new_state = next_state(health, status, config.health_deadline_ms)
        old_state = health.state
        health.consecutive_failures = 0 if status.ok else health.consecutive_failures + 1
        health.state, health.message = new_state, status.message[:300]
        health.last_checked_at = status.checked_at
        if status.ok:
            health.last_ok_at = status.checked_at
        health.save(update_fields=["state", "message", "consecutive_failures",
                                   "last_checked_at", "last_ok_at"])
        if new_state != old_state:
            transition = HealthTransition.objects.create(
                provider=config, from_state=old_state, to_state=new_state,
                message=status.message[:300], at=status.checked_at)
            if new_state == "down" or (old_state == "down" and new_state == "ok"):
                from memadmin.providers.alerts import alert_enqueue

                alert_enqueue(transition)
    return new_state


def check_now(config: ProviderConfig) -> PollResult | None:
    """One bounded check asked for by a person, at most once per provider per
    ``MEMADMIN_HEALTH_MANUAL_SECONDS`` across every app server (a PostgreSQL row decides).
    Returns None when rate-limited."""
    now = timezone.now()
    ProviderHealth.objects.get_or_create(provider=config)
    window = now - dt.timedelta(seconds=settings.MEMADMIN_HEALTH_MANUAL_SECONDS)
    allowed = ProviderHealth.objects.filter(
        Q(last_manual_check_at__isnull=True) | Q(last_manual_check_at__lt=window),
        provider=config,
    ).update(last_manual_check_at=now)
    if not allowed:
        return None
    return poll([config])[0]


def expire_history() -> int:
    """Delete observations older than each workspace's retention, in bounded batches."""
    from memadmin.workspaces.models import Workspace

    removed = 0
    for workspace in Workspace.objects.only("pk", "health_retention_days"):
        cutoff = timezone.now() - dt.timedelta(days=workspace.health_retention_days)
        while True:
            ids = list(HealthCheck.objects.filter(provider__workspace=workspace,
                                                  checked_at__lt=cutoff)
                       .values_list("pk", flat=True)[:10_000])
            if not ids:
                break
            removed += HealthCheck.objects.filter(pk__in=ids).delete()[0]
        HealthTransition.objects.filter(provider__workspace=workspace, at__lt=cutoff).delete()
    return removed
