"""Webhook pages: the workspace's endpoints, one endpoint with its delivery log, and the actions
on it (edit, enable/disable, send a test event, rotate the secret, remove). Operators and admins
(``manage_webhooks``); everyone else who may see the workspace gets 403, strangers 404."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from memadmin.audit.services import Actor
from memadmin.events import forms, selectors, services
from memadmin.events.models import EVENT_TYPES, WebhookEndpoint
from memadmin.lib.forms import apply_service
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.workspaces import access
from memadmin.workspaces.context import ws_context

CAPABILITY = "manage_webhooks"


def _workspace(request: AuthenticatedHttpRequest, slug: str) -> Any:
    return access.get_workspace(request.user, slug, CAPABILITY)


def _endpoint(request: AuthenticatedHttpRequest, slug: str,
              endpoint_id: UUID) -> WebhookEndpoint:
    workspace = _workspace(request, slug)
    endpoint = WebhookEndpoint.objects.filter(workspace=workspace, pk=endpoint_id).first()
    if endpoint is None:
        raise Http404("not found")
    return endpoint



def _list_page(request: AuthenticatedHttpRequest, workspace: Any, form: Any = None,
               status: int = 200) -> HttpResponse:
    return render(request, "events/endpoints.html", ws_context(
        request, workspace, tab="webhooks", endpoints=list(selectors.endpoint_list(workspace)),
        form=form or forms.EndpointCreateForm(), event_types=EVENT_TYPES), status=status)


def _endpoint_page(request: AuthenticatedHttpRequest, endpoint: WebhookEndpoint, *,
                   form: Any = None, secret: str = "", status: int = 200) -> HttpResponse:
    endpoint.refresh_from_db()
    return render(request, "events/endpoint.html", ws_context(
        request, endpoint.workspace, tab="webhooks", endpoint=endpoint,
        form=form or forms.EndpointForm(initial=forms.initial_of(endpoint)),
        log=selectors.endpoint_log(endpoint), counts=selectors.endpoint_counts(endpoint),
        secret=secret), status=status)


@require_GET
@login_required
def endpoint_list(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = _workspace(request, slug)
    return _list_page(request, workspace)


@require_POST
@login_required
def endpoint_add(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = _workspace(request, slug)
    form = forms.EndpointCreateForm(request.POST)
    created = form.is_valid() and apply_service(form, lambda: services.webhook_endpoint_create(
        actor=Actor.of(request.user), workspace=workspace, **form.cleaned_data))
    if not created:
        return _list_page(request, workspace, form, status=400)
    endpoint, secret = created
    messages.success(request, f"Endpoint {endpoint.name} added.")
    # The secret is in this one answer only (never in a URL, a redirect or a later page).
    return _endpoint_page(request, endpoint, secret=secret if not form.cleaned_data["secret"]
                          else "")


@require_GET
@login_required
def endpoint_detail(request: AuthenticatedHttpRequest, slug: str,
                    endpoint_id: UUID) -> HttpResponse:
    endpoint = _endpoint(request, slug, endpoint_id)
    return _endpoint_page(request, endpoint)


@require_POST
@login_required
def endpoint_edit(request: AuthenticatedHttpRequest, slug: str,
                  endpoint_id: UUID) -> HttpResponse:
    endpoint = _endpoint(request, slug, endpoint_id)
    form = forms.EndpointForm(request.POST, initial=forms.initial_of(endpoint))
    if form.is_valid():
        changes = {name: form.cleaned_data[name] for name in form.changed_data}
        if not changes or apply_service(form, lambda: services.webhook_endpoint_update(
                actor=Actor.of(request.user), endpoint=endpoint, **changes)) is not None:
            messages.success(request, "Endpoint saved." if changes else "Nothing changed.")
            return redirect("events:endpoint", endpoint.workspace.slug, endpoint.pk)
    return _endpoint_page(request, endpoint, form=form, status=400)


@require_POST
@login_required
def endpoint_toggle(request: AuthenticatedHttpRequest, slug: str,
                    endpoint_id: UUID) -> HttpResponse:
    endpoint = _endpoint(request, slug, endpoint_id)
    wanted = request.POST.get("enabled")
    if wanted not in ("0", "1"):
        messages.error(request, "Choose Enable or Disable.")
        return _endpoint_page(request, endpoint, status=400)
    services.webhook_endpoint_set_enabled(actor=Actor.of(request.user), endpoint=endpoint,
                                          enabled=wanted == "1")
    messages.success(request, f"Endpoint {'enabled' if wanted == '1' else 'disabled'}.")
    return redirect("events:endpoint", endpoint.workspace.slug, endpoint.pk)


@require_POST
@login_required
def endpoint_test(request: AuthenticatedHttpRequest, slug: str,
                  endpoint_id: UUID) -> HttpResponse:
    endpoint = _endpoint(request, slug, endpoint_id)
    attempt = services.webhook_endpoint_send_test(actor=Actor.of(request.user),
                                                  endpoint=endpoint)
    if attempt.ok:
        messages.success(request, f"Test event delivered: the endpoint answered "
                                  f"{attempt.status_code} in {attempt.duration_ms} ms.")
    else:
        messages.error(request, f"The test event was not delivered: {attempt.error}.")
    return redirect("events:endpoint", endpoint.workspace.slug, endpoint.pk)


@require_POST
@login_required
def endpoint_rotate(request: AuthenticatedHttpRequest, slug: str,
                    endpoint_id: UUID) -> HttpResponse:
    endpoint = _endpoint(request, slug, endpoint_id)
    secret = services.webhook_endpoint_rotate_secret(actor=Actor.of(request.user),
                                                     endpoint=endpoint)
    messages.success(request, "A new signing secret signs every delivery from now on.")
    return _endpoint_page(request, endpoint, secret=secret)


@require_POST
@login_required
def endpoint_remove(request: AuthenticatedHttpRequest, slug: str,
                    endpoint_id: UUID) -> HttpResponse:
    endpoint = _endpoint(request, slug, endpoint_id)
    workspace = endpoint.workspace
    services.webhook_endpoint_remove(actor=Actor.of(request.user), endpoint=endpoint)
    messages.success(request, f"Endpoint {endpoint.name} removed, with its log.")
    return redirect("events:endpoints", workspace.slug)
