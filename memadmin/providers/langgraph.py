"""The ``langgraph`` kind: a LangGraph long-term memory store on PostgreSQL
(``langgraph.store.postgres.PostgresStore`` from ``langgraph-checkpoint-postgres``: the store
LangMem and most LangGraph agents use).

Configuration: the connection string is the provider's write-only credential. Options:

- ``prefixes``: ``{memadmin namespace slug: [label, ...]}``, the LangGraph namespace prefix a
  memadmin namespace governs (default: ``[resource slug, namespace slug]``);
- ``subject``: where the data-subject id lives: ``{"position": N}`` (the N-th label of the
  LangGraph namespace tuple, e.g. ``("memories", "<user id>")`` is position 1) or
  ``{"key": "user_id"}`` (a key of the JSON value; the default is ``data_subject_id``);
- ``text_field``: the value's main text field (default: the first string of ``content``,
  ``text``, ``memory``, ``data``).

Items are the store's ``(namespace, key, value)``. Their id is ``<dotted namespace>::<key>``
(percent-quoted: no slash, as ids travel in URL paths; ``peers/bob.md`` is ``peers%2Fbob.md``).
Content is the main text field when the value has one (an edit replaces that field and keeps
the rest of the value), else the whole value as JSON (an edit must be a JSON object). Items
memadmin creates are keyed by their tier-relative label (``pins.md``, ``peers/bob.md``);
anything else an agent wrote is a ``facts`` item keyed by its own key.

Reads are bounded SQL over the store's documented table (``store``: prefix, key, value,
created_at, updated_at, expires_at) so pages are keyset-ordered and never scan beyond the
configured prefixes; writes go through the library's ``put`` and ``delete`` inside a
transaction that first locks the row and checks it still holds what memadmin read (a
compare-and-set agents' own ``put`` waits on). Every statement, the library's included, runs
under ``statement_timeout`` and ``lock_timeout`` set right before it from the time left, and a
write whose deadline passed before its transaction could commit is rolled back as ``Timeout``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, unquote

import psycopg
import psycopg.errors
from langgraph.store.postgres import PostgresStore
from psycopg.rows import dict_row

from memadmin.providers import contract as c
from memadmin.providers.governed import GovernedProvider, StoredItem, left, parse_label
from memadmin.workspaces.models import Namespace

TEXT_FIELDS = ("content", "text", "memory", "data")
DEFAULT_SUBJECT_KEY = "data_subject_id"
SEPARATOR = "::"
SAFE = "-_.~@+=,"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LIST_SQL = ("SELECT prefix, key, value, created_at, updated_at, expires_at FROM store "
            "WHERE (prefix = %s OR prefix LIKE %s ESCAPE '\\')")
FIND_SQL = ("SELECT prefix, key, value, created_at, updated_at, expires_at FROM store "
            "WHERE (prefix = %s OR prefix LIKE %s ESCAPE '\\') AND key = ANY(%s) "
            "ORDER BY key = %s DESC, updated_at DESC LIMIT 1")


def _micros(value: dt.datetime) -> int:
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def to_ref(prefix: str, key: str) -> str:
    """An item id: ``<dotted namespace>::<key>``, each part percent-quoted so that no slash
    (ids travel in URL paths) and no ``::`` can appear inside (``memories.user-42::pref-1``)."""
    return quote(prefix, safe=SAFE) + SEPARATOR + quote(key, safe=SAFE)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class LangGraphProvider(GovernedProvider):
    kind = "langgraph"
    operations = c.OPERATIONS

    def __init__(self, settings: c.ProviderSettings) -> None:
        super().__init__(settings)
        self._local = threading.local()

    # -- configuration --------------------------------------------------------------------------

    def _prefix(self, namespace: Namespace) -> tuple[str, ...]:
        prefixes = self.settings.options.get("prefixes") or {}
        prefix = prefixes.get(namespace.slug) if isinstance(prefixes, dict) else None
        if prefix is None:
            prefix = [namespace.resource.slug, namespace.slug]
        if not isinstance(prefix, list | tuple) or not prefix or not all(
                isinstance(p, str) and p and "." not in p for p in prefix):
            raise c.Unavailable(f"the namespace prefix configured for {namespace.slug} is not "
                                "a list of labels without dots")
        return tuple(prefix)

    def _subject_position(self) -> int | None:
        subject = self.settings.options.get("subject") or {}
        position = subject.get("position") if isinstance(subject, dict) else None
        return position if isinstance(position, int) and not isinstance(position, bool) \
            else None

    def _subject_key(self) -> str:
        subject = self.settings.options.get("subject") or {}
        key = subject.get("key") if isinstance(subject, dict) else None
        return key if isinstance(key, str) and key else DEFAULT_SUBJECT_KEY

    def _text_field(self, value: dict[str, Any]) -> str | None:
        configured = self.settings.options.get("text_field")
        for name in ([configured] if isinstance(configured, str) else []) + list(TEXT_FIELDS):
            if isinstance(value.get(name), str):
                return name
        return None

    # -- connection -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _session(self, end: float) -> Iterator[None]:
        if getattr(self._local, "conn", None) is not None:
            yield  # nested: the outer operation's connection
            return
        conn = self._connect(end)
        self._local.conn = conn
        try:
            yield
        finally:
            self._local.conn = None
            conn.close()

    def _connect(self, end: float) -> psycopg.Connection[Any]:
        url = self.settings.credential
        if not url:
            raise c.Unavailable("this LangGraph provider has no connection string")
        try:
            conn = psycopg.connect(url, autocommit=True, prepare_threshold=0,
                                   row_factory=dict_row,
                                   connect_timeout=max(2, int(left(end) + 0.999)))
        except psycopg.OperationalError as exc:
            raise c.Unavailable(f"cannot connect to the LangGraph store: {_reason(exc)}") \
                from None
        except psycopg.ProgrammingError:
            raise c.Unavailable("the LangGraph connection string is malformed") from None
        return conn

    @property
    def _conn(self) -> psycopg.Connection[Any]:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            raise RuntimeError("store call outside a session")
        return conn

    def _bound(self, end: float) -> None:
        millis = max(1, int(left(end) * 1000))
        with self._conn.cursor() as cur:
            cur.execute("SELECT set_config('statement_timeout', %s, false), "
                        "set_config('lock_timeout', %s, false)", [str(millis), str(millis)])

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """The store's errors as the contract's, without the connection string."""
        try:
            yield
        except (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable):
            raise c.Timeout("the LangGraph store did not answer within the deadline") from None
        except psycopg.errors.UndefinedTable:
            raise c.Unavailable("the LangGraph store has no 'store' table (run "
                                "PostgresStore.setup() there first)") from None
        except psycopg.errors.InsufficientPrivilege:
            raise c.Unavailable("permission denied: the store's role may not do this") \
                from None
        except psycopg.OperationalError as exc:
            raise c.Unavailable(f"the LangGraph store failed: {_reason(exc)}") from None
        except psycopg.Error as exc:
            raise c.Unavailable(f"the LangGraph store failed: {type(exc).__name__}") from None

    def _query(self, end: float, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        with self._errors():
            self._bound(end)
            with self._conn.cursor() as cur:
                cur.execute(sql, params)
                return list(cur.fetchall())

    # -- rows -> items --------------------------------------------------------------------------

    def _stored(self, namespace: Namespace, row: dict[str, Any]) -> StoredItem:
        labels = tuple(str(row["prefix"]).split("."))
        value = row["value"] if isinstance(row["value"], dict) else {"value": row["value"]}
        parsed = parse_label(row["key"])
        tier, key = parsed if parsed is not None else ("facts", row["key"])
        field = self._text_field(value)
        content = value[field] if field is not None else json.dumps(
            value, ensure_ascii=False, sort_keys=True, indent=2)
        position = self._subject_position()
        if position is not None:
            subject = labels[position] if 0 <= position < len(labels) else None
        else:
            raw = value.get(self._subject_key())
            subject = raw if isinstance(raw, str) and raw else None
        problem = None
        if "\x00" in content or any(0xD800 <= ord(ch) <= 0xDFFF for ch in content):
            problem = "the value holds text memadmin cannot store (NUL or lone surrogates)"
        return StoredItem(
            ref=to_ref(row["prefix"], row["key"]), partition=namespace.partition_key,
            tier=tier, key=key, content=content, subject=subject,
            updated_at=row["updated_at"], order=_micros(row["updated_at"]),
            created_at=row["created_at"], expires_at=row.get("expires_at"), problem=problem,
        )

    def _where(self, namespace: Namespace) -> list[Any]:
        """Parameters of ``IN_PREFIX``: the prefix itself and everything below it."""
        dotted = ".".join(self._prefix(namespace))
        return [dotted, _like_escape(dotted) + ".%"]

    def _items(self, namespace: Namespace, end: float) -> Iterator[StoredItem]:
        rows = self._query(end, LIST_SQL, self._where(namespace))
        for row in rows:
            yield self._stored(namespace, row)

    def _split(self, namespace: Namespace, ref: str) -> tuple[str, str] | None:
        quoted_prefix, sep, quoted_key = ref.partition(SEPARATOR)
        prefix, key = unquote(quoted_prefix), unquote(quoted_key)
        if to_ref(prefix, key) != ref:
            return None
        dotted = ".".join(self._prefix(namespace))
        if not sep or not key or not (prefix == dotted or prefix.startswith(dotted + ".")):
            return None
        return prefix, key

    def _read(self, namespace: Namespace, ref: str, end: float) -> StoredItem | None:
        found = self._split(namespace, ref)
        if found is None:
            return None
        rows = self._query(end, "SELECT prefix, key, value, created_at, updated_at, expires_at "
                                "FROM store WHERE prefix = %s AND key = %s", list(found))
        return self._stored(namespace, rows[0]) if rows else None

    def _ref(self, namespace: Namespace, tier: str, key: str) -> str | None:
        return None  # found by ``_find``: the subject may sit in the namespace tuple

    def _find(self, namespace: Namespace, tier: str, key: str, end: float) -> StoredItem | None:
        keys = [c.source_label(tier, key)] + ([key] if tier == "facts" and key else [])
        rows = self._query(end, FIND_SQL, [*self._where(namespace), keys, keys[0]])
        return self._stored(namespace, rows[0]) if rows else None

    # -- writes ---------------------------------------------------------------------------------

    def _write(self, namespace: Namespace, tier: str, key: str, content: str,
               subject: str | None, current: StoredItem | None, end: float) -> StoredItem:
        prefix = self._prefix(namespace)
        position = self._subject_position()
        if current is None:
            labels = prefix
            if position is not None and subject is not None:
                if position != len(prefix):
                    raise c.InvalidRequest("the data subject id sits at namespace position "
                                           f"{position}; items are written at {len(prefix)}")
                labels = prefix + (subject,)
            store_key, value = c.source_label(tier, key), {"content": content}
            if position is None and subject is not None:
                value[self._subject_key()] = subject
        else:
            found = self._split(namespace, current.ref)
            assert found is not None  # read through this namespace
            dotted, store_key = found
            labels = tuple(dotted.split("."))
            if position is not None and subject is not None and subject != current.subject:
                raise c.InvalidRequest("this store keeps the data subject in the namespace; "
                                       "memadmin does not move items between namespaces")
            value = {}
        with self._errors():
            self._bound(end)
            with self._conn.transaction(), self._conn.cursor() as cur:
                cur.execute("SELECT prefix, key, value, created_at, updated_at, expires_at "
                            "FROM store WHERE prefix = %s AND key = %s FOR UPDATE",
                            [".".join(labels), store_key])
                row = cur.fetchone()
                if current is None and row is not None:
                    raise c.Conflict(f"{store_key} was created by someone else meanwhile")
                if current is not None:
                    if row is None or self._stored(namespace, row).digest != current.digest:
                        raise c.Conflict(f"{store_key} changed since memadmin read it")
                    value = self._new_value(row["value"], content)
                    if position is None and subject is not None:
                        value[self._subject_key()] = subject
                # The library's statements, then the read-back, each get the time left; a
                # write that ends late is rolled back here (Timeout), never committed.
                self._bound(end)
                try:
                    PostgresStore(self._conn).put(labels, store_key, value, index=False)
                except ValueError as exc:  # the library's own rules for namespace labels
                    raise c.InvalidRequest(f"the store refused the namespace: {exc}") from None
                self._bound(end)
                cur.execute("SELECT prefix, key, value, created_at, updated_at, expires_at "
                            "FROM store WHERE prefix = %s AND key = %s",
                            [".".join(labels), store_key])
                written = cur.fetchone()
                left(end)
        if written is None:
            raise c.Conflict(f"{store_key} disappeared right after memadmin wrote it")
        return self._stored(namespace, written)

    def _new_value(self, old: Any, content: str) -> dict[str, Any]:
        value = dict(old) if isinstance(old, dict) else {}
        field = self._text_field(value)
        if field is not None:
            value[field] = content
            return value
        try:
            parsed = json.loads(content)
        except ValueError:
            raise c.InvalidRequest("this item's value has no text field: edit it as a JSON "
                                   "object") from None
        if not isinstance(parsed, dict):
            raise c.InvalidRequest("the value must be a JSON object")
        return parsed

    def _remove(self, namespace: Namespace, item: StoredItem, end: float) -> bool:
        found = self._split(namespace, item.ref)
        if found is None:
            return False
        with self._errors():
            self._bound(end)
            with self._conn.transaction(), self._conn.cursor() as cur:
                cur.execute("SELECT 1 FROM store WHERE prefix = %s AND key = %s FOR UPDATE",
                            list(found))
                if cur.fetchone() is None:
                    return False
                self._bound(end)
                PostgresStore(self._conn).delete(tuple(found[0].split(".")), found[1])
                left(end)  # finished late: rolled back, not committed
        return True

    # -- health and discovery -------------------------------------------------------------------

    def _probe(self, end: float) -> None:
        with self._session(end):
            self._query(end, "SELECT 1 FROM store LIMIT 1", [])

    def discover(self, *, deadline: float, prefix: tuple[str, ...] = (),
                 max_depth: int = 2) -> list[tuple[str, ...]]:
        """The store's namespaces (through ``list_namespaces``), to adopt as memadmin
        resources and namespaces."""
        from memadmin.providers.governed import end_of

        end = end_of(deadline)
        with self._session(end), self._errors():
            self._bound(end)
            store = PostgresStore(self._conn)
            found = store.list_namespaces(prefix=prefix or None, max_depth=max_depth,
                                          limit=500)
        return [tuple(ns) for ns in found]


def _reason(exc: Exception) -> str:
    """A short reason for a connection failure, never the connection string or password."""
    text = str(exc).lower()
    for needle, reason in (("password authentication failed", "authentication failed"),
                           ("no password supplied", "authentication failed"),
                           ("does not exist", "the database or role does not exist"),
                           ("connection refused", "connection refused"),
                           ("timeout expired", "connection timed out"),
                           ("could not translate host name", "unknown host"),
                           ("name or service not known", "unknown host"),
                           ("server closed the connection", "the server closed the connection")):
        if needle in text:
            return reason
    return type(exc).__name__
