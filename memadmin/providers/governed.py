"""What the stores memadmin governs but does not own have in common (``markdown``,
``langgraph``, ``mem0``).

Agents write these stores directly, with their own libraries. memadmin reads and writes them
through the store's own API and keeps only its governance beside them, in its own database:
freezes and legal holds (``Freeze`` rows), erased subjects (``Tombstone``), the revision it has
seen of each item and the item's quarantine state (``GovernedItem``, never content), and review
entries. So:

- a freeze refuses memadmin's own writes (editor, delete, retain, imports); the store does not
  enforce it against its agents (``capabilities()`` says ``direct_writes``, the pages say so);
- quarantine is review and purge: agents reading the store directly still see the item;
- a revision is what memadmin has observed: 1 when first seen, one more on every write of
  memadmin's and whenever the content differs from what it last saw. Edits compare before they
  write (the store's content must still be what the editor saw) and answer ``Conflict`` if not.

A subclass implements the store side: ``_probe``, ``_items``, ``_read``, ``_write``,
``_remove`` and ``_ref``. One deadline bounds the whole call (``_bounded``): each of memadmin's
own SQL statements (namespace lookup, freezes, tombstones, item rows, review entries) gets only
the time left as its ``statement_timeout`` and ``lock_timeout``, the store's calls are bounded
by the subclass from the same end (its own timeouts, a stat in a thread), the time is checked
right before the store is written, and governance work that finished late is rolled back as
``Timeout``. A store write that cannot be interrupted and ends after the deadline is answered
``Timeout`` too (never success); memadmin's rows for it were rolled back and are derived again
the next time the item is seen (a changed content is one more revision, scanned again).
"""

from __future__ import annotations

import abc
import base64
import binascii
import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import math
import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from memadmin.gdpr.models import Tombstone
from memadmin.lib.bounded import OutOfTime, is_timeout, statements_within
from memadmin.lib.keys import subject_hashes_all_keys
from memadmin.memory.models import Freeze, freeze_container_where
from memadmin.providers import contract as c
from memadmin.providers.models import GovernedItem
from memadmin.quarantine.models import QuarantineEntry
from memadmin.workspaces.models import Namespace

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_STOPWORDS = frozenset({"or", "and", "not"})
RECALL_TERMS_MAX = 16  # as the built-in store: a question's first 16 meaningful terms


@dataclasses.dataclass(frozen=True)
class StoredItem:
    """One item as the store holds it, translated to memadmin's vocabulary."""

    ref: str  # the item id memadmin shows and passes back (never an absolute path)
    partition: str
    tier: str
    key: str
    content: str
    subject: str | None
    updated_at: dt.datetime
    order: int  # newest first by this, then by ref (a keyset: nanoseconds or microseconds)
    created_at: dt.datetime | None = None
    expires_at: dt.datetime | None = None
    #: Why memadmin cannot show or rewrite it (not UTF-8, too large); None when it can.
    problem: str | None = None
    problem_error: type[c.ProviderError] = c.InvalidRequest
    size: int | None = None  # bytes on the store when the content could not be read
    #: The store's own revision number when it keeps one (Mem0's history); else memadmin's.
    revision: int | None = None

    @property
    def bytes(self) -> int:
        return self.size if self.size is not None else len(self.content.encode("utf-8"))

    @property
    def digest(self) -> str:
        return content_hash(self.content if self.problem is None else f"{self.problem}")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


_LABEL = re.compile(
    r"(?P<doc>AGENT|CREW|PERSONA|pins|lessons)\.md"
    r"|daily/(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})\.md"
    r"|(?P<tier>peers|facts)/(?P<slug>[A-Za-z0-9_-]{1,128})\.md"
)


def parse_label(label: str) -> tuple[str, str] | None:
    """(tier, key) of a tier-relative label, or None when it is not one."""
    match = _LABEL.fullmatch(label)
    if match is None:
        return None
    if match["doc"]:
        return match["doc"], ""
    if match["date"]:
        try:
            return "daily", dt.date.fromisoformat(match["date"]).isoformat()
        except ValueError:
            return None
    return match["tier"], match["slug"]



# -- input rules (the same as the built-in store's) ---------------------------------------------


def sanitize_query(text: str | None) -> str:
    if not text:
        return ""
    if not isinstance(text, str):
        raise c.InvalidRequest("search text must be a string")
    text = text.encode("utf-8", errors="replace").decode("utf-8")
    return c.utf8_cut(_CONTROL.sub(" ", text), c.MAX_QUERY_BYTES).strip()


def query_terms(query: str) -> list[str]:
    return [t.lower() for t in re.findall(r"\w+", query) if t.lower() not in _STOPWORDS]


#: Words a question carries that say nothing about what is asked (PostgreSQL's English list,
#: which the built-in store's full-text search drops, cut to what questions use).
QUESTION_STOPWORDS = frozenset({
    "a", "about", "above", "after", "again", "all", "am", "an", "any", "are", "as", "at", "be",
    "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did",
    "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had",
    "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "no", "nor", "of",
    "off", "on", "once", "only", "other", "our", "ours", "out", "over", "own", "same", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your", "yours"
})


def question_terms(query: str) -> list[str]:
    """The meaningful terms of a question, once each, first ones first."""
    seen: dict[str, None] = {}
    for word in re.findall(r"\w+", query.lower()):
        if word not in QUESTION_STOPWORDS and word not in _STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)[:RECALL_TERMS_MAX]


def ranked(contents: Sequence[str], terms: Sequence[str]) -> list[float]:
    """A score in 0..1 per content: the share of the question's weight it matches, each term
    weighted by how rare it is among ``contents`` (a term in every item weighs least); 0 for an
    item matching no term. A term matches as a word prefix, so "nest" finds "nests"."""
    if not terms:
        return [1.0] * len(contents)
    lowered = [text.lower() for text in contents]
    patterns = [re.compile(r"\b" + re.escape(term)) for term in terms]
    found = [[bool(p.search(text)) for p in patterns] for text in lowered]
    total = len(contents)
    weights = []
    for index in range(len(terms)):
        df = sum(1 for row in found if row[index])
        weights.append(math.log(1 + total / df) if df else 0.0)
    whole = sum(weights) or 1.0
    return [sum(w for w, hit in zip(weights, row, strict=True) if hit) / whole for row in found]


def matches(content: str, terms: Sequence[str]) -> bool:
    lowered = content.lower()
    return bool(terms) and all(term in lowered for term in terms)


def snippet_for(content: str, terms: Sequence[str]) -> str:
    limit = c.SNIPPET_MAX_CHARS
    if len(content) <= limit:
        return content
    lowered = content.lower()
    positions = [p for p in (lowered.find(t) for t in terms) if p >= 0]
    start = max(0, min(positions) - limit // 4) if positions else 0
    return content[start:start + limit]












def check_filters(filters: c.ItemFilters) -> c.ItemFilters:
    if not isinstance(filters, c.ItemFilters):
        raise c.InvalidRequest("filters must be ItemFilters")
    if filters.tier is not None and filters.tier not in c.TIERS:
        raise c.InvalidRequest(f"unknown tier {filters.tier!r}")
    if filters.key is not None:
        c.check_id(filters.key, field="key")
    if filters.subject is not None:
        c.check_subject(filters.subject)
    if filters.quarantine is not None and filters.quarantine not in c.QUARANTINE_STATES:
        raise c.InvalidRequest(f"unknown quarantine state {filters.quarantine!r}")
    if filters.pii is not None:
        raise c.Unsupported("this store keeps no personal-data labels (only the built-in "
                            "store detects them)")
    c.check_time_filters(filters)
    c.check_list_filters(filters)
    return filters


def _no_expiry(expires_at: Any) -> None:
    """These stores keep no per-item expiry memadmin could set (LangGraph's TTL is the store's
    configuration, read and shown but not written: docs/provider-protocol.md)."""
    if expires_at is not c.KEEP:
        raise c.Unsupported("this store keeps no per-item expiry that memadmin can set")


def encode_cursor(item: StoredItem) -> str:
    raw = json.dumps({"t": item.order, "i": item.ref}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _order_value(item: StoredItem, order: str) -> tuple[Any, ...]:
    """The ascending sort value of ``item`` in ``order`` ("key": A to Z, "size": largest
    first), ties by ref."""
    if order == "key":
        return (item.key, item.ref)
    return (-item.bytes, item.ref)


def encode_order_cursor(item: StoredItem, order: str) -> str:
    raw = json.dumps({"o": order, "v": list(_order_value(item, order))}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_order_cursor(cursor: str, order: str) -> tuple[Any, ...]:
    c.check_id(cursor, field="cursor")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        value = data["v"]
        if data["o"] != order or not isinstance(value, list) or len(value) != 2 \
                or not isinstance(value[1], str) \
                or not isinstance(value[0], str if order == "key" else int):
            raise ValueError("cursor fields")
        return tuple(value)
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error,
            UnicodeEncodeError):
        raise c.InvalidRequest("malformed cursor") from None


def decode_cursor(cursor: str) -> tuple[int, str]:
    c.check_id(cursor, field="cursor")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        order, ref = data["t"], data["i"]
        if not isinstance(order, int) or isinstance(order, bool) or not isinstance(ref, str):
            raise ValueError("cursor fields")
        return order, ref
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error,
            UnicodeEncodeError):
        raise c.InvalidRequest("malformed cursor") from None


def check_limit(limit: int) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not \
            1 <= limit <= c.LIST_MAX_LIMIT:
        raise c.InvalidRequest(f"limit must be 1-{c.LIST_MAX_LIMIT}")


def end_of(deadline: float | c.Deadline) -> float:
    """The monotonic time a call must be done by; Timeout when none is left."""
    if isinstance(deadline, c.Deadline):
        left(deadline.end)
        return deadline.end
    if not isinstance(deadline, int | float) or deadline <= 0:
        raise c.Timeout("the deadline has already passed")
    return time.monotonic() + deadline


def left(end: float) -> float:
    """Seconds left before ``end``; Timeout when none are (checked before every write)."""
    remaining = end - time.monotonic()
    if remaining <= 0:
        raise c.Timeout("the deadline passed before the store answered")
    return remaining


def bounded_call(fn: Any, seconds: float) -> Any:
    """``fn()`` in a daemon thread, given up after ``seconds``: for calls the store cannot bound
    itself (a stat on a hung file system). Its exceptions are raised here."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="governed-probe")
    worker.start()
    worker.join(max(0.0, seconds))
    if worker.is_alive():
        raise c.Timeout("the store did not answer within the deadline")
    if "error" in box:
        raise box["error"]
    return box.get("value")


# -- the base class -----------------------------------------------------------------------------


class GovernedProvider(c.Provider):
    """A store memadmin governs but agents write directly. See the module docstring."""

    #: Operations the kind supports (a subclass narrows or widens this).
    operations: frozenset[str] = c.OPERATIONS
    #: Whether ``get_item`` can list earlier revisions (``_history``).
    keeps_history = False

    @property
    def _provider_pk(self) -> uuid.UUID:
        """The provider's primary key, typed for ORM lookups (the contract carries a str)."""
        return uuid.UUID(self.settings.id)

    # -- the store side (subclasses) ----------------------------------------------------------

    @abc.abstractmethod
    def _probe(self, end: float) -> None:
        """A bounded check that the store answers (a stat, a bounded query). Raises on trouble;
        the message of a ``c.ProviderError`` is shown on the panel."""

    @abc.abstractmethod
    def _items(self, namespace: Namespace, end: float) -> Iterable[StoredItem]:
        """Every item of one namespace."""

    @abc.abstractmethod
    def _read(self, namespace: Namespace, ref: str, end: float) -> StoredItem | None:
        """One item by its ref, or None (also for a ref that is not this namespace's)."""

    @abc.abstractmethod
    def _ref(self, namespace: Namespace, tier: str, key: str) -> str | None:
        """The ref an item (tier, key) has or would have in the namespace; None when the
        store gives ids itself (found by ``_find``)."""

    @abc.abstractmethod
    def _write(self, namespace: Namespace, tier: str, key: str, content: str,
               subject: str | None, current: StoredItem | None, end: float) -> StoredItem:
        """Create (``current`` None) or rewrite an item, atomically, only if the store still
        holds ``current`` (else ``Conflict``, nothing written)."""

    @abc.abstractmethod
    def _remove(self, namespace: Namespace, item: StoredItem, end: float) -> bool:
        """Delete an item; False when it was already gone."""

    def _find(self, namespace: Namespace, tier: str, key: str, end: float) -> StoredItem | None:
        ref = self._ref(namespace, tier, key)
        if ref is not None:
            return self._read(namespace, ref, end)
        return next((i for i in self._items(namespace, end)
                     if i.tier == tier and i.key == key), None)

    def _history(self, namespace: Namespace, item: StoredItem, revision: int,
                 end: float) -> list[c.Revision]:
        return [c.Revision(revision=revision, content=item.content, bytes=item.bytes,
                           actor="store", created_at=item.updated_at)]

    def _session(self, end: float) -> contextlib.AbstractContextManager[Any]:
        """Around every operation: a store that needs a connection opens it here, once."""
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def _bounded(self, end: float) -> Iterator[None]:
        """Around every operation: the store's session, and a transaction of memadmin's
        database in which each statement gets only the time left before ``end`` (lock waits
        included) and which is rolled back, as ``Timeout``, when it finished too late."""
        try:
            with self._session(end), statements_within(lambda: end - time.monotonic()):
                yield
        except OutOfTime:
            raise c.Timeout(f"the {self.kind} provider did not finish within the deadline") \
                from None
        except DatabaseError as exc:
            if is_timeout(exc):
                raise c.Timeout("memadmin's database did not answer within the deadline") \
                    from None
            raise

    def _max_item_bytes(self, namespace: Namespace) -> int:
        return int(namespace.resource.item_max_bytes)

    # -- health and capabilities ----------------------------------------------------------------

    def health(self, *, deadline: float) -> c.HealthStatus:
        started = time.monotonic()
        try:
            end = end_of(deadline)
            bounded_call(lambda: self._probe(end), end - time.monotonic())
            ok, message = True, ""
        except c.Timeout:
            ok, message = False, "health check timeout"
        except c.ProviderError as exc:
            ok, message = False, exc.message[:200]
        except Exception as exc:  # noqa: BLE001 - health never raises; the message is the triage
            ok, message = False, f"store error: {type(exc).__name__}"
        latency = (time.monotonic() - started) * 1000
        if ok and latency > deadline * 1000:
            ok, message = False, "health check timeout"
        return c.HealthStatus(ok=ok, message=message, checked_at=timezone.now(),
                              latency_ms=round(latency, 2))

    def capabilities(self, *, deadline: float) -> frozenset[str]:
        features = {c.DIRECT_WRITES}
        if not self.keeps_history:
            features.add(c.CURRENT_REVISION_ONLY)
        return self.operations | features

    def _require(self, operation: str) -> None:
        if operation not in self.operations:
            raise c.Unsupported(f"a {self.kind} store does not support {operation}")

    # -- memadmin's side: namespaces, freezes, tombstones, revisions ----------------------------

    def _namespaces(self, scope: c.Scope) -> dict[str, Namespace]:
        found = {
            ns.partition_key: ns
            for ns in Namespace.objects.filter(
                partition_key__in=scope.partitions, resource__provider_id=self._provider_pk
            ).select_related("resource")
        }
        if len(found) != len(set(scope.partitions)):
            raise c.NotFound("unknown partition for this provider")
        self._known.update(found)
        return found

    @property
    def _known(self) -> dict[str, Namespace]:
        """Namespaces this instance has resolved, by partition (for screening on sight)."""
        known = self.__dict__.get("_known_namespaces")
        if known is None:
            known = self.__dict__["_known_namespaces"] = {}
        return known

    def _namespace_freezes(self, namespaces: Sequence[Namespace]) -> dict[Any, Freeze]:
        ns_ids = [ns.id for ns in namespaces]
        res_ids = {ns.resource_id for ns in namespaces}
        rows = Freeze.objects.filter(
            Q(level="namespace", namespace_id__in=ns_ids)
            | Q(level="resource", resource_id__in=res_ids), lifted_at__isnull=True,
        ).order_by("created_at")
        held: dict[Any, Freeze] = {}
        for freeze in rows:
            for ns in namespaces:
                if ns.id == freeze.namespace_id or (
                        freeze.level == "resource" and ns.resource_id == freeze.resource_id):
                    held.setdefault(ns.id, freeze)
        return held

    def _item_freezes(self, refs: Iterable[str]) -> dict[str, Freeze]:
        held: dict[str, Freeze] = {}
        for freeze in Freeze.objects.filter(level="item", provider_id=self._provider_pk,
                                            item_ref__in=list(refs),
                                            lifted_at__isnull=True).order_by("created_at"):
            held.setdefault(str(freeze.item_ref), freeze)
        return held

    @staticmethod
    def _frozen_error(freeze: Freeze) -> c.Frozen:
        what = "legal hold" if freeze.kind == "legal_hold" else "freeze"
        return c.Frozen(
            f"the target is under a {what} (memadmin refuses its own writes; agents writing "
            "the store directly are not stopped by it)",
            {"kind": freeze.kind, "level": freeze.level, "by": freeze.created_by_label,
             "at": freeze.created_at.isoformat(), "reason": freeze.reason},
        )

    def _check_tombstone(self, namespace: Namespace, subject: str | None) -> None:
        if subject is None:
            return
        workspace_id = namespace.resource.workspace_id
        query = Q()
        for kid, digest in subject_hashes_all_keys(workspace_id, subject):
            query |= Q(key_id=kid, subject_hash=digest)
        if Tombstone.objects.filter(query, workspace_id=workspace_id,
                                    lifted_at__isnull=True).exists():
            raise c.ErasedSubject("this data subject was erased; writes about them are refused")

    def _observe(self, items: Sequence[StoredItem]) -> dict[str, GovernedItem]:
        """memadmin's row of each item, created at revision 1 when first seen and moved one
        revision on when the store's content differs from what memadmin last saw."""
        refs = [i.ref for i in items]
        rows = {row.item_ref: row for row in GovernedItem.objects.filter(
            provider_id=self._provider_pk, item_ref__in=refs)}
        now = timezone.now()
        missing = [GovernedItem(provider_id=self.settings.id, item_ref=i.ref, revision=1,
                                content_hash=i.digest, first_seen_at=i.created_at or now)
                   for i in items if i.ref not in rows]
        if missing:
            GovernedItem.objects.bulk_create(missing, ignore_conflicts=True)
            rows.update({row.item_ref: row for row in GovernedItem.objects.filter(
                provider_id=self._provider_pk, item_ref__in=[m.item_ref for m in missing])})
        from memadmin.quarantine import screening
        from memadmin.quarantine.scanner import RULESET_VERSION

        clean: list[int] = []
        for item in items:
            row = rows[item.ref]
            if row.content_hash != item.digest:
                # Changed by someone else (an agent): one more revision, seen now.
                GovernedItem.objects.filter(pk=row.pk, content_hash=row.content_hash).update(
                    revision=row.revision + 1, content_hash=item.digest, scanned_with="")
                row.refresh_from_db()
            namespace = self._known.get(item.partition)
            if row.scanned_with == RULESET_VERSION or item.problem is not None or \
                    namespace is None:
                continue
            # Written by an agent (or scanned under older rules): the scanner sees it now.
            verdict = screening.assess(item.content, namespace.resource.workspace_id)
            if verdict is None and row.quarantine_state != "pending":
                clean.append(row.pk)  # the common case: one UPDATE for all of them
                row.scanned_with = RULESET_VERSION
            else:
                self._screen(namespace, item, row, verdict)
        if clean:
            GovernedItem.objects.filter(pk__in=clean).update(scanned_with=RULESET_VERSION)
        return rows

    def _locked_row(self, ref: str, item: StoredItem | None) -> GovernedItem | None:
        """memadmin's row, locked: serialises memadmin's own writers of one item."""
        if item is not None:
            self._observe([item])
        return GovernedItem.objects.select_for_update().filter(
            provider_id=self._provider_pk, item_ref=ref).first()

    def _to_item(self, stored: StoredItem, row: GovernedItem, frozen: bool) -> c.Item:
        return c.Item(
            id=stored.ref, partition=stored.partition, tier=stored.tier, key=stored.key,
            source=c.source_label(stored.tier, stored.key), content=stored.content,
            bytes=stored.bytes, revision=stored.revision or row.revision,
            data_subject_id=stored.subject,
            quarantine=row.quarantine_state, frozen=frozen,
            created_at=stored.created_at or row.first_seen_at, updated_at=stored.updated_at,
            expires_at=stored.expires_at,
        )

    def _forget_rows(self, refs: Sequence[str]) -> None:
        """memadmin's traces of deleted items: its rows and review entries (the refs of a
        store keyed by user may carry the subject id)."""
        if not refs:
            return
        GovernedItem.objects.filter(provider_id=self._provider_pk, item_ref__in=refs).delete()
        QuarantineEntry.objects.filter(provider_id=self._provider_pk, item_ref__in=refs).delete()

    # -- quarantine entries ---------------------------------------------------------------------

    @staticmethod
    def _assess(namespace: Namespace, content: str) -> Any:
        """The scanner's verdict on content about to be written: reached before the store is
        written, so what takes time (the scanner, its allow-list query) is inside the deadline
        check rather than after a write that cannot be taken back."""
        from memadmin.quarantine import screening

        return screening.assess(content, namespace.resource.workspace_id)

    def _screen(self, namespace: Namespace, stored: StoredItem, row: GovernedItem,
                verdict: Any = ...) -> tuple[str, ...] | None:
        """Scan an item's content (just written, or first seen); a flagged version becomes
        ``pending`` with a review entry, a clean one after ``pending`` becomes ``clear``.
        Returns the matched rule ids when this version is held for review, else None."""
        from memadmin.quarantine import screening

        if verdict is ...:
            verdict = screening.assess(stored.content, namespace.resource.workspace_id)
        previous = row.quarantine_state
        state = screening.state_after(verdict, previous)
        open_rows = QuarantineEntry.objects.filter(
            provider_id=self._provider_pk, item_ref=stored.ref,
            state__in=QuarantineEntry.OPEN_STATES)
        if previous == "pending":
            open_rows.update(state="superseded", reviewed_at=timezone.now())
        if verdict is not None:
            QuarantineEntry.objects.create(
                workspace_id=namespace.resource.workspace_id, provider_id=self.settings.id,
                namespace_id=namespace.id, item_ref=stored.ref,
                label=c.source_label(stored.tier, stored.key)[:300],
                rule_ids=list(verdict.rules), spans=[list(s) for s in verdict.spans],
                ruleset_version=verdict.version, content_hash=stored.digest)
        from memadmin.quarantine.scanner import RULESET_VERSION

        GovernedItem.objects.filter(pk=row.pk).update(quarantine_state=state,
                                                      scanned_with=RULESET_VERSION)
        row.quarantine_state, row.scanned_with = state, RULESET_VERSION
        if state == "pending" and verdict is not None:
            return tuple(verdict.rules)
        return None

    # -- writes ---------------------------------------------------------------------------------

    def retain(
        self, tier: str, key: str, content: str, mode: str, *, data_subject_id: str | None = None,
        operation_id: str, actor: str = "system", scope: c.Scope, deadline: float,
        expires_at: Any = c.KEEP,
    ) -> c.RetainResult:
        _no_expiry(expires_at)
        self._require("retain")
        c.check_mode(mode)
        c.check_operation_id(operation_id)
        c.check_text(content, field="content")
        subject = c.check_subject(data_subject_id)
        end = end_of(deadline)
        partition = scope.single()
        with self._bounded(end):
            namespace = self._namespaces(scope)[partition]
            key = c.normalise_key(tier, key)
            self._check_tombstone(namespace, subject)
            freeze = self._namespace_freezes([namespace]).get(namespace.id)
            if freeze is not None:
                raise self._frozen_error(freeze)
            current = self._find(namespace, tier, key, end)
            if current is not None:
                return self._change(namespace, current, content, mode, subject, None, end)
            new_content = content
            self._check_size(namespace, new_content)
            verdict = self._assess(namespace, new_content)
            left(end)
            stored = self._write(namespace, tier, key, new_content, subject, None, end)
            try:
                with transaction.atomic():
                    row = GovernedItem.objects.create(
                        provider_id=self.settings.id, item_ref=stored.ref, revision=1,
                        content_hash=stored.digest,
                        first_seen_at=stored.created_at or timezone.now())
            except IntegrityError:
                # A row left by an item of the same ref deleted behind memadmin's back.
                row = GovernedItem.objects.select_for_update().get(
                    provider_id=self._provider_pk, item_ref=stored.ref)
                row.revision, row.content_hash = row.revision + 1, stored.digest
                row.save(update_fields=["revision", "content_hash"])
            held = self._screen(namespace, stored, row,
                                verdict if stored.content == new_content else ...)
            return c.RetainResult(id=stored.ref, bytes=stored.bytes,
                                  revision=stored.revision or row.revision,
                                  quarantined=held is not None, rules=held or ())

    def _check_size(self, namespace: Namespace, content: str) -> None:
        size = len(content.encode("utf-8"))
        limit = self._max_item_bytes(namespace)
        if size > limit:
            raise c.TooLarge(f"the item would be {size} bytes; this resource allows {limit}",
                             {"bytes": size, "limit": limit})

    def _change(self, namespace: Namespace, current: StoredItem, content: str, mode: str,
                subject: str | None, expected_revision: int | None, end: float
                ) -> c.RetainResult:
        row = self._locked_row(current.ref, current)
        assert row is not None  # _observe created it
        revision = current.revision or row.revision
        if expected_revision is not None and revision != expected_revision:
            raise c.Conflict(
                f"the item is at revision {revision}, not {expected_revision} (the store "
                "changed since it was read)", {"revision": revision})
        freeze = self._item_freezes([current.ref]).get(current.ref)
        if freeze is not None:
            raise self._frozen_error(freeze)
        if current.problem is not None:
            raise current.problem_error(f"{c.source_label(current.tier, current.key)}: "
                                        f"{current.problem}; memadmin will not rewrite it")
        new_content = c.joined(current.content, content, mode)
        c.check_text(new_content, field="content")
        self._check_size(namespace, new_content)
        verdict = self._assess(namespace, new_content)
        left(end)
        stored = self._write(namespace, current.tier, current.key, new_content,
                             subject if subject is not None else current.subject, current, end)
        row.revision += 1
        row.content_hash = stored.digest
        row.save(update_fields=["revision", "content_hash"])
        held = self._screen(namespace, stored, row,
                            verdict if stored.content == new_content else ...)
        return c.RetainResult(id=stored.ref, bytes=stored.bytes,
                              revision=stored.revision or row.revision,
                              quarantined=held is not None, rules=held or ())

    def _item_in_scope(self, item_id: str, scope: c.Scope,
                       end: float) -> tuple[Namespace, StoredItem]:
        if not isinstance(item_id, str) or not item_id:
            raise c.NotFound("no such item in this scope")
        c.check_id(item_id, field="item id")
        for namespace in self._namespaces(scope).values():
            stored = self._read(namespace, item_id, end)
            if stored is not None:
                return namespace, stored
        raise c.NotFound("no such item in this scope")

    def update_item(
        self, item_id: str, content: str, mode: str, *, expected_revision: int,
        operation_id: str, actor: str = "system", scope: c.Scope, deadline: float,
        expires_at: Any = c.KEEP,
    ) -> c.RetainResult:
        _no_expiry(expires_at)
        self._require("update")
        c.check_mode(mode)
        c.check_operation_id(operation_id)
        c.check_text(content, field="content")
        if not isinstance(expected_revision, int) or isinstance(expected_revision, bool):
            raise c.InvalidRequest("expected_revision must be a whole number")
        end = end_of(deadline)
        with self._bounded(end):
            namespace, current = self._item_in_scope(item_id, scope, end)
            freeze = self._namespace_freezes([namespace]).get(namespace.id)
            if freeze is not None:
                raise self._frozen_error(freeze)
            return self._change(namespace, current, content, mode, None, expected_revision, end)

    def _held(self, namespace: Namespace, items: Sequence[StoredItem],
              override_hold: bool) -> tuple[list[StoredItem], int]:
        if override_hold:
            return list(items), 0
        if self._namespace_freezes([namespace]):
            return [], len(items)
        frozen = self._item_freezes(i.ref for i in items)
        return [i for i in items if i.ref not in frozen], sum(1 for i in items if i.ref in frozen)

    def _remove_all(self, namespace: Namespace, items: Sequence[StoredItem], end: float) -> int:
        removed: list[str] = []
        try:
            for item in items:
                left(end)
                if self._remove(namespace, item, end):
                    removed.append(item.ref)
        finally:
            self._forget_rows(removed)
        return len(removed)

    def delete_items(
        self, *, ids: Sequence[str] | None = None, filters: c.ItemFilters | None = None,
        exclude_ids: Sequence[str] = (), limit: int | None = None, operation_id: str,
        actor: str = "system", scope: c.Scope, deadline: float,
    ) -> c.DeleteResult:
        self._require("delete")
        if (ids is None) == (filters is None):
            raise c.InvalidRequest("delete needs exactly one of ids or filters")
        c.check_operation_id(operation_id)
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise c.InvalidRequest("limit must be a positive whole number")
        if filters is not None:
            check_filters(filters)
        end = end_of(deadline)
        excluded = set(exclude_ids)
        removed = held = 0
        with self._bounded(end):
            namespaces = self._namespaces(scope)
            for namespace in namespaces.values():
                if ids is not None:
                    wanted = {i for i in ids if isinstance(i, str) and i}
                    items = [s for s in (self._read(namespace, i, end) for i in sorted(wanted))
                             if s is not None]
                else:
                    items = self._matching(namespace, filters or c.ItemFilters(), end)
                items = [i for i in items if i.ref not in excluded]
                free, namespace_held = self._held(namespace, items, False)
                held += namespace_held
                if limit is not None:
                    free = free[: max(0, limit - removed)]
                removed += self._remove_all(namespace, free, end)
        return c.DeleteResult(removed=removed, held=held)

    def forget(
        self, *, item_id: str | None = None, data_subject_id: str | None = None,
        override_hold: bool = False, operation_id: str, actor: str = "system",
        scope: c.Scope, deadline: float,
    ) -> c.ForgetResult:
        self._require("forget")
        if (item_id is None) == (data_subject_id is None):
            raise c.InvalidRequest("forget needs exactly one of id or data subject id")
        c.check_operation_id(operation_id)
        subject = c.check_subject(data_subject_id) if data_subject_id is not None else None
        end = end_of(deadline)
        removed = held = 0
        with self._bounded(end):
            for namespace in self._namespaces(scope).values():
                if item_id is not None:
                    one = self._read(namespace, item_id, end) if item_id else None
                    items = [one] if one is not None else []
                else:
                    items = self._matching(namespace, c.ItemFilters(subject=subject), end)
                free, namespace_held = self._held(namespace, items, override_hold)
                held += namespace_held
                removed += self._remove_all(namespace, free, end)
        return c.ForgetResult(removed=removed, held=held)

    # -- freezes and quarantine -----------------------------------------------------------------

    def _freeze_where(self, target: c.FreezeTarget, scope: c.Scope, end: float
                      ) -> dict[str, Any]:
        namespaces = self._namespaces(scope)
        try:
            where = freeze_container_where(target.level, target.partition, target.resource,
                                           namespaces)
        except LookupError as exc:
            raise c.NotFound(str(exc)) from None
        if where is not None:
            return where
        namespace, stored = self._item_in_scope(target.item_id or "", scope, end)
        return {"level": "item", "provider_id": self.settings.id, "item_ref": stored.ref,
                "workspace_id": namespace.resource.workspace_id}

    def freeze(
        self, target: c.FreezeTarget, *, kind: str, reason: str, actor: str = "system",
        scope: c.Scope, deadline: float,
    ) -> None:
        self._require("freeze")
        if kind not in c.FREEZE_KINDS:
            raise c.InvalidRequest("kind must be freeze or legal_hold")
        c.check_text(reason, field="reason", max_bytes=4000)
        if not reason.strip():
            raise c.InvalidRequest("a reason is required")
        end = end_of(deadline)
        with self._bounded(end):
            where = self._freeze_where(target, scope, end)
            if Freeze.objects.filter(**where, kind=kind, lifted_at__isnull=True).exists():
                return
            try:
                with transaction.atomic():
                    Freeze.objects.create(**where, kind=kind, reason=reason[:1000],
                                          created_by_label=actor[:200])
            except IntegrityError:
                return  # frozen concurrently: the same outcome

    def lift_freeze(
        self, target: c.FreezeTarget, *, kind: str, actor: str = "system", scope: c.Scope,
        deadline: float,
    ) -> None:
        self._require("freeze")
        if kind not in c.FREEZE_KINDS:
            raise c.InvalidRequest("kind must be freeze or legal_hold")
        end = end_of(deadline)
        with self._bounded(end):
            where = self._freeze_where(target, scope, end)
            Freeze.objects.filter(**where, kind=kind, lifted_at__isnull=True).update(
                lifted_at=timezone.now(), lifted_by_label=actor[:200])

    def set_quarantine(self, item_id: str, state: str, *, scope: c.Scope,
                       deadline: float) -> None:
        self._require("quarantine")
        if state not in c.QUARANTINE_STATES:
            raise c.InvalidRequest(f"quarantine state must be one of {c.QUARANTINE_STATES}")
        end = end_of(deadline)
        with self._bounded(end):
            namespace, stored = self._item_in_scope(item_id, scope, end)
            row = self._locked_row(stored.ref, stored)
            assert row is not None
            previous = row.quarantine_state
            if previous == state:
                return
            row.quarantine_state = state
            row.save(update_fields=["quarantine_state"])
            if previous == "pending":
                QuarantineEntry.objects.filter(
                    provider_id=self._provider_pk, item_ref=stored.ref,
                    state__in=QuarantineEntry.OPEN_STATES,
                ).update(state="released", reviewed_at=timezone.now())
            if state == "pending":
                QuarantineEntry.objects.create(
                    workspace_id=namespace.resource.workspace_id, provider_id=self.settings.id,
                    namespace_id=namespace.id, item_ref=stored.ref,
                    label=c.source_label(stored.tier, stored.key)[:300], rule_ids=[], spans=[],
                    content_hash=stored.digest,
                    note="quarantined by hand (agents reading the store directly still see it)")

    # -- reads ----------------------------------------------------------------------------------

    def _matching(self, namespace: Namespace, filters: c.ItemFilters,
                  end: float) -> list[StoredItem]:
        """The store's items of a namespace that match the filters the store side can answer
        (memadmin's own filters, frozen and quarantine, are applied by ``_annotated``)."""
        terms = query_terms(sanitize_query(filters.q)) if filters.q else None
        found = []
        for item in self._items(namespace, end):
            left(end)
            if filters.tier is not None and item.tier != filters.tier:
                continue
            if filters.key is not None and item.key != filters.key:
                continue
            if filters.key_prefix and not item.key.startswith(filters.key_prefix):
                continue
            if filters.subject is not None and item.subject != filters.subject:
                continue
            if filters.updated_since is not None and item.updated_at < filters.updated_since:
                continue
            if filters.updated_before is not None and item.updated_at >= filters.updated_before:
                continue
            # A store's own TTL (LangGraph's expires_at) is the same thing as an item's expiry.
            if filters.expired_before is not None and (
                    item.expires_at is None or item.expires_at >= filters.expired_before):
                continue
            if terms is not None and not matches(item.content, terms):
                continue
            found.append(item)
        return found

    def _annotated(self, namespaces: dict[str, Namespace], filters: c.ItemFilters,
                   end: float) -> list[tuple[StoredItem, GovernedItem, bool]]:
        check_filters(filters)
        stored = [item for ns in namespaces.values() for item in self._matching(ns, filters, end)]
        with transaction.atomic():
            rows = self._observe(stored)
        frozen_ns = self._namespace_freezes(list(namespaces.values()))
        frozen_items = self._item_freezes(i.ref for i in stored)
        partition_frozen = {p for p, ns in namespaces.items() if ns.id in frozen_ns}
        result = []
        for item in stored:
            row = rows[item.ref]
            frozen = item.partition in partition_frozen or item.ref in frozen_items
            if filters.frozen is not None and frozen != filters.frozen:
                continue
            # When the store keeps no creation time, the item's age counts from when memadmin
            # first saw it (what the pages show; never older than it is).
            if filters.created_before is not None and \
                    (item.created_at or row.first_seen_at) >= filters.created_before:
                continue
            if filters.quarantine is not None and row.quarantine_state != filters.quarantine:
                continue
            result.append((item, row, frozen))
        result.sort(key=lambda t: (t[0].order, t[0].ref), reverse=True)
        return result

    def list_items(
        self, filters: c.ItemFilters, *, cursor: str | None = None, limit: int = 50,
        scope: c.Scope, deadline: float,
    ) -> c.ItemPage:
        self._require("list")
        check_limit(limit)
        check_filters(filters)
        order = filters.order or "updated"
        after = (decode_cursor(cursor) if order == "updated" else
                 decode_order_cursor(cursor, order)) if cursor else None
        end = end_of(deadline)
        with self._bounded(end):
            rows = self._annotated(self._namespaces(scope), filters, end)
        if order == "updated":
            if after is not None:
                rows = [r for r in rows if (r[0].order, r[0].ref) < after]
            page = rows[: limit]
            next_cursor = encode_cursor(page[-1][0]) if len(rows) > limit else None
        else:
            # The whole namespace is read anyway (these stores have no index of their own).
            ranked = sorted(rows, key=lambda r: _order_value(r[0], order))
            if after is not None:
                ranked = [r for r in ranked if _order_value(r[0], order) > after]
            page = ranked[: limit]
            next_cursor = (encode_order_cursor(page[-1][0], order)
                           if len(ranked) > limit else None)
        return c.ItemPage(items=[self._to_item(s, row, f) for s, row, f in page],
                          next_cursor=next_cursor)

    def count(self, filters: c.ItemFilters, *, scope: c.Scope, deadline: float) -> int | None:
        self._require("count")
        check_filters(filters)
        end = end_of(deadline)
        with self._bounded(end):
            return len(self._annotated(self._namespaces(scope), filters, end))

    def get_item(self, item_id: str, *, scope: c.Scope, deadline: float) -> c.ItemDetail:
        self._require("get")
        end = end_of(deadline)
        with self._bounded(end):
            namespace, stored = self._item_in_scope(item_id, scope, end)
            if stored.problem is not None:
                raise stored.problem_error(
                    f"{c.source_label(stored.tier, stored.key)}: {stored.problem}")
            with transaction.atomic():
                row = self._observe([stored])[stored.ref]
            frozen = bool(self._namespace_freezes([namespace])) or bool(
                self._item_freezes([stored.ref]))
            return c.ItemDetail(item=self._to_item(stored, row, frozen),
                                revisions=self._history(namespace, stored,
                                                        stored.revision or row.revision, end))

    def recall(
        self, text: str | None, *, limit: int = c.RECALL_MAX_HITS, max_bytes: int | None = None,
        scope: c.Scope, deadline: float,
    ) -> c.RecallResult:
        self._require("recall")
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise c.InvalidRequest("limit must be a positive whole number")
        limit = min(limit, c.RECALL_MAX_HITS)
        if max_bytes is not None and (not isinstance(max_bytes, int) or isinstance(max_bytes, bool)
                                      or not 1 <= max_bytes <= c.RECALL_MAX_BYTES):
            raise c.InvalidRequest(f"maxBytes must be 1-{c.RECALL_MAX_BYTES}")
        query = sanitize_query(text)
        terms = question_terms(query)
        end = end_of(deadline)
        with self._bounded(end):
            namespaces = self._namespaces(scope)
            rows = self._annotated(namespaces, c.ItemFilters(), end)
        cap = min(ns.resource.max_bytes for ns in namespaces.values())
        if max_bytes is not None:
            cap = min(cap, max_bytes)
        # Like the built-in store: items matching any meaningful term of the question, ranked by
        # how many and how rare the matched terms are, newest first on ties.
        scores = ranked([r[0].content for r in rows], terms)
        scored = [(score, r) for score, r in zip(scores, rows, strict=True) if score > 0]
        scored.sort(key=lambda pair: (-pair[0], -pair[1][0].updated_at.timestamp()))
        visible = [(score, r) for score, r in scored if r[1].quarantine_state != "pending"
                   and r[0].problem is None][:limit]
        quarantined = [c.source_label(s.tier, s.key) for _, (s, row, _) in scored
                       if row.quarantine_state == "pending"][: c.RECALL_MAX_HITS]
        hits, sources, parts = [], [], []
        for score, (stored, row, _) in visible:
            label = c.source_label(stored.tier, stored.key)
            hits.append(c.RecallHit(source=label, snippet=snippet_for(stored.content, terms),
                                    score=round(score, 6)))
            sources.append(c.Source(id=stored.ref, title=label,
                                    revision=stored.revision or row.revision,
                                    updated_at=stored.updated_at))
            parts.append(f"[{label}]\n{stored.content}")
        return c.RecallResult(text=c.utf8_cut("\n\n".join(parts), cap),
                              sources=sources[: c.MAX_SOURCES], hits=hits,
                              quarantined=quarantined, cursor=None)

    def export(self, filters: c.ItemFilters, *, scope: c.Scope,
               deadline: float) -> Iterator[c.Item]:
        self._require("export")
        check_filters(filters)
        return self._export(filters, scope, deadline)

    def _export(self, filters: c.ItemFilters, scope: c.Scope,
                deadline: float) -> Iterator[c.Item]:
        cursor: str | None = None
        while True:
            page = self.list_items(filters, cursor=cursor, limit=c.LIST_MAX_LIMIT, scope=scope,
                                   deadline=deadline)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor
