"""Page chrome: what every workspace page's layout (``workspaces/workspace_base.html``) needs.

A face-level helper (views call it, nothing below them does): it reads the selectors of the
apps whose badges the tab bar shows."""

from __future__ import annotations

from typing import Any

from memadmin.gdpr.selectors import waiting_for_approval_count
from memadmin.lib.http import AuthenticatedHttpRequest
from memadmin.providers.selectors import health_summary
from memadmin.quarantine.selectors import pending_count
from memadmin.workspaces import access


def ws_context(request: AuthenticatedHttpRequest, workspace: Any, **extra: Any) -> dict[str, Any]:
    """The workspace, the user's capabilities and the tab badges, plus the page's ``extra``."""
    can = access.capabilities(request.user, workspace)
    return {"workspace": workspace, "can": can, "health_summary": health_summary(workspace),
            "quarantine_pending": pending_count(workspace) if can["review_quarantine"] else None,
            "approvals_waiting": waiting_for_approval_count(workspace, request.user)
            if can["subject_requests"] else None,
            **extra}
