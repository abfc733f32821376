"""Workspaces (tenants), their resources and namespaces, roles and workspace credentials."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from guardian.models import GroupObjectPermissionBase, UserObjectPermissionBase

from memadmin.lib.crypto import EncryptedTextField

SLUG_RE = r"^[A-Za-z0-9_-]{1,128}$"
slug_validator = RegexValidator(SLUG_RE, "Use 1-128 letters, digits, hyphens or underscores.")

#: Roles are guardian object permissions. A workspace role applies to the whole workspace; the
#: owner role can also be granted on a single namespace.
WORKSPACE_ROLES = ("viewer", "operator", "owner", "compliance", "admin")
NAMESPACE_ROLES = ("owner",)
#: One item must travel in a 64 KiB wire body with its metadata (and JSON escaping).
ITEM_MAX_BYTES_LIMIT = 16_384


class Workspace(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    four_eyes_erasure = models.BooleanField(
        default=True,
        help_text="Erasure, rectification, restriction and lift requests need approval by a "
                  "second compliance user.",
    )
    subject_request_due_days = models.PositiveSmallIntegerField(
        default=30, validators=[MinValueValidator(1), MaxValueValidator(365)]
    )
    health_retention_days = models.PositiveSmallIntegerField(
        default=31, validators=[MinValueValidator(1), MaxValueValidator(400)],
        help_text="Days of health checks kept (the panel shows uptime per day for 30 days).",
    )
    wire_compliance = models.BooleanField(
        default=False,
        help_text="Admin credentials may carry compliance decisions over the wire: lift legal "
                  "holds, erase with overrideHold and read quarantined (pending) content.")
    # Read-only key in the public status badge URLs (None: badges are off).
    badge_key = models.CharField(max_length=64, null=True, blank=True, unique=True,
                                 editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        permissions = [(f"role_{role}", f"{role.capitalize()} of the workspace")
                       for role in WORKSPACE_ROLES]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(subject_request_due_days__gte=1,
                                   subject_request_due_days__lte=365),
                name="workspace_due_days_range",
            ),
            models.CheckConstraint(
                condition=models.Q(health_retention_days__gte=1, health_retention_days__lte=400),
                name="workspace_retention_range",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Resource(models.Model):
    """A declared memory resource of one provider (seed 001's ``defineMemory``)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="resources")
    provider = models.ForeignKey(
        "providers.ProviderConfig", on_delete=models.PROTECT, related_name="resources"
    )
    slug = models.CharField(max_length=64, validators=[slug_validator])
    description = models.CharField(max_length=500, blank=True)
    max_bytes = models.PositiveIntegerField(
        default=8192, validators=[MinValueValidator(1), MaxValueValidator(16384)],
        help_text="Cap on recalled text, in UTF-8 bytes (1-16,384).",
    )
    item_max_bytes = models.PositiveIntegerField(
        default=16384,
        validators=[MinValueValidator(1), MaxValueValidator(ITEM_MAX_BYTES_LIMIT)],
        help_text="Cap on one item's content, in UTF-8 bytes (1-16,384).",
    )
    tools = models.JSONField(default=list, blank=True)
    #: What the built-in store does with personal data it detects in a write (memadmin.privacy).
    pii_policy = models.CharField(
        max_length=20, default="record", choices=[
            ("record", "Record only: label the item"),
            ("redact_on_recall", "Redact on recall: agents get [email], [card]… in its place"),
            ("refuse", "Refuse the write"),
        ], verbose_name="personal data",
        help_text="Staff always see the item as written; labels are kept in every case.")
    #: Secrets (API keys, private keys, JWTs, tokens) are never stored in clear.
    secrets_policy = models.CharField(
        max_length=10, default="redact", choices=[
            ("redact", "Redact: store [api_key], [private_key]… in its place"),
            ("refuse", "Refuse the write"),
        ], verbose_name="secrets")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "slug"], name="resource_slug_unique"),
            models.CheckConstraint(condition=models.Q(max_bytes__gte=1, max_bytes__lte=16384),
                                   name="resource_max_bytes_range"),
            models.CheckConstraint(
                condition=models.Q(item_max_bytes__gte=1,
                                   item_max_bytes__lte=ITEM_MAX_BYTES_LIMIT),
                name="resource_item_max_bytes_range",
            ),
            models.CheckConstraint(
                condition=models.Q(pii_policy__in=["record", "redact_on_recall", "refuse"]),
                name="resource_pii_policy"),
            models.CheckConstraint(condition=models.Q(secrets_policy__in=["redact", "refuse"]),
                                   name="resource_secrets_policy"),
        ]

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        from memadmin.workspaces.tools import validate_tools

        try:
            validate_tools(self.tools)
        except ValidationError as exc:
            raise ValidationError({"tools": exc.messages}) from None


def derive_partition_key(*, workspace_id: uuid.UUID, environment: str, resource_slug: str,
                         namespace_slug: str) -> str:
    """``ocmem_v1_`` + a hash of what identifies the data. Stored once, never recomputed."""
    material = "\x1f".join([str(workspace_id), environment, resource_slug, namespace_slug])
    return "ocmem_v1_" + hashlib.sha256(material.encode()).hexdigest()[:40]


class Namespace(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    resource = models.ForeignKey(Resource, on_delete=models.PROTECT, related_name="namespaces")
    slug = models.CharField(max_length=128, validators=[slug_validator])
    description = models.CharField(max_length=500, blank=True)
    partition_key = models.CharField(max_length=200, unique=True, editable=False)
    quota_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        permissions = [("role_owner", "Owner of the namespace")]
        constraints = [
            models.UniqueConstraint(fields=["resource", "slug"], name="namespace_slug_unique"),
            models.CheckConstraint(condition=models.Q(slug__regex=SLUG_RE),
                                   name="namespace_slug_format"),
            models.CheckConstraint(condition=models.Q(partition_key__regex=r"^[A-Za-z0-9_.:-]{1,200}$"),
                                   name="namespace_partition_key_format"),
        ]

    def __str__(self) -> str:
        return self.slug


# guardian's direct foreign-key permission tables (the generic ones do not scale and outlive
# deleted objects).
class WorkspaceUserObjectPermission(UserObjectPermissionBase):
    content_object = models.ForeignKey(Workspace, on_delete=models.CASCADE)


class WorkspaceGroupObjectPermission(GroupObjectPermissionBase):
    content_object = models.ForeignKey(Workspace, on_delete=models.CASCADE)


class NamespaceUserObjectPermission(UserObjectPermissionBase):
    content_object = models.ForeignKey(Namespace, on_delete=models.CASCADE)


class NamespaceGroupObjectPermission(GroupObjectPermissionBase):
    content_object = models.ForeignKey(Namespace, on_delete=models.CASCADE)


#: A token's lifetime when the minter does not choose one (days); "never" is an explicit choice.
DEFAULT_TOKEN_LIFETIME_DAYS = 90
TOKEN_LIFETIME_CHOICES = [("7", "7 days"), ("30", "30 days"), ("90", "90 days"),
                          ("365", "1 year"), ("never", "Never (no expiry)")]


def usable_secrets(now: Any = None) -> models.Q:
    """The rows of a HashedSecret model that may authenticate now: not revoked, not suspended,
    not expired."""
    from django.utils import timezone

    now = now or timezone.now()
    return (models.Q(revoked_at__isnull=True, suspended_at__isnull=True)
            & (models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)))


class HashedSecret(models.Model):
    """A secret shown once: only its prefix (for display) and SHA-256 are kept.

    It expires at ``expires_at`` (None: never, chosen explicitly at minting) and is suspended
    (``suspended_at``, with a reason) when its minter loses the role that let them mint it;
    an admin can re-activate it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)
    secret_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    suspended_at = models.DateTimeField(null=True, blank=True)
    suspended_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        abstract = True

    @property
    def state(self) -> str:
        """``revoked``, ``expired``, ``suspended`` or ``active``."""
        from django.utils import timezone

        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return "expired"
        if self.suspended_at is not None:
            return "suspended"
        return "active"

    @property
    def active(self) -> bool:
        return self.state == "active"


class AdminCredential(HashedSecret):
    """A workspace's credential for admin operations on its endpoint."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE,
                                  related_name="admin_credentials")


class MetricsToken(HashedSecret):
    """Protects the workspace's Prometheus endpoint."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE,
                                  related_name="metrics_tokens")


def apprise_plugin(url: str) -> Any:
    """The Apprise plugin for ``url`` (it only parses: nothing is sent), or None if invalid.
    Apprise is imported here only, on use: it loads every notification plugin."""
    import apprise

    try:
        return apprise.Apprise.instantiate(url, suppress_exceptions=True) or None
    except Exception:  # noqa: BLE001 - a hostile URL must not turn into a 500
        return None


def alert_target_digest(kind: str, target: str) -> str:
    """What makes an alert target unique in its workspace without storing it in clear: the
    sha256 of kind and URL (an encrypted column cannot be compared)."""
    return hashlib.sha256(f"{kind}\n{target}".encode()).hexdigest()


def alert_target_display(kind: str, target: str) -> str:
    """What pages show of a target. URLs carry the secret that lets anyone post to the channel
    (a Slack or Teams webhook's path, an Apprise token), so an Apprise URL is shown as Apprise's
    own privacy rendering and a webhook as its origin only; an e-mail address as it is."""
    if kind == "email":
        return target
    if kind == "apprise":
        plugin = apprise_plugin(target)
        return plugin.url(privacy=True) if plugin is not None else "(invalid Apprise URL)"
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(target)
        port = parts.port
    except ValueError:
        return "(invalid URL)"
    origin = f"{parts.scheme}://{parts.hostname or ''}{f':{port}' if port else ''}/"
    hidden = parts.path not in ("", "/") or parts.query or parts.fragment
    return origin + ("…" if hidden else "")


class AlertTarget(models.Model):
    """Where health alerts go. ``target`` is a credential (see ``alert_target_display``): it is
    encrypted at rest and never rendered; ``target_display`` is the masked form pages show and
    ``target_digest`` keeps targets unique per workspace."""

    KIND_CHOICES = [("apprise", "Apprise URL"), ("webhook", "Webhook (JSON POST)"),
                    ("email", "Email")]
    TARGET_MAX_LENGTH = 1000

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE,
                                  related_name="alert_targets")
    kind = models.CharField(max_length=10, choices=KIND_CHOICES)
    target = EncryptedTextField(
        help_text="An Apprise URL (slack://, msteams://, discord://, pagerduty://, opsgenie://, "
                  "ntfy://, tgram://, mailto://, json:// …), a webhook URL or an email address.")
    target_digest = models.CharField(max_length=64, editable=False)
    target_display = models.CharField(max_length=1000, editable=False)
    enabled = models.BooleanField(default=True)
    on_degraded = models.BooleanField(
        default=False, help_text="Also alert when a provider becomes degraded (and recovers).")
    last_sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "kind", "target_digest"],
                                    name="alert_target_unique_digest",
                                    violation_error_message="This alert target already exists "
                                                            "in the workspace."),
            models.CheckConstraint(condition=models.Q(kind__in=["apprise", "webhook", "email"]),
                                   name="alert_target_kind_v2"),
        ]

    def save(self, *args: Any, **kwargs: Any) -> None:
        self._derive()
        super().save(*args, **kwargs)

    @property
    def display_target(self) -> str:
        """What pages show: never the secret parts of the URL."""
        return self.target_display

    def _derive(self) -> None:
        self.target_digest = alert_target_digest(self.kind, self.target)
        self.target_display = alert_target_display(self.kind, self.target)[:1000]

    def clean_fields(self, exclude: Any = None) -> None:
        self._derive()      # so the unique check in validate_constraints sees the digest
        super().clean_fields(exclude)

    def clean(self) -> None:
        from django.core.validators import EmailValidator, URLValidator

        if len(self.target) > self.TARGET_MAX_LENGTH:
            raise ValidationError({"target": f"At most {self.TARGET_MAX_LENGTH} characters."})
        if self.kind == "apprise":
            if apprise_plugin(self.target) is None:
                raise ValidationError({"target": "Apprise does not recognise this URL; see "
                                                 "https://github.com/caronc/apprise/wiki for "
                                                 "the schemes (slack://, ntfy://, json:// …)."})
            return
        validator = (URLValidator(schemes=["http", "https"]) if self.kind == "webhook"
                     else EmailValidator())
        try:
            validator(self.target)
        except ValidationError:
            what = "an http(s) URL" if self.kind == "webhook" else "an email address"
            raise ValidationError({"target": f"Enter {what}."}) from None
        if self.kind == "webhook":
            from memadmin.lib.outbound import OutboundRefused, check_url

            try:
                check_url(self.target)
            except OutboundRefused as exc:
                raise ValidationError({"target": exc.message}) from None


class WorkspaceSettingChange(models.Model):
    """A settings change that needs a second admin: one admin asks, another confirms.

    Only loosening four-eyes erasure goes this way; it applies when confirmed. At most one
    pending change per setting and workspace.
    """

    SETTINGS = ("four_eyes_erasure",)
    STATE_CHOICES = [("pending", "Pending"), ("confirmed", "Confirmed"),
                     ("cancelled", "Cancelled")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE,
                                  related_name="setting_changes")
    setting = models.CharField(max_length=40)
    value = models.JSONField()
    state = models.CharField(max_length=10, choices=STATE_CHOICES, default="pending")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                     on_delete=models.SET_NULL, related_name="+")
    requested_by_label = models.CharField(max_length=200)
    requested_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(setting__in=["four_eyes_erasure"]),
                                   name="setting_change_setting"),
            models.CheckConstraint(
                condition=models.Q(state__in=["pending", "confirmed", "cancelled"]),
                name="setting_change_state"),
            models.UniqueConstraint(fields=["workspace", "setting"],
                                    condition=models.Q(state="pending"),
                                    name="setting_change_one_pending"),
        ]
