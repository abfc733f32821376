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
import threading
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

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except c.ProviderError:
            raise
        except PermissionError:
            raise c.Unavailable("permission denied on Mem0's storage") from None
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
        self._call(self.memory.delete, item.ref)
        self._purge_history(item.ref)
        return True

    def _purge_history(self, memory_id: str) -> None:
        """Mem0's ``delete`` keeps the memory's old text in its history table: erasure must
        not leave it there."""
        db = self.memory.db
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
