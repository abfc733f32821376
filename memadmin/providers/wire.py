"""The HTTP wire's JSON shapes, shared by the server (``memadmin.endpoint``) and the client
(``providers.http``), so both sides encode and decode the contract's values the same way.

Plain Python, no Django: see docs/provider-protocol.md for the protocol in prose and
docs/provider-protocol.schema.json for the machine-readable schema.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import orjson

from memadmin.providers import contract as c
from memadmin.providers import wire_schema

VERSION = 1
MAX_BODY_BYTES = 64 * 1024
AGENT_OPERATIONS = frozenset({"recall", "tool", "observe"})
#: Agent operations an admin credential may not use (an admin may recall, to preview).
#: ``observe`` and tools are endpoint operations of the built-in store, not of the provider
#: contract: the HTTP client never sends them (docs/provider-protocol.md).
AGENT_ONLY_OPERATIONS = frozenset({"tool", "observe"})
ADMIN_OPERATIONS = frozenset(c.OPERATIONS)
ALL_OPERATIONS = AGENT_OPERATIONS | ADMIN_OPERATIONS
#: Admin operations that need no scope.
UNSCOPED_OPERATIONS = frozenset({"health", "capabilities"})


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
                      ("frozen", "frozen"), ("quarantine", "quarantine"), ("pii", "pii"),
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


#: One exported item as a JSON Lines line: the bytes of
#: ``json.dumps(item_to_wire(item), ensure_ascii=False) + "\n"`` (export files keep that format),
#: written with orjson, whose string escaping is the same; ``%s`` slots take ``orjson.dumps`` of
#: each value, the two ``%d`` the sizes.
ITEM_LINE = (b'{"id": %s, "partition": %s, "tier": %s, "key": %s, "source": %s, "content": %s, '
             b'"bytes": %d, "revision": %d, "dataSubjectId": %s, "quarantine": %s, "frozen": %s, '
             b'"createdAt": %s, "updatedAt": %s%s}\n')
_dumps = orjson.dumps


def time_json(value: dt.datetime) -> bytes:
    """``iso(value)`` as a JSON string (orjson writes an aware UTC time the same way)."""
    if value.utcoffset():
        value = value.astimezone(dt.UTC)
    return _dumps(value, option=orjson.OPT_UTC_Z)


def item_line(item: c.Item) -> bytes:
    """An item as one line of an export file (see ``ITEM_LINE``)."""
    return ITEM_LINE % (
        _dumps(item.id), _dumps(item.partition), _dumps(item.tier), _dumps(item.key),
        _dumps(item.source), _dumps(item.content), item.bytes, item.revision,
        _dumps(item.data_subject_id), _dumps(item.quarantine),
        b"true" if item.frozen else b"false", time_json(item.created_at),
        time_json(item.updated_at),
        b', "expiresAt": ' + time_json(item.expires_at) if item.expires_at is not None else b"")


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


# -- JSON -> values -------------------------------------------------------------------------------
#
# The other side may be hostile: every answer is first checked against its ``$def`` of the
# protocol schema (``providers.wire_schema``, see ``checked``), so the decoders below only read
# fields the schema guarantees, and check what it cannot say (UTF-8 byte lengths, real dates).


def checked(data: Any, name: str) -> Any:
    """``data`` when it matches ``$defs/name``; InvalidRequest naming the first field that does
    not (by JSON pointer, never its value)."""
    problem = wire_schema.problem(data, name)
    if problem is not None:
        raise c.InvalidRequest(problem, {"pointer": problem.partition(":")[0]})
    return data


def _time(value: str | None, where: str) -> dt.datetime | None:
    return parse_time(value, where) if value is not None else None


def _id_bytes(value: str | None, where: str) -> str | None:
    if value is not None and len(value.encode("utf-8")) > c.MAX_ID_BYTES:
        raise c.InvalidRequest(f"{where}: is longer than {c.MAX_ID_BYTES:,} bytes")
    return value


def filters_from_wire(data: Any) -> c.ItemFilters:
    data = checked(data if data is not None else {}, "Filters")
    return c.ItemFilters(
        q=data.get("q"), tier=data.get("tier"), key=data.get("key"),
        subject=data.get("subject"), frozen=data.get("frozen"),
        quarantine=data.get("quarantine"), pii=data.get("pii"),
        updated_since=_time(data.get("updatedSince"), "/updatedSince"),
        updated_before=_time(data.get("updatedBefore"), "/updatedBefore"),
        created_before=_time(data.get("createdBefore"), "/createdBefore"),
        key_prefix=data.get("keyPrefix"), order=data.get("order"),
        expired_before=_time(data.get("expiredBefore"), "/expiredBefore"),
    )


def item_from_wire(data: dict[str, Any]) -> c.Item:
    return c.Item(
        id=data["id"], partition=data["partition"], tier=data["tier"], key=data["key"],
        source=data["source"], content=data["content"], bytes=int(data["bytes"]),
        revision=int(data["revision"]), data_subject_id=data.get("dataSubjectId"),
        quarantine=data["quarantine"], frozen=data["frozen"],
        created_at=parse_time(data["createdAt"], "createdAt"),
        updated_at=parse_time(data["updatedAt"], "updatedAt"),
        expires_at=(parse_time(data["expiresAt"], "expiresAt")
                    if data.get("expiresAt") is not None else None),
    )


def revision_from_wire(data: dict[str, Any]) -> c.Revision:
    return c.Revision(revision=int(data["revision"]), content=data["content"],
                      bytes=int(data["bytes"]), actor=data["actor"],
                      created_at=parse_time(data["createdAt"], "createdAt"),
                      quarantine=data.get("quarantine", "clear"))


def page_from_wire(data: Any) -> c.ItemPage:
    data = checked(data, "ItemPage")
    return c.ItemPage(items=[item_from_wire(i) for i in data["items"]],
                      next_cursor=_id_bytes(data.get("nextCursor"), "/nextCursor"))


def recall_from_wire(data: Any) -> c.RecallResult:
    data = checked(data, "RecallResponse")
    sources = [
        c.Source(id=str(_id_bytes(raw["id"], f"/sources/{n}/id")), title=raw.get("title", ""),
                 revision=None if raw.get("revision") is None else int(raw["revision"]),
                 updated_at=_time(raw.get("updatedAt"), f"/sources/{n}/updatedAt"))
        for n, raw in enumerate(data["sources"])
    ]
    hits = [c.RecallHit(source=raw["source"], snippet=raw["snippet"], score=float(raw["score"]))
            for raw in data.get("hits", [])]
    return c.RecallResult(text=data["text"], sources=sources, hits=hits,
                          quarantined=list(data.get("quarantined", [])),
                          cursor=_id_bytes(data.get("cursor"), "/cursor"))


def write_result_from_wire(data: Any) -> c.RetainResult:
    """The answer of ``retain`` and ``update``."""
    data = checked(data, "WriteResult")
    return c.RetainResult(id=str(_id_bytes(data["id"], "/id")), bytes=int(data["bytes"]),
                          revision=int(data["revision"]),
                          quarantined=data.get("quarantined", False),
                          rules=tuple(data.get("rules", ())))


def delete_result_from_wire(data: Any) -> c.DeleteResult:
    data = checked(data, "DeleteResponse")
    return c.DeleteResult(removed=int(data["removed"]), held=int(data["held"]))


def forget_result_from_wire(data: Any) -> c.ForgetResult:
    data = checked(data, "ForgetResponse")
    return c.ForgetResult(removed=int(data["removed"]), held=int(data["held"]))


def count_from_wire(data: Any) -> int | None:
    """The answer of ``count``: a number, or null when the provider cannot tell."""
    count = checked(data, "CountResponse")["count"]
    return None if count is None else int(count)


def detail_from_wire(data: Any) -> tuple[c.ItemDetail, int]:
    """The answer of ``get``, and how many older revisions the server left out."""
    data = checked(data, "GetResponse")
    revisions = [revision_from_wire(r) for r in data["revisions"]]
    return (c.ItemDetail(item=item_from_wire(data["item"]), revisions=revisions),
            int(data.get("omittedRevisions", 0)))


def capabilities_from_wire(data: Any) -> frozenset[str]:
    """The known operations a server supports, plus ``IDEMPOTENT_WRITES`` when it says so.

    Operations this side does not know (``tool``, or newer ones) are left out."""
    data = checked(data, "CapabilitiesResponse")
    known = frozenset(data["operations"]) & c.OPERATIONS
    return known | {c.IDEMPOTENT_WRITES} if data["idempotentWrites"] else known


def health_from_wire(data: Any) -> tuple[bool, str]:
    """``(ok, message)`` of a ``health`` answer (the caller measures time itself)."""
    data = checked(data, "HealthResponse")
    return data["ok"], data["message"]


def acknowledged(data: Any) -> None:
    """The answer of ``freeze`` and ``quarantine``: ``{"ok": true}``."""
    checked(data, "OkResponse")


def target_from_wire(data: dict[str, Any]) -> c.FreezeTarget:
    """A freeze target of a request the endpoint already checked against the schema."""
    return c.FreezeTarget(level=data["level"], partition=data.get("partition"),
                          resource=data.get("resource"), item_id=data.get("itemId"))


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

