"""Recall round trip: through the HTTP client against memadmin's own endpoint, versus calling
the built-in provider directly.

Starts the site as ``make run`` serves it (gunicorn, Django's psycopg pool) on a free loopback
port over a throwaway database with 200 facts, then times 100 recalls each way, interleaved
(so both paths see the same load), and prints medians and the ratio:

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/recall_roundtrip.py
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from support import bench_database, record, served_project, setup_django

setup_django()

CALLS = 100
WORDS = ["hosting", "billing", "refund", "escalation", "thermostat", "warranty", "invoice"]


def timed(*calls) -> tuple[list[list[float]], list[float]]:  # type: ignore[no-untyped-def]
    """Each call's times in ms, the calls interleaved (one of each per round, the order
    alternating), so a change in the machine's load hits both paths alike; and each call's
    CPU time in this process (ms, summed over the calls)."""
    times: list[list[float]] = [[] for _ in calls]
    cpu = [0.0 for _ in calls]
    for n in range(CALLS):
        order = list(enumerate(calls))
        for index, call in order if n % 2 else reversed(order):
            started, cpu_started = time.perf_counter(), time.process_time()
            call(WORDS[n % len(WORDS)])
            times[index].append((time.perf_counter() - started) * 1000)
            cpu[index] += (time.process_time() - cpu_started) * 1000
    return times, cpu


def descendants_cpu() -> float | None:
    """CPU seconds used so far by this process's running descendants (the web server's
    processes), from /proc; None where there is no /proc."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended meanwhile
        parents[int(entry.name)] = int(fields[1])
        ticks[int(entry.name)] = int(fields[11]) + int(fields[12])
    mine, total = {os.getpid()}, 0
    for _ in range(8):  # the server's depth is 2 (gunicorn, its workers)
        children = {pid for pid, parent in parents.items() if parent in mine} - mine
        total += sum(ticks[pid] for pid in children)
        mine |= children
    return total / os.sysconf("SC_CLK_TCK")


def main() -> None:
    from memadmin.audit.services import Actor
    from memadmin.providers import contract as c
    from memadmin.providers.registry import provider_for
    from memadmin.providers.services import provider_config_create
    from memadmin.workspaces.services import (
        admin_credential_mint,
        namespace_create,
        resource_create,
        workspace_create,
    )

    with bench_database("recall") as db:
        actor = Actor.system("bench")
        workspace = workspace_create(actor=actor, slug="bench", name="Recall benchmark")
        local = provider_config_create(actor=actor, workspace=workspace, slug="builtin",
                                       name="Built-in", kind="local", probed=True)
        resource = resource_create(actor=actor, workspace=workspace, provider=local, slug="kb")
        namespace = namespace_create(actor=actor, resource=resource, slug="agent")
        scope = c.Scope.of(namespace.partition_key)
        builtin = provider_for(local)
        for n in range(200):
            builtin.retain("facts", f"f{n}", f"Fact {n} about {WORDS[n % len(WORDS)]} and "
                           f"{WORDS[(n * 3) % len(WORDS)]} for customer {n}.", "replace",
                           operation_id=f"seed-{n}", scope=scope, deadline=10)
        _, secret = admin_credential_mint(actor=actor, workspace=workspace, name="bench")
        with served_project(db) as base:
            remote = provider_config_create(
                actor=actor, workspace=workspace, slug="self", name="Self over HTTP",
                kind="http", url=f"{base}/oc-memory", credential=secret)
            client = provider_for(remote)
            client.recall("warm up", scope=scope, deadline=10)
            server_before = descendants_cpu()
            (over_http, direct), (client_cpu, direct_cpu) = timed(
                lambda text: client.recall(text, scope=scope, deadline=10),
                lambda text: builtin.recall(text, scope=scope, deadline=10))
            server_after = descendants_cpu()
    http_median, direct_median = statistics.median(over_http), statistics.median(direct)

    print(f"recall round trip, {CALLS} calls each (interleaved), 200 facts in one namespace; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'path':<34}{'median ms':>10}{'p90 ms':>9}{'CPU ms':>8}")
    for label, times, cpu in (("HTTP client -> endpoint -> store", over_http, client_cpu),
                              ("built-in provider, direct", direct, direct_cpu)):
        p90 = statistics.quantiles(times, n=10)[-1]
        print(f"{label:<34}{statistics.median(times):>10.1f}{p90:>9.1f}{cpu / CALLS:>8.2f}")
    if server_before is not None and server_after is not None:
        # CPU time counts less of the machine's load than wall time does.
        server_cpu = (server_after - server_before) * 1000 / CALLS
        print(f"CPU a call: HTTP client {client_cpu / CALLS:.2f} ms + web server "
              f"{server_cpu:.2f} ms; direct {direct_cpu / CALLS:.2f} ms")
    print(f"ratio (HTTP / direct): {http_median / direct_median:.2f}")
    record("recall_roundtrip", "recall through the HTTP client and endpoint",
           round(http_median, 1), "ms (median)")
    record("recall_roundtrip", "recall on the built-in provider directly",
           round(direct_median, 1), "ms (median)")
    record("recall_roundtrip", "HTTP / direct", round(http_median / direct_median, 2), "ratio")


if __name__ == "__main__":
    main()
