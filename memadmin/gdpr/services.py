"""Subject-request work that is not a change of state: the preview (counts stored on the
steps), the scheduler's upkeep and the vacuum after erasures. The state machine itself is
``gdpr/transitions.py``."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils import timezone

from memadmin.audit.services import Actor
from memadmin.gdpr.models import (
    PREVIEW_JOB_KIND,
    REQUEST_OPEN_STATES,
    SubjectRequest,
    SubjectRequestStep,
)
from memadmin.gdpr.selectors import subject_counts_iter
from memadmin.gdpr.transitions import (
    SubjectRequestError,
    audit_request_event,
    require_role,
    subject_request_close_stopped,
)
from memadmin.jobs.models import Job
from memadmin.lib.files import delete_file

logger = logging.getLogger(__name__)


def subject_request_preview_start(*, actor: Actor,
                                  subject_request: SubjectRequest) -> Job:
    """"Preview counts" as a job (kind ``subject_request_preview``, params: the request id
    only), so the page shows each provider's answer as it arrives and a slow provider never
    holds a web request. The steps' earlier answers are marked as being asked again. A
    preview already under way is returned as it is."""
    from memadmin.jobs.services import job_create

    sr = subject_request
    require_role(actor, sr.workspace)
    with transaction.atomic():
        sr = SubjectRequest.objects.select_for_update(of=("self",)).select_related(
            "preview_job", "workspace").get(pk=sr.pk)
        if sr.subject_id is None or sr.state not in REQUEST_OPEN_STATES:
            raise SubjectRequestError("a closed request can no longer be previewed")
        if sr.preview_job is not None and not sr.preview_job.finished:
            return sr.preview_job
        total = SubjectRequestStep.objects.filter(request=sr).count()
        job = job_create(actor=actor, kind=PREVIEW_JOB_KIND, params={"request": str(sr.pk)},
                         workspace=sr.workspace, total=total, max_attempts=3)
        SubjectRequestStep.objects.filter(request=sr).update(previewed_at=None)
        SubjectRequest.objects.filter(pk=sr.pk).update(preview_job=job)
        subject_request.preview_job = job
        audit_request_event(actor=actor, subject_request=sr, action="preview_start",
                            job=str(job.pk))
    return job


def subject_request_preview(
        *, actor: Actor, subject_request: SubjectRequest,
        progress: Callable[[int], None] | None = None) -> list[SubjectRequestStep]:
    """Dry run: ask every step's provider at once how many items carry the subject (one
    overall deadline, the slowest provider's) and store each answer as it arrives as
    ``found`` (``found_more``: a lower bound, "more than N"): None means "cannot tell", with
    the reason in ``error``. What came back in time is saved; ``progress(answered)`` is called
    after each. Changes nothing in any store. Returns the steps."""
    sr = subject_request
    require_role(actor, sr.workspace)
    sr.refresh_from_db()
    subject = sr.subject_id
    if subject is None or sr.state not in REQUEST_OPEN_STATES:
        raise SubjectRequestError("a closed request can no longer be previewed")
    steps = list(SubjectRequestStep.objects.filter(request=sr)
                 .select_related("provider").order_by("pk"))
    by_pk = {s.pk: s for s in steps}
    for answered, (pk, answer) in enumerate(subject_counts_iter(steps, subject), start=1):
        step = by_pk[pk]
        step.found, step.found_more = answer.found, answer.more
        step.previewed_at = timezone.now()
        fields = ["found", "found_more", "previewed_at"]
        if step.state == "pending":
            step.error = answer.note
            fields.append("error")
        step.save(update_fields=fields)
        if progress is not None:
            progress(answered)
    with transaction.atomic():
        audit_request_event(actor=actor, subject_request=sr, action="preview",
                            found={str(s.pk): s.found for s in steps},
                            unknown=sum(1 for s in steps if s.found is None),
                            lower_bounds=sum(1 for s in steps if s.found_more))
    return steps


# -- upkeep (a scheduler duty) ------------------------------------------------------------------


def subject_requests_upkeep(now: dt.datetime | None = None) -> dict[str, int]:
    """Delete access files past their expiry, and close running requests whose job stopped
    for good without closing them (cancelled while its worker was dead, or out of attempts)."""
    now = now or timezone.now()
    expired = 0
    for sr in SubjectRequest.objects.filter(access_file_expires_at__lt=now).exclude(
            access_file=""):
        delete_file(sr.access_file)
        SubjectRequest.objects.filter(pk=sr.pk).update(access_file="",
                                                       access_file_expires_at=None)
        expired += 1
    closed = 0
    stopped = SubjectRequest.objects.filter(
        state="running", job__state__in=["cancelled", "failed"]).select_related("workspace")
    for sr in stopped:
        if subject_request_close_stopped(subject_request=sr, now=now):
            closed += 1
    return {"expired_files": expired, "closed": closed}


# -- vacuum after erasures (a scheduler duty) ---------------------------------------------------

#: Models whose tables an erasure deletes from or rewrites ("app_label.Model"). Until VACUUM
#: runs, PostgreSQL keeps the old row versions (with the erased text) in the table's pages.
ERASURE_TOUCHED = ("memory.MemoryItem", "memory.MemoryRevision", "memory.OperationRecord",
                   "quarantine.QuarantineEntry", "gdpr.SubjectRequest",
                   "gdpr.SubjectRequestStep", "jobs.Job", "django_tasks_database.DBTaskResult")


def erasure_tables() -> list[str]:
    from django.apps import apps

    return [apps.get_model(label)._meta.db_table for label in ERASURE_TOUCHED]


def vacuum_after_erasures(*, force: bool = False) -> dict[str, Any]:
    """``VACUUM (ANALYZE)`` the tables an erasure touches, if an erasure completed since the
    last vacuum of the request table (or ``force``). Outside a transaction only (PostgreSQL
    refuses VACUUM inside one): returns ``{"skipped": why}`` then. See docs/deploy.md on what
    VACUUM does and does not remove (WAL, backups)."""
    from django.db import connection
    from django.db.models import Max

    if connection.in_atomic_block:
        return {"skipped": "inside a transaction"}
    latest = (SubjectRequest.objects.filter(kind="erasure", state="completed")
              .aggregate(latest=Max("completed_at"))["latest"])
    table = SubjectRequest._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT greatest(last_vacuum, last_autovacuum) FROM pg_stat_user_tables "
                       "WHERE relname = %s", [table])
        row = cursor.fetchone()
    last = row[0] if row else None
    if not force and (latest is None or (last is not None and last >= latest)):
        return {"skipped": "no erasure completed since the last vacuum"}
    tables = erasure_tables()
    with connection.cursor() as cursor:
        # PostgreSQL 15 lets only a table's owner (or a superuser) vacuum it; for anyone else
        # VACUUM warns and does nothing, so those tables are named, not reported vacuumed.
        cursor.execute(
            "SELECT c.relname FROM pg_class c WHERE c.oid = ANY(%s::regclass[]) AND ("
            "pg_has_role(current_user, c.relowner, 'USAGE') OR "
            "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user))",
            [[connection.ops.quote_name(name) for name in tables]])
        permitted = {name for (name,) in cursor.fetchall()}
        vacuumed = [name for name in tables if name in permitted]
        for name in vacuumed:
            cursor.execute(f"VACUUM (ANALYZE) {connection.ops.quote_name(name)}")
    refused = [name for name in tables if name not in permitted]
    logger.info("vacuumed %d tables after erasures", len(vacuumed))
    if refused:
        logger.warning("could not vacuum %s after erasures: the database role %s does not own "
                       "them (run the vacuum as the tables' owner; see docs/deploy.md)",
                       ", ".join(refused), connection.settings_dict.get("USER") or "in use")
        return {"vacuumed": vacuumed, "not_permitted": refused}
    return {"vacuumed": vacuumed}
