from __future__ import annotations

from django.apps import AppConfig


class WorkspacesConfig(AppConfig):
    name = "memadmin.workspaces"
    label = "workspaces"
