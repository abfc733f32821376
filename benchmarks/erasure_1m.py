"""Erasing one data subject's items among many, beside one raw DELETE of the same rows, with a
writer in the same namespace timing its own writes meanwhile.

Over a throwaway database it bulk-loads N items (``bulk_load``, default 1,000,000), gives a
fifth of them one data subject, an edit history (a revision) to one in fifty of those and a
legal hold to ten of them, then:

1. the reference: one raw ``DELETE`` (revisions and quarantine entries in CTEs) of the subject's
   unheld items, in one transaction, committed;
2. the built-in store's ``forget(data_subject_id=...)``, as the erasure step of a subject request
   calls it (no transaction around it);

each ``--rounds`` times (default 3), alternately, over the same rows (put back from a copy and
the counters recounted after each), medians reported. During both, another thread writes to
the same namespace through the store in a loop; each write's time is kept, and the worst
during the store's erasures is the writers' stall (beside their median before it).

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

from memadmin.memory import store  # noqa: E402

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
        # The UPDATEs wrote the subject's rows anew at the table's end, packed on a fifth of
        # its pages; a subject's items written over months lie among everyone else's. In the
        # order of their random ids, they are spread over every page again, as they would be.
        # It matters: after a checkpoint, an erasure's WAL is mostly one image of each page
        # it touches.
        cursor.execute("CLUSTER memory_memoryitem USING memory_memoryitem_pkey")
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
    """One DELETE of the subject's unheld items (their revisions and quarantine entries in
    CTEs: the rows the store's erasure deletes), committed."""
    from django.db import transaction

    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "WITH victims AS (SELECT id FROM memory_memoryitem m WHERE namespace_id = %s "
            "AND data_subject_id = %s AND NOT EXISTS (SELECT 1 FROM memory_freeze f "
            "WHERE f.level = 'item' AND f.lifted_at IS NULL AND f.item_ref = m.id::text)), "
            "revisions AS (DELETE FROM memory_memoryrevision r USING victims v "
            "WHERE r.item_id = v.id), "
            "entries AS (DELETE FROM quarantine_quarantineentry q USING victims v "
            "WHERE q.item_id = v.id) "
            "DELETE FROM memory_memoryitem m USING victims v WHERE m.id = v.id",
            [namespace.pk, SUBJECT])
        removed = cursor.rowcount
    return removed, time.perf_counter() - started


def restore(namespace: Any) -> None:
    """The subject's rows back where they were, the namespace's counter recounted, the tables
    vacuumed. Vacuumed first, so the rows go back into the space their erasure freed: put
    back before, they went to the pages the previous erasure had freed (the other path's),
    and the raw DELETE and the store took turns on two layouts, one of them five times
    denser."""
    with connection.cursor() as cursor:
        cursor.execute("VACUUM memory_memoryitem")
        cursor.execute("VACUUM memory_memoryrevision")
        cursor.execute("INSERT INTO memory_memoryitem (" + COLUMNS + ") SELECT "  # noqa: S608
                       + COLUMNS + " FROM bench_saved_items ON CONFLICT (id) DO NOTHING")
        cursor.execute("INSERT INTO memory_memoryrevision SELECT * FROM bench_saved_revisions "
                       "ON CONFLICT DO NOTHING")
        cursor.execute("UPDATE memory_namespacecounter c SET items = t.n, bytes = t.b FROM "
                       "(SELECT count(*) AS n, coalesce(sum(bytes), 0) AS b FROM "
                       "memory_memoryitem WHERE namespace_id = %s) t "
                       "WHERE c.namespace_id = %s", [namespace.pk, namespace.pk])
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


def with_writer(namespace: Any, erasure: Any) -> dict[str, Any]:
    """``erasure()`` (removed, held) timed while a writer writes to the namespace."""
    from memadmin.providers.registry import namespace_scope, provider_for

    provider = provider_for(namespace.resource.provider)
    scope = namespace_scope(namespace)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(DISTINCT (ctid::text::point)[0]) FROM memory_memoryitem "
                       "WHERE data_subject_id = %s", [SUBJECT])
        pages = int(cursor.fetchone()[0])
        # Both paths start right after a checkpoint: each writes one image of every page it
        # touches, rather than whatever share a checkpoint begun by the load or the last
        # restore happens to leave them.
        cursor.execute("SELECT pg_has_role('pg_checkpoint', 'USAGE')")
        if cursor.fetchone()[0]:
            cursor.execute("CHECKPOINT")
    writer = Writer(provider, scope)
    writer.start()
    while len(writer.times) < WARM_WRITES and writer.is_alive():  # its pace before the erasure
        time.sleep(0.1)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()")
        wal_start = cursor.fetchone()[0]
    started = time.perf_counter()
    removed, held = erasure()
    seconds = time.perf_counter() - started
    ended = time.perf_counter()
    with connection.cursor() as cursor:  # the whole server's WAL: other databases' too
        cursor.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s)", [wal_start])
        wal_mb = float(cursor.fetchone()[0]) / 1e6
    time.sleep(0.5)
    writer.stop.set()
    writer.join(60)
    before = [s for t, s in writer.times if t + s < started]
    during = [s for t, s in writer.times if t < ended and t + s > started]
    return {"removed": removed, "held": held, "seconds": seconds,
            "writer_median_ms": statistics.median(before) * 1000 if before else 0.0,
            "writer_worst_ms": max(during) * 1000 if during else 0.0,
            "writes_during": len(during), "pages": pages, "wal_mb": wal_mb}


def store_erase(namespace: Any, round_: int) -> tuple[int, int]:
    from memadmin.providers.registry import namespace_scope, provider_for

    result = provider_for(namespace.resource.provider).forget(
        data_subject_id=SUBJECT, operation_id=f"bench-erasure-{round_}",
        scope=namespace_scope(namespace), deadline=3600)
    return result.removed, result.held


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
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    settings.DEBUG = False
    raws: list[dict[str, Any]] = []
    stores: list[dict[str, Any]] = []
    with bench_database("erase") as _db:
        import bulk_load

        print(f"bulk-loading {args.items:,} items ...", flush=True)
        bulk = bulk_load.bulk_load(args.items)
        namespace = bulk.namespace
        shape = prepare(namespace)
        print(f"loaded in {bulk.load_seconds:.0f} s; {shape['tagged']:,} items of the subject "
              f"({shape['revisions']:,} with a revision, {shape['held']} held)", flush=True)
        raw_delete(namespace)  # unmeasured: every measured run starts from a restored layout
        restore(namespace)
        for round_ in range(args.rounds):
            raws.append(with_writer(namespace, lambda: (raw_delete(namespace)[0], HELD)))
            restore(namespace)
            stores.append(with_writer(namespace, lambda r=round_: store_erase(namespace, r)))
            check(namespace)
            restore(namespace)
            print(f"  round {round_ + 1}: raw DELETE {raws[-1]['seconds']:.2f} s, store "
                  f"{stores[-1]['seconds']:.2f} s ({stores[-1]['removed']:,} rows each)",
                  flush=True)
    assert {r["removed"] for r in raws} == {s["removed"] for s in stores}, "not the same rows"
    removed = stores[0]["removed"]
    raw_seconds = statistics.median(r["seconds"] for r in raws)
    store_seconds = statistics.median(s["seconds"] for s in stores)
    raw_rate, store_rate = removed / raw_seconds, removed / store_seconds
    worst = max(s["writer_worst_ms"] for s in stores)
    median_before = statistics.median(s["writer_median_ms"] for s in stores)
    print(f"\nerasing one subject's {shape['tagged']:,} items among {args.items:,}, "
          f"medians of {args.rounds} rounds")
    print(f"  one raw DELETE (revisions and quarantine entries in CTEs), one transaction: "
          f"{removed:,} rows in {raw_seconds:.2f} s = {raw_rate:,.0f} rows/s")
    print(f"  the store's forget (batches of {store.ERASE_BATCH:,} in PostgreSQL): {removed:,} "
          f"removed, {stores[0]['held']} held, in {store_seconds:.2f} s = {store_rate:,.0f} "
          "rows/s")
    print(f"  store / raw DELETE: {store_rate / raw_rate:.2f}")
    print(f"  pages holding the rows: raw DELETE {statistics.median(r['pages'] for r in raws):,.0f}"
          f", store {statistics.median(s['pages'] for s in stores):,.0f}; WAL written (the "
          f"server's, after a CHECKPOINT): raw DELETE "
          f"{statistics.median(r['wal_mb'] for r in raws):,.0f} MB, store "
          f"{statistics.median(s['wal_mb'] for s in stores):,.0f} MB")
    print(f"  a writer in the same namespace: median {median_before:.1f} ms a write before, "
          f"worst {worst:.1f} ms during the store's erasures "
          f"({sum(s['writes_during'] for s in stores)} writes); worst during the raw DELETEs "
          f"{max(r['writer_worst_ms'] for r in raws):.1f} ms")
    record("erasure_1m", "erase one subject: store", round(store_rate), "rows/s")
    record("erasure_1m", "erase one subject: one raw DELETE", round(raw_rate), "rows/s")
    record("erasure_1m", "erase one subject: store / raw DELETE",
           round(store_rate / raw_rate, 2), "ratio")
    record("erasure_1m", "writer's worst stall during the erasure", round(worst, 1), "ms")
    record("erasure_1m", "writer's median write before it", round(median_before, 1), "ms")


if __name__ == "__main__":
    main()
