"""Serving one wire request against the built-in store: envelope checks, scope, dispatch."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from django.db import DatabaseError, connection
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.endpoint.auth import Caller
from memadmin.endpoint.tools import (
    batch_answer,
    declared_tool,
    run_batch,
    run_tool,
    validate_arguments,
)
from memadmin.events import services as events
from memadmin.lib.bounded import OutOfTime, is_timeout, statements_within
from memadmin.memory.store import BatchEntry, LocalProvider
from memadmin.providers import contract as c
from memadmin.providers import wire, wire_schema
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import provider_for
from memadmin.workspaces.models import Namespace, Resource

MAX_DEADLINE = 30.0
#: Time kept back from ``deadlineAt`` for the answer to reach the caller: 50 ms, or a tenth of
#: a shorter budget.
ANSWER_MARGIN = 0.05
#: Admin reads that are not worth an audit event each (health polling, discovery).
UNAUDITED = frozenset({"health", "capabilities"})


def _request_def(operation: str) -> str:
    """The schema's ``$def`` of an operation's request (``recall`` -> ``RecallRequest``)."""
    return operation[0].upper() + operation[1:] + "Request"


#: Fields that name ids, partitions and cursors: JSON Schema's maxLength counts characters, the
#: store's limit is 1,024 UTF-8 bytes.
_ID_FIELDS = ("operationId", "partition", "cursor", "id")
_ID_LISTS = ("ids", "excludeIds")


def _check_id_bytes(body: dict[str, Any]) -> None:
    for key in _ID_FIELDS:
        value = body.get(key)
        if isinstance(value, str) and len(value.encode("utf-8")) > c.MAX_ID_BYTES:
            raise c.InvalidRequest(f"/{key}: is longer than {c.MAX_ID_BYTES} bytes")
    lists = [(key, body.get(key)) for key in _ID_LISTS]
    scope = body.get("scope")
    if isinstance(scope, dict):
        lists.append(("scope/partitions", scope.get("partitions")))
    for key, values in lists:
        for index, value in enumerate(values if isinstance(values, list) else []):
            if isinstance(value, str) and len(value.encode("utf-8")) > c.MAX_ID_BYTES:
                raise c.InvalidRequest(f"/{key}/{index}: is longer than {c.MAX_ID_BYTES} bytes")


#: Integer fields of requests: JSON Schema counts 50.0 as an integer, the store wants an int.
_INTEGER_FIELDS = ("version", "limit", "maxBytes", "expectedRevision")


def _whole_numbers(body: dict[str, Any]) -> None:
    for key in _INTEGER_FIELDS:
        if isinstance(body.get(key), float):
            body[key] = int(body[key])


def _schema_check(body: Any, name: str) -> None:
    problem = wire_schema.problem(body, name)
    if problem is not None:
        raise c.InvalidRequest(problem, {"pointer": problem.partition(":")[0]})


class Request:
    """One decoded request, checked against the protocol schema (the envelope first, then,
    once the caller may use the operation at all, the operation's own ``$def``)."""

    def __init__(self, body: Any, caller: Caller, deadline: c.Deadline) -> None:
        wire.check_strings(body)
        _schema_check(body, "Envelope")
        self.body, self.caller, self.operation = body, caller, str(body["operation"])
        self.operation_id = str(body["operationId"])
        deadline_at = wire.parse_time(body["deadlineAt"], "deadlineAt")
        if deadline_at <= timezone.now():
            raise c.Timeout("deadlineAt has already passed")
        self.deadline = deadline
        if caller.is_agent and self.operation not in wire.AGENT_OPERATIONS:
            raise c.Forbidden("agent tokens may only recall, observe and use tools")
        if caller.is_agent:
            _schema_check(body, "AgentEnvelope")  # an agent names its one partition
        if self.operation in wire.AGENT_ONLY_OPERATIONS and not caller.is_agent:
            raise c.Forbidden(f"{self.operation} is for agent tokens")
        _schema_check(body, _request_def(self.operation))
        _check_id_bytes(body)
        _whole_numbers(body)

    def namespaces(self) -> list[Namespace]:
        """The namespaces the request reaches, each checked against the credential."""
        if self.caller.is_agent or "partition" in self.body:
            partition = self.body["partition"]
            partitions: list[Any] = [partition]
            if self.caller.is_agent and partition not in self.caller.partitions:
                raise c.Forbidden("this token does not reach that partition")
        else:
            partitions = self.body["scope"]["partitions"]
        found = _reachable(sorted(set(partitions)), self.caller.workspace.pk)
        if len(found) != len(set(partitions)):
            # Partitions of other workspaces look exactly like unknown ones. An admin scope
            # answers what the store itself answers for an unknown partition (not_found), so a
            # remote provider behaves like the built-in one; an agent token was already checked
            # against its own partitions, and anything else it names is forbidden.
            if self.caller.is_agent:
                raise c.Forbidden("the credential does not reach every partition asked for")
            raise c.NotFound("unknown partition for this credential")
        if len({ns.resource.provider_id for ns in found}) != 1:
            raise c.InvalidRequest("a scope must stay within one provider")
        return found


_PARTITION = "\x00partition"  # placeholders of the compiled lookup, replaced on every call
_WORKSPACE = uuid.UUID(int=0)
#: The columns of a namespace row: the namespace's, then its resource's and its provider's.
_NAMESPACE_FIELDS = [f.attname for f in Namespace._meta.concrete_fields]
_RESOURCE_FIELDS = [f.attname for f in Resource._meta.concrete_fields]
_PROVIDER_FIELDS = [f.attname for f in ProviderConfig._meta.concrete_fields]


def _reachable_queryset(partitions: Sequence[str], workspace_id: Any) -> Any:
    return Namespace.objects.filter(
        partition_key__in=partitions, resource__workspace_id=workspace_id,
        resource__provider__kind="local", resource__provider__enabled=True,
    ).select_related("resource__provider")


@functools.lru_cache(maxsize=64)
def _reachable_sql(count: int) -> tuple[str, tuple[Any, ...], dict[int, Any]]:
    """The lookup of ``count`` partitions, compiled by the ORM once a process per count (its
    rules stay the queryset's; the latest 64 counts are kept, an agent always names one), and
    the converters its columns take (JSON, encrypted text); the partitions and the workspace
    are bound on every call."""
    names = [f"{_PARTITION}{n}" for n in range(count)]
    compiler = _reachable_queryset(names, _WORKSPACE).query.get_compiler("default")
    sql, params = compiler.as_sql()
    converters = compiler.get_converters([column for column, _, _ in compiler.select])
    expected = len(_NAMESPACE_FIELDS) + len(_RESOURCE_FIELDS) + len(_PROVIDER_FIELDS)
    if (set(names) | {_WORKSPACE}) - set(params) or len(compiler.select) != expected:
        raise RuntimeError(  # pragma: no cover - a changed rule or model
            "the namespace lookup no longer takes the partitions and the workspace")
    return sql, tuple(params), converters


def _reachable(partitions: list[str], workspace_id: Any) -> list[Namespace]:
    """The enabled built-in store's namespaces of the workspace among ``partitions``, each with
    its resource and provider: what ``_reachable_queryset`` finds, without compiling it."""
    sql, template, converters = _reachable_sql(len(partitions))
    values = {f"{_PARTITION}{n}": p for n, p in enumerate(partitions)}
    params = [values.get(p, p) if isinstance(p, str) else workspace_id if p == _WORKSPACE
              else p for p in template]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = [list(row) for row in cursor.fetchall()]
    found = []
    first, second = len(_NAMESPACE_FIELDS), len(_NAMESPACE_FIELDS) + len(_RESOURCE_FIELDS)
    for row in rows:
        for index, (functions, expression) in converters.items():
            for function in functions:
                row[index] = function(row[index], expression, connection)
        namespace = Namespace.from_db("default", _NAMESPACE_FIELDS, row[:first])
        resource = Resource.from_db("default", _RESOURCE_FIELDS, row[first:second])
        provider = ProviderConfig.from_db("default", _PROVIDER_FIELDS, row[second:])
        Resource._meta.get_field("provider").set_cached_value(resource, provider)
        Namespace._meta.get_field("resource").set_cached_value(namespace, resource)
        found.append(namespace)
    return found


def request_deadline(body: Any) -> c.Deadline:
    """The deadline of a request, taken from its ``deadlineAt`` before anything else runs:
    that moment less the answer's margin, on the monotonic clock, at most 30 seconds away.
    Without a usable ``deadlineAt`` the request will be refused after authentication; until
    then it gets the longest budget."""
    try:
        deadline_at = wire.parse_time(body.get("deadlineAt"), "deadlineAt")
    except (c.ProviderError, AttributeError):
        return c.Deadline.after(MAX_DEADLINE)
    remaining = (deadline_at - timezone.now()).total_seconds()
    remaining -= min(ANSWER_MARGIN, max(remaining, 0.0) / 10)
    return c.Deadline.after(min(remaining, MAX_DEADLINE))


def bounded[T](deadline: c.Deadline, step: Callable[[], T]) -> T:
    """Run ``step`` (authentication, the partition lookup, a handler and its audit event) in one
    transaction whose every statement gets only the time left; ``Timeout`` when it runs out,
    also when the work is done but the time ran out before the commit (then it is rolled back).
    """
    try:
        with statements_within(deadline.remaining):
            return step()
    except OutOfTime:
        raise c.Timeout("the request did not finish within its deadline") from None
    except DatabaseError as exc:
        if is_timeout(exc):
            raise c.Timeout("the request did not finish within its deadline") from None
        raise


def serve(body: Any, caller: Caller, deadline: c.Deadline) -> dict[str, Any]:
    """The JSON answer to one request, or a ProviderError; run inside the request's bounded
    transaction (``bounded``), which the audit event of an admin operation shares."""
    request = Request(body, caller, deadline)
    if request.operation in wire.UNSCOPED_OPERATIONS:
        return _unscoped(request)
    namespaces = request.namespaces()
    provider = provider_for(namespaces[0].resource.provider)
    if isinstance(provider, LocalProvider):
        # Resolved and checked just now: the store need not look them up again.
        provider.resolved(namespaces)
    scope = c.Scope(tuple(ns.partition_key for ns in namespaces))
    handler = HANDLERS[request.operation]
    # Webhook endpoints are read once for the request, however many items it writes.
    with events.subscribers_cached():
        if caller.is_agent:
            return handler(request, provider, scope, namespaces)
        return _audited(request, handler, provider, scope, namespaces)


def _audited(request: Request, handler: Any, provider: c.Provider, scope: c.Scope,
             namespaces: list[Namespace]) -> dict[str, Any]:
    """An admin operation and its audit event, in the caller's (bounded) transaction."""
    caller = request.caller
    answer = handler(request, provider, scope, namespaces)
    audit_event_create(
        workspace=caller.workspace, actor=Actor.system(caller.label),
        action=f"api.{request.operation}", target_type="scope",
        target_id=",".join(ns.slug for ns in namespaces)[:1000],
        data={"operation_id_chars": len(request.operation_id),
              "partitions": len(namespaces), **_audit_counts(answer),
              **_audit_request(request)},
    )
    return answer


def _audit_request(request: Request) -> dict[str, Any]:
    """What was asked, where the trail needs it (a legal hold lifted, a hold overridden); the
    handler has already checked these values. Never content, never a subject id."""
    body = request.body
    if request.operation == "freeze":
        target = body["target"]
        return {"kind": body["kind"], "action": body.get("action") or "place",
                "level": target["level"]}
    if request.operation == "quarantine":
        return {"state": body["state"]}
    if request.operation == "forget":
        return {"override_hold": body.get("overrideHold") is True,
                "by_subject": body.get("dataSubjectId") is not None}
    return {}


def _audit_counts(answer: dict[str, Any]) -> dict[str, Any]:
    counts: dict[str, Any] = {k: answer[k] for k in ("removed", "held", "count", "revision")
                              if k in answer}
    if isinstance(answer.get("items"), list):
        counts["items"] = len(answer["items"])
    if isinstance(answer.get("id"), str):
        counts["item"] = answer["id"]
    return counts


def _unscoped(request: Request) -> dict[str, Any]:
    if request.operation == "capabilities":
        return wire.capabilities_to_wire(c.OPERATIONS | wire.AGENT_OPERATIONS,
                                         idempotent_writes=True)
    # health: the built-in store of this workspace answers for itself.
    config = (request.caller.workspace.providers.filter(kind="local", enabled=True)
              .order_by("created_at").first())
    if config is None:
        raise c.Unavailable("this workspace has no enabled built-in provider")
    provider = provider_for(config)
    return wire.health_to_wire(provider.health(
        deadline=min(request.deadline.remaining(), config.health_deadline_ms / 1000)))


Handler = Any


def _kw(request: Request, scope: c.Scope) -> dict[str, Any]:
    # The time left now (the store builds its own Deadline from it at once).
    return {"scope": scope, "deadline": request.deadline.remaining()}


def _write_kw(request: Request, scope: c.Scope) -> dict[str, Any]:
    if not request.caller.may_write:
        raise c.Forbidden("this token is read-only")
    return {"operation_id": request.operation_id, "actor": request.caller.label,
            **_kw(request, scope)}


def _compliance_over_wire(request: Request, what: str) -> None:
    """Legal holds and their overrides are compliance decisions, and quarantined content is for
    the review screen: an admin credential carries them only where the workspace enabled it."""
    if not request.caller.is_agent and not request.caller.workspace.wire_compliance:
        raise c.Forbidden(f"{what} over the wire is off for this workspace (workspace setting "
                          "'Admin credentials may carry compliance decisions over the wire')")


def _withhold_pending(request: Request, item: dict[str, Any]) -> dict[str, Any]:
    """A pending item's content never leaves by the wire unless the workspace enabled it."""
    if item.get("quarantine") == "pending" and not request.caller.workspace.wire_compliance:
        item["content"] = ""
    return item


def _recall(request: Request, provider: c.Provider, scope: c.Scope, _: Any) -> dict[str, Any]:
    body = request.body
    text = body.get("input", {}).get("text")
    max_bytes = body.get("maxBytes")
    limit = body.get("limit", c.RECALL_MAX_HITS)
    return _fit_recall(wire.recall_to_wire(provider.recall(text, limit=limit,
                                                           max_bytes=max_bytes,
                                                           **_kw(request, scope))))


def _fit_recall(answer: dict[str, Any]) -> dict[str, Any]:
    """Keep a recall answer within the body limit even for content JSON escapes six-fold
    (control characters): drop the weakest hits first, then shorten the text (a recall that
    answers 413 would block the agent for as long as that content stays)."""
    budget = wire.MAX_BODY_BYTES - 1024
    size = len(wire.dumps(answer))
    while size > budget and answer["hits"]:
        answer["hits"].pop()
        size = len(wire.dumps(answer))
    if size > budget:
        # The longest prefix (cut on a character boundary) that fits: a binary search.
        text, fits, too_long = answer["text"], 0, len(answer["text"].encode("utf-8"))
        while too_long - fits > 1:
            middle = (fits + too_long) // 2
            answer["text"] = c.utf8_cut(text, middle)
            if len(wire.dumps(answer)) <= budget:
                fits = middle
            else:
                too_long = middle
        answer["text"] = c.utf8_cut(text, fits)
    return answer


def _tool(request: Request, provider: c.Provider, scope: c.Scope,
          namespaces: list[Namespace]) -> dict[str, Any]:
    tool = declared_tool(namespaces[0], request.body["tool"])
    kw: dict[str, Any] = {"may_write": request.caller.may_write,
                          "operation_id": request.operation_id, "actor": request.caller.label,
                          "scope": scope, "deadline": request.deadline.remaining()}
    if "batch" in request.body:
        return {"result": run_batch(provider, tool, request.body["batch"], **kw)}
    arguments = validate_arguments(tool, request.body.get("arguments", {}))
    return {"result": run_tool(provider, tool, arguments, namespace=namespaces[0], **kw)}


def _observe(request: Request, provider: c.Provider, scope: c.Scope,
             _: Any) -> dict[str, Any]:
    """Conversation turns, fire-and-forget (seed 002's ``observe(role, text)``): each turn a
    new ``facts`` item keyed ``turn-<role>-...``, all in one transaction, each screened."""
    if not isinstance(provider, LocalProvider):
        raise c.Unsupported("observe needs the built-in store")
    body = request.body
    subject = body.get("dataSubjectId")
    entries = [BatchEntry(turn["text"], subject, f"turn-{turn['role']}-")
               for turn in body["turns"]]
    results = provider.retain_many(entries, **_write_kw(request, scope))
    return batch_answer(results)


def _expiry_kw(body: dict[str, Any]) -> dict[str, Any]:
    """``expires_at`` only when the body sets it (providers without per-item expiry then
    answer ``unsupported``; without it they are called as before)."""
    value = wire.expiry_from_wire(body)
    return {} if value is c.KEEP else {"expires_at": value}


def _retain(request: Request, provider: c.Provider, scope: c.Scope, _: Any) -> dict[str, Any]:
    body = request.body
    result = provider.retain(
        body["tier"], body.get("key", ""), body["content"], body["mode"],
        data_subject_id=body.get("dataSubjectId"),
        **_expiry_kw(body), **_write_kw(request, scope))
    return wire.write_result_to_wire(result)


def _page(request: Request, provider: c.Provider, scope: c.Scope, _: Any) -> dict[str, Any]:
    """list and export: a page of items that fits the 64 KiB body limit."""
    body = request.body
    filters = wire.filters_from_wire(body.get("filters"))
    cursor = body.get("cursor")
    limit = body.get("limit", 50)
    while True:
        page = provider.list_items(filters, cursor=cursor, limit=limit, **_kw(request, scope))
        answer = {"items": [_withhold_pending(request, wire.item_to_wire(i))
                            for i in page.items],
                  "nextCursor": page.next_cursor}
        if len(wire.dumps(answer)) <= wire.MAX_BODY_BYTES - 1024 or limit == 1:
            return answer
        limit = max(1, limit // 2)


def _count(request: Request, provider: c.Provider, scope: c.Scope, _: Any) -> dict[str, Any]:
    filters = wire.filters_from_wire(request.body.get("filters"))
    return {"count": provider.count(filters, **_kw(request, scope))}


def _get(request: Request, provider: c.Provider, scope: c.Scope, _: Any) -> dict[str, Any]:
    detail = provider.get_item(request.body["id"], **_kw(request, scope))
    if detail.item.quarantine == "pending":
        _compliance_over_wire(request, "reading quarantined content")
    # The newest revisions that fit the body limit, and how many were left out.
    return wire.detail_to_wire(detail)


def _update(request: Request, provider: c.Provider, scope: c.Scope, _: Any) -> dict[str, Any]:
    body = request.body
    result = provider.update_item(
        body["id"], body["content"], body["mode"], expected_revision=body["expectedRevision"],
        **_expiry_kw(body),
        **_write_kw(request, scope))
    return wire.write_result_to_wire(result)


def _delete(request: Request, provider: c.Provider, scope: c.Scope, _: Any) -> dict[str, Any]:
    body = request.body
    filters = body.get("filters")
    result = provider.delete_items(
        ids=body.get("ids"),
        filters=wire.filters_from_wire(filters) if filters is not None else None,
        exclude_ids=body.get("excludeIds", []), limit=body.get("limit"),
        **_write_kw(request, scope))
    return wire.removal_to_wire(result)


def _forget(request: Request, provider: c.Provider, scope: c.Scope, _: Any) -> dict[str, Any]:
    body = request.body
    override_hold = body.get("overrideHold", False)
    if override_hold:
        _compliance_over_wire(request, "overriding a legal hold")
    result = provider.forget(
        item_id=body.get("id"), data_subject_id=body.get("dataSubjectId"),
        override_hold=override_hold, **_write_kw(request, scope))
    return wire.removal_to_wire(result)


def _freeze(request: Request, provider: c.Provider, scope: c.Scope, _: Any) -> dict[str, Any]:
    body = request.body
    target = wire.target_from_wire(body.get("target"))
    kind, action = body["kind"], body.get("action", "place")
    kw = _write_kw(request, scope)
    kw.pop("operation_id")
    if action == "place":
        provider.freeze(target, kind=kind, reason=body["reason"], **kw)
    else:  # lift (the schema allows nothing else)
        if kind == "legal_hold":
            _compliance_over_wire(request, "lifting a legal hold")
        provider.lift_freeze(target, kind=kind, **kw)
    return {"ok": True}


def _quarantine(request: Request, provider: c.Provider, scope: c.Scope,
                _: Any) -> dict[str, Any]:
    body = request.body
    _write_kw(request, scope)
    provider.set_quarantine(body["id"], body["state"],
                            **_kw(request, scope))
    return {"ok": True}


HANDLERS: dict[str, Handler] = {
    "recall": _recall, "tool": _tool, "retain": _retain, "list": _page, "export": _page,
    "count": _count, "get": _get, "update": _update, "delete": _delete, "forget": _forget,
    "freeze": _freeze, "quarantine": _quarantine, "observe": _observe,
}
