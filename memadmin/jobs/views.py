"""A job's page: live progress (htmx polling), and cancelling it.

A job is seen and acted on by the rules of what owns it, never by looser rules of its own: a
subject request's job by that request's rules (only an admin cancels a running erasure), a
namespace's job by its owners, a workspace duty's job by the role that starts it. The user who
started a job keeps its pages only while they still hold what it needs; without it they get
404, like anyone else who may not see it.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memadmin.audit.services import Actor
from memadmin.jobs.models import Job
from memadmin.jobs.services import job_cancel
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.workspaces import access

#: Kinds that belong to a subject request (``params["request"]``): the request's rules apply.
REQUEST_KINDS = frozenset({"subject_request_run"})
#: The capability a job's starter must still hold (for namespace jobs: in every namespace the
#: job works on). A kind not listed here is an admin's.
KIND_CAPABILITY = {
    "memory_export": "export",
    "memory_bulk_delete": "edit_memory",
    "memory_import": "edit_memory",
    "namespace_recount": "edit_memory",
    "quarantine_rescan": "review_quarantine",
    "quarantine_remote_sync": "review_quarantine",
    "audit_verify_chain": "view_audit",
}
#: Kinds only admins (and superusers) see: system duties no person starts.
ADMIN_KINDS = frozenset({"health_alert"})


def _job_namespaces(job: Job) -> list[Any]:
    params = job.params or {}
    if params.get("namespaces") is not None:
        return list(params["namespaces"])
    return [params["namespace"]] if params.get("namespace") else []


def _may_see(user: Any, job: Job) -> bool:
    workspace = job.workspace
    if user.is_superuser:
        return True
    if workspace is None or not access.can(user, "view", workspace):
        return False  # a starter who lost every role in the workspace
    if job.kind in REQUEST_KINDS:
        return access.can(user, "subject_requests", workspace)
    if access.can(user, "manage_workspace", workspace):
        return True
    capability = KIND_CAPABILITY.get(job.kind)
    if job.created_by_id != user.pk or capability is None:
        return False
    if capability in ("export", "edit_memory"):
        return access.owns_every(user, workspace, _job_namespaces(job))
    return access.can(user, capability, workspace)


def _get_job(request: AuthenticatedHttpRequest, job_id: UUID) -> Job:
    """The job, for those its owner's rules let see it; else 404."""
    job = Job.objects.select_related("workspace").filter(pk=job_id).first()
    if job is None or not _may_see(request.user, job):
        raise Http404("not found")
    return job


def _cancel_request_job(request: AuthenticatedHttpRequest, job: Job) -> None:
    """Cancel through the subject request: its rules decide, its audit event records it."""
    from memadmin.gdpr.models import SubjectRequest
    from memadmin.gdpr.transitions import SubjectRequestError, subject_request_cancel

    request_id = (job.params or {}).get("request")
    owner = (SubjectRequest.objects.filter(pk=request_id, workspace=job.workspace).first()
             if isinstance(request_id, str) else None)
    if owner is None or owner.job_id != job.pk:
        raise PermissionDenied("this job is no longer its request's current run")
    try:
        subject_request_cancel(actor=Actor.of(request.user), subject_request=owner)
    except SubjectRequestError as exc:
        raise PermissionDenied(exc.message) from None


@require_GET
@login_required
def job_detail(request: AuthenticatedHttpRequest, job_id: UUID) -> HttpResponse:
    job = _get_job(request, job_id)
    template = "jobs/detail.html"
    if request.htmx:
        template += "#progress"
    return render(request, template, {"job": job, "now": timezone.now()})


@require_POST
@login_required
def job_cancel_view(request: AuthenticatedHttpRequest, job_id: UUID) -> HttpResponse:
    job = _get_job(request, job_id)
    if job.kind in REQUEST_KINDS:
        _cancel_request_job(request, job)
    else:
        job_cancel(actor=Actor.of(request.user), job=job)
    return redirect("jobs:detail", job.pk)
