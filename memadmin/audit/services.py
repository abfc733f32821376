"""Appending to and verifying the audit hash chains.

Every service that changes something calls ``audit_event_create`` inside its own transaction, so
the event commits or rolls back with the change. Events carry ids, counts and hashes, never
memory content and never a clear data-subject id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from memadmin.audit.models import GLOBAL_CHAIN, AuditChainHead, AuditEvent
from memadmin.lib.keys import canonical_json

FORBIDDEN_DATA_KEYS = frozenset({"content", "text", "subject_id", "data_subject_id", "credential",
                                 "token", "password", "secret"})


@dataclasses.dataclass(frozen=True)
class Actor:
    """Who did something: a user, or a labelled non-human (agent token, admin credential)."""

    label: str
    user: Any = None

    @classmethod
    def of(cls, user: Any) -> Actor:
        return cls(label=user.get_username(), user=user)

    @classmethod
    def system(cls, what: str = "system") -> Actor:
        return cls(label=what)


def _event_body(event: AuditEvent) -> dict[str, Any]:
    return {
        "chain": event.chain,
        "seq": event.seq,
        "workspace": str(event.workspace_id) if event.workspace_id else None,
        "actor": event.actor_id,
        "actor_label": event.actor_label,
        "action": event.action,
        "target_type": event.target_type,
        "target_id": event.target_id,
        "data": event.data,
        "created_at": event.created_at.isoformat(),
        "prev_hash": event.prev_hash,
    }


def event_hash(event: AuditEvent) -> str:
    return hashlib.sha256(canonical_json(_event_body(event))).hexdigest()


def _check_data(data: dict[str, Any]) -> None:
    for key, value in data.items():
        if key in FORBIDDEN_DATA_KEYS:
            raise ValueError(f"audit data must not carry {key!r}")
        if isinstance(value, dict):
            _check_data(value)


def audit_event_create(
    *, workspace: Any | None, actor: Actor, action: str, target_type: str = "",
    target_id: object = "", data: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one event to the workspace's chain (or the global one), in the caller's
    transaction. The chain head is locked FOR UPDATE, so concurrent appends serialise."""
    payload = json.loads(canonical_json(data or {}))
    _check_data(payload)
    chain = str(workspace.pk) if workspace is not None else GLOBAL_CHAIN
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO audit_auditchainhead (chain, seq, hash) VALUES (%s, 0, %s) "
                "ON CONFLICT (chain) DO NOTHING",
                [chain, "0" * 64],
            )
        head = AuditChainHead.objects.select_for_update().get(chain=chain)
        event = AuditEvent(
            chain=chain,
            seq=head.seq + 1,
            workspace_id=workspace.pk if workspace is not None else None,
            actor_id=actor.user.pk if actor.user is not None else None,
            actor_label=actor.label[:200],
            action=action,
            target_type=target_type,
            target_id=str(target_id)[:1024],
            data=payload,
            created_at=timezone.now(),
            prev_hash=head.hash,
        )
        event.hash = event_hash(event)
        event.save(force_insert=True)
        head.seq, head.hash = event.seq, event.hash
        head.save(update_fields=["seq", "hash"])
    return event


@dataclasses.dataclass(frozen=True)
class ChainReport:
    chain: str
    checked: int
    broken_at: int | None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.broken_at is None


def verify_chain(chain: str) -> ChainReport:
    """Recompute every link of one chain; report the first sequence number that does not hold."""
    prev_hash = "0" * 64
    expected_seq = 1
    checked = 0
    events: Iterable[AuditEvent] = (
        AuditEvent.objects.filter(chain=chain).order_by("seq").iterator(chunk_size=2000)
    )
    for event in events:
        checked += 1
        if event.seq != expected_seq:
            return ChainReport(chain, checked, expected_seq, f"event {expected_seq} is missing")
        if event.prev_hash != prev_hash:
            return ChainReport(chain, checked, event.seq, "does not link to the previous event")
        if event_hash(event) != event.hash:
            return ChainReport(chain, checked, event.seq, "its contents were changed")
        prev_hash = event.hash
        expected_seq += 1
    head = AuditChainHead.objects.filter(chain=chain).first()
    if head is not None and (head.seq != expected_seq - 1 or head.hash != prev_hash):
        return ChainReport(chain, checked, expected_seq, "events after this point were removed")
    return ChainReport(chain, checked, None)
