from __future__ import annotations

from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "memadmin.audit"
    label = "audit"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from memadmin.lib.middleware import start_session_clocks

        # Session idle/absolute clocks (memadmin.lib.middleware) start at every login.
        user_logged_in.connect(start_session_clocks, dispatch_uid="memadmin_session_clocks")
