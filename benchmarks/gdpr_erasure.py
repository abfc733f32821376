"""Erasure cascade, end to end: 10,000 items of one data subject, erased by a subject request.

Over a throwaway database (``support.bench_database``) it starts the site on a free loopback
port (``manage.py runserver``, as recall_roundtrip.py does) so the ``http`` provider talks to the
project's own endpoint, then for each layout times, a few times over, from submitting the
request to its ``completed`` state (the job run in this process: every provider step, the
verification counts, tombstone, scrub and signed receipt), and prints the median and items/s:

- ``built-in only``: the built-in store's step removes the items;
- ``http + built-in``: the ``http`` provider (no namespaces of its own, so it is asked about
  the workspace's partitions, which the endpoint serves from the same store) removes them over
  the wire; the built-in step then finds none, and both are verified.

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/gdpr_erasure.py [ITEMS] [RUNS]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from typing import Any

from support import bench_database, record, served_project, setup_django

setup_django()

SUBJECT = "bench-subject-0001@example.com"


def seed(namespaces: list[Any], items: int) -> None:
    """Bulk rows (the benchmark times the erasure, not the writes), counters set to match."""
    from django.db.models import Count, Sum
    from django.utils import timezone

    from memadmin.memory.models import MemoryItem, NamespaceCounter

    now = timezone.now()
    rows = [MemoryItem(namespace=namespaces[i % len(namespaces)], tier="facts", key=f"f{i:06d}",
                       content=f"Fact {i} about the subject: prefers tea, lives in Lyon.",
                       bytes=52, revision=1, data_subject_id=SUBJECT, updated_by="bench",
                       created_at=now, updated_at=now)
            for i in range(items)]
    MemoryItem.objects.bulk_create(rows, batch_size=2000)
    for ns in namespaces:
        totals = MemoryItem.objects.filter(namespace=ns).aggregate(n=Count("id"), b=Sum("bytes"))
        NamespaceCounter.objects.filter(namespace=ns).update(items=totals["n"],
                                                             bytes=totals["b"] or 0)


def erase_once(actor: Any, workspace: Any) -> tuple[float, dict[str, Any]]:
    from memadmin.gdpr.models import SubjectRequest, Tombstone
    from memadmin.gdpr.transitions import subject_request_create, subject_request_submit
    from memadmin.jobs import runner

    Tombstone.objects.all().delete()  # each run starts as the first did
    request = subject_request_create(actor=actor, workspace=workspace, kind="erasure",
                                     subject_id=SUBJECT, reason="benchmark")
    started = time.perf_counter()
    subject_request_submit(actor=actor, subject_request=request)
    job = SubjectRequest.objects.get(pk=request.pk).job
    outcome = runner.run_job(str(job.pk))
    elapsed = time.perf_counter() - started
    request = SubjectRequest.objects.get(pk=request.pk)
    if outcome != "succeeded" or request.state != "completed":
        raise SystemExit(f"the erasure did not complete: {outcome}, {request.state}")
    return elapsed, {s.provider_label: s.removed for s in request.steps.order_by("pk")}


def main() -> None:
    from django.conf import settings
    from django.contrib.auth.models import User

    from memadmin.audit.services import Actor
    from memadmin.providers.services import provider_config_create, provider_config_update
    from memadmin.workspaces.services import (
        admin_credential_mint,
        namespace_create,
        resource_create,
        role_grant,
        workspace_create,
    )

    items = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    files = tempfile.mkdtemp(prefix="gdpr-bench-")
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": files}}}
    results: dict[str, list[float]] = {}
    with bench_database("gdpr") as db:
        system = Actor.system("bench")
        workspace = workspace_create(actor=system, slug="bench", name="Erasure benchmark")
        workspace.four_eyes_erasure = False
        workspace.save()
        user = User.objects.create_user("compliance", "c@example.com", "x")
        role_grant(actor=system, workspace=workspace, user=user, role="compliance")
        actor = Actor.of(user)
        local = provider_config_create(actor=system, workspace=workspace, slug="builtin",
                                       name="Built-in", kind="local", probed=True)
        resource = resource_create(actor=system, workspace=workspace, provider=local,
                                   slug="kb")
        namespaces = [namespace_create(actor=system, resource=resource, slug=s)
                      for s in ("agent-a", "agent-b")]
        _, secret = admin_credential_mint(actor=system, workspace=workspace, name="bench")
        with served_project(db) as base:
            remote = provider_config_create(
                actor=system, workspace=workspace, slug="across-http", name="Across HTTP",
                kind="http", url=f"{base}/oc-memory", credential=secret,
                probed=True, request_deadline_ms=60_000)
            for layout, http_enabled in (("built-in only", False), ("http + built-in", True)):
                provider_config_update(actor=system, config=remote, enabled=http_enabled)
                results[layout] = []
                for _ in range(runs):
                    seed(namespaces, items)
                    elapsed, removed = erase_once(actor, workspace)
                    assert sum(removed.values()) == items, removed
                    results[layout].append(elapsed)
                print(f"{layout}: removed per step {removed}", file=sys.stderr)
    print(f"erasure cascade, {items:,} items of one subject in 2 namespaces, "
          f"median of {runs} runs")
    print(f"{'layout':<18}{'median s':>10}{'items/s':>10}")
    for layout, times in results.items():
        median = statistics.median(times)
        print(f"{layout:<18}{median:>10.2f}{items / median:>10,.0f}")
        record("gdpr_erasure", f"erase {items:,} items of one subject ({layout})",
               round(median, 2), "s (median)")


if __name__ == "__main__":
    main()
