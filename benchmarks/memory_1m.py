"""The built-in provider at a million items (PERF-NOTES "Full-text search", "Pagination",
"Streaming export"): medians of the operations the admin pages and agents use.

Creates a database of its own next to the configured one (``<db>_bench_1m``), migrates it,
bulk-loads N items into acme / bulk / load with ``bulk_load.bulk_load`` (what
``benchmarks/bulk_load.py --items N`` does; COPY, then VACUUM (ANALYZE)), then times, through the
provider contract (``provider_for(config)`` on the bulk namespace's scope), each operation
``--runs`` times after one warm-up and prints the medians: the first page of the item list, a
page ~300 pages deep (reached by following cursors), full-text search pages for a rare, a
medium and a common term (picked from the bulk vocabulary by measured document frequency),
counts with a filter (exact, and capped at 10,000 as pages show them), item detail, an edit,
recall, and export throughput (the newest 200,000 items unless ``--export-items``; 0: all) of
the export job's part writer beside ``COPY (SELECT row_to_json(...)) TO STDOUT`` over the same
rows and order and a raw server-side cursor over every column. It ends with the goals' ratios:
export / COPY, recall and capped count with a common term / a rare one. The database is
dropped at the end unless ``--keep``; ``--reuse`` measures a kept one again without reloading.

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/memory_1m.py [--items N] [--runs 7] [--keep] [--reuse]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from support import admin_connection, bench_database, record, setup_django

setup_django()

from django.conf import settings  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from psycopg import sql  # noqa: E402

DEADLINE = 120.0
PAGE = 50
DEEP_PAGES = 300
RARE_CANDIDATES = 80  # the rarest vocabulary words whose document frequency is measured
COMMON_CANDIDATES = 3
MEDIUM_RANK = 100  # a vocabulary word in a few per cent of the items
FULL_PAGE = PAGE + 1  # a rare term should still fill a first page


def median_ms(call: Callable[[int], Any], runs: int) -> dict[str, float]:
    call(-1)  # warm-up
    times = []
    for n in range(runs):
        started = time.perf_counter()
        call(n)
        times.append((time.perf_counter() - started) * 1000)
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


@contextlib.contextmanager
def reused_database(suffix: str) -> Iterator[None]:
    default = connections["default"].settings_dict
    original = default["NAME"]
    default["NAME"] = f"{original}_bench_{suffix}"
    try:
        yield
    finally:
        connections.close_all()
        default["NAME"] = original


def document_frequency(namespace_id: Any, word: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memory_memoryitem WHERE namespace_id = %s "
            "AND search_vector @@ websearch_to_tsquery('english', %s)", [namespace_id, word])
        return int(cursor.fetchone()[0])


def pick_terms(namespace_id: Any) -> list[tuple[str, int]]:
    """(word, document frequency) of a rare, a medium and a common word of the loaded rows."""
    from bulk_load import bulk_vocabulary

    vocabulary = bulk_vocabulary()
    tail = [(w, document_frequency(namespace_id, w)) for w in vocabulary[-RARE_CANDIDATES:]]
    tail = [(w, df) for w, df in tail if df > 0]
    full = [(w, df) for w, df in tail if df >= FULL_PAGE]
    rare = min(full, key=lambda t: t[1]) if full else max(tail, key=lambda t: t[1])
    head = [(w, document_frequency(namespace_id, w)) for w in vocabulary[:COMMON_CANDIDATES]]
    common = max(head, key=lambda t: t[1])
    medium_word = vocabulary[MEDIUM_RANK]
    return [rare, (medium_word, document_frequency(namespace_id, medium_word)), common]


def explain(call: Callable[[], Any], needle: str) -> str:
    """EXPLAIN (ANALYZE) of each query of ``call`` that contains ``needle``."""
    with CaptureQueriesContext(connection) as captured:
        call()
    plans = []
    with connection.cursor() as cursor:
        for query in (q["sql"] for q in captured.captured_queries if needle in q["sql"]):
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + query)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return "\n-- next query --\n".join(plans)


#: The rows and order an export writes (memory/store.py ``export_lines``): every column the
#: file carries (``frozen`` a constant: the export reads the freezes, the reference does not),
#: pending items left out, newest first.
EXPORT_ROWS = (
    "SELECT m.id, n.partition_key AS partition, m.tier, m.key, "
    "CASE WHEN m.tier IN ('AGENT', 'CREW', 'PERSONA', 'pins', 'lessons') THEN m.tier || '.md' "
    "ELSE m.tier || '/' || m.key || '.md' END AS source, m.content, m.bytes, m.revision, "
    "m.data_subject_id AS \"dataSubjectId\", m.quarantine_state AS quarantine, "
    "false AS frozen, m.created_at AS \"createdAt\", m.updated_at AS \"updatedAt\", "
    "m.expires_at AS \"expiresAt\" "
    "FROM memory_memoryitem m JOIN workspaces_namespace n ON n.id = m.namespace_id "
    "WHERE m.namespace_id = {} AND m.quarantine_state <> 'pending' "
    "ORDER BY m.updated_at DESC, m.id DESC"
)


def _export_rows(namespace_id: Any, limit: int | None) -> sql.Composed:
    query = EXPORT_ROWS + (f" LIMIT {int(limit)}" if limit else "")
    return sql.SQL(query).format(sql.Literal(str(namespace_id)))


def copy_json(db: dict[str, Any], namespace_id: Any, limit: int | None, sink: Any) -> None:
    """The reference: ``COPY (SELECT row_to_json(...)) TO STDOUT`` over the export's rows and
    order, into the same kind of sink (a hashed temporary file) the export writes to."""
    query = sql.SQL("COPY (SELECT row_to_json(t) FROM ({}) t) TO STDOUT").format(
        _export_rows(namespace_id, limit))
    with admin_connection(db) as conn, conn.cursor() as cursor, cursor.copy(query) as copy:
        for data in copy:
            sink(data)


def raw_read(db: dict[str, Any], namespace_id: Any, limit: int | None) -> int:
    """A second reference: the same rows through a server-side cursor, every column fetched
    and nothing written (what reading them alone costs in Python)."""
    rows = 0
    with admin_connection(db) as conn, conn.transaction(), \
            conn.cursor(name="bench_raw") as cursor:
        cursor.itersize = 2000
        cursor.execute(_export_rows(namespace_id, limit))
        for _row in cursor:
            rows += 1
    return rows


def export_part(provider: Any, scope: Any, limit: int | None, sink: Any) -> int:
    """What the export job does for the built-in store's part: its JSON Lines into the sink
    (``--export-items`` stops after that many lines, at a chunk's end)."""
    from memadmin.providers import contract as c

    lines = 0
    for chunk, count in provider.export_lines(c.ItemFilters(), scope=scope, deadline=DEADLINE):
        sink(chunk)
        lines += count
        if limit and lines >= limit:
            break
    return lines


def hashed_file() -> tuple[Any, Any]:
    """A temporary file and a function writing to it and to a SHA-256 (as export parts are)."""
    import hashlib
    import tempfile

    tmp = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the caller
    digest = hashlib.sha256()

    def sink(data: bytes) -> None:
        tmp.write(data)
        digest.update(data)

    return tmp, sink


def measure(args: argparse.Namespace, db: dict[str, Any]) -> None:
    import bulk_load as demo

    from memadmin.providers import contract as c
    from memadmin.providers.registry import namespace_scope, provider_for

    if not args.reuse:
        print(f"bulk-loading {args.items:,} items into {db['NAME']} ...", flush=True)
        bulk = demo.bulk_load(args.items)
        print(f"loaded in {bulk.load_seconds:.1f} s ({bulk.rows_per_second:,.0f} rows/s)",
              flush=True)
        if bulk.vacuum_seconds is None:
            started = time.monotonic()
            with connection.cursor() as cursor:
                cursor.execute("VACUUM (ANALYZE) memory_memoryitem")
            bulk_vacuum = time.monotonic() - started
        else:
            bulk_vacuum = bulk.vacuum_seconds
        print(f"VACUUM (ANALYZE) took {bulk_vacuum:.1f} s", flush=True)

    namespace = demo.bulk_namespace()
    provider = provider_for(namespace.resource.provider)
    scope = namespace_scope(namespace)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_memoryitem WHERE namespace_id = %s",
                       [namespace.pk])
        items = int(cursor.fetchone()[0])
        cursor.execute("SELECT pg_database_size(current_database()), "
                       "pg_total_relation_size('memory_memoryitem'), "
                       "pg_relation_size('memory_memoryitem'), "
                       "pg_relation_size('memoryitem_search')")
        db_size, table_total, heap, gin = cursor.fetchone()

    started = time.monotonic()
    (rare, rare_df), (medium, medium_df), (common, common_df) = pick_terms(namespace.pk)
    print(f"terms picked in {time.monotonic() - started:.1f} s: rare {rare!r} "
          f"({rare_df:,} items), medium {medium!r} ({medium_df:,}), common {common!r} "
          f"({common_df:,})", flush=True)

    def page(filters: c.ItemFilters, cursor: str | None = None) -> c.ItemPage:
        return provider.list_items(filters, cursor=cursor, limit=PAGE, scope=scope,
                                   deadline=DEADLINE)

    every = c.ItemFilters()
    cursor: str | None = None
    depth = 0
    for _ in range(DEEP_PAGES):
        result = page(every, cursor)
        if result.next_cursor is None:
            break
        cursor = result.next_cursor
        depth += 1
    deep_cursor = cursor
    first = page(every).items
    detail_id = first[len(first) // 2].id
    # One edit per timed call (and the warm-up): each a first edit of a different item.
    edits = page(every, deep_cursor).items
    edit_iter = iter(edits)
    assert len(edits) >= args.runs + 1, "not enough items to edit"

    def edit(_n: int) -> None:
        item = next(edit_iter)
        provider.update_item(item.id, item.content + " edited", "replace",
                             expected_revision=item.revision, operation_id=str(uuid.uuid4()),
                             actor="benchmark", scope=scope, deadline=DEADLINE)

    rows: list[tuple[str, dict[str, float], str]] = []

    def row(label: str, call: Callable[[int], Any], note: str = "") -> None:
        rows.append((label, median_ms(call, args.runs), note))
        print(f"  measured {label}", flush=True)

    row("list: first page (50)", lambda n: page(every))
    row(f"list: page at depth {depth * PAGE:,} ({depth} pages)",
        lambda n: page(every, deep_cursor))
    row(f"search page: rare {rare!r}", lambda n: page(c.ItemFilters(q=rare)),
        f"{rare_df:,} matches")
    row(f"search page: medium {medium!r}", lambda n: page(c.ItemFilters(q=medium)),
        f"{medium_df:,} matches")
    row(f"search page: common {common!r}", lambda n: page(c.ItemFilters(q=common)),
        f"{common_df:,} matches")
    rare_cursor = page(c.ItemFilters(q=rare)).next_cursor
    if rare_cursor:
        row(f"search page 2: rare {rare!r}", lambda n: page(c.ItemFilters(q=rare), rare_cursor))
    for label, filters in (("count: no filter (counters)", every),
                           ("count: tier=facts", c.ItemFilters(tier="facts")),
                           (f"count: q={rare!r}", c.ItemFilters(q=rare)),
                           (f"count: q={common!r}", c.ItemFilters(q=common))):
        row(label, lambda n, f=filters: provider.count(f, scope=scope, deadline=DEADLINE))
    capped: dict[str, str] = {}
    for term in (rare, common):
        label = f"count capped at 10,000: q={term!r}"
        shown = provider.count_capped(c.ItemFilters(q=term), cap=10_000, scope=scope,
                                      deadline=DEADLINE)
        capped[term] = str(shown)
        row(label, lambda n, t=term: provider.count_capped(
            c.ItemFilters(q=t), cap=10_000, scope=scope, deadline=DEADLINE), f"shown {shown}")
    row("get_item (detail)",
        lambda n: provider.get_item(detail_id, scope=scope, deadline=DEADLINE))
    row("update_item (edit)", edit, "a different item each call")
    row(f"recall: rare {rare!r}",
        lambda n: provider.recall(rare, scope=scope, deadline=DEADLINE))
    row(f"recall: common {common!r}",
        lambda n: provider.recall(common, scope=scope, deadline=DEADLINE))
    row("recall: no text (newest)",
        lambda n: provider.recall(None, scope=scope, deadline=DEADLINE))

    limit = args.export_items or None
    runs: dict[str, list[dict[str, float]]] = {"export": [], "copy": [], "raw": []}
    for run in range(args.export_runs + 1):  # the first of each is a warm-up
        for name in runs:
            tmp, sink = hashed_file()
            started = time.perf_counter()
            count = 0
            if name == "export":
                count = export_part(provider, scope, limit, sink)
            elif name == "copy":
                copy_json(db, namespace.pk, limit, sink)
            else:
                count = raw_read(db, namespace.pk, limit)
            seconds = time.perf_counter() - started
            tmp.close()
            if run:
                runs[name].append({"rows": count, "seconds": seconds})
        print(f"  export run {run}{' (warm-up)' if not run else ''} done", flush=True)
    for entry in runs["copy"]:  # COPY says no row count; it read the raw read's rows
        entry["rows"] = runs["raw"][0]["rows"]

    plans = []
    if args.explain:
        for term in (rare, medium, common):
            plans.append((term, explain(lambda t=term: page(c.ItemFilters(q=t)), "@@")))

    mb = 1024 * 1024
    print()
    print(f"memory at scale: {items:,} items in acme/bulk/load; medians of {args.runs} runs "
          f"after one warm-up; times in ms")
    print(f"database {db_size / mb:,.0f} MB; memory_memoryitem total {table_total / mb:,.0f} MB "
          f"(heap {heap / mb:,.0f} MB, GIN memoryitem_search {gin / mb:,.0f} MB)")
    width = max(len(label) for label, _, _ in rows)
    print(f"{'operation':<{width}} {'median':>9} {'min':>9} {'max':>9}  note")
    for label, t, note in rows:
        print(f"{label:<{width}} {t['median']:>9.2f} {t['min']:>9.2f} {t['max']:>9.2f}  {note}")
        record("memory_1m", label, round(t["median"], 2), "ms (median)")
    record("memory_1m", "items", items, "items")
    record("memory_1m", "database size", round(db_size / mb), "MB")
    first_ms = rows[0][1]["median"]
    deep_ms = rows[1][1]["median"]
    print(f"deep page / first page: {deep_ms / first_ms:.2f}x; "
          f"rare / common search page: {rows[2][1]['median'] / rows[4][1]['median']:.2f}x")
    by_label = {label: t["median"] for label, t, _ in rows}
    recall_ratio = (by_label[f"recall: common {common!r}"]
                    / by_label[f"recall: rare {rare!r}"])
    count_ratio = (by_label[f"count capped at 10,000: q={common!r}"]
                   / by_label[f"count capped at 10,000: q={rare!r}"])
    print(f"recall, common / rare term: {recall_ratio:.2f}; capped count, common / rare: "
          f"{count_ratio:.2f} (shown as {capped[common]} and {capped[rare]})")
    record("memory_1m", "recall common / rare term", round(recall_ratio, 2), "ratio")
    record("memory_1m", "capped count common / rare term", round(count_ratio, 2), "ratio")

    def rate(name: str) -> tuple[int, float, float]:
        seconds = statistics.median(r["seconds"] for r in runs[name])
        count = int(runs[name][0]["rows"])
        return count, seconds, count / seconds

    e_rows, e_s, e_rate = rate("export")
    c_rows, c_s, c_rate = rate("copy")
    r_rows, r_s, r_rate = rate("raw")
    print(f"export, medians of {args.export_runs} runs after one warm-up, each into a hashed "
          "temporary file:")
    print(f"  the export job's part (provider.export_lines): {e_rows:,} items in {e_s:.2f} s "
          f"= {e_rate:,.0f} items/s")
    print(f"  COPY (SELECT row_to_json(...)) TO STDOUT, same rows and order: {c_rows:,} rows "
          f"in {c_s:.2f} s = {c_rate:,.0f} rows/s")
    print(f"  raw server-side cursor, every column, nothing written: {r_rows:,} rows in "
          f"{r_s:.2f} s = {r_rate:,.0f} rows/s")
    print(f"  export / COPY: {e_rate / c_rate:.2f}")
    record("memory_1m", "export throughput", round(e_rate), "items/s")
    record("memory_1m", "COPY to JSON lines, same rows and order", round(c_rate), "rows/s")
    record("memory_1m", "raw server-side cursor, every column", round(r_rate), "rows/s")
    record("memory_1m", "export / COPY", round(e_rate / c_rate, 2), "ratio")
    for term, plan in plans:
        print(f"\nplan of the search page for {term!r}:\n{plan}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--export-runs", type=int, default=3)
    parser.add_argument("--export-items", type=int, default=200_000,
                        help="export the newest N items (0: all)")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--reuse", action="store_true",
                        help="measure a database kept by an earlier --keep run, without loading")
    parser.add_argument("--explain", action="store_true",
                        help="also print the plans of the search pages")
    args = parser.parse_args()
    # Django logs every query under DEBUG; the benchmark measures the provider, not the log.
    settings.DEBUG = False
    if args.reuse:
        with reused_database("1m"):
            measure(args, connections["default"].settings_dict)
        if not args.keep:
            original = connections["default"].settings_dict
            with admin_connection(original) as admin:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    sql.Identifier(f"{original['NAME']}_bench_1m")))
        return
    with bench_database("1m", keep=args.keep) as db:
        measure(args, db)


if __name__ == "__main__":
    main()
