"""Database work bounded by a deadline: every statement gets only the time left.

PostgreSQL's ``statement_timeout`` and ``lock_timeout`` are set (transaction-local) right before
each statement from the time left at that moment, so two slow steps cannot each take the whole
budget; and the transaction is rolled back when the time ran out before it could commit.
Framework glue only: callers turn ``OutOfTime`` and ``is_timeout`` into their own error.
"""

from __future__ import annotations

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


@contextmanager
def statements_within(left: Callable[[], float]) -> Iterator[None]:
    """A transaction (a savepoint when one is open) whose statements each get ``left()``
    seconds at most, counting lock waits; ``OutOfTime`` before a statement when nothing is left
    and, when the block finished too late, instead of committing (the block is rolled back).
    The settings the caller's transaction had are restored when the block ends."""
    if left() <= 0:
        raise OutOfTime("no time left")

    def bound(execute: Callable[..., Any], sql: str, params: Any, many: bool,
              context: dict[str, Any]) -> Any:
        if _TRANSACTION_CONTROL.match(sql) or _aborted(context):
            # Savepoint handling must run whatever the time (it is how a late block is rolled
            # back), and an aborted transaction takes no settings before its rollback.
            return execute(sql, params, many, context)
        seconds = left()
        if seconds <= 0:
            raise OutOfTime("no time left for the next statement")
        millis = _millis(seconds)
        # On the raw connection (a fresh client-side cursor): Django's cursor would run this
        # through the wrappers again, and a server-side cursor cannot take a second query.
        context["connection"].connection.execute(_SET, [millis, millis])
        return execute(sql, params, many, context)

    # Transaction-local settings end with an outermost transaction; inside a caller's they
    # would outlive the released savepoint, so the caller's values are read and put back.
    nested = connection.in_atomic_block
    with transaction.atomic():
        previous = None
        if nested:
            with connection.cursor() as cursor:
                cursor.execute("SELECT current_setting('statement_timeout'), "
                               "current_setting('lock_timeout')")
                previous = list(cursor.fetchone())
        with connection.execute_wrapper(bound):
            yield
            if left() <= 0:
                raise OutOfTime("the time ran out before the work could commit")
        if previous is not None:
            with connection.cursor() as cursor:
                cursor.execute(_SET, previous)
