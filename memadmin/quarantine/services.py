"""Review decisions on quarantined items: release (optionally allow-listing the exact content),
purge, or keep quarantined; and the audited view of quarantined content.

Each decision goes through the item's provider (so a remote memadmin's store would follow the
same contract), updates the review entry and writes its audit event in one transaction per
entry: a bulk decision that fails on one entry (a freeze, a vanished item) keeps the others.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.events import services as events
from memadmin.jobs.models import Job
from memadmin.jobs.services import job_create
from memadmin.memory.services import new_operation_id
from memadmin.providers import contract as c
from memadmin.providers.registry import namespace_scope, provider_for
from memadmin.quarantine.models import QuarantineAllow, QuarantineEntry
from memadmin.workspaces.models import Workspace

DECISIONS = ("release", "purge", "keep")
NOTE_MAX_CHARS = 2000
#: At most this many entries per bulk decision (the page says how many remain).
BULK_LIMIT = 500


@dataclasses.dataclass
class ReviewOutcome:
    decided: int = 0
    #: (entry id, why) for entries left as they were.
    skipped: list[tuple[str, str]] = dataclasses.field(default_factory=list)


def _clean_note(note: str) -> str:
    note = (note or "").strip()
    if len(note) > NOTE_MAX_CHARS:
        raise ValidationError(f"The note is limited to {NOTE_MAX_CHARS} characters.")
    try:
        c.check_text(note, field="note")
    except c.InvalidRequest as exc:
        raise ValidationError(f"The note {exc.message}.") from None
    return note


def _decide_one(actor: Actor, entry: QuarantineEntry, decision: str, note: str,
                allow: bool) -> None:
    """One entry's decision in its own transaction; raises ``c.ProviderError`` to skip it."""
    namespace = entry.namespace
    if entry.remote or namespace is None:
        raise c.InvalidRequest("remote labels are read-only here")
    if entry.state not in QuarantineEntry.OPEN_STATES or (decision == "keep"
                                                          and entry.state == "kept"):
        raise c.Conflict(f"already {entry.state}")
    provider = provider_for(entry.provider)
    scope, deadline = namespace_scope(namespace), entry.provider.request_deadline
    now = timezone.now()
    with transaction.atomic():
        if decision == "release":
            provider.set_quarantine(entry.item_ref, "released", scope=scope, deadline=deadline)
            if allow and entry.content_hash:
                QuarantineAllow.objects.get_or_create(
                    workspace_id=entry.workspace_id, content_hash=entry.content_hash,
                    defaults={"created_by": actor.user})
            events.item_released(workspace=entry.workspace, namespace=namespace,
                                 item_ref=entry.item_ref, content_hash=entry.content_hash,
                                 actor=actor.label)
            state = "released"
        elif decision == "purge":
            # Detached first: deleting the item removes the entries still pointing at it.
            QuarantineEntry.objects.filter(pk=entry.pk).update(item=None)
            result = provider.delete_items(ids=[entry.item_ref], operation_id=new_operation_id(),
                                           actor=actor.label, scope=scope, deadline=deadline)
            if result.held:
                raise c.Frozen("the item is frozen or under a legal hold")
            if not result.removed:
                raise c.NotFound("the item is gone")
            state = "purged"
        else:
            state = "kept"
        QuarantineEntry.objects.filter(pk=entry.pk).update(
            state=state, reviewer=actor.user, reviewed_at=now, note=note)
        audit_event_create(
            workspace=entry.workspace, actor=actor, action=f"quarantine.{decision}",
            target_type="quarantine_entry", target_id=entry.pk,
            data={"item": entry.item_ref, "provider": str(entry.provider_id),
                  "namespace": str(namespace.pk), "rules": entry.rule_ids,
                  "content_sha256": entry.content_hash, "ruleset": entry.ruleset_version,
                  "allow_listed": bool(allow and decision == "release"),
                  "with_note": bool(note)},
        )


def quarantine_decide(*, actor: Actor, workspace: Workspace, entries: Sequence[QuarantineEntry],
                      decision: str, note: str = "", allow: bool = False) -> ReviewOutcome:
    """Release, purge or keep each entry (each in its own transaction, each audited)."""
    if decision not in DECISIONS:
        raise ValidationError("Choose release, purge or keep.")
    note = _clean_note(note)
    if len(entries) > BULK_LIMIT:
        raise ValidationError(f"At most {BULK_LIMIT} entries per decision.")
    outcome = ReviewOutcome()
    for entry in entries:
        if entry.workspace_id != workspace.pk:
            raise ValueError("an entry of another workspace")
        try:
            _decide_one(actor, entry, decision, note, allow)
        except c.ProviderError as exc:
            outcome.skipped.append((str(entry.pk), exc.message))
        else:
            outcome.decided += 1
    return outcome


def quarantine_content_viewed(*, actor: Actor, workspace: Workspace,
                              entries: Sequence[QuarantineEntry]) -> None:
    """Record that a reviewer was shown the content of these entries."""
    if not entries:
        return
    with transaction.atomic():
        _content_viewed(actor, workspace, entries)


def _content_viewed(actor: Actor, workspace: Workspace,
                    entries: Sequence[QuarantineEntry]) -> None:
    audit_event_create(
        workspace=workspace, actor=actor, action="quarantine.view", target_type="quarantine_entry",
        target_id=entries[0].pk if len(entries) == 1 else "",
        data={"entries": [str(entry.pk) for entry in entries]},
    )


def quarantine_allow_remove(*, actor: Actor, allow: QuarantineAllow) -> None:
    with transaction.atomic():
        audit_event_create(workspace=allow.workspace, actor=actor, action="quarantine.unallow",
                           target_type="quarantine_allow", target_id=allow.pk,
                           data={"content_sha256": allow.content_hash})
        allow.delete()


def _job_start(actor: Actor, workspace: Workspace, kind: str) -> Job:
    # job_create audits the start ("job.start" with the kind) in the same transaction.
    return job_create(actor=actor, kind=kind, params={"workspace": str(workspace.pk)},
                      workspace=workspace)


def quarantine_rescan_start(*, actor: Actor, workspace: Workspace) -> Job:
    """Rescan every item of the workspace's built-in stores with the current rules (a job)."""
    return _job_start(actor, workspace, "quarantine_rescan")


def quarantine_remote_sync_start(*, actor: Actor, workspace: Workspace) -> Job:
    """Fetch the labels every remote provider of the workspace reports as quarantined."""
    return _job_start(actor, workspace, "quarantine_remote_sync")
