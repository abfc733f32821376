"""The only tasks given to the task backend: "run job X" and the worker heartbeat."""

from __future__ import annotations

from django.tasks import task

from memadmin.jobs import runner


@task
def run_job_task(job_id: str) -> str:
    return runner.run_job(job_id)


@task
def worker_heartbeat() -> None:
    runner.beat("worker", worker=runner.worker_label())
