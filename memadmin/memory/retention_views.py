"""Retention pages: a resource's or a namespace's policies, their preview, and the forms that
set, remove and run them (owners of the namespace; for a resource, admins and workspace-wide
owners)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from memadmin.audit.services import Actor
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.memory import forms
from memadmin.memory.models import RetentionPolicy
from memadmin.memory.retention import (
    namespace_policies,
    resource_policies,
    retention_policy_remove,
    retention_policy_set,
    retention_preview,
    retention_run_start,
)
from memadmin.workspaces import access
from memadmin.workspaces.context import ws_context
from memadmin.workspaces.models import Namespace, Resource, Workspace


def _may_manage(user: Any, workspace: Workspace, policy_namespace: Namespace | None) -> bool:
    """Namespace policies: its owners; resource policies: owners of every namespace (admins,
    workspace-wide owners)."""
    return access.can(user, "edit_memory", workspace, policy_namespace)


def _page(request: AuthenticatedHttpRequest, workspace: Workspace, res: Resource,
          ns: Namespace | None, form: forms.RetentionForm, status: int = 200) -> HttpResponse:
    policies = namespace_policies(ns) if ns is not None else resource_policies(res)
    rows = []
    for policy in policies:
        preview = retention_preview(policy)
        if ns is not None:
            preview = [row for row in preview if row.namespace.pk == ns.pk]
        rows.append({"policy": policy, "preview": preview,
                     "manageable": _may_manage(request.user, workspace, policy.namespace)})
    return render(request, "memory/retention.html", ws_context(
        request, workspace, resource=res, namespace=ns, rows=rows, form=form,
        can_manage=_may_manage(request.user, workspace, ns)), status=status)


def _retention(request: AuthenticatedHttpRequest, workspace: Workspace, res: Resource,
               ns: Namespace | None) -> HttpResponse:
    if request.method != "POST":
        return _page(request, workspace, res, ns, forms.RetentionForm())
    if not _may_manage(request.user, workspace, ns):
        raise PermissionDenied("your role does not allow setting retention here")
    form = forms.RetentionForm(request.POST)
    if not form.is_valid():
        return _page(request, workspace, res, ns, form, status=400)
    data = form.cleaned_data
    actor = Actor.of(request.user)
    target = {"namespace": ns} if ns is not None else {"resource": res}
    if data["act"] == "set":
        try:
            retention_policy_set(actor=actor, tier=data["tier"], action=data["action"],
                                 rule=data["rule"], days=data["days"], **target)
        except ValidationError as exc:
            form.add_error(None, exc)
            return _page(request, workspace, res, ns, form, status=400)
        messages.success(request, "Retention policy saved. Preview it below before its first "
                                  "run.")
        return redirect(request.path)
    policy = RetentionPolicy.objects.filter(tier=data["tier"], **target).first()
    if policy is None:
        form.add_error("tier", "There is no policy for this tier here.")
        return _page(request, workspace, res, ns, form, status=400)
    if data["act"] == "remove":
        retention_policy_remove(actor=actor, policy=policy)
        messages.success(request, "Retention policy removed.")
        return redirect(request.path)
    job = retention_run_start(actor=actor, policy=policy)
    return redirect("jobs:detail", job.pk)


@require_http_methods(["GET", "POST"])
@login_required
def retention_resource(request: AuthenticatedHttpRequest, slug: str,
                       resource: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    res = access.get_resource(request.user, workspace, resource)
    return _retention(request, workspace, res, None)


@require_http_methods(["GET", "POST"])
@login_required
def retention_namespace(request: AuthenticatedHttpRequest, slug: str, resource: str,
                        namespace: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    res = access.get_resource(request.user, workspace, resource)
    ns = access.get_namespace(request.user, res, namespace)
    return _retention(request, workspace, res, ns)
