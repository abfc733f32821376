"""Reads for the webhook pages."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet

from memadmin.events.models import DeliveryAttempt, WebhookEndpoint

LOG_ROWS = 50


def endpoint_list(workspace: Any) -> QuerySet[WebhookEndpoint]:
    return (WebhookEndpoint.objects.filter(workspace=workspace)
            .annotate(pending=Count("deliveries", filter=Q(deliveries__state="pending")),
                      failed=Count("deliveries", filter=Q(deliveries__state="failed")))
            .order_by("name"))


def endpoint_log(endpoint: WebhookEndpoint, limit: int = LOG_ROWS) -> list[DeliveryAttempt]:
    """The newest tries, with their event (type, id) and delivery (state, next try)."""
    return list(DeliveryAttempt.objects.filter(endpoint=endpoint)
                .select_related("delivery__event").order_by("-at", "-pk")[:limit])


def endpoint_counts(endpoint: WebhookEndpoint) -> dict[str, int]:
    rows = endpoint.deliveries.values("state").annotate(n=Count("pk"))
    counts = {"pending": 0, "delivered": 0, "failed": 0}
    counts.update({row["state"]: row["n"] for row in rows})
    return counts
