from __future__ import annotations

from django.apps import AppConfig


class GdprConfig(AppConfig):
    name = "memadmin.gdpr"
    label = "gdpr"

    def ready(self) -> None:
        from memadmin.jobs import scheduler

        scheduler.register("subject request upkeep", every=300,
                           run="memadmin.gdpr.services.subject_requests_upkeep")
        scheduler.register("vacuum after erasures", every=3600,
                           run="memadmin.gdpr.services.vacuum_after_erasures")
