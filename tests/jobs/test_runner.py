"""Jobs: leases, retries, cancellation, the reaper, and a worker killed mid-job."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from memadmin.audit.services import Actor
from memadmin.jobs import runner
from memadmin.jobs.models import Job, ServiceHeartbeat
from memadmin.jobs.services import job_cancel, job_create
from memadmin.memory.models import NamespaceCounter
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

SYSTEM = Actor.system("test")
BASE_DIR = Path(settings.BASE_DIR)


def fill(config, namespace, n: int) -> None:
    provider = provider_for(config)
    scope = c.Scope.of(namespace.partition_key)
    for i in range(n):
        provider.retain("facts", f"f{i:03d}", f"fact number {i}", "replace",
                        operation_id=f"fill-{i}", scope=scope, deadline=5)


def recount(namespace, batch_size: int = 10) -> Job:
    return job_create(actor=SYSTEM, kind="namespace_recount",
                      workspace=namespace.resource.workspace,
                      params={"namespace": str(namespace.pk), "batch_size": batch_size})


@pytest.fixture
def failing_kind():
    calls: list[int] = []

    @runner.job_handler("test_fails_once")
    def fails_once(ctx: runner.JobContext) -> dict[str, int]:
        calls.append(ctx.attempt)
        if ctx.attempt == 1:
            raise RuntimeError("secret content that must not reach the job row")
        return {"attempt": ctx.attempt}

    yield calls
    runner.HANDLERS.pop("test_fails_once")


@pytest.mark.django_db
class TestRunner:
    def test_a_recount_fixes_drifted_counters(self, namespace, local_config) -> None:
        fill(local_config, namespace, 25)
        NamespaceCounter.objects.filter(namespace=namespace).update(items=999, bytes=1)
        job = recount(namespace)

        assert runner.run_job(str(job.pk)) == "succeeded"
        job.refresh_from_db()
        counter = NamespaceCounter.objects.get(namespace=namespace)
        assert counter.items == 25
        assert (job.progress_done, job.progress_total, job.state) == (25, 25, "succeeded")
        assert job.result["batches"] == {"1": [0, 1, 2]}

    def test_a_second_delivery_of_the_same_job_does_nothing(self, namespace) -> None:
        job = recount(namespace)
        assert runner.run_job(str(job.pk)) == "succeeded"
        assert runner.run_job(str(job.pk)) == "not claimed"

    def test_a_live_lease_cannot_be_claimed_twice(self, namespace) -> None:
        job = recount(namespace)
        assert runner.claim(str(job.pk), "w1") is not None
        assert runner.claim(str(job.pk), "w2") is None
        later = timezone.now() + dt.timedelta(seconds=settings.MEMADMIN_JOB_LEASE_SECONDS + 1)
        assert runner.claim(str(job.pk), "w2", now=later) is not None

    def test_a_failure_is_retried_and_its_message_is_not_stored(self, failing_kind,
                                                                 workspace) -> None:
        job = job_create(actor=SYSTEM, kind="test_fails_once", params={}, workspace=workspace)
        assert runner.run_job(str(job.pk)) == "retrying"
        job.refresh_from_db()
        assert job.state == "queued"
        assert "secret" not in job.error and "RuntimeError" in job.error
        assert runner.run_job(str(job.pk)) == "succeeded"
        assert failing_kind == [1, 2]

    def test_it_fails_for_good_after_max_attempts(self, failing_kind, workspace) -> None:
        job = job_create(actor=SYSTEM, kind="test_fails_once", params={}, workspace=workspace,
                         max_attempts=1)
        assert runner.run_job(str(job.pk)) == "failed"

    def test_cancelling_a_queued_job_stops_it_before_it_runs(self, namespace) -> None:
        job = recount(namespace)
        job_cancel(actor=SYSTEM, job=job)
        assert runner.run_job(str(job.pk)) == "not claimed"
        job.refresh_from_db()
        assert job.state == "cancelled"

    def test_cancelling_a_running_job_stops_it_after_the_current_batch(self,
                                                                      workspace) -> None:
        reached: list[str] = []

        @runner.job_handler("test_two_batches")
        def two_batches(ctx: runner.JobContext) -> None:
            ctx.save_progress(done=1, total=3)
            job_cancel(actor=SYSTEM, job=Job.objects.get(pk=ctx.job.pk))  # someone clicks
            ctx.save_progress(done=2)
            reached.append("third batch")

        try:
            job = job_create(actor=SYSTEM, kind="test_two_batches", params={},
                             workspace=workspace)
            assert runner.run_job(str(job.pk)) == "cancelled"
        finally:
            runner.HANDLERS.pop("test_two_batches")
        job.refresh_from_db()
        assert (job.state, job.progress_done, reached) == ("cancelled", 2, [])


@pytest.mark.django_db
class TestReaper:
    def test_it_requeues_a_job_whose_lease_expired(self, namespace) -> None:
        job = recount(namespace)
        runner.claim(str(job.pk), "dead-worker")
        later = timezone.now() + dt.timedelta(seconds=settings.MEMADMIN_JOB_LEASE_SECONDS + 1)

        assert runner.reap(now=timezone.now()) == 0
        assert runner.reap(now=later) == 1
        job.refresh_from_db()
        assert job.state == "queued"

    def test_it_fails_a_job_that_used_up_its_attempts(self, namespace) -> None:
        job = recount(namespace)
        Job.objects.filter(pk=job.pk).update(state="running", attempts=5,
                                             lease_until=timezone.now())
        runner.reap(now=timezone.now() + dt.timedelta(seconds=1))
        job.refresh_from_db()
        assert job.state == "failed"


@pytest.mark.django_db(transaction=True)
class TestSchedulerAndWorker:
    def test_the_heartbeat_task_shows_the_worker_alive(self) -> None:
        call_command("scheduler", once=True)
        assert ServiceHeartbeat.objects.filter(name="scheduler").exists()
        call_command("db_worker", batch=True, startup_delay=False, reload=False)
        assert ServiceHeartbeat.objects.filter(name="worker").exists()


def database_url() -> str:
    db = connection.settings_dict
    host = db["HOST"] or ""
    if host.startswith("/"):
        return f"postgresql://{db['USER']}@/{db['NAME']}?host={host}"
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgresql://{db['USER']}@{host}{port}/{db['NAME']}"


def wait_for(path: Path, process: subprocess.Popen[bytes], limit: float = 60.0) -> dict:
    """Wait until the worker reaches the failpoint (bounded; fails if the worker dies)."""
    deadline = time.monotonic() + limit
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(f"the worker exited with {process.returncode}")
        if time.monotonic() > deadline:
            raise AssertionError("the worker never reached the failpoint")
        time.sleep(0.02)
    return json.loads(path.read_text())


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_job_is_reaped_and_resumes_without_repeating_batches(
    namespace, local_config, tmp_path: Path,
) -> None:
    fill(local_config, namespace, 30)
    NamespaceCounter.objects.filter(namespace=namespace).update(items=0, bytes=0)
    job = recount(namespace, batch_size=10)
    # Pause the worker right after its first batch has been checkpointed.
    (tmp_path / "job.progress.pause").write_text(json.dumps({"done": 10}))
    env = {**os.environ, "MEMADMIN_FAILPOINTS_DIR": str(tmp_path),
           "DATABASE_URL": database_url(), "DEBUG": "true"}
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--no-reload",
         "--interval", "0.1"],
        cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        reached = wait_for(tmp_path / "job.progress.reached", worker)
        assert reached["job"] == str(job.pk) and reached["done"] == 10
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()

    job.refresh_from_db()
    assert (job.state, job.progress_done, job.attempts) == ("running", 10, 1)
    assert job.checkpoint["batches"] == {"1": [0]}

    # Nothing happens while the dead worker's lease still looks alive; after it expires the
    # reaper re-enqueues the job and a new worker finishes it from the checkpoint.
    assert runner.reap() == 0
    runner.reap(now=timezone.now() + dt.timedelta(seconds=settings.MEMADMIN_JOB_LEASE_SECONDS + 1))
    call_command("db_worker", batch=True, startup_delay=False, reload=False)

    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    assert job.result["batches"] == {"1": [0], "2": [1, 2]}
    assert NamespaceCounter.objects.get(namespace=namespace).items == 30
