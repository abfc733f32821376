"""Reads for the aux-status panel: a fixed handful of queries however many providers and checks.

Pages only read what the scheduler's polls stored; they never contact a provider.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, Min, Q
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from memadmin.jobs.models import ServiceHeartbeat
from memadmin.providers.health import DEGRADED_LATENCY_SHARE
from memadmin.providers.models import MaintenanceWindow, ProviderConfig, ProviderHealth

STRIP_LENGTH = 50
TIMELINE_LENGTH = 8
PROBLEM_STATES = ("down", "degraded", "stale")


@dataclasses.dataclass(frozen=True)
class Check:
    ok: bool
    latency_ms: float
    checked_at: dt.datetime
    message: str


@dataclasses.dataclass(frozen=True)
class Transition:
    from_state: str
    to_state: str
    at: dt.datetime
    until: dt.datetime | None
    message: str

    @property
    def minutes(self) -> int | None:
        if self.until is None:
            return None
        return max(0, round((self.until - self.at).total_seconds() / 60))


@dataclasses.dataclass
class ProviderPanel:
    config: ProviderConfig
    state: str
    message: str
    latency_ms: float | None
    p95_24h: float | None
    uptime_24h: float | None
    uptime_7d: float | None
    last_ok_at: dt.datetime | None
    last_checked_at: dt.datetime | None
    strip: list[Check]
    timeline: list[Transition]
    failures_24h: int = 0
    maintenance_checks_7d: int = 0
    maintenance: MaintenanceWindow | None = None

    @property
    def last_check(self) -> Check | None:
        return self.strip[-1] if self.strip else None

    @property
    def last_failed(self) -> bool:
        return self.last_check is not None and not self.last_check.ok

    @property
    def reason(self) -> str:
        """Why the provider is in its state, in words an operator reads at a glance."""
        deadline = self.config.health_deadline_ms
        last = self.last_check
        if self.state == "degraded" and last is not None:
            if last.ok:
                share = round(100 * DEGRADED_LATENCY_SHARE)
                return (f"{last.latency_ms:.0f} ms, over {share}% of the "
                        f"{_duration(deadline)} deadline")
            failures = getattr(getattr(self.config, "health", None), "consecutive_failures", 0)
            down_after = settings.MEMADMIN_HEALTH_DOWN_AFTER
            return (f"{failures} failed check{'s' if failures != 1 else ''} in a row "
                    f"(down after {down_after}): {last.message}")
        if self.state == "down" and last is not None:
            return f"last check failed: {last.message}"
        if self.state == "stale":
            return "no check recorded recently: is the scheduler running?"
        if self.state == "disabled":
            return "disabled: not polled"
        if self.state == "unprobed":
            return "not polled (polling is switched off for this provider)"
        return ""

    @property
    def last_ok_seconds(self) -> int | None:
        if self.last_ok_at is None:
            return None
        return int((timezone.now() - self.last_ok_at).total_seconds())

    @property
    def strip_ok(self) -> int:
        return sum(1 for check in self.strip if check.ok)


@dataclasses.dataclass
class HealthPanel:
    providers: list[ProviderPanel]
    maintenance: list[MaintenanceWindow]
    scheduler_beat: dt.datetime | None
    worker_beat: dt.datetime | None
    queue_age_seconds: int | None
    refresh_seconds: int

    @property
    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for panel in self.providers:
            counts[panel.state] = counts.get(panel.state, 0) + 1
        return counts

    def _alive(self, beat: dt.datetime | None, every: int) -> bool:
        return beat is not None and (timezone.now() - beat).total_seconds() < 3 * every

    @property
    def scheduler_alive(self) -> bool:
        return self._alive(self.scheduler_beat, 5)

    @property
    def worker_alive(self) -> bool:
        return self._alive(self.worker_beat, 30)


def _duration(ms: int) -> str:
    return f"{ms / 1000:g} s" if ms >= 1000 and ms % 100 == 0 else f"{ms} ms"


def displayed_state(config: ProviderConfig, health: ProviderHealth | None,
                    now: dt.datetime) -> str:
    if not config.enabled:
        return "disabled"
    if not config.probed:
        return "unprobed"
    if health is None or health.last_checked_at is None:
        return "unknown"
    stale_after = dt.timedelta(seconds=3 * settings.MEMADMIN_HEALTH_INTERVAL)
    if now - health.last_checked_at > stale_after:
        return "stale"
    return health.state


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def health_panel(workspace: Any, *, provider: ProviderConfig | None = None) -> HealthPanel:
    """The workspace's panel; with ``provider``, only that provider's card (its history page)."""
    now = timezone.now()
    found = ProviderConfig.objects.filter(workspace=workspace)
    if provider is not None:
        found = found.filter(pk=provider.pk)
    configs = list(found.select_related("health").order_by("name"))
    ids = [config.pk for config in configs]
    stats: dict[Any, tuple[Any, ...]] = {}
    strips: dict[Any, list[Check]] = {pk: [] for pk in ids}
    timelines: dict[Any, list[tuple[Any, ...]]] = {pk: [] for pk in ids}
    if ids:
        for row in _rows(
            # Latency percentiles over successful checks only: a refused connection's 0.3 ms
            # or a timeout's full deadline is not a latency. Failures are counted apart.
            # Checks inside a maintenance window are reported apart: they count neither for
            # nor against uptime.
            "SELECT provider_id,"
            " percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms)"
            "   FILTER (WHERE checked_at >= %s AND ok),"
            " avg(ok::int) FILTER (WHERE checked_at >= %s AND NOT maint),"
            " avg(ok::int) FILTER (WHERE NOT maint),"
            " count(*) FILTER (WHERE checked_at >= %s AND NOT ok AND NOT maint),"
            " count(*) FILTER (WHERE maint)"
            " FROM (SELECT h.provider_id, h.ok, h.latency_ms, h.checked_at, EXISTS ("
            "   SELECT 1 FROM providers_maintenancewindow m"
            "   WHERE (m.provider_id = h.provider_id"
            "          OR (m.provider_id IS NULL AND m.workspace_id = %s))"
            "     AND h.checked_at >= m.starts_at AND h.checked_at < m.ends_at) AS maint"
            "   FROM providers_healthcheck h"
            "   WHERE h.provider_id = ANY(%s) AND h.checked_at >= %s) checks"
            " GROUP BY provider_id",
            [now - dt.timedelta(hours=24), now - dt.timedelta(hours=24),
             now - dt.timedelta(hours=24), workspace.pk, ids, now - dt.timedelta(days=7)],
        ):
            stats[row[0]] = row[1:]
        # LATERAL + LIMIT walks the (provider, -checked_at) index: cost does not grow with
        # the length of the history.
        for pk, ok, latency, checked_at, message in _rows(
            "SELECT p.id, h.ok, h.latency_ms, h.checked_at, h.message"
            " FROM unnest(%s::uuid[]) AS p(id) CROSS JOIN LATERAL ("
            "   SELECT ok, latency_ms, checked_at, message FROM providers_healthcheck"
            "   WHERE provider_id = p.id ORDER BY checked_at DESC LIMIT %s) h",
            [ids, STRIP_LENGTH],
        ):
            strips[pk].append(Check(ok, latency, checked_at, message))
        for row in _rows(
            "SELECT p.id, t.from_state, t.to_state, t.at, t.message"
            " FROM unnest(%s::uuid[]) AS p(id) CROSS JOIN LATERAL ("
            "   SELECT from_state, to_state, at, message FROM providers_healthtransition"
            "   WHERE provider_id = p.id ORDER BY at DESC LIMIT %s) t",
            [ids, TIMELINE_LENGTH + 1],
        ):
            timelines[row[0]].append(row[1:])
    windows = maintenance_windows(workspace, now)
    panels = []
    for config in configs:
        health = getattr(config, "health", None)
        p95, up24, up7, failures, in_maintenance = stats.get(config.pk,
                                                             (None, None, None, 0, 0))
        strip = list(reversed(strips[config.pk]))
        succeeded = [check for check in strip if check.ok]
        newest_first = timelines[config.pk]
        timeline = [
            Transition(from_state=f, to_state=t, at=at, message=m,
                       until=newest_first[i - 1][2] if i > 0 else None)
            for i, (f, t, at, m) in enumerate(newest_first[:TIMELINE_LENGTH])
        ]
        panels.append(ProviderPanel(
            config=config, state=displayed_state(config, health, now),
            message=health.message if health else "",
            latency_ms=succeeded[-1].latency_ms if succeeded else None,
            p95_24h=float(p95) if p95 is not None else None,
            uptime_24h=float(up24) * 100 if up24 is not None else None,
            uptime_7d=float(up7) * 100 if up7 is not None else None,
            last_ok_at=health.last_ok_at if health else None,
            last_checked_at=health.last_checked_at if health else None,
            strip=strip, timeline=timeline, failures_24h=failures or 0,
            maintenance_checks_7d=in_maintenance or 0,
            maintenance=next((w for w in windows if w.provider_id in (None, config.pk)
                              and w.starts_at <= now), None),
        ))
    beats = dict(ServiceHeartbeat.objects.values_list("name", "beat_at"))
    # Age of the oldest task that could run now and has not started: a stuck or missing worker.
    queue_age = DBTaskResult.objects.ready().aggregate(
        oldest=Min("enqueued_at"))["oldest"]
    return HealthPanel(
        providers=panels, maintenance=windows, scheduler_beat=beats.get("scheduler"),
        worker_beat=beats.get("worker"),
        queue_age_seconds=int((now - queue_age).total_seconds()) if queue_age else None,
        refresh_seconds=settings.MEMADMIN_PANEL_REFRESH_SECONDS,
    )


@dataclasses.dataclass(frozen=True)
class DeletionImpact:
    resources: list[tuple[Any, int]]  # (resource, namespace count)
    holds: int  # unlifted freezes and legal holds on anything of the provider

    @property
    def blocked(self) -> bool:
        return bool(self.resources or self.holds)


def deletion_impact(config: ProviderConfig) -> DeletionImpact:
    from memadmin.memory.models import Freeze

    resources = [(r, r.namespace_count) for r in config.resources.annotate(
        namespace_count=Count("namespaces")).order_by("slug")]
    active = Freeze.objects.filter(lifted_at__isnull=True)
    holds = (active.filter(provider=config).count()
             + active.filter(resource__provider=config).count()
             + active.filter(namespace__resource__provider=config).count())
    return DeletionImpact(resources, holds)


def maintenance_windows(workspace: Any, now: dt.datetime) -> list[MaintenanceWindow]:
    """Windows running now or starting within a week, soonest first (banner and schedule)."""
    return list(MaintenanceWindow.objects
                .filter(workspace=workspace, ends_at__gt=now,
                        starts_at__lt=now + dt.timedelta(days=7))
                .select_related("provider", "created_by").order_by("starts_at"))


def health_summary(workspace: Any) -> dict[str, int]:
    """Problem counts for the navigation badge (one query)."""
    counts = ProviderHealth.objects.filter(
        provider__workspace=workspace, provider__enabled=True, provider__probed=True,
    ).aggregate(down=Count("pk", filter=Q(state="down")),
                degraded=Count("pk", filter=Q(state="degraded")))
    return {k: v for k, v in counts.items() if v}
