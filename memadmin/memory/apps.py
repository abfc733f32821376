from __future__ import annotations

from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memadmin.memory"
    label = "memory"

    def ready(self) -> None:
        from memadmin.jobs import scheduler

        scheduler.register("expire operation records", every=3600,
                           run="memadmin.memory.jobs.expire_operation_records")
        scheduler.register("expire export files", every=3600,
                           run="memadmin.memory.exports.expire_export_files")
        scheduler.register("apply retention policies", every=3600,
                           run="memadmin.memory.retention.retention_sweep")
        scheduler.register("delete expired items", every=600,
                           run="memadmin.memory.retention.expiry_sweep")
