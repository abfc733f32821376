"""The outbox with real processes: a committed change asks a worker to deliver (once per
transaction), the scheduler's sweep finds what is due, a worker killed mid-delivery loses
nothing, and the log expires."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from memadmin.audit.services import Actor
from memadmin.events import delivery
from memadmin.events.models import Delivery, DeliveryAttempt, Event
from memadmin.events.services import webhook_endpoint_create
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from tests.events.receiver import verify
from tests.jobs.test_runner import database_url, wait_for

SYSTEM = Actor.system("test")
BASE_DIR = Path(settings.BASE_DIR)
TASK = "memadmin.events.tasks.deliver_events_task"
transactional = pytest.mark.django_db(transaction=True)


def write(config, namespace, op: str) -> str:
    return provider_for(config).retain("facts", "", f"note {op}", "replace", operation_id=op,
                                       scope=c.Scope.of(namespace.partition_key),
                                       deadline=5).id


def tasks() -> int:
    return DBTaskResult.objects.filter(task_path=TASK).count()


@transactional
def test_a_committed_change_asks_a_worker_once_per_transaction(workspace, local_config,
                                                               namespace, receiver) -> None:
    _, secret = webhook_endpoint_create(actor=SYSTEM, workspace=workspace, name="siem",
                                        url=receiver.url)
    with transaction.atomic():
        write(local_config, namespace, "op-1")
        write(local_config, namespace, "op-2")
        assert tasks() == 0  # not before the commit
    assert tasks() == 1
    call_command("db_worker", batch=True, startup_delay=False, reload=False)
    assert len(receiver.received) == 2
    assert all(verify(secret, r) for r in receiver.received)
    assert set(Delivery.objects.values_list("state", flat=True)) == {"delivered"}


@transactional
def test_the_sweep_asks_a_worker_only_when_something_is_due(workspace, local_config, namespace,
                                                            receiver) -> None:
    delivery.sweep()
    assert tasks() == 0
    webhook_endpoint_create(actor=SYSTEM, workspace=workspace, name="siem", url=receiver.url)
    write(local_config, namespace, "op-1")
    DBTaskResult.objects.all().delete()  # as if the worker never got the request
    delivery.sweep()
    assert tasks() == 1
    call_command("db_worker", batch=True, startup_delay=False, reload=False)
    assert len(receiver.received) == 1
    delivery.sweep()
    assert tasks() == 1


@transactional
def test_a_worker_killed_mid_delivery_loses_nothing(workspace, local_config, namespace,
                                                    receiver, tmp_path: Path) -> None:
    _, secret = webhook_endpoint_create(actor=SYSTEM, workspace=workspace, name="siem",
                                        url=receiver.url)
    write(local_config, namespace, "op-1")
    row = Delivery.objects.get()
    (tmp_path / "webhook.send.pause").write_text(json.dumps({"delivery": str(row.pk)}))
    env = {**os.environ, "MEMADMIN_FAILPOINTS_DIR": str(tmp_path),
           "DATABASE_URL": database_url(), "DEBUG": "true"}
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--no-reload",
         "--interval", "0.1"],
        cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        reached = wait_for(tmp_path / "webhook.send.reached", worker)
        assert reached["delivery"] == str(row.pk)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()

    row.refresh_from_db()
    assert (row.state, row.attempts) == ("pending", 0)
    assert row.locked_until is not None and receiver.received == []
    # While the dead worker's claim looks alive nothing is sent; once it has run out (moved
    # here rather than waited for), the sweep hands the delivery to a new worker.
    DBTaskResult.objects.all().delete()
    delivery.sweep()
    assert tasks() == 0
    Delivery.objects.filter(pk=row.pk).update(locked_until=timezone.now()
                                              - dt.timedelta(seconds=1))
    delivery.sweep()
    call_command("db_worker", batch=True, startup_delay=False, reload=False)

    row.refresh_from_db()
    assert (row.state, row.attempts) == ("delivered", 1)
    [got] = receiver.received
    assert verify(secret, got)
    assert DeliveryAttempt.objects.count() == 1


@pytest.mark.django_db
def test_the_log_expires_but_never_what_is_still_waiting(workspace, local_config, namespace,
                                                         receiver, settings) -> None:
    settings.MEMADMIN_WEBHOOK_LOG_DAYS = 30
    webhook_endpoint_create(actor=SYSTEM, workspace=workspace, name="siem", url=receiver.url)
    write(local_config, namespace, "op-1")
    write(local_config, namespace, "op-2")
    delivered, waiting = Event.objects.order_by("created_at")
    delivery.deliver_now(delivered.deliveries.get())
    Event.objects.update(created_at=timezone.now() - dt.timedelta(days=31))

    delivery.expire_log()

    assert list(Event.objects.values_list("pk", flat=True)) == [waiting.pk]
    assert DeliveryAttempt.objects.count() == 0
