"""Reads over a provider's health history: incidents, uptime per day, latency series, and the
rows of the SLA exports. Pages read what polls stored; none of this contacts a provider.

Every figure counts successful checks for latency and leaves checks inside a maintenance window
out of uptime (they are reported apart), as the panel does.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from typing import Any

from django.db import connection
from django.utils import timezone

from memadmin.providers.models import HealthTransition, IncidentNote, ProviderConfig

OUTAGE_STATES = ("down", "degraded")
MAX_INCIDENTS = 200
CHART_WIDTH, CHART_HEIGHT = 600, 120

# How each chart range is cut into buckets: (label, span, bucket).
RANGES = {
    "24h": ("24 hours", dt.timedelta(hours=24), dt.timedelta(minutes=30)),
    "7d": ("7 days", dt.timedelta(days=7), dt.timedelta(hours=3)),
}


@dataclasses.dataclass(frozen=True)
class Incident:
    """One down or degraded period: from the transition that opened it to the one that closed
    it (``ended_at`` None: still open)."""

    opened: HealthTransition
    worst: str
    ended_at: dt.datetime | None
    note: IncidentNote | None

    @property
    def started_at(self) -> dt.datetime:
        return self.opened.at

    @property
    def first_error(self) -> str:
        return self.opened.message

    @property
    def duration(self) -> dt.timedelta:
        return (self.ended_at or timezone.now()) - self.started_at

    @property
    def duration_text(self) -> str:
        seconds = int(self.duration.total_seconds())
        hours, rest = divmod(seconds, 3600)
        minutes, seconds = divmod(rest, 60)
        if hours:
            return f"{hours} h {minutes} min"
        if minutes:
            return f"{minutes} min {seconds} s" if seconds else f"{minutes} min"
        return f"{seconds} s"


def incidents(provider: ProviderConfig, *, days: int = 30) -> list[Incident]:
    """The provider's incidents of the last ``days`` days, newest first."""
    since = timezone.now() - dt.timedelta(days=days)
    transitions = list(HealthTransition.objects.filter(provider=provider, at__gte=since)
                       .order_by("at", "pk")[: MAX_INCIDENTS * 4])
    notes = {note.transition_id: note for note in IncidentNote.objects.filter(
        transition__in=[t.pk for t in transitions]).select_related("author")}
    found: list[Incident] = []
    opened: HealthTransition | None = None
    worst = ""
    for transition in transitions:
        if transition.to_state in OUTAGE_STATES:
            if opened is None:
                opened, worst = transition, transition.to_state
            elif transition.to_state == "down":
                worst = "down"
        elif opened is not None:
            found.append(Incident(opened, worst, transition.at, notes.get(opened.pk)))
            opened = None
    if opened is not None:
        found.append(Incident(opened, worst, None, notes.get(opened.pk)))
    return list(reversed(found))[:MAX_INCIDENTS]


def incident_opener(provider: ProviderConfig, transition_id: Any) -> HealthTransition | None:
    """The transition that opened an incident of ``provider`` (a note is attached to it)."""
    try:
        pk = int(transition_id)
    except (TypeError, ValueError):
        return None
    return (HealthTransition.objects.filter(provider=provider, pk=pk,
                                            to_state__in=OUTAGE_STATES)
            .exclude(from_state__in=OUTAGE_STATES).first())


@dataclasses.dataclass(frozen=True)
class Day:
    day: dt.date
    uptime: float | None  # percent of checks ok, maintenance left out; None: no checks
    checks: int
    maintenance_checks: int

    @property
    def label(self) -> str:
        if self.uptime is None:
            extra = f", {self.maintenance_checks} in maintenance" if self.maintenance_checks else ""
            return f"{self.day:%b %d}: no checks{extra}"
        extra = f", {self.maintenance_checks} in maintenance" if self.maintenance_checks else ""
        return f"{self.day:%b %d}: {self.uptime:.2f}% of {self.checks} checks ok{extra}"


_MAINTENANCE = (
    "EXISTS (SELECT 1 FROM providers_maintenancewindow m"
    " WHERE (m.provider_id = h.provider_id"
    "        OR (m.provider_id IS NULL AND m.workspace_id = %s))"
    "   AND h.checked_at >= m.starts_at AND h.checked_at < m.ends_at)"
)


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def uptime_days(provider: ProviderConfig, *, days: int = 30) -> list[Day]:
    """Uptime per UTC day for the last ``days`` days, oldest first (one query)."""
    today = timezone.now().astimezone(dt.UTC).date()
    first = today - dt.timedelta(days=days - 1)
    # _MAINTENANCE is a constant fragment; every value is a parameter.
    sql = ("SELECT day, avg(ok::int) FILTER (WHERE NOT maint),"  # noqa: S608
           " count(*) FILTER (WHERE NOT maint), count(*) FILTER (WHERE maint)"
           " FROM (SELECT (h.checked_at AT TIME ZONE 'UTC')::date AS day, h.ok,"
           f" {_MAINTENANCE} AS maint"
           " FROM providers_healthcheck h WHERE h.provider_id = %s AND h.checked_at >= %s) c"
           " GROUP BY day")
    rows = _rows(sql, [provider.workspace_id, provider.pk,
                       dt.datetime.combine(first, dt.time(), tzinfo=dt.UTC)])
    by_day = {row[0]: row[1:] for row in rows}
    out = []
    for n in range(days):
        day = first + dt.timedelta(days=n)
        share, checks, maintenance = by_day.get(day, (None, 0, 0))
        out.append(Day(day, float(share) * 100 if share is not None else None, checks,
                       maintenance))
    return out


@dataclasses.dataclass(frozen=True)
class Bucket:
    start: dt.datetime
    latency_ms: float | None  # median of the successful checks in the bucket
    ok: int
    failed: int


@dataclasses.dataclass(frozen=True)
class Chart:
    """A latency chart ready to draw: SVG coordinates, plus the figures its text equivalent
    states (a chart is never the only way to read them)."""

    label: str
    buckets: list[Bucket]
    max_ms: float

    def _x(self, index: int) -> float:
        step = CHART_WIDTH / max(1, len(self.buckets) - 1)
        return round(index * step, 1)

    def _y(self, latency: float) -> float:
        return round(CHART_HEIGHT - (latency / self.max_ms) * (CHART_HEIGHT - 10), 1)

    @property
    def segments(self) -> list[str]:
        """Polyline point lists; a bucket without a success breaks the line."""
        lines: list[str] = []
        current: list[str] = []
        for index, bucket in enumerate(self.buckets):
            if bucket.latency_ms is None:
                if current:
                    lines.append(" ".join(current))
                current = []
                continue
            current.append(f"{self._x(index)},{self._y(bucket.latency_ms)}")
        if current:
            lines.append(" ".join(current))
        return lines

    @property
    def failure_marks(self) -> list[tuple[float, Bucket]]:
        return [(self._x(i), b) for i, b in enumerate(self.buckets) if b.failed]

    @property
    def points(self) -> list[tuple[float, float, Bucket]]:
        return [(self._x(i), self._y(b.latency_ms), b) for i, b in enumerate(self.buckets)
                if b.latency_ms is not None]

    @property
    def summary(self) -> str:
        values = sorted(b.latency_ms for b in self.buckets if b.latency_ms is not None)
        failed = sum(b.failed for b in self.buckets)
        if not values:
            return f"No successful check in the last {self.label}; {failed} failed."
        median = values[len(values) // 2]
        return (f"Latency of successful checks over the last {self.label}: lowest "
                f"{values[0]:.1f} ms, median {median:.1f} ms, highest {values[-1]:.1f} ms; "
                f"{failed} failed check{'s' if failed != 1 else ''}.")


def latency_chart(provider: ProviderConfig, range_key: str) -> Chart:
    label, span, bucket = RANGES[range_key]
    now = timezone.now()
    start = now - span
    seconds = int(bucket.total_seconds())
    rows = _rows(
        "SELECT floor(extract(epoch FROM checked_at - %s) / %s)::int AS n,"
        " percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE ok),"
        " count(*) FILTER (WHERE ok), count(*) FILTER (WHERE NOT ok)"
        " FROM providers_healthcheck WHERE provider_id = %s AND checked_at >= %s"
        " GROUP BY 1",
        [start, seconds, provider.pk, start])
    by_index = {row[0]: row[1:] for row in rows}
    count = int(span / bucket)
    buckets = []
    for n in range(count):
        latency, ok, failed = by_index.get(n, (None, 0, 0))
        buckets.append(Bucket(start + n * bucket,
                              float(latency) if latency is not None else None, ok, failed))
    highest = max((b.latency_ms for b in buckets if b.latency_ms is not None), default=0.0)
    ceiling = max(float(provider.health_deadline_ms) * 0.1, highest * 1.1, 1.0)
    return Chart(label, buckets, ceiling)


CHECK_COLUMNS = ["provider", "checked_at", "ok", "latency_ms", "message", "in_maintenance"]
INCIDENT_COLUMNS = ["provider", "state", "started_at", "ended_at", "duration_seconds",
                    "first_error", "note"]


def check_rows(workspace: Any, since: dt.datetime) -> Iterator[list[Any]]:
    """Every check of the workspace since ``since``, oldest first, read by a server-side
    cursor in batches: memory stays flat however long the history is."""
    sql = ("SELECT p.slug, h.checked_at, h.ok, h.latency_ms, h.message,"  # noqa: S608
           f" {_MAINTENANCE}"
           " FROM providers_healthcheck h JOIN providers_providerconfig p ON p.id = h.provider_id"
           " WHERE p.workspace_id = %s AND h.checked_at >= %s ORDER BY h.checked_at, h.id")
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, [workspace.pk, workspace.pk, since])
        while batch := cursor.fetchmany(2000):
            for slug, checked_at, ok, latency, message, maintenance in batch:
                yield [slug, checked_at.isoformat(), "true" if ok else "false",
                       f"{latency:.3f}" if ok else "", message,
                       "true" if maintenance else "false"]


def incident_rows(workspace: Any, days: int) -> Iterator[list[Any]]:
    for provider in ProviderConfig.objects.filter(workspace=workspace).order_by("slug"):
        for incident in reversed(incidents(provider, days=days)):
            yield [provider.slug, incident.worst, incident.started_at.isoformat(),
                   incident.ended_at.isoformat() if incident.ended_at else "",
                   int(incident.duration.total_seconds()), incident.first_error,
                   incident.note.text if incident.note else ""]
