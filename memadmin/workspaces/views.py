"""Workspace pages: the list, a workspace's home, resources, namespaces and administration."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memadmin.audit.services import Actor
from memadmin.jobs.services import job_create
from memadmin.lib.forms import apply_service
from memadmin.lib.http import AuthenticatedHttpRequest, posted
from memadmin.memory import retention
from memadmin.workspaces import access, forms, selectors, services
from memadmin.workspaces.context import ws_context


def _in_workspace(model: Any, workspace: Any, pk: Any) -> Any:
    """A row of ``model`` that belongs to ``workspace``, or 404."""
    row = model.objects.filter(workspace=workspace, pk=pk).first()
    if row is None:
        raise Http404("not found")
    return row



def _edit_saved(form: Any, obj: Any, update: Any) -> bool:
    """Save an edit form's changed fields through ``update(**changes)`` (a service); False
    when the service refused them (its errors are on the form). Nothing changed is saved."""
    changes = {f: form.cleaned_data[f] for f in form.changed_data}
    obj.refresh_from_db()
    return not changes or apply_service(form, lambda: update(**changes)) is not None


@require_GET
@login_required
def workspace_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    workspaces = list(selectors.workspace_list(user=request.user))
    return render(request, "workspaces/list.html", {"workspaces": workspaces})


@require_GET
@login_required
def workspace_home(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    from memadmin.providers.selectors import health_panel

    overview = selectors.workspace_overview(user=request.user, workspace=workspace)
    return render(request, "workspaces/home.html",
                  ws_context(request, workspace, overview=overview, tab="home",
                             panel=health_panel(workspace)))


def _settings_page(request: AuthenticatedHttpRequest, workspace: Any, form: Any, *,
                   secret: str | None = None, metrics_secret: str | None = None,
                   alert_form: Any = None, status: int = 200) -> HttpResponse:
    from memadmin.providers.models import AlertDelivery
    from memadmin.workspaces.models import AdminCredential, AlertTarget, MetricsToken

    credentials = list(AdminCredential.objects.filter(workspace=workspace)
                       .order_by("-created_at"))
    return render(request, "workspaces/settings.html", ws_context(
        request, workspace, form=form, credentials=credentials, secret=secret,
        credential_form=forms.AdminCredentialForm(), metrics_form=forms.MetricsTokenForm(),
        tab="settings",
        alerts=list(AlertTarget.objects.filter(workspace=workspace).order_by("created_at")),
        alert_form=alert_form or forms.AlertTargetForm(),
        deliveries=list(AlertDelivery.objects.filter(target__workspace=workspace)
                        .select_related("target", "transition__provider")
                        .order_by("-at", "-pk")[:20]),
        metrics_tokens=list(MetricsToken.objects.filter(workspace=workspace)
                            .order_by("-created_at")),
        metrics_secret=metrics_secret, pending_changes=list(
            workspace.setting_changes.filter(state="pending").order_by("requested_at"))),
        status=status)


@require_http_methods(["GET", "POST"])
@login_required
def workspace_settings(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    form = forms.WorkspaceSettingsForm(posted(request), instance=workspace)
    if request.method == "POST":
        if not form.is_valid():
            return _settings_page(request, workspace, form, status=400)
        changes = {f: form.cleaned_data[f] for f in form.changed_data}
        workspace.refresh_from_db()
        asked = workspace.four_eyes_erasure and changes.get("four_eyes_erasure") is False
        if asked:
            # Loosening four eyes waits for a second admin; the rest is saved now.
            del changes["four_eyes_erasure"]
        if changes and apply_service(form, lambda: services.workspace_update_settings(
                actor=Actor.of(request.user), workspace=workspace, **changes)) is None:
            return _settings_page(request, workspace, form, status=400)
        if asked:
            services.workspace_setting_change_request(
                actor=Actor.of(request.user), workspace=workspace,
                setting="four_eyes_erasure", value=False)
            messages.info(request, "Switching four-eyes erasure off waits for another admin's "
                                   "confirmation; until then erasures still need approval.")
        messages.success(request, "Settings saved.")
        return redirect("workspaces:settings", workspace.slug)
    return _settings_page(request, workspace, form)


def _setting_change(request: AuthenticatedHttpRequest, slug: str, change_id: UUID) -> Any:
    from memadmin.workspaces.models import WorkspaceSettingChange

    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    return _in_workspace(WorkspaceSettingChange, workspace, change_id)


def _decided(request: AuthenticatedHttpRequest, slug: str, call: Any,
             done: str) -> HttpResponse:
    try:
        call()
    except services.SettingChangeError as exc:
        if exc.conflict:
            return HttpResponse(exc.message, status=409, content_type="text/plain")
        raise PermissionDenied(exc.message) from None
    messages.success(request, done)
    return redirect("workspaces:settings", slug)


@require_POST
@login_required
def setting_change_confirm(request: AuthenticatedHttpRequest, slug: str,
                           change_id: UUID) -> HttpResponse:
    change = _setting_change(request, slug, change_id)
    return _decided(request, slug, lambda: services.workspace_setting_change_confirm(
        actor=Actor.of(request.user), change=change), "Confirmed: the change applies now.")


@require_POST
@login_required
def setting_change_cancel(request: AuthenticatedHttpRequest, slug: str,
                          change_id: UUID) -> HttpResponse:
    change = _setting_change(request, slug, change_id)
    return _decided(request, slug, lambda: services.workspace_setting_change_cancel(
        actor=Actor.of(request.user), change=change), "The pending change was withdrawn.")


@require_POST
@login_required
def credential_mint(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    form = forms.AdminCredentialForm(request.POST)
    settings_form = forms.WorkspaceSettingsForm(instance=workspace)
    if not form.is_valid():
        messages.error(request, "A credential needs a name of at most 100 characters.")
        return _settings_page(request, workspace, settings_form, status=400)
    _, secret = services.admin_credential_mint(actor=Actor.of(request.user), workspace=workspace,
                                               name=form.cleaned_data["name"],
                                               lifetime_days=form.cleaned_data["lifetime"])
    # Shown in this response only: only the hash is stored.
    return _settings_page(request, workspace, settings_form, secret=secret)


@require_POST
@login_required
def credential_revoke(request: AuthenticatedHttpRequest, slug: str,
                      credential_id: UUID) -> HttpResponse:
    from memadmin.workspaces.models import AdminCredential

    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    credential = _in_workspace(AdminCredential, workspace, credential_id)
    services.admin_credential_revoke(actor=Actor.of(request.user), credential=credential)
    messages.success(request, f"Credential {credential.prefix}… revoked.")
    return redirect("workspaces:settings", workspace.slug)


@require_POST
@login_required
def alert_add(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    form = forms.AlertTargetForm(request.POST)
    settings_form = forms.WorkspaceSettingsForm(instance=workspace)
    if form.is_valid() and apply_service(form, lambda: services.alert_target_add(
            actor=Actor.of(request.user), workspace=workspace, **form.cleaned_data)) is not None:
        messages.success(request, "Alert target added.")
        return redirect("workspaces:settings", workspace.slug)
    return _settings_page(request, workspace, settings_form, alert_form=form, status=400)


@require_POST
@login_required
def alert_test(request: AuthenticatedHttpRequest, slug: str, alert_id: UUID) -> HttpResponse:
    from memadmin.providers.services import alert_target_test
    from memadmin.workspaces.models import AlertTarget

    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    alert = _in_workspace(AlertTarget, workspace, alert_id)
    error = alert_target_test(actor=Actor.of(request.user), alert=alert)
    if error is None:
        messages.success(request, "Test alert delivered.")
    else:
        messages.error(request, f"The test alert was not delivered: {error}")
    return redirect("workspaces:settings", workspace.slug)


@require_POST
@login_required
def alert_remove(request: AuthenticatedHttpRequest, slug: str, alert_id: UUID) -> HttpResponse:
    from memadmin.workspaces.models import AlertTarget

    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    alert = _in_workspace(AlertTarget, workspace, alert_id)
    services.alert_target_remove(actor=Actor.of(request.user), alert=alert)
    messages.success(request, "Alert target removed.")
    return redirect("workspaces:settings", workspace.slug)


@require_POST
@login_required
def metrics_token_mint(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    form = forms.MetricsTokenForm(request.POST)
    lifetime = (form.cleaned_data["lifetime"] if form.is_valid()
                else services.DEFAULT_TOKEN_LIFETIME_DAYS)
    _, secret = services.metrics_token_mint(actor=Actor.of(request.user), workspace=workspace,
                                            name="prometheus", lifetime_days=lifetime)
    return _settings_page(request, workspace, forms.WorkspaceSettingsForm(instance=workspace),
                          metrics_secret=secret)


@require_POST
@login_required
def metrics_token_revoke(request: AuthenticatedHttpRequest, slug: str,
                         token_id: UUID) -> HttpResponse:
    from memadmin.workspaces.models import MetricsToken

    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    token = _in_workspace(MetricsToken, workspace, token_id)
    services.metrics_token_revoke(actor=Actor.of(request.user), token=token)
    messages.success(request, "Metrics token revoked.")
    return redirect("workspaces:settings", workspace.slug)


@require_POST
@login_required
def secret_reactivate(request: AuthenticatedHttpRequest, slug: str, kind: str,
                      secret_id: UUID) -> HttpResponse:
    """Lift the suspension of a token whose minter lost their role (admins only)."""
    from memadmin.memory.models import AgentToken
    from memadmin.workspaces.models import AdminCredential, MetricsToken

    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    model = {"agent-token": AgentToken, "credential": AdminCredential,
             "metrics-token": MetricsToken}.get(kind)
    if model is None:
        raise Http404("not found")
    row = _in_workspace(model, workspace, secret_id)
    services.hashed_secret_reactivate(actor=Actor.of(request.user), row=row)
    messages.success(request, f"{row.prefix}… re-activated.")
    if model is AgentToken:
        return redirect("memory:tokens", workspace.slug)
    return redirect("workspaces:settings", workspace.slug)


# -- members and roles ----------------------------------------------------------------------


def _members_page(request: AuthenticatedHttpRequest, workspace: Any, *, member_form: Any = None,
                  owner_form: Any = None, status: int = 200) -> HttpResponse:
    return render(request, "workspaces/members.html", {
        **ws_context(request, workspace, tab="members"),
        "members": access.members(workspace),
        "owners": access.namespace_owners(workspace),
        "member_form": member_form or forms.MemberForm(),
        "owner_form": owner_form or forms.OwnerForm(workspace=workspace),
        "role_choices": forms.ROLE_CHOICES,
    }, status=status)


@require_GET
@login_required
def members(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_members")
    return _members_page(request, workspace)


@require_POST
@login_required
def member_add(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_members")
    form = forms.MemberForm(request.POST)
    if not form.is_valid():
        return _members_page(request, workspace, member_form=form, status=400)
    user = form.cleaned_data["username"]
    roles = set(form.cleaned_data["roles"]) | access.workspace_roles(user, workspace)
    services.member_set_roles(actor=Actor.of(request.user), workspace=workspace, user=user,
                              roles=sorted(roles))
    messages.success(request, f"{user.get_username()} now has: {', '.join(sorted(roles))}.")
    return redirect("workspaces:members", workspace.slug)


@require_POST
@login_required
def member_roles(request: AuthenticatedHttpRequest, slug: str, username: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_members")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise Http404("not found")
    form = forms.MemberRolesForm(request.POST)
    if not form.is_valid():
        return _members_page(request, workspace, status=400)
    roles = form.cleaned_data["roles"]
    if not roles and request.POST.get("confirm") != "remove":
        # Unticking every role removes the member: say what that does and ask first.
        return render(request, "workspaces/member_remove_confirm.html", ws_context(
            request, workspace, tab="members", member=user,
            roles=sorted(access.workspace_roles(user, workspace))))
    if user == request.user and "admin" not in roles and not request.user.is_superuser:
        messages.error(request, "You cannot remove your own admin role; ask another admin.")
        return redirect("workspaces:members", workspace.slug)
    services.member_set_roles(actor=Actor.of(request.user), workspace=workspace, user=user,
                              roles=roles)
    messages.success(request, f"Roles of {user.get_username()} saved." if roles
                     else f"{user.get_username()} removed from the workspace.")
    return redirect("workspaces:members", workspace.slug)


@require_POST
@login_required
def owner_add(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_members")
    form = forms.OwnerForm(request.POST, workspace=workspace)
    if form.is_valid():
        services.role_grant(actor=Actor.of(request.user), workspace=workspace,
                            user=form.cleaned_data["username"], role="owner",
                            namespace=form.cleaned_data["namespace"])
        messages.success(request, "Namespace owner added.")
        return redirect("workspaces:members", workspace.slug)
    return _members_page(request, workspace, owner_form=form, status=400)


@require_POST
@login_required
def owner_remove(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_members")
    form = forms.OwnerForm(request.POST, workspace=workspace)
    if not form.is_valid():
        return _members_page(request, workspace, owner_form=form, status=400)
    services.role_revoke(actor=Actor.of(request.user), workspace=workspace,
                         user=form.cleaned_data["username"], role="owner",
                         namespace=form.cleaned_data["namespace"])
    messages.success(request, "Namespace owner removed.")
    return redirect("workspaces:members", workspace.slug)


# -- resources ------------------------------------------------------------------------------


@require_GET
@login_required
def resource_detail(request: AuthenticatedHttpRequest, slug: str, resource: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    obj = access.get_resource(request.user, workspace, resource)
    return render(request, "workspaces/resource.html", {
        **ws_context(request, workspace), "resource": obj,
        "namespaces": selectors.resource_namespaces(user=request.user, resource=obj),
        "can_manage": access.can(request.user, "manage_workspace", workspace),
        "can_export": access.exportable_namespaces(request.user, workspace)
                            .filter(resource=obj).exists(),
        "retention_policies": retention.resource_policies(obj),
    })


@require_http_methods(["GET", "POST"])
@login_required
def resource_create(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    form = forms.ResourceForm(posted(request), workspace=workspace)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        created = apply_service(form, lambda: services.resource_create(
            actor=Actor.of(request.user), workspace=workspace, **data))
        if created is not None:
            messages.success(request, f"Resource {created.slug} created.")
            return redirect("workspaces:resource", workspace.slug, created.slug)
    return render(request, "workspaces/resource_form.html",
                  ws_context(request, workspace, form=form, creating=True),
                  status=400 if form.errors else 200)


@require_http_methods(["GET", "POST"])
@login_required
def resource_edit(request: AuthenticatedHttpRequest, slug: str, resource: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    obj = access.get_resource(request.user, workspace, resource)
    form = forms.ResourceEditForm(posted(request), instance=obj)
    if request.method == "POST" and form.is_valid() and _edit_saved(
            form, obj, lambda **changes: services.resource_update(
                actor=Actor.of(request.user), resource=obj, **changes)):
        messages.success(request, "Resource saved.")
        return redirect("workspaces:resource", workspace.slug, obj.slug)
    return render(request, "workspaces/resource_form.html",
                  ws_context(request, workspace, resource=obj, form=form),
                  status=400 if form.errors else 200)


@require_POST
@login_required
def resource_delete(request: AuthenticatedHttpRequest, slug: str, resource: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    obj = access.get_resource(request.user, workspace, resource)
    try:
        services.resource_delete(actor=Actor.of(request.user), resource=obj)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("workspaces:resource", workspace.slug, obj.slug)
    messages.success(request, f"Resource {resource} deleted.")
    return redirect("workspaces:home", workspace.slug)


# -- namespaces -----------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@login_required
def namespace_create(request: AuthenticatedHttpRequest, slug: str, resource: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    obj = access.get_resource(request.user, workspace, resource)
    form = forms.NamespaceForm(posted(request))
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        key = data.pop("partition_key") or None
        if key and obj.provider.kind == "local":
            form.add_error("partition_key", "Built-in namespaces always use the derived key.")
        else:
            created = apply_service(form, lambda: services.namespace_create(
                actor=Actor.of(request.user), resource=obj, partition_key=key, **data))
            if created is not None:
                messages.success(request, f"Namespace {created.slug} created.")
                return redirect("workspaces:namespace", workspace.slug, obj.slug, created.slug)
    return render(request, "workspaces/namespace_form.html",
                  ws_context(request, workspace, resource=obj, form=form, creating=True),
                  status=400 if form.errors else 200)


@require_GET
@login_required
def namespace_detail(request: AuthenticatedHttpRequest, slug: str, resource: str,
                     namespace: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    res = access.get_resource(request.user, workspace, resource)
    ns = access.get_namespace(request.user, res, namespace)
    return render(request, "workspaces/namespace.html", {
        **ws_context(request, workspace), "resource": res, "namespace": ns,
        "row": selectors.namespace_row(user=request.user, namespace=ns),
        "owners": selectors.namespace_owner_names(ns),
        "can_manage": access.can(request.user, "manage_workspace", workspace),
        "can_recount": access.can(request.user, "edit_memory", workspace, ns),
        "retention_policies": retention.namespace_policies(ns),
    })


@require_http_methods(["GET", "POST"])
@login_required
def namespace_edit(request: AuthenticatedHttpRequest, slug: str, resource: str,
                   namespace: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    res = access.get_resource(request.user, workspace, resource)
    ns = access.get_namespace(request.user, res, namespace)
    form = forms.NamespaceEditForm(posted(request), instance=ns)
    if request.method == "POST" and form.is_valid() and _edit_saved(
            form, ns, lambda **changes: services.namespace_update(
                actor=Actor.of(request.user), namespace=ns, **changes)):
        messages.success(request, "Namespace saved.")
        return redirect("workspaces:namespace", workspace.slug, res.slug, ns.slug)
    return render(request, "workspaces/namespace_form.html",
                  ws_context(request, workspace, resource=res, namespace=ns, form=form),
                  status=400 if form.errors else 200)


@require_POST
@login_required
def namespace_delete(request: AuthenticatedHttpRequest, slug: str, resource: str,
                     namespace: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_workspace")
    res = access.get_resource(request.user, workspace, resource)
    ns = access.get_namespace(request.user, res, namespace)
    try:
        services.namespace_delete(actor=Actor.of(request.user), namespace=ns)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("workspaces:namespace", workspace.slug, res.slug, ns.slug)
    messages.success(request, f"Namespace {namespace} deleted.")
    return redirect("workspaces:resource", workspace.slug, res.slug)


@require_POST
@login_required
def namespace_recount(request: AuthenticatedHttpRequest, slug: str, resource: str,
                      namespace: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    res = access.get_resource(request.user, workspace, resource)
    ns = access.get_namespace(request.user, res, namespace, "edit_memory")
    job = job_create(actor=Actor.of(request.user), kind="namespace_recount",
                     workspace=workspace, params={"namespace": str(ns.pk)})
    return redirect("jobs:detail", job.pk)
