"""A workspace's job list, a job's page (live progress, htmx polling), and cancelling it.

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
from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memadmin.audit.services import Actor
from memadmin.jobs.models import Job
from memadmin.jobs.services import job_cancel
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.workspaces import access
from memadmin.workspaces.context import ws_context

#: Kinds that belong to a subject request (``params["request"]``): the request's rules apply.
REQUEST_KINDS = frozenset({"subject_request_run", "subject_request_preview"})
#: Of those, the request's run: cancelled through the request (its state machine and audit);
#: a preview only reads, and is cancelled as a job.
REQUEST_RUN_KINDS = frozenset({"subject_request_run"})
#: The capability a job's starter must still hold (for namespace jobs: in every namespace the
#: job works on). A kind not listed here is an admin's.
KIND_CAPABILITY = {
    "memory_export": "export",
    "memory_bulk_delete": "edit_memory",
    "memory_import": "edit_memory",
    "namespace_recount": "edit_memory",
    "retention_run": "edit_memory",
    "quarantine_rescan": "review_quarantine",
    "quarantine_remote_sync": "review_quarantine",
    "audit_verify_chain": "view_audit",
}
#: Kinds the scheduler starts for namespaces: owners of every one of them see those runs.
SCHEDULED_NAMESPACE_KINDS = frozenset({"retention_run"})
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
    if job.kind in SCHEDULED_NAMESPACE_KINDS and job.created_by_id is None:
        # A scheduled run no person started: the owners of what it works on follow it.
        namespaces = _job_namespaces(job)
        return bool(namespaces) and access.owns_every(user, workspace, namespaces)
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


#: How many jobs the list shows (newest first).
LIST_LIMIT = 100


def _visible_jobs(user: Any, workspace: Any) -> list[Job]:
    """The workspace's newest jobs this user may see, by the same rules as a job's page. An
    admin sees every one; anyone else, the jobs they started and the scheduled runs of what
    they own (few: each checked by ``_may_see``)."""
    jobs = Job.objects.filter(workspace=workspace).select_related("created_by", "workspace")
    if not (user.is_superuser or access.can(user, "manage_workspace", workspace)):
        started = Q(created_by=user)
        scheduled = Q(kind__in=SCHEDULED_NAMESPACE_KINDS, created_by__isnull=True)
        if access.can(user, "subject_requests", workspace):
            started |= Q(kind__in=REQUEST_KINDS)
        jobs = jobs.filter(started | scheduled)
    newest = list(jobs.order_by("-created_at")[:LIST_LIMIT])
    return [job for job in newest if _may_see(user, job)]


def about(job: Job) -> tuple[str, str] | None:
    """(label, url) of what a job is about: its namespace, its subject request, the review
    queue; None when it is a workspace-wide duty."""
    from django.urls import reverse

    from memadmin.workspaces.models import Namespace

    params, workspace = job.params or {}, job.workspace
    if workspace is None:
        return None
    if job.kind in REQUEST_KINDS and isinstance(params.get("request"), str):
        return ("its subject request",
                reverse("gdpr:detail", args=[workspace.slug, params["request"]]))
    if job.kind.startswith("quarantine_"):
        return ("the review queue", reverse("quarantine:queue", args=[workspace.slug]))
    namespaces = _job_namespaces(job)
    if len(namespaces) == 1:
        ns = (Namespace.objects.select_related("resource")
              .filter(pk=namespaces[0], resource__workspace=workspace).first())
        if ns is not None:
            return (f"{ns.resource.slug} / {ns.slug}",
                    reverse("memory:items", args=[workspace.slug, ns.resource.slug, ns.slug]))
    return None


@require_GET
@login_required
def job_list(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The workspace's jobs: kind, who started it, state, progress and result."""
    workspace = access.get_workspace(request.user, slug)
    return render(request, "jobs/list.html", ws_context(
        request, workspace, jobs=_visible_jobs(request.user, workspace), tab="jobs",
        limit=LIST_LIMIT))


@require_GET
@login_required
def job_detail(request: AuthenticatedHttpRequest, job_id: UUID) -> HttpResponse:
    job = _get_job(request, job_id)
    template = "jobs/detail.html"
    if request.htmx:
        template += "#progress"
    return render(request, template, {"job": job, "now": timezone.now(),
                                      "about": about(job) if not request.htmx else None})


@require_POST
@login_required
def job_cancel_view(request: AuthenticatedHttpRequest, job_id: UUID) -> HttpResponse:
    job = _get_job(request, job_id)
    if job.kind in REQUEST_RUN_KINDS:
        _cancel_request_job(request, job)
    else:
        job_cancel(actor=Actor.of(request.user), job=job)
    return redirect("jobs:detail", job.pk)
