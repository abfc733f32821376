from __future__ import annotations

from django.apps import AppConfig


class WorkspacesConfig(AppConfig):
    name = "memadmin.workspaces"
    label = "workspaces"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from memadmin.lib.sessions import start_session_clocks

        # Users and their roles live here, so their sessions' clocks start here: both the idle
        # and the absolute timeout (memadmin.lib.sessions) count from every login.
        user_logged_in.connect(start_session_clocks, dispatch_uid="memadmin_session_clocks")
