"""What the prompt-injection scanner rejected (or a remote provider labelled), and reviews."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from memadmin.workspaces.models import Namespace, Workspace


class QuarantineEntry(models.Model):
    # pending: awaiting review (the item is hidden from agents); kept: a reviewer kept it
    # quarantined; released / purged: a reviewer's decision; superseded: a later write replaced
    # the flagged content (the entry stays as history, the new content was scanned afresh).
    STATE_CHOICES = [("pending", "Pending"), ("kept", "Kept"), ("released", "Released"),
                     ("purged", "Purged"), ("superseded", "Superseded")]
    OPEN_STATES = ("pending", "kept")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE,
                                  related_name="quarantine_entries")
    provider = models.ForeignKey("providers.ProviderConfig", on_delete=models.CASCADE,
                                 related_name="quarantine_entries")
    namespace = models.ForeignKey(Namespace, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="quarantine_entries")
    # For the built-in store the item itself (its deletion removes the entry: erasure leaves no
    # matched spans behind); for remote providers only the reference.
    item = models.ForeignKey("memory.MemoryItem", null=True, blank=True,
                             on_delete=models.CASCADE, related_name="quarantine_entries")
    item_ref = models.CharField(max_length=1024)
    label = models.CharField(max_length=300)
    remote = models.BooleanField(default=False, help_text="Reported by a remote provider.")
    rule_ids = models.JSONField(default=list)
    spans = models.JSONField(default=list, help_text="[[start, end, rule_id], ...]")
    ruleset_version = models.CharField(max_length=40, blank=True)
    content_hash = models.CharField(max_length=64, blank=True)
    state = models.CharField(max_length=10, choices=STATE_CHOICES, default="pending")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="+")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    note = models.CharField(max_length=2000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(state__in=[
                "pending", "kept", "released", "purged", "superseded"]),
                                   name="quarantine_state_valid"),
            models.UniqueConstraint(fields=["provider", "item_ref"],
                                    condition=models.Q(state__in=["pending", "kept"]),
                                    name="quarantine_one_open_per_item"),
        ]
        indexes = [
            models.Index(fields=["workspace", "state", "-created_at"], name="quarantine_queue"),
        ]


class QuarantineAllow(models.Model):
    """Content a reviewer released and allow-listed: the same bytes are not flagged again."""

    id = models.BigAutoField(primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    content_hash = models.CharField(max_length=64)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "content_hash"],
                                    name="quarantine_allow_unique"),
        ]
