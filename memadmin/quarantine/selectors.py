"""Reads of the review queue: filtered keyset pages, highlighted content, the nav count."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import json
import uuid
from typing import Any

from django.db.models import Q, QuerySet

from memadmin.quarantine.models import QuarantineEntry
from memadmin.quarantine.screening import content_hash
from memadmin.workspaces.models import Workspace

PAGE_SIZE = 25
STATE_FILTERS = ("pending", "kept", "released", "purged", "superseded", "all")


@dataclasses.dataclass(frozen=True)
class QueueFilters:
    state: str = "pending"
    provider: str | None = None  # provider slug
    rule: str | None = None
    namespace: uuid.UUID | None = None


@dataclasses.dataclass
class QueueRow:
    entry: QuarantineEntry
    #: The content cut into (text, rule id or None) pieces; None when not shown.
    segments: list[tuple[str, str | None]] | None
    #: (rule id, the rule or None for a rule of an older rule set)
    rules: list[tuple[str, Any]]


@dataclasses.dataclass
class QueuePage:
    rows: list[QueueRow]
    next_cursor: str | None


def pending_count(workspace: Workspace) -> int:
    return QuarantineEntry.objects.filter(workspace=workspace, state="pending").count()


def entries(workspace: Workspace, filters: QueueFilters) -> QuerySet[QuarantineEntry]:
    qs = QuarantineEntry.objects.filter(workspace=workspace)
    if filters.state != "all":
        qs = qs.filter(state=filters.state)
    if filters.provider:
        qs = qs.filter(provider__slug=filters.provider)
    if filters.rule:
        qs = qs.filter(rule_ids__contains=[filters.rule])
    if filters.namespace:
        qs = qs.filter(namespace_id=filters.namespace)
    return qs


def _encode_cursor(entry: QuarantineEntry) -> str:
    raw = json.dumps([entry.created_at.isoformat(), str(entry.pk)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[dt.datetime, uuid.UUID] | None:
    """The position a cursor names, or None for a damaged one."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        when, pk = json.loads(raw)
        parsed = dt.datetime.fromisoformat(when)
        if parsed.tzinfo is None:
            return None
        return parsed, uuid.UUID(pk)
    except (ValueError, TypeError, json.JSONDecodeError):
        return None


def segments(content: str, spans: list[list[Any]]) -> list[tuple[str, str | None]]:
    """Cut ``content`` at the matched spans (overlaps merged, the first rule named)."""
    marks: list[tuple[int, int, str]] = []
    for span in sorted((s for s in spans if _valid_span(s, len(content))),
                       key=lambda s: (s[0], -s[1])):
        start, end, rule_id = int(span[0]), int(span[1]), str(span[2])
        if marks and start < marks[-1][1]:
            last = marks[-1]
            marks[-1] = (last[0], max(last[1], end), last[2])
        else:
            marks.append((start, end, rule_id))
    pieces: list[tuple[str, str | None]] = []
    position = 0
    for start, end, rule_id in marks:
        if start > position:
            pieces.append((content[position:start], None))
        pieces.append((content[start:end], rule_id))
        position = end
    if position < len(content):
        pieces.append((content[position:], None))
    return pieces


def _valid_span(span: Any, length: int) -> bool:
    return (isinstance(span, list | tuple) and len(span) == 3
            and all(isinstance(x, int) for x in span[:2]) and 0 <= span[0] < span[1] <= length)


def _rule(rule_id: str) -> Any:
    from memadmin.quarantine.scanner import rule

    try:
        return rule(rule_id)
    except KeyError:
        return None  # a rule of an older rule set


def queue_page(workspace: Workspace, filters: QueueFilters, cursor: str | None,
               limit: int | None = None) -> QueuePage:
    """One page, newest first. Content is shown only for open local entries whose stored
    verdict matches the item's current bytes (spans index into exactly that text)."""
    limit = limit or PAGE_SIZE
    qs = entries(workspace, filters).select_related(
        "item", "namespace__resource", "provider", "reviewer")
    position = decode_cursor(cursor) if cursor else None
    if position is not None:
        when, pk = position
        qs = qs.filter(Q(created_at__lt=when) | Q(created_at=when, id__lt=pk),
                       created_at__lte=when)
    found = list(qs.order_by("-created_at", "-id")[: limit + 1])
    rows = []
    for entry in found[:limit]:
        shown = None
        item = entry.item
        if (entry.state in QuarantineEntry.OPEN_STATES and item is not None
                and not entry.remote):
            spans = entry.spans if entry.content_hash == content_hash(item.content) else []
            shown = segments(item.content, spans)
        rows.append(QueueRow(entry=entry, segments=shown,
                             rules=[(rule_id, _rule(rule_id)) for rule_id in entry.rule_ids]))
    next_cursor = _encode_cursor(found[limit - 1]) if len(found) > limit else None
    return QueuePage(rows=rows, next_cursor=next_cursor)
