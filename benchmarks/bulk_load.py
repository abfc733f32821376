"""Bulk-load synthetic facts into acme / bulk / load for the benchmarks, with ``COPY``.

It bypasses the built-in store on purpose (a million rows in minutes instead of hours): the rows
are COPYed, then the namespace's counter is moved by what each batch added and recounted from
the table at the end, the load is audited, and VACUUM (ANALYZE) runs unless inside a
transaction. Benchmarks only; the demo itself is seeded through the store (memadmin/demo).

    .venv/bin/python benchmarks/bulk_load.py --items 1000000
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import io
import itertools
import random
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
if __name__ == "__main__":
    from support import setup_django

    setup_django()

from django.db import connection, transaction  # noqa: E402

from memadmin.audit.services import Actor, audit_event_create  # noqa: E402
from memadmin.demo.material import SEED, SEED_ACTOR, WORKSPACES, _tools  # noqa: E402
from memadmin.demo.seed import (  # noqa: E402
    SeedResult,
    _ensure_namespace,
    _ensure_provider,
    _ensure_resource,
    _ensure_workspace,
)
from memadmin.workspaces.models import Namespace  # noqa: E402

BULK_WORKSPACE = "acme"
BULK_RESOURCE = "bulk"
BULK_NAMESPACE = "load"
BULK_BATCH = 50_000
BULK_CHUNK = 5_000  # rows generated per write: the server indexes one chunk while we make the next
BULK_SPREAD = dt.timedelta(days=90)
BULK_SUBJECT_RATE = 0.01


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


#: Real words lead the vocabulary, so the most common terms are searchable domain words.
_COMMON_WORDS = _words(
    "customer refund order ticket invoice router firmware account password billing payment "
    "shipping delivery warranty replacement escalation callback subscription upgrade plan "
    "discount outage network wireless backup sync device serial error update license portal "
    "email phone chat agent support issue request complaint feedback preference language "
    "timezone address contract renewal cancellation trial onboarding setup install configure "
    "reset restart battery charger adapter cable screen display speaker microphone camera "
    "thermostat sensor temperature schedule appointment meeting deadline report summary note "
    "reminder follow priority urgent pending resolved closed reopened waiting approved denied "
    "verified duplicate missing damaged broken slow fast stable unstable latency bandwidth "
    "signal channel mesh gateway modem server cloud storage folder file upload download share "
    "permission admin user team manager supervisor shift handover queue macro template policy "
    "compliance privacy consent deletion export audit retention incident status maintenance "
    "region city country europe asia america morning afternoon evening weekend holiday monday "
    "tuesday wednesday thursday friday sample experiment assay protocol reagent buffer "
    "instrument calibration replicate plate freezer participant visit study grant paper "
    "review analysis dataset result measurement uncertainty catalyst enzyme protein soil"
)
_SYLLABLES = _words(
    "ka lo mi ra ten vo sul ber dan fi gor hal is jun kel mar nor pel qua ris sto tal ur vin "
    "wes xan yor zel bri cla dro fen gla kri plo sna tri vel mon dar lin qui ste bor cas del "
    "fal gen hor lum nis ost pra rul sen tov ven wal zan"
)
BULK_VOCABULARY_SIZE = 4000
BULK_ZIPF_EXPONENT = 1.05


def bulk_vocabulary() -> list[str]:
    """A few thousand words, most common first: real words, then pronounceable made-up ones."""
    rng = random.Random(SEED)
    words = list(dict.fromkeys(_COMMON_WORDS))
    seen = set(words)
    while len(words) < BULK_VOCABULARY_SIZE:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


#: A word in nearly every bulk item (for search benchmarks and tests).
BULK_COMMON_WORD = _COMMON_WORDS[0]


@dataclasses.dataclass(frozen=True)
class BulkResult:
    namespace: Namespace
    rows: int
    first_key: str
    last_key: str
    load_seconds: float
    vacuum_seconds: float | None  # None: skipped because we were inside a transaction

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.load_seconds if self.load_seconds else float("inf")


COPY_SQL = (
    "COPY memory_memoryitem (id, namespace_id, tier, key, content, bytes, revision, "
    "data_subject_id, quarantine_state, updated_by, created_at, updated_at) FROM STDIN"
)


def bulk_namespace(*, actor: Actor | None = None) -> Namespace:
    """The namespace bulk loads go to (acme / bulk / load), created when missing."""
    actor = actor or Actor.system(SEED_ACTOR)
    result = SeedResult()
    workspace = _ensure_workspace(
        next(w for w in WORKSPACES if w.slug == BULK_WORKSPACE), actor, result)
    config = _ensure_provider(workspace, actor, result)
    resource = _ensure_resource(
        workspace, config, BULK_RESOURCE, actor, result,
        description="Synthetic items for benchmarks (benchmarks/bulk_load.py).",
        tools=_tools("note"))
    return _ensure_namespace(resource, BULK_NAMESPACE, actor, result,
                             description="Bulk-loaded facts; text drawn from a Zipf "
                                         "vocabulary.")


def _next_bulk_index(namespace: Namespace) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(max(substr(key, 6)::bigint), 0) FROM memory_memoryitem "
            "WHERE namespace_id = %s AND tier = 'facts' AND key ~ '^bulk-[0-9]{1,18}$'",
            [namespace.pk],
        )
        return int(cursor.fetchone()[0]) + 1


def _bulk_rows(namespace: Namespace, start: int, count: int, now: dt.datetime,
               vocabulary: Sequence[str], cum_weights: Sequence[float]) -> tuple[bytes, int]:
    """``count`` rows in COPY text format, and their content bytes.

    The text is made of ASCII words and spaces only, so nothing needs COPY escaping and a
    character is a byte.
    """
    rng = random.Random(f"{namespace.pk}:{start}")
    lengths = [rng.randint(20, 40) for _ in range(count)]
    words = iter(rng.choices(vocabulary, cum_weights=cum_weights, k=sum(lengths)))
    spread = BULK_SPREAD.total_seconds()
    ns_id = str(namespace.pk)
    out = io.StringIO()
    total = 0
    for offset, length in enumerate(lengths):
        content = " ".join(itertools.islice(words, length))
        size = len(content)
        total += size
        subject = f"customer-{rng.randint(10000, 99999)}" if rng.random() < BULK_SUBJECT_RATE \
            else "\\N"
        stamp = (now - dt.timedelta(seconds=rng.random() * spread)).isoformat()
        row_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        out.write(f"{row_id}\t{ns_id}\tfacts\tbulk-{start + offset}\t{content}\t{size}\t1\t"
                  f"{subject}\tclear\t{SEED_ACTOR}\t{stamp}\t{stamp}\n")
    return out.getvalue().encode("ascii"), total


def bulk_load(count: int, *, progress: Callable[[str], None] | None = None,
              actor: Actor | None = None) -> BulkResult:
    """Append ``count`` synthetic facts to the bulk namespace with COPY, fix its counter from an
    aggregate, audit the load and VACUUM (ANALYZE) (unless inside a transaction)."""
    actor = actor or Actor.system(SEED_ACTOR)
    namespace = bulk_namespace(actor=actor)
    vocabulary = bulk_vocabulary()
    cum_weights = list(itertools.accumulate(
        1 / rank ** BULK_ZIPF_EXPONENT for rank in range(1, len(vocabulary) + 1)))
    first = _next_bulk_index(namespace)
    now = dt.datetime.now(dt.UTC)

    started = time.monotonic()
    done = 0
    while done < count:
        batch = min(BULK_BATCH, count - done)
        # 1. COPY one batch, 2. move the counter by what it added: one transaction, so the
        # counter is right even when a later batch fails.
        with transaction.atomic():
            connection.ensure_connection()
            raw = connection.connection
            batch_bytes = 0
            with raw.cursor() as cursor, cursor.copy(COPY_SQL) as copy:
                for chunk_start in range(0, batch, BULK_CHUNK):
                    rows = min(BULK_CHUNK, batch - chunk_start)
                    data, size = _bulk_rows(namespace, first + done + chunk_start, rows, now,
                                            vocabulary, cum_weights)
                    copy.write(data)
                    batch_bytes += size
            with connection.cursor() as cursor:
                cursor.execute(
                    "UPDATE memory_namespacecounter SET items = items + %s, "
                    "bytes = bytes + %s, version = version + 1 WHERE namespace_id = %s",
                    [batch, batch_bytes, namespace.pk],
                )
        done += batch
        if progress is not None:
            elapsed = time.monotonic() - started
            progress(f"  {done:,} / {count:,} rows ({done / elapsed:,.0f} rows/s)")
    load_seconds = time.monotonic() - started

    with transaction.atomic():
        # 3. Recount from the table (the counter row locked first, so writers that commit
        # meanwhile add to the recounted value), 4. audit the load.
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM memory_namespacecounter WHERE namespace_id = %s "
                           "FOR UPDATE", [namespace.pk])
            cursor.execute(
                "UPDATE memory_namespacecounter AS c SET items = agg.items, bytes = agg.bytes, "
                "version = c.version + 1 FROM (SELECT count(*) AS items, "
                "coalesce(sum(bytes), 0) AS bytes FROM memory_memoryitem "
                "WHERE namespace_id = %s) AS agg WHERE c.namespace_id = %s",
                [namespace.pk, namespace.pk],
            )
        audit_event_create(workspace=namespace.resource.workspace, actor=actor,
                           action="memory.bulk_load", target_type="namespace",
                           target_id=namespace.pk, data={"items": count})

    vacuum_seconds: float | None = None
    if not connection.in_atomic_block:
        # 5. Flush the GIN pending list and refresh statistics: searches right after a bulk
        # load are ~100x slower otherwise. VACUUM refuses to run inside a transaction.
        vacuum_started = time.monotonic()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM (ANALYZE) memory_memoryitem")
        vacuum_seconds = time.monotonic() - vacuum_started
    return BulkResult(namespace=namespace, rows=count, first_key=f"bulk-{first}",
                      last_key=f"bulk-{first + count - 1}", load_seconds=load_seconds,
                      vacuum_seconds=vacuum_seconds)


def run(count: int, write: Callable[[str], None] = print) -> BulkResult:
    """Bulk-load ``count`` items, saying what happens through ``write``."""
    write(f"Bulk-loading {count:,} items into {BULK_WORKSPACE}/{BULK_RESOURCE}/{BULK_NAMESPACE}")
    bulk = bulk_load(count, progress=write)
    write(f"Loaded {bulk.rows:,} items ({bulk.first_key} .. {bulk.last_key}) in "
          f"{bulk.load_seconds:.1f} s: {bulk.rows_per_second:,.0f} rows/s")
    if bulk.vacuum_seconds is None:
        write("VACUUM skipped: running inside a transaction; run VACUUM (ANALYZE) "
              "memory_memoryitem before benchmarking")
    else:
        write(f"VACUUM (ANALYZE) took {bulk.vacuum_seconds:.1f} s")
    return bulk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, required=True, metavar="N",
                        help="append N synthetic items to acme/bulk/load")
    args = parser.parse_args()
    if args.items < 0:
        parser.error("--items must be zero or more")
    run(args.items)


if __name__ == "__main__":
    main()
