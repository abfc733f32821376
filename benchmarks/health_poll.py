"""How long one health poll takes when some providers hang (PERF-NOTES "Health polling with
deadlines").

For 1, 10 and 50 remote providers — a fifth of them (rounded down) hanging, the others healthy,
each behind its own fake HTTP server on loopback, health deadline 1,000 ms — run five polls and
print the median poll time beside the slowest deadline (what a poll should take, whatever the
count: the goal is 1.05 times it) and the sum of the deadlines (what checking one after another
could cost).

Runs in a database of its own, created (and migrated) next to the configured one and dropped at
the end:

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/health_poll.py
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from support import bench_database, record, setup_django

setup_django()

from tests.providers.fake_provider import FakeProviders  # noqa: E402

COUNTS = (1, 10, 50)
POLLS = 5
DEADLINE_MS = 1000


def run(count: int, servers: FakeProviders, workspace: Any) -> dict[str, Any]:
    from memadmin.audit.services import Actor
    from memadmin.providers import health
    from memadmin.providers.models import ProviderHealth
    from memadmin.providers.services import provider_config_create

    hanging = count // 5
    configs = []
    for i in range(count):
        server = servers.start("hang" if i < hanging else "ok")
        configs.append(provider_config_create(
            actor=Actor.system("bench"), workspace=workspace, slug=f"n{count}-p{i}",
            name=f"Provider {i}", kind="http", url=server.url, credential="x", probed=True,
            health_deadline_ms=DEADLINE_MS))
    times = []
    for _ in range(POLLS):
        # A hanging call keeps its lease until it returns; every poll must call every provider.
        ProviderHealth.objects.filter(provider__in=configs).update(in_flight_until=None)
        started = time.perf_counter()
        results = health.poll(configs)
        times.append(time.perf_counter() - started)
        skipped = sum(result.status is None for result in results)
        assert skipped == 0, f"{skipped} provider(s) skipped as still in flight"
    deadlines = count * DEADLINE_MS / 1000
    median = statistics.median(times)
    return {"providers": count, "hanging": hanging, "median": median, "min": min(times),
            "max": max(times), "deadlines": deadlines,
            "ratio": median / (DEADLINE_MS / 1000), "sum_ratio": median / deadlines}


def main() -> None:
    from memadmin.audit.services import Actor
    from memadmin.workspaces.services import workspace_create

    with bench_database("health"):
        workspace = workspace_create(actor=Actor.system("bench"), slug="bench-health",
                                     name="Health poll benchmark")
        rows = []
        for count in COUNTS:
            with FakeProviders() as servers:
                rows.append(run(count, servers, workspace))
    print(f"health poll, {POLLS} polls each, deadline {DEADLINE_MS} ms, "
          f"a fifth of the providers hanging")
    print(f"{'providers':>9} {'hanging':>7} {'median s':>9} {'min s':>7} {'max s':>7} "
          f"{'/ slowest deadline':>18} {'sum of deadlines s':>18} {'/ sum':>7}")
    for row in rows:
        print(f"{row['providers']:>9} {row['hanging']:>7} {row['median']:>9.3f} "
              f"{row['min']:>7.3f} {row['max']:>7.3f} {row['ratio']:>18.3f} "
              f"{row['deadlines']:>18.1f} {row['sum_ratio']:>7.3f}")
        record("health_poll", f"poll of {row['providers']} providers, {row['hanging']} hanging",
               round(row["median"], 3), f"s (median; deadlines sum {row['deadlines']:.0f} s)")


if __name__ == "__main__":
    main()
