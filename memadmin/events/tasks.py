"""The task given to the task backend: "send what is due in the outbox"."""

from __future__ import annotations

from django.tasks import task

from memadmin.events import delivery


@task
def deliver_events_task() -> int:
    return delivery.deliver_due()
