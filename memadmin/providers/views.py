"""Provider configurations (operators): list, create, edit, delete, test the connection."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memadmin.audit.services import Actor
from memadmin.lib.http import AuthenticatedHttpRequest, posted
from memadmin.lib.keys import secret_digest
from memadmin.providers import contract as c
from memadmin.providers import selectors, services
from memadmin.providers.forms import ProviderForm
from memadmin.providers.models import HEALTH_STATES, ProviderConfig
from memadmin.providers.registry import provider_for
from memadmin.workspaces import access
from memadmin.workspaces.context import ws_context
from memadmin.workspaces.models import MetricsToken, Workspace, usable_secrets


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
    form = ProviderForm(posted(request))
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
    form = ProviderForm(posted(request), instance=config)
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


@require_http_methods(["GET", "POST"])
@login_required
def provider_delete(request: AuthenticatedHttpRequest, slug: str, provider: str) -> HttpResponse:
    """GET: what deleting would do (and what blocks it); POST: delete."""
    workspace = access.get_workspace(request.user, slug, "manage_providers")
    config = _get_provider(workspace, provider)
    if request.method == "GET":
        return render(request, "providers/delete_confirm.html", ws_context(
            request, workspace, tab="providers", provider=config,
            impact=selectors.deletion_impact(config)))
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
    status = services.provider_connection_test(actor=Actor.of(request.user), config=config)
    template = "providers/list.html#test-result" if request.htmx else "providers/test.html"
    return render(request, template,
                  ws_context(request, workspace, provider=config, status=status,
                             tab="providers"))


# -- the aux-status panel -----------------------------------------------------------------------


@require_GET
@login_required
def health_page(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    """The full panel; with htmx, just the panel fragment (it refreshes itself)."""
    workspace = access.get_workspace(request.user, slug)
    panel = selectors.health_panel(workspace)
    template = "providers/health.html#panel" if request.htmx else "providers/health.html"
    return render(request, template, ws_context(request, workspace, panel=panel, tab="health",
                                                now=timezone.now()))


@require_POST
@login_required
def health_check_now(request: AuthenticatedHttpRequest, slug: str,
                     provider: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "run_health_checks")
    config = _get_provider(workspace, provider)
    if not (config.enabled and config.probed):
        messages.error(request, f"{config.name} is disabled or unprobed: it is never polled.")
        return redirect("providers:health", workspace.slug)
    result = services.provider_check_now(actor=Actor.of(request.user), config=config)
    if result is None:
        messages.error(request, f"{config.name} was checked moments ago; try again in a few "
                       "seconds.")
        response: HttpResponse = redirect("providers:health", workspace.slug)
        if request.htmx:
            response = HttpResponse(status=429)
            response["HX-Trigger"] = "health-refresh"
        return response
    return redirect("providers:health", workspace.slug)


def _health_json(workspace: Any) -> dict[str, Any]:
    panel = selectors.health_panel(workspace)
    return {
        "workspace": workspace.slug,
        "generated_at": timezone.now().isoformat(),
        "scheduler_alive": panel.scheduler_alive,
        "worker_alive": panel.worker_alive,
        "queue_age_seconds": panel.queue_age_seconds,
        "providers": [{
            "provider": p.config.slug, "name": p.config.name, "kind": p.config.kind,
            "state": p.state, "message": p.message, "latency_ms": p.latency_ms,
            "p95_24h_ms": p.p95_24h, "uptime_24h": p.uptime_24h, "uptime_7d": p.uptime_7d,
            "last_ok_at": p.last_ok_at.isoformat() if p.last_ok_at else None,
            "last_checked_at": p.last_checked_at.isoformat() if p.last_checked_at else None,
        } for p in panel.providers],
    }


@require_GET
@login_required
def health_json(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    return JsonResponse(_health_json(workspace))


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@require_GET
def metrics(request: HttpRequest, slug: str) -> HttpResponse:
    """Prometheus text format, for a workspace's metrics token (bearer); no session needed."""
    workspace = Workspace.objects.filter(slug=slug).first()
    header = request.headers.get("Authorization", "")
    token = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
    row = (MetricsToken.objects.filter(usable_secrets(), workspace=workspace,
                                       secret_hash=secret_digest(token)).first()
           if workspace is not None and token and len(token) <= 200 else None)
    if row is None or workspace is None:
        return HttpResponse("unauthorized\n", status=401, content_type="text/plain")
    if row.last_used_at is None or timezone.now() - row.last_used_at > dt.timedelta(minutes=1):
        MetricsToken.objects.filter(pk=row.pk).update(last_used_at=timezone.now())
    panel = selectors.health_panel(workspace)
    # State is never a label of a value that changes (each change would start a new series):
    # one `_up` gauge, plus one 0/1 series per possible state (the usual "state set" shape).
    up = ["# HELP memadmin_provider_up Whether the provider's state is ok (1) or not (0).",
          "# TYPE memadmin_provider_up gauge"]
    states = ["# HELP memadmin_provider_state The provider's state: 1 for the state it is in.",
              "# TYPE memadmin_provider_state gauge"]
    latency = ["# HELP memadmin_provider_latency_seconds Latency of the provider's last "
               "successful health check.",
               "# TYPE memadmin_provider_latency_seconds gauge"]
    for p in panel.providers:
        labels = (f'workspace="{_label(workspace.slug)}",provider="{_label(p.config.slug)}",'
                  f'kind="{_label(p.config.kind)}"')
        up.append(f"memadmin_provider_up{{{labels}}} {1 if p.state == 'ok' else 0}")
        states.extend(f'memadmin_provider_state{{{labels},state="{state}"}} '
                      f"{1 if p.state == state else 0}" for state in HEALTH_STATES)
        if p.latency_ms is not None:
            latency.append(f"memadmin_provider_latency_seconds{{{labels}}} "
                           f"{p.latency_ms / 1000:.6f}")
    body = "\n".join(up + states + latency) + "\n"
    return HttpResponse(body, content_type="text/plain; version=0.0.4; charset=utf-8")


@require_http_methods(["GET", "POST"])
@login_required
def provider_discover(request: AuthenticatedHttpRequest, slug: str,
                      provider: str) -> HttpResponse:
    """The namespaces a governed store already has, offered for adoption (admins)."""
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    config = _get_provider(workspace, provider)
    error, status = None, 200
    if request.method == "POST":
        prefix = request.POST.get("prefix", "")
        labels = tuple(prefix.split(".")) if prefix else ()
        try:
            namespace = services.governed_namespace_adopt(
                actor=Actor.of(request.user), config=config, store_namespace=labels,
                slug=request.POST.get("slug", "").strip())
        except ValidationError as exc:
            error, status = "; ".join(exc.messages), 400
        else:
            messages.success(request, f"Namespace {namespace.slug} adopted from {prefix}.")
            return redirect("providers:discover", workspace.slug, config.slug)
    discover = getattr(provider_for(config), "discover", None)
    candidates: list[tuple[str, str]] = []
    if discover is None:
        error = error or "This kind of provider cannot list the namespaces of its store."
    else:
        try:
            found = discover(deadline=config.request_deadline)
        except c.ProviderError as exc:
            error = error or f"{exc.code}: {exc.message}"
        else:
            prefixes: set[tuple[str, ...]] = set()
            for entry in found:
                labels = tuple(entry) if isinstance(entry, tuple | list) else (str(entry),)
                prefixes.update(labels[:depth] for depth in range(1, len(labels) + 1))
            mapped = {".".join(v) if isinstance(v, list) else str(v).replace("/", ".")
                      for v in {**(config.options.get("prefixes") or {}),
                                **(config.options.get("folders") or {})}.values()}
            candidates = [(".".join(p), "adopted" if ".".join(p) in mapped else
                           re.sub(r"[^A-Za-z0-9_-]+", "-", p[-1])[:64].strip("-") or "ns")
                          for p in sorted(prefixes)[:300]]
    return render(request, "providers/discover.html",
                  ws_context(request, workspace, provider=config, candidates=candidates,
                             error=error, tab="providers"), status=status)
