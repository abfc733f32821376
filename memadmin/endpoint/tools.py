"""What the agent tools do on the built-in store: remember, save, list, read (seed 001), and the
notes of seed 003: add_note, replace_note, remove_note and usage.

A resource declares which tools it offers and their input schemas; arguments are validated
against the declared schema before anything runs. A declared tool this server has no behaviour
for answers ``unsupported``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaValidationError

from memadmin.memory.store import NOTE_MATCHES_SHOWN, NOTE_PREFIX, BatchEntry, LocalProvider
from memadmin.privacy import screening as privacy
from memadmin.privacy import selectors as privacy_selectors
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


def validate_arguments(tool: dict[str, Any], arguments: Any, *,
                       validator: Draft202012Validator | None = None) -> dict[str, Any]:
    if not isinstance(arguments, dict):
        raise c.InvalidRequest("arguments must be an object")
    validator = validator or Draft202012Validator(tool.get("input") or {"type": "object"})
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
          deadline: float, namespace: Namespace | None = None) -> dict[str, Any]:
    item_id = args.get("id")
    if not isinstance(item_id, str):
        raise c.Unsupported("read needs a string argument 'id'")
    item = provider.get_item(item_id, scope=scope, deadline=deadline).item
    if item.quarantine == "pending":
        # Quarantined content never reaches a model; the agent learns only that it is held.
        return {"id": item.id, "source": item.source, "quarantined": True}
    content = item.content
    if namespace is not None and privacy.redacts_on_recall(namespace.resource):
        content = privacy.redacted_for_agent(content, privacy_selectors.stored_spans(item.id))
    return {"id": item.id, "source": item.source, "content": content,
            "revision": item.revision}


def _store(provider: c.Provider) -> LocalProvider:
    if not isinstance(provider, LocalProvider):  # the endpoint serves only the built-in store
        raise c.Unsupported("notes need the built-in store")
    return provider


def _the_note(provider: c.Provider, substring: Any, *, scope: c.Scope,
              deadline: float) -> Any:
    """The single note containing ``substring``; NotFound when none does, Conflict naming the
    matches (ids and keys, never their content) when several do."""
    if not isinstance(substring, str):
        raise c.Unsupported("the text to find must be a string")
    matches = _store(provider).notes_containing(substring, scope=scope, deadline=deadline)
    if not matches:
        raise c.NotFound("no note contains that text")
    if len(matches) > 1:
        shown = matches[:NOTE_MATCHES_SHOWN]
        more = "more than " if len(matches) > NOTE_MATCHES_SHOWN else ""
        raise c.Conflict(
            f"{more}{len(shown)} notes contain that text; give text only one of them contains",
            {"matches": [{"id": m.id, "key": m.key} for m in shown]})
    return matches[0]


def _add_note(provider: c.Provider, args: dict[str, Any], **kw: Any) -> dict[str, Any]:
    fact = args.get("fact")
    if not isinstance(fact, str):
        raise c.Unsupported("add_note needs a string argument 'fact'")
    [result] = _store(provider).retain_many([BatchEntry(fact, key_prefix=NOTE_PREFIX)], **kw)
    return _stored(result)


def _replace_note(provider: c.Provider, args: dict[str, Any], *, operation_id: str,
                  actor: str, scope: c.Scope, deadline: float) -> dict[str, Any]:
    new_text = args.get("new_text")
    if not isinstance(new_text, str):
        raise c.Unsupported("replace_note needs a string argument 'new_text'")
    note = _the_note(provider, args.get("old_substring"), scope=scope, deadline=deadline)
    # An edit like any other: the old text becomes a revision, the new one is screened, a
    # freeze refuses it, and a note changed since it was found is a conflict.
    result = provider.update_item(note.id, new_text, "replace", expected_revision=note.revision,
                                  operation_id=operation_id, actor=actor, scope=scope,
                                  deadline=deadline)
    return _stored(result)


def _remove_note(provider: c.Provider, args: dict[str, Any], *, operation_id: str,
                 actor: str, scope: c.Scope, deadline: float) -> dict[str, Any]:
    note = _the_note(provider, args.get("substring"), scope=scope, deadline=deadline)
    removed = provider.delete_items(ids=[note.id], operation_id=operation_id, actor=actor,
                                    scope=scope, deadline=deadline)
    if removed.held:
        raise c.Frozen("frozen")
    return {"status": "removed", "id": note.id}


def _usage(provider: c.Provider, args: dict[str, Any], *, scope: c.Scope,
           deadline: float) -> dict[str, Any]:
    """Seed 003's ``usage()``: (label, current, max) from the store's counters."""
    usage = _store(provider).usage(scope=scope, deadline=deadline)
    return {"label": "bytes", "current": usage.bytes, "max": usage.quota_bytes,
            "items": usage.items}


def _stored(result: c.RetainResult) -> dict[str, Any]:
    answer: dict[str, Any] = {"status": "stored", "id": result.id, "revision": result.revision}
    if result.quarantined:
        # Held for review: recall will not show it until a reviewer releases it.
        answer["quarantined"] = True
    return answer


WRITE_TOOLS: dict[str, ToolCall] = {"remember": _remember, "save": _save,
                                    "add_note": _add_note, "replace_note": _replace_note,
                                    "remove_note": _remove_note}
READ_TOOLS: dict[str, ToolCall] = {"list": _list, "read": _read, "usage": _usage}
#: Write tools a ``batch`` may call: each argument set becomes one new item.
BATCH_ENTRY: dict[str, Callable[[dict[str, Any]], BatchEntry]] = {
    "remember": lambda args: BatchEntry(_fact(args), _subject(args)),
    "add_note": lambda args: BatchEntry(_fact(args), key_prefix=NOTE_PREFIX),
}


def _fact(args: dict[str, Any]) -> str:
    content = args.get("fact", args.get("content"))
    if not isinstance(content, str):
        raise c.Unsupported("a batch entry needs a string argument 'fact'")
    return content


def _subject(args: dict[str, Any]) -> str | None:
    subject = args.get("subject")
    return subject if isinstance(subject, str) else None


def run_batch(provider: c.Provider, tool: dict[str, Any], batch: list[Any], *,
              may_write: bool, operation_id: str, actor: str, scope: c.Scope,
              deadline: float) -> dict[str, Any]:
    """Many calls of one write tool in one transaction (``retain_many``): every argument set
    is checked against the tool's declared input first; one refused refuses them all."""
    name = tool["name"]
    if tool.get("access") != "write" or name not in BATCH_ENTRY:
        raise c.Unsupported(f"the tool {name!r} cannot be batched; batch remember or add_note")
    if not may_write:
        raise c.Forbidden("this token is read-only")
    entries = []
    validator = Draft202012Validator(tool.get("input") or {"type": "object"})  # once a batch
    for index, arguments in enumerate(batch):
        try:
            entries.append(BATCH_ENTRY[name](validate_arguments(tool, arguments,
                                                                validator=validator)))
        except c.ProviderError as error:
            raise type(error)(f"/batch/{index}: {error.message}",
                              {**error.details, "index": index}) from None
    results = _store(provider).retain_many(entries, operation_id=operation_id, actor=actor,
                                           scope=scope, deadline=deadline)
    return batch_answer(results)


def batch_answer(results: list[c.RetainResult]) -> dict[str, Any]:
    """The answer of a batch and of ``observe``: how many were stored, how many of them the
    scanner held for review, and per item its id, revision and whether it was held."""
    return {"status": "stored", "stored": len(results),
            "quarantined": sum(1 for r in results if r.quarantined),
            "items": [_item(r) for r in results]}


def _item(result: c.RetainResult) -> dict[str, Any]:
    item: dict[str, Any] = {"id": result.id, "revision": result.revision}
    if result.quarantined:
        item["quarantined"] = True
    return item


def run_tool(provider: c.Provider, tool: dict[str, Any], arguments: dict[str, Any], *,
             may_write: bool, operation_id: str, actor: str, scope: c.Scope,
             deadline: float, namespace: Namespace | None = None) -> dict[str, Any]:
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
    if behaviour is _read:
        return _read(provider, arguments, scope=scope, deadline=deadline, namespace=namespace)
    return behaviour(provider, arguments, scope=scope, deadline=deadline)
