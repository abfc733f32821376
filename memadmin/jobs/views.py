"""A job's page: live progress (htmx polling) for the user who started it."""

from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memadmin.audit.services import Actor
from memadmin.jobs.models import Job
from memadmin.jobs.services import job_cancel
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.workspaces import access


def _get_job(request: AuthenticatedHttpRequest, job_id: UUID) -> Job:
    """The job, for the user who started it, a workspace admin, or a superuser; else 404."""
    job = Job.objects.select_related("workspace").filter(pk=job_id).first()
    if job is None:
        raise Http404("not found")
    user = request.user
    if job.created_by_id == user.pk or user.is_superuser:
        return job
    if job.workspace is not None and access.can(user, "manage_workspace", job.workspace):
        return job
    raise Http404("not found")


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
    job_cancel(actor=Actor.of(request.user), job=job)
    return redirect("jobs:detail", job.pk)
