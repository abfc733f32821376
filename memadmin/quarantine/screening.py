"""Screening writes of the built-in store: the scanner's verdict decides an item's quarantine
state, and a flagged version gets a review entry, all in the writer's transaction.

Called by ``providers.local`` on every create and change (retain, the endpoint's tools, editor
saves, restores, imports) and by the rescan job. Remote providers scan their own writes and
report labels, which ``remote_labels_sync`` lists read-only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.db import connection
from django.utils import timezone

from memadmin.events import services as events
from memadmin.providers.contract import source_label
from memadmin.quarantine.models import QuarantineAllow, QuarantineEntry

if TYPE_CHECKING:
    from memadmin.quarantine.scanner import Verdict


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_ALLOWED = (f'SELECT content_hash FROM "{QuarantineAllow._meta.db_table}" '  # noqa: S608
            "WHERE workspace_id = %s AND content_hash = ANY(%s)")


def assess(content: str, workspace_id: Any) -> Verdict | None:
    """The verdict if ``content`` must be quarantined, else None (clean, or allow-listed).

    Clean content costs no query: the allow-list is read only for flagged content.
    """
    from memadmin.quarantine.scanner import scan

    return assess_scanned([content], [scan(content)], workspace_id)[0]


def assess_scanned(contents: Sequence[str], verdicts: Sequence[Verdict],
                   workspace_id: Any) -> list[Verdict | None]:
    """``assess`` for many contents already scanned (``verdicts``, one per content): the
    allow-list is read once, for the flagged ones only."""
    hashes = {index: content_hash(content) for index, (content, verdict)
              in enumerate(zip(contents, verdicts, strict=True)) if verdict.flagged}
    allowed: set[str] = set()
    if hashes:  # one statement with the hashes as one array (no ORM compiling on a write)
        with connection.cursor() as cursor:
            cursor.execute(_ALLOWED, [workspace_id, sorted(set(hashes.values()))])
            allowed = {row[0] for row in cursor.fetchall()}
    return [verdict if index in hashes and hashes[index] not in allowed else None
            for index, verdict in enumerate(verdicts)]


def state_after(verdict: Verdict | None, previous: str) -> str:
    """The item's quarantine state for its new content.

    Flagged -> ``pending``. Clean after ``pending`` -> ``clear`` (the flagged version is gone);
    otherwise unchanged (a ``released`` item stays released while its content stays clean).
    """
    if verdict is not None:
        return "pending"
    return "clear" if previous == "pending" else previous


def record(*, item: Any, verdict: Verdict | None, previous: str, provider_id: Any,
           workspace_id: Any, label: str) -> None:
    """Write the review entries for an item whose content was just (re)written or rescanned.

    Open entries of an earlier version are superseded and a flagged version gets a pending one;
    the same flagged bytes written again keep their open entry (and a reviewer's "keep").
    """
    digest = content_hash(item.content) if verdict is not None else None
    if previous == "pending":
        open_rows = QuarantineEntry.objects.filter(
            provider_id=provider_id, item_ref=str(item.id), state__in=QuarantineEntry.OPEN_STATES)
        if (verdict is not None and digest is not None
                and open_rows.filter(content_hash=digest).exists()):
            open_rows.update(rule_ids=list(verdict.rules),
                             spans=[list(span) for span in verdict.spans],
                             ruleset_version=verdict.version)
            return
        open_rows.update(state="superseded", reviewed_at=timezone.now())
    if verdict is None or digest is None:
        return
    _pending_entry(item, verdict, provider_id, workspace_id, label, digest).save()
    events.item_quarantine(item, state="pending", actor="scanner", rules=verdict.rules)


def _pending_entry(item: Any, verdict: Verdict, provider_id: Any, workspace_id: Any,
                   label: str, digest: str) -> QuarantineEntry:
    """The (unsaved) pending review entry of a flagged item."""
    return QuarantineEntry(
        workspace_id=workspace_id, provider_id=provider_id, namespace_id=item.namespace_id,
        item_id=item.id, item_ref=str(item.id), label=label[:300], rule_ids=list(verdict.rules),
        spans=[list(span) for span in verdict.spans], ruleset_version=verdict.version,
        content_hash=digest)


def record_created(*, items: Sequence[Any], verdicts: Sequence[Verdict | None],
                   provider_id: Any, workspace_id: Any, namespace: Any) -> None:
    """``record`` for items just created in ``namespace`` (no earlier version, so nothing to
    supersede), many at once: the flagged ones' pending entries in one INSERT and their
    ``item.quarantined`` events queued together. ``items`` need ``id``, ``namespace_id``,
    ``tier``, ``key``, ``revision`` and ``content``; ``verdicts`` are ``assess``'s (None:
    nothing to hold)."""
    flagged = [(item, verdict) for item, verdict in zip(items, verdicts, strict=True)
               if verdict is not None]
    if not flagged:
        return
    QuarantineEntry.objects.bulk_create([
        _pending_entry(item, verdict, provider_id, workspace_id,
                       source_label(item.tier, item.key), content_hash(item.content))
        for item, verdict in flagged])
    events.items_quarantined([(item, verdict.rules) for item, verdict in flagged],
                             namespace=namespace, actor="scanner")


def state_set(*, item: Any, state: str, provider_id: Any, workspace_id: Any, label: str) -> None:
    """Set an item's state by hand (a reviewer, or a remote memadmin over the protocol).

    Leaving ``pending`` releases its open entries; entering it opens one without rule matches.
    """
    previous = item.quarantine_state
    item.quarantine_state = state
    item.save(update_fields=["quarantine_state"])
    if previous == "pending":
        QuarantineEntry.objects.filter(
            provider_id=provider_id, item_ref=str(item.id), state__in=QuarantineEntry.OPEN_STATES,
        ).update(state="released", reviewed_at=timezone.now())
    if state == "pending":
        QuarantineEntry.objects.create(
            workspace_id=workspace_id, provider_id=provider_id, namespace_id=item.namespace_id,
            item=item, item_ref=str(item.id), label=label[:300], rule_ids=[], spans=[],
            content_hash=content_hash(item.content), note="quarantined by hand",
        )
        events.item_quarantine(item, state="pending", actor="reviewer")
