"""What memory-event webhooks cost: the write path (a built-in store ``retain`` with no
endpoint, one and three endpoints subscribed, as ratios to the write with none: the outbox rows
are written in the writer's transaction) and delivery throughput to a loopback receiver
(signed POSTs through the outbound policy, one worker).

Runs in a database of its own, created (and migrated) next to the configured one and dropped at
the end:

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/webhooks.py [--writes 300] [--deliveries 300]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from support import bench_database, record, setup_django

setup_django()

from tests.events.receiver import Receiver  # noqa: E402


def writes(config: Any, namespace: Any, count: int, label: str) -> list[float]:
    from django.db import transaction

    from memadmin.providers import contract as c
    from memadmin.providers.registry import provider_for

    provider = provider_for(config)
    scope = c.Scope.of(namespace.partition_key)
    times = []
    for i in range(count):
        started = time.perf_counter()
        with transaction.atomic():
            provider.retain("facts", "", f"benchmark fact {label} {i} " + "x" * 200, "replace",
                            operation_id=f"bench-{label}-{i}", actor="agent:bench",
                            scope=scope, deadline=5)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--deliveries", type=int, default=300)
    args = parser.parse_args()

    from memadmin.audit.services import Actor
    from memadmin.events import delivery
    from memadmin.events.models import Delivery, WebhookEndpoint
    from memadmin.events.services import webhook_endpoint_create
    from memadmin.providers.services import provider_config_create
    from memadmin.workspaces.services import (
        namespace_create,
        resource_create,
        workspace_create,
    )

    actor = Actor.system("bench")
    receiver = Receiver()
    try:
        with bench_database("webhooks"):
            workspace = workspace_create(actor=actor, slug="bench-hooks", name="Webhooks")
            config = provider_config_create(actor=actor, workspace=workspace, slug="builtin",
                                            name="Built-in", kind="local", probed=True)
            resource = resource_create(actor=actor, workspace=workspace, provider=config,
                                       slug="facts")
            namespace = namespace_create(actor=actor, resource=resource, slug="main")
            writes(config, namespace, 30, "warm-up")
            rows = []
            for endpoints in (0, 1, 3):
                while WebhookEndpoint.objects.count() < endpoints:
                    webhook_endpoint_create(actor=actor, workspace=workspace,
                                            name=f"hook-{WebhookEndpoint.objects.count()}",
                                            url=receiver.url)
                times = writes(config, namespace, args.writes, f"e{endpoints}")
                rows.append((endpoints, statistics.median(times)))
            Delivery.objects.all().delete()
            WebhookEndpoint.objects.exclude(name="hook-0").delete()
            writes(config, namespace, args.deliveries, "queued")
            queued = Delivery.objects.filter(state="pending").count()
            started = time.perf_counter()
            sent = delivery.deliver_due(budget=600)
            took = time.perf_counter() - started
            assert sent == queued == len(receiver.received), (sent, queued)
    finally:
        receiver.stop()
    base = rows[0][1]
    print(f"webhooks: {args.writes} writes per row (retain in its own transaction, 200-byte "
          "facts), median per write")
    print(f"{'endpoints':>9} {'median ms':>10} {'ratio to none':>14}")
    for endpoints, median in rows:
        print(f"{endpoints:>9} {median * 1000:>10.2f} {median / base:>14.2f}")
        record("webhooks", f"retain with {endpoints} webhook endpoint(s)",
               round(median * 1000, 2), f"ms (median; {median / base:.2f}x the write with none)")
    rate = sent / took
    print(f"delivery: {sent} events to a loopback receiver in {took:.2f} s ({rate:.0f}/s, "
          "one worker, signed, through the outbound policy)")
    record("webhooks", "deliveries to a loopback receiver", round(rate), "events/s (one worker)")


if __name__ == "__main__":
    main()
