"""Erasing one data subject's items among many, beside one raw DELETE of the same rows, with a
writer in the same namespace timing its own writes meanwhile.

Over a throwaway database it bulk-loads N items (``bulk_load``, default 1,000,000), gives a
fifth of them one data subject, an edit history (a revision) to one in fifty of those and a
legal hold to ten of them, then:

1. the reference: one raw ``DELETE`` (revisions in a CTE) of the subject's unheld items, in one
   transaction, committed; the rows are put back from a copy afterwards;
2. the built-in store's ``forget(data_subject_id=...)``, as the erasure step of a subject request
   calls it (no transaction around it), while another thread writes to the same namespace
   through the store in a loop; each write's time is kept, and the worst during the erasure is
   the writers' stall (beside their median before it).

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/erasure_1m.py [--items N]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Any

from support import bench_database, record, setup_django

setup_django()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

SUBJECT = "bench-erasure-subject@example.com"
HELD = 10
WARM_WRITES = 20
COLUMNS = ("id, namespace_id, tier, key, content, bytes, revision, data_subject_id, "
           "quarantine_state, updated_by, created_at, updated_at")


def prepare(namespace: Any) -> dict[str, int]:
    """Tag a fifth of the items with the subject, give some a revision, hold a few."""
    from memadmin.memory.models import Freeze

    with connection.cursor() as cursor:
        cursor.execute("UPDATE memory_memoryitem SET data_subject_id = %s "
                       "WHERE namespace_id = %s AND substr(key, 6)::bigint %% 5 = 0",
                       [SUBJECT, namespace.pk])
        cursor.execute(
            "INSERT INTO memory_memoryrevision (item_id, revision, content, bytes, actor, "
            "created_at, quarantine_state) SELECT id, 1, content, bytes, 'bench', created_at, "
            "'clear' FROM memory_memoryitem WHERE data_subject_id = %s "
            "AND substr(key, 6)::bigint %% 250 = 0", [SUBJECT])
        cursor.execute("UPDATE memory_memoryitem SET revision = 2 WHERE id IN "
                       "(SELECT item_id FROM memory_memoryrevision)")
        cursor.execute("SELECT id FROM memory_memoryitem WHERE data_subject_id = %s "
                       "ORDER BY id LIMIT %s", [SUBJECT, HELD])
        held = [row[0] for row in cursor.fetchall()]
    for item_id in held:
        Freeze.objects.create(workspace=namespace.resource.workspace, level="item",
                              provider=namespace.resource.provider, item_ref=str(item_id),
                              kind="legal_hold", reason="benchmark", created_by_label="bench")
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE bench_saved_items AS SELECT " + COLUMNS  # noqa: S608
                       + " FROM memory_memoryitem WHERE data_subject_id = %s", [SUBJECT])
        cursor.execute("CREATE TABLE bench_saved_revisions AS SELECT r.* FROM "
                       "memory_memoryrevision r JOIN memory_memoryitem m ON m.id = r.item_id "
                       "WHERE m.data_subject_id = %s", [SUBJECT])
        cursor.execute("SELECT count(*) FROM bench_saved_items")
        tagged = int(cursor.fetchone()[0])
        cursor.execute("SELECT count(*) FROM bench_saved_revisions")
        revisions = int(cursor.fetchone()[0])
        cursor.execute("VACUUM (ANALYZE) memory_memoryitem")
        cursor.execute("VACUUM (ANALYZE) memory_memoryrevision")
    return {"tagged": tagged, "revisions": revisions, "held": len(held)}


def raw_delete(namespace: Any) -> tuple[int, float]:
    """One DELETE of the subject's unheld items (their revisions in a CTE), committed."""
    from django.db import transaction

    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "WITH victims AS (SELECT id FROM memory_memoryitem m WHERE namespace_id = %s "
            "AND data_subject_id = %s AND NOT EXISTS (SELECT 1 FROM memory_freeze f "
            "WHERE f.level = 'item' AND f.lifted_at IS NULL AND f.item_ref = m.id::text)), "
            "revisions AS (DELETE FROM memory_memoryrevision r USING victims v "
            "WHERE r.item_id = v.id) "
            "DELETE FROM memory_memoryitem m USING victims v WHERE m.id = v.id",
            [namespace.pk, SUBJECT])
        removed = cursor.rowcount
    return removed, time.perf_counter() - started


def restore() -> None:
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO memory_memoryitem (" + COLUMNS + ") SELECT "  # noqa: S608
                       + COLUMNS + " FROM bench_saved_items ON CONFLICT (id) DO NOTHING")
        cursor.execute("INSERT INTO memory_memoryrevision SELECT * FROM bench_saved_revisions "
                       "ON CONFLICT DO NOTHING")
        cursor.execute("VACUUM (ANALYZE) memory_memoryitem")
        cursor.execute("VACUUM (ANALYZE) memory_memoryrevision")


class Writer(threading.Thread):
    """Writes to the namespace through the store in a loop, timing each write."""

    def __init__(self, provider: Any, scope: Any) -> None:
        super().__init__(daemon=True)
        self.provider, self.scope = provider, scope
        self.times: list[tuple[float, float]] = []  # (started, seconds)
        self.stop = threading.Event()

    def run(self) -> None:
        n = 0
        try:
            while not self.stop.is_set():
                started = time.perf_counter()
                self.provider.retain("facts", f"writer-{n % 50}", f"writer note {n}", "replace",
                                     operation_id=f"writer-{n}-{started}", scope=self.scope,
                                     deadline=60)
                self.times.append((started, time.perf_counter() - started))
                n += 1
        finally:
            connection.close()


def erase(namespace: Any) -> dict[str, Any]:
    from memadmin.providers.registry import namespace_scope, provider_for

    provider = provider_for(namespace.resource.provider)
    scope = namespace_scope(namespace)
    writer = Writer(provider, scope)
    writer.start()
    while len(writer.times) < WARM_WRITES and writer.is_alive():  # its pace before the erasure
        time.sleep(0.1)
    started = time.perf_counter()
    result = provider.forget(data_subject_id=SUBJECT, operation_id="bench-erasure",
                             scope=scope, deadline=3600)
    seconds = time.perf_counter() - started
    ended = time.perf_counter()
    time.sleep(0.5)
    writer.stop.set()
    writer.join(60)
    before = [s for t, s in writer.times if t + s < started]
    during = [s for t, s in writer.times if t < ended and t + s > started]
    return {"removed": result.removed, "held": result.held, "seconds": seconds,
            "writer_median_ms": statistics.median(before) * 1000 if before else 0.0,
            "writer_worst_ms": max(during) * 1000 if during else 0.0,
            "writes_during": len(during)}


def check(namespace: Any) -> None:
    from django.db.models import Count, Sum

    from memadmin.memory.models import MemoryItem, NamespaceCounter

    totals = MemoryItem.objects.filter(namespace=namespace).aggregate(n=Count("id"),
                                                                      b=Sum("bytes"))
    counter = NamespaceCounter.objects.get(namespace=namespace)
    assert (counter.items, counter.bytes) == (totals["n"], totals["b"]), "counter drifted"
    assert MemoryItem.objects.filter(data_subject_id=SUBJECT).count() == HELD


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    args = parser.parse_args()
    settings.DEBUG = False
    with bench_database("erase") as _db:
        import bulk_load

        print(f"bulk-loading {args.items:,} items ...", flush=True)
        bulk = bulk_load.bulk_load(args.items)
        namespace = bulk.namespace
        shape = prepare(namespace)
        print(f"loaded in {bulk.load_seconds:.0f} s; {shape['tagged']:,} items of the subject "
              f"({shape['revisions']:,} with a revision, {shape['held']} held)", flush=True)
        raw_removed, raw_seconds = raw_delete(namespace)
        print(f"  raw DELETE done ({raw_removed:,} rows)", flush=True)
        restore()
        store = erase(namespace)
        check(namespace)
    raw_rate = raw_removed / raw_seconds
    store_rate = store["removed"] / store["seconds"]
    print(f"\nerasing one subject's {shape['tagged']:,} items among {args.items:,}")
    print(f"  one raw DELETE (revisions in a CTE), one transaction: {raw_removed:,} rows in "
          f"{raw_seconds:.2f} s = {raw_rate:,.0f} rows/s")
    print(f"  the store's forget (batches of 5,000 in PostgreSQL): {store['removed']:,} "
          f"removed, {store['held']} held, in {store['seconds']:.2f} s = {store_rate:,.0f} "
          "rows/s")
    print(f"  store / raw DELETE: {store_rate / raw_rate:.2f}")
    print(f"  a writer in the same namespace: median {store['writer_median_ms']:.1f} ms a "
          f"write before, worst {store['writer_worst_ms']:.1f} ms during "
          f"({store['writes_during']} writes)")
    record("erasure_1m", "erase one subject: store", round(store_rate), "rows/s")
    record("erasure_1m", "erase one subject: one raw DELETE", round(raw_rate), "rows/s")
    record("erasure_1m", "erase one subject: store / raw DELETE",
           round(store_rate / raw_rate, 2), "ratio")
    record("erasure_1m", "writer's worst stall during the erasure",
           round(store["writer_worst_ms"], 1), "ms")
    record("erasure_1m", "writer's median write before it", round(store["writer_median_ms"], 1),
           "ms")


if __name__ == "__main__":
    main()
