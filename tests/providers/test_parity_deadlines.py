"""Provider parity: the deadline bounds the whole call, not each step.

Every operation of every kind meets two slow steps in one call: another connection holds a lock
on the first table the call reads (the namespace lookup, in memadmin's database) for most of the
deadline, and another holds a second slow resource the same call needs next until well past it:

- ``local`` and ``http``: the built-in store's table the call reads or writes (items, counters,
  freezes);
- ``langgraph``: LangGraph's own ``store`` table, in the store's database;
- ``mem0``: Mem0's SQLite history database (locked ``EXCLUSIVE`` by another SQLite connection),
  which Mem0 reads for revisions and writes on every change;
- ``markdown``: memadmin's governance tables beside the folder (the item rows it keeps, the
  freezes it checks before touching a file).

Each step alone would fit the deadline; together they do not. The answer must be ``Timeout``
and a write must not have been applied (asserted once the locks are gone), and the call must end
near the deadline (asserted only with the 5x slack rule).

These run as transactional tests for every kind: the other connection can lock only tables no
open test transaction holds.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import psycopg
import pytest
from django.db import connection

from memadmin.providers import contract as c
from tests.providers.conftest import DEADLINE

pytestmark = pytest.mark.django_db(transaction=True)

#: The deadline of the slow calls, and when the two locks are let go (seconds from the start).
BUDGET = 1.0
FIRST_RELEASED = 0.6
SECOND_RELEASED = 1.4
FIRST_TABLE = "workspaces_namespace"


class Hold(Protocol):
    """A slow resource another client holds: taken and let go on the holding thread."""

    def take(self) -> None: ...

    def let_go(self) -> None: ...


def _django_dsn() -> str:
    params = connection.settings_dict
    return psycopg.conninfo.make_conninfo(
        dbname=params["NAME"], user=params["USER"] or None, host=params["HOST"] or None,
        port=params["PORT"] or None, password=params["PASSWORD"] or None)


class TableLock:
    """``LOCK TABLE ... IN ACCESS EXCLUSIVE MODE`` from another PostgreSQL connection (reads
    wait as well as writes); memadmin's own database unless ``dsn`` names another."""

    def __init__(self, table: str, dsn: str | None = None) -> None:
        self.table, self.dsn = table, dsn
        self.conn: psycopg.Connection[Any] | None = None

    def take(self) -> None:
        self.conn = psycopg.connect(self.dsn or _django_dsn())
        self.conn.execute("SET lock_timeout = '5s'")
        self.conn.execute(f"LOCK TABLE {self.table} IN ACCESS EXCLUSIVE MODE")

    def let_go(self) -> None:
        assert self.conn is not None
        self.conn.rollback()
        self.conn.close()

    def __repr__(self) -> str:
        return f"TableLock({self.table!r})"


class SqliteLock:
    """An ``EXCLUSIVE`` transaction on a SQLite database from another connection: in SQLite's
    default journal mode, readers and writers alike wait for it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.conn: sqlite3.Connection | None = None

    def take(self) -> None:
        self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=5)
        self.conn.execute("BEGIN EXCLUSIVE")

    def let_go(self) -> None:
        assert self.conn is not None
        self.conn.execute("ROLLBACK")
        self.conn.close()

    def __repr__(self) -> str:
        return f"SqliteLock({self.path!r})"


class Locks:
    """Two other clients: one holds ``first`` for ``first_for`` seconds, the other ``second``
    until ``second_until``. ``second`` is a table name of memadmin's database or a ``Hold``."""

    def __init__(self, second: str | Hold, first_for: float = FIRST_RELEASED,
                 second_until: float = SECOND_RELEASED, first: str = FIRST_TABLE) -> None:
        self.first: Hold = TableLock(first)
        self.second: Hold = TableLock(second) if isinstance(second, str) else second
        self.first_for, self.second_until = first_for, second_until
        self.ready = threading.Event()
        self.failed: BaseException | None = None
        self.thread = threading.Thread(target=self._hold, daemon=True)

    def _hold(self) -> None:
        try:
            self.first.take()
            try:
                self.second.take()
            except BaseException:
                self.first.let_go()
                raise
            started = time.monotonic()
            self.ready.set()
            time.sleep(max(0.0, started + self.first_for - time.monotonic()))
            self.first.let_go()
            time.sleep(max(0.0, started + self.second_until - time.monotonic()))
            self.second.let_go()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.failed = exc
            self.ready.set()

    def __enter__(self) -> Locks:
        self.thread.start()
        assert self.ready.wait(10), "the locks were not taken"
        if self.failed is not None:
            raise self.failed
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.join(10)
        assert not self.thread.is_alive()
        if self.failed is not None:
            raise self.failed


def slow(call: Callable[[], Any], second: str | Hold
         ) -> tuple[type[BaseException] | None, float]:
    """Run ``call`` against the two locks; (the error it raised, seconds it took)."""
    with Locks(second):
        started = time.monotonic()
        try:
            call()
        except c.ProviderError as exc:
            return type(exc), time.monotonic() - started
        return None, time.monotonic() - started


@pytest.fixture
def item(put) -> c.RetainResult:
    return put("the original text", "peers", "bob")


ITEMS = "memory_memoryitem"
FREEZES = "memory_freeze"
GOVERNED_ROWS = "providers_governeditem"

#: What a call of each kind meets second, by what the call does next after the namespace
#: lookup: ``read`` (reads or rewrites an item), ``count`` (the item count), ``create`` (looks for
#: the item, then writes a new one), ``remove`` (finds items and what holds them, then deletes),
#: ``freeze`` (memadmin's freeze rows), ``item_freeze`` (finds the item, then the freeze rows),
#: ``after_write`` (a table memadmin writes only once the store has the item). A ``str`` is a
#: table of memadmin's database; ``"store"`` is the kind's own store (filled in by ``second``).
SECOND_STEPS: dict[str, dict[str, str]] = {
    "local": {"read": ITEMS, "count": "memory_namespacecounter", "create": ITEMS,
              "remove": ITEMS, "freeze": FREEZES, "item_freeze": ITEMS, "after_write": ITEMS},
    "langgraph": {"read": "store", "count": "store", "create": "store", "remove": "store",
                  "freeze": FREEZES, "item_freeze": "store",
                  "after_write": GOVERNED_ROWS},
    "mem0": {"read": "store", "count": "store", "create": "store", "remove": "store",
             "freeze": FREEZES, "item_freeze": "store", "after_write": GOVERNED_ROWS},
    # A folder has nothing to lock: the slow steps are memadmin's own tables beside it (the
    # item rows it observes before answering or rewriting, the freezes it checks before it
    # creates or deletes a file).
    "markdown": {"read": GOVERNED_ROWS, "count": GOVERNED_ROWS, "create": FREEZES,
                 "remove": FREEZES, "freeze": FREEZES, "item_freeze": FREEZES,
                 "after_write": GOVERNED_ROWS},
}
SECOND_STEPS["http"] = SECOND_STEPS["local"]


@pytest.fixture
def second(request: pytest.FixtureRequest, provider_kind: str,
           provider: c.Provider) -> Callable[[str], str | Hold]:
    """The second slow step of a call of this kind, by what the call does next."""

    def step(what: str) -> str | Hold:
        name = SECOND_STEPS[provider_kind][what]
        if name != "store":
            return name
        if provider_kind == "langgraph":
            return TableLock("store", dsn=request.getfixturevalue("langgraph_store"))
        if provider_kind == "mem0":
            settings = request.getfixturevalue("mem0_settings")
            return SqliteLock(str(settings["history_db_path"]))
        raise AssertionError(f"no store lock for the {provider_kind} kind")

    return step


@pytest.fixture(autouse=True)
def capabilities_known(provider: c.Provider) -> None:
    # A remote client learns whether writes are deduplicated before the slow call, so a reply
    # it gives up on is a Timeout rather than "uncertain".
    provider.capabilities(deadline=DEADLINE)


def assert_timed_out(outcome: tuple[type[BaseException] | None, float]) -> None:
    error, seconds = outcome
    assert error is c.Timeout
    assert seconds < 5 * BUDGET


def content_of(provider: c.Provider, scope: c.Scope, item_id: str) -> str:
    return provider.get_item(item_id, scope=scope, deadline=DEADLINE).item.content


class TestReads:
    @pytest.mark.parametrize(("operation", "what"), [
        ("recall", "read"), ("list", "read"), ("count", "count"),
        ("count_filtered", "read"), ("get", "read"), ("export", "read"),
    ])
    def test_it_times_out_over_two_slow_steps(self, provider, scope, item, second, operation,
                                              what):
        calls: dict[str, Callable[[], Any]] = {
            "recall": lambda: provider.recall("original", scope=scope, deadline=BUDGET),
            "list": lambda: provider.list_items(c.ItemFilters(), scope=scope, deadline=BUDGET),
            "count": lambda: provider.count(c.ItemFilters(), scope=scope, deadline=BUDGET),
            "count_filtered": lambda: provider.count(c.ItemFilters(tier="peers"), scope=scope,
                                                     deadline=BUDGET),
            "get": lambda: provider.get_item(item.id, scope=scope, deadline=BUDGET),
            "export": lambda: list(provider.export(c.ItemFilters(), scope=scope,
                                                   deadline=BUDGET)),
        }

        assert_timed_out(slow(calls[operation], second(what)))


class TestWrites:
    def test_a_late_retain_is_not_applied(self, provider, scope, op, second):
        assert_timed_out(slow(lambda: provider.retain(
            "peers", "carol", "written too late", "replace", operation_id=op(), scope=scope,
            deadline=BUDGET), second("create")))

        found = provider.list_items(c.ItemFilters(key="carol"), scope=scope, deadline=DEADLINE)
        assert found.items == []

    def test_a_write_that_ends_late_is_never_reported_done(self, provider, scope, op, second):
        # The second slow step comes after the store took the item (memadmin's own row of it):
        # a store that cannot take a write back keeps it, but the answer is Timeout, and what
        # it kept is governed as first seen (revision 1, scanned) the next time it is read.
        assert_timed_out(slow(lambda: provider.retain(
            "peers", "carol", "written too late", "replace", operation_id=op(), scope=scope,
            deadline=BUDGET), second("after_write")))

        found = provider.list_items(c.ItemFilters(key="carol"), scope=scope, deadline=DEADLINE)
        if c.DIRECT_WRITES not in provider.capabilities(deadline=DEADLINE):
            assert found.items == []  # one transaction: rolled back whole
        else:
            assert [(i.content, i.revision, i.quarantine) for i in found.items] in (
                [], [("written too late", 1, "clear")])

    def test_a_late_update_is_not_applied(self, provider, scope, item, op, second):
        assert_timed_out(slow(lambda: provider.update_item(
            item.id, "changed too late", "replace", expected_revision=1, operation_id=op(),
            scope=scope, deadline=BUDGET), second("read")))

        assert content_of(provider, scope, item.id) == "the original text"

    def test_a_late_delete_is_not_applied(self, provider, scope, item, op, second):
        assert_timed_out(slow(lambda: provider.delete_items(
            ids=[item.id], operation_id=op(), scope=scope, deadline=BUDGET), second("remove")))

        assert content_of(provider, scope, item.id) == "the original text"

    def test_a_late_filter_delete_is_not_applied(self, provider, scope, item, op, second):
        assert_timed_out(slow(lambda: provider.delete_items(
            filters=c.ItemFilters(), operation_id=op(), scope=scope, deadline=BUDGET),
            second("remove")))

        assert provider.count(c.ItemFilters(), scope=scope, deadline=DEADLINE) == 1

    def test_a_late_forget_is_not_applied(self, provider, scope, item, op, second):
        assert_timed_out(slow(lambda: provider.forget(
            item_id=item.id, operation_id=op(), scope=scope, deadline=BUDGET),
            second("remove")))

        assert content_of(provider, scope, item.id) == "the original text"

    def test_a_late_forget_by_subject_is_not_applied(self, provider, scope, put, op, second):
        tagged = put("about dana", "peers", "dana", subject="subject-dana")

        assert_timed_out(slow(lambda: provider.forget(
            data_subject_id="subject-dana", operation_id=op(), scope=scope, deadline=BUDGET),
            second("remove")))

        assert content_of(provider, scope, tagged.id) == "about dana"

    def test_a_late_freeze_is_not_applied(self, provider, scope, item, second):
        target = c.FreezeTarget(level="namespace", partition=scope.partitions[0])

        assert_timed_out(slow(lambda: provider.freeze(
            target, kind="freeze", reason="incident", scope=scope, deadline=BUDGET),
            second("freeze")))

        assert not provider.get_item(item.id, scope=scope, deadline=DEADLINE).item.frozen

    def test_a_late_lift_is_not_applied(self, provider, scope, item, second):
        target = c.FreezeTarget(level="namespace", partition=scope.partitions[0])
        provider.freeze(target, kind="freeze", reason="incident", scope=scope,
                        deadline=DEADLINE)

        assert_timed_out(slow(lambda: provider.lift_freeze(
            target, kind="freeze", scope=scope, deadline=BUDGET), second("freeze")))

        assert provider.get_item(item.id, scope=scope, deadline=DEADLINE).item.frozen

    def test_a_late_item_freeze_is_not_applied(self, provider, scope, item, second):
        # An item target is looked up where the items are, then among the freezes.
        target = c.FreezeTarget(level="item", partition=scope.partitions[0], item_id=item.id)

        assert_timed_out(slow(lambda: provider.freeze(
            target, kind="freeze", reason="incident", scope=scope, deadline=BUDGET),
            second("item_freeze")))

        assert not provider.get_item(item.id, scope=scope, deadline=DEADLINE).item.frozen

    def test_a_late_quarantine_change_is_not_applied(self, provider, scope, item, second):
        assert_timed_out(slow(lambda: provider.set_quarantine(
            item.id, "pending", scope=scope, deadline=BUDGET), second("read")))

        assert provider.get_item(item.id, scope=scope,
                                 deadline=DEADLINE).item.quarantine == "clear"


class TestWithinTheDeadline:
    def test_two_short_waits_that_fit_still_succeed(self, provider, scope, item, op, second):
        # The same two slow steps, held briefly: the write fits its deadline and is applied.
        with Locks(second("read"), first_for=0.1, second_until=0.2):
            result = provider.update_item(item.id, "in time", "replace", expected_revision=1,
                                          operation_id=op(), scope=scope, deadline=DEADLINE)

        assert result.revision == 2
        assert content_of(provider, scope, item.id) == "in time"
