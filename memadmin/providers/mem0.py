"""The ``mem0`` kind: Mem0 open-source memory, through Mem0's own Python API (``mem0.Memory``)
configured like the deployment it governs.

Why the Python API and not a Mem0 server's REST API: the open-source server is a thin wrapper
over the same ``Memory`` object, many deployments run Mem0 in-process without it, and the API
gives what governance needs that the REST routes do not all expose (``history()`` for
revisions, metadata filters, and the history database, which erasure must purge: Mem0's
``delete`` keeps the old text in its history table).

Options: ``config`` is the ``Memory.from_config`` dictionary of the deployment (vector store,
embedder, ``history_db_path``). memadmin writes with ``infer=False`` (no LLM call); an edit is
re-embedded by the deployment's own embedder. ``scopes`` maps a memadmin namespace slug to
Mem0's scoping (``{"agent_id": ..., "run_id": ..., "app_id"...}``; default ``{"agent_id":
<namespace slug>}``); the data subject is Mem0's ``user_id``. The embedder
``{"provider": "langchain", "config": {"model": "deterministic-fake"}}`` stands for LangChain's
``DeterministicFakeEmbedding`` (offline tests and demos: no model is downloaded).

Items are Mem0 memories: id = Mem0's id, content = the memory text, revisions = Mem0's own
``history()`` (ADD and UPDATE events). Memories memadmin creates carry ``tier`` and ``key`` in
their metadata; anything else is a ``facts`` item keyed by its id.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

# Mem0 reads this once, at import: without it every call tries to reach PostHog.
os.environ["MEM0_TELEMETRY"] = "False"

from mem0 import Memory  # noqa: E402

from memadmin.providers import contract as c  # noqa: E402
from memadmin.providers.governed import (  # noqa: E402
    GovernedProvider,
    StoredItem,
    left,
)
from memadmin.workspaces.models import Namespace  # noqa: E402

#: Most memories listed per namespace (Mem0 lists through its vector store, without paging).
LIST_CAP = 10_000
SCOPE_KEYS = ("agent_id", "run_id", "app_id")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
#: The busy timeout of Mem0's own SQLite connection (Python's default), put back after a call.
SQLITE_BUSY_MILLIS = 5000
#: The least time the history purge of a delete already made gets (see ``_purge_history``).
PURGE_MIN_SECONDS = 0.25
_memories: dict[str, Memory] = {}
_memories_lock = threading.Lock()


def _micros(value: dt.datetime) -> int:
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _time(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        moment = value
    else:
        try:
            moment = dt.datetime.fromisoformat(str(value))
        except ValueError:
            return _EPOCH
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def memory_for(config: dict[str, Any]) -> Memory:
    """One ``Memory`` per configuration and process: a local Qdrant path admits one client,
    and building one costs about a second."""
    key = json.dumps(config, sort_keys=True, default=str)
    with _memories_lock:
        memory = _memories.get(key)
        if memory is None:
            memory = Memory.from_config(_resolved(config))
            _memories[key] = memory
        return memory


def close_all() -> None:
    """Close every cached ``Memory`` (tests, shutdown): their Qdrant and SQLite handles."""
    with _memories_lock:
        for memory in _memories.values():
            for close in (memory.vector_store.client.close, memory.db.close):
                with contextlib.suppress(Exception):  # closing what may be half-open
                    close()
        _memories.clear()


def _resolved(config: dict[str, Any]) -> dict[str, Any]:
    resolved = copy.deepcopy(config)
    embedder = resolved.get("embedder") or {}
    model = (embedder.get("config") or {}).get("model")
    if embedder.get("provider") == "langchain" and model == "deterministic-fake":
        from langchain_core.embeddings import DeterministicFakeEmbedding

        dims = int((resolved.get("vector_store") or {}).get("config", {}).get(
            "embedding_model_dims", 64))
        embedder["config"]["model"] = DeterministicFakeEmbedding(size=dims)
    # memadmin never asks Mem0 to infer (infer=False): an LLM client is built, never called.
    resolved.setdefault("llm", {"provider": "openai", "config": {
        "api_key": "unused-memadmin-never-infers", "openai_base_url": "http://127.0.0.1:9/v1"}})
    return resolved


class Mem0Provider(GovernedProvider):
    kind = "mem0"
    operations = c.OPERATIONS
    keeps_history = True

    def __init__(self, settings: c.ProviderSettings) -> None:
        super().__init__(settings)
        self._memory: Memory | None = None
        self._local = threading.local()

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            config = self.settings.options.get("config")
            if not isinstance(config, dict) or not config:
                raise c.Unavailable("this Mem0 provider has no configuration")
            try:
                self._memory = memory_for(config)
            except c.ProviderError:
                raise
            except Exception as exc:  # noqa: BLE001 - Mem0 raises anything from its backends
                raise c.Unavailable(f"Mem0 could not start: {type(exc).__name__}") from None
        return self._memory

    def _scope_of(self, namespace: Namespace) -> dict[str, str]:
        scopes = self.settings.options.get("scopes") or {}
        scope = scopes.get(namespace.slug) if isinstance(scopes, dict) else None
        if scope is None:
            return {"agent_id": namespace.slug}
        if not isinstance(scope, dict) or not scope or not all(
                k in SCOPE_KEYS and isinstance(v, str) and v for k, v in scope.items()):
            raise c.Unavailable(f"the Mem0 scope configured for {namespace.slug} must map "
                                f"{', '.join(SCOPE_KEYS)} to ids")
        return dict(scope)

    # -- the deadline on Mem0's side --------------------------------------------------------
    #
    # A Mem0 call cannot be interrupted, and its slow step is its SQLite history database
    # (read for revisions, written after the vector store on every change): another writer's
    # lock makes it wait. Within an operation, every call first sets that connection's busy
    # timeout to the time left, so a lock is waited on only until the deadline and then
    # answered Timeout; before a write, the history's write lock is taken and let go within
    # the time left, so a write that would wait on it is refused before Mem0 touches anything.

    @contextlib.contextmanager
    def _session(self, end: float) -> Iterator[None]:
        if getattr(self._local, "end", None) is not None:
            yield  # nested: the outer operation's deadline
            return
        self._local.end = end
        try:
            yield
        finally:
            self._local.end = None
            self._history_busy(SQLITE_BUSY_MILLIS)

    def _history_db(self) -> tuple[sqlite3.Connection, Any] | None:
        db = getattr(self.memory, "db", None)
        connection = getattr(db, "connection", None)
        lock = getattr(db, "_lock", None)
        if not isinstance(connection, sqlite3.Connection) or lock is None:
            return None  # another history backend: nothing to bound here
        return connection, lock

    def _history_busy(self, millis: int) -> None:
        found = self._history_db() if self._memory is not None else None
        if found is None:
            return
        connection, lock = found
        with lock, contextlib.suppress(sqlite3.Error):
            connection.execute(f"PRAGMA busy_timeout = {max(1, int(millis))}")

    def _bound_history(self) -> None:
        end = getattr(self._local, "end", None)
        if end is not None:
            self._history_busy(int(left(end) * 1000))

    def _claim_history(self, end: float) -> None:
        """Wait (at most the time left) until the history database takes writes, then let it
        go: Mem0 writes its vector store first and its history second, so a write must not
        start while the history is locked by someone else."""
        found = self._history_db()
        if found is None:
            return
        connection, lock = found
        with lock:
            connection.execute(f"PRAGMA busy_timeout = {max(1, int(left(end) * 1000))}")
            try:
                connection.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise self._sqlite_error(exc) from None
            connection.execute("ROLLBACK")

    @staticmethod
    def _sqlite_error(exc: sqlite3.OperationalError) -> c.ProviderError:
        if "locked" in str(exc) or "busy" in str(exc):
            return c.Timeout("Mem0's history database stayed locked until the deadline")
        return c.Unavailable(f"Mem0's history database failed: {type(exc).__name__}")

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            self._bound_history()
            return fn(*args, **kwargs)
        except c.ProviderError:
            raise
        except PermissionError:
            raise c.Unavailable("permission denied on Mem0's storage") from None
        except sqlite3.OperationalError as exc:
            raise self._sqlite_error(exc) from None
        except Exception as exc:  # noqa: BLE001 - Mem0's backends raise their own types
            raise c.Unavailable(f"Mem0 failed: {type(exc).__name__}") from None

    # -- memories -> items ----------------------------------------------------------------------

    def _stored(self, namespace: Namespace, memory: dict[str, Any],
                revision: int | None = None) -> StoredItem:
        metadata = memory.get("metadata") or {}
        tier, key = metadata.get("tier"), metadata.get("key")
        if tier not in c.TIERS or not isinstance(key, str):
            tier, key = "facts", str(memory["id"])
        updated = _time(memory.get("updated_at") or memory.get("created_at"))
        text = memory.get("memory")
        return StoredItem(
            ref=str(memory["id"]), partition=namespace.partition_key, tier=tier, key=key,
            content=text if isinstance(text, str) else "", subject=memory.get("user_id"),
            updated_at=updated, order=_micros(updated),
            created_at=_time(memory.get("created_at")), revision=revision,
        )

    def _revision_of(self, memory_id: str) -> int:
        events = self._call(self.memory.history, memory_id)
        return max(1, sum(1 for e in events if e.get("event") in ("ADD", "UPDATE")))

    def _belongs(self, namespace: Namespace, memory: dict[str, Any]) -> bool:
        return all(memory.get(k) == v for k, v in self._scope_of(namespace).items())

    def _items(self, namespace: Namespace, end: float) -> Iterator[StoredItem]:
        found = self._call(self.memory.get_all, filters=self._scope_of(namespace),
                           top_k=LIST_CAP)
        for memory in found.get("results", []):
            left(end)
            yield self._stored(namespace, memory, self._revision_of(str(memory["id"])))

    def _read(self, namespace: Namespace, ref: str, end: float) -> StoredItem | None:
        try:
            memory = self.memory.get(ref)
        except Exception:  # noqa: BLE001 - a malformed id is "not found" to Mem0's backends
            return None
        if not memory or not self._belongs(namespace, memory):
            return None
        return self._stored(namespace, memory, self._revision_of(ref))

    def _ref(self, namespace: Namespace, tier: str, key: str) -> str | None:
        return None

    def _find(self, namespace: Namespace, tier: str, key: str, end: float) -> StoredItem | None:
        found = self._call(self.memory.get_all,
                           filters={**self._scope_of(namespace), "tier": tier, "key": key},
                           top_k=1)
        results = found.get("results", [])
        if not results and tier == "facts" and key:
            return self._read(namespace, key, end)  # an agent's memory, keyed by its id
        if not results:
            return None
        return self._stored(namespace, results[0], self._revision_of(str(results[0]["id"])))

    # -- writes ---------------------------------------------------------------------------------

    def _write(self, namespace: Namespace, tier: str, key: str, content: str,
               subject: str | None, current: StoredItem | None, end: float) -> StoredItem:
        if current is None:
            self._claim_history(end)
            left(end)
            added = self._call(self.memory.add, content, user_id=subject, infer=False,
                               metadata={"tier": tier, "key": key},
                               **self._scope_of(namespace))
            results = added.get("results") or []
            if not results:
                raise c.Unavailable("Mem0 did not store the memory")
            ref = str(results[0]["id"])
        else:
            if subject is not None and subject != current.subject:
                raise c.InvalidRequest("Mem0 keeps the data subject as the memory's user_id; "
                                       "memadmin does not move memories between users")
            # Compare before write (Mem0 has no conditional update): it must still hold what
            # memadmin read.
            latest = self._read(namespace, current.ref, end)
            if latest is None or latest.digest != current.digest:
                raise c.Conflict("the memory changed since memadmin read it")
            self._claim_history(end)
            left(end)
            self._call(self.memory.update, current.ref, content)
            ref = current.ref
        written = self._read(namespace, ref, end)
        if written is None:
            raise c.Conflict("the memory disappeared right after memadmin wrote it")
        return written

    def _remove(self, namespace: Namespace, item: StoredItem, end: float) -> bool:
        if self._read(namespace, item.ref, end) is None:
            return False
        self._claim_history(end)
        left(end)
        self._call(self.memory.delete, item.ref)
        self._purge_history(item.ref)
        return True

    def _purge_history(self, memory_id: str) -> None:
        """Mem0's ``delete`` keeps the memory's old text in its history table: erasure must
        not leave it there. Part of a delete Mem0 has already made, so it gets the time left
        but at least ``PURGE_MIN_SECONDS``: stopping between the two would keep the text."""
        db = self.memory.db
        end = getattr(self._local, "end", None)
        if end is not None:
            self._history_busy(int(max(end - time.monotonic(), PURGE_MIN_SECONDS) * 1000))
        try:
            with db._lock:
                db.connection.execute("DELETE FROM history WHERE memory_id = ?", (memory_id,))
                db.connection.commit()
        except Exception as exc:  # noqa: BLE001 - sqlite3 or another history backend
            raise c.Unavailable(f"Mem0's history could not be purged: {type(exc).__name__}") \
                from None

    def _history(self, namespace: Namespace, item: StoredItem, revision: int,
                 end: float) -> list[c.Revision]:
        events = self._call(self.memory.history, item.ref)
        revisions: list[c.Revision] = []
        for event in events:
            if event.get("event") not in ("ADD", "UPDATE"):
                continue
            text = event.get("new_memory") or ""
            revisions.append(c.Revision(
                revision=len(revisions) + 1, content=text, bytes=len(text.encode("utf-8")),
                actor=str(event.get("actor_id") or "mem0"),
                created_at=_time(event.get("updated_at") or event.get("created_at"))))
        return revisions or super()._history(namespace, item, revision, end)

    # -- health ---------------------------------------------------------------------------------

    def _probe(self, end: float) -> None:
        memory = self.memory
        self._call(memory.vector_store.list, top_k=1)
        self._call(memory.db.connection.execute, "SELECT 1 FROM history LIMIT 1")
