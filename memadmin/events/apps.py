from __future__ import annotations

from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "memadmin.events"
    label = "events"

    def ready(self) -> None:
        from memadmin.jobs import scheduler

        # Retries, and deliveries whose worker died: the outbox is swept on a short interval.
        scheduler.register("deliver memory events", every="MEMADMIN_WEBHOOK_SWEEP_SECONDS",
                           run="memadmin.events.delivery.sweep")
        scheduler.register("expire the webhook log", every=3600,
                           run="memadmin.events.delivery.expire_log")
