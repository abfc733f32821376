"""The endpoint refuses every request the protocol schema refuses, as ``invalid_request`` with
a message that names the field by JSON pointer and never repeats a value (it may be content),
and writes nothing."""

from __future__ import annotations

import pytest

from tests.endpoint.conftest import envelope

CANARY = "CANARY-hostile-body-5c1d"

#: (operation, fields, the pointer the message must start with)
HOSTILE = [
    ("retain", {"tier": CANARY, "content": "x", "mode": "replace"}, "/tier:"),
    ("retain", {"tier": "facts", "content": 5, "mode": "replace"}, "/content:"),
    ("retain", {"tier": "facts", "mode": "replace", "key": CANARY}, "/content:"),
    ("retain", {"tier": "facts", "content": CANARY, "mode": CANARY}, "/mode:"),
    ("retain", {"tier": "facts", "content": CANARY, "mode": "replace",
                "dataSubjectId": CANARY * 20}, "/dataSubjectId:"),
    ("list", {"filters": {CANARY: 1}}, "/filters: has a field that is not known here"),
    ("list", {"filters": {"colour": CANARY}}, "/filters/colour: is not a known field here"),
    ("list", {"filters": {"frozen": CANARY}}, "/filters/frozen:"),
    ("list", {"filters": {"updatedSince": CANARY}}, "/filters/updatedSince:"),
    ("list", {"limit": 0}, "/limit:"),
    ("list", {"limit": 10**30}, "/limit:"),
    ("delete", {"ids": ["a"], "filters": {}}, "the body: give only one of /ids, /filters"),
    ("delete", {"ids": [CANARY, 5]}, "/ids/1:"),
    ("update", {"id": "x", "content": CANARY, "mode": "replace", "expectedRevision": 0},
     "/expectedRevision:"),
    ("freeze", {"kind": "freeze", "target": {"level": "item"}, "reason": CANARY},
     "/target/itemId:"),
    ("quarantine", {"id": "x", "state": CANARY}, "/state:"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("operation", "fields", "where"), HOSTILE,
                         ids=[f"{op}-{where}" for op, _, where in HOSTILE])
def test_a_hostile_body_names_the_field_never_the_value(api, operation, fields, where):
    with api.unchanged(audit=False):
        error = api.admin(operation, 400, "invalid_request", request_valid=False, **fields)

    assert error["message"].startswith(where), error
    assert CANARY not in error["message"]
    assert CANARY not in repr(error["details"])
    assert error["details"]["pointer"] == error["message"].partition(":")[0]


@pytest.mark.django_db
def test_the_envelope_is_checked_first(api):
    for field, value, where in (("version", True, "/version:"),
                                ("operation", CANARY, "/operation:"),
                                ("deadlineAt", CANARY, "/deadlineAt:"),
                                ("operationId", "", "/operationId:")):
        body = envelope("recall", partition=api.tokens.partition)
        body[field] = value
        error = api.wire.refused(body, api.tokens.rw, 400, "invalid_request",
                                 request_valid=False)
        assert error["message"].startswith(where), error
        assert CANARY not in error["message"]


@pytest.mark.django_db
def test_a_missing_envelope_field_is_named(api):
    body = envelope("recall", partition=api.tokens.partition)
    del body["operationId"]
    error = api.wire.refused(body, api.tokens.rw, 400, "invalid_request", request_valid=False)
    assert error["message"] == "/operationId: is required"


@pytest.mark.django_db
def test_a_byte_limit_the_schema_cannot_count_is_named_too(api):
    # 600 two-byte characters: within maxLength (characters), over 1,024 UTF-8 bytes.
    error = api.admin("get", 400, "invalid_request", id="\u00e9" * 600, request_valid=None)
    assert error["message"] == "/id: is longer than 1024 bytes"


@pytest.mark.django_db
def test_an_integral_float_counts_as_the_integer(api):
    # JSON Schema (and JSON) give 2.0 the value 2: the store gets an int, not a 500.
    api.retain("one", key="a")
    api.retain("two", key="b")
    page = api.admin("list", limit=1.0)
    assert len(page["items"]) == 1
