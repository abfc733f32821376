"""What the agent tools do on the built-in store (seed 001): remember, save, list, read.

A resource declares which tools it offers and their input schemas; arguments are validated
against the declared schema before anything runs. A declared tool this server has no behaviour
for answers ``unsupported``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaValidationError

from memadmin.providers import contract as c
from memadmin.workspaces.models import Namespace

ToolCall = Callable[..., dict[str, Any]]


def declared_tool(namespace: Namespace, name: Any) -> dict[str, Any]:
    if not isinstance(name, str):
        raise c.InvalidRequest("tool must be a string")
    for tool in namespace.resource.tools or []:
        if tool.get("name") == name:
            return tool
    raise c.InvalidRequest(f"this resource declares no tool {name[:40]!r}")


def validate_arguments(tool: dict[str, Any], arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, dict):
        raise c.InvalidRequest("arguments must be an object")
    validator = Draft202012Validator(tool.get("input") or {"type": "object"})
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        first: SchemaValidationError = errors[0]
        where = "/".join(str(p) for p in first.path) or "arguments"
        raise c.InvalidRequest(f"{where}: {first.message[:200]}",
                               {"errors": len(errors)})
    return arguments


def _remember(provider: c.Provider, args: dict[str, Any], **kw: Any) -> dict[str, Any]:
    content = args.get("fact", args.get("content"))
    if not isinstance(content, str):
        raise c.Unsupported("remember needs a string argument 'fact'")
    subject = args.get("subject") if isinstance(args.get("subject"), str) else None
    result = provider.retain("facts", "", content, "replace", data_subject_id=subject, **kw)
    return _written(result)


def _save(provider: c.Provider, args: dict[str, Any], **kw: Any) -> dict[str, Any]:
    content = args.get("content")
    if not isinstance(content, str):
        raise c.Unsupported("save needs a string argument 'content'")
    document = args.get("document", "AGENT")
    if document not in c.DOCUMENT_TIERS:
        raise c.InvalidRequest(f"document must be one of {', '.join(sorted(c.DOCUMENT_TIERS))}")
    result = provider.retain(document, "", content, "replace", **kw)
    return _written(result)


def _written(result: c.RetainResult) -> dict[str, Any]:
    """``stored``: the next recall sees it. ``accepted`` with ``quarantined``: kept, but held
    for review (recall leaves it out until a reviewer releases it), so the agent does not
    count on it."""
    if result.quarantined:
        return {"status": "accepted", "quarantined": True, "id": result.id,
                "revision": result.revision}
    return {"status": "stored", "id": result.id, "revision": result.revision}


def _list(provider: c.Provider, args: dict[str, Any], *, scope: c.Scope,
          deadline: float) -> dict[str, Any]:
    tier = args.get("tier") if isinstance(args.get("tier"), str) else None
    limit = args.get("limit", 20)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 50:
        raise c.InvalidRequest("limit must be 1-50")
    cursor = args.get("cursor") if isinstance(args.get("cursor"), str) else None
    page = provider.list_items(c.ItemFilters(tier=tier, quarantine=None), cursor=cursor,
                               limit=limit, scope=scope, deadline=deadline)
    return {
        "items": [{"id": i.id, "source": i.source, "tier": i.tier, "key": i.key,
                   "bytes": i.bytes, "revision": i.revision}
                  for i in page.items if i.quarantine != "pending"],
        "nextCursor": page.next_cursor,
    }


def _read(provider: c.Provider, args: dict[str, Any], *, scope: c.Scope,
          deadline: float) -> dict[str, Any]:
    item_id = args.get("id")
    if not isinstance(item_id, str):
        raise c.Unsupported("read needs a string argument 'id'")
    item = provider.get_item(item_id, scope=scope, deadline=deadline).item
    if item.quarantine == "pending":
        # Quarantined content never reaches a model; the agent learns only that it is held.
        return {"id": item.id, "source": item.source, "quarantined": True}
    return {"id": item.id, "source": item.source, "content": item.content,
            "revision": item.revision}


WRITE_TOOLS: dict[str, ToolCall] = {"remember": _remember, "save": _save}
READ_TOOLS: dict[str, ToolCall] = {"list": _list, "read": _read}


def run_tool(provider: c.Provider, tool: dict[str, Any], arguments: dict[str, Any], *,
             may_write: bool, operation_id: str, actor: str, scope: c.Scope,
             deadline: float) -> dict[str, Any]:
    name = tool["name"]
    if tool.get("access") == "write":
        if not may_write:
            raise c.Forbidden("this token is read-only")
        behaviour = WRITE_TOOLS.get(name)
        if behaviour is None:
            raise c.Unsupported(f"this server has no behaviour for the write tool {name!r}")
        return behaviour(provider, arguments, operation_id=operation_id, actor=actor,
                         scope=scope, deadline=deadline)
    behaviour = READ_TOOLS.get(name)
    if behaviour is None:
        raise c.Unsupported(f"this server has no behaviour for the read tool {name!r}")
    return behaviour(provider, arguments, scope=scope, deadline=deadline)
