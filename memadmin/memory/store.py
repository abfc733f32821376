"""The built-in provider: memory rows in memadmin's own PostgreSQL.

Writes run in the caller's transaction (a savepoint inside it), keep the previous revision,
maintain the per-namespace counters and refuse frozen targets and erased subjects. Every call is
bounded by its deadline: each statement gets the time left as its ``statement_timeout`` and
``lock_timeout``, and a call that finished after its deadline is rolled back as ``Timeout``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import hashlib
import json
import math
import re
import secrets
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import orjson
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import CharField, Exists, F, OuterRef, Q, QuerySet
from django.db.models.functions import Cast, Collate
from django.utils import timezone

from memadmin.events import services as events
from memadmin.gdpr.models import Tombstone
from memadmin.lib.bounded import (
    OutOfTime,
    bounded_enclosure,
    is_timeout,
    statements_within,
)
from memadmin.lib.keys import canonical_json, subject_hashes_all_keys
from memadmin.memory.models import (
    SEARCH_CONFIG,
    Freeze,
    MemoryItem,
    MemoryRevision,
    NamespaceCounter,
    OperationRecord,
    freeze_container_where,
)
from memadmin.memory.selectors import CappedCount, capped_count
from memadmin.privacy import screening as privacy
from memadmin.providers import contract as c
from memadmin.quarantine import screening
from memadmin.workspaces.models import Namespace

OPERATION_RETENTION = dt.timedelta(hours=24)
#: Recall: at most this many meaningful terms of a question; each term's newest matches per
#: namespace that are ranked; matches counted per term to weigh its rarity.
RECALL_TERMS_MAX = 16
TERM_CANDIDATES = 200
TERM_COUNT_CAP = 1000
#: Export: rows per transaction (a batch), and per round trip of its server-side cursor.
EXPORT_BATCH = 10_000
EXPORT_FETCH = 2_000
#: The largest cap a capped count takes.
COUNT_CAP_MAX = 1_000_000
#: Erasure by subject: items removed per statement (each batch its own transaction when the
#: caller has none).
ERASE_BATCH = 20_000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def sanitize_query(text: str | None) -> str:
    """Search text made safe for ``websearch_to_tsquery``: control characters dropped, lone
    surrogates replaced, cut to 1 KiB. The result may be empty."""
    if not text:
        return ""
    if not isinstance(text, str):
        raise c.InvalidRequest("search text must be a string")
    text = text.encode("utf-8", errors="replace").decode("utf-8")
    text = _CONTROL.sub(" ", text)
    return c.utf8_cut(text, c.MAX_QUERY_BYTES).strip()


def _query_terms(query: str) -> list[str]:
    return [t.lower() for t in re.findall(r"\w+", query) if t.lower() not in {"or", "and", "not"}]


def _question_terms(query: str) -> list[str]:
    """The meaningful terms of a question as tsquery literals: the search configuration's
    lexemes (stop words dropped, words stemmed), first ones first, at most RECALL_TERMS_MAX."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) "
            "ORDER BY positions[1] LIMIT %s", [SEARCH_CONFIG, query, RECALL_TERMS_MAX])
        lexemes = [row[0] for row in cursor.fetchall()]
    # Quoted, so no lexeme is read as tsquery syntax.
    return ["'" + x.replace("\\", "\\\\").replace("'", "''") + "'" for x in lexemes]


def _dict_rows(sql: str, params: list[Any], *, plain: bool = False) -> list[Any]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        if plain:
            return rows
        names = [col.name for col in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in rows]


def snippet_for(content: str, query: str) -> str:
    """A plain-text excerpt of at most 500 characters around the first query term found."""
    limit = c.SNIPPET_MAX_CHARS
    if len(content) <= limit:
        return content
    lowered = content.lower()
    positions = [p for p in (lowered.find(t) for t in _query_terms(query)) if p >= 0]
    start = max(0, min(positions) - limit // 4) if positions else 0
    return content[start:start + limit]


def _encode_cursor(item: MemoryItem, order: str = "updated") -> str:
    """The keyset position of ``item`` in ``order`` (a cursor is valid for that order only)."""
    if order == "key":
        data: dict[str, Any] = {"o": "key", "k": item.key, "i": str(item.id)}
    elif order == "size":
        data = {"o": "size", "b": item.bytes, "i": str(item.id)}
    else:
        data = {"u": item.updated_at.isoformat(), "i": str(item.id)}
    raw = json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str, order: str = "updated") -> tuple[Any, uuid.UUID]:
    """(sort value, item id) of a cursor made for ``order``; InvalidRequest otherwise."""
    c.check_id(cursor, field="cursor")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        if data.get("o", "updated") != order:
            raise ValueError("a cursor of another order")
        value: Any
        if order == "key":
            value = data["k"]
            if not isinstance(value, str):
                raise ValueError("key")
            c.check_id(value, field="cursor")
        elif order == "size":
            value = data["b"]
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError("bytes")
        else:
            value = dt.datetime.fromisoformat(data["u"])
            if value.tzinfo is None:
                raise ValueError("naive time")
        return value, uuid.UUID(data["i"])
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error,
            UnicodeEncodeError, c.InvalidRequest):
        raise c.InvalidRequest("malformed cursor") from None


def _key_prefix_range(prefix: str) -> Q:
    """``key`` starts with ``prefix``, written so the ``(namespace, key COLLATE "C")`` index
    answers it: a range on the code-point-ordered key (the next prefix is the last character
    plus one) and the exact test (which the range alone approximates)."""
    q = Q(key_c__startswith=prefix)
    if prefix:
        last = ord(prefix[-1]) + 1
        if 0xD800 <= last <= 0xDFFF:
            last = 0xE000  # PostgreSQL text holds no surrogates
        if last <= 0x10FFFF:
            q &= Q(key_c__gte=prefix, key_c__lt=prefix[:-1] + chr(last))
    return q


def _parse_item_id(item_id: str) -> uuid.UUID | None:
    c.check_id(item_id, field="item id")
    try:
        return uuid.UUID(item_id)
    except ValueError:
        return None






def _uuid_or_none(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def _check_filters(filters: c.ItemFilters) -> c.ItemFilters:
    if not isinstance(filters, c.ItemFilters):
        raise c.InvalidRequest("filters must be ItemFilters")
    return filters










def _to_item(row: MemoryItem, frozen: bool) -> c.Item:
    return c.Item(
        id=str(row.id), partition=row.namespace.partition_key, tier=row.tier, key=row.key,
        source=c.source_label(row.tier, row.key), content=row.content, bytes=row.bytes,
        revision=row.revision, data_subject_id=row.data_subject_id,
        quarantine=row.quarantine_state, frozen=frozen, created_at=row.created_at,
        updated_at=row.updated_at, expires_at=row.expires_at,
    )


#: The most entries one ``retain_many`` writes (a 64 KiB request holds fewer anyway).
BATCH_MAX_ITEMS = 1000
BATCH_KEY_PREFIX = re.compile(r"[A-Za-z0-9_-]{0,40}")
#: Notes are ``facts`` items whose key starts with this.
NOTE_PREFIX = "note-"
#: How many matching notes a refusal names.
NOTE_MATCHES_SHOWN = 10


@dataclasses.dataclass(frozen=True)
class BatchEntry:
    """One item of ``retain_many``: its content, data subject and key prefix (the key is the
    prefix and 16 random hex digits)."""

    content: str
    data_subject_id: str | None = None
    key_prefix: str = ""


@dataclasses.dataclass(frozen=True)
class NoteMatch:
    id: str
    key: str
    revision: int


@dataclasses.dataclass(frozen=True)
class Usage:
    items: int
    bytes: int
    quota_bytes: int | None


def _expiry_request(expires_at: Any) -> dict[str, Any]:
    """The expiry as part of a write's request (so a replay with another expiry mismatches)."""
    if expires_at is c.KEEP:
        return {}
    return {"expires": expires_at.isoformat() if expires_at is not None else None}


def _set_expiry(result: c.RetainResult, expires_at: Any) -> None:
    """Set (or clear) the item's own expiry in the write's transaction."""
    if expires_at is not c.KEEP:
        MemoryItem.objects.filter(pk=result.id).update(expires_at=expires_at)


def _per_namespace(rows: list[tuple[Any, ...]]) -> list[tuple[Any, int, int]]:
    """(namespace, items, bytes) of an erasure batch that answered its deleted rows
    (namespace id and bytes first)."""
    totals: dict[Any, list[int]] = {}
    for row in rows:
        total = totals.setdefault(row[0], [0, 0])
        total[0] += 1
        total[1] += int(row[1])
    return [(ns, n, size) for ns, (n, size) in totals.items()]


@dataclasses.dataclass(slots=True)
class _Fact:
    """A new ``facts`` row of ``retain_many``: what its events, review entry and answer need
    (no model instance per row; the row itself is written by ``_WRITE_FACTS``)."""

    id: uuid.UUID
    namespace_id: uuid.UUID
    key: str
    content: str
    bytes: int
    quarantine_state: str
    tier: str = "facts"
    revision: int = 1


#: The idempotency record of a write (``_remember``); answers its id, none when a live record
#: of the same operation is there (applied concurrently).
_REMEMBER = (
    "INSERT INTO memory_operationrecord (scope_key, operation_hash, request_hash, response, "
    "created_at, expires_at) VALUES (%(scope_key)s, %(op_hash)s, %(req_hash)s, %(response)s, "
    "%(now)s, %(expires)s) "
    "ON CONFLICT (scope_key, operation_hash) DO UPDATE SET "
    "request_hash = EXCLUDED.request_hash, response = EXCLUDED.response, "
    "created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at "
    "WHERE memory_operationrecord.expires_at <= EXCLUDED.created_at RETURNING id"
)

#: A whole batch in one statement: the new rows (one JSON parameter, so neither the statement
#: nor its parameters grow with the batch), the namespace counter and the operation record;
#: it answers whether the counter row and the record were written.
_WRITE_FACTS = (
    "WITH item AS (INSERT INTO memory_memoryitem (id, namespace_id, tier, key, "  # noqa: S608
    "content, bytes, revision, data_subject_id, quarantine_state, updated_by, created_at, "
    "updated_at, pii_types, pii_spans, pii_keys) "
    "SELECT r.id, %(namespace)s, 'facts', r.key, r.content, r.bytes, 1, r.subject, r.state, "
    "%(actor)s, %(now)s, %(now)s, r.types, r.spans, r.keys "
    "FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id uuid, key text, content text, "
    "bytes int, subject text, state text, types varchar(16)[], spans jsonb, "
    "keys varchar(80)[])), "
    "counter AS (UPDATE memory_namespacecounter SET items = items + %(items)s, "
    "bytes = bytes + %(bytes)s, version = version + 1 WHERE namespace_id = %(namespace)s "
    "RETURNING 1), "
    "operation AS (" + _REMEMBER + ") "
    "SELECT EXISTS (SELECT FROM counter), EXISTS (SELECT FROM operation)"
)

#: What a batch checks before it writes, in one statement: the live idempotency record of its
#: operation (request hash and answer) and the oldest freeze holding its namespace.
_BATCH_CHECKS = (
    "SELECT o.request_hash, o.response::text, f.id FROM (SELECT 1) AS one "
    "LEFT JOIN memory_operationrecord o ON o.scope_key = %(scope_key)s "
    "AND o.operation_hash = %(op_hash)s AND o.expires_at > %(now)s "
    "LEFT JOIN LATERAL (SELECT id FROM memory_freeze WHERE lifted_at IS NULL AND "
    "((level = 'namespace' AND namespace_id = %(namespace)s) OR "
    "(level = 'resource' AND resource_id = %(resource)s)) ORDER BY created_at LIMIT 1) f ON true"
)


def _written(item: MemoryItem | _Fact, verdict: Any) -> c.RetainResult:
    """The result of a write; ``verdict`` is the scanner's (None when the content is clean)."""
    return c.RetainResult(id=str(item.id), bytes=item.bytes, revision=item.revision,
                          quarantined=item.quarantine_state == "pending",
                          rules=tuple(verdict.rules) if verdict is not None else ())


class LocalProvider(c.Provider):
    kind = "local"

    @property
    def _provider_pk(self) -> uuid.UUID:
        """The provider's primary key, typed for ORM lookups (the contract carries a str)."""
        return uuid.UUID(self.settings.id)

    # -- plumbing ---------------------------------------------------------------------------

    @contextmanager
    def _bounded(self, deadline: float | c.Deadline, *,
                 read_only: bool = False) -> Iterator[c.Deadline]:
        """A savepoint in which every statement gets only the time left (statement and lock
        timeouts set before each, lookups included) and which is rolled back, as ``Timeout``,
        when the deadline passed before it could be released: a late write is never applied.
        A ``read_only`` call inside an enclosing bounded block (an endpoint request) takes no
        savepoint of its own: it has nothing to roll back, and should it fail the enclosing
        transaction can only roll back (two round trips saved)."""
        bound = c.Deadline.of(deadline)
        try:
            with statements_within(bound.remaining,
                                   savepoint=not (read_only and bounded_enclosure())):
                yield bound
        except OutOfTime:
            raise c.Timeout("the built-in store did not finish within the deadline") from None
        except DatabaseError as exc:
            if is_timeout(exc):
                raise c.Timeout("the built-in store did not answer within the deadline") from None
            if isinstance(exc, IntegrityError):
                raise
            raise c.Unavailable("the built-in store is unavailable") from exc

    def resolved(self, namespaces: Sequence[Namespace]) -> None:
        """Namespaces a caller (the endpoint) has just looked up for this request, with their
        resources: the calls on this instance take them instead of reading them again. Only
        this provider's are kept; a scope naming any other partition is still looked up."""
        self._known = {ns.partition_key: ns for ns in namespaces
                       if ns.resource.provider_id == self._provider_pk}

    def _namespaces(self, scope: c.Scope) -> dict[str, Namespace]:
        known: dict[str, Namespace] = getattr(self, "_known", {})
        if known and all(p in known for p in scope.partitions):
            return {p: known[p] for p in scope.partitions}
        found = {
            ns.partition_key: ns
            for ns in Namespace.objects.filter(
                partition_key__in=scope.partitions, resource__provider_id=self._provider_pk
            ).select_related("resource")
        }
        if len(found) != len(set(scope.partitions)):
            raise c.NotFound("unknown partition for this provider")
        return found

    def _frozen_namespaces(self, namespaces: Sequence[Namespace]) -> dict[uuid.UUID, Freeze]:
        """Namespace id -> the freeze (on it or its resource) that holds it, for frozen ones."""
        ns_ids = [ns.id for ns in namespaces]
        res_ids = {ns.resource_id for ns in namespaces}
        rows = Freeze.objects.filter(
            Q(level="namespace", namespace_id__in=ns_ids) | Q(level="resource",
                                                             resource_id__in=res_ids),
            lifted_at__isnull=True,
        ).order_by("created_at")
        held: dict[uuid.UUID, Freeze] = {}
        for freeze in rows:
            for ns in namespaces:
                if ns.id == freeze.namespace_id or (
                    freeze.level == "resource" and ns.resource_id == freeze.resource_id
                ):
                    held.setdefault(ns.id, freeze)
        return held

    def _item_freeze(self, item_id: uuid.UUID) -> Freeze | None:
        return Freeze.objects.filter(level="item", provider_id=self._provider_pk,
                                     item_ref=str(item_id), lifted_at__isnull=True).first()

    @staticmethod
    def _frozen_error(freeze: Freeze) -> c.Frozen:
        what = "legal hold" if freeze.kind == "legal_hold" else "freeze"
        return c.Frozen(
            f"the target is under a {what}",
            {"kind": freeze.kind, "level": freeze.level, "by": freeze.created_by_label,
             "at": freeze.created_at.isoformat(), "reason": freeze.reason},
        )

    def _item_freeze_exists(self) -> Exists:
        return Exists(Freeze.objects.filter(
            level="item", provider_id=self._provider_pk, lifted_at__isnull=True,
            item_ref=Cast(OuterRef("id"), CharField()),
        ))

    def _check_tombstone(self, namespace: Namespace, subject: str | None) -> None:
        if subject is None:
            return
        workspace_id = namespace.resource.workspace_id
        hashes = subject_hashes_all_keys(workspace_id, subject)
        query = Q()
        for kid, digest in hashes:
            query |= Q(key_id=kid, subject_hash=digest)
        if Tombstone.objects.filter(query, workspace_id=workspace_id,
                                    lifted_at__isnull=True).exists():
            raise c.ErasedSubject("this data subject was erased; writes about them are refused")

    def _bump(self, namespace_id: uuid.UUID, items: int, size: int) -> None:
        # UPDATE first: an INSERT ... ON CONFLICT would check the (negative) delta row against
        # the non-negative constraint before noticing the conflict.
        update = ("UPDATE memory_namespacecounter SET items = items + %s, bytes = bytes + %s, "
                  "version = version + 1 WHERE namespace_id = %s")
        with connection.cursor() as cursor:
            cursor.execute(update, [items, size, namespace_id])
            if cursor.rowcount == 0:
                cursor.execute(
                    "INSERT INTO memory_namespacecounter (namespace_id, items, bytes, version) "
                    "VALUES (%s, 0, 0, 0) ON CONFLICT (namespace_id) DO NOTHING", [namespace_id]
                )
                cursor.execute(update, [items, size, namespace_id])

    # -- idempotency ------------------------------------------------------------------------

    @staticmethod
    def _scope_key(scope: c.Scope) -> str:
        if len(scope.partitions) == 1:
            return scope.partitions[0]
        joined = "\x1f".join(sorted(set(scope.partitions)))
        return "scope:" + hashlib.sha256(joined.encode()).hexdigest()

    def _replay(self, scope: c.Scope, operation_id: str, request: dict[str, Any]
                ) -> tuple[str, str, dict[str, Any] | None]:
        op_hash = hashlib.sha256(operation_id.encode()).hexdigest()
        req_hash = hashlib.sha256(canonical_json(request)).hexdigest()
        record = OperationRecord.objects.filter(
            scope_key=self._scope_key(scope), operation_hash=op_hash,
            expires_at__gt=timezone.now(),
        ).first()
        if record is None:
            return op_hash, req_hash, None
        if record.request_hash != req_hash:
            raise c.IdempotencyMismatch("this operationId was used with another request")
        return op_hash, req_hash, record.response

    def _remember(self, scope: c.Scope, op_hash: str, req_hash: str,
                  response: dict[str, Any]) -> None:
        with connection.cursor() as cursor:
            cursor.execute(_REMEMBER, self._record_params(scope, op_hash, req_hash, response,
                                                          timezone.now()))
            if cursor.fetchone() is None:
                raise c.Conflict("the same operationId is being applied concurrently")

    def _record_params(self, scope: c.Scope, op_hash: str, req_hash: str,
                       response: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
        return {"scope_key": self._scope_key(scope), "op_hash": op_hash, "req_hash": req_hash,
                "response": json.dumps(response), "now": now,
                "expires": now + OPERATION_RETENTION}

    # -- health and capabilities ------------------------------------------------------------

    def health(self, *, deadline: float) -> c.HealthStatus:
        started = time.monotonic()
        try:
            with self._bounded(deadline), connection.cursor() as cursor:
                cursor.execute("SELECT 1 FROM memory_namespacecounter LIMIT 1")
                cursor.fetchall()
            ok, message = True, ""
        except c.Timeout:
            ok, message = False, "health check timeout"
        except Exception:  # noqa: BLE001 - health never raises; the message is the triage
            ok, message = False, "database unavailable"
        latency = (time.monotonic() - started) * 1000
        if ok and latency > deadline * 1000:
            ok, message = False, "health check timeout"
        return c.HealthStatus(ok=ok, message=message, checked_at=timezone.now(),
                              latency_ms=round(latency, 2))

    def capabilities(self, *, deadline: float) -> frozenset[str]:
        return c.OPERATIONS | {c.IDEMPOTENT_WRITES}

    # -- writes -----------------------------------------------------------------------------

    def retain(
        self, tier: str, key: str, content: str, mode: str, *, data_subject_id: str | None = None,
        operation_id: str, actor: str = "system", scope: c.Scope, deadline: float,
        expires_at: Any = c.KEEP,
    ) -> c.RetainResult:
        partition = scope.single()
        c.check_mode(mode)
        expires_at = c.check_expiry(expires_at)
        c.check_operation_id(operation_id)
        c.check_text(content, field="content")
        subject = c.check_subject(data_subject_id)
        key = key if tier == "facts" and not key else c.normalise_key(tier, key)
        request = {"op": "retain", "tier": tier, "key": key, "content": content, "mode": mode,
                   "subject": subject, **_expiry_request(expires_at)}
        with self._bounded(deadline):
            namespace = self._namespaces(scope)[partition]
            op_hash, req_hash, replay = self._replay(scope, operation_id, request)
            if replay is not None:
                return c.RetainResult.from_dict(replay)
            key = c.normalise_key(tier, key)
            self._check_tombstone(namespace, subject)
            freeze = self._frozen_namespaces([namespace]).get(namespace.id)
            if freeze is not None:
                raise self._frozen_error(freeze)
            item = (MemoryItem.objects.select_for_update()
                    .filter(namespace=namespace, tier=tier, key=key).first())
            if item is None:
                try:
                    with transaction.atomic():
                        result = self._create(namespace, tier, key, content, subject, actor)
                except IntegrityError:
                    # Created concurrently: continue as an update of the row that won.
                    item = MemoryItem.objects.select_for_update().filter(
                        namespace=namespace, tier=tier, key=key).first()
                    if item is None:  # not a lost race but a broken rule: not the caller's
                        raise
            if item is not None:
                result = self._change(namespace, item, content, mode, subject, actor, None)
            _set_expiry(result, expires_at)
            self._remember(scope, op_hash, req_hash, result.to_dict())
        return result

    def _create(self, namespace: Namespace, tier: str, key: str, content: str,
                subject: str | None, actor: str) -> c.RetainResult:
        pii = privacy.screen_write(content, namespace.resource)
        content = pii.content
        size = len(content.encode("utf-8"))
        self._check_size(namespace, size)
        now = timezone.now()
        verdict = screening.assess(content, namespace.resource.workspace_id)
        item = MemoryItem.objects.create(
            namespace=namespace, tier=tier, key=key, content=content, bytes=size, revision=1,
            data_subject_id=subject, updated_by=actor[:200], created_at=now, updated_at=now,
            quarantine_state=screening.state_after(verdict, "clear"),
            pii_types=pii.types, pii_spans=pii.spans, pii_keys=pii.keys,
        )
        events.item_written(item, created=True, actor=actor[:200])
        self._screened(item, verdict, "clear", namespace)
        self._bump(namespace.id, 1, size)
        return _written(item, verdict)

    def _screened(self, item: MemoryItem, verdict: Any, previous: str,
                  namespace: Namespace) -> None:
        """Review entries for a write the scanner flagged (or that replaced flagged content)."""
        if verdict is not None or previous == "pending":
            screening.record(item=item, verdict=verdict, previous=previous,
                             provider_id=self.settings.id,
                             workspace_id=namespace.resource.workspace_id,
                             label=c.source_label(item.tier, item.key))

    @staticmethod
    def _check_size(namespace: Namespace, size: int) -> None:
        limit = namespace.resource.item_max_bytes
        if size > limit:
            raise c.TooLarge(f"the item would be {size} bytes; this resource allows {limit}",
                             {"bytes": size, "limit": limit})

    def _change(self, namespace: Namespace, item: MemoryItem, content: str, mode: str,
                subject: str | None, actor: str, expected_revision: int | None) -> c.RetainResult:
        if expected_revision is not None and item.revision != expected_revision:
            raise c.Conflict(
                f"the item is at revision {item.revision}, not {expected_revision}",
                {"revision": item.revision},
            )
        freeze = self._item_freeze(item.id)
        if freeze is not None:
            raise self._frozen_error(freeze)
        new_content = c.joined(item.content, content, mode)
        c.check_text(new_content, field="content")
        pii = privacy.screen_write(new_content, namespace.resource)
        new_content = pii.content
        size = len(new_content.encode("utf-8"))
        self._check_size(namespace, size)
        MemoryRevision.objects.create(
            item=item, revision=item.revision, content=item.content, bytes=item.bytes,
            actor=item.updated_by, created_at=item.updated_at,
            quarantine_state=item.quarantine_state,
        )
        delta = size - item.bytes
        item.content, item.bytes, item.revision = new_content, size, item.revision + 1
        item.updated_by, item.updated_at = actor[:200], timezone.now()
        item.pii_types, item.pii_spans, item.pii_keys = pii.types, pii.spans, pii.keys
        fields = ["content", "bytes", "revision", "updated_by", "updated_at", "pii_types",
                  "pii_spans", "pii_keys"]
        if subject is not None and subject != item.data_subject_id:
            item.data_subject_id = subject
            fields.append("data_subject_id")
        previous = item.quarantine_state
        verdict = screening.assess(new_content, namespace.resource.workspace_id)
        item.quarantine_state = screening.state_after(verdict, previous)
        if item.quarantine_state != previous:
            fields.append("quarantine_state")
        item.save(update_fields=fields)
        events.item_written(item, created=False, actor=actor[:200])
        self._screened(item, verdict, previous, namespace)
        self._bump(namespace.id, 0, delta)
        return _written(item, verdict)

    def _locked_item(self, item_id: str, scope: c.Scope) -> tuple[Namespace, MemoryItem]:
        namespaces = self._namespaces(scope)
        pk = _parse_item_id(item_id)
        item = (MemoryItem.objects.select_for_update().select_related("namespace__resource")
                .filter(pk=pk, namespace__in=list(namespaces.values())).first()) if pk else None
        if item is None:
            raise c.NotFound("no such item in this scope")
        return item.namespace, item

    def update_item(
        self, item_id: str, content: str, mode: str, *, expected_revision: int,
        operation_id: str, actor: str = "system", scope: c.Scope, deadline: float,
        expires_at: Any = c.KEEP,
    ) -> c.RetainResult:
        c.check_mode(mode)
        c.check_operation_id(operation_id)
        c.check_text(content, field="content")
        expires_at = c.check_expiry(expires_at)
        if not isinstance(expected_revision, int) or isinstance(expected_revision, bool):
            raise c.InvalidRequest("expected_revision must be a whole number")
        request = {"op": "update", "id": item_id, "content": content, "mode": mode,
                   "expected": expected_revision, **_expiry_request(expires_at)}
        with self._bounded(deadline):
            op_hash, req_hash, replay = self._replay(scope, operation_id, request)
            if replay is not None:
                return c.RetainResult.from_dict(replay)
            namespace, item = self._locked_item(item_id, scope)
            freeze = self._frozen_namespaces([namespace]).get(namespace.id)
            if freeze is not None:
                raise self._frozen_error(freeze)
            result = self._change(namespace, item, content, mode, None, actor, expected_revision)
            _set_expiry(result, expires_at)
            self._remember(scope, op_hash, req_hash, result.to_dict())
        return result

    def _delete_rows(self, ids: Sequence[uuid.UUID]) -> int:
        """Delete items (with their revisions and quarantine entries) and fix the counters."""
        if not ids:
            return 0
        id_list = list(ids)
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM memory_memoryrevision WHERE item_id = ANY(%s)", [id_list])
            cursor.execute("DELETE FROM quarantine_quarantineentry WHERE item_id = ANY(%s)",
                           [id_list])
            cursor.execute("DELETE FROM memory_memoryitem WHERE id = ANY(%s) "
                           "RETURNING namespace_id, bytes", [id_list])
            rows = cursor.fetchall()
        per_namespace: dict[uuid.UUID, list[int]] = defaultdict(lambda: [0, 0])
        for namespace_id, size in rows:
            per_namespace[namespace_id][0] -= 1
            per_namespace[namespace_id][1] -= size
        for namespace_id, (items, size) in per_namespace.items():
            self._bump(namespace_id, items, size)
        return len(rows)

    def _split_held(self, qs: QuerySet[MemoryItem], namespaces: Sequence[Namespace],
                    override_hold: bool = False, limit: int | None = None
                    ) -> tuple[list[uuid.UUID], int]:
        """(ids to delete, number held by a freeze) among ``qs``."""
        if override_hold:
            free = qs.order_by("-updated_at", "-id").values_list("id", flat=True)
            return list(free[:limit] if limit else free), 0
        frozen_ns = list(self._frozen_namespaces(namespaces))
        qs = qs.annotate(item_frozen=self._item_freeze_exists())
        held_q = Q(item_frozen=True) | Q(namespace_id__in=frozen_ns)
        held = qs.filter(held_q).count()
        free = qs.exclude(held_q).order_by("-updated_at", "-id").values_list("id", flat=True)
        return list(free[:limit] if limit else free), held

    def delete_items(
        self, *, ids: Sequence[str] | None = None, filters: c.ItemFilters | None = None,
        exclude_ids: Sequence[str] = (), limit: int | None = None, operation_id: str,
        actor: str = "system", scope: c.Scope, deadline: float,
    ) -> c.DeleteResult:
        if (ids is None) == (filters is None):
            raise c.InvalidRequest("delete needs exactly one of ids or filters")
        c.check_operation_id(operation_id)
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise c.InvalidRequest("limit must be a positive whole number")
        if filters is not None:
            _check_filters(filters)
        excluded = {pk for pk in (_parse_item_id(x) for x in exclude_ids) if pk}
        request = {"op": "delete", "ids": list(ids) if ids is not None else None,
                   "filters": filters.__dict__ if filters is not None else None,
                   "exclude": sorted(str(x) for x in excluded), "limit": limit}
        with self._bounded(deadline):
            op_hash, req_hash, replay = self._replay(scope, operation_id, request)
            if replay is not None:
                return c.DeleteResult(**replay)
            namespaces = list(self._namespaces(scope).values())
            qs = MemoryItem.objects.filter(namespace__in=namespaces)
            if ids is not None:
                wanted = [pk for pk in (_parse_item_id(x) for x in ids) if pk]
                qs = qs.filter(pk__in=wanted)
            else:
                qs = self._apply_filters(qs, filters or c.ItemFilters(), namespaces)
            if excluded:
                qs = qs.exclude(pk__in=excluded)
            free, held = self._split_held(qs, namespaces, limit=limit)
            events.items_deleted(free, namespaces=namespaces, actor=actor[:200])
            result = c.DeleteResult(removed=self._delete_rows(free), held=held)
            self._remember(scope, op_hash, req_hash, result.__dict__)
        return result

    def forget(
        self, *, item_id: str | None = None, data_subject_id: str | None = None,
        override_hold: bool = False, operation_id: str, actor: str = "system",
        scope: c.Scope, deadline: float,
    ) -> c.ForgetResult:
        if (item_id is None) == (data_subject_id is None):
            raise c.InvalidRequest("forget needs exactly one of id or data subject id")
        c.check_operation_id(operation_id)
        request = {"op": "forget", "id": item_id, "subject": data_subject_id,
                   "override": bool(override_hold)}
        subject = c.check_subject(data_subject_id)
        if subject is not None:
            return self._forget_subject(subject, override_hold, operation_id, request, scope,
                                        deadline, actor)
        with self._bounded(deadline):
            op_hash, req_hash, replay = self._replay(scope, operation_id, request)
            if replay is not None:
                return c.ForgetResult(**replay)
            namespaces = list(self._namespaces(scope).values())
            pk = _parse_item_id(item_id or "")
            qs = MemoryItem.objects.filter(namespace__in=namespaces)
            qs = qs.filter(pk=pk) if pk else qs.none()
            free, held = self._split_held(qs, namespaces, override_hold=override_hold)
            events.items_deleted(free, namespaces=namespaces, actor=actor[:200])
            result = c.ForgetResult(removed=self._delete_rows(free), held=held)
            self._remember(scope, op_hash, req_hash, result.__dict__)
        return result

    # One statement per batch: pick up to ERASE_BATCH of the subject's items that no freeze
    # holds (rows another transaction has locked are skipped, and taken by a later batch), and
    # delete them with their revisions and quarantine entries, answering what went per
    # namespace. Nothing but the subject, the namespaces and the freezes travels from Python.
    # The victims' ids are one array the deletes look up by index: joined to the CTE instead,
    # the planner hashed it against a sequential scan of every item (and JIT-compiled that),
    # once per batch.
    _ERASE_BATCH_SQL = """
        WITH victims AS (
            SELECT m.id FROM memory_memoryitem m
            WHERE m.namespace_id = ANY(%(namespaces)s) AND m.data_subject_id = %(subject)s
              AND (%(override)s OR NOT EXISTS (
                  SELECT 1 FROM memory_freeze f WHERE f.level = 'item'
                  AND f.provider_id = %(provider)s AND f.lifted_at IS NULL
                  AND f.item_ref = m.id::text))
            LIMIT %(batch)s FOR UPDATE OF m {skip}
        ), v AS (
            SELECT ARRAY(SELECT id FROM victims) AS ids
        ), revisions AS (
            DELETE FROM memory_memoryrevision r USING v WHERE r.item_id = ANY(v.ids)
        ), entries AS (
            DELETE FROM quarantine_quarantineentry q USING v WHERE q.item_id = ANY(v.ids)
        ), gone AS (
            DELETE FROM memory_memoryitem m USING v WHERE m.id = ANY(v.ids)
            RETURNING m.namespace_id, m.bytes{returning}
        )
        {select}
    """
    _ERASE_COUNTS = {"returning": "",
                     "select": "SELECT namespace_id, count(*), sum(bytes) FROM gone "
                               "GROUP BY namespace_id"}
    # When a webhook subscribes to item.deleted, each batch also answers what it deleted (ids
    # and hashes, never the content) for the events queued in its transaction.
    _ERASE_ROWS = {"returning": ", m.id, m.tier, m.revision, "
                                "encode(sha256(convert_to(m.content, 'UTF8')), 'hex') AS digest",
                   "select": "SELECT namespace_id, bytes, id, tier, revision, digest FROM gone"}
    # The counters move in a second, short statement of the same transaction: a writer of the
    # namespace waits on its counter row only from here to the commit, which has no foreign-key
    # checks left (they ran at the end of the delete, constraints being immediate).
    _ERASE_COUNTERS_SQL = """
        UPDATE memory_namespacecounter c SET items = c.items - p.items,
            bytes = c.bytes - p.bytes, version = c.version + 1
        FROM unnest(%s::uuid[], %s::bigint[], %s::bigint[]) AS p(namespace_id, items, bytes)
        WHERE c.namespace_id = p.namespace_id
    """

    def _forget_subject(self, subject: str, override_hold: bool, operation_id: str,
                        request: dict[str, Any], scope: c.Scope,
                        deadline: float, actor: str = "system") -> c.ForgetResult:
        """Erase a subject's items in batches that run inside PostgreSQL.

        1. Replay a finished call; a call cut short (worker lost, deadline) left its running
           total in its operation record, and carries on from it.
        2. Frozen namespaces are left out of the batches altogether (unless
           ``override_hold``); every other namespace's counter row is made to exist.
        3. Batches of ERASE_BATCH (``_erase_batch``), skipping locked rows, until one comes
           back short; then, if an unheld row of the subject is left (a writer held it), the
           same without skipping, so it is waited for (within the deadline) rather than left
           behind. Each batch moves the counters and saves the running total with it, in its
           own transaction unless the caller has one, so no transaction holds a namespace's
           counter for longer than a batch's last two statements and its commit.
        4. Count what freezes hold (only those rows are left by now), and store the final
           answer under the operation id, in a transaction that commits durably.
        """
        bound = c.Deadline.of(deadline)
        with self._bounded(bound):
            op_hash, req_hash, replay = self._replay(scope, operation_id, request)
            if replay is not None and not replay.get("partial"):
                return c.ForgetResult(removed=replay["removed"], held=replay["held"])
            namespaces = list(self._namespaces(scope).values())
            frozen_ns = set() if override_hold else set(self._frozen_namespaces(namespaces))
            free_ns = [ns.id for ns in namespaces if ns.id not in frozen_ns]
            with connection.cursor() as cursor:  # every counter row exists before a batch
                cursor.execute(
                    "INSERT INTO memory_namespacecounter (namespace_id, items, bytes, version) "
                    "SELECT unnest(%s::uuid[]), 0, 0, 0 ON CONFLICT (namespace_id) DO NOTHING",
                    [free_ns])
        removed = int(replay["removed"]) if replay else 0
        params: dict[str, Any] = {"namespaces": free_ns, "subject": subject,
                                  "override": bool(override_hold),
                                  "provider": self._provider_pk, "batch": ERASE_BATCH}
        announce = events.wants_deletions(namespaces)
        shape = self._ERASE_ROWS if announce else self._ERASE_COUNTS
        progress = {"scope": scope, "op_hash": op_hash, "req_hash": req_hash,
                    "wal_compression": self._erase_wal_compression(bound)}
        for skip in ("SKIP LOCKED", ""):
            if skip == "" and not (free_ns and self._unheld_left(params, bound)):
                break  # nothing was skipped: no need to wait for anyone
            statement = self._ERASE_BATCH_SQL.format(skip=skip, **shape)
            gone = ERASE_BATCH
            while free_ns and gone == ERASE_BATCH:
                gone = self._erase_batch(statement, params, bound, namespaces, announce, actor,
                                         removed, progress)
                removed += gone
        with self._bounded(bound):
            qs = MemoryItem.objects.filter(namespace__in=namespaces, data_subject_id=subject)
            held = 0 if override_hold else qs.annotate(
                item_frozen=self._item_freeze_exists()).filter(
                Q(item_frozen=True) | Q(namespace_id__in=frozen_ns)).count()
            result = c.ForgetResult(removed=removed, held=held)
            self._remember_progress(scope, op_hash, req_hash, result.__dict__)
        return result

    def _erase_wal_compression(self, bound: c.Deadline) -> str | None:
        """The ``wal_compression`` an erasure's batches turn on: lz4 (else zstd) when the
        server has it off and the role may set it (a superuser, or ``GRANT SET ON PARAMETER
        wal_compression``); None (the server's setting stays) otherwise.

        After a checkpoint, the first change to a page writes an image of the whole page to
        the WAL: a batch writes one per page it touches (its row locks do), nearly all of its
        WAL, ~75 MB for 20,000 items spread over a million. Every other writer of the server
        waits behind that WAL at the disk's pace -- its records find the WAL buffers full,
        its commit flushes the batch's WAL first -- for 100-400 ms at a time (issue #18).
        Compressed, a third less to write (lz4; zstd halves it at three times the CPU)."""
        with self._bounded(bound), connection.cursor() as cursor:
            cursor.execute(
                "SELECT (SELECT m FROM pg_settings s, unnest(s.enumvals) AS m "
                "WHERE s.name = 'wal_compression' AND s.setting = 'off' "
                "AND has_parameter_privilege('wal_compression', 'SET') "
                "AND m IN ('lz4', 'zstd') ORDER BY m LIMIT 1)")
            method = cursor.fetchone()[0]
            return str(method) if method else None

    def _unheld_left(self, params: dict[str, Any], bound: c.Deadline) -> bool:
        """Whether a row of the subject that no freeze holds is still there (a writer had it
        locked when its batch passed)."""
        with self._bounded(bound), connection.cursor() as cursor:
            cursor.execute(
                "SELECT EXISTS (SELECT 1 FROM memory_memoryitem m "
                "WHERE m.namespace_id = ANY(%(namespaces)s) AND m.data_subject_id = %(subject)s"
                " AND (%(override)s OR NOT EXISTS (SELECT 1 FROM memory_freeze f "
                "WHERE f.level = 'item' AND f.provider_id = %(provider)s "
                "AND f.lifted_at IS NULL AND f.item_ref = m.id::text)))", params)
            return bool(cursor.fetchone()[0])

    def _erase_batch(self, statement: str, params: dict[str, Any], bound: c.Deadline,
                     namespaces: list[Namespace], announce: bool, actor: str, removed: int,
                     progress: dict[str, Any]) -> int:
        """One batch and its counters; returns how many items went. In a transaction of its
        own (the caller has none) the foreign keys are checked by the delete itself, and the
        commit does not wait for the WAL to reach the disk: the writers waiting on the
        namespace's counter row are let go at once, and the durable commit of the final
        answer (``_forget_subject``) flushes every batch before it. Its WAL is compressed
        when it may be (``_erase_wal_compression``)."""
        own_transaction = not connection.in_atomic_block
        with self._bounded(bound), connection.cursor() as cursor:
            if own_transaction:
                # two statements, each sent with its bounds in one pipelined round trip (a
                # string of both would take a round trip of its own: lib/bounded.py)
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                local = {"synchronous_commit": "off"}
                if progress["wal_compression"]:  # see _erase_wal_compression
                    local["wal_compression"] = progress["wal_compression"]
                cursor.execute("SELECT " + ", ".join(["set_config(%s, %s, true)"] * len(local)),
                               [value for pair in local.items() for value in pair])
            cursor.execute(statement, params)
            per_namespace = cursor.fetchall()
            if announce:
                events.items_erased(per_namespace, namespaces=namespaces, actor=actor[:200])
                per_namespace = _per_namespace(per_namespace)
            gone = sum(int(n) for _, n, _ in per_namespace)
            if not gone:
                return 0
            self._remember_progress(progress["scope"], progress["op_hash"],
                                    progress["req_hash"],
                                    {"removed": removed + gone, "held": 0, "partial": True})
            # Last: the counter row is locked from here to the commit only.
            cursor.execute(self._ERASE_COUNTERS_SQL, [
                [ns for ns, _, _ in per_namespace],
                [int(n) for _, n, _ in per_namespace],
                [int(b) for _, _, b in per_namespace]])
        return gone

    def _remember_progress(self, scope: c.Scope, op_hash: str, req_hash: str,
                           response: dict[str, Any]) -> None:
        """Store (or move on) the answer of an operation applied in several transactions."""
        now = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO memory_operationrecord (scope_key, operation_hash, request_hash, "
                "response, created_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (scope_key, operation_hash) DO UPDATE SET "
                "request_hash = EXCLUDED.request_hash, response = EXCLUDED.response, "
                "expires_at = EXCLUDED.expires_at",
                [self._scope_key(scope), op_hash, req_hash, json.dumps(response), now,
                 now + OPERATION_RETENTION],
            )

    # -- freezes and quarantine -------------------------------------------------------------

    def _freeze_row_filter(self, target: c.FreezeTarget, scope: c.Scope) -> dict[str, Any]:
        namespaces = self._namespaces(scope)
        try:
            where = freeze_container_where(target.level, target.partition, target.resource,
                                           namespaces)
        except LookupError as exc:
            raise c.NotFound(str(exc)) from None
        if where is not None:
            return where
        pk = _parse_item_id(target.item_id or "")
        item = (MemoryItem.objects.select_related("namespace__resource")
                .filter(pk=pk, namespace__in=list(namespaces.values())).first()) if pk else None
        if item is None:
            raise c.NotFound("no such item in this scope")
        return {"level": "item", "provider_id": self.settings.id, "item_ref": str(item.id),
                "workspace_id": item.namespace.resource.workspace_id}

    def freeze(
        self, target: c.FreezeTarget, *, kind: str, reason: str, actor: str = "system",
        scope: c.Scope, deadline: float,
    ) -> None:
        if kind not in c.FREEZE_KINDS:
            raise c.InvalidRequest("kind must be freeze or legal_hold")
        c.check_text(reason, field="reason", max_bytes=4000)
        if not reason.strip():
            raise c.InvalidRequest("a reason is required")
        with self._bounded(deadline):
            where = self._freeze_row_filter(target, scope)
            if Freeze.objects.filter(**where, kind=kind, lifted_at__isnull=True).exists():
                return
            try:
                with transaction.atomic():
                    Freeze.objects.create(**where, kind=kind, reason=reason[:1000],
                                          created_by_label=actor[:200])
            except IntegrityError:
                return  # frozen concurrently: the same outcome

    def lift_freeze(
        self, target: c.FreezeTarget, *, kind: str, actor: str = "system", scope: c.Scope,
        deadline: float,
    ) -> None:
        if kind not in c.FREEZE_KINDS:
            raise c.InvalidRequest("kind must be freeze or legal_hold")
        with self._bounded(deadline):
            where = self._freeze_row_filter(target, scope)
            Freeze.objects.filter(**where, kind=kind, lifted_at__isnull=True).update(
                lifted_at=timezone.now(), lifted_by_label=actor[:200]
            )

    def set_quarantine(self, item_id: str, state: str, *, scope: c.Scope,
                       deadline: float) -> None:
        if state not in c.QUARANTINE_STATES:
            raise c.InvalidRequest(f"quarantine state must be one of {c.QUARANTINE_STATES}")
        with self._bounded(deadline):
            namespace, item = self._locked_item(item_id, scope)
            if item.quarantine_state != state:
                screening.state_set(item=item, state=state, provider_id=self.settings.id,
                                    workspace_id=namespace.resource.workspace_id,
                                    label=c.source_label(item.tier, item.key))
                self._bump(namespace.id, 0, 0)

    # -- upkeep (not in the contract: only the built-in store has rows to keep) ---------------

    def counter_set(self, namespace_id: uuid.UUID, *, items: int, size: int) -> dict[str, int]:
        """Set a namespace's counter to a recount's totals (moving its version, as every write
        does); returns what it said before. Runs in the caller's transaction."""
        with transaction.atomic():
            counter, _ = NamespaceCounter.objects.select_for_update().get_or_create(
                namespace_id=namespace_id)
            before = {"items": counter.items, "bytes": counter.bytes}
            counter.items, counter.bytes = items, size
            counter.version += 1
            counter.save(update_fields=["items", "bytes", "version"])
        return before

    def quarantine_state_rescan(self, item: MemoryItem, state: str) -> None:
        """A rescan's new verdict on ``item`` (locked by the caller): its quarantine state, and
        the namespace's version moves so recall's cursor sees the change."""
        if state not in c.QUARANTINE_STATES:
            raise c.InvalidRequest(f"quarantine state must be one of {c.QUARANTINE_STATES}")
        item.quarantine_state = state
        item.save(update_fields=["quarantine_state"])
        self._bump(item.namespace_id, 0, 0)

    # -- reads ------------------------------------------------------------------------------

    def _apply_filters(self, qs: QuerySet[MemoryItem], filters: c.ItemFilters,
                       namespaces: Sequence[Namespace]) -> QuerySet[MemoryItem]:
        _check_filters(filters)
        if filters.q:
            query = sanitize_query(filters.q)
            if query:
                from django.contrib.postgres.search import SearchQuery

                qs = qs.filter(search_vector=SearchQuery(query, search_type="websearch",
                                                         config=SEARCH_CONFIG))
        if filters.tier is not None:
            if filters.tier not in c.TIERS:
                raise c.InvalidRequest(f"unknown tier {filters.tier!r}")
            qs = qs.filter(tier=filters.tier)
        if filters.key is not None:
            c.check_id(filters.key, field="key")
            qs = qs.filter(key=filters.key)
        c.check_list_filters(filters)
        if filters.key_prefix:
            qs = qs.annotate(key_c=Collate("key", "C")).filter(
                _key_prefix_range(filters.key_prefix))
        if filters.subject is not None:
            qs = qs.filter(data_subject_id=c.check_subject(filters.subject))
        if filters.quarantine is not None:
            if filters.quarantine not in c.QUARANTINE_STATES:
                raise c.InvalidRequest(f"unknown quarantine state {filters.quarantine!r}")
            qs = qs.filter(quarantine_state=filters.quarantine)
        if filters.pii is not None:
            qs = qs.filter(pii_types__contains=[privacy.check_type(filters.pii)])
        c.check_time_filters(filters)
        if filters.updated_since is not None:
            qs = qs.filter(updated_at__gte=filters.updated_since)
        if filters.updated_before is not None:
            qs = qs.filter(updated_at__lt=filters.updated_before)
        if filters.created_before is not None:
            qs = qs.filter(created_at__lt=filters.created_before)
        if filters.expired_before is not None:
            qs = qs.filter(expires_at__lt=filters.expired_before)
        if filters.frozen is not None:
            frozen_ns = list(self._frozen_namespaces(namespaces))
            held_q = Q(filter_item_frozen=True) | Q(namespace_id__in=frozen_ns)
            qs = qs.annotate(filter_item_frozen=self._item_freeze_exists())
            qs = qs.filter(held_q) if filters.frozen else qs.exclude(held_q)
        return qs

    def _page(self, filters: c.ItemFilters, cursor: str | None, limit: int,
              namespaces: dict[str, Namespace]) -> c.ItemPage:
        ns_list = list(namespaces.values())
        qs = self._apply_filters(
            MemoryItem.objects.filter(namespace__in=ns_list), filters, ns_list
        )
        order = filters.order or "updated"
        # Each order is a keyset over its own index (memoryitem_keyset, _key_order,
        # _size_order); the redundant bound (``<= value``) is the index range: the OR alone is
        # only a filter, and the scan would walk every earlier row first (like an OFFSET).
        if order == "key":
            qs = qs.annotate(key_c=Collate("key", "C"))
            if cursor:
                key, pk = _decode_cursor(cursor, order)
                qs = qs.filter(Q(key_c__gt=key) | Q(key_c=key, id__gt=pk), key_c__gte=key)
            ordering: tuple[str, ...] = ("key_c", "id")
        elif order == "size":
            if cursor:
                size, pk = _decode_cursor(cursor, order)
                qs = qs.filter(Q(bytes__lt=size) | Q(bytes=size, id__lt=pk), bytes__lte=size)
            ordering = ("-bytes", "-id")
        else:
            if cursor:
                updated, pk = _decode_cursor(cursor, order)
                qs = qs.filter(Q(updated_at__lt=updated) | Q(updated_at=updated, id__lt=pk),
                               updated_at__lte=updated)
            ordering = ("-updated_at", "-id")
        rows = list(qs.annotate(item_frozen=self._item_freeze_exists())
                    .order_by(*ordering)[: limit + 1])
        by_id = {ns.id: ns for ns in ns_list}
        frozen_ns = self._frozen_namespaces(ns_list)
        items = []
        for row in rows[:limit]:
            row.namespace = by_id[row.namespace_id]
            items.append(_to_item(row, row.item_frozen or row.namespace_id in frozen_ns))
        next_cursor = _encode_cursor(rows[limit - 1], order) if len(rows) > limit else None
        return c.ItemPage(items=items, next_cursor=next_cursor)

    def list_items(
        self, filters: c.ItemFilters, *, cursor: str | None = None, limit: int = 50,
        scope: c.Scope, deadline: float,
    ) -> c.ItemPage:
        if not isinstance(limit, int) or isinstance(limit, bool) or not \
                1 <= limit <= c.LIST_MAX_LIMIT:
            raise c.InvalidRequest(f"limit must be 1-{c.LIST_MAX_LIMIT}")
        with self._bounded(deadline):
            return self._page(filters, cursor, limit, self._namespaces(scope))

    def count(self, filters: c.ItemFilters, *, scope: c.Scope, deadline: float) -> int | None:
        _check_filters(filters)
        with self._bounded(deadline):
            namespaces = self._namespaces(scope)
            if filters.is_empty():
                # The counters are exact (kept in every writer's transaction): no table scan.
                rows = NamespaceCounter.objects.filter(
                    namespace_id__in=[ns.id for ns in namespaces.values()]
                ).values_list("items", flat=True)
                return int(sum(rows))
            ns_list = list(namespaces.values())
            return self._apply_filters(
                MemoryItem.objects.filter(namespace__in=ns_list), filters, ns_list
            ).count()

    def count_capped(self, filters: c.ItemFilters, *, cap: int, scope: c.Scope,
                     deadline: float) -> CappedCount:
        """``count`` for pages: exact from the counters without filters, otherwise counted up
        to ``cap`` (``memory.selectors.capped_count``), so a common search term costs what a
        rare one does. Not in the contract: other providers answer ``count``."""
        if not isinstance(cap, int) or isinstance(cap, bool) or not 1 <= cap <= COUNT_CAP_MAX:
            raise c.InvalidRequest(f"cap must be 1-{COUNT_CAP_MAX}")
        _check_filters(filters)
        if filters.is_empty():
            return CappedCount(self.count(filters, scope=scope, deadline=deadline))
        with self._bounded(deadline):
            ns_list = list(self._namespaces(scope).values())
            return capped_count(self._apply_filters(
                MemoryItem.objects.filter(namespace__in=ns_list), filters, ns_list), cap)

    def get_item(self, item_id: str, *, scope: c.Scope, deadline: float) -> c.ItemDetail:
        with self._bounded(deadline):
            namespaces = self._namespaces(scope)
            pk = _parse_item_id(item_id)
            row = (MemoryItem.objects.filter(pk=pk, namespace__in=list(namespaces.values()))
                   .select_related("namespace__resource")
                   .annotate(item_frozen=self._item_freeze_exists()).first()) if pk else None
            if row is None:
                raise c.NotFound("no such item in this scope")
            frozen = row.item_frozen or bool(self._frozen_namespaces([row.namespace]))
            revisions = [
                c.Revision(revision=r.revision, content=r.content, bytes=r.bytes, actor=r.actor,
                           created_at=r.created_at, quarantine=r.quarantine_state)
                for r in row.revisions.order_by("revision")
            ]
            revisions.append(c.Revision(revision=row.revision, content=row.content,
                                        bytes=row.bytes, actor=row.updated_by,
                                        created_at=row.updated_at,
                                        quarantine=row.quarantine_state))
            return c.ItemDetail(item=_to_item(row, frozen), revisions=revisions)

    def recall(
        self, text: str | None, *, limit: int = c.RECALL_MAX_HITS, max_bytes: int | None = None,
        scope: c.Scope, deadline: float,
    ) -> c.RecallResult:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise c.InvalidRequest("limit must be a positive whole number")
        limit = min(limit, c.RECALL_MAX_HITS)
        if max_bytes is not None and (not isinstance(max_bytes, int) or isinstance(max_bytes, bool)
                                      or not 1 <= max_bytes <= c.RECALL_MAX_BYTES):
            raise c.InvalidRequest(f"maxBytes must be 1-{c.RECALL_MAX_BYTES}")
        query = sanitize_query(text)
        with self._bounded(deadline, read_only=True):
            namespaces = self._namespaces(scope)
            cap = min(ns.resource.max_bytes for ns in namespaces.values())
            if max_bytes is not None:
                cap = min(cap, max_bytes)
            ns_ids = [ns.id for ns in namespaces.values()]
            terms = _question_terms(query) if query else []  # once for both statements
            visible = self._recall_rows(query, ns_ids, limit, terms)
            privacy.redact_recall_rows(visible, namespaces.values())
            quarantined = self._quarantined_labels(query, ns_ids, terms)
            cursor = None
            if len(namespaces) == 1:
                version = NamespaceCounter.objects.filter(
                    namespace_id=next(iter(namespaces.values())).id
                ).values_list("version", flat=True).first()
                cursor = f"v{version or 0}"
        hits, sources, parts = [], [], []
        for row in visible:
            label = c.source_label(row["tier"], row["key"])
            hits.append(c.RecallHit(source=label, snippet=snippet_for(row["content"], query),
                                    score=round(float(row["score"]), 6)))
            sources.append(c.Source(id=str(row["id"]), title=label, revision=row["revision"],
                                    updated_at=row["updated_at"]))
            parts.append(f"[{label}]\n{row['content']}")
        return c.RecallResult(
            text=c.utf8_cut("\n\n".join(parts), cap), sources=sources[: c.MAX_SOURCES],
            hits=hits, quarantined=quarantined, cursor=cursor,
        )

    def _recall_rows(self, query: str, namespace_ids: list[uuid.UUID],
                     limit: int, terms: list[str] | None = None) -> list[dict[str, Any]]:
        """The best ``limit`` rows an agent may see (quarantined ones are left out here, so
        they never take the place of visible ones)."""
        if query:
            return self._answer_rows(_question_terms(query) if terms is None else terms,
                                     namespace_ids, limit)
        # Per namespace through LATERAL: each walks the keyset index newest first.
        # (``namespace_id = ANY(array) ORDER BY updated_at`` sorted the whole namespace:
        # ~0.5 s at 1M items.)
        sql = (
            "SELECT m.id, m.tier, m.key, m.content, m.revision, m.updated_at, 1.0 AS score "
            "FROM unnest(%s::uuid[]) AS n(id) CROSS JOIN LATERAL ("
            "  SELECT id, tier, key, content, revision, updated_at FROM memory_memoryitem"
            "  WHERE namespace_id = n.id AND quarantine_state <> 'pending'"
            "  ORDER BY updated_at DESC, id DESC LIMIT %s) m "
            "ORDER BY m.updated_at DESC, m.id DESC LIMIT %s"
        )
        return _dict_rows(sql, [namespace_ids, limit, limit])

    def _answer_rows(self, terms: list[str], namespace_ids: list[uuid.UUID],
                     limit: int) -> list[dict[str, Any]]:
        """Rows matching any meaningful term of a question, best first: an item scores the
        rarity weights (``ln(1 + items / matches)``) of the terms it contains over the weight
        of every term found, so more and rarer matched terms rank higher; newest first on
        ties. Candidates are each term's newest matches per namespace, with the term written
        into the statement, so the planner sees how common it is (the keyset index for a common
        term, the GIN index for a rare one) and a common term costs what a rare one does."""
        weights = self._term_weights(terms, namespace_ids)
        if not weights:
            return []
        values = ", ".join(["(%s::tsquery, %s::float8)"] * len(weights))
        params: list[Any] = []
        for term, weight in weights.items():
            params += [term, weight]
        branches = []
        for term in weights:
            # Each branch carries what the answer needs, so no candidate is read twice.
            branches.append(
                "SELECT m.* FROM unnest(%s::uuid[]) AS n(id) CROSS JOIN LATERAL ("
                "  SELECT id, tier, key, content, revision, updated_at, search_vector"
                "  FROM memory_memoryitem WHERE namespace_id = n.id"
                "  AND search_vector @@ %s::tsquery AND quarantine_state <> 'pending'"
                "  ORDER BY updated_at DESC, id DESC LIMIT %s) m")
            params += [namespace_ids, term, TERM_CANDIDATES]
        total = sum(weights.values())
        # Only the fixed fragments above are joined into the text; every value is a parameter.
        sql = (
            f"WITH terms(q, w) AS (VALUES {values}), "  # noqa: S608
            f"candidates AS ({' UNION ALL '.join(branches)}), "
            "scored AS (SELECT DISTINCT ON (id) id, tier, key, content, revision, updated_at, "
            "  (SELECT sum(t.w) FROM terms t WHERE search_vector @@ t.q) / %s AS score "
            "  FROM candidates ORDER BY id) "
            "SELECT * FROM scored ORDER BY score DESC, updated_at DESC, id DESC LIMIT %s"
        )
        return _dict_rows(sql, [*params, total, limit])

    @staticmethod
    def _term_weights(terms: list[str], namespace_ids: list[uuid.UUID]) -> dict[str, float]:
        """Term (as a tsquery literal) -> its rarity weight, for the terms that match at all.
        Matches are counted up to TERM_COUNT_CAP (through the GIN index), so a common term
        costs no more than a rare one; beyond the cap every term is equally common."""
        if not terms:
            return {}
        counts = " UNION ALL ".join(
            ["SELECT %s::int, (SELECT count(*) FROM (SELECT 1 FROM memory_memoryitem"
             " WHERE namespace_id = ANY(%s) AND search_vector @@ %s::tsquery LIMIT %s) s)"]
            * len(terms))
        params: list[Any] = []
        for number, term in enumerate(terms):
            params += [number, namespace_ids, term, TERM_COUNT_CAP]
        sql = (f"SELECT -1, coalesce(sum(items), 0) FROM memory_namespacecounter "  # noqa: S608
               f"WHERE namespace_id = ANY(%s) UNION ALL {counts}")
        found = dict(_dict_rows(sql, [namespace_ids, *params], plain=True))
        items = max(int(found.pop(-1)), max(found.values(), default=0), 1)
        return {terms[number]: math.log(1 + items / matches)
                for number, matches in sorted(found.items()) if matches}

    def _quarantined_labels(self, query: str, namespace_ids: list[uuid.UUID],
                            terms: list[str] | None = None) -> list[str]:
        """Labels (never content) of the pending items the recall would have matched."""
        # Pending items are few: the partial quarantine index finds them, then they are matched.
        sql = ("SELECT tier, key FROM memory_memoryitem "
               "WHERE namespace_id = ANY(%s) AND quarantine_state = 'pending' ")
        params: list[Any] = [namespace_ids]
        if query:
            terms = _question_terms(query) if terms is None else terms
            if not terms:
                return []
            sql += "AND search_vector @@ %s::tsquery "
            params.append(" | ".join(terms))
        sql += "ORDER BY updated_at DESC, id DESC LIMIT %s"
        params.append(c.RECALL_MAX_HITS)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [c.source_label(tier, key) for tier, key in cursor.fetchall()]

    # -- export -----------------------------------------------------------------------------
    #
    # Both export paths read batches of EXPORT_BATCH rows, each batch one statement in its own
    # transaction (a savepoint in the caller's), the next one starting after the last row
    # (keyset, as the list pages do), the freezes read once per batch. A batch is handed over
    # only after its statement ended, so what the caller does meanwhile (a job saving its
    # progress) commits on its own and is seen at once. ``export`` reads only the columns an
    # item needs through a server-side cursor (no ORM instances, no search vector);
    # ``export_lines`` has PostgreSQL write the lines and COPY them out.

    _EXPORT_FIELDS = ("id", "namespace_id", "x_partition", "tier", "key", "content", "bytes",
                      "revision", "data_subject_id", "quarantine_state", "created_at",
                      "updated_at", "expires_at")

    def _export_batch(self, filters: c.ItemFilters, namespaces: list[Namespace],
                      after: tuple[dt.datetime, uuid.UUID] | None,
                      withhold_pending: bool) -> tuple[QuerySet[Any], set[uuid.UUID], set[str]]:
        """The next batch's rows (newest first, as dicts of ``_EXPORT_FIELDS``), the frozen
        namespaces' ids and the ids of frozen items."""
        qs = self._apply_filters(MemoryItem.objects.filter(namespace__in=namespaces), filters,
                                 namespaces)
        if withhold_pending:
            qs = qs.exclude(quarantine_state="pending")
        if after is not None:
            qs = qs.filter(Q(updated_at__lt=after[0]) | Q(updated_at=after[0], id__lt=after[1]),
                           updated_at__lte=after[0])
        frozen_ns = set(self._frozen_namespaces(namespaces))
        frozen_items = {ref for ref in Freeze.objects.filter(
            level="item", provider_id=self._provider_pk, lifted_at__isnull=True,
        ).values_list("item_ref", flat=True) if ref}
        rows = (qs.annotate(x_partition=F("namespace__partition_key"))
                .order_by("-updated_at", "-id").values(*self._EXPORT_FIELDS)[:EXPORT_BATCH])
        return rows, frozen_ns, frozen_items

    def export(self, filters: c.ItemFilters, *, scope: c.Scope,
               deadline: float) -> Iterator[c.Item]:
        _check_filters(filters)
        # The first batch shares its deadline with the namespace lookup (as a first list page
        # does); each later batch gets the whole budget again.
        bound = c.Deadline.of(deadline)
        with self._bounded(bound):
            namespaces = list(self._namespaces(scope).values())
        after: tuple[dt.datetime, uuid.UUID] | None = None
        while True:
            with self._bounded(bound):
                rows, frozen_ns, frozen_items = self._export_batch(filters, namespaces, after,
                                                                   withhold_pending=False)
                batch = [
                    c.Item(id=str(row["id"]), partition=row["x_partition"], tier=row["tier"],
                           key=row["key"], source=c.source_label(row["tier"], row["key"]),
                           content=row["content"], bytes=row["bytes"], revision=row["revision"],
                           data_subject_id=row["data_subject_id"],
                           quarantine=row["quarantine_state"],
                           frozen=(row["namespace_id"] in frozen_ns
                                   or str(row["id"]) in frozen_items),
                           created_at=row["created_at"], updated_at=row["updated_at"],
                           expires_at=row["expires_at"])
                    for row in rows.iterator(chunk_size=EXPORT_FETCH)]
            yield from batch
            if len(batch) < EXPORT_BATCH:
                return
            after = (batch[-1].updated_at, uuid.UUID(batch[-1].id))
            bound = c.Deadline.of(deadline)

    #: One item's export line, written by PostgreSQL from a batch's row ``t``: the bytes of
    #: ``wire.item_line``. ``to_json`` escapes free text (content, subject, partition) as
    #: ``json.dumps(ensure_ascii=False)`` does; the id, tier, key and quarantine state are
    #: quoted as they are, their check constraints leave nothing to escape in them; times are
    #: ``wire.iso``'s (microseconds only when there are some). ``frozen`` is read by the same
    #: statement (``_FROZEN_SQL``): no side query per batch.
    _LINE_SQL = (
        "'{\"id\": \"' || t.id::text || '\", \"partition\": ' || to_json(t.x_partition)::text"
        " || ', \"tier\": \"' || t.tier || '\", \"key\": \"' || t.key || '\", \"source\": \"'"
        " || CASE WHEN t.tier IN ("
        + ", ".join(f"'{tier}'" for tier in sorted(c.DOCUMENT_TIERS))
        + ") THEN t.tier || '.md' ELSE t.tier || '/' || t.key || '.md' END"
        " || '\", \"content\": ' || to_json(t.content)::text"
        " || ', \"bytes\": ' || t.bytes::text || ', \"revision\": ' || t.revision::text"
        " || ', \"dataSubjectId\": ' || coalesce(to_json(t.data_subject_id)::text, 'null')"
        " || ', \"quarantine\": \"' || t.quarantine_state || '\", \"frozen\": '"
        " || CASE WHEN {frozen} THEN 'true' ELSE 'false' END"
        + "".join(
            f" || ', \"{name}\": \"' || replace(to_char(t.{column} AT TIME ZONE 'UTC', "
            "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), '.000000Z', 'Z') || '\"'"
            for name, column in (("createdAt", "created_at"), ("updatedAt", "updated_at")))
        + " || CASE WHEN t.expires_at IS NULL THEN '' ELSE ', \"expiresAt\": \"' || replace("
        "to_char(t.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), "
        "'.000000Z', 'Z') || '\"' END"
        + " || '}'"
    )

    #: Whether row ``t`` is frozen, as ``_frozen_namespaces`` and the item freezes say, each
    #: read once per statement (the arrays are init plans): its namespace or its resource under
    #: a freeze (the parameter: the namespaces exported), or the item itself (the provider; a
    #: reference that is no item id, which none of this store's freezes has, matches nothing).
    _FROZEN_SQL = (
        "t.namespace_id = ANY(ARRAY(SELECT n.id FROM workspaces_namespace n"
        " JOIN memory_freeze f ON f.lifted_at IS NULL AND ((f.level = 'namespace'"
        " AND f.namespace_id = n.id) OR (f.level = 'resource' AND f.resource_id = n.resource_id))"
        " WHERE n.id = ANY(%s::uuid[])))"
        " OR t.id = ANY(ARRAY(SELECT f.item_ref::uuid FROM memory_freeze f"
        " WHERE f.level = 'item' AND f.provider_id = %s AND f.lifted_at IS NULL"
        " AND f.item_ref ~* '^[0-9a-f]{8}-?([0-9a-f]{4}-?){3}[0-9a-f]{12}$'))"
    )

    def _export_rows(self, filters: c.ItemFilters, namespaces: list[Namespace],
                     after: tuple[dt.datetime, uuid.UUID] | None) -> QuerySet[Any]:
        """A batch's rows for the export file (pending items left out), newest first."""
        qs = self._apply_filters(MemoryItem.objects.filter(namespace__in=namespaces), filters,
                                 namespaces).exclude(quarantine_state="pending")
        if after is not None:
            qs = qs.filter(Q(updated_at__lt=after[0]) | Q(updated_at=after[0], id__lt=after[1]),
                           updated_at__lte=after[0])
        return (qs.annotate(x_partition=F("namespace__partition_key"))
                .order_by("-updated_at", "-id").values(*self._EXPORT_FIELDS)[:EXPORT_BATCH])

    def export_lines(self, filters: c.ItemFilters, *, scope: c.Scope,
                     deadline: float) -> Iterator[tuple[bytes, int]]:
        """The export file's share of this store: every matching item that is not pending
        review, newest first, as JSON Lines (``wire.item_line`` byte for byte), in chunks of
        (lines, how many). Memory stays bounded by one batch, whatever the total.

        PostgreSQL writes each line (``_LINE_SQL``) and COPYs a batch out; COPY's text format
        doubles every backslash (a line holds no other character it escapes: ``to_json``
        escaped them all), so one replace over the chunk gives the lines back. A batch is
        one statement (one round trip): the freezes are read inside it."""
        _check_filters(filters)
        bound = c.Deadline.of(deadline)  # shared by the lookup and the first batch, as above
        with self._bounded(bound):
            namespaces = list(self._namespaces(scope).values())
        line = self._LINE_SQL.replace("{frozen}", self._FROZEN_SQL)
        frozen_params = [[ns.id for ns in namespaces], self._provider_pk]
        after: tuple[dt.datetime, uuid.UUID] | None = None
        while True:
            with self._bounded(bound):
                inner, params = self._export_rows(filters, namespaces, after).query \
                    .sql_with_params()
                statement = (f"COPY (SELECT {line} FROM ({inner}) t "  # noqa: S608
                             "ORDER BY t.updated_at DESC, t.id DESC) TO STDOUT")
                buffer, count = bytearray(), 0
                raw = connection.connection
                with raw.cursor() as cursor, cursor.copy(
                        statement, [*frozen_params, *params]) as copy:
                    for data in copy:
                        buffer += data
                        count += 1
            if not count:
                return
            chunk = bytes(buffer)
            if b"\\" in chunk:
                chunk = chunk.replace(b"\\\\", b"\\")
            yield chunk, count
            if count < EXPORT_BATCH:
                return
            last = orjson.loads(chunk[chunk.rindex(b"\n", 0, len(chunk) - 1) + 1:]
                                if count > 1 else chunk)
            after = (dt.datetime.fromisoformat(last["updatedAt"]), uuid.UUID(last["id"]))
            bound = c.Deadline.of(deadline)

    # -- agent-side batches, notes and usage (the endpoint's observe, batch tools, notes) ----
    #
    # Not part of the provider contract: the built-in store's endpoint offers them to agents
    # (docs/provider-protocol.md, "Agent ingestion, batches and notes").

    def retain_many(
        self, entries: Sequence[BatchEntry], *, operation_id: str, actor: str = "system",
        scope: c.Scope, deadline: float,
    ) -> list[c.RetainResult]:
        """New ``facts`` items, one per entry, in one transaction: one set of checks (scope,
        replay, erased subjects, freezes, sizes), every entry screened like any write, one
        multi-row INSERT, review entries for the flagged ones, one counter update. Any entry
        refused refuses the batch (its index in ``details``); nothing is written then."""
        partition = scope.single()
        c.check_operation_id(operation_id)
        if not entries or len(entries) > BATCH_MAX_ITEMS:
            raise c.InvalidRequest(f"a batch holds 1-{BATCH_MAX_ITEMS:,} entries")
        checked: list[BatchEntry] = []
        for index, entry in enumerate(entries):
            try:
                c.check_text(entry.content, field="content")
                subject = c.check_subject(entry.data_subject_id)
                if not BATCH_KEY_PREFIX.fullmatch(entry.key_prefix):
                    raise c.InvalidRequest("the key prefix must be 0-40 letters, digits, - or _")
            except c.ProviderError as error:
                raise type(error)(f"entry {index}: {error.message}", {"index": index}) from None
            checked.append(BatchEntry(entry.content, subject, entry.key_prefix))
        request = {"op": "retain_many",
                   "entries": [[e.content, e.data_subject_id, e.key_prefix] for e in checked]}
        bound = c.Deadline.of(deadline)
        # The scanner runs before the transaction (CPU only: no lock is held meanwhile, and its
        # time still counts against the deadline); the allow-list decides flagged ones inside.
        from memadmin.quarantine.scanner import scan

        scanned = [scan(e.content) for e in checked]
        with self._bounded(bound), events.subscribers_cached():
            namespace = self._namespaces(scope)[partition]
            now = timezone.now()
            op_hash = hashlib.sha256(operation_id.encode()).hexdigest()
            req_hash = hashlib.sha256(canonical_json(request)).hexdigest()
            with connection.cursor() as cursor:
                cursor.execute(_BATCH_CHECKS, {
                    "scope_key": self._scope_key(scope), "op_hash": op_hash, "now": now,
                    "namespace": namespace.id, "resource": namespace.resource_id})
                recorded_hash, recorded, freeze_id = cursor.fetchone()
            if recorded_hash is not None:
                if recorded_hash != req_hash:
                    raise c.IdempotencyMismatch("this operationId was used with another request")
                return [c.RetainResult.from_dict(r) for r in json.loads(recorded)["results"]]
            for subject in sorted({e.data_subject_id for e in checked if e.data_subject_id}):
                self._check_tombstone(namespace, subject)
            if freeze_id is not None:
                raise self._frozen_error(Freeze.objects.get(pk=freeze_id))
            # Personal data and secrets, as every write (``_create``): refused, or secrets
            # redacted before anything is stored; a redacted entry is scanned as stored.
            screened = []
            for index, entry in enumerate(checked):
                try:
                    pii = privacy.screen_write(entry.content, namespace.resource)
                except c.ProviderError as error:
                    raise type(error)(f"entry {index}: {error.message}",
                                      {**(error.details or {}), "index": index}) from None
                if pii.content != entry.content:
                    checked[index] = dataclasses.replace(entry, content=pii.content)
                    scanned[index] = scan(pii.content)
                screened.append(pii)
            limit = namespace.resource.item_max_bytes
            sizes = [len(e.content.encode("utf-8")) for e in checked]
            for index, size in enumerate(sizes):
                if size > limit:
                    raise c.TooLarge(f"entry {index}: the item would be {size} bytes; this "
                                     f"resource allows {limit}",
                                     {"index": index, "bytes": size, "limit": limit})
            workspace_id = namespace.resource.workspace_id
            # The allow-list read once for every flagged entry (none when all are clean).
            verdicts = screening.assess_scanned([e.content for e in checked], scanned,
                                                workspace_id)
            rows = [_Fact(id=uuid.uuid4(), namespace_id=namespace.id,
                          key=f"{e.key_prefix}{secrets.token_hex(8)}", content=e.content,
                          bytes=size, quarantine_state=screening.state_after(verdict, "clear"))
                    for e, size, verdict in zip(checked, sizes, verdicts, strict=True)]
            results = [_written(row, verdict) for row, verdict in zip(rows, verdicts,
                                                                        strict=True)]
            table = orjson.dumps([
                {"id": row.id, "key": row.key, "content": row.content, "bytes": row.bytes,
                 "subject": e.data_subject_id, "state": row.quarantine_state,
                 "types": pii.types, "spans": pii.spans, "keys": pii.keys}
                for row, e, pii in zip(rows, checked, screened, strict=True)]).decode()
            with connection.cursor() as cursor:
                cursor.execute(_WRITE_FACTS, {
                    "namespace": namespace.id, "actor": actor[:200], "rows": table,
                    "items": len(rows), "bytes": sum(sizes),
                    **self._record_params(scope, op_hash, req_hash,
                                          {"results": [r.to_dict() for r in results]}, now)})
                counted, recorded_now = cursor.fetchone()
            if not recorded_now:
                raise c.Conflict("the same operationId is being applied concurrently")
            if not counted:  # the namespace has no counter row yet
                self._bump(namespace.id, len(rows), sum(sizes))
            events.items_created(rows, namespace=namespace, actor=actor[:200])
            screening.record_created(items=rows, verdicts=verdicts,
                                     provider_id=self.settings.id, workspace_id=workspace_id,
                                     namespace=namespace)
        return results

    def notes_containing(self, substring: str, *, scope: c.Scope, deadline: float,
                         limit: int = NOTE_MATCHES_SHOWN + 1) -> list[NoteMatch]:
        """The notes (``facts`` items keyed ``note-...``) whose content contains
        ``substring`` (case-sensitive, literally), newest first, at most ``limit``. Quarantined
        notes are left out: an agent never learns what held content says."""
        c.check_text(substring, field="substring", max_bytes=c.MAX_QUERY_BYTES)
        if not substring.strip():
            raise c.InvalidRequest("the text to find must not be empty")
        with self._bounded(deadline):
            namespace = self._namespaces(scope)[scope.single()]
            rows = (MemoryItem.objects
                    .filter(namespace=namespace, tier="facts", key__startswith=NOTE_PREFIX,
                            content__contains=substring)
                    .exclude(quarantine_state="pending")
                    .order_by("-updated_at", "-id")
                    .values_list("id", "key", "revision")[:limit])
            return [NoteMatch(str(pk), key, revision) for pk, key, revision in rows]

    def usage(self, *, scope: c.Scope, deadline: float) -> Usage:
        """The namespace's size from the counters the store keeps (no scan), and its quota."""
        with self._bounded(deadline):
            namespace = self._namespaces(scope)[scope.single()]
            counter = NamespaceCounter.objects.filter(namespace=namespace).first()
        return Usage(items=counter.items if counter else 0,
                     bytes=counter.bytes if counter else 0, quota_bytes=namespace.quota_bytes)

