from __future__ import annotations

from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class JobsConfig(AppConfig):
    name = "memadmin.jobs"
    label = "jobs"

    def ready(self) -> None:
        from memadmin.jobs import scheduler

        # Each app registers its job handlers in its own jobs.py.
        autodiscover_modules("jobs")
        scheduler.register("reap jobs", every=15, run="memadmin.jobs.runner.reap")
        scheduler.register("worker heartbeat", every=30,
                           run="memadmin.jobs.scheduler.enqueue_worker_heartbeat")
