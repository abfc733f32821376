"""The HTTP wire's JSON shapes, shared by the server (``memadmin.endpoint``) and the client
(``providers.http``), so both sides encode and decode the contract's values the same way.

Plain Python, no Django: see docs/provider-protocol.md for the protocol in prose and
docs/provider-protocol.schema.json for the machine-readable schema.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from memadmin.providers import contract as c

VERSION = 1
MAX_BODY_BYTES = 64 * 1024
AGENT_OPERATIONS = frozenset({"recall", "tool"})
ADMIN_OPERATIONS = frozenset(c.OPERATIONS)
ALL_OPERATIONS = AGENT_OPERATIONS | ADMIN_OPERATIONS
#: Admin operations that need no scope.
UNSCOPED_OPERATIONS = frozenset({"health", "capabilities"})
#: Rule ids a write result may name (a quarantined version's matched rules).
MAX_RULES = 100


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def parse_time(value: Any, field: str) -> dt.datetime:
    if not isinstance(value, str) or len(value) > 64:
        raise c.InvalidRequest(f"{field} must be an ISO 8601 time")
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise c.InvalidRequest(f"{field} must be an ISO 8601 time") from None
    if parsed.tzinfo is None:
        raise c.InvalidRequest(f"{field} must carry a time zone")
    return parsed


def check_strings(value: Any, path: str = "body") -> None:
    """Refuse NUL characters and lone surrogates anywhere in a decoded JSON document."""
    if isinstance(value, str):
        if "\x00" in value:
            raise c.InvalidRequest(f"{path} contains a NUL character")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise c.InvalidRequest(f"{path} contains a lone surrogate") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            check_strings(key, path)
            check_strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_strings(item, f"{path}[{index}]")


# -- values -> JSON -----------------------------------------------------------------------------


def filters_to_wire(filters: c.ItemFilters) -> dict[str, Any]:
    if not isinstance(filters, c.ItemFilters):
        raise c.InvalidRequest("filters must be ItemFilters")
    # A naive time would be read as this machine's local time: refuse it, as the store does.
    c.check_time_filters(filters)
    out: dict[str, Any] = {}
    for name, key in (("q", "q"), ("tier", "tier"), ("key", "key"), ("subject", "subject"),
                      ("frozen", "frozen"), ("quarantine", "quarantine"),
                      ("key_prefix", "keyPrefix"), ("order", "order")):
        value = getattr(filters, name)
        if value is not None:
            out[key] = value
    if filters.updated_since is not None:
        out["updatedSince"] = iso(filters.updated_since)
    if filters.updated_before is not None:
        out["updatedBefore"] = iso(filters.updated_before)
    if filters.created_before is not None:
        out["createdBefore"] = iso(filters.created_before)
    if filters.expired_before is not None:
        out["expiredBefore"] = iso(filters.expired_before)
    return out


def expiry_from_wire(body: dict[str, Any]) -> Any:
    """A write's ``expiresAt``: absent, unchanged (``c.KEEP``); null, never expires; else an
    RFC 3339 time with an offset."""
    if "expiresAt" not in body:
        return c.KEEP
    if body["expiresAt"] is None:
        return None
    return c.check_expiry(parse_time(body["expiresAt"], "expiresAt"))


def expiry_to_wire(value: Any, fields: dict[str, Any]) -> dict[str, Any]:
    if value is not c.KEEP:
        fields["expiresAt"] = iso(c.check_expiry(value))  # type: ignore[arg-type]
    return fields


def item_to_wire(item: c.Item) -> dict[str, Any]:
    return {
        "id": item.id, "partition": item.partition, "tier": item.tier, "key": item.key,
        "source": item.source, "content": item.content, "bytes": item.bytes,
        "revision": item.revision, "dataSubjectId": item.data_subject_id,
        "quarantine": item.quarantine, "frozen": item.frozen,
        "createdAt": iso(item.created_at), "updatedAt": iso(item.updated_at),
        **({"expiresAt": iso(item.expires_at)} if item.expires_at is not None else {}),
    }


def revision_to_wire(rev: c.Revision) -> dict[str, Any]:
    return {"revision": rev.revision, "content": rev.content, "bytes": rev.bytes,
            "actor": rev.actor, "createdAt": iso(rev.created_at), "quarantine": rev.quarantine}


def recall_to_wire(result: c.RecallResult) -> dict[str, Any]:
    return {
        "text": result.text,
        "sources": [{"id": s.id, "title": s.title, "revision": s.revision,
                     "updatedAt": iso(s.updated_at)} for s in result.sources],
        "hits": [{"source": h.source, "snippet": h.snippet, "score": h.score}
                 for h in result.hits],
        "quarantined": list(result.quarantined),
        "cursor": result.cursor,
    }


def target_to_wire(target: c.FreezeTarget) -> dict[str, Any]:
    return {"level": target.level, "partition": target.partition, "resource": target.resource,
            "itemId": target.item_id}


def health_to_wire(status: c.HealthStatus) -> dict[str, Any]:
    return {"ok": status.ok, "message": status.message, "checkedAt": iso(status.checked_at),
            "latencyMs": status.latency_ms}


def write_result_to_wire(result: c.RetainResult) -> dict[str, Any]:
    """The answer of ``retain`` and ``update``."""
    answer: dict[str, Any] = {"id": result.id, "bytes": result.bytes,
                              "revision": result.revision}
    if result.quarantined:
        # Only when it was: a clean write answers exactly as before.
        answer.update(quarantined=True, rules=list(result.rules))
    return answer


def removal_to_wire(result: c.DeleteResult | c.ForgetResult) -> dict[str, Any]:
    """The answer of ``delete`` and ``forget``."""
    return {"removed": result.removed, "held": result.held}


def detail_to_wire(detail: c.ItemDetail) -> dict[str, Any]:
    """The answer of ``get``: the newest revisions that fit the body limit, and how many older
    ones were left out (``omittedRevisions``)."""
    answer: dict[str, Any] = {"item": item_to_wire(detail.item),
                              "revisions": [revision_to_wire(r) for r in detail.revisions]}
    while len(dumps(answer)) > MAX_BODY_BYTES - 1024 and len(answer["revisions"]) > 1:
        answer["revisions"] = answer["revisions"][1:]
    answer["omittedRevisions"] = len(detail.revisions) - len(answer["revisions"])
    return answer


def capabilities_to_wire(operations: frozenset[str] | set[str], *,
                         idempotent_writes: bool) -> dict[str, Any]:
    return {"operations": sorted(operations), "idempotentWrites": idempotent_writes,
            "version": VERSION}


# -- JSON -> values (every field checked: the other side may be hostile) -----------------------


def field(data: dict[str, Any], key: str, kind: type | tuple[type, ...], *,
          required: bool = True, default: Any = None) -> Any:
    """``data[key]`` checked against ``kind`` (bools are not numbers); InvalidRequest if not."""
    if key not in data or data[key] is None:
        if required:
            raise c.InvalidRequest(f"{key} is required")
        return default
    value = data[key]
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise c.InvalidRequest(f"{key} has the wrong type")
    if not isinstance(value, kind):
        raise c.InvalidRequest(f"{key} has the wrong type")
    return value


def obj(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise c.InvalidRequest(f"{name} must be an object")
    return value


def filters_from_wire(data: Any) -> c.ItemFilters:
    data = obj(data if data is not None else {}, "filters")
    known = {"q", "tier", "key", "subject", "frozen", "quarantine", "updatedSince",
             "updatedBefore", "createdBefore", "keyPrefix", "order", "expiredBefore"}
    unknown = set(data) - known
    if unknown:
        raise c.InvalidRequest(f"unknown filters: {', '.join(sorted(unknown))}")
    since = data.get("updatedSince")
    before, created = data.get("updatedBefore"), data.get("createdBefore")
    return c.ItemFilters(
        q=field(data, "q", str, required=False), tier=field(data, "tier", str, required=False),
        key=field(data, "key", str, required=False),
        subject=field(data, "subject", str, required=False),
        frozen=field(data, "frozen", bool, required=False),
        quarantine=field(data, "quarantine", str, required=False),
        updated_since=parse_time(since, "updatedSince") if since is not None else None,
        updated_before=parse_time(before, "updatedBefore") if before is not None else None,
        created_before=parse_time(created, "createdBefore") if created is not None else None,
        key_prefix=field(data, "keyPrefix", str, required=False),
        expired_before=(parse_time(data["expiredBefore"], "expiredBefore")
                        if data.get("expiredBefore") is not None else None),
        order=field(data, "order", str, required=False),
    )


def item_from_wire(data: Any) -> c.Item:
    data = obj(data, "item")
    return c.Item(
        id=field(data, "id", str), partition=field(data, "partition", str),
        tier=field(data, "tier", str), key=field(data, "key", str),
        source=field(data, "source", str), content=field(data, "content", str),
        bytes=field(data, "bytes", int), revision=field(data, "revision", int),
        data_subject_id=field(data, "dataSubjectId", str, required=False),
        quarantine=field(data, "quarantine", str), frozen=field(data, "frozen", bool),
        created_at=parse_time(data.get("createdAt"), "createdAt"),
        updated_at=parse_time(data.get("updatedAt"), "updatedAt"),
        expires_at=(parse_time(data["expiresAt"], "expiresAt")
                    if data.get("expiresAt") is not None else None),
    )


def revision_from_wire(data: Any) -> c.Revision:
    data = obj(data, "revision")
    return c.Revision(revision=field(data, "revision", int), content=field(data, "content", str),
                      bytes=field(data, "bytes", int), actor=field(data, "actor", str),
                      created_at=parse_time(data.get("createdAt"), "createdAt"),
                      quarantine=_revision_quarantine(data))


def _revision_quarantine(data: dict[str, Any]) -> str:
    state = field(data, "quarantine", str, required=False, default="clear")
    if state not in c.QUARANTINE_STATES:
        raise c.InvalidRequest(f"unknown quarantine state {state!r}")
    return state


def page_from_wire(data: Any) -> c.ItemPage:
    data = obj(data, "response")
    items = field(data, "items", list)
    return c.ItemPage(items=[item_from_wire(i) for i in items],
                      next_cursor=field(data, "nextCursor", str, required=False))


def recall_from_wire(data: Any) -> c.RecallResult:
    data = obj(data, "response")
    sources = field(data, "sources", list)
    if len(sources) > c.MAX_SOURCES:
        raise c.InvalidRequest(f"more than {c.MAX_SOURCES} sources")
    parsed_sources = []
    for raw in sources:
        raw = obj(raw, "source")
        source_id = field(raw, "id", str)
        if len(source_id.encode("utf-8")) > c.MAX_ID_BYTES:
            raise c.InvalidRequest("a source id is longer than 1,024 bytes")
        updated = raw.get("updatedAt")
        parsed_sources.append(c.Source(
            id=source_id, title=field(raw, "title", str, required=False, default=""),
            revision=field(raw, "revision", int, required=False),
            updated_at=parse_time(updated, "updatedAt") if updated is not None else None))
    hits = []
    for raw in field(data, "hits", list, required=False, default=[]):
        raw = obj(raw, "hit")
        score = float(field(raw, "score", (int, float), required=False, default=0.0))
        hits.append(c.RecallHit(source=field(raw, "source", str),
                                snippet=field(raw, "snippet", str)[: c.SNIPPET_MAX_CHARS],
                                score=min(1.0, max(0.0, score))))
    quarantined = field(data, "quarantined", list, required=False, default=[])
    if not all(isinstance(label, str) for label in quarantined):
        raise c.InvalidRequest("quarantined must be a list of labels")
    cursor = field(data, "cursor", str, required=False)
    if cursor is not None and len(cursor.encode("utf-8")) > c.MAX_ID_BYTES:
        raise c.InvalidRequest("the cursor is longer than 1,024 bytes")
    return c.RecallResult(text=field(data, "text", str), sources=parsed_sources, hits=hits,
                          quarantined=quarantined, cursor=cursor)


def _count_field(data: dict[str, Any], key: str) -> int:
    value = field(data, key, int)
    if value < 0:
        raise c.InvalidRequest(f"{key} must not be negative")
    return value


def write_result_from_wire(data: Any) -> c.RetainResult:
    """The answer of ``retain`` and ``update``."""
    data = obj(data, "response")
    item_id = field(data, "id", str)
    if len(item_id.encode("utf-8")) > c.MAX_ID_BYTES:
        raise c.InvalidRequest("the id is longer than 1,024 bytes")
    rules = field(data, "rules", list, required=False, default=[])
    if len(rules) > MAX_RULES or not all(isinstance(r, str) and 0 < len(r) <= 100
                                         for r in rules):
        raise c.InvalidRequest(f"rules must be up to {MAX_RULES} rule ids of 1-100 characters")
    return c.RetainResult(id=item_id, bytes=_count_field(data, "bytes"),
                          revision=_count_field(data, "revision"),
                          quarantined=field(data, "quarantined", bool, required=False,
                                            default=False),
                          rules=tuple(rules))


def delete_result_from_wire(data: Any) -> c.DeleteResult:
    data = obj(data, "response")
    return c.DeleteResult(removed=_count_field(data, "removed"), held=_count_field(data, "held"))


def forget_result_from_wire(data: Any) -> c.ForgetResult:
    data = obj(data, "response")
    return c.ForgetResult(removed=_count_field(data, "removed"), held=_count_field(data, "held"))


def count_from_wire(data: Any) -> int | None:
    """The answer of ``count``: a number, or null when the provider cannot tell."""
    data = obj(data, "response")
    if "count" not in data:
        raise c.InvalidRequest("count is required")
    if data["count"] is None:
        return None
    return _count_field(data, "count")


def detail_from_wire(data: Any) -> tuple[c.ItemDetail, int]:
    """The answer of ``get``, and how many older revisions the server left out."""
    data = obj(data, "response")
    revisions = [revision_from_wire(r) for r in field(data, "revisions", list)]
    omitted = field(data, "omittedRevisions", int, required=False, default=0)
    if omitted < 0:
        raise c.InvalidRequest("omittedRevisions must not be negative")
    return c.ItemDetail(item=item_from_wire(data.get("item")), revisions=revisions), omitted


def capabilities_from_wire(data: Any) -> frozenset[str]:
    """The known operations a server supports, plus ``IDEMPOTENT_WRITES`` when it says so.

    Operations this side does not know (``tool``, or newer ones) are left out."""
    data = obj(data, "response")
    version = data.get("version", VERSION)
    if version != VERSION or isinstance(version, bool):
        raise c.InvalidRequest(f"unsupported protocol version {version!r}")
    operations = field(data, "operations", list)
    if not all(isinstance(op, str) for op in operations):
        raise c.InvalidRequest("operations must be a list of names")
    idempotent = field(data, "idempotentWrites", bool, required=False, default=False)
    known = frozenset(operations) & c.OPERATIONS
    return known | {c.IDEMPOTENT_WRITES} if idempotent else known


def health_from_wire(data: Any) -> tuple[bool, str]:
    """``(ok, message)`` of a ``health`` answer (the caller measures time itself)."""
    data = obj(data, "response")
    return field(data, "ok", bool), field(data, "message", str, required=False, default="")


def target_from_wire(data: Any) -> c.FreezeTarget:
    data = obj(data, "target")
    return c.FreezeTarget(level=field(data, "level", str),
                          partition=field(data, "partition", str, required=False),
                          resource=field(data, "resource", str, required=False),
                          item_id=field(data, "itemId", str, required=False))


def error_from_wire(status: int, data: Any) -> c.ProviderError:
    """The contract error for an error envelope (or for a status without a usable one)."""
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        error = data["error"]
        code = error.get("code")
        message = error.get("message") if isinstance(error.get("message"), str) else ""
        details = error.get("details") if isinstance(error.get("details"), dict) else {}
        cls = c.ERRORS_BY_CODE.get(code) if isinstance(code, str) else None
        if cls is not None:
            return cls(message[:500] or cls.code, details)
    if status == 429:
        return c.RateLimited(f"{status} from upstream")
    if status >= 500:
        return c.Unavailable(f"{status} from upstream")
    return c.Unavailable(f"unexpected {status} from upstream")

