"""Running jobs with leases, so a killed worker loses nothing.

The task backend only delivers "run job X". A worker *claims* the job with one atomic UPDATE
(queued, or running with an expired lease), renews the lease on every progress save, and the
handler resumes from the job's own checkpoint. A duplicate delivery finds the job claimed or
finished and does nothing; the reaper re-enqueues jobs whose lease ran out.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import os
import socket
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from memadmin.jobs.models import Job, ServiceHeartbeat
from memadmin.lib.failpoints import failpoint
from memadmin.providers.contract import ProviderError

logger = logging.getLogger(__name__)

Handler = Callable[["JobContext"], dict[str, Any] | None]
HANDLERS: dict[str, Handler] = {}


def lease_length() -> dt.timedelta:
    return dt.timedelta(seconds=settings.MEMADMIN_JOB_LEASE_SECONDS)


def pickup_grace() -> dt.timedelta:
    return dt.timedelta(seconds=settings.MEMADMIN_JOB_PICKUP_SECONDS)


def job_handler(kind: str) -> Callable[[Handler], Handler]:
    """Register the function that runs jobs of ``kind`` (see each app's ``jobs.py``)."""

    def register(func: Handler) -> Handler:
        if kind in HANDLERS and HANDLERS[kind] is not func:
            raise RuntimeError(f"two handlers for job kind {kind!r}")
        HANDLERS[kind] = func
        return func

    return register


class JobCancelled(Exception):
    """Raised inside a handler when someone asked the job to stop."""


class LeaseLost(Exception):
    """Another worker took the job over (our lease expired): stop without touching it."""


def worker_label() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def safe_error(exc: BaseException) -> str:
    """What a job row may say about a failure: our own error messages, else only the type.
    (Arbitrary exception text can carry content or a subject id.)"""
    if isinstance(exc, ProviderError):
        return f"{exc.code}: {exc.message}"[:2000]
    return f"{type(exc).__name__} (details in the worker log)"


class JobContext:
    def __init__(self, job: Job, worker: str) -> None:
        self.job = job
        self.worker = worker
        self.attempt = job.attempts

    @property
    def params(self) -> dict[str, Any]:
        return self.job.params

    @property
    def checkpoint(self) -> dict[str, Any]:
        return self.job.checkpoint

    def end_cancelled(self) -> None:
        """End the job as cancelled now, in the caller's transaction: a handler that closes
        what the job served (a subject request) does both in one, so no reader sees one
        cancelled and the other still running. The runner's own end then finds nothing."""
        _finish(self.job, self.worker, self.attempt, state="cancelled")

    def save_progress(self, *, done: int, total: int | None = None,
                      checkpoint: dict[str, Any] | None = None) -> None:
        """Persist progress and where to resume, and renew the lease, in one UPDATE. Call it
        after each unit of work has committed (and at least once per lease length)."""
        now = timezone.now()
        fields: dict[str, Any] = {"progress_done": done, "heartbeat_at": now,
                                  "lease_until": now + lease_length()}
        if total is not None:
            fields["progress_total"] = total
            self.job.progress_total = total
        if checkpoint is not None:
            fields["checkpoint"] = checkpoint
            self.job.checkpoint = checkpoint
        updated = Job.objects.filter(pk=self.job.pk, state="running", worker=self.worker,
                                     attempts=self.attempt).update(**fields)
        if not updated:
            raise LeaseLost(str(self.job.pk))
        self.job.progress_done = done
        failpoint("job.progress", job=str(self.job.pk), kind=self.job.kind, done=done,
                  attempt=self.attempt)
        if Job.objects.filter(pk=self.job.pk, cancel_requested=True).exists():
            raise JobCancelled()


def claim(job_id: str, worker: str, now: dt.datetime | None = None) -> Job | None:
    """Take the job if it is queued, or running under an expired lease. Atomic."""
    now = now or timezone.now()
    claimable = Q(state="queued") | Q(state="running", lease_until__lt=now)
    updated = Job.objects.filter(claimable, pk=job_id, cancel_requested=False,
                                 attempts__lt=F("max_attempts")).update(
        state="running", attempts=F("attempts") + 1, worker=worker, heartbeat_at=now,
        lease_until=now + lease_length(),
    )
    if not updated:
        return None
    job = Job.objects.get(pk=job_id)
    if job.started_at is None:
        job.started_at = now
        job.save(update_fields=["started_at"])
    return job


def _finish(job: Job, worker: str, attempt: int, **fields: Any) -> bool:
    fields.setdefault("finished_at", timezone.now())
    fields["lease_until"] = None
    return bool(Job.objects.filter(pk=job.pk, worker=worker, attempts=attempt,
                                   state="running").update(**fields))


def run_job(job_id: str, worker: str | None = None) -> str:
    """Claim and run one job; returns what happened (for logs and tests)."""
    worker = worker or worker_label()
    job = claim(job_id, worker)
    if job is None:
        return "not claimed"
    handler = HANDLERS.get(job.kind)
    if handler is None:
        _finish(job, worker, job.attempts, state="failed", error=f"unknown job kind {job.kind}")
        return "failed"
    ctx = JobContext(job, worker)
    try:
        result = handler(ctx) or {}
    except JobCancelled:
        failpoint("job.cancelled", job=str(job.pk), kind=job.kind)
        _finish(job, worker, ctx.attempt, state="cancelled")  # unless the handler ended it
        return "cancelled"
    except LeaseLost:
        logger.warning("job %s: lease lost to another worker", job.pk)
        return "lease lost"
    except Exception as exc:
        logger.exception("job %s (%s) failed on attempt %s", job.pk, job.kind, ctx.attempt)
        if ctx.attempt < job.max_attempts:
            delay = dt.timedelta(seconds=min(300, 2 ** ctx.attempt))
            retried = _finish(job, worker, ctx.attempt, state="queued", finished_at=None,
                              error=safe_error(exc))
            if retried:
                Job.objects.filter(pk=job.pk).update(lease_until=timezone.now() + delay
                                                     + pickup_grace())
                enqueue(job, delay=delay)
            return "retrying"
        _finish(job, worker, ctx.attempt, state="failed", error=safe_error(exc))
        return "failed"
    # The total was an estimate made at the start (an export skips quarantined items, a delete
    # the held ones): a job that succeeded did all there was, so it ends at 100%.
    _finish(job, worker, ctx.attempt, state="succeeded", result=result, error="",
            progress_total=F("progress_done"))
    return "succeeded"


def enqueue(job: Job, delay: dt.timedelta | None = None) -> None:
    """Ask the task backend to deliver "run job X" (after ``delay``)."""
    from memadmin.jobs.tasks import run_job_task

    task = run_job_task
    if delay:
        task = task.using(run_after=timezone.now() + delay)
    result = task.enqueue(str(job.pk))
    Job.objects.filter(pk=job.pk).update(task_id=str(result.id))


def reap(now: dt.datetime | None = None) -> int:
    """Re-enqueue jobs whose lease expired (a killed worker, a lost task); fail those that used
    up their attempts. Returns how many jobs it touched."""
    now = now or timezone.now()
    touched = 0
    with transaction.atomic():
        expired = list(Job.objects.select_for_update(skip_locked=True).filter(
            state__in=["queued", "running"], lease_until__lt=now))
        for job in expired:
            touched += 1
            if job.cancel_requested:
                job.state, job.finished_at, job.lease_until = "cancelled", now, None
                job.save(update_fields=["state", "finished_at", "lease_until"])
            elif job.attempts >= job.max_attempts:
                job.state, job.finished_at, job.lease_until = "failed", now, None
                job.error = "the job's worker stopped too many times"
                job.save(update_fields=["state", "finished_at", "lease_until", "error"])
            else:
                job.state, job.lease_until = "queued", now + pickup_grace()
                job.save(update_fields=["state", "lease_until"])
                transaction.on_commit(functools.partial(enqueue, job))
    if touched:
        logger.info("reaper: %s job(s) re-enqueued or closed", touched)
    return touched


def beat(name: str, **detail: Any) -> None:
    ServiceHeartbeat.objects.update_or_create(
        name=name, defaults={"beat_at": timezone.now(), "detail": detail})
