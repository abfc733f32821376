"""Memory events: writing them to the outbox (``emit``, called by the places that change memory,
in their transaction) and managing the webhook endpoints that receive them (audited).

Emitting costs one indexed query when the workspace has no endpoint for the event's type, and
then writes nothing. Bodies carry ids, names, revisions and SHA-256 hashes of content, never the
content, a key (a ``peers`` key can be a person's name) or a clear data-subject id.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models.expressions import RawSQL
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.events import signing
from memadmin.events.models import (
    EVENT_TYPES,
    TEST_EVENT,
    Delivery,
    DeliveryAttempt,
    Event,
    WebhookEndpoint,
)
from memadmin.lib import outbound
from memadmin.workspaces.models import Workspace

#: Why items are being deleted, set by the caller around a deletion: ``delete`` (a person, an
#: agent, a quarantine purge), ``expired`` (retention), ``erasure`` (a subject request).
_cause: contextvars.ContextVar[str] = contextvars.ContextVar("memory_event_cause",
                                                             default="delete")


@contextlib.contextmanager
def cause(why: str) -> Iterator[None]:
    """Deletions inside this block are ``item.expired`` (``why="expired"``) or
    ``item.deleted`` with ``reason`` ``why``."""
    token = _cause.set(why)
    try:
        yield
    finally:
        _cause.reset(token)


# -- emitting -----------------------------------------------------------------------------------


#: Each workspace's enabled endpoints, while a ``subscribers_cached`` block runs (else None).
_endpoints_cache: contextvars.ContextVar[dict[Any, list[WebhookEndpoint]] | None] = \
    contextvars.ContextVar("memory_event_endpoints", default=None)


@contextlib.contextmanager
def subscribers_cached() -> Iterator[None]:
    """Inside this block (a batch write, one endpoint request) each workspace's endpoints are
    read once, however many events are emitted; a change to an endpoint made through this
    module meanwhile clears what was read. The cache lives only as long as the block (nothing
    shared stays in process memory): another process's change is seen by the next block, as
    if this one had run a moment earlier. Nested blocks share the outermost one's cache."""
    if _endpoints_cache.get() is not None:
        yield
        return
    token = _endpoints_cache.set({})
    try:
        yield
    finally:
        _endpoints_cache.reset(token)


def _forget_endpoints() -> None:
    cache = _endpoints_cache.get()
    if cache is not None:
        cache.clear()


def _enabled_endpoints(workspace_id: Any) -> list[WebhookEndpoint]:
    cache = _endpoints_cache.get()
    if cache is not None and workspace_id in cache:
        return cache[workspace_id]
    found = list(WebhookEndpoint.objects.filter(workspace_id=workspace_id, enabled=True)
                 .only("id", "event_types"))
    if cache is not None:
        cache[workspace_id] = found
    return found


def _subscribers(workspace_id: Any, event_type: str) -> list[WebhookEndpoint]:
    return [e for e in _enabled_endpoints(workspace_id) if e.receives(event_type)]


def _kick() -> None:
    from memadmin.events.tasks import deliver_events_task

    deliver_events_task.enqueue()


def _queue(workspace_id: Any, event_type: str, rows: Sequence[dict[str, Any]],
           endpoints: Sequence[WebhookEndpoint] | None = None) -> list[Event]:
    """Write events and their deliveries in the caller's transaction; after it commits, ask a
    worker to send them (the sweep finds them anyway if that request is lost)."""
    endpoints = list(endpoints) if endpoints is not None else _subscribers(workspace_id,
                                                                           event_type)
    if not endpoints or not rows:
        return []
    now = timezone.now()
    events = Event.objects.bulk_create(
        [Event(workspace_id=workspace_id, type=event_type, payload=data, created_at=now)
         for data in rows])
    Delivery.objects.bulk_create(
        [Delivery(endpoint=endpoint, event=event, next_attempt_at=now)
         for event in events for endpoint in endpoints])
    if connection.in_atomic_block:
        if not any(entry[1] is _kick for entry in connection.run_on_commit):
            transaction.on_commit(_kick)
    else:
        _kick()
    return events


def emit(*, workspace_id: Any, event_type: str, data: dict[str, Any]) -> None:
    """One event of ``event_type`` (a key of ``EVENT_TYPES``) with body ``data``."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    _queue(workspace_id, event_type, [data])


def _where(namespace: Any) -> dict[str, Any]:
    resource = namespace.resource
    return {"workspace": resource.workspace.slug, "resource": resource.slug,
            "namespace": namespace.slug, "partition": namespace.partition_key}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def item_written(item: Any, *, created: bool, actor: str) -> None:
    """``item.created`` or ``item.updated`` for a built-in store item just saved."""
    namespace = item.namespace
    event_type = "item.created" if created else "item.updated"
    workspace_id = namespace.resource.workspace_id
    if not _subscribers(workspace_id, event_type):
        return
    _queue(workspace_id, event_type, [{
        **_where(namespace), "item": str(item.id), "tier": item.tier,
        "revision": item.revision, "bytes": item.bytes,
        "content_sha256": _sha256(item.content), "quarantine_state": item.quarantine_state,
        "actor": actor}])


def items_created(items: Sequence[Any], *, namespace: Any, actor: str) -> None:
    """``item.created`` for each item of one batch write (``retain_many``) in ``namespace``:
    the subscribers looked up once, every event queued together."""
    workspace_id = namespace.resource.workspace_id
    endpoints = _subscribers(workspace_id, "item.created") if items else []
    if not endpoints:
        return
    _queue(workspace_id, "item.created", [{
        **_where(namespace), "item": str(item.id), "tier": item.tier,
        "revision": item.revision, "bytes": item.bytes,
        "content_sha256": _sha256(item.content), "quarantine_state": item.quarantine_state,
        "actor": actor} for item in items], endpoints)


def items_deleted(item_ids: Sequence[Any], *, namespaces: Iterable[Any], actor: str) -> None:
    """``item.deleted`` (or ``item.expired`` under ``cause("expired")``) for each built-in
    store item about to be deleted: called just before the rows go, in the same transaction."""
    if not item_ids:
        return
    why = _cause.get()
    event_type = "item.expired" if why == "expired" else "item.deleted"
    by_id = {ns.pk: ns for ns in namespaces}
    workspaces = {ns.resource.workspace_id for ns in by_id.values()}
    from memadmin.memory.models import MemoryItem

    for workspace_id in workspaces:
        endpoints = _subscribers(workspace_id, event_type)
        if not endpoints:
            continue
        rows = (MemoryItem.objects.filter(pk__in=list(item_ids),
                                          namespace__resource__workspace_id=workspace_id)
                .annotate(digest=RawSQL("encode(sha256(convert_to(content, 'UTF8')), 'hex')",
                                        []))
                .values_list("id", "namespace_id", "tier", "revision", "bytes", "digest"))
        data = []
        for pk, namespace_id, tier, revision, size, digest in rows:
            namespace = by_id[namespace_id]
            body = {**_where(namespace), "item": str(pk), "tier": tier, "revision": revision,
                    "bytes": size, "content_sha256": digest, "actor": actor}
            if event_type == "item.deleted":
                body["reason"] = why
            data.append(body)
        _queue(workspace_id, event_type, data, endpoints)


def wants_deletions(namespaces: Iterable[Any]) -> bool:
    """Whether any endpoint of these namespaces' workspaces subscribes to ``item.deleted``
    (the erasure then asks its batches for what they deleted)."""
    return any(_subscribers(workspace_id, "item.deleted") for workspace_id in
               {ns.resource.workspace_id for ns in namespaces})


def items_erased(rows: Sequence[tuple[Any, ...]], *, namespaces: Iterable[Any],
                 actor: str) -> None:
    """``item.deleted`` (reason ``erasure`` unless the cause says otherwise) for rows an
    erasure batch just deleted inside PostgreSQL: (namespace id, bytes, id, tier, revision,
    content sha256), in the batch's transaction."""
    by_id = {ns.pk: ns for ns in namespaces}
    why = _cause.get()
    by_workspace: dict[Any, list[dict[str, Any]]] = {}
    for namespace_id, size, pk, tier, revision, digest in rows:
        namespace = by_id[namespace_id]
        by_workspace.setdefault(namespace.resource.workspace_id, []).append({
            **_where(namespace), "item": str(pk), "tier": tier, "revision": revision,
            "bytes": size, "content_sha256": digest, "actor": actor, "reason": why})
    for workspace_id, data in by_workspace.items():
        _queue(workspace_id, "item.deleted", data)


def item_quarantine(item: Any, *, state: str, actor: str, rules: Sequence[str] = ()) -> None:
    """``item.quarantined`` (state ``pending``) or ``item.released``."""
    event_type = "item.quarantined" if state == "pending" else "item.released"
    namespace = item.namespace
    workspace_id = namespace.resource.workspace_id
    if not _subscribers(workspace_id, event_type):
        return
    _queue(workspace_id, event_type, [_held_item(namespace, item, rules, actor)])


def _held_item(namespace: Any, item: Any, rules: Sequence[str], actor: str) -> dict[str, Any]:
    """The payload of ``item.quarantined`` / ``item.released`` for a scanned item (its
    content's hash, never the content)."""
    return {**_where(namespace), "item": str(item.id), "tier": item.tier,
            "revision": item.revision, "content_sha256": _sha256(item.content),
            "rules": list(rules), "actor": actor}


def items_quarantined(items: Sequence[tuple[Any, Sequence[str]]], *, namespace: Any,
                      actor: str) -> None:
    """``item_quarantine`` (state ``pending``) for many items of ``namespace`` held by one batch
    write, each with its rules: the subscribers looked up once, every event queued together."""
    workspace_id = namespace.resource.workspace_id
    endpoints = _subscribers(workspace_id, "item.quarantined") if items else []
    if not endpoints:
        return
    _queue(workspace_id, "item.quarantined",
           [_held_item(namespace, item, rules, actor) for item, rules in items], endpoints)


def item_released(*, workspace: Any, namespace: Any, item_ref: str, content_hash: str,
                  actor: str) -> None:
    """``item.released`` from a review decision (the reviewer named, the item by reference)."""
    if not _subscribers(workspace.pk, "item.released"):
        return
    _queue(workspace.pk, "item.released", [{
        **_where(namespace), "item": item_ref, "content_sha256": content_hash or None,
        "actor": actor}])


def subject_erased(subject_request: Any, *, actor: str) -> None:
    """``subject.erased``: the request and the subject's keyed hash, never the clear id."""
    sr = subject_request
    steps = list(sr.steps.values_list("state", "removed", "held"))
    emit(workspace_id=sr.workspace_id, event_type="subject.erased", data={
        "workspace": sr.workspace.slug, "request": str(sr.pk), "state": sr.state,
        "subject_hash": sr.subject_hash, "subject_key_id": sr.subject_key_id,
        "removed": sum(s[1] for s in steps), "held": sum(s[2] for s in steps),
        "providers": len(steps), "actor": actor})


# -- endpoints ----------------------------------------------------------------------------------


def _check_url(url: str) -> None:
    try:
        outbound.check_url(url)
    except outbound.OutboundRefused as exc:
        raise ValidationError({"url": exc.message}) from None


def _check_types(event_types: Sequence[str]) -> list[str]:
    unknown = [t for t in event_types if t not in EVENT_TYPES]
    if unknown:
        raise ValidationError({"event_types": "Unknown event type."})
    return sorted(set(event_types))


def _secret(secret: str) -> str:
    if not secret:
        return signing.generate_secret()
    try:
        signing.secret_key(secret)
    except signing.BadSecret as exc:
        raise ValidationError({"secret": f"Not a signing secret: {exc}."}) from None
    return secret


def _audit(actor: Actor, endpoint: WebhookEndpoint, action: str, **data: Any) -> None:
    audit_event_create(workspace=endpoint.workspace, actor=actor, action=f"webhook.{action}",
                       target_type="webhook", target_id=endpoint.pk,
                       data={"name": endpoint.name, **data})


def webhook_endpoint_create(*, actor: Actor, workspace: Workspace, name: str, url: str,
                            event_types: Sequence[str] = (), secret: str = ""
                            ) -> tuple[WebhookEndpoint, str]:
    """A new, enabled endpoint; returns it and its signing secret (shown to the user once).
    A blank ``secret`` makes a new one."""
    _check_url(url)
    endpoint = WebhookEndpoint(workspace=workspace, name=name, url=url,
                               event_types=_check_types(event_types), secret=_secret(secret),
                               created_by=actor.user)
    endpoint.full_clean()
    if WebhookEndpoint.objects.filter(workspace=workspace, name=name).exists():
        raise ValidationError({"name": "Another endpoint of this workspace has this name."})
    with transaction.atomic():
        endpoint.save()
        _forget_endpoints()
        _audit(actor, endpoint, "create", origin=outbound.origin_of(url),
               event_types=endpoint.event_types)
    return endpoint, endpoint.secret


def webhook_endpoint_update(*, actor: Actor, endpoint: WebhookEndpoint,
                            **changes: Any) -> WebhookEndpoint:
    """Change name, URL or event types (the secret is changed only by rotating it)."""
    allowed = {"name", "url", "event_types"}
    if set(changes) - allowed:
        raise ValueError(f"cannot change {sorted(set(changes) - allowed)}")
    if "url" in changes:
        _check_url(changes["url"])
    if "event_types" in changes:
        changes["event_types"] = _check_types(changes["event_types"])
    if "name" in changes and WebhookEndpoint.objects.filter(
            workspace=endpoint.workspace, name=changes["name"]).exclude(pk=endpoint.pk).exists():
        raise ValidationError({"name": "Another endpoint of this workspace has this name."})
    for field, value in changes.items():
        setattr(endpoint, field, value)
    endpoint.full_clean()
    with transaction.atomic():
        endpoint.save(update_fields=list(changes))
        _forget_endpoints()
        _audit(actor, endpoint, "update", fields=sorted(changes),
               origin=outbound.origin_of(endpoint.url))
    return endpoint


def webhook_endpoint_set_enabled(*, actor: Actor, endpoint: WebhookEndpoint,
                                 enabled: bool) -> WebhookEndpoint:
    """Disable (no new events are queued for it, queued ones wait) or enable it again."""
    with transaction.atomic():
        endpoint.enabled = enabled
        endpoint.save(update_fields=["enabled"])
        _forget_endpoints()
        _audit(actor, endpoint, "enable" if enabled else "disable")
    return endpoint


def webhook_endpoint_rotate_secret(*, actor: Actor, endpoint: WebhookEndpoint) -> str:
    """A new signing secret (returned to be shown once); the old one stops signing at once."""
    with transaction.atomic():
        endpoint.secret = signing.generate_secret()
        endpoint.save(update_fields=["secret"])
        _audit(actor, endpoint, "rotate_secret")
    return endpoint.secret


def webhook_endpoint_remove(*, actor: Actor, endpoint: WebhookEndpoint) -> None:
    with transaction.atomic():
        _audit(actor, endpoint, "remove")
        endpoint.delete()
        _forget_endpoints()


def webhook_endpoint_send_test(*, actor: Actor, endpoint: WebhookEndpoint) -> DeliveryAttempt:
    """"Send test event": a ``webhook.test`` event to this endpoint only, sent now (one bounded
    try, not retried) and logged like any other; returns the try."""
    from memadmin.events import delivery

    with transaction.atomic():
        now = timezone.now()
        event = Event.objects.create(
            workspace=endpoint.workspace, type=TEST_EVENT, created_at=now,
            payload={"workspace": endpoint.workspace.slug, "endpoint": str(endpoint.pk),
                     "test": True, "actor": actor.label})
        pending = Delivery.objects.create(endpoint=endpoint, event=event, next_attempt_at=now)
        _audit(actor, endpoint, "test")
    return delivery.deliver_now(pending, retry=False)
