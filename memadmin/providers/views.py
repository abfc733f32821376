"""Provider configurations (operators): list, create, edit, delete, test the connection."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memadmin.lib import access
from memadmin.lib.audit import Actor, audit_event_create
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.providers import services
from memadmin.providers.forms import ProviderForm
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import provider_for
from memadmin.workspaces.views import ws_context


def _get_provider(workspace: Any, slug: str) -> ProviderConfig:
    config = ProviderConfig.objects.filter(workspace=workspace, slug=slug).first()
    if config is None:
        raise Http404("not found")
    return config


@require_GET
@login_required
def provider_list(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    providers = list(ProviderConfig.objects.filter(workspace=workspace)
                     .select_related("health").order_by("name"))
    return render(request, "providers/list.html",
                  ws_context(request, workspace, providers=providers, tab="providers"))


@require_http_methods(["GET", "POST"])
@login_required
def provider_create(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_providers")
    form = ProviderForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.changes()
        data.setdefault("credential", "")
        try:
            config = services.provider_config_create(
                actor=Actor.of(request.user), workspace=workspace,
                slug=form.cleaned_data["slug"], name=form.cleaned_data["name"],
                kind=form.cleaned_data["kind"],
                **{k: v for k, v in data.items() if k not in {"slug", "name", "kind"}})
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, f"Provider {config.name} created.")
            return redirect("providers:list", workspace.slug)
    return render(request, "providers/form.html",
                  ws_context(request, workspace, form=form, creating=True, tab="providers"),
                  status=400 if form.errors else 200)


@require_http_methods(["GET", "POST"])
@login_required
def provider_edit(request: AuthenticatedHttpRequest, slug: str, provider: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_providers")
    config = _get_provider(workspace, provider)
    form = ProviderForm(request.POST or None, instance=config)
    if request.method == "POST" and form.is_valid():
        changes = form.changes()
        config.refresh_from_db()
        try:
            if changes:
                services.provider_config_update(actor=Actor.of(request.user), config=config,
                                                **changes)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, f"Provider {config.name} saved.")
            return redirect("providers:list", workspace.slug)
    return render(request, "providers/form.html",
                  ws_context(request, workspace, form=form, provider=config, tab="providers"),
                  status=400 if form.errors else 200)


@require_POST
@login_required
def provider_delete(request: AuthenticatedHttpRequest, slug: str, provider: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_providers")
    config = _get_provider(workspace, provider)
    try:
        services.provider_config_delete(actor=Actor.of(request.user), config=config)
    except ValidationError as exc:
        messages.error(request, f"{config.name} was not deleted: {' '.join(exc.messages)}")
        return redirect("providers:edit", workspace.slug, config.slug)
    messages.success(request, f"Provider {config.name} deleted."
                     + (" Its remote data was not touched." if config.kind == "http" else ""))
    return redirect("providers:list", workspace.slug)


@require_POST
@login_required
def provider_test(request: AuthenticatedHttpRequest, slug: str, provider: str) -> HttpResponse:
    """One bounded health check (it never raises and never waits past the health deadline)."""
    workspace = access.get_workspace(request.user, slug, "run_health_checks")
    config = _get_provider(workspace, provider)
    status = provider_for(config).health(deadline=config.health_deadline_ms / 1000)
    with transaction.atomic():
        audit_event_create(workspace=workspace, actor=Actor.of(request.user),
                           action="provider.test", target_type="provider", target_id=config.pk,
                           data={"ok": status.ok, "latency_ms": status.latency_ms})
    template = "providers/list.html#test-result" if request.htmx else "providers/test.html"
    return render(request, template,
                  ws_context(request, workspace, provider=config, status=status,
                             tab="providers"))
