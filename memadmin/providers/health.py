"""Polling provider health with hard deadlines, and turning observations into states.

A poll checks every enabled, probed provider concurrently on a long-lived thread pool and waits
at most for the slowest deadline, counted from the poll's start: a stuck provider is recorded as
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

LEASE_GRACE = dt.timedelta(seconds=5)
#: The share of its deadline a call leaves the poll to record the results in (at most
#: RECORD_RESERVE_MAX seconds): the deadline bounds the whole poll, recording included.
RECORD_RESERVE_SHARE = 0.025
RECORD_RESERVE_MAX = 0.025
#: How long a poll waits for this process's own calls that an earlier poll gave up on and that
#: are about to return (their deadline passed): back-to-back polls then call them again rather
#: than skip them as still in flight. Only such a poll waits; one a scheduler starts a poll
#: interval later finds them long returned.
ABANDONED_GRACE = 0.25
DEGRADED_LATENCY_SHARE = 0.8

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
#: Calls of this process a poll gave up on, by provider id: the call and its lease's end.
_abandoned: dict[Any, tuple[Future[HealthStatus], dt.datetime]] = {}


def _executor(calls: int) -> ThreadPoolExecutor:
    """One long-lived pool: leaving a ``with ThreadPoolExecutor()`` block would wait for every
    stuck call (PERF-NOTES), and a pool per poll would leak threads. It has a thread for every
    call of the poll (at least ``MEMADMIN_HEALTH_THREADS``): a call queued behind others would
    start late and eat into the poll's one deadline. A poll of more providers than the pool has
    threads replaces it by a larger one; the old one's threads end with their calls."""
    global _pool
    with _pool_lock:
        wanted = max(settings.MEMADMIN_HEALTH_THREADS, calls)
        if _pool is None or _pool._max_workers < wanted:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=wanted, thread_name_prefix="health")
        return _pool


def failures_for_down() -> int:
    return settings.MEMADMIN_HEALTH_DOWN_AFTER


@dataclasses.dataclass(frozen=True)
class PollResult:
    provider_id: Any
    status: HealthStatus | None  # None: skipped (its previous check is still in flight)
    state: str | None = None


def _timeout(deadline: float) -> HealthStatus:
    return HealthStatus(ok=False, message="health check timeout", checked_at=timezone.now(),
                        latency_ms=deadline * 1000)


def _check(config: ProviderConfig, deadline: float, end: float, lease: dt.datetime,
           abandoned: threading.Event) -> HealthStatus:
    """Runs on a pool thread: one health call given only what is left of its deadline, which
    runs from the poll's start (``end``, monotonic), then the thread's DB connection is closed.
    A call the poller gave up on releases its own lease (``lease``, if still the provider's)
    when it finally returns."""
    try:
        remaining = end - time.monotonic()
        if remaining <= 0:
            return _timeout(deadline)
        return provider_for(config).health(deadline=remaining)
    except Exception as exc:  # the contract says health never raises; do not trust it
        logger.exception("health() of provider %s raised", config.pk)
        return HealthStatus(ok=False, message=f"health check failed: {type(exc).__name__}",
                            checked_at=timezone.now(), latency_ms=deadline * 1000)
    finally:
        if abandoned.is_set():
            _release(config.pk, lease)
        connection.close()


def _release(provider_id: Any, lease: dt.datetime) -> None:
    """Free a lease unless another poll has taken the provider since."""
    try:
        ProviderHealth.objects.filter(provider_id=provider_id,
                                      in_flight_until=lease).update(in_flight_until=None)
    except Exception:  # the lease then simply expires
        logger.warning("could not release the health lease of %s", provider_id)


_ACQUIRE_SQL = """
    INSERT INTO providers_providerhealth AS h (provider_id, state, message,
                                               consecutive_failures, in_flight_until)
    SELECT unnest(%s::uuid[]), 'unknown', '', 0, %s
    ON CONFLICT (provider_id) DO UPDATE SET in_flight_until = EXCLUDED.in_flight_until
    WHERE h.in_flight_until IS NULL OR h.in_flight_until < %s
       OR h.in_flight_until = (%s::timestamptz[])[array_position(%s::uuid[], h.provider_id)]
    RETURNING h.provider_id
"""


def _returned(ids: list[Any]) -> dict[Any, dt.datetime]:
    """This process's abandoned calls to these providers that have returned (waiting at most
    ABANDONED_GRACE for those past their deadline), with the leases they still hold."""
    with _pool_lock:
        mine = {pk: _abandoned.pop(pk) for pk in ids if pk in _abandoned}
    running = [future for future, _ in mine.values() if not future.done()]
    if running:
        wait(running, timeout=ABANDONED_GRACE)
    with _pool_lock:
        for pk, (future, lease) in mine.items():
            if not future.done():
                _abandoned.setdefault(pk, (future, lease))
    return {pk: lease for pk, (future, lease) in mine.items() if future.done()}


def _acquire(configs: list[ProviderConfig], now: dt.datetime) -> tuple[set[Any], dt.datetime]:
    """Lease every provider not already in flight (creating its health row the first time),
    in one statement; a lease this process holds for a call that has returned is taken over.
    Returns the leased ids and the lease's end."""
    longest = max(c.health_deadline_ms for c in configs) / 1000
    until = now + dt.timedelta(seconds=longest * 2) + LEASE_GRACE
    ids = [c.pk for c in configs]
    ours = _returned(ids)
    with connection.cursor() as cursor:
        cursor.execute(_ACQUIRE_SQL, [ids, until, now, list(ours.values()), list(ours)])
        return {row[0] for row in cursor.fetchall()}, until


def poll(configs: Iterable[ProviderConfig]) -> list[PollResult]:
    """Check the given providers concurrently; return at about the slowest deadline, counted
    from the poll's start, recording the results (one transaction, a constant handful of
    statements) included.

    Every call starts at once on its own pool thread and gets its own deadline measured from
    the poll's start, less a small reserve for the recording (RECORD_RESERVE_SHARE), so
    neither the lease nor a thread's start-up extends it; a call still running at the end is
    recorded as "health check timeout" (it releases its lease when it returns)."""
    started = time.monotonic()
    configs = list(configs)
    if not configs:
        return []
    leased, lease = _acquire(configs, timezone.now())
    due = [config for config in configs if config.pk in leased]
    results: list[PollResult] = [PollResult(c.pk, None) for c in configs if c.pk not in leased]
    futures: dict[Future[HealthStatus], tuple[ProviderConfig, float, threading.Event]] = {}
    if due:
        pool = _executor(len(due))
        ends = []
        for config in due:
            deadline = config.health_deadline_ms / 1000
            end = started + deadline - min(RECORD_RESERVE_MAX, deadline * RECORD_RESERVE_SHARE)
            abandoned = threading.Event()
            future = pool.submit(_check, config, deadline, end, lease, abandoned)
            futures[future] = (config, deadline, abandoned)
            ends.append(end)
        wait(futures, timeout=max(0.0, max(ends) - time.monotonic()))
    finished: list[Any] = []
    observed: list[tuple[ProviderConfig, HealthStatus]] = []
    for future, (config, deadline, abandoned) in futures.items():
        if future.done():
            status = future.result()
            finished.append(config.pk)
        else:
            abandoned.set()
            if future.done():  # it returned meanwhile, maybe before seeing ``abandoned``
                status = future.result()
                finished.append(config.pk)  # releasing twice does no harm
            else:
                status = _timeout(deadline)
                with _pool_lock:
                    _abandoned[config.pk] = (future, lease)
        observed.append((config, status))
    states = record_many(observed, release=finished)
    results.extend(PollResult(config.pk, status, states[config.pk]) for config, status in observed)
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


#: A poll's whole record in one statement: lock the providers' health rows, move each one's
#: state (``ok``, or ``degraded`` when slower than DEGRADED_LATENCY_SHARE of its deadline; on a
#: failure ``degraded``, then ``down`` after MEMADMIN_HEALTH_DOWN_AFTER failures in a row),
#: store the observations and a transition for each state that changed, and release the
#: leases of the calls that returned. Answers each provider's old and new state and the id of
#: its transition, if any.
_RECORD_SQL = """
    WITH observed AS (
        SELECT * FROM unnest(%(ids)s::uuid[], %(ok)s::boolean[], %(messages)s::text[],
                             %(latencies)s::float8[], %(at)s::timestamptz[],
                             %(deadlines)s::integer[], %(release)s::boolean[])
            AS o(provider_id, ok, message, latency_ms, checked_at, deadline_ms, release)
    ), old AS (
        SELECT h.provider_id, h.state, h.consecutive_failures
        FROM providers_providerhealth h JOIN observed o USING (provider_id)
        ORDER BY h.provider_id FOR UPDATE OF h
    ), moved AS (
        SELECT o.*, old.state AS from_state,
               CASE WHEN o.ok THEN 0 ELSE old.consecutive_failures + 1 END AS failures,
               CASE WHEN o.ok AND o.latency_ms > %(share)s * o.deadline_ms THEN 'degraded'
                    WHEN o.ok THEN 'ok'
                    WHEN old.consecutive_failures + 1 >= %(down_after)s THEN 'down'
                    ELSE 'degraded' END AS to_state
        FROM observed o JOIN old USING (provider_id)
    ), updated AS (
        UPDATE providers_providerhealth h SET state = m.to_state, message = m.message,
            consecutive_failures = m.failures, last_checked_at = m.checked_at,
            last_ok_at = CASE WHEN m.ok THEN m.checked_at ELSE h.last_ok_at END,
            in_flight_until = CASE WHEN m.release THEN NULL ELSE h.in_flight_until END
        FROM moved m WHERE h.provider_id = m.provider_id
    ), checks AS (
        INSERT INTO providers_healthcheck (provider_id, ok, message, latency_ms, checked_at)
        SELECT provider_id, ok, message, latency_ms, checked_at FROM observed
    ), transitions AS (
        INSERT INTO providers_healthtransition (provider_id, from_state, to_state, message, at,
                                                alerted, muted_reason)
        SELECT provider_id, from_state, to_state, message, checked_at, false, ''
        FROM moved WHERE from_state <> to_state
        RETURNING id, provider_id
    )
    SELECT m.provider_id, m.from_state, m.to_state, t.id
    FROM moved m LEFT JOIN transitions t USING (provider_id)
"""


def record(config: ProviderConfig, status: HealthStatus) -> str:
    """Store one observation; see ``record_many``."""
    ProviderHealth.objects.bulk_create([ProviderHealth(provider=config)], ignore_conflicts=True)
    return record_many([(config, status)])[config.pk]


def record_many(observed: list[tuple[ProviderConfig, HealthStatus]],
                release: Iterable[Any] = ()) -> dict[Any, str]:
    """Store observations, move each provider's state, store a transition when it changes, and
    start an alert job for transitions into and out of ``down``; release the leases of the
    providers in ``release``. Every provider observed has its health row already (``_acquire``
    or ``record`` made it). One statement however many providers a poll saw (``_RECORD_SQL``;
    a poll of 50 once spent 56 ms on 273 statements, one provider at a time), plus the alert
    decisions of the transitions that may page. Returns the new state per provider id."""
    if not observed:
        return {}
    latest = {config.pk: (config, status) for config, status in observed}  # one per provider
    freed = set(release)
    params: dict[str, Any] = {
        "ids": list(latest), "ok": [s.ok for _, s in latest.values()],
        "messages": [s.message[:300] for _, s in latest.values()],
        "latencies": [float(s.latency_ms) for _, s in latest.values()],
        "at": [s.checked_at for _, s in latest.values()],
        "deadlines": [c.health_deadline_ms for c, _ in latest.values()],
        "release": [pk in freed for pk in latest],
        "share": DEGRADED_LATENCY_SHARE, "down_after": failures_for_down(),
    }
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(_RECORD_SQL, params)
            rows = cursor.fetchall()
        states = {provider_id: to_state for provider_id, _, to_state, _ in rows}
        transitions = []
        for provider_id, from_state, to_state, transition_id in rows:
            if transition_id is None:
                continue
            config, status = latest[provider_id]
            transitions.append(HealthTransition(
                pk=transition_id, provider=config, from_state=from_state, to_state=to_state,
                message=status.message[:300], at=status.checked_at))
        if transitions:
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
