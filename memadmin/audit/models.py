"""The audit trail: append-only, one hash chain per workspace (plus one for global events)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from memadmin.workspaces.models import Workspace

GLOBAL_CHAIN = "global"


class AuditChainHead(models.Model):
    """The last link of one chain, locked FOR UPDATE by every append."""

    chain = models.CharField(max_length=40, primary_key=True)
    seq = models.BigIntegerField(default=0)
    hash = models.CharField(max_length=64, default="0" * 64)


class AuditEvent(models.Model):
    id = models.BigAutoField(primary_key=True)
    chain = models.CharField(max_length=40)
    seq = models.BigIntegerField()
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.DO_NOTHING,
                                  db_constraint=False, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.DO_NOTHING, db_constraint=False, related_name="+")
    actor_label = models.CharField(max_length=200)
    action = models.CharField(max_length=60)
    target_type = models.CharField(max_length=40, blank=True)
    target_id = models.CharField(max_length=1024, blank=True)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    # The MEMADMIN_AUDIT_KEYS key id of the HMAC in ``hash``; empty for an event written before
    # the chain was keyed (a plain SHA-256, see memadmin/audit/services.py).
    key_id = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        ordering = ["chain", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["chain", "seq"], name="audit_chain_seq_unique"),
        ]
        # The audit pages read keyset ranges, newest first, ordered by (created_at, id): one
        # index per filter that narrows by equality (memadmin/audit/selectors.py).
        indexes = [
            models.Index(fields=["workspace", "-created_at", "-id"], name="audit_recent"),
            models.Index(fields=["workspace", "action", "-created_at", "-id"],
                         name="audit_by_action"),
            models.Index(fields=["workspace", "actor_label", "-created_at", "-id"],
                         name="audit_by_actor"),
        ]
