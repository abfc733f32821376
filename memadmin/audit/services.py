"""Appending to and verifying the audit hash chains.

Every service that changes something calls ``audit_event_create`` inside its own transaction, so
the event commits or rolls back with the change. Events carry ids, counts and hashes, never
memory content and never a clear data-subject id.

Each event's hash is an HMAC-SHA256, under a key from ``MEMADMIN_AUDIT_KEYS`` (kept outside the
database), of the canonical JSON (sorted keys, no whitespace, UTF-8) of its fields and the
previous event's hash. The event records the key id, so keys rotate: new events use the first
key, older ones still verify while their key stays listed. Events written before the chain was
keyed (``key_id`` empty) keep their plain SHA-256 and verify as such; migration 0005 sealed each
such chain with a keyed ``audit.keyed`` event whose HMAC covers the last unkeyed hash, so the
unkeyed prefix cannot be rewritten without breaking that link. An unkeyed event after a keyed
one, or a chain that ends unkeyed, fails verification.

Verification (``verify_chain``) covers every event a workspace shows: the chain walked by
sequence number, the chain head, events that carry the workspace but sit on another chain (or
none), and a signed checkpoint (``memadmin.audit.anchors``) kept outside the database, which is
what catches a tail removed together with the head.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memadmin.audit.models import GLOBAL_CHAIN, AuditChainHead, AuditEvent
from memadmin.lib.keys import canonical_json
from memadmin.workspaces.models import Workspace

FORBIDDEN_DATA_KEYS = frozenset({"content", "text", "subject_id", "data_subject_id", "credential",
                                 "token", "password", "secret"})
GENESIS = "0" * 64


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


class UnknownAuditKey(LookupError):
    """An event or checkpoint names a key id that ``MEMADMIN_AUDIT_KEYS`` does not list."""


def audit_keys() -> dict[str, str]:
    keys: dict[str, str] = settings.MEMADMIN_AUDIT_KEYS
    return keys


def active_audit_key_id() -> str:
    return next(iter(audit_keys()))


def audit_mac(key_id: str, value: Any) -> str:
    """Hex HMAC-SHA256 of ``value``'s canonical JSON under audit key ``key_id``."""
    key = audit_keys().get(key_id)
    if key is None:
        raise UnknownAuditKey(key_id)
    return hmac.new(key.encode(), canonical_json(value), hashlib.sha256).hexdigest()


def _event_body(event: Any) -> dict[str, Any]:
    """The hashed fields. ``event`` is an AuditEvent (or a historical model of it)."""
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


def event_hash(event: Any) -> str:
    """The hash ``event`` must carry: keyed under its key id, or plain SHA-256 for an event
    written before the chain was keyed. ``UnknownAuditKey`` if its key is not configured."""
    body = _event_body(event)
    if not event.key_id:
        return hashlib.sha256(canonical_json(body)).hexdigest()
    return audit_mac(event.key_id, {**body, "key_id": event.key_id})


def _normalised(value: Any) -> Any:
    # jsonb gives an integral float back as an integer (1e16 -> 10000000000000000), which
    # would change the canonical JSON between writing and verifying: store it as one.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _normalised(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalised(item) for item in value]
    return value


def _check_data(data: dict[str, Any]) -> None:
    for key, value in data.items():
        if key in FORBIDDEN_DATA_KEYS:
            raise ValueError(f"audit data must not carry {key!r}")
        if isinstance(value, dict):
            _check_data(value)


def chain_of(workspace: Any | None) -> str:
    return str(workspace.pk) if workspace is not None else GLOBAL_CHAIN


def audit_event_create(
    *, workspace: Any | None, actor: Actor, action: str, target_type: str = "",
    target_id: object = "", data: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one event to the workspace's chain (or the global one), in the caller's
    transaction. The chain head is locked FOR UPDATE, so concurrent appends serialise."""
    payload = _normalised(json.loads(canonical_json(data or {})))
    _check_data(payload)
    chain = chain_of(workspace)
    # No savepoint of its own: an event that fails to append dooms the caller's transaction
    # (an audited action cannot commit without its event), and it saves two round trips.
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(_HEAD_LOCKED, [chain])
        head = cursor.fetchone()
        if head is None:  # the chain's first event: create its head, then lock it
            cursor.execute(
                "INSERT INTO audit_auditchainhead (chain, seq, hash) VALUES (%s, 0, %s) "
                "ON CONFLICT (chain) DO NOTHING",
                [chain, GENESIS],
            )
            cursor.execute(_HEAD_LOCKED, [chain])
            head = cursor.fetchone()
        seq, prev_hash = head
        event = AuditEvent(
            chain=chain,
            seq=seq + 1,
            workspace_id=workspace.pk if workspace is not None else None,
            actor_id=actor.user.pk if actor.user is not None else None,
            actor_label=actor.label[:200],
            action=action,
            target_type=target_type,
            target_id=str(target_id)[:1024],
            data=payload,
            created_at=timezone.now(),
            prev_hash=prev_hash,
            key_id=active_audit_key_id(),
        )
        event.hash = event_hash(event)
        # The event and the head's advance in one statement (the head stays locked until the
        # caller's transaction ends, so appends still serialise).
        fields = {f.name: f for f in AuditEvent._meta.concrete_fields}
        values = [fields[name].get_db_prep_save(getattr(event, fields[name].attname),
                                                connection) for name in _EVENT_COLUMNS]
        cursor.execute(_APPEND, [*values, event.seq, event.hash, chain])
        row = cursor.fetchone()
        if row is None or row[0] is None:  # pragma: no cover - the head row is locked above
            raise RuntimeError("the audit chain head vanished while locked")
        event.pk = row[0]
        event._state.adding = False
    return event


_HEAD_LOCKED = "SELECT seq, hash FROM audit_auditchainhead WHERE chain = %s FOR UPDATE"
_EVENT_COLUMNS = ("chain", "seq", "workspace", "actor", "actor_label", "action", "target_type",
                  "target_id", "data", "created_at", "prev_hash", "hash", "key_id")
_APPEND = (
    "WITH e AS (INSERT INTO audit_auditevent (chain, seq, workspace_id, actor_id, actor_label, "
    "action, target_type, target_id, data, created_at, prev_hash, hash, key_id) VALUES "
    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id) "
    "UPDATE audit_auditchainhead SET seq = %s, hash = %s WHERE chain = %s "
    "RETURNING (SELECT id FROM e)"
)


# --- verification -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ChainReport:
    chain: str
    checked: int
    broken_at: int | None
    problem: str = ""
    event_id: int | None = None

    @property
    def ok(self) -> bool:
        return self.broken_at is None


@dataclasses.dataclass
class WalkState:
    """How far a walk got: the last good event's seq and hash, how many were checked, whether
    a keyed event was seen, and the hash found at the anchored seq (if reached)."""

    seq: int = 0
    hash: str = GENESIS
    checked: int = 0
    keyed: bool = False
    last_keyed: bool = True

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> WalkState:
        return cls(**{f.name: raw[f.name] for f in dataclasses.fields(cls) if f.name in raw})


@dataclasses.dataclass(frozen=True)
class Problem:
    seq: int
    event_id: int | None
    text: str


def _short(digest: str) -> str:
    return f"{digest[:12]}…"


def chain_workspace_id(chain: str) -> str | None:
    """The workspace id every event of ``chain`` must carry (None for the global chain)."""
    return None if chain == GLOBAL_CHAIN else chain


def check_event(event: AuditEvent, state: WalkState, chain: str) -> Problem | None:
    """Check the next event of a walk; on success advance ``state`` and return None."""
    expected = state.seq + 1
    if event.seq != expected:
        return Problem(expected, None, f"event {expected} is missing (the next one present is "
                                       f"{event.seq}, id {event.id})")
    owner = str(event.workspace_id) if event.workspace_id else None
    if owner != chain_workspace_id(chain):
        return Problem(event.seq, event.id, "it is a foreign event: it names workspace "
                                            f"{owner or '(none)'}, not this chain's")
    if event.prev_hash != state.hash:
        return Problem(event.seq, event.id, "it does not link to the previous event (reordered "
                       f"or inserted): prev_hash {_short(event.prev_hash)} should be "
                       f"{_short(state.hash)}")
    if not event.key_id and state.keyed:
        return Problem(event.seq, event.id, "it is unkeyed, after keyed events")
    try:
        recomputed = event_hash(event)
    except UnknownAuditKey:
        return Problem(event.seq, event.id, f"it is keyed with key id {event.key_id!r}, which "
                                            "MEMADMIN_AUDIT_KEYS does not list")
    if not hmac.compare_digest(recomputed, event.hash):
        return Problem(event.seq, event.id, "its contents were changed: the stored hash "
                       f"{_short(event.hash)} does not match the recomputed "
                       f"{_short(recomputed)}")
    state.seq, state.hash = event.seq, event.hash
    state.checked += 1
    state.keyed = state.keyed or bool(event.key_id)
    state.last_keyed = bool(event.key_id)
    return None


def check_end(chain: str, state: WalkState, anchor: Any | None = None) -> Problem | None:
    """After the last event: the head, the last anchor (a ``Checkpoint``), events shown in
    the workspace but kept on another chain, and an unsealed unkeyed tail."""
    head = AuditChainHead.objects.filter(chain=chain).first()
    if head is not None and (head.seq != state.seq or head.hash != state.hash):
        return Problem(state.seq + 1, None, f"the chain head says {head.seq} events, but only "
                       f"{state.seq} are present: events after this point were removed")
    if anchor is not None:
        problem = check_anchor(chain, state, anchor)
        if problem is not None:
            return problem
    workspace_id = chain_workspace_id(chain)
    if workspace_id is not None:
        stray = (AuditEvent.objects.filter(workspace_id=workspace_id).exclude(chain=chain)
                 .order_by("id").values("id", "chain", "seq").first())
        if stray is not None:
            known = AuditChainHead.objects.filter(chain=stray["chain"]).exists()
            where = (f"on another chain ({stray['chain']}, #{stray['seq']})" if known
                     else f"on no chain ({stray['chain'] or 'empty'})")
            return Problem(stray["seq"], stray["id"], f"it is a foreign event: shown in this "
                           f"workspace but kept {where}")
    if state.checked and not state.last_keyed:
        return Problem(state.seq, None, "the chain ends with unkeyed events (no keyed event "
                                        "seals them)")
    return None


def check_anchor(chain: str, state: WalkState, anchor: Any) -> Problem | None:
    """Compare the walked chain with a checkpoint: it must still hold the anchored count of
    events, and the anchored event must still have the anchored hash."""
    if anchor.count > state.seq:
        return Problem(state.seq + 1, None, f"the checkpoint of {anchor.at} vouches for "
                       f"{anchor.count} events, but only {state.seq} are present: events after "
                       "this point were removed")
    if anchor.count == 0:
        return None
    at = AuditEvent.objects.filter(chain=chain, seq=anchor.count).values("id", "hash").first()
    if at is None or at["hash"] != anchor.head_hash:
        return Problem(anchor.count, at["id"] if at else None, "it differs from the checkpoint "
                       f"of {anchor.at}: the chain was rewritten up to here")
    return None


def _report(chain: str, state: WalkState, problem: Problem | None) -> ChainReport:
    if problem is None:
        return ChainReport(chain, state.checked, None)
    return ChainReport(chain, state.checked, problem.seq, problem.text, problem.event_id)


def verify_chain(chain: str, *, anchor: Any | None = None) -> ChainReport:
    """Recompute every link of one chain and check everything the workspace shows; report the
    first sequence number that does not hold."""
    state = WalkState()
    events: Iterable[AuditEvent] = (
        AuditEvent.objects.filter(chain=chain).order_by("seq").iterator(chunk_size=2000)
    )
    for event in events:
        problem = check_event(event, state, chain)
        if problem is not None:
            return _report(chain, state, problem)
    return _report(chain, state, check_end(chain, state, anchor))


def known_chains() -> list[str]:
    """Every chain a verification must walk: each workspace's (with or without a head), the
    global one, and any chain name found on events or heads."""
    chains = {str(pk) for pk in Workspace.objects.values_list("pk", flat=True)}
    chains.add(GLOBAL_CHAIN)
    chains.update(AuditChainHead.objects.values_list("chain", flat=True))
    # A loose index scan of (chain, seq): one probe per distinct chain, not a full scan.
    sql = """
        WITH RECURSIVE found(chain) AS (
            (SELECT chain FROM audit_auditevent ORDER BY chain LIMIT 1)
            UNION ALL
            SELECT (SELECT e.chain FROM audit_auditevent e WHERE e.chain > found.chain
                    ORDER BY e.chain LIMIT 1)
            FROM found WHERE found.chain IS NOT NULL
        )
        SELECT chain FROM found WHERE chain IS NOT NULL
    """
    with connection.cursor() as cursor:
        cursor.execute(sql)
        chains.update(row[0] for row in cursor.fetchall())
    return sorted(chains)
