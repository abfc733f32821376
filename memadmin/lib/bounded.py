"""Database work bounded by a deadline: every statement gets only the time left.

PostgreSQL's ``statement_timeout`` and ``lock_timeout`` are set (transaction-local) right before
each statement from the time left at that moment, so two slow steps cannot each take the whole
budget; and the transaction is rolled back when the time ran out before it could commit.
Framework glue only: callers turn ``OutOfTime`` and ``is_timeout`` into their own error.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg.errors
from django.db import DatabaseError, connection, transaction

_SET = ("SELECT set_config('statement_timeout', %s, true), "
        "set_config('lock_timeout', %s, true)")


_TRANSACTION_CONTROL = re.compile(r"\s*(SAVEPOINT|RELEASE|ROLLBACK|COMMIT|BEGIN)\b", re.I)


def _aborted(context: dict[str, Any]) -> bool:
    raw = context["connection"].connection
    return raw is not None and raw.info.transaction_status == psycopg.pq.TransactionStatus.INERROR


class OutOfTime(Exception):
    """No time was left: before a statement, or when the work was done but not yet committed."""


def is_timeout(error: DatabaseError) -> bool:
    """Whether PostgreSQL cancelled a statement for its statement or lock timeout."""
    return isinstance(error.__cause__,
                      psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable)


def _millis(seconds: float) -> str:
    return str(max(1, int(seconds * 1000)))


def _bounds() -> list[Callable[[], float]]:
    """The time-left functions of the ``statements_within`` blocks open on this thread's
    connection, outermost first (one wrapper serves them all: the tightest one wins)."""
    bounds: list[Callable[[], float]] | None = getattr(connection, "_memadmin_bounds", None)
    if bounds is None:
        bounds = []
        connection._memadmin_bounds = bounds  # type: ignore[attr-defined]
    return bounds


_COPY = re.compile(r"\s*COPY\b", re.I)
# A ';' before the end: perhaps several commands, which psycopg sends by the simple query
# protocol when there are no parameters -- a pipeline prepares each statement, and a prepared
# statement may hold one command only. (A ';' inside a literal only costs the round trip.)
_SEVERAL = re.compile(r";\s*\S")


def _bound(execute: Callable[..., Any], sql: str, params: Any, many: bool,
           context: dict[str, Any]) -> Any:
    if _TRANSACTION_CONTROL.match(sql) or _aborted(context):
        # Savepoint handling must run whatever the time (it is how a late block is rolled
        # back), and an aborted transaction takes no settings before its rollback.
        return execute(sql, params, many, context)
    seconds = min(left() for left in _bounds())
    if seconds <= 0:
        raise OutOfTime("no time left for the next statement")
    millis = _millis(seconds)
    # On the raw connection (a fresh client-side cursor): Django's cursor would run this
    # through the wrappers again, and a server-side cursor cannot take a second query.
    raw = context["connection"].connection
    cursor = getattr(context.get("cursor"), "cursor", None)
    if (isinstance(cursor, psycopg.ServerCursor) or _COPY.match(sql)
            or (params is None and _SEVERAL.search(sql))):
        # None of these works in pipeline mode: the settings take a round trip of their own.
        raw.execute(_SET, [millis, millis])
        return execute(sql, params, many, context)
    # The settings and the statement in one round trip (psycopg's pipeline mode): the
    # statement still runs with exactly the time left when it was sent. An error of the
    # statement surfaces when the pipeline syncs, so it is turned into Django's error there.
    with context["connection"].wrap_database_errors, raw.pipeline():
        raw.execute(_SET, [millis, millis])
        return execute(sql, params, many, context)


def bounded_enclosure() -> bool:
    """Whether a ``statements_within`` block is open on this thread's connection."""
    return bool(getattr(connection, "_memadmin_bounds", None))


@contextmanager
def statements_within(left: Callable[[], float], *, savepoint: bool = True) -> Iterator[None]:
    """A transaction (a savepoint when one is open, unless ``savepoint=False``) whose
    statements each get ``left()``
    seconds at most (the least left of every enclosing block), counting lock waits;
    ``OutOfTime`` before a statement when nothing is left and, when the block finished too
    late, instead of committing (the block is rolled back). The settings the caller's
    transaction had are restored when the block ends."""
    if left() <= 0:
        raise OutOfTime("no time left")
    bounds = _bounds()
    outer = bool(bounds)
    # Transaction-local settings end with an outermost transaction; inside a caller's they
    # would outlive the released savepoint, so the caller's values are read and put back --
    # unless an enclosing block is itself bounded: it sets them again before its next
    # statement anyway.
    nested = connection.in_atomic_block and not outer
    # savepoint=False (inside a caller's transaction): no savepoint; should the block fail,
    # the caller's transaction is marked for rollback (Django's atomic), so nothing of it
    # can commit -- for work that has nothing of its own to roll back.
    with transaction.atomic(savepoint=savepoint):
        previous = None
        if nested:
            with connection.cursor() as cursor:
                cursor.execute("SELECT current_setting('statement_timeout'), "
                               "current_setting('lock_timeout')")
                previous = list(cursor.fetchone())
        bounds.append(left)
        try:
            with contextlib.ExitStack() as stack:
                if not outer:
                    stack.enter_context(connection.execute_wrapper(_bound))
                yield
                if left() <= 0:
                    raise OutOfTime("the time ran out before the work could commit")
        finally:
            bounds.pop()
        if previous is not None:
            with connection.cursor() as cursor:
                cursor.execute(_SET, previous)
