"""Starting and cancelling jobs."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.jobs import runner
from memadmin.jobs.models import Job


def job_create(*, actor: Actor, kind: str, params: dict[str, Any], workspace: Any = None,
               total: int | None = None, max_attempts: int = 5) -> Job:
    """Create a job row and enqueue it once the surrounding transaction commits.

    Params must never hold memory content or a clear subject id that outlives its need.
    """
    if kind not in runner.HANDLERS:
        raise ValidationError(f"unknown job kind {kind!r}")
    with transaction.atomic():
        job = Job.objects.create(
            kind=kind, params=params, workspace=workspace, progress_total=total,
            created_by=actor.user, max_attempts=max_attempts,
            lease_until=timezone.now() + runner.pickup_grace(),
        )
        audit_event_create(workspace=workspace, actor=actor, action="job.start",
                           target_type="job", target_id=job.pk, data={"kind": kind})
        transaction.on_commit(lambda: runner.enqueue(job))
    return job


@transaction.atomic
def job_cancel(*, actor: Actor, job: Job) -> Job:
    """Ask a job to stop: a queued job stops at once, a running one after its current batch."""
    if job.finished:
        return job
    job.cancel_requested = True
    fields = ["cancel_requested"]
    if job.state == "queued":
        job.state, job.finished_at, job.lease_until = "cancelled", timezone.now(), None
        fields += ["state", "finished_at", "lease_until"]
    job.save(update_fields=fields)
    audit_event_create(workspace=job.workspace, actor=actor, action="job.cancel",
                       target_type="job", target_id=job.pk, data={"kind": job.kind})
    return job
