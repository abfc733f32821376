"""Long operations. The task backend only delivers "run job X"; the job's truth is this row."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from memadmin.workspaces.models import Workspace

JOB_STATES = ["queued", "running", "succeeded", "failed", "cancelled"]
JOB_TITLES = {
    "memory_bulk_delete": "Delete everything matching filters",
    "memory_export": "Export memory",
    "memory_import": "Import memory",
    "namespace_recount": "Recount a namespace",
    "retention_run": "Apply a retention policy",
    "health_alert": "Send a health alert",
    "quarantine_rescan": "Rescan memory with the current scanner rules",
    "quarantine_remote_sync": "Refresh remote quarantine labels",
    "subject_request_run": "Run a data-subject request",
}


class Job(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE,
                                  related_name="jobs")
    kind = models.CharField(max_length=40)
    params = models.JSONField(default=dict)
    state = models.CharField(max_length=10, default="queued")
    progress_done = models.BigIntegerField(default=0)
    progress_total = models.BigIntegerField(null=True, blank=True)
    # Where to resume: each job kind keeps its own cursor/step marker here.
    checkpoint = models.JSONField(default=dict)
    result = models.JSONField(default=dict)
    result_file = models.CharField(max_length=300, blank=True)
    result_expires_at = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=2000, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    max_attempts = models.PositiveIntegerField(default=5)
    cancel_requested = models.BooleanField(default=False)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(state__in=JOB_STATES), name="job_state"),
            models.CheckConstraint(condition=models.Q(progress_done__gte=0),
                                   name="job_progress_non_negative"),
        ]
        indexes = [
            models.Index(fields=["state", "lease_until"], name="job_lease",
                         condition=models.Q(state__in=["queued", "running"])),
            models.Index(fields=["workspace", "-created_at"], name="job_recent"),
        ]

    @property
    def title(self) -> str:
        return JOB_TITLES.get(self.kind, self.kind.replace("_", " ").capitalize())

    @property
    def finished(self) -> bool:
        return self.state in {"succeeded", "failed", "cancelled"}

    @property
    def percent(self) -> int | None:
        if not self.progress_total:
            return None
        return min(100, int(100 * self.progress_done / self.progress_total))


class ServiceHeartbeat(models.Model):
    """When a background service last showed it is alive: the scheduler on every tick, the
    worker whenever it runs the scheduler's tiny heartbeat task."""

    name = models.CharField(max_length=40, primary_key=True)
    beat_at = models.DateTimeField()
    detail = models.JSONField(default=dict)
