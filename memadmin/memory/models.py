"""The built-in store's memory rows, agent tokens, freezes and write deduplication."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F
from django.db.models.functions import Collate

from memadmin.providers.contract import DOCUMENT_TIERS, QUARANTINE_STATES, TIERS
from memadmin.workspaces.models import HashedSecret, Namespace, Resource, Workspace

SEARCH_CONFIG = "english"
DAILY_KEY_RE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
SLUG_KEY_RE = r"^[A-Za-z0-9_-]{1,128}$"


class MemoryItem(models.Model):
    """One memory document or entry. ``(namespace, tier, key)`` is unique."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="items",
                                  db_index=False)  # led by memoryitem_keyset and the unique key
    tier = models.CharField(max_length=10, choices=[(t, t) for t in TIERS])
    key = models.CharField(max_length=128, blank=True, default="")
    content = models.TextField()
    bytes = models.PositiveIntegerField()
    revision = models.PositiveIntegerField(default=1)
    data_subject_id = models.CharField(max_length=256, null=True, blank=True)
    quarantine_state = models.CharField(
        max_length=10, default="clear", choices=[(s, s) for s in QUARANTINE_STATES]
    )
    updated_by = models.CharField(max_length=200, default="system")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    # Personal data and secrets the detector found in ``content`` (memadmin.privacy): the
    # types (the item list's filter), the spans ([start, end, type], for redaction on recall;
    # None = written before detection ran) and keyed hashes of the e-mail addresses and phone
    # numbers (subject-request suggestions; never the values themselves).
    pii_types = ArrayField(models.CharField(max_length=16), default=list, db_default=[],
                           blank=True)
    pii_spans = models.JSONField(null=True, blank=True)
    pii_keys = ArrayField(models.CharField(max_length=80), default=list, db_default=[],
                          blank=True)
    #: Set by the editor or the agent (``expiresAt``): the retention duty deletes the item
    #: once this time has passed (unless frozen or held).
    expires_at = models.DateTimeField(null=True, blank=True)
    search_vector = models.GeneratedField(
        expression=SearchVector("key", weight="A", config=SEARCH_CONFIG)
        + SearchVector("content", weight="B", config=SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["namespace", "tier", "key"], name="memoryitem_unique"),
            models.CheckConstraint(condition=models.Q(tier__in=TIERS), name="memoryitem_tier"),
            models.CheckConstraint(condition=models.Q(quarantine_state__in=QUARANTINE_STATES),
                                   name="memoryitem_quarantine_state"),
            models.CheckConstraint(condition=models.Q(revision__gte=1),
                                   name="memoryitem_revision_positive"),
            models.CheckConstraint(
                condition=(models.Q(tier__in=sorted(DOCUMENT_TIERS), key="")
                           | models.Q(tier="daily", key__regex=DAILY_KEY_RE)
                           | models.Q(tier__in=["peers", "facts"], key__regex=SLUG_KEY_RE)),
                name="memoryitem_key_rules",
            ),
        ]
        indexes = [
            GinIndex(fields=["search_vector"], name="memoryitem_search"),
            models.Index(fields=["namespace", "-updated_at", "-id"], name="memoryitem_keyset"),
            # The item list's other orders, and its key-prefix filter (a range on the
            # code-point-ordered key, whatever the database's collation).
            models.Index(F("namespace"), Collate("key", "C"), F("id"),
                         name="memoryitem_key_order"),
            models.Index(F("namespace"), F("bytes").desc(), F("id").desc(),
                         name="memoryitem_size_order"),
            # The retention duty's expired items (few carry an expiry).
            models.Index(fields=["expires_at"], name="memoryitem_expiry",
                         condition=models.Q(expires_at__isnull=False)),
            # Batch jobs (recount, delete, export) walk a namespace by id.
            models.Index(fields=["namespace", "id"], name="memoryitem_namespace_id"),
            models.Index(fields=["data_subject_id"], name="memoryitem_subject",
                         condition=models.Q(data_subject_id__isnull=False)),
            models.Index(fields=["namespace", "quarantine_state"], name="memoryitem_quarantined",
                         condition=~models.Q(quarantine_state="clear")),
            GinIndex(fields=["pii_types"], name="memoryitem_pii_types"),
            GinIndex(fields=["pii_keys"], name="memoryitem_pii_keys"),
        ]

    def __str__(self) -> str:
        return f"{self.tier}/{self.key}" if self.key else self.tier


class MemoryRevision(models.Model):
    """A previous version of an item, kept on every change. Deleted with the item."""

    id = models.BigAutoField(primary_key=True)
    item = models.ForeignKey(MemoryItem, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveIntegerField()
    content = models.TextField()
    bytes = models.PositiveIntegerField()
    actor = models.CharField(max_length=200)
    created_at = models.DateTimeField()
    # The item's quarantine state while this was its content: a withheld version stays
    # withheld in revision lists and diffs after the item moves on.
    quarantine_state = models.CharField(
        max_length=10, default="clear", choices=[(s, s) for s in QUARANTINE_STATES]
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "revision"], name="memoryrevision_unique"),
            models.CheckConstraint(condition=models.Q(quarantine_state__in=QUARANTINE_STATES),
                                   name="memoryrevision_quarantine_state"),
        ]


class NamespaceCounter(models.Model):
    """Items and bytes per namespace, kept by ``providers.local`` in the writer's transaction.

    ``version`` moves on every write; it is the recall cursor (a snapshot marker).
    """

    namespace = models.OneToOneField(Namespace, on_delete=models.CASCADE, primary_key=True,
                                     related_name="counter")
    items = models.BigIntegerField(default=0)
    bytes = models.BigIntegerField(default=0)
    version = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(items__gte=0, bytes__gte=0),
                                   name="namespacecounter_non_negative"),
        ]


class AgentToken(HashedSecret):
    """A bearer token an owner mints for agents, reaching only its namespaces."""

    ACCESS_CHOICES = [("read", "Read"), ("read-write", "Read and write")]

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE,
                                  related_name="agent_tokens")
    namespaces = models.ManyToManyField(Namespace, related_name="agent_tokens")
    access = models.CharField(max_length=10, choices=ACCESS_CHOICES, default="read")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(access__in=["read", "read-write"]),
                                   name="agenttoken_access"),
        ]


def freeze_container_where(level: str, partition: str | None, resource: str | None,
                           namespaces: dict[str, Namespace]) -> dict[str, Any] | None:
    """The Freeze columns naming a namespace or resource target among ``namespaces`` (a scope's,
    by partition key); None for an item target, whose reference each store resolves itself.
    Raises LookupError for a namespace or resource outside the scope."""
    if level == "namespace":
        if partition not in namespaces:
            raise LookupError("that namespace is not in this scope")
        ns = namespaces[partition]
        return {"level": "namespace", "namespace": ns, "workspace_id": ns.resource.workspace_id}
    if level == "resource":
        for ns in namespaces.values():
            if ns.resource.slug == resource:
                return {"level": "resource", "resource": ns.resource,
                        "workspace_id": ns.resource.workspace_id}
        raise LookupError("that resource is not in this scope")
    return None


class Freeze(models.Model):
    """A freeze (owner) or legal hold (compliance) on a resource, namespace or one item.

    A target is frozen while it or an ancestor has a row with ``lifted_at`` unset. Item targets
    are references (provider + the provider's item id) so remote items can be frozen too.
    """

    LEVEL_CHOICES = [("resource", "Resource"), ("namespace", "Namespace"), ("item", "Item")]
    KIND_CHOICES = [("freeze", "Freeze"), ("legal_hold", "Legal hold")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="freezes")
    level = models.CharField(max_length=10, choices=LEVEL_CHOICES)
    resource = models.ForeignKey(Resource, null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="freezes")
    namespace = models.ForeignKey(Namespace, null=True, blank=True, on_delete=models.CASCADE,
                                  related_name="freezes")
    provider = models.ForeignKey("providers.ProviderConfig", null=True, blank=True,
                                 on_delete=models.CASCADE, related_name="item_freezes")
    item_ref = models.CharField(max_length=1024, null=True, blank=True)
    kind = models.CharField(max_length=12, choices=KIND_CHOICES)
    reason = models.CharField(max_length=1000)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_by_label = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    lifted_at = models.DateTimeField(null=True, blank=True)
    lifted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                  on_delete=models.SET_NULL, related_name="+")
    lifted_by_label = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(level="resource", resource__isnull=False, namespace__isnull=True,
                             item_ref__isnull=True)
                    | models.Q(level="namespace", namespace__isnull=False,
                               resource__isnull=True, item_ref__isnull=True)
                    | models.Q(level="item", provider__isnull=False, item_ref__isnull=False,
                               resource__isnull=True, namespace__isnull=True)
                ),
                name="freeze_target_shape",
            ),
            models.CheckConstraint(condition=models.Q(kind__in=["freeze", "legal_hold"]),
                                   name="freeze_kind"),
            models.UniqueConstraint(
                fields=["level", "resource", "namespace", "provider", "item_ref", "kind"],
                condition=models.Q(lifted_at__isnull=True), nulls_distinct=False,
                name="freeze_one_active_per_target",
            ),
        ]
        indexes = [
            models.Index(fields=["provider", "item_ref"], name="freeze_item_active",
                         condition=models.Q(lifted_at__isnull=True, level="item")),
        ]


class OperationRecord(models.Model):
    """A write already applied, by (scope, operation id): replays answer the stored result."""

    id = models.BigAutoField(primary_key=True)
    scope_key = models.CharField(max_length=200)
    operation_hash = models.CharField(max_length=64)
    request_hash = models.CharField(max_length=64)
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope_key", "operation_hash"],
                                    name="operationrecord_unique"),
        ]


RETENTION_ACTIONS = [("delete", "Delete"), ("archive", "Archive to an export file, then delete")]
RETENTION_RULES = [("idle", "not updated for N days"), ("age", "older than N days")]
RETENTION_MAX_DAYS = 36_500


class RetentionPolicy(models.Model):
    """Remove the items of a resource or one namespace (optionally of one tier) that are older,
    or idle for longer, than ``days``. Applied by a scheduled job; frozen and held items stay.

    ``tier`` empty means every tier. A resource policy and a namespace policy both apply to a
    namespace of that resource (each removes what it matches, so the stricter one wins).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE,
                                  related_name="retention_policies")
    resource = models.ForeignKey(Resource, null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="retention_policies")
    namespace = models.ForeignKey(Namespace, null=True, blank=True, on_delete=models.CASCADE,
                                  related_name="retention_policies")
    tier = models.CharField(max_length=10, blank=True, default="",
                            choices=[("", "every tier")] + [(t, t) for t in TIERS])
    action = models.CharField(max_length=10, choices=RETENTION_ACTIONS)
    rule = models.CharField(max_length=10, choices=RETENTION_RULES)
    days = models.PositiveIntegerField()
    created_by_label = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    next_run_at = models.DateTimeField()
    last_run_at = models.DateTimeField(null=True, blank=True)
    last_job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(resource__isnull=False, namespace__isnull=True)
                           | models.Q(resource__isnull=True, namespace__isnull=False)),
                name="retention_one_target"),
            models.CheckConstraint(condition=models.Q(tier="") | models.Q(tier__in=TIERS),
                                   name="retention_tier"),
            models.CheckConstraint(condition=models.Q(action__in=["delete", "archive"]),
                                   name="retention_action"),
            models.CheckConstraint(condition=models.Q(rule__in=["idle", "age"]),
                                   name="retention_rule"),
            models.CheckConstraint(
                condition=models.Q(days__gte=1, days__lte=RETENTION_MAX_DAYS),
                name="retention_days_range"),
            models.UniqueConstraint(fields=["resource", "tier"], name="retention_one_per_resource",
                                    condition=models.Q(resource__isnull=False)),
            models.UniqueConstraint(fields=["namespace", "tier"],
                                    name="retention_one_per_namespace",
                                    condition=models.Q(namespace__isnull=False)),
        ]
        indexes = [models.Index(fields=["next_run_at"], name="retention_due")]

    @property
    def target_label(self) -> str:
        target = (f"namespace {self.namespace.slug}" if self.namespace_id and self.namespace
                  else f"resource {self.resource.slug}" if self.resource else "")
        return f"{target}, {self.tier or 'every tier'}"

    @property
    def summary(self) -> str:
        verb = "Archive, then delete" if self.action == "archive" else "Delete"
        what = f"the {self.tier} items" if self.tier else "items"
        rule = (f"not updated for {self.days} days" if self.rule == "idle"
                else f"older than {self.days} days")
        return f"{verb} {what} {rule}"
