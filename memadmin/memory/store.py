"""The built-in provider: memory rows in memadmin's own PostgreSQL.

Writes run in the caller's transaction (a savepoint inside it), keep the previous revision,
maintain the per-namespace counters and refuse frozen targets and erased subjects. Every call is
bounded by its deadline: each statement gets the time left as its ``statement_timeout`` and
``lock_timeout``, and a call that finished after its deadline is rolled back as ``Timeout``.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import json
import math
import re
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import CharField, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Cast
from django.utils import timezone

from memadmin.events import services as events
from memadmin.gdpr.models import Tombstone
from memadmin.lib.bounded import OutOfTime, is_timeout, statements_within
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
from memadmin.providers import contract as c
from memadmin.quarantine import screening
from memadmin.workspaces.models import Namespace

OPERATION_RETENTION = dt.timedelta(hours=24)
#: Recall: at most this many meaningful terms of a question; each term's newest matches per
#: namespace that are ranked; matches counted per term to weigh its rarity.
RECALL_TERMS_MAX = 16
TERM_CANDIDATES = 200
TERM_COUNT_CAP = 1000
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


def _encode_cursor(item: MemoryItem) -> str:
    raw = json.dumps({"u": item.updated_at.isoformat(), "i": str(item.id)}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[dt.datetime, uuid.UUID]:
    c.check_id(cursor, field="cursor")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        updated = dt.datetime.fromisoformat(data["u"])
        if updated.tzinfo is None:
            raise ValueError("naive time")
        return updated, uuid.UUID(data["i"])
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error,
            UnicodeEncodeError):
        raise c.InvalidRequest("malformed cursor") from None


def _parse_item_id(item_id: str) -> uuid.UUID | None:
    c.check_id(item_id, field="item id")
    try:
        return uuid.UUID(item_id)
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
        updated_at=row.updated_at,
    )


def _written(item: MemoryItem, verdict: Any) -> c.RetainResult:
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
    def _bounded(self, deadline: float | c.Deadline) -> Iterator[c.Deadline]:
        """A savepoint in which every statement gets only the time left (statement and lock
        timeouts set before each, lookups included) and which is rolled back, as ``Timeout``,
        when the deadline passed before it could be released: a late write is never applied."""
        bound = c.Deadline.of(deadline)
        try:
            with statements_within(bound.remaining):
                yield bound
        except OutOfTime:
            raise c.Timeout("the built-in store did not finish within the deadline") from None
        except DatabaseError as exc:
            if is_timeout(exc):
                raise c.Timeout("the built-in store did not answer within the deadline") from None
            if isinstance(exc, IntegrityError):
                raise
            raise c.Unavailable("the built-in store is unavailable") from exc

    def _namespaces(self, scope: c.Scope) -> dict[str, Namespace]:
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
        now = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO memory_operationrecord (scope_key, operation_hash, request_hash, "
                "response, created_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (scope_key, operation_hash) DO UPDATE SET "
                "request_hash = EXCLUDED.request_hash, response = EXCLUDED.response, "
                "created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at "
                "WHERE memory_operationrecord.expires_at <= EXCLUDED.created_at RETURNING id",
                [self._scope_key(scope), op_hash, req_hash, json.dumps(response), now,
                 now + OPERATION_RETENTION],
            )
            if cursor.fetchone() is None:
                raise c.Conflict("the same operationId is being applied concurrently")

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
    ) -> c.RetainResult:
        partition = scope.single()
        c.check_mode(mode)
        c.check_operation_id(operation_id)
        c.check_text(content, field="content")
        subject = c.check_subject(data_subject_id)
        key = key if tier == "facts" and not key else c.normalise_key(tier, key)
        request = {"op": "retain", "tier": tier, "key": key, "content": content, "mode": mode,
                   "subject": subject}
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
            self._remember(scope, op_hash, req_hash, result.to_dict())
        return result

    def _create(self, namespace: Namespace, tier: str, key: str, content: str,
                subject: str | None, actor: str) -> c.RetainResult:
        size = len(content.encode("utf-8"))
        self._check_size(namespace, size)
        now = timezone.now()
        verdict = screening.assess(content, namespace.resource.workspace_id)
        item = MemoryItem.objects.create(
            namespace=namespace, tier=tier, key=key, content=content, bytes=size, revision=1,
            data_subject_id=subject, updated_by=actor[:200], created_at=now, updated_at=now,
            quarantine_state=screening.state_after(verdict, "clear"),
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
        fields = ["content", "bytes", "revision", "updated_by", "updated_at"]
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
    ) -> c.RetainResult:
        c.check_mode(mode)
        c.check_operation_id(operation_id)
        c.check_text(content, field="content")
        if not isinstance(expected_revision, int) or isinstance(expected_revision, bool):
            raise c.InvalidRequest("expected_revision must be a whole number")
        request = {"op": "update", "id": item_id, "content": content, "mode": mode,
                   "expected": expected_revision}
        with self._bounded(deadline):
            op_hash, req_hash, replay = self._replay(scope, operation_id, request)
            if replay is not None:
                return c.RetainResult.from_dict(replay)
            namespace, item = self._locked_item(item_id, scope)
            freeze = self._frozen_namespaces([namespace]).get(namespace.id)
            if freeze is not None:
                raise self._frozen_error(freeze)
            result = self._change(namespace, item, content, mode, None, actor, expected_revision)
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
        with self._bounded(deadline):
            op_hash, req_hash, replay = self._replay(scope, operation_id, request)
            if replay is not None:
                return c.ForgetResult(**replay)
            namespaces = list(self._namespaces(scope).values())
            qs = MemoryItem.objects.filter(namespace__in=namespaces)
            if item_id is not None:
                pk = _parse_item_id(item_id)
                qs = qs.filter(pk=pk) if pk else qs.none()
            else:
                qs = qs.filter(data_subject_id=c.check_subject(data_subject_id))
            free, held = self._split_held(qs, namespaces, override_hold=override_hold)
            events.items_deleted(free, namespaces=namespaces, actor=actor[:200])
            result = c.ForgetResult(removed=self._delete_rows(free), held=held)
            self._remember(scope, op_hash, req_hash, result.__dict__)
        return result

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
        if filters.subject is not None:
            qs = qs.filter(data_subject_id=c.check_subject(filters.subject))
        if filters.quarantine is not None:
            if filters.quarantine not in c.QUARANTINE_STATES:
                raise c.InvalidRequest(f"unknown quarantine state {filters.quarantine!r}")
            qs = qs.filter(quarantine_state=filters.quarantine)
        c.check_time_filters(filters)
        if filters.updated_since is not None:
            qs = qs.filter(updated_at__gte=filters.updated_since)
        if filters.updated_before is not None:
            qs = qs.filter(updated_at__lt=filters.updated_before)
        if filters.created_before is not None:
            qs = qs.filter(created_at__lt=filters.created_before)
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
        if cursor:
            updated, pk = _decode_cursor(cursor)
            # The redundant ``updated_at <= u`` is the index range: the OR alone is only a
            # filter, and the scan would walk every newer row first (like an OFFSET).
            qs = qs.filter(Q(updated_at__lt=updated) | Q(updated_at=updated, id__lt=pk),
                           updated_at__lte=updated)
        rows = list(qs.annotate(item_frozen=self._item_freeze_exists())
                    .order_by("-updated_at", "-id")[: limit + 1])
        by_id = {ns.id: ns for ns in ns_list}
        frozen_ns = self._frozen_namespaces(ns_list)
        items = []
        for row in rows[:limit]:
            row.namespace = by_id[row.namespace_id]
            items.append(_to_item(row, row.item_frozen or row.namespace_id in frozen_ns))
        next_cursor = _encode_cursor(rows[limit - 1]) if len(rows) > limit else None
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
        with self._bounded(deadline):
            namespaces = self._namespaces(scope)
            cap = min(ns.resource.max_bytes for ns in namespaces.values())
            if max_bytes is not None:
                cap = min(cap, max_bytes)
            ns_ids = [ns.id for ns in namespaces.values()]
            visible = self._recall_rows(query, ns_ids, limit)
            quarantined = self._quarantined_labels(query, ns_ids)
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
                     limit: int) -> list[dict[str, Any]]:
        """The best ``limit`` rows an agent may see (quarantined ones are left out here, so
        they never take the place of visible ones)."""
        if query:
            return self._answer_rows(_question_terms(query), namespace_ids, limit)
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

    def _quarantined_labels(self, query: str, namespace_ids: list[uuid.UUID]) -> list[str]:
        """Labels (never content) of the pending items the recall would have matched."""
        # Pending items are few: the partial quarantine index finds them, then they are matched.
        sql = ("SELECT tier, key FROM memory_memoryitem "
               "WHERE namespace_id = ANY(%s) AND quarantine_state = 'pending' ")
        params: list[Any] = [namespace_ids]
        if query:
            terms = _question_terms(query)
            if not terms:
                return []
            sql += "AND search_vector @@ %s::tsquery "
            params.append(" | ".join(terms))
        sql += "ORDER BY updated_at DESC, id DESC LIMIT %s"
        params.append(c.RECALL_MAX_HITS)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [c.source_label(tier, key) for tier, key in cursor.fetchall()]

    def export(self, filters: c.ItemFilters, *, scope: c.Scope,
               deadline: float) -> Iterator[c.Item]:
        cursor: str | None = None
        while True:
            page = self.list_items(filters, cursor=cursor, limit=c.LIST_MAX_LIMIT, scope=scope,
                                   deadline=deadline)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor
