"""The HTTP client checks every provider answer against the protocol schema before reading it:
a hostile or broken answer is a clear ``Unavailable("invalid response: <pointer>: ...")`` that
names the field and never repeats the value the provider sent (a real server on loopback)."""

from __future__ import annotations

from typing import Any

import pytest

from memadmin.providers import contract as c
from memadmin.providers import wire_schema
from tests.providers.test_http_faults import (
    ALL,
    NOW,
    RECALL,
    SCOPE,
    item,
    make_provider,
    serve,
)

__all__ = ["serve"]  # the fixture, imported for this module

CANARY = "CANARY-hostile-provider-7f3a"


def _call(operation: str, provider: Any) -> Any:
    kw: dict[str, Any] = {"scope": SCOPE, "deadline": 2.0}
    if operation == "recall":
        return provider.recall("walrus", **kw)
    if operation == "retain":
        return provider.retain("facts", "k", "a fact", "replace", operation_id="op-1", **kw)
    if operation == "list":
        return provider.list_items(ALL, **kw)
    if operation == "count":
        return provider.count(ALL, **kw)
    if operation == "get":
        return provider.get_item("i-1", **kw)
    if operation == "delete":
        return provider.delete_items(ids=["i-1"], operation_id="op-2", **kw)
    if operation == "quarantine":
        return provider.set_quarantine("i-1", "clear", **kw)
    if operation == "capabilities":
        return provider.capabilities(deadline=2.0)
    raise AssertionError(operation)


#: (operation, hostile answer, the pointer the error must name)
HOSTILE = [
    ("recall", {**RECALL, "text": 5}, "/text"),
    ("recall", {**RECALL, "hits": [{"source": "s", "snippet": CANARY, "score": 7}]},
     "/hits/0/score"),
    ("recall", {**RECALL, "hits": [{"source": "s", "snippet": CANARY * 100, "score": 0.5}]},
     "/hits/0/snippet"),
    ("recall", {**RECALL, "sources": [{"id": CANARY, "updatedAt": CANARY}]},
     "/sources/0/updatedAt"),
    ("recall", {**RECALL, "injected": CANARY}, "/injected"),
    ("recall", {**RECALL, "sources": [{"id": "\u00e9" * 1000}]}, "/sources/0/id"),
    ("retain", {"id": "i-1", "bytes": -1, "revision": 1}, "/bytes"),
    ("retain", {"id": "i-1", "bytes": 3, "revision": 1, "rules": [CANARY] * 101}, "/rules"),
    ("retain", {"id": "i-1", "bytes": 3}, "/revision"),
    ("list", {"items": [{**item(1), "tier": CANARY}], "nextCursor": None}, "/items/0/tier"),
    ("list", {"items": [{**item(1), "createdAt": "2026-13-45T99:00:00Z"}]},
     "createdAt"),
    ("count", {"count": "many"}, "/count"),
    ("get", {"item": item(1), "revisions": []}, "/revisions"),
    ("get", {"item": item(1), "revisions": [{"revision": 1, "content": CANARY, "bytes": 1,
                                              "actor": "a", "createdAt": NOW,
                                              "quarantine": CANARY}]},
     "/revisions/0/quarantine"),
    ("delete", {"removed": 1}, "/held"),
    ("quarantine", {"ok": False}, "/ok"),
    ("capabilities", {"operations": ["recall"], "idempotentWrites": "yes", "version": 1},
     "/idempotentWrites"),
    ("capabilities", {"operations": ["recall"], "idempotentWrites": True, "version": 2},
     "/version"),
]


@pytest.mark.parametrize(("operation", "body", "where"), HOSTILE,
                         ids=[f"{op}-{where}" for op, _, where in HOSTILE])
def test_a_hostile_answer_is_a_clear_error_naming_the_field(serve, operation, body, where):
    server = serve(lambda conn, seen, n: conn.reply(200, body))

    with pytest.raises(c.Unavailable) as raised:
        _call(operation, make_provider(server.url))

    message = raised.value.message
    assert message.startswith("invalid response: "), message
    assert where in message, message
    assert CANARY not in message and CANARY not in repr(raised.value.details)


def test_nan_is_not_json(serve):
    server = serve(lambda conn, seen, n: conn.reply(
        200, raw=b'{"text":"x","sources":[],"hits":[{"source":"s","snippet":"s","score":NaN}]}'))

    with pytest.raises(c.Unavailable, match="invalid response: not JSON"):
        _call("recall", make_provider(server.url))


def test_a_newer_server_may_list_operations_this_client_does_not_know(serve):
    server = serve(lambda conn, seen, n: conn.reply(200, {
        "operations": ["recall", "retain", "teleport"], "idempotentWrites": True,
        "version": 1}))

    assert _call("capabilities", make_provider(server.url)) == frozenset(
        {"recall", "retain", c.IDEMPOTENT_WRITES})


def test_an_integral_number_reads_as_an_int(serve):
    # JSON has one number type: 3.0 is a valid integer, and the result carries an int.
    server = serve(lambda conn, seen, n: conn.reply(200, {"id": "i-1", "bytes": 3.0,
                                                          "revision": 2.0}))

    result = _call("retain", make_provider(server.url))

    assert (result.bytes, result.revision) == (3, 2)
    assert type(result.bytes) is int and type(result.revision) is int


def test_the_package_schema_is_the_documented_one():
    from pathlib import Path

    documented = Path(__file__).resolve().parents[2] / "docs" / "provider-protocol.schema.json"
    assert wire_schema.SCHEMA_PATH.read_bytes() == documented.read_bytes()


def test_the_two_validators_agree_on_every_case_here():
    # jsonschema-rs decides, jsonschema explains: a refusal both see, and a valid answer both
    # accept (else a refusal would come without its reason).
    for operation, body, _ in HOSTILE:
        name = {"recall": "RecallResponse", "retain": "WriteResult", "list": "ItemPage",
                "count": "CountResponse", "get": "GetResponse", "delete": "DeleteResponse",
                "quarantine": "OkResponse", "capabilities": "CapabilitiesResponse"}[operation]
        fast = wire_schema._fast(name).is_valid(body)
        slow = wire_schema.validator(name).is_valid(body)
        assert fast == slow, (operation, body)
    assert wire_schema.problem(RECALL, "RecallResponse") is None
