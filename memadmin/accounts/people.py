"""The people page of a workspace (admins): create accounts with a one-time password link,
deactivate and reactivate them, reset two-factor; and the page where a new person chooses a
password from that link."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_GET, require_POST

from memadmin.accounts import services
from memadmin.audit.services import Actor
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.workspaces import access
from memadmin.workspaces.context import ws_context
from memadmin.workspaces.forms import ROLE_CHOICES


class AccountForm(forms.Form):
    username = forms.RegexField(regex=r"^[\w.@+-]{1,150}$", max_length=150,
                                help_text="Letters, digits and @ . + - _ only.")
    email = forms.EmailField(required=False, help_text="If given, the password link is "
                                                       "e-mailed there too.")
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, widget=forms.CheckboxSelectMultiple,
                                      label="Roles in this workspace")


def _page(request: AuthenticatedHttpRequest, workspace: Any, form: Any = None, *,
          link: str | None = None, status: int = 200) -> HttpResponse:
    rows: dict[Any, tuple[Any, list[str]]] = {u.pk: (u, list(r))
                                              for u, r in access.members(workspace)}
    for user, namespace in access.namespace_owners(workspace):
        rows.setdefault(user.pk, (user, []))[1].append(f"owner of {namespace.slug}")
    listed = sorted(rows.values(), key=lambda row: row[0].username)
    manageable = services.manageable_accounts(request.user, [user for user, _ in listed])
    people = [(user, roles, user.pk in manageable) for user, roles in listed]
    return render(request, "accounts/people.html", ws_context(
        request, workspace, tab="members", form=form or AccountForm(),
        people=people, link=link), status=status)


@require_GET
@login_required
def people(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_members")
    return _page(request, workspace)


@require_POST
@login_required
def account_create(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_members")
    form = AccountForm(request.POST)
    if form.is_valid():
        try:
            user, link = services.account_create(
                actor=Actor.of(request.user), workspace=workspace,
                link_base=request.build_absolute_uri("/").rstrip("/"), **form.cleaned_data)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, f"Account {user.get_username()} created.")
            # Shown in this answer only: whoever has the link chooses the password.
            return _page(request, workspace, link=link)
    return _page(request, workspace, form, status=400)


def _account(workspace: Any, username: str) -> Any:
    user = get_user_model().objects.filter(username=username).first()
    if user is None or not access.member_workspaces(user).filter(pk=workspace.pk).exists():
        raise Http404("not found")
    return user


@require_POST
@login_required
def account_active(request: AuthenticatedHttpRequest, slug: str, username: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_members")
    user = _account(workspace, username)
    active = request.POST.get("active") == "1"
    try:
        services.account_set_active(actor=Actor.of(request.user), workspace=workspace,
                                    user=user, active=active)
    except PermissionDenied as exc:
        messages.error(request, str(exc))
        return redirect("accounts:people", workspace.slug)
    messages.success(request, f"{username} {'reactivated' if active else 'deactivated'}.")
    return redirect("accounts:people", workspace.slug)


@require_POST
@login_required
def account_reset_2fa(request: AuthenticatedHttpRequest, slug: str,
                      username: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug, "manage_members")
    user = _account(workspace, username)
    try:
        removed = services.account_reset_two_factor(actor=Actor.of(request.user),
                                                    workspace=workspace, user=user)
    except PermissionDenied as exc:
        messages.error(request, str(exc))
        return redirect("accounts:people", workspace.slug)
    messages.success(request, f"Two-factor reset for {username} ({removed} device"
                     f"{'s' if removed != 1 else ''} removed): they enrol again at next login.")
    return redirect("accounts:people", workspace.slug)


set_password = auth_views.PasswordResetConfirmView.as_view(
    template_name="accounts/set_password.html", success_url=reverse_lazy("login"),
    post_reset_login=False)
