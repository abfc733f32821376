"""A faster flush for the transactional tests (``live_server``, the browser tests, the http
parity cases): after each one, Django's TransactionTestCase empties every table with
``manage.py flush``, which by default

1. runs one ``TRUNCATE`` of all ~60 tables: PostgreSQL gives each table and index new files,
   1.5-2.7 s a test on a busy 2-core machine;
2. emits ``post_migrate``, whose only receivers (contenttypes, auth) insert again the content
   types and permissions the TRUNCATE removed: 0.3-1.4 s a test on the same machine.

Here, instead (``install()``, called from tests/conftest.py):

1. every table is emptied with ``DELETE`` (25-75 ms for the few rows a test leaves), with
   triggers and foreign-key checks off for that one transaction (``session_replication_role
   = replica``; the audit trail's append-only triggers would refuse the DELETE, as they never
   see a TRUNCATE). Every table is emptied, so no reference dangles;
2. the content types and permissions are kept when they are exactly what ``post_migrate``
   would leave (one checksum query against the state recorded after the last full flush), and
   ``post_migrate`` is then not emitted: it would change nothing. A test that changed either
   table gets the full flush (both tables emptied, ``post_migrate`` emitted).

The tables end as a full flush leaves them. Anything else (another database, not a superuser,
sequences to reset as ``call_command("flush")`` asks by default, CASCADE) takes Django's own
path unchanged.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from django.core.management.commands import flush
from django.db import connections
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.backends.postgresql.operations import DatabaseOperations
from django.db.models.signals import post_migrate

#: The tables post_migrate fills (contenttypes and auth's permissions), and their checksum.
KEPT = ("django_content_type", "auth_permission")
CHECKSUM = """
    SELECT md5(coalesce((SELECT string_agg(concat_ws('|', id, app_label, model), ','
                                           ORDER BY id) FROM django_content_type), '')
               || '/' ||
               coalesce((SELECT string_agg(concat_ws('|', id, content_type_id, codename, name),
                                           ',' ORDER BY id) FROM auth_permission), ''))
"""

_truncate = DatabaseOperations.sql_flush
_handle = flush.Command.handle
#: Per database alias: the checksum of KEPT after the last full flush.
_clean: dict[str, str] = {}
#: Set while a flush keeps KEPT (read by the sql_flush below).
_keeping: set[str] = set()


#: The post_migrate receivers the kept tables stand for: with any other, every flush is full.
KNOWN_RECEIVERS = {"create_contenttypes", "create_permissions",
                   "rename_permissions_after_model_rename", "clear_ct_cache"}


def _only_known_receivers() -> bool:
    names = set()
    for entry in post_migrate.receivers:  # ((ids), receiver or a weak reference to it, ...)
        receiver = entry[1]() if isinstance(entry[1], weakref.ReferenceType) else entry[1]
        names.add(getattr(receiver, "__name__", repr(receiver)))
    return names <= KNOWN_RECEIVERS


def _superuser(connection: Any) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('is_superuser') = 'on'")
        return bool(cursor.fetchone()[0])


def _checksum(connection: Any) -> str:
    with connection.cursor() as cursor:
        cursor.execute(CHECKSUM)
        return str(cursor.fetchone()[0])


def sql_flush(self: BaseDatabaseOperations, style: Any, tables: Sequence[str], *,
              reset_sequences: bool = False, allow_cascade: bool = False) -> list[str]:
    if not tables or reset_sequences or allow_cascade or not _superuser(self.connection):
        return _truncate(self, style, tables, reset_sequences=reset_sequences,
                         allow_cascade=allow_cascade)
    kept = _keeping if self.connection.alias in _clean else set()
    deletes = [f"DELETE FROM {style.SQL_FIELD(self.quote_name(table))};"
               for table in tables if table not in kept]
    # Django runs the list in one transaction (execute_sql_flush): SET LOCAL ends with it.
    return ["SET LOCAL session_replication_role = replica;", *deletes,
            "SET LOCAL session_replication_role = DEFAULT;"]


def handle(self: flush.Command, **options: Any) -> None:
    alias = options["database"]
    connection = connections[alias]
    fast = (connection.vendor == "postgresql" and not options.get("reset_sequences", True)
            and not options.get("allow_cascade", False) and _superuser(connection)
            and _only_known_receivers())
    if fast and alias in _clean and _checksum(connection) == _clean[alias]:
        _keeping.update(KEPT)
        try:
            _handle(self, **{**options, "inhibit_post_migrate": True})
        finally:
            _keeping.clear()
        return
    _clean.pop(alias, None)
    _handle(self, **options)
    if fast and not options.get("inhibit_post_migrate", False):
        _clean[alias] = _checksum(connection)


def install() -> None:
    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]
    flush.Command.handle = handle  # type: ignore[method-assign]
