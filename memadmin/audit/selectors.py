"""Reading a workspace's audit trail: filtered keyset pages (newest first) and export batches.

Built for millions of events per workspace: every page is an index range read on
``(workspace, created_at DESC, id DESC)`` (or the actor/action variants, see the model's
indexes), starting after the previous page's last row, so page 10,000 costs what page 1 costs.
Nothing counts the matches.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import uuid
from collections.abc import Iterator
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet

from memadmin.audit.models import AuditEvent
from memadmin.audit.sentences import TargetPlaces

PAGE_SIZE = 50
EXPORT_BATCH = 1000
SUMMARY_CHARS = 200


@dataclasses.dataclass(frozen=True)
class AuditFilters:
    actor: str = ""
    action: str = ""
    target_type: str = ""
    target_id: str = ""
    since: dt.datetime | None = None
    until: dt.datetime | None = None

    def for_audit(self) -> dict[str, str]:
        """The filters as an export's audit event records them (all plain labels)."""
        described = {
            "actor": self.actor, "action": self.action, "target_type": self.target_type,
            "target_id": self.target_id,
            "since": self.since.isoformat() if self.since else "",
            "until": self.until.isoformat() if self.until else "",
        }
        return {key: value for key, value in described.items() if value}


@dataclasses.dataclass(frozen=True)
class Cursor:
    """Where a page ends: the last row's (created_at, id). Encoded as ``<epoch µs>.<id>``."""

    created_at: dt.datetime
    id: int

    def encode(self) -> str:
        micros = (self.created_at - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(
            microseconds=1)
        return f"{micros}.{self.id}"

    @classmethod
    def decode(cls, raw: str) -> Cursor:
        """Parse a cursor; ``ValueError`` for anything that is not one."""
        micros, sep, ident = raw.partition(".")
        if not sep or not micros.lstrip("-").isdigit() or not ident.isdigit():
            raise ValueError("not a cursor")
        if len(micros) > 20 or len(ident) > 19:
            raise ValueError("not a cursor")
        try:
            created = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(
                microseconds=int(micros))
        except OverflowError:
            raise ValueError("not a cursor") from None
        return cls(created, int(ident))


@dataclasses.dataclass(frozen=True)
class AuditPage:
    events: list[AuditEvent]
    next_cursor: str | None


def workspace_events(workspace: Any) -> QuerySet[AuditEvent]:
    """Every event the workspace shows (its list and exports read this set). The verifier
    walks the workspace's chain and fails on any event of this set that is not on it
    (``memadmin.audit.services.check_end``), so nothing shown escapes verification."""
    return AuditEvent.objects.filter(workspace_id=workspace.pk)


def _filtered(workspace: Any, filters: AuditFilters) -> QuerySet[AuditEvent]:
    rows = workspace_events(workspace)
    if filters.actor:
        rows = rows.filter(actor_label=filters.actor)
    if filters.action:
        rows = rows.filter(action=filters.action)
    if filters.target_type:
        rows = rows.filter(target_type=filters.target_type)
    if filters.target_id:
        rows = rows.filter(target_id__contains=filters.target_id)
    if filters.since:
        rows = rows.filter(created_at__gte=filters.since)
    if filters.until:
        rows = rows.filter(created_at__lt=filters.until)
    return rows


def _after(rows: QuerySet[AuditEvent], cursor: Cursor | None) -> QuerySet[AuditEvent]:
    rows = rows.order_by("-created_at", "-id")
    if cursor is None:
        return rows
    # (created_at, id) < (c, i), with "created_at <= c" spelled out so that the index range
    # starts at c instead of the planner filtering rows from the newest end.
    return rows.filter(Q(created_at__lt=cursor.created_at) | Q(id__lt=cursor.id),
                       created_at__lte=cursor.created_at)


def audit_page(*, workspace: Any, filters: AuditFilters, cursor: Cursor | None = None,
               size: int = PAGE_SIZE) -> AuditPage:
    """One page of matching events, newest first, and the cursor of the next (older) page."""
    rows = list(_after(_filtered(workspace, filters), cursor)[: size + 1])
    events, more = rows[:size], len(rows) > size
    next_cursor = Cursor(events[-1].created_at, events[-1].id).encode() if more else None
    return AuditPage(events, next_cursor)


def audit_export_rows(*, workspace: Any, filters: AuditFilters,
                      batch: int = EXPORT_BATCH) -> Iterator[AuditEvent]:
    """Every matching event, newest first, read in keyset batches: constant memory and no
    long-lived server-side cursor, so it streams safely from a response iterator."""
    cursor: Cursor | None = None
    while True:
        rows = list(_after(_filtered(workspace, filters), cursor)[:batch])
        yield from rows
        if len(rows) < batch:
            return
        cursor = Cursor(rows[-1].created_at, rows[-1].id)


def audit_actions(*, workspace: Any) -> list[str]:
    """The distinct actions recorded in the workspace, for the filter's choices.

    A loose index scan (one index probe per distinct action on ``audit_by_action``) instead of
    a DISTINCT over every event: milliseconds at millions of events.
    """
    sql = """
        WITH RECURSIVE found(action) AS (
            (SELECT action FROM audit_auditevent WHERE workspace_id = %s
             ORDER BY action LIMIT 1)
            UNION ALL
            SELECT (SELECT e.action FROM audit_auditevent e
                    WHERE e.workspace_id = %s AND e.action > found.action
                    ORDER BY e.action LIMIT 1)
            FROM found WHERE found.action IS NOT NULL
        )
        SELECT action FROM found WHERE action IS NOT NULL
    """
    with connection.cursor() as cur:
        cur.execute(sql, [workspace.pk, workspace.pk])
        return [row[0] for row in cur.fetchall()]


def _uuids(values: set[str]) -> list[str]:
    found = []
    for value in values:
        try:
            found.append(str(uuid.UUID(value)))
        except ValueError:
            continue
    return found


def target_places(*, workspace: Any, events: list[AuditEvent]) -> TargetPlaces:
    """Where the events' namespaces, resources and items live (slugs for their links): one
    query for the whole page, whatever it holds."""
    namespaces: set[str] = set()
    resources: set[str] = set()
    for event in events:
        if event.target_type == "namespace":
            namespaces.add(event.target_id)
        elif event.target_type == "resource":
            resources.add(event.target_id)
        elif event.target_type == "item" and isinstance(event.data, dict):
            namespaces.add(str(event.data.get("namespace", "")))
    sql = """
        SELECT 'namespace', n.id::text, n.slug, r.slug FROM workspaces_namespace n
        JOIN workspaces_resource r ON r.id = n.resource_id
        WHERE r.workspace_id = %s AND n.id = ANY(%s::uuid[])
        UNION ALL
        SELECT 'resource', r.id::text, r.slug, r.slug FROM workspaces_resource r
        WHERE r.workspace_id = %s AND r.id = ANY(%s::uuid[])
    """
    with connection.cursor() as cur:
        cur.execute(sql, [workspace.pk, _uuids(namespaces), workspace.pk, _uuids(resources)])
        rows = cur.fetchall()
    places: dict[tuple[str, str], tuple[str, str, dict[str, str]]] = {}
    for kind, ident, slug, resource in rows:
        if kind == "namespace":
            places[(kind, ident)] = (f"{resource}/{slug}", "workspaces:namespace",
                                     {"resource": resource, "namespace": slug})
        else:
            places[(kind, ident)] = (slug, "workspaces:resource", {"resource": slug})
    return places


def data_details(data: Any) -> str:
    """An event's data as indented JSON, for the disclosure under its sentence (escaped by
    the template); empty when there is none."""
    if not data:
        return ""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2)


def data_summary(data: Any) -> str:
    """A one-line rendering of an event's data for the table (escaped by the template)."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))
    if text in ("{}", "null"):
        return ""
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def event_row(event: AuditEvent) -> dict[str, Any]:
    """One event as exports write it (JSON Lines as is; CSV with ``data`` as JSON text)."""
    return {
        "id": event.id,
        "seq": event.seq,
        "created_at": event.created_at.isoformat(),
        "actor": event.actor_label,
        "action": event.action,
        "target_type": event.target_type,
        "target_id": event.target_id,
        "data": event.data,
        "hash": event.hash,
        "prev_hash": event.prev_hash,
    }
