from __future__ import annotations

from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "memadmin.providers"
    label = "providers"

    def ready(self) -> None:
        from memadmin.jobs import scheduler

        scheduler.register("poll provider health", every="MEMADMIN_HEALTH_INTERVAL",
                           run="memadmin.providers.health.poll_all")
        scheduler.register("expire health history", every=3600,
                           run="memadmin.providers.health.expire_history")
