"""Memory events and the webhooks that carry them.

``Event`` is the outbox: a row written in the same transaction as the memory change it
describes (so an event exists exactly when its change committed). Each enabled endpoint
subscribed to the event's type gets one ``Delivery`` row in that transaction too; the delivery
duty sends it, retries it with backoff and logs every try as a ``DeliveryAttempt``.
Bodies hold ids, names, revisions and hashes, never memory content or a clear subject id.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from memadmin.lib.crypto import EncryptedTextField
from memadmin.workspaces.models import Workspace

EVENT_TYPES: dict[str, str] = {
    "item.created": "an item was written for the first time",
    "item.updated": "an item's content changed (a new revision)",
    "item.deleted": "an item was deleted (by a person, an agent or an erasure)",
    "item.quarantined": "the scanner (or a reviewer) put an item in quarantine",
    "item.released": "a reviewer released an item from quarantine",
    "item.expired": "a retention policy removed an item",
    "subject.erased": "an erasure request finished (the subject as a keyed hash)",
}
TEST_EVENT = "webhook.test"
DELIVERY_STATES = ["pending", "delivered", "failed"]


class WebhookEndpoint(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE,
                                  related_name="webhook_endpoints")
    name = models.CharField(max_length=100)
    url = models.URLField(max_length=1000)
    #: The ``whsec_`` signing secret: encrypted at rest, never rendered after it is shown once.
    secret = EncryptedTextField()
    #: Event types it receives; empty means every type.
    event_types = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    enabled = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_failure_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="webhook_endpoint_name"),
        ]

    def __str__(self) -> str:
        return self.name

    def receives(self, event_type: str) -> bool:
        return not self.event_types or event_type in self.event_types


class Event(models.Model):
    """One memory change, as its webhook body says it (``payload`` is the ``data`` object)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="events")
    type = models.CharField(max_length=40)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"], name="event_recent")]

    @property
    def msg_id(self) -> str:
        """The ``webhook-id``: the same on every retry, so receivers can deduplicate."""
        return f"msg_{self.id.hex}"


class Delivery(models.Model):
    """An event on its way to one endpoint."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE,
                                 related_name="deliveries")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    state = models.CharField(max_length=10, default="pending")
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    #: A worker sending it holds it until then; a crashed worker's claim simply runs out.
    locked_until = models.DateTimeField(null=True, blank=True)
    last_status = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event"], name="delivery_once"),
            models.CheckConstraint(condition=models.Q(state__in=DELIVERY_STATES),
                                   name="delivery_state"),
        ]
        indexes = [
            models.Index(fields=["next_attempt_at"], name="delivery_due",
                         condition=models.Q(state="pending")),
        ]


class DeliveryAttempt(models.Model):
    """One try: the delivery log shown per endpoint."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="tries")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE,
                                 related_name="attempts")
    number = models.PositiveIntegerField()
    at = models.DateTimeField()
    status_code = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField()
    ok = models.BooleanField()
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        indexes = [models.Index(fields=["endpoint", "-at"], name="attempt_recent")]
