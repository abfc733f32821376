"""The status pages beyond the panel: one provider's history (latency charts, uptime per day,
incidents with notes), maintenance windows, SLA exports, and public status badges.

The panel itself (``views.health_page``) stays compact and refreshes itself; these pages are
read on demand. Badges answer without a session: the URL carries the workspace's read-only
badge key and the answer names only providers and their states.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memadmin.audit.services import Actor
from memadmin.lib.csvexport import csv_chunks
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.providers import history, selectors, services
from memadmin.providers.forms import IncidentNoteForm, MaintenanceForm, SlaExportForm
from memadmin.providers.models import MaintenanceWindow, ProviderConfig
from memadmin.workspaces import access
from memadmin.workspaces.models import Workspace
from memadmin.workspaces.services import workspace_badge_key_rotate
from memadmin.workspaces.views import ws_context


def _provider(workspace: Any, slug: str) -> ProviderConfig:
    config = (ProviderConfig.objects.filter(workspace=workspace, slug=slug)
              .select_related("health", "workspace").first())
    if config is None:
        raise Http404("not found")
    return config


def _history_page(request: AuthenticatedHttpRequest, workspace: Any, config: ProviderConfig,
                  *, note_form: Any = None, status: int = 200) -> HttpResponse:
    [panel] = selectors.health_panel(workspace, provider=config).providers
    return render(request, "providers/history.html", ws_context(
        request, workspace, tab="health", provider=config, p=panel,
        charts=[history.latency_chart(config, key) for key in history.RANGES],
        days=history.uptime_days(config), incidents=history.incidents(config),
        note_form=note_form or IncidentNoteForm()), status=status)


@require_GET
@login_required
def provider_history(request: AuthenticatedHttpRequest, slug: str, provider: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    return _history_page(request, workspace, _provider(workspace, provider))


@require_POST
@login_required
def incident_note(request: AuthenticatedHttpRequest, slug: str, provider: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "run_health_checks")
    config = _provider(workspace, provider)
    form = IncidentNoteForm(request.POST)
    opener = history.incident_opener(config, request.POST.get("incident"))
    if opener is None:
        form.add_error(None, "That incident is not in this provider's history.")
    if not form.is_valid() or opener is None:
        return _history_page(request, workspace, config, note_form=form, status=400)
    services.incident_note_set(actor=Actor.of(request.user), transition=opener,
                               text=form.cleaned_data["text"])
    messages.success(request, "Note saved.")
    return redirect("providers:history", workspace.slug, config.slug)


def _maintenance_page(request: AuthenticatedHttpRequest, workspace: Any, form: Any,
                      status: int = 200) -> HttpResponse:
    now = timezone.now()
    windows = list(MaintenanceWindow.objects.filter(workspace=workspace, ends_at__gt=now)
                   .select_related("provider", "created_by").order_by("starts_at"))
    past = list(MaintenanceWindow.objects.filter(workspace=workspace, ends_at__lte=now)
                .select_related("provider", "created_by").order_by("-ends_at")[:20])
    return render(request, "providers/maintenance.html", ws_context(
        request, workspace, tab="health", form=form, windows=windows, past=past, now=now,
        badge_providers=list(ProviderConfig.objects.filter(workspace=workspace)
                             .order_by("name"))),
        status=status)


@require_GET
@login_required
def maintenance_list(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    return _maintenance_page(request, workspace, MaintenanceForm(workspace=workspace))


@require_POST
@login_required
def maintenance_add(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_providers")
    form = MaintenanceForm(request.POST, workspace=workspace)
    if form.is_valid():
        services.maintenance_schedule(actor=Actor.of(request.user), workspace=workspace,
                                      **form.cleaned_data)
        messages.success(request, "Maintenance window scheduled: its alerts are muted.")
        return redirect("providers:maintenance", workspace.slug)
    return _maintenance_page(request, workspace, form, status=400)


@require_POST
@login_required
def maintenance_end(request: AuthenticatedHttpRequest, slug: str, window: UUID) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_providers")
    row = MaintenanceWindow.objects.filter(workspace=workspace, pk=window).first()
    if row is None:
        raise Http404("not found")
    services.maintenance_end(actor=Actor.of(request.user), window=row)
    messages.success(request, "Maintenance window ended.")
    return redirect("providers:maintenance", workspace.slug)


@require_GET
@login_required
def sla_export(request: AuthenticatedHttpRequest, slug: str) -> HttpResponseBase:
    """Checks or incidents as CSV, for SLA reports (streamed; constant memory)."""
    workspace = access.get_workspace(request.user, slug)
    form = SlaExportForm(request.GET)
    if not form.is_valid():
        return HttpResponse("Choose what to export (checks or incidents) and a number of days "
                            "from 1 to 400.\n", status=400, content_type="text/plain")
    what, days = form.cleaned_data["what"], form.cleaned_data["days"]
    if what == "checks":
        since = timezone.now() - dt.timedelta(days=days)
        chunks = csv_chunks(history.CHECK_COLUMNS, history.check_rows(workspace, since))
    else:
        chunks = csv_chunks(history.INCIDENT_COLUMNS, history.incident_rows(workspace, days))
    response = StreamingHttpResponse(chunks, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (f'attachment; filename="{workspace.slug}-{what}-'
                                       f'{days}d.csv"')
    return response


# -- badges ---------------------------------------------------------------------------------------

BADGE_COLOURS = {"ok": "#2e7d32", "degraded": "#b26a00", "down": "#c62828"}
BADGE_GREY = "#616161"


def _badge_target(key: str, provider: str | None) -> tuple[str, str]:
    """(label, state) for a badge, or 404: the key names the workspace; without a provider
    the badge shows the workspace's worst state."""
    workspace = Workspace.objects.filter(badge_key=key).first() if len(key) <= 64 else None
    if workspace is None:
        raise Http404("not found")
    panel = selectors.health_panel(workspace)
    if provider is not None:
        found = next((p for p in panel.providers if p.config.slug == provider), None)
        if found is None:
            raise Http404("not found")
        return found.config.name, found.state
    states = {p.state for p in panel.providers if p.state not in ("disabled", "unprobed")}
    worst = next((s for s in ("down", "degraded", "stale", "unknown") if s in states), "ok")
    return workspace.name, worst if panel.providers else "unknown"


@require_GET
def badge_svg(request: HttpRequest, key: str, provider: str | None = None) -> HttpResponse:
    label, state = _badge_target(key, provider)
    # Widths from a fixed per-character estimate: a badge is a picture, not a layout engine.
    left, right = 6 * len(label) + 10, 6 * len(state) + 10
    response = render(request, "providers/badge.svg", {
        "label": label, "state": state, "left": left, "right": right, "width": left + right,
        "colour": BADGE_COLOURS.get(state, BADGE_GREY)}, content_type="image/svg+xml")
    response["Cache-Control"] = "no-cache"
    return response


@require_GET
def badge_json(request: HttpRequest, key: str, provider: str | None = None) -> HttpResponse:
    label, state = _badge_target(key, provider)
    return JsonResponse({"label": label, "status": state, "up": state == "ok"})


@require_POST
@login_required
def badge_key_rotate(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    disable = request.POST.get("disable") == "1"
    workspace_badge_key_rotate(actor=Actor.of(request.user), workspace=workspace,
                               disable=disable)
    messages.success(request, "Status badges disabled." if disable else
                     "New badge links made; the old ones no longer answer.")
    return redirect("providers:maintenance", workspace.slug)

