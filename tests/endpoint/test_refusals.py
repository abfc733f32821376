"""What the endpoint refuses, with which code and status, and that a refusal writes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from memadmin.gdpr.models import Tombstone
from memadmin.lib.keys import subject_hash
from memadmin.memory.models import AgentToken, MemoryItem
from memadmin.memory.services import agent_token_revoke
from memadmin.workspaces.models import AdminCredential
from memadmin.workspaces.services import admin_credential_revoke
from tests.endpoint.conftest import ENDPOINT, SYSTEM, Api, deadline_at, envelope

LONG = "x" * 1025  # one byte over the 1,024-byte limit of ids, cursors and partitions


def _remember(api: Api, **fields: Any) -> dict[str, Any]:
    return envelope("tool", partition=api.tokens.partition, tool="remember",
                    arguments={"fact": "a fact"}, **fields)


# -- the envelope -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 0, "1", True, None], ids=repr)
def test_it_refuses_a_wrong_or_missing_version(api: Api, version: object) -> None:
    body = _remember(api)
    if version is None:
        del body["version"]
    else:
        body["version"] = version
    with api.unchanged():
        api.wire.refused(body, api.tokens.rw, 400, "invalid_request", request_valid=False)


def test_it_refuses_an_unknown_operation(api: Api) -> None:
    with api.unchanged():
        for operation in ("drop_table", "Recall", None):
            body = _remember(api)
            body["operation"] = operation
            api.wire.refused(body, api.tokens.rw, 400, "invalid_request", request_valid=False)


def test_it_refuses_an_expired_deadline_as_timeout(api: Api) -> None:
    with api.unchanged():
        body = _remember(api, deadlineAt=deadline_at(-1))
        # A time in the past is well-formed: only the server can tell it has passed.
        api.wire.refused(body, api.tokens.rw, 504, "timeout", request_valid=True)
        api.admin("retain", 504, "timeout", tier="facts", content="x", mode="replace",
                  deadline_in=-0.001)


@pytest.mark.parametrize("deadline", [None, "", "tomorrow", "2030-01-01T00:00:00",
                                      "2030-01-01", 1_900_000_000, "9" * 80],
                         ids=["missing", "empty", "words", "no-zone", "date-only", "number",
                              "too-long"])
def test_it_refuses_a_missing_or_garbage_deadline(api: Api, deadline: object) -> None:
    body = _remember(api)
    if deadline is None:
        del body["deadlineAt"]
    else:
        body["deadlineAt"] = deadline
    with api.unchanged():
        api.wire.refused(body, api.tokens.rw, 400, "invalid_request", request_valid=False)


def test_it_accepts_a_deadline_with_an_offset(api: Api) -> None:
    body = _remember(api, deadlineAt=deadline_at(5).replace("Z", "+00:00"))

    assert api.wire.post(body, api.tokens.rw).status == 200


def test_it_refuses_a_body_over_64_kib(api: Api) -> None:
    body = envelope("count", partitions=[api.tokens.partition], filters={})
    body["padding"] = ""
    exact = len(json.dumps(body).encode())
    body["padding"] = "p" * (64 * 1024 - exact)
    assert len(json.dumps(body).encode()) == 64 * 1024
    assert api.wire.post(body, api.tokens.admin).status == 200  # exactly 64 KiB is fine

    body["padding"] += "p"
    write = _remember(api, padding="p" * (64 * 1024))
    with api.unchanged():
        api.wire.refused(body, api.tokens.admin, 413, "too_large")
        api.wire.refused(write, api.tokens.rw, 413, "too_large")


@pytest.mark.parametrize("raw", [b"{", b"", b"{'version': 1}", b"\xff\xfe{}",
                                 b'{"version": NaN}', b'{"version": Infinity}',
                                 b'{"a": "\x00"}'],
                         ids=["truncated", "empty", "single-quotes", "not-utf8", "nan",
                              "infinity", "raw-nul"])
def test_it_refuses_invalid_json(api: Api, raw: bytes) -> None:
    with api.unchanged():
        api.wire.refused({}, api.tokens.rw, 400, "invalid_request", raw=raw,
                         request_valid=None)


@pytest.mark.parametrize("body", [[], "recall", 1, None], ids=repr)
def test_it_refuses_a_body_that_is_not_an_object(api: Api, body: object) -> None:
    api.wire.refused(body, api.tokens.rw, 400, "invalid_request", raw=json.dumps(body).encode(),
                     request_valid=None)


def test_it_refuses_bodies_nested_too_deeply(api: Api) -> None:
    for depth in (65, 950, 5000):
        raw = json.dumps(_remember(api))[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}"
        with api.unchanged():
            api.wire.refused({}, api.tokens.rw, 400, "invalid_request", raw=raw.encode(),
                             request_valid=None)
    shallow = _remember(api, x=json.loads("[" * 60 + "]" * 60))
    assert api.wire.post(shallow, api.tokens.rw).status == 200


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "application/xml"])
def test_it_refuses_a_body_that_is_not_declared_json(api: Api, content_type: str) -> None:
    body = _remember(api)
    with api.unchanged():
        api.wire.refused(body, api.tokens.rw, 400, "invalid_request",
                         content_type=content_type)


def test_it_accepts_json_with_a_charset(api: Api) -> None:
    body = _remember(api)

    answer = api.wire.post(body, api.tokens.rw, content_type="application/json; charset=utf-8")

    assert answer.status == 200


# -- lengths ------------------------------------------------------------------------------------


def test_it_refuses_ids_cursors_and_partitions_over_1024_bytes(api: Api) -> None:
    made = api.retain("present")
    with api.unchanged():
        api.agent("recall", 400, "invalid_request", partition=LONG, request_valid=False)
        api.agent("tool", 400, "invalid_request", operation_id=LONG, tool="remember",
                  arguments={"fact": "x"}, request_valid=False)
        api.admin("list", 400, "invalid_request", partitions=[api.tokens.partition, LONG],
                  request_valid=False)
        api.admin("get", 400, "invalid_request", id=LONG, request_valid=False)
        api.admin("list", 400, "invalid_request", cursor=LONG, request_valid=False)
        api.admin("delete", 400, "invalid_request", ids=[made["id"], LONG], request_valid=False)
        api.admin("delete", 400, "invalid_request", ids=[made["id"]], excludeIds=[LONG],
                  request_valid=False)
        api.admin("forget", 400, "invalid_request", id=LONG, request_valid=False)
        api.admin("update", 400, "invalid_request", id=LONG, content="x", mode="replace",
                  expectedRevision=1, request_valid=False)
        api.agent("tool", 400, "invalid_request", tool="list", arguments={"cursor": LONG})
        api.agent("tool", 400, "invalid_request", tool="read", arguments={"id": LONG})


def test_it_counts_the_1024_byte_limit_in_utf8_bytes(api: Api) -> None:
    wide = "é" * 513  # 513 characters, 1,026 bytes
    with api.unchanged():
        api.admin("get", 400, "invalid_request", id=wide, request_valid=None)
        api.agent("recall", 400, "invalid_request", partition=wide, request_valid=None)
    api.admin("get", 404, "not_found", id="é" * 512)  # 1,024 bytes: allowed, just unknown


@pytest.mark.parametrize("fields", [{"maxBytes": 0}, {"maxBytes": 16385}, {"limit": 0},
                                    {"maxBytes": "8192"}, {"input": "text"},
                                    {"input": {"text": 5}}], ids=repr)
def test_it_refuses_a_broken_recall(api: Api, fields: dict[str, Any]) -> None:
    api.agent("recall", 400, "invalid_request", request_valid=False, **fields)


def test_it_refuses_a_delete_limit_beyond_what_the_store_takes(api: Api) -> None:
    api.retain("stays")
    with api.unchanged():
        for limit in (0, 2**31, 10**20):
            api.admin("delete", 400, "invalid_request", filters={}, limit=limit,
                      request_valid=False)


def test_it_refuses_a_page_limit_out_of_range(api: Api) -> None:
    for limit in (0, 501, 10**20):
        api.admin("list", 400, "invalid_request", limit=limit, request_valid=False)


# -- NUL and lone surrogates --------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["\x00", "\ud800", "\udfff"], ids=["nul", "high", "low"])
@pytest.mark.parametrize("where", ["argument", "argument-key", "operation-id", "nested-list",
                                   "ignored-field", "partition"])
def test_it_refuses_nul_and_lone_surrogates_anywhere(api: Api, bad: str, where: str) -> None:
    body = _remember(api)
    if where == "argument":
        body["arguments"]["fact"] = f"a{bad}b"
    elif where == "argument-key":
        body["arguments"][f"k{bad}"] = "v"
    elif where == "operation-id":
        body["operationId"] += bad
    elif where == "nested-list":
        body["extra"] = {"deep": ["ok", [f"x{bad}"]]}
    elif where == "ignored-field":
        body[f"unused{bad}"] = 1
    else:
        body["partition"] = api.tokens.partition + bad
    raw = json.dumps(body).encode()  # ASCII JSON: "\u0000", "\ud800" escapes
    assert b"\\u" in raw
    with api.unchanged():
        api.wire.refused(body, api.tokens.rw, 400, "invalid_request", raw=raw,
                         request_valid=None)


def test_it_refuses_nul_in_admin_content(api: Api) -> None:
    with api.unchanged():
        api.admin("retain", 400, "invalid_request", tier="facts", content="a\x00b",
                  mode="replace", request_valid=None)
        api.admin("list", 400, "invalid_request", filters={"q": "\ud800"}, request_valid=None)


# -- credentials and method ---------------------------------------------------------------------


def test_it_refuses_a_request_without_a_bearer_token(api: Api) -> None:
    body = _remember(api)
    with api.unchanged():
        api.wire.refused(body, None, 401, "unauthorized")
        for header in ("", "Bearer", "Bearer ", f"Basic {api.tokens.rw}", api.tokens.rw,
                       f"Token {api.tokens.rw}"):
            answer = Client().post(ENDPOINT, data=json.dumps(body),
                                   content_type="application/json",
                                   HTTP_AUTHORIZATION=header)
            assert answer.status_code == 401, header
            api.wire.check.validate(answer.json(), "ErrorEnvelope")


def test_it_refuses_an_unknown_token(api: Api) -> None:
    body = _remember(api)
    with api.unchanged():
        for token in ("mat_not-a-real-token", api.tokens.rw + "x", "a" * 500):
            api.wire.refused(body, token, 401, "unauthorized")


def test_it_refuses_revoked_tokens_and_credentials(api: Api) -> None:
    for token in AgentToken.objects.all():
        agent_token_revoke(actor=SYSTEM, token=token)
    admin_credential_revoke(actor=SYSTEM, credential=AdminCredential.objects.get())
    with api.unchanged():
        api.agent("recall", 401, "unauthorized")
        api.agent("recall", 401, "unauthorized", token=api.tokens.ro)
        api.admin("count", 401, "unauthorized")


def test_it_answers_405_to_anything_but_post(api: Api) -> None:
    client = Client()
    for method in (client.get, client.put, client.delete, client.patch):
        answer = method(ENDPOINT, HTTP_AUTHORIZATION=f"Bearer {api.tokens.rw}")
        assert answer.status_code == 405
        assert answer["Allow"] == "POST"
        assert answer["Content-Type"] == "application/json"
        api.wire.check.validate(answer.json(), "ErrorEnvelope")


# -- the store's refusals -----------------------------------------------------------------------


def test_it_refuses_writes_to_a_frozen_namespace(api: Api) -> None:
    made = api.retain("before the freeze")
    api.admin("freeze", target={"level": "namespace", "partition": api.tokens.partition},
              kind="legal_hold", reason="Case 2026-17")

    with api.unchanged():
        agent = api.agent("tool", 409, "frozen", tool="remember", arguments={"fact": "x"})
        saved = api.agent("tool", 409, "frozen", tool="save", arguments={"content": "x"})
        admin = api.admin("retain", 409, "frozen", tier="facts", content="x", mode="replace")
        api.admin("update", 409, "frozen", id=made["id"], content="x", mode="replace",
                  expectedRevision=1)

    # Agents learn that it is frozen, nothing more; staff see who, when and why.
    assert agent == saved == {"code": "frozen", "message": "frozen", "details": {}}
    assert admin["details"]["kind"] == "legal_hold"
    assert admin["details"]["reason"] == "Case 2026-17"
    assert admin["details"]["by"].startswith("admin-credential:mac_")
    assert admin["details"]["level"] == "namespace" and admin["details"]["at"]
    # Reads go on.
    assert api.agent("recall")["text"]


def test_it_refuses_writes_about_an_erased_subject(api: Api, workspace) -> None:
    kid, digest = subject_hash(workspace.pk, "customer-erased")
    Tombstone.objects.create(workspace=workspace, key_id=kid, subject_hash=digest)

    with api.unchanged():
        api.admin("retain", 409, "erased_subject", tier="facts", content="x", mode="replace",
                  dataSubjectId="customer-erased")
        api.agent("tool", 409, "erased_subject", tool="remember",
                  arguments={"fact": "x", "subject": "customer-erased"})
    api.remember("x", subject="customer-other")  # other subjects are fine


def test_it_refuses_an_update_at_a_stale_revision(api: Api) -> None:
    made = api.retain("v1", tier="pins")
    api.retain("v2", tier="pins")

    with api.unchanged():
        error = api.admin("update", 409, "conflict", id=made["id"], content="mine",
                          mode="replace", expectedRevision=1)

    assert error["details"] == {"revision": 2}
    assert MemoryItem.objects.get(pk=made["id"]).content == "v2"


@pytest.mark.parametrize("cursor", ["garbage!", "e30", "bm90IGpzb24", "", "eyJ1IjogMX0"],
                         ids=["not-base64", "empty-object", "not-json", "empty", "bad-fields"])
def test_it_refuses_a_malformed_cursor(api: Api, cursor: str) -> None:
    api.retain("present")
    if cursor == "":
        # An empty cursor means "from the start".
        assert len(api.admin("list", cursor=cursor)["items"]) == 1
        return
    api.admin("list", 400, "invalid_request", cursor=cursor)
    api.admin("export", 400, "invalid_request", cursor=cursor)
