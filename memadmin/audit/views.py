"""A workspace's audit trail: filtered pages, streamed exports and chain verification
(compliance and admins: the ``view_audit`` capability)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memadmin.audit import selectors
from memadmin.audit.forms import AuditFilterForm
from memadmin.audit.jobs import VERIFY_KIND
from memadmin.audit.sentences import Sentence, sentence
from memadmin.audit.services import Actor, audit_event_create
from memadmin.jobs.models import Job
from memadmin.jobs.services import job_create
from memadmin.lib.csvexport import buffered, csv_lines
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.workspaces import access
from memadmin.workspaces.context import ws_context

CSV_COLUMNS = ["id", "seq", "created_at", "actor", "action", "target_type", "target_id", "data",
               "hash", "prev_hash"]


def _form(request: AuthenticatedHttpRequest, workspace: Any) -> AuditFilterForm:
    actions = selectors.audit_actions(workspace=workspace)
    form = AuditFilterForm(request.GET or None, actions=actions)
    if not form.is_bound:
        form = AuditFilterForm({}, actions=actions)
    return form


@require_GET
@login_required
def audit_list(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "view_audit")
    form = _form(request, workspace)
    page, status = None, 200
    if form.is_valid():
        page = selectors.audit_page(workspace=workspace, filters=form.filters(),
                                    cursor=form.cleaned_data.get("cursor"))
    else:
        status = 400
    rows = _rows(workspace, page.events) if page else []
    template = "audit/list.html#rows" if request.htmx and page else "audit/list.html"
    return render(request, template, ws_context(
        request, workspace, tab="audit", form=form, page=page, rows=rows,
        query=form.query_without_cursor() if page else "",
        paged=bool(form.is_bound and form.data.get("cursor"))), status=status)


def _rows(workspace: Any, events: list[Any]) -> list[tuple[Any, Sentence, str]]:
    """Each event with its sentence and its data for the disclosure."""
    places = selectors.target_places(workspace=workspace, events=events)
    list_url = reverse("audit:list", args=[workspace.slug])
    return [(event, sentence(event, workspace_slug=workspace.slug, places=places,
                             list_url=list_url), selectors.data_details(event.data))
            for event in events]








def _csv_lines(events: Iterable[Any]) -> Iterator[str]:
    rows = (selectors.event_row(event) for event in events)
    return csv_lines(CSV_COLUMNS, ([row[column] for column in CSV_COLUMNS] for row in rows))


def _jsonl_lines(events: Iterable[Any]) -> Iterator[str]:
    for event in events:
        yield json.dumps(selectors.event_row(event), ensure_ascii=False) + "\n"


EXPORT_FORMATS = {
    "csv": ("text/csv; charset=utf-8", _csv_lines),
    "jsonl": ("application/x-ndjson", _jsonl_lines),
}


@require_GET
@login_required
def audit_export(request: AuthenticatedHttpRequest, slug: str, fmt: str) -> HttpResponseBase:
    """The filtered events as CSV or JSON Lines, streamed in keyset batches (constant memory).
    The export is itself an audit event."""
    workspace = access.get_workspace(request.user, slug, "view_audit")
    if fmt not in EXPORT_FORMATS:
        raise Http404("not found")
    form = _form(request, workspace)
    if not form.is_valid():
        return HttpResponse("invalid filters", status=400, content_type="text/plain")
    filters = form.filters()
    with transaction.atomic():
        audit_event_create(workspace=workspace, actor=Actor.of(request.user),
                           action="audit.export", target_type="workspace",
                           target_id=workspace.pk,
                           data={"format": fmt, "filters": filters.for_audit()})
    content_type, lines = EXPORT_FORMATS[fmt]
    events = selectors.audit_export_rows(workspace=workspace, filters=filters)
    response = StreamingHttpResponse(buffered(lines(events)), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{workspace.slug}-audit.{fmt}"'
    return response


@require_POST
@login_required
def audit_verify(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """Start verifying the workspace's hash chain (a job: chains grow without bound)."""
    workspace = access.get_workspace(request.user, slug, "view_audit")
    job = job_create(actor=Actor.of(request.user), kind=VERIFY_KIND, workspace=workspace,
                     params={"workspace": str(workspace.pk)})
    return redirect("audit:verify_result", workspace.slug, job.pk)


@require_GET
@login_required
def audit_verify_result(request: AuthenticatedHttpRequest, slug: str,
                        job_id: UUID) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "view_audit")
    job = Job.objects.filter(pk=job_id, workspace=workspace, kind=VERIFY_KIND).first()
    if job is None:
        raise Http404("not found")
    template = "audit/verify.html#progress" if request.htmx else "audit/verify.html"
    return render(request, template, ws_context(request, workspace, tab="audit", job=job))
