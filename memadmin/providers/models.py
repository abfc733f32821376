"""Provider configurations and what health polling observes of them."""

from __future__ import annotations

import datetime as dt
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from memadmin.lib.crypto import EncryptedTextField
from memadmin.lib.outbound import OutboundRefused, check_url
from memadmin.workspaces.models import Workspace, slug_validator

DEFAULT_HEALTH_DEADLINE_MS = {"local": 200, "http": 1000, "markdown": 200, "langgraph": 1000,
                              "mem0": 1000}
#: Kinds whose store memadmin does not own: agents write it directly (see providers/governed.py).
GOVERNED_KINDS = ("markdown", "langgraph", "mem0")


class ProviderConfig(models.Model):
    KIND_CHOICES = [("local", "Built-in PostgreSQL store"), ("http", "Remote HTTP provider"),
                    ("markdown", "Markdown memory folder"),
                    ("langgraph", "LangGraph store (PostgreSQL)"),
                    ("mem0", "Mem0 open-source memory")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="providers")
    slug = models.CharField(max_length=64, validators=[slug_validator])
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=KIND_CHOICES)
    url = models.URLField(max_length=500, blank=True)
    # Write-only: sent to the remote provider, never rendered, logged or exported. It cannot be
    # hashed because memadmin must present it, so it is encrypted at rest (the column holds a
    # Fernet token; forms cap the clear value at 500 characters).
    credential = EncryptedTextField(blank=True)
    # Kind-specific settings of governed stores (a folder, a namespace prefix, where the data
    # subject id lives); never secrets: those go in the credential.
    options = models.JSONField(default=dict, blank=True)
    health_deadline_ms = models.PositiveIntegerField(
        validators=[MinValueValidator(10), MaxValueValidator(30_000)]
    )
    request_deadline_ms = models.PositiveIntegerField(
        default=10_000, validators=[MinValueValidator(100), MaxValueValidator(60_000)]
    )
    enabled = models.BooleanField(default=True)
    probed = models.BooleanField(
        default=False, help_text="Unprobed providers are shown as such and never polled."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "slug"], name="provider_slug_unique"),
            models.CheckConstraint(condition=models.Q(kind__in=["local", "http", "markdown",
                                                                 "langgraph", "mem0"]),
                                   name="provider_kind_valid"),
            models.CheckConstraint(condition=~models.Q(kind="http", url=""),
                                   name="provider_http_needs_url"),
            models.CheckConstraint(condition=models.Q(health_deadline_ms__gte=10,
                                                      health_deadline_ms__lte=30_000),
                                   name="provider_health_deadline_range"),
            models.CheckConstraint(condition=models.Q(request_deadline_ms__gte=100,
                                                      request_deadline_ms__lte=60_000),
                                   name="provider_request_deadline_range"),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        if not self.health_deadline_ms:
            self.health_deadline_ms = DEFAULT_HEALTH_DEADLINE_MS.get(self.kind, 1000)
        super().save(*args, **kwargs)

    def clean(self) -> None:
        from urllib.parse import urlsplit

        if self.url:
            parts = urlsplit(self.url)
            if parts.username or parts.password:
                # Secrets belong in the write-only credential field, not in a URL that is shown.
                raise ValidationError({"url": "Put credentials in the credential field, "
                                              "not in the URL."})
            if parts.query or parts.fragment:
                raise ValidationError({"url": "The URL must not have a query or fragment."})
            try:
                check_url(self.url)
            except OutboundRefused as exc:
                raise ValidationError({"url": exc.message}) from None

    @property
    def request_deadline(self) -> float:
        """The request deadline in seconds, as the provider contract takes it."""
        return self.request_deadline_ms / 1000

    @property
    def agents_write_directly(self) -> bool:
        """A store agents also write directly: memadmin's freezes bind only its own writes."""
        return self.kind in GOVERNED_KINDS


class HealthCheck(models.Model):
    """One observation of one provider."""

    id = models.BigAutoField(primary_key=True)
    provider = models.ForeignKey(ProviderConfig, on_delete=models.CASCADE,
                                 related_name="health_checks")
    ok = models.BooleanField()
    message = models.CharField(max_length=300, blank=True)
    latency_ms = models.FloatField()
    checked_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["provider", "-checked_at"], name="healthcheck_recent")]


HEALTH_STATES = ["ok", "degraded", "down", "unknown", "stale", "disabled", "unprobed"]


class ProviderHealth(models.Model):
    """A provider's current health state, and the lease that keeps two polls from overlapping."""

    provider = models.OneToOneField(ProviderConfig, on_delete=models.CASCADE, primary_key=True,
                                    related_name="health")
    state = models.CharField(max_length=10, default="unknown")
    message = models.CharField(max_length=300, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    last_checked_at = models.DateTimeField(null=True, blank=True)
    last_ok_at = models.DateTimeField(null=True, blank=True)
    in_flight_until = models.DateTimeField(null=True, blank=True)
    last_manual_check_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(state__in=HEALTH_STATES),
                                   name="provider_health_state_valid"),
        ]


class HealthTransition(models.Model):
    id = models.BigAutoField(primary_key=True)
    provider = models.ForeignKey(ProviderConfig, on_delete=models.CASCADE,
                                 related_name="health_transitions")
    from_state = models.CharField(max_length=10)
    to_state = models.CharField(max_length=10)
    message = models.CharField(max_length=300, blank=True)
    at = models.DateTimeField()
    # Whether an alert went out for it: a flapping provider pages once per quiet period, a
    # recovery is announced only when its outage was, and maintenance mutes both.
    alerted = models.BooleanField(default=False)
    muted_reason = models.CharField(max_length=100, blank=True)

    class Meta:
        indexes = [models.Index(fields=["provider", "-at"], name="healthtransition_recent")]


class GovernedItem(models.Model):
    """What memadmin knows of one item of a store it governs but does not own (``markdown``,
    ``langgraph``, ``mem0``): the revision it has seen, the hash of the content it last saw (a
    different hash means someone else changed the item: the revision moves on), and the item's
    quarantine state. Never the content itself. Deleted with the item."""

    id = models.BigAutoField(primary_key=True)
    provider = models.ForeignKey(ProviderConfig, on_delete=models.CASCADE,
                                 related_name="governed_items")
    item_ref = models.CharField(max_length=1024)
    revision = models.PositiveIntegerField(default=1)
    content_hash = models.CharField(max_length=64)
    quarantine_state = models.CharField(max_length=10, default="clear")
    # The scanner's rule-set version the current content was scanned with (blank: not yet):
    # what agents write directly is scanned when memadmin first sees it, and again after a
    # rule change.
    scanned_with = models.CharField(max_length=40, blank=True)
    first_seen_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "item_ref"],
                                    name="governeditem_unique"),
            models.CheckConstraint(
                condition=models.Q(quarantine_state__in=["clear", "pending", "released"]),
                name="governeditem_quarantine_valid"),
        ]


class AlertDelivery(models.Model):
    """One attempt to deliver one alert (or a test alert) to one target: the delivery log."""

    id = models.BigAutoField(primary_key=True)
    target = models.ForeignKey("workspaces.AlertTarget", on_delete=models.CASCADE,
                               related_name="deliveries")
    transition = models.ForeignKey(HealthTransition, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    test = models.BooleanField(default=False)
    ok = models.BooleanField()
    detail = models.CharField(max_length=300, blank=True)
    attempt = models.PositiveIntegerField(default=1)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["target", "-at"], name="alertdelivery_recent")]


class MaintenanceWindow(models.Model):
    """Planned work on one provider, or on every provider of a workspace: alerts are muted,
    the panel shows a banner, and uptime reports the window apart."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    provider = models.ForeignKey(ProviderConfig, null=True, blank=True,
                                 on_delete=models.CASCADE, related_name="maintenance_windows")
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    reason = models.CharField(max_length=300)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(ends_at__gt=models.F("starts_at")),
                                   name="maintenance_ends_after_start"),
        ]
        indexes = [models.Index(fields=["workspace", "ends_at"], name="maintenance_open")]

    def clean(self) -> None:
        if self.starts_at and self.ends_at and self.ends_at <= self.starts_at:
            raise ValidationError({"ends_at": "The window must end after it starts."})
        if self.starts_at and self.ends_at and self.ends_at - self.starts_at > dt.timedelta(days=7):
            raise ValidationError({"ends_at": "A maintenance window lasts at most 7 days."})


class IncidentNote(models.Model):
    """An operator's note on an incident; an incident is named by the transition that opened it."""

    id = models.BigAutoField(primary_key=True)
    transition = models.OneToOneField(HealthTransition, on_delete=models.CASCADE,
                                      related_name="note")
    text = models.CharField(max_length=1000)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                               on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)
