"""The review queue (compliance): the only page where quarantined content shows, escaped, with
the scanner's matches highlighted; decisions one by one, on a selection or on the filter."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memadmin.audit.services import Actor
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.providers.models import ProviderConfig
from memadmin.quarantine import selectors
from memadmin.quarantine.forms import DecisionForm, QueueFilterForm
from memadmin.quarantine.models import QuarantineAllow, QuarantineEntry
from memadmin.quarantine.services import (
    BULK_LIMIT,
    quarantine_allow_remove,
    quarantine_content_viewed,
    quarantine_decide,
    quarantine_remote_sync_start,
    quarantine_rescan_start,
)
from memadmin.workspaces import access
from memadmin.workspaces.context import ws_context

FILTER_FIELDS = ("state", "provider", "rule", "namespace")


def _filter_query(form: QueueFilterForm) -> str:
    if not form.is_bound or not form.is_valid():
        return ""
    return urlencode({k: form.data[k] for k in FILTER_FIELDS if form.data.get(k)})


def _render_queue(request: AuthenticatedHttpRequest, workspace: Any, filter_form: QueueFilterForm,
                  decision_form: DecisionForm, status: int = 200) -> HttpResponse:
    page, error = None, None
    if filter_form.is_bound and not filter_form.is_valid():
        error, status = "Those filters are not valid; nothing is shown.", 400
    else:
        cursor = filter_form.cleaned_data.get("cursor") if filter_form.is_bound else None
        page = selectors.queue_page(workspace, filter_form.filters(), cursor or None)
        shown = [row.entry for row in page.rows if row.segments is not None]
        quarantine_content_viewed(actor=Actor.of(request.user), workspace=workspace,
                                  entries=shown)
    template = "quarantine/queue.html#rows" if request.htmx and page else "quarantine/queue.html"
    from memadmin.quarantine.scanner import RULES

    providers = ProviderConfig.objects.filter(workspace=workspace).order_by("slug")
    return render(request, template, ws_context(
        request, workspace, tab="quarantine", page=page, error=error, form=filter_form,
        decision_form=decision_form, query=_filter_query(filter_form),
        providers=list(providers.values_list("slug", "name")),
        rules=sorted(RULES.values(), key=lambda r: r.id),
        bulk_limit=BULK_LIMIT), status=status)


@require_GET
@login_required
def queue(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "review_quarantine")
    return _render_queue(request, workspace, QueueFilterForm(request.GET or None),
                         DecisionForm())


def _targets(workspace: Any, form: DecisionForm, filters: QueueFilterForm) -> list[Any]:
    _, target, _ = form.cleaned_data["act"]
    rows = QuarantineEntry.objects.filter(workspace=workspace).select_related(
        "namespace__resource__workspace", "provider", "workspace")
    if target == "matching":
        rows = selectors.entries(workspace, filters.filters()).filter(
            state__in=QuarantineEntry.OPEN_STATES, remote=False).select_related(
            "namespace__resource__workspace", "provider", "workspace").order_by("-created_at")
        return list(rows[:BULK_LIMIT])
    ids = form.cleaned_data["ids"] if target == "selected" else [target]
    found = list(rows.filter(pk__in=ids[:BULK_LIMIT]))
    if not found:
        raise Http404("not found")
    return found


@require_POST
@login_required
def decide(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "review_quarantine")
    filters = QueueFilterForm(request.POST)
    form = DecisionForm(request.POST)
    if not filters.is_valid() or not form.is_valid():
        return _render_queue(request, workspace, QueueFilterForm(), form, status=400)
    decision, _, allow = form.cleaned_data["act"]
    try:
        outcome = quarantine_decide(
            actor=Actor.of(request.user), workspace=workspace,
            entries=_targets(workspace, form, filters), decision=decision,
            note=form.cleaned_data["note"], allow=allow or form.cleaned_data["allow"])
    except ValidationError as exc:
        form.add_error(None, exc)
        return _render_queue(request, workspace, filters, form, status=400)
    done = {"release": "Released", "purge": "Purged", "keep": "Kept quarantined"}[decision]
    if outcome.decided:
        messages.success(request, f"{done}: {outcome.decided} item{'s' * (outcome.decided != 1)}.")
    for entry_id, why in outcome.skipped[:10]:
        messages.warning(request, f"Left as it was ({entry_id[:8]}): {why}.")
    if len(outcome.skipped) > 10:
        messages.warning(request, f"… and {len(outcome.skipped) - 10} more left as they were.")
    url = reverse("quarantine:queue", args=[workspace.slug])
    query = _filter_query(filters)
    return redirect(f"{url}?{query}" if query else url)


#: The queue's background jobs: URL action -> the service that starts it.
JOBS = {"rescan": quarantine_rescan_start, "remote_sync": quarantine_remote_sync_start}


@require_POST
@login_required
def job_start(request: AuthenticatedHttpRequest, slug: str, job: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "review_quarantine")
    started = JOBS[job](actor=Actor.of(request.user), workspace=workspace)
    return redirect("jobs:detail", started.pk)


@require_GET
@login_required
def allowed(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "review_quarantine")
    rows = (QuarantineAllow.objects.filter(workspace=workspace).select_related("created_by")
            .order_by("-created_at")[:500])
    return render(request, "quarantine/allowed.html", ws_context(
        request, workspace, tab="quarantine", rows=list(rows)))


@require_POST
@login_required
def allowed_remove(request: AuthenticatedHttpRequest, slug: str,
                   content_hash: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "review_quarantine")
    row = QuarantineAllow.objects.filter(workspace=workspace,
                                         content_hash=content_hash).first()
    if row is None:
        raise Http404("not found")
    quarantine_allow_remove(actor=Actor.of(request.user), allow=row)
    messages.success(request, "Removed from the allow-list: that content is scanned again.")
    return redirect("quarantine:allowed", workspace.slug)
