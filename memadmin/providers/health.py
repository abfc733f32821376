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

from memadmin.providers.alerts import alert_enqueue_all
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


def _check(config: ProviderConfig, deadline: float, abandoned: threading.Event) -> HealthStatus:
    """Runs on a pool thread: one health call, then the thread's DB connection is closed. A
    call the poller gave up on releases its own lease when it finally returns."""
    try:
        return provider_for(config).health(deadline=deadline)
    except Exception as exc:  # the contract says health never raises; do not trust it
        logger.exception("health() of provider %s raised", config.pk)
        return HealthStatus(ok=False, message=f"health check failed: {type(exc).__name__}",
                            checked_at=timezone.now(), latency_ms=deadline * 1000)
    finally:
        if abandoned.is_set():
            _release([config.pk])
        connection.close()


def _release(provider_ids: list[Any]) -> None:
    try:
        ProviderHealth.objects.filter(provider_id__in=provider_ids).update(in_flight_until=None)
    except Exception:  # the lease then simply expires
        logger.warning("could not release the health leases of %s", provider_ids)


def _acquire(configs: list[ProviderConfig], now: dt.datetime) -> set[Any]:
    """Lease every provider not already in flight, in one statement; returns the leased ids."""
    if not configs:
        return set()
    ProviderHealth.objects.bulk_create([ProviderHealth(provider=c) for c in configs],
                                       ignore_conflicts=True)
    longest = max(c.health_deadline_ms for c in configs) / 1000
    until = now + dt.timedelta(seconds=longest * 2) + LEASE_GRACE
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE providers_providerhealth SET in_flight_until = %s"
            " WHERE provider_id = ANY(%s)"
            "   AND (in_flight_until IS NULL OR in_flight_until < %s) RETURNING provider_id",
            [until, [c.pk for c in configs], now],
        )
        return {row[0] for row in cursor.fetchall()}


def poll(configs: Iterable[ProviderConfig]) -> list[PollResult]:
    """Check the given providers concurrently; return within max(deadline) + overhead."""
    started = time.monotonic()
    now = timezone.now()
    configs = list(configs)
    leased = _acquire(configs, now)
    futures: dict[Future[HealthStatus], tuple[ProviderConfig, float, threading.Event]] = {}
    results: list[PollResult] = [PollResult(c.pk, None) for c in configs if c.pk not in leased]
    for config in configs:
        if config.pk in leased:
            deadline = config.health_deadline_ms / 1000
            abandoned = threading.Event()
            future = _executor().submit(_check, config, deadline, abandoned)
            futures[future] = (config, deadline, abandoned)
    if futures:
        longest = max(deadline for _, deadline, _ in futures.values())
        wait(futures, timeout=max(0.0, longest + POLL_OVERHEAD - (time.monotonic() - started)))
    finished: list[Any] = []
    observed: list[tuple[ProviderConfig, HealthStatus]] = []
    for future, (config, deadline, abandoned) in futures.items():
        if future.done():
            status = future.result()
            finished.append(config.pk)
        else:
            # Still running: recorded as a timeout now; it releases its lease when it returns.
            abandoned.set()
            status = HealthStatus(ok=False, message="health check timeout",
                                  checked_at=timezone.now(), latency_ms=deadline * 1000)
        observed.append((config, status))
    with transaction.atomic():
        states = record_many(observed)
        results.extend(PollResult(config.pk, status, states[config.pk])
                       for config, status in observed)
        if finished:
            _release(finished)
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
    """Store one observation; see ``record_many``."""
    return record_many([(config, status)])[config.pk]


def record_many(observed: list[tuple[ProviderConfig, HealthStatus]]) -> dict[Any, str]:
    """Store observations, move each provider's state, store a transition when it changes, and
    start an alert job for transitions into and out of ``down``. A constant handful of
    statements however many providers a poll saw (a poll of 50 once spent 56 ms here on 273
    statements, one provider at a time). Returns the new state per provider id."""
    if not observed:
        return {}
    with transaction.atomic():
        ids = [config.pk for config, _ in observed]
        ProviderHealth.objects.bulk_create([ProviderHealth(provider=c) for c, _ in observed],
                                           ignore_conflicts=True)
        rows = {h.provider_id: h for h in
                ProviderHealth.objects.select_for_update().filter(provider_id__in=ids)
                .order_by("provider_id")}
        HealthCheck.objects.bulk_create([
            HealthCheck(provider=config, ok=status.ok, message=status.message[:300],
                        latency_ms=status.latency_ms, checked_at=status.checked_at)
            for config, status in observed])
        states: dict[Any, str] = {}
        transitions: list[HealthTransition] = []
        for config, status in observed:
            health = rows[config.pk]
            new_state = next_state(health, status, config.health_deadline_ms)
            old_state = health.state
            health.consecutive_failures = 0 if status.ok else health.consecutive_failures + 1
            health.state, health.message = new_state, status.message[:300]
            health.last_checked_at = status.checked_at
            if status.ok:
                health.last_ok_at = status.checked_at
            states[config.pk] = new_state
            if new_state != old_state:
                transitions.append(HealthTransition(
                    provider=config, from_state=old_state, to_state=new_state,
                    message=status.message[:300], at=status.checked_at))
        ProviderHealth.objects.bulk_update(
            list(rows.values()),
            ["state", "message", "consecutive_failures", "last_checked_at", "last_ok_at"])
        if transitions:
            HealthTransition.objects.bulk_create(transitions)
            alert_enqueue_all(transitions)
    return states


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
