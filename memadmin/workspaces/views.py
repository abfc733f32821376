"""Workspace pages: the list, and a workspace's home."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memadmin.lib import access
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.workspaces import selectors


@require_GET
@login_required
def workspace_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    workspaces = list(selectors.workspace_list(user=request.user))
    return render(request, "workspaces/list.html", {"workspaces": workspaces})


@require_GET
@login_required
def workspace_home(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    workspace = access.get_workspace(request.user, slug)
    overview = selectors.workspace_overview(user=request.user, workspace=workspace)
    return render(request, "workspaces/home.html", {"workspace": workspace,
                                                     "overview": overview})
