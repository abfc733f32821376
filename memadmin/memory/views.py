"""Memory pages: agent tokens (owners mint them for the namespaces they own)."""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Exists, OuterRef
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from memadmin.lib import access
from memadmin.lib.audit import Actor
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.memory.forms import AgentTokenForm
from memadmin.memory.models import AgentToken
from memadmin.memory.services import agent_token_mint, agent_token_revoke
from memadmin.workspaces.views import ws_context


def _manageable_tokens(user, workspace):  # type: ignore[no-untyped-def]
    """Tokens whose every namespace the user owns (admins and workspace owners: all)."""
    owned = access.owned_namespaces(user, workspace)
    tokens = AgentToken.objects.filter(workspace=workspace)
    if access.can(user, "manage_workspace", workspace):
        return tokens
    foreign = AgentToken.namespaces.through.objects.filter(
        agenttoken_id=OuterRef("pk")).exclude(namespace_id__in=owned.values("pk"))
    return tokens.exclude(Exists(foreign))


def _page(request: AuthenticatedHttpRequest, workspace, form, *, secret: str | None = None,  # type: ignore[no-untyped-def]
          status: int = 200) -> HttpResponse:
    tokens = (_manageable_tokens(request.user, workspace)
              .prefetch_related("namespaces__resource").order_by("-created_at"))
    response = render(request, "memory/tokens.html", ws_context(
        request, workspace, tokens=list(tokens), form=form, secret=secret, tab="tokens",
        can_mint=access.owned_namespaces(request.user, workspace).exists()),
        status=status)
    response["Cache-Control"] = "no-store"
    return response


@require_GET
@login_required
def token_list(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    owned = access.owned_namespaces(request.user, workspace)
    return _page(request, workspace, AgentTokenForm(namespaces=owned))


@require_POST
@login_required
def token_mint(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    owned = access.owned_namespaces(request.user, workspace)
    if not owned.exists():
        raise PermissionDenied("you own no namespace here")
    form = AgentTokenForm(request.POST, namespaces=owned)
    if not form.is_valid():
        return _page(request, workspace, form, status=400)
    try:
        token, secret = agent_token_mint(
            actor=Actor.of(request.user), workspace=workspace,
            namespaces=list(form.cleaned_data["namespaces"]),
            access=form.cleaned_data["access"], name=form.cleaned_data["name"])
    except ValidationError as exc:
        form.add_error(None, exc)
        return _page(request, workspace, form, status=400)
    # The secret is shown in this response only; it is never stored or shown again.
    return _page(request, workspace, AgentTokenForm(namespaces=owned), secret=secret)


@require_POST
@login_required
def token_revoke(request: AuthenticatedHttpRequest, slug: str, token_id: UUID) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    token = _manageable_tokens(request.user, workspace).filter(pk=token_id).first()
    if token is None:
        raise Http404("not found")
    agent_token_revoke(actor=Actor.of(request.user), token=token)
    messages.success(request, f"Token {token.prefix}… revoked.")
    return redirect("memory:tokens", workspace.slug)
