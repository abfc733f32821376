"""Top-level URLs: each app's urls.py under its namespace."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import include, path

from memadmin.accounts import sso

urlpatterns = [
    # First: the agents' endpoint is the hottest URL, and every pattern tried before it cost
    # ~0.1 ms a request (Django records each miss); no other pattern matches its path (tested).
    path("", include("memadmin.endpoint.urls")),
    path("accounts/login/", sso.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("memadmin.accounts.urls")),
    path("", include("memadmin.workspaces.urls")),
    path("", include("memadmin.jobs.urls")),
    path("", include("memadmin.providers.urls")),
    path("", include("memadmin.memory.urls")),
    path("", include("memadmin.quarantine.urls")),
    path("", include("memadmin.gdpr.urls")),
    path("", include("memadmin.events.urls")),
    path("", include("memadmin.audit.urls")),
]
