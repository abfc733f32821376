from __future__ import annotations

from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "memadmin.audit"
    label = "audit"

    def ready(self) -> None:
        from memadmin.jobs import scheduler

        scheduler.register("anchor audit chains", every="MEMADMIN_AUDIT_ANCHOR_SECONDS",
                           run="memadmin.audit.anchors.anchor_all")
