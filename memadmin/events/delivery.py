"""Sending the outbox: claim due deliveries, POST each signed body through the outbound policy,
log the try, and schedule a retry with exponential backoff when it failed.

At least once: a worker claims deliveries by setting ``locked_until`` (``SKIP LOCKED``, so two
workers never take the same row); if it dies mid-send the claim runs out and the next sweep
sends again, with the same ``webhook-id`` (receivers deduplicate on it, as the Standard Webhooks
spec asks). A 2xx answer is success; anything else, a refusal by the outbound policy, a
connection error or the deadline is a failure, retried after ``RETRY * 2**(tries-1)`` seconds
(with up to 10% jitter, capped at a day) until ``MEMADMIN_WEBHOOK_MAX_ATTEMPTS`` tries.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import random
import time
from collections.abc import Callable

import httpx
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memadmin.events import signing
from memadmin.events.models import Delivery, DeliveryAttempt, Event, WebhookEndpoint
from memadmin.lib import outbound
from memadmin.lib.failpoints import failpoint

logger = logging.getLogger(__name__)
BATCH = 20
#: How much of an answer is read (its body is not used; reading bounds a trickling server).
ANSWER_BYTES = 4096
MAX_BACKOFF = dt.timedelta(days=1)


def body_of(event: Event) -> bytes:
    """The delivered body: Standard Webhooks' ``{type, timestamp, data}``, the same bytes on
    every retry."""
    return json.dumps({"type": event.type, "timestamp": event.created_at.isoformat(),
                       "data": event.payload}, separators=(",", ":"),
                      sort_keys=True).encode("utf-8")


def backoff(tries: int, jitter: Callable[[], float] = random.random) -> dt.timedelta:
    """The wait after the ``tries``-th failed try."""
    base = settings.MEMADMIN_WEBHOOK_RETRY_SECONDS * 2 ** max(0, tries - 1)
    wait = dt.timedelta(seconds=base * (1 + 0.1 * jitter()))
    return min(wait, MAX_BACKOFF)


def _lease() -> dt.timedelta:
    return dt.timedelta(seconds=settings.MEMADMIN_WEBHOOK_TIMEOUT_SECONDS * 2 + 30)


def claim(now: dt.datetime, limit: int = BATCH) -> list[tuple[Delivery, dt.datetime]]:
    """Take up to ``limit`` due deliveries of enabled endpoints, oldest first."""
    until = now + _lease()
    with transaction.atomic():
        ids = list(Delivery.objects.select_for_update(skip_locked=True, of=("self",))
                   .filter(Q(locked_until__isnull=True) | Q(locked_until__lt=now),
                           state="pending", next_attempt_at__lte=now, endpoint__enabled=True)
                   .order_by("next_attempt_at", "created_at")
                   .values_list("id", flat=True)[:limit])
        Delivery.objects.filter(pk__in=ids).update(locked_until=until)
    rows = Delivery.objects.filter(pk__in=ids).select_related("endpoint", "event")
    return [(row, until) for row in rows]


def _post(endpoint: WebhookEndpoint, event: Event) -> tuple[int | None, str]:
    """(status code or None, error or "") of one signed POST, within the deadline."""
    body = body_of(event)
    timeout = float(settings.MEMADMIN_WEBHOOK_TIMEOUT_SECONDS)
    deadline = time.monotonic() + timeout
    headers = {**signing.headers(endpoint.secret, event.msg_id, int(time.time()), body),
               "user-agent": "memadmin-webhooks"}
    try:
        with outbound.client(timeout=httpx.Timeout(timeout)) as client, \
                client.stream("POST", endpoint.url, content=body, headers=headers) as answer:
            read = 0
            for chunk in answer.iter_raw():
                read += len(chunk)
                if read >= ANSWER_BYTES:
                    break
                if time.monotonic() > deadline:
                    return answer.status_code, "the answer took longer than the deadline"
            status = answer.status_code
    except outbound.OutboundRefused as exc:
        return None, exc.message
    except httpx.TimeoutException:
        return None, f"no answer within {timeout:g} s"
    except httpx.HTTPError as exc:
        return None, f"could not connect ({type(exc).__name__})"
    if time.monotonic() > deadline:
        return status, "the answer took longer than the deadline"
    if 300 <= status < 400:
        return status, "redirects are not followed"
    return status, "" if 200 <= status < 300 else f"the endpoint answered {status}"


def send(delivery: Delivery, until: dt.datetime | None, *, retry: bool = True
         ) -> DeliveryAttempt:
    """One try of a claimed delivery; records it and what comes next."""
    endpoint, event = delivery.endpoint, delivery.event
    failpoint("webhook.send", delivery=str(delivery.pk), attempt=delivery.attempts + 1)
    started, at = time.monotonic(), timezone.now()
    status, error = _post(endpoint, event)
    took = int((time.monotonic() - started) * 1000)
    ok = not error
    number = delivery.attempts + 1
    now = timezone.now()
    fields: dict[str, object] = {"attempts": number, "last_status": status,
                                 "last_error": error[:300], "locked_until": None}
    if ok:
        fields |= {"state": "delivered", "delivered_at": now}
    elif not retry or number >= settings.MEMADMIN_WEBHOOK_MAX_ATTEMPTS:
        fields |= {"state": "failed"}
    else:
        fields |= {"next_attempt_at": now + backoff(number)}
    with transaction.atomic():
        mine = Delivery.objects.filter(pk=delivery.pk, state="pending")
        if until is not None:
            mine = mine.filter(locked_until=until)
        if not mine.update(**fields):
            logger.warning("webhook delivery %s: claim lost while sending", delivery.pk)
        attempt = DeliveryAttempt.objects.create(
            delivery=delivery, endpoint=endpoint, number=number, at=at, status_code=status,
            duration_ms=took, ok=ok, error=error[:300])
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
            **({"last_success_at": now} if ok else {"last_failure_at": now}))
    for name, value in fields.items():
        setattr(delivery, name, value)
    return attempt


def deliver_now(delivery: Delivery, *, retry: bool = True) -> DeliveryAttempt:
    """Claim one delivery (whatever its endpoint's state) and send it now."""
    until = timezone.now() + _lease()
    Delivery.objects.filter(pk=delivery.pk).update(locked_until=until)
    delivery = Delivery.objects.select_related("endpoint", "event").get(pk=delivery.pk)
    return send(delivery, until, retry=retry)


def deliver_due(now: dt.datetime | None = None, *, budget: float = 60.0) -> int:
    """Send what is due, batch after batch, for at most ``budget`` seconds; returns how many
    tries were made. Deliveries claimed but not sent in time are handed back."""
    started = time.monotonic()
    tried = 0
    while time.monotonic() - started < budget:
        batch = claim(now or timezone.now())
        if not batch:
            break
        for index, (delivery, until) in enumerate(batch):
            if time.monotonic() - started >= budget:
                Delivery.objects.filter(pk__in=[d.pk for d, _ in batch[index:]]).update(
                    locked_until=None)
                return tried
            send(delivery, until)
            tried += 1
    return tried


def due_exists(now: dt.datetime | None = None) -> bool:
    now = now or timezone.now()
    return Delivery.objects.filter(
        Q(locked_until__isnull=True) | Q(locked_until__lt=now), state="pending",
        next_attempt_at__lte=now, endpoint__enabled=True).exists()


def sweep() -> None:
    """Scheduler duty: ask a worker to send what is due (retries, and deliveries a dead
    worker had claimed)."""
    from memadmin.events.tasks import deliver_events_task

    if due_exists():
        deliver_events_task.enqueue()


def expire_log(now: dt.datetime | None = None) -> int:
    """Scheduler duty: drop events (with their deliveries and tries) older than
    ``MEMADMIN_WEBHOOK_LOG_DAYS`` that are no longer pending."""
    cutoff = (now or timezone.now()) - dt.timedelta(days=settings.MEMADMIN_WEBHOOK_LOG_DAYS)
    old = Event.objects.filter(created_at__lt=cutoff).exclude(deliveries__state="pending")
    removed, _ = old.delete()
    return removed
