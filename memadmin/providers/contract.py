"""The provider contract: what every memory backend promises memadmin.

Plain Python (no Django import), so a backend, the wire server and the wire client can all be
read against it. Every method takes the keyword-only arguments ``scope`` (the partitions it may
touch) and ``deadline`` (seconds left); item ids are the provider's own, valid within that scope.

The deadline bounds the whole call: an implementation turns it into a ``Deadline`` when the
call starts, gives each step (each statement, lock wait, request or file operation) only the
time still left, and checks it before committing a write: a write whose deadline passed is
not applied and answers ``Timeout``. A store that cannot be interrupted checks before its write
and answers ``Timeout`` after it when the time ran out.
A method raises only the error classes below; anything else is a bug in the backend.
"""

from __future__ import annotations

import abc
import dataclasses
import datetime as dt
import math
import re
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, Literal

# -- vocabulary ---------------------------------------------------------------------------------

TIERS: tuple[str, ...] = ("AGENT", "CREW", "PERSONA", "pins", "daily", "peers", "lessons", "facts")
#: Tiers holding one document per namespace: their key is always empty.
DOCUMENT_TIERS: frozenset[str] = frozenset({"AGENT", "CREW", "PERSONA", "pins", "lessons"})
MODES: tuple[str, ...] = ("replace", "append")
QUARANTINE_STATES: tuple[str, ...] = ("clear", "pending", "released")
FREEZE_KINDS: tuple[str, ...] = ("freeze", "legal_hold")
FREEZE_LEVELS: tuple[str, ...] = ("resource", "namespace", "item")

RECALL_MAX_HITS = 20
SNIPPET_MAX_CHARS = 500
RECALL_MAX_BYTES = 16_384
MAX_SOURCES = 100
MAX_ID_BYTES = 1_024
MAX_QUERY_BYTES = 1_024
MAX_SUBJECT_ID_CHARS = 256
LIST_MAX_LIMIT = 500
#: The orders of ``list_items``: newest first (the default), key A to Z (code point order),
#: largest first; ties by item id.
LIST_ORDERS = ("updated", "key", "size")


class _Keep:
    """The ``expires_at`` of a write that leaves the item's expiry as it is."""

    def __repr__(self) -> str:
        return "KEEP"


#: ``expires_at=KEEP`` (the default of ``retain`` and ``update_item``): the expiry unchanged.
KEEP: Any = _Keep()

#: Every wire operation. ``capabilities()`` answers a subset, plus ``idempotent_writes`` when the
#: provider deduplicates writes by operation id.
OPERATIONS: frozenset[str] = frozenset(
    {
        "health", "capabilities", "retain", "recall", "list", "count", "get", "update",
        "delete", "forget", "freeze", "quarantine", "export",
    }
)
WRITE_OPERATIONS: frozenset[str] = frozenset(
    {"retain", "update", "delete", "forget", "freeze", "quarantine"}
)
IDEMPOTENT_WRITES = "idempotent_writes"
#: The store is also written directly by agents (not through memadmin): a freeze there refuses
#: memadmin's own writes only, and quarantine is review and purge (agents still read the item).
DIRECT_WRITES = "direct_writes"
#: ``get_item`` lists only the current revision: the store keeps no history of earlier ones.
CURRENT_REVISION_ONLY = "current_revision_only"
#: What ``capabilities()`` may answer besides operations.
FEATURES: frozenset[str] = frozenset({IDEMPOTENT_WRITES, DIRECT_WRITES, CURRENT_REVISION_ONLY})


# -- errors -------------------------------------------------------------------------------------


class ProviderError(Exception):
    """Base of every error a provider may raise. ``code`` and ``http_status`` are the wire's."""

    code: ClassVar[str] = "internal"
    http_status: ClassVar[int] = 500

    def __init__(self, message: str = "", details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message or self.code)
        self.message = message or self.code
        self.details: dict[str, Any] = dict(details or {})

    def to_wire(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class InvalidRequest(ProviderError):
    code, http_status = "invalid_request", 400


class AuthFailed(ProviderError):
    code, http_status = "unauthorized", 401


class Forbidden(ProviderError):
    """The credential lacks the access, or the request reaches outside its partitions."""

    code, http_status = "forbidden", 403


class NotFound(ProviderError):
    code, http_status = "not_found", 404


class Conflict(ProviderError):
    """A stale revision or cursor."""

    code, http_status = "conflict", 409


class IdempotencyMismatch(ProviderError):
    """The operation id was used before with another request body."""

    code, http_status = "idempotency_mismatch", 409


class Frozen(ProviderError):
    """The target is frozen or on legal hold. Agents see only the code; staff see ``details``."""

    code, http_status = "frozen", 409


class ErasedSubject(ProviderError):
    """The data subject was erased; writes carrying that subject are refused."""

    code, http_status = "erased_subject", 409


class TooLarge(ProviderError):
    code, http_status = "too_large", 413


class RateLimited(ProviderError):
    code, http_status = "rate_limited", 429


class Unsupported(ProviderError):
    code, http_status = "unsupported", 501


class Unavailable(ProviderError):
    code, http_status = "unavailable", 503


class Timeout(ProviderError):
    code, http_status = "timeout", 504


class Uncertain(ProviderError):
    """A non-idempotent write whose reply was lost: it may or may not have been applied.

    Client side only; never sent on the wire.
    """

    code, http_status = "uncertain", 502


ERRORS_BY_CODE: dict[str, type[ProviderError]] = {
    cls.code: cls
    for cls in (
        InvalidRequest, AuthFailed, Forbidden, NotFound, Conflict, IdempotencyMismatch, Frozen,
        ErasedSubject, TooLarge, RateLimited, Unsupported, Unavailable, Timeout,
    )
}


# -- deadlines ----------------------------------------------------------------------------------


class Deadline:
    """The moment a call must be done by, on the monotonic clock.

    Built once, when the call starts, from the caller's budget (``Deadline.of(deadline)``);
    every step then takes what is left (``remaining()``) rather than the whole budget again, and
    a write checks it before committing (``check()``), so it is refused (``Timeout``) rather than
    applied after the caller has given up. Plain Python, so any provider kind can use it.
    """

    __slots__ = ("end",)

    def __init__(self, end: float) -> None:
        self.end = end  # a time.monotonic() value

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    @classmethod
    def of(cls, budget: float | Deadline) -> Deadline:
        """The deadline of a contract method's ``deadline`` argument (seconds left; a Deadline
        passes through). A budget of zero or less has already passed."""
        if isinstance(budget, Deadline):
            return budget
        if isinstance(budget, bool) or not isinstance(budget, int | float) or math.isnan(budget):
            raise InvalidRequest("deadline must be a number of seconds")
        return cls.after(float(budget))

    def remaining(self) -> float:
        """Seconds left (0.0 once passed)."""
        return max(0.0, self.end - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.end

    def check(self, step: str = "the call could finish") -> float:
        """The seconds left, or ``Timeout`` when none are."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise Timeout(f"the deadline passed before {step}")
        return left

    def within(self, seconds: float) -> Deadline:
        """This deadline, or ``seconds`` from now when that comes first."""
        return Deadline(min(self.end, time.monotonic() + seconds))

    def __repr__(self) -> str:
        return f"<Deadline {self.end - time.monotonic():+.3f}s>"


# -- values -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Scope:
    """The partition keys a call may touch: one namespace's, a resource's or a workspace's."""

    partitions: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.partitions, tuple) or not self.partitions:
            raise InvalidRequest("a scope needs at least one partition")
        # Checked here, so every provider kind answers a malformed scope the same way.
        if not all(isinstance(p, str) for p in self.partitions):
            raise InvalidRequest("every partition of a scope must be a string")

    @classmethod
    def of(cls, *partitions: str) -> Scope:
        return cls(tuple(partitions))

    def single(self) -> str:
        """The one partition of a namespace scope; writes that create items need exactly one."""
        if len(self.partitions) != 1:
            raise InvalidRequest("this operation needs a scope of exactly one namespace")
        return self.partitions[0]


@dataclasses.dataclass(frozen=True)
class ProviderSettings:
    """What a backend needs to know about its configuration (built by the registry)."""

    id: str
    workspace_id: str
    name: str
    kind: str
    url: str = ""
    credential: str = dataclasses.field(default="", repr=False)
    health_deadline: float = 0.2
    request_deadline: float = 10.0
    #: Kind-specific settings (a folder, a namespace prefix, where the subject id lives).
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class HealthStatus:
    ok: bool
    message: str
    checked_at: dt.datetime
    latency_ms: float


@dataclasses.dataclass(frozen=True)
class RetainResult:
    """The version a write made: its item, size and revision, and whether the scanner held it
    for review (``quarantined``, with the ids of the rules that matched), so a caller can say
    so without reading the item back."""

    id: str
    bytes: int
    revision: int
    quarantined: bool = False
    rules: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "bytes": self.bytes, "revision": self.revision,
                "quarantined": self.quarantined, "rules": list(self.rules)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RetainResult:
        return cls(id=data["id"], bytes=data["bytes"], revision=data["revision"],
                   quarantined=bool(data.get("quarantined", False)),
                   rules=tuple(data.get("rules", ())))


@dataclasses.dataclass(frozen=True)
class Source:
    id: str
    title: str
    revision: int | None = None
    updated_at: dt.datetime | None = None


@dataclasses.dataclass(frozen=True)
class RecallHit:
    source: str
    snippet: str
    score: float


@dataclasses.dataclass(frozen=True)
class RecallResult:
    text: str
    sources: list[Source]
    hits: list[RecallHit]
    quarantined: list[str]
    cursor: str | None = None


@dataclasses.dataclass(frozen=True)
class ItemFilters:
    """Filters of ``list_items``, ``count``, ``export`` and filter-based ``delete_items``."""

    q: str | None = None
    tier: str | None = None
    key: str | None = None
    subject: str | None = None
    frozen: bool | None = None
    quarantine: str | None = None
    updated_since: dt.datetime | None = None
    #: Items last updated strictly before this time (retention's "not updated for N days").
    updated_before: dt.datetime | None = None
    #: Items created strictly before this time (retention's "older than N days"). A store that
    #: does not know when an item was created counts from when memadmin first saw it (the
    #: ``created_at`` it reports: never older than the item is).
    created_before: dt.datetime | None = None
    #: Items in which personal data or a secret of this type was detected (``email``,
    #: ``card``...: memadmin.privacy.detect.TYPES). Only stores that keep labels support it.
    pii: str | None = None
    #: Items whose own expiry (``expiresAt``, or a store's TTL) is strictly before this time.
    expired_before: dt.datetime | None = None
    #: Items whose key starts with this text (the item list's key filter; ``key`` is exact).
    key_prefix: str | None = None
    #: How ``list_items`` orders a page: one of ``LIST_ORDERS`` (None: ``updated``). Not a
    #: filter: ``count``, ``export`` and ``delete_items`` ignore it.
    order: str | None = None

    def is_empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in dataclasses.fields(self)
                   if f.name != "order")


@dataclasses.dataclass(frozen=True)
class Item:
    id: str
    partition: str
    tier: str
    key: str
    source: str
    content: str
    bytes: int
    revision: int
    data_subject_id: str | None
    quarantine: str
    frozen: bool
    created_at: dt.datetime
    updated_at: dt.datetime
    #: When the store itself will drop the item (a LangGraph TTL); None when it never does.
    expires_at: dt.datetime | None = None


@dataclasses.dataclass(frozen=True)
class Revision:
    revision: int
    content: str
    bytes: int
    actor: str
    created_at: dt.datetime
    #: The quarantine state this version had (``pending``: withheld everywhere but review).
    quarantine: str = "clear"


@dataclasses.dataclass(frozen=True)
class ItemDetail:
    item: Item
    revisions: list[Revision]


@dataclasses.dataclass(frozen=True)
class ItemPage:
    items: list[Item]
    next_cursor: str | None


@dataclasses.dataclass(frozen=True)
class DeleteResult:
    removed: int
    held: int


@dataclasses.dataclass(frozen=True)
class ForgetResult:
    removed: int
    held: int


@dataclasses.dataclass(frozen=True)
class FreezeTarget:
    """What to freeze: a whole resource (its partitions), one namespace, or one item."""

    level: Literal["resource", "namespace", "item"]
    partition: str | None = None
    resource: str | None = None
    item_id: str | None = None

    def __post_init__(self) -> None:
        if self.level not in FREEZE_LEVELS:
            raise InvalidRequest(f"unknown freeze level {self.level!r}")
        needed = {"resource": self.resource, "namespace": self.partition, "item": self.item_id}
        if not needed[self.level]:
            raise InvalidRequest(f"a {self.level} freeze needs its {self.level} reference")


# -- the interface ------------------------------------------------------------------------------


class Provider(abc.ABC):
    """A memory backend. Subclasses implement every method (an operation they lack raises
    ``Unsupported``); a class missing one cannot be instantiated.

    Methods must be safe to call from several threads at once, each with its own deadline.
    """

    kind: ClassVar[str] = ""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings

    @abc.abstractmethod
    def health(self, *, deadline: float) -> HealthStatus:
        """Report whether the backend answers, within ``deadline`` seconds. Never raises:
        a hang, refusal or garbage becomes ``ok=False`` with a short triage message."""

    @abc.abstractmethod
    def capabilities(self, *, deadline: float) -> frozenset[str]:
        """The operations this backend supports (names from ``OPERATIONS``), plus
        ``IDEMPOTENT_WRITES`` when it deduplicates writes by operation id."""

    @abc.abstractmethod
    def retain(
        self, tier: str, key: str, content: str, mode: str, *, data_subject_id: str | None = None,
        operation_id: str, actor: str = "system", scope: Scope, deadline: float,
        expires_at: Any = KEEP,
    ) -> RetainResult:
        """Store ``content`` under (tier, key) in the scope's single partition.

        ``mode`` is required: ``replace`` overwrites, ``append`` adds to the end (creating the
        item when absent). ``facts`` items get a generated key when ``key`` is empty.
        Raises InvalidRequest (tier, key, mode or text rules), TooLarge (``item_max_bytes``),
        Frozen, ErasedSubject, IdempotencyMismatch.
        """

    @abc.abstractmethod
    def recall(
        self, text: str | None, *, limit: int = RECALL_MAX_HITS, max_bytes: int | None = None,
        scope: Scope, deadline: float,
    ) -> RecallResult:
        """What an agent would receive for ``text``: ``text`` at most ``max_bytes`` (the
        resource's unless smaller is asked) cut on a UTF-8 boundary, at most ``limit`` (<= 20)
        hits with snippets of <= 500 chars and scores in 0..1, sources, and quarantined items as
        labels only. Any query text is accepted: hostile search syntax never raises. Without
        text, the most recently updated memory is recalled. No side effects."""

    @abc.abstractmethod
    def list_items(
        self, filters: ItemFilters, *, cursor: str | None = None, limit: int = 50,
        scope: Scope, deadline: float,
    ) -> ItemPage:
        """A page of items in ``filters.order`` (newest first unless asked otherwise), and the
        cursor of the next page (keyset, stable under concurrent writes; valid for that order
        only). Raises InvalidRequest for a malformed cursor, filter or order."""

    @abc.abstractmethod
    def count(self, filters: ItemFilters, *, scope: Scope, deadline: float) -> int | None:
        """How many items match, or None when the backend cannot tell."""

    @abc.abstractmethod
    def get_item(self, item_id: str, *, scope: Scope, deadline: float) -> ItemDetail:
        """One item with its revisions, oldest first. Raises NotFound outside the scope."""

    @abc.abstractmethod
    def update_item(
        self, item_id: str, content: str, mode: str, *, expected_revision: int,
        operation_id: str, actor: str = "system", scope: Scope, deadline: float,
        expires_at: Any = KEEP,
    ) -> RetainResult:
        """Change an item when its revision is still ``expected_revision``.
        Raises Conflict when it moved on, Frozen, TooLarge, NotFound, InvalidRequest."""

    @abc.abstractmethod
    def delete_items(
        self, *, ids: Sequence[str] | None = None, filters: ItemFilters | None = None,
        exclude_ids: Sequence[str] = (), limit: int | None = None, operation_id: str,
        actor: str = "system", scope: Scope, deadline: float,
    ) -> DeleteResult:
        """Delete the given ids, or (at most ``limit`` of) everything matching ``filters``, minus
        ``exclude_ids``. Frozen items stay and are counted as ``held``. Exactly one of ids and
        filters; an empty filter must be asked for explicitly (``ItemFilters()``)."""

    @abc.abstractmethod
    def forget(
        self, *, item_id: str | None = None, data_subject_id: str | None = None,
        override_hold: bool = False, operation_id: str, actor: str = "system", scope: Scope,
        deadline: float,
    ) -> ForgetResult:
        """Erase one item, or every item tagged with a data subject, revisions included.
        Exactly one selector (else InvalidRequest). Frozen items are skipped and counted as
        ``held`` unless ``override_hold``. Forgetting what is already gone removes 0."""

    @abc.abstractmethod
    def freeze(
        self, target: FreezeTarget, *, kind: str, reason: str, actor: str = "system",
        scope: Scope, deadline: float,
    ) -> None:
        """Refuse every write to ``target`` until lifted. Idempotent per (target, kind)."""

    @abc.abstractmethod
    def lift_freeze(
        self, target: FreezeTarget, *, kind: str, actor: str = "system", scope: Scope,
        deadline: float,
    ) -> None:
        """Lift a freeze of ``kind`` on ``target``; lifting what is not frozen is a no-op."""

    @abc.abstractmethod
    def set_quarantine(self, item_id: str, state: str, *, scope: Scope, deadline: float) -> None:
        """Set an item's quarantine state (``clear``, ``pending``, ``released``)."""

    @abc.abstractmethod
    def export(
        self, filters: ItemFilters, *, scope: Scope, deadline: float,
    ) -> Iterator[Item]:
        """Every matching item, in constant memory (paged underneath). ``deadline`` bounds each
        page, not the whole iteration."""


# -- helpers shared by every implementation -----------------------------------------------------


def source_label(tier: str, key: str) -> str:
    """The tier-relative label an agent sees (never a filesystem path)."""
    if tier in DOCUMENT_TIERS:
        return f"{tier}.md"
    return f"{tier}/{key}.md"


def utf8_cut(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes without splitting a character."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", errors="ignore")


_CONTROL_CHARACTERS = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]")


TIME_FILTERS: tuple[str, ...] = ("updated_since", "updated_before", "created_before",
                                 "expired_before")


def check_expiry(value: Any) -> dt.datetime | None | _Keep:
    """A write's ``expires_at``: KEEP (unchanged), None (never expires) or an aware time."""
    if value is KEEP or value is None:
        return value
    if not isinstance(value, dt.datetime) or value.utcoffset() is None:
        raise InvalidRequest("expiresAt must be a time with a time zone (RFC 3339)")
    return value


def check_list_filters(filters: ItemFilters) -> None:
    """Refuse an unknown order or a key prefix no key could have."""
    if filters.order is not None and filters.order not in LIST_ORDERS:
        raise InvalidRequest(f"order must be one of {', '.join(LIST_ORDERS)}")
    if filters.key_prefix is not None:
        check_id(filters.key_prefix, field="keyPrefix")


def check_time_filters(filters: ItemFilters) -> None:
    """Refuse a time filter that is not an aware datetime (a naive one would be read as this
    machine's local time)."""
    for name in TIME_FILTERS:
        value = getattr(filters, name)
        if value is not None and (not isinstance(value, dt.datetime) or value.tzinfo is None
                                  or value.utcoffset() is None):
            raise InvalidRequest(f"{name} must be a time with a time zone")


def check_text(value: str, *, field: str, max_bytes: int | None = None) -> str:
    """Refuse text PostgreSQL cannot store or that cannot be UTF-8 (NUL, lone surrogates), and
    control characters other than tab, newline and carriage return (each would take six bytes
    as JSON, so an item at the size limit could no longer travel in one wire body)."""
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} must be a string")
    if "\x00" in value:
        raise InvalidRequest(f"{field} contains a NUL character")
    if _CONTROL_CHARACTERS.search(value):
        raise InvalidRequest(f"{field} contains a control character")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidRequest(f"{field} is not valid UTF-8 (lone surrogate)") from None
    if max_bytes is not None and size > max_bytes:
        raise TooLarge(
            f"{field} is {size} bytes; the limit is {max_bytes}",
            {"bytes": size, "limit": max_bytes},
        )
    return value


def check_id(value: str, *, field: str = "id") -> str:
    check_text(value, field=field)
    if len(value.encode("utf-8")) > MAX_ID_BYTES:
        raise InvalidRequest(f"{field} is longer than {MAX_ID_BYTES} bytes")
    return value


# -- argument checks every backend applies alike (the built-in store and the governed kinds) --

SLUG_KEY = re.compile(r"[A-Za-z0-9_-]{1,128}")
DAILY_KEY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def check_operation_id(operation_id: str) -> str:
    if not operation_id:
        raise InvalidRequest("operationId is required for writes")
    return check_id(operation_id, field="operationId")


def check_subject(subject: str | None) -> str | None:
    if subject is None:
        return None
    check_text(subject, field="data subject id")
    if not subject.strip() or len(subject) > MAX_SUBJECT_ID_CHARS:
        raise InvalidRequest(f"data subject id must be 1-{MAX_SUBJECT_ID_CHARS} characters")
    return subject


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise InvalidRequest("mode is required: replace or append")


def normalise_key(tier: str, key: str) -> str:
    """The key an item of ``tier`` is stored under: empty for document tiers, an ISO date for
    ``daily``, a random one for a ``facts`` item written without, else a slug."""
    if tier not in TIERS:
        raise InvalidRequest(f"unknown tier {tier!r}; one of {', '.join(TIERS)}")
    if not isinstance(key, str):
        raise InvalidRequest("key must be a string")
    if tier in DOCUMENT_TIERS:
        if key:
            raise InvalidRequest(f"tier {tier} holds one document; its key must be empty")
        return ""
    if tier == "daily":
        # fromisoformat alone also takes ISO week dates ("2026-W01-1") and basic forms.
        if not DAILY_KEY.fullmatch(key):
            raise InvalidRequest("the daily key must be a date, YYYY-MM-DD")
        try:
            return dt.date.fromisoformat(key).isoformat()
        except ValueError:
            raise InvalidRequest("the daily key must be a date, YYYY-MM-DD") from None
    if tier == "facts" and not key:
        return secrets.token_hex(8)
    if not SLUG_KEY.fullmatch(key):
        raise InvalidRequest(f"the {tier} key must be 1-128 letters, digits, - or _")
    return key


def joined(old: str, new: str, mode: str) -> str:
    """The content after a write in ``mode`` (append adds a line)."""
    if mode == "replace" or not old:
        return new
    return old + ("" if old.endswith("\n") else "\n") + new
