"""Erasing a data subject from the built-in store runs in batches inside PostgreSQL: the same
rows go (items, their revisions, their quarantine entries), the counters end where a recount
puts them, frozen items stay untouched, and a call cut short carries on from where it was."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, connections
from django.db.models import Count, Sum

from memadmin.memory import store
from memadmin.memory.models import MemoryItem, MemoryRevision, NamespaceCounter
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from memadmin.quarantine.models import QuarantineEntry

SUBJECT = "jane@example.com"


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(store, "ERASE_BATCH", 2)


@pytest.fixture
def world(local_config, namespace, other_namespace):
    """Jane's items in two namespaces (some edited, one quarantined, one under an item hold,
    the second namespace frozen), and someone else's items beside them."""
    provider = provider_for(local_config)
    ops = iter(range(10_000))
    ids: dict[str, str] = {}

    def put(name: str, content: str, ns, subject: str | None = SUBJECT) -> str:
        ids[name] = provider.retain("facts", name, content, "replace",
                                    data_subject_id=subject, operation_id=f"w-{next(ops)}",
                                    scope=c.Scope.of(ns.partition_key), deadline=30).id
        return ids[name]

    scope = c.Scope.of(namespace.partition_key)
    for n in range(7):
        put(f"jane-{n}", f"Jane fact {n}", namespace)
    for n in range(3):
        provider.update_item(ids[f"jane-{n}"], f" edit {n}", "append", expected_revision=1,
                             operation_id=f"e-{n}", scope=scope, deadline=30)
    provider.set_quarantine(ids["jane-3"], "pending", scope=scope, deadline=30)
    put("jane-held", "Jane fact under a hold", namespace)
    provider.freeze(c.FreezeTarget(level="item", item_id=ids["jane-held"]), kind="legal_hold",
                    reason="case 7", scope=scope, deadline=30)
    for n in range(3):
        put(f"bob-{n}", f"Bob fact {n}", namespace, subject="bob@example.com")
        put(f"anon-{n}", f"Anonymous fact {n}", namespace, subject=None)
    put("jane-other-ns", "Jane in the second namespace", other_namespace)
    put("jane-other-ns-2", "Jane again in the second namespace", other_namespace)
    provider.freeze(c.FreezeTarget(level="namespace", partition=other_namespace.partition_key),
                    kind="freeze", reason="moving", scope=c.Scope.of(
                        other_namespace.partition_key), deadline=30)
    return {"provider": provider, "ids": ids,
            "scope": c.Scope((namespace.partition_key, other_namespace.partition_key)),
            "namespaces": [namespace, other_namespace]}


def counters_match_a_recount(namespaces) -> None:
    for ns in namespaces:
        totals = MemoryItem.objects.filter(namespace=ns).aggregate(n=Count("id"), b=Sum("bytes"))
        counter = NamespaceCounter.objects.get(namespace=ns)
        assert (counter.items, counter.bytes) == (totals["n"], totals["b"] or 0), ns.slug


def forget(world, op: str = "erase-1", **kwargs):
    return world["provider"].forget(data_subject_id=SUBJECT, operation_id=op,
                                    scope=world["scope"], deadline=30, **kwargs)


@pytest.mark.django_db
@pytest.mark.usefixtures("small_batches")
class TestErase:
    def test_it_removes_the_same_rows_and_keeps_the_counters_exact(self, world) -> None:
        ids = world["ids"]
        erased = [ids[f"jane-{n}"] for n in range(7)]
        assert MemoryRevision.objects.filter(item_id__in=erased).count() == 3
        assert QuarantineEntry.objects.filter(item_id=ids["jane-3"]).exists()
        versions = dict(NamespaceCounter.objects.values_list("namespace_id", "version"))

        result = forget(world)

        assert result == c.ForgetResult(removed=7, held=3)
        assert not MemoryItem.objects.filter(pk__in=erased).exists()
        assert not MemoryRevision.objects.filter(item_id__in=erased).exists()
        assert not QuarantineEntry.objects.filter(item_id=ids["jane-3"]).exists()
        left = set(MemoryItem.objects.values_list("key", flat=True))
        assert left == {"jane-held", "jane-other-ns", "jane-other-ns-2",
                        *(f"bob-{n}" for n in range(3)), *(f"anon-{n}" for n in range(3))}
        counters_match_a_recount(world["namespaces"])
        first = world["namespaces"][0]
        assert NamespaceCounter.objects.get(namespace=first).version > versions[first.pk]

    def test_frozen_items_are_not_touched(self, world) -> None:
        held = MemoryItem.objects.filter(key__in=["jane-held", "jane-other-ns",
                                                  "jane-other-ns-2"]).order_by("key")
        before = list(held.values("id", "content", "revision", "updated_at"))

        forget(world)

        assert list(held.values("id", "content", "revision", "updated_at")) == before

    def test_an_override_removes_the_held_items_too(self, world) -> None:
        result = forget(world, override_hold=True)

        assert result == c.ForgetResult(removed=10, held=0)
        assert not MemoryItem.objects.filter(data_subject_id=SUBJECT).exists()
        counters_match_a_recount(world["namespaces"])

    def test_a_replay_answers_the_same_and_removes_nothing_more(self, world) -> None:
        first = forget(world)
        world["provider"].retain("facts", "jane-new", "Jane after the erasure", "replace",
                                 data_subject_id=None, operation_id="new",
                                 scope=c.Scope.of(world["namespaces"][0].partition_key),
                                 deadline=30)
        MemoryItem.objects.filter(key="jane-new").update(data_subject_id=SUBJECT)

        assert forget(world) == first
        assert MemoryItem.objects.filter(key="jane-new").exists()

    def test_it_is_the_same_in_one_batch(self, world, monkeypatch) -> None:
        monkeypatch.setattr(store, "ERASE_BATCH", 5_000)

        assert forget(world) == c.ForgetResult(removed=7, held=3)
        counters_match_a_recount(world["namespaces"])

    def test_it_sends_no_id_lists(self, world) -> None:
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as captured:
            forget(world)
        deletes = [q["sql"] for q in captured.captured_queries if "DELETE" in q["sql"]]
        assert deletes and all(world["ids"]["jane-0"] not in sql for sql in deletes)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("small_batches")
class TestCutShort:
    def test_a_call_cut_short_commits_its_batches_and_the_retry_finishes(
            self, world, monkeypatch) -> None:
        real = store.LocalProvider._remember_progress
        calls = {"n": 0}

        def dies_in_the_third_batch(self, scope, op_hash, req_hash, response):
            calls["n"] += 1
            if calls["n"] == 3:
                raise RuntimeError("worker killed")
            return real(self, scope, op_hash, req_hash, response)

        monkeypatch.setattr(store.LocalProvider, "_remember_progress", dies_in_the_third_batch)
        with pytest.raises(RuntimeError):
            forget(world)
        assert MemoryItem.objects.filter(data_subject_id=SUBJECT).count() == 10 - 4
        counters_match_a_recount(world["namespaces"])  # each batch moved them with it
        monkeypatch.setattr(store.LocalProvider, "_remember_progress", real)

        assert forget(world) == c.ForgetResult(removed=7, held=3)
        assert set(MemoryItem.objects.filter(data_subject_id=SUBJECT)
                   .values_list("key", flat=True)) == {"jane-held", "jane-other-ns",
                                                       "jane-other-ns-2"}
        counters_match_a_recount(world["namespaces"])

    def test_a_row_a_writer_holds_is_waited_for_not_left_behind(self, world) -> None:
        locked = world["ids"]["jane-5"]
        taken, release = threading.Event(), threading.Event()

        def writer() -> None:
            other = connections.create_connection("default")
            try:
                with other.cursor() as cursor:
                    cursor.execute("BEGIN")
                    cursor.execute("SELECT 1 FROM memory_memoryitem WHERE id = %s FOR UPDATE",
                                   [locked])
                    taken.set()
                    release.wait(10)
                    time.sleep(0.3)
                    cursor.execute("COMMIT")
            finally:
                other.close()

        thread = threading.Thread(target=writer)
        thread.start()
        assert taken.wait(10)
        release.set()
        try:
            result = forget(world)
        finally:
            thread.join()

        assert result == c.ForgetResult(removed=7, held=3)
        assert not MemoryItem.objects.filter(pk=locked).exists()
        counters_match_a_recount(world["namespaces"])

    def test_a_writer_in_another_connection_completes_between_its_batches(
            self, world, monkeypatch) -> None:
        # Each batch commits on its own: after the first one, a write to the same namespace
        # (its counter row, its items) goes through before the erasure carries on.
        real = store.LocalProvider._erase_batch
        go, written = threading.Event(), threading.Event()
        batches = {"n": 0}

        def then_let_the_writer_in(self, *args, **kwargs):
            gone = real(self, *args, **kwargs)
            batches["n"] += 1
            if batches["n"] == 1:
                go.set()
                written.wait(10)
            return gone

        def writer() -> None:
            try:
                go.wait(10)
                world["provider"].retain(
                    "facts", "written-meanwhile", "A note written during the erasure",
                    "replace", operation_id="meanwhile", deadline=10,
                    scope=c.Scope.of(world["namespaces"][0].partition_key))
                written.set()
            finally:
                connection.close()

        monkeypatch.setattr(store.LocalProvider, "_erase_batch", then_let_the_writer_in)
        thread = threading.Thread(target=writer)
        thread.start()
        try:
            result = forget(world)
        finally:
            go.set()
            thread.join()

        assert written.is_set()
        assert batches["n"] > 1  # the write landed while the erasure was under way
        assert result == c.ForgetResult(removed=7, held=3)
        assert MemoryItem.objects.filter(key="written-meanwhile").exists()
        assert not MemoryItem.objects.filter(data_subject_id=SUBJECT).exclude(
            key__in=["jane-held", "jane-other-ns", "jane-other-ns-2"]).exists()
        counters_match_a_recount(world["namespaces"])


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("small_batches")
class TestWal:
    def test_each_batch_writes_its_wal_compressed_when_the_role_may(self, world) -> None:
        # After a checkpoint, a batch's WAL is mostly one image of each page it touches; every
        # other writer of the server waits behind it (issue #18): the batches compress it.
        # The setting is read inside each batch's own transaction, after its delete.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('wal_compression'), "
                "has_parameter_privilege('wal_compression', 'SET'), "
                "(SELECT enumvals FROM pg_settings WHERE name = 'wal_compression')")
            server, may, methods = cursor.fetchone()
        seen: list[tuple[str, bool]] = []

        def after_each_delete(execute, sql, params, many, context):
            result = execute(sql, params, many, context)
            if "DELETE FROM memory_memoryitem" in sql:
                raw = context["connection"].connection
                seen.append((raw.execute("SELECT current_setting('wal_compression')")
                             .fetchone()[0], context["connection"].in_atomic_block))
            return result

        with connection.execute_wrapper(after_each_delete):
            result = forget(world)

        assert result == c.ForgetResult(removed=7, held=3)
        assert len(seen) >= 4 and all(in_batch for _, in_batch in seen)  # batches of 2
        if server == "off" and may and {"lz4", "zstd"} & set(methods):
            assert {setting for setting, _ in seen} <= {"lz4", "zstd"}
            assert len({setting for setting, _ in seen}) == 1
        else:  # not allowed to (or nothing to) change: the server's setting, no error
            assert {setting for setting, _ in seen} == {server}
        with connection.cursor() as cursor:  # set for the batches' transactions only
            cursor.execute("SELECT current_setting('wal_compression')")
            assert cursor.fetchone()[0] == server
