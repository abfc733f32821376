"""Fixtures for the wire endpoint's tests.

``wire`` posts JSON to the endpoint and checks both directions against
``docs/provider-protocol.schema.json``: the request against its operation's ``$def`` (or, for a
request meant to be refused, that the schema refuses it too where it can say so), and every
answer against the ``$def`` it must match (``ErrorEnvelope`` for every error).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.memory.models import (
    Freeze,
    MemoryItem,
    MemoryRevision,
    NamespaceCounter,
    OperationRecord,
)
from memadmin.memory.services import agent_token_mint
from memadmin.workspaces.services import admin_credential_mint, resource_update

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "provider-protocol.schema.json"

ENDPOINT = "/oc-memory"
SYSTEM = Actor.system("test")

#: The answer's ``$def`` for each operation (errors always answer ``ErrorEnvelope``).
RESPONSE_DEFS = {
    "recall": "RecallResponse", "tool": "ToolResponse", "health": "HealthResponse",
    "capabilities": "CapabilitiesResponse", "retain": "RetainResponse", "list": "ItemPage",
    "export": "ItemPage", "count": "CountResponse", "get": "GetResponse",
    "update": "UpdateResponse", "delete": "DeleteResponse", "forget": "ForgetResponse",
    "freeze": "FreezeResponse", "quarantine": "QuarantineResponse",
    "observe": "ObserveResponse",
}
#: The result ``$def`` of each built-in tool (inside ``{"result": ...}``).
TOOL_RESULT_DEFS = {"remember": "ToolStoredResult", "save": "ToolStoredResult",
                    "list": "ToolListResult", "read": "ToolReadResult",
                    "add_note": "ToolNoteResult", "replace_note": "ToolNoteResult",
                    "remove_note": "ToolRemovedResult", "usage": "ToolUsageResult"}

#: The tools the test resource declares (seed 001's declaration rules).
TOOLS: list[dict[str, Any]] = [
    {"name": "remember", "description": "Save a verified fact; recall sees it at once.",
     "access": "write", "idempotent": False,
     "input": {"type": "object",
               "properties": {"fact": {"type": "string", "maxLength": 2000},
                              "subject": {"type": "string", "maxLength": 256}},
               "required": ["fact"], "additionalProperties": False}},
    {"name": "save", "description": "Replace one of the namespace's documents.",
     "access": "write", "idempotent": True,
     "input": {"type": "object",
               "properties": {"content": {"type": "string"},
                              "document": {"enum": ["AGENT", "CREW", "PERSONA", "pins",
                                                    "lessons"]}},
               "required": ["content"], "additionalProperties": False}},
    {"name": "list", "description": "List the namespace's memory, newest first.",
     "access": "read",
     "input": {"type": "object",
               "properties": {"tier": {"type": "string"},
                              "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                              "cursor": {"type": "string"}},
               "additionalProperties": False}},
    {"name": "read", "description": "Read one memory item by id.", "access": "read",
     "input": {"type": "object", "properties": {"id": {"type": "string"}},
               "required": ["id"], "additionalProperties": False}},
    {"name": "search", "description": "Declared, but this server has no behaviour for it.",
     "access": "read", "input": {"type": "object", "properties": {}}},
]


@pytest.fixture(scope="session")
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


class SchemaCheck:
    """Validates a document against one ``$def`` of the protocol schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        Draft202012Validator.check_schema(schema)
        self.schema, self.id = schema, schema["$id"]
        self.registry: Registry = Registry().with_resource(self.id,
                                                           Resource.from_contents(schema))

    def validator(self, name: str) -> Draft202012Validator:
        assert name in self.schema["$defs"], f"the schema has no $def {name}"
        return Draft202012Validator(
            {"$ref": f"{self.id}#/$defs/{name}"}, registry=self.registry,
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )

    def validate(self, instance: Any, name: str) -> None:
        self.validator(name).validate(instance)

    def is_valid(self, instance: Any, name: str) -> bool:
        return self.validator(name).is_valid(instance)


@pytest.fixture(scope="session")
def validator(schema: dict[str, Any]) -> SchemaCheck:
    return SchemaCheck(schema)


def request_def(operation: str) -> str:
    return operation[0].upper() + operation[1:] + "Request"


def deadline_at(seconds: float = 5.0) -> str:
    when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def envelope(operation: str, *, partition: str | None = None,
             partitions: list[str] | None = None, operation_id: str | None = None,
             deadline_in: float = 5.0, **fields: Any) -> dict[str, Any]:
    """A request body: version, operation, a fresh operationId, ``deadlineAt`` a few seconds
    ahead, the partition (agent operations) or ``scope.partitions`` (admin operations)."""
    body: dict[str, Any] = {
        "version": 1, "operation": operation,
        "operationId": operation_id or f"test-{uuid.uuid4().hex}",
        "deadlineAt": deadline_at(deadline_in),
    }
    if partition is not None:
        body["partition"] = partition
    if partitions is not None:
        body["scope"] = {"partitions": partitions}
    body.update(fields)
    return body


@dataclasses.dataclass
class Answer:
    status: int
    json: Any
    headers: Any
    size: int

    @property
    def code(self) -> str | None:
        if isinstance(self.json, dict) and isinstance(self.json.get("error"), dict):
            return self.json["error"].get("code")
        return None


class Wire:
    """Posts to the endpoint with a bearer token and checks every exchange against the schema.

    ``request_valid``: True (default) -- the request must match its operation's ``$def``;
    False -- the schema must refuse it too; None -- not a schema matter (raw bytes, or a rule
    JSON Schema cannot state, such as an expired deadline or a NUL character).
    """

    def __init__(self, check: SchemaCheck, client: Client) -> None:
        self.check, self.client = check, client

    def post(self, body: Any, token: str | None, *, request_valid: bool | None = True,
             raw: bytes | None = None, content_type: str = "application/json",
             client: Client | None = None, response_def: str | None = None) -> Answer:
        operation = body.get("operation") if isinstance(body, dict) else None
        if request_valid is not None:
            name = request_def(operation) if operation in RESPONSE_DEFS else "Request"
            if request_valid:
                self.check.validate(body, name)
                self.check.validate(body, "Request")
            else:
                assert not self.check.is_valid(body, "Request"), "the schema accepts it"
        data = raw if raw is not None else json.dumps(body).encode("utf-8")
        headers: dict[str, Any] = ({"HTTP_AUTHORIZATION": f"Bearer {token}"}
                                   if token is not None else {})
        response = (client or self.client).post(ENDPOINT, data=data, content_type=content_type,
                                                **headers)
        assert response["Content-Type"] == "application/json"
        answer = Answer(response.status_code, json.loads(response.content), response,
                        len(response.content))
        assert answer.size <= 64 * 1024
        if answer.status == 200:
            self.check.validate(answer.json, response_def or RESPONSE_DEFS[str(operation)])
            if operation == "tool" and "batch" in body:
                self.check.validate(answer.json["result"], "ToolBatchResult")
            elif operation == "tool" and body.get("tool") in TOOL_RESULT_DEFS:
                self.check.validate(answer.json["result"], TOOL_RESULT_DEFS[body["tool"]])
        else:
            self.check.validate(answer.json, "ErrorEnvelope")
        return answer

    def ok(self, body: dict[str, Any], token: str, **kw: Any) -> Any:
        answer = self.post(body, token, **kw)
        assert answer.status == 200, answer.json
        return answer.json

    def refused(self, body: Any, token: str | None, status: int, code: str,
                **kw: Any) -> dict[str, Any]:
        answer = self.post(body, token, **kw)
        assert (answer.status, answer.code) == (status, code), answer.json
        return answer.json["error"]


@pytest.fixture
def wire(validator: SchemaCheck) -> Wire:
    return Wire(validator, Client())


@pytest.fixture
def tool_resource(resource):
    """The conftest resource (1,024-byte recall cap, 4,096-byte items) with the test tools."""
    return resource_update(actor=SYSTEM, resource=resource, tools=TOOLS)


@dataclasses.dataclass
class Tokens:
    rw: str
    ro: str
    admin: str
    partition: str
    other_partition: str


@pytest.fixture
def tokens(workspace, tool_resource, namespace, other_namespace) -> Tokens:
    """A read-write and a read-only agent token for ``namespace``, and an admin credential."""
    _, rw = agent_token_mint(actor=SYSTEM, workspace=workspace, namespaces=[namespace],
                             access="read-write", name="rw")
    _, ro = agent_token_mint(actor=SYSTEM, workspace=workspace, namespaces=[namespace],
                             access="read", name="ro")
    _, admin = admin_credential_mint(actor=SYSTEM, workspace=workspace, name="remote")
    return Tokens(rw=rw, ro=ro, admin=admin, partition=namespace.partition_key,
                  other_partition=other_namespace.partition_key)


UNSCOPED = {"health", "capabilities"}


def memory_state() -> dict[str, Any]:
    """Everything a request could write, for "nothing was written" checks."""
    return {
        "items": sorted((str(i), r, c, q) for i, r, c, q in MemoryItem.objects.values_list(
            "id", "revision", "content", "quarantine_state")),
        "revisions": MemoryRevision.objects.count(),
        "freezes": sorted((str(i), str(t)) for i, t in Freeze.objects.values_list(
            "id", "lifted_at")),
        "operations": OperationRecord.objects.count(),
        "counters": sorted((str(n), i, b, v) for n, i, b, v in
                           NamespaceCounter.objects.values_list("namespace_id", "items",
                                                                "bytes", "version")),
        "api_audit": AuditEvent.objects.filter(action__startswith="api.").count(),
    }


class Api:
    """Short calls for the common case: ``api.agent("recall", input=...)`` posts with the
    read-write agent token to the test partition, ``api.admin("list")`` with the admin
    credential over ``scope.partitions = [partition]``. Each asserts the status (and code) and
    returns the answer (200) or the ``error`` object."""

    def __init__(self, wire: Wire, tokens: Tokens) -> None:
        self.wire, self.tokens = wire, tokens

    def agent(self, operation: str, status: int = 200, code: str | None = None, *,
              token: str | None = None, request_valid: bool | None = True,
              **fields: Any) -> Any:
        fields.setdefault("partition", self.tokens.partition)
        body = envelope(operation, **fields)
        return self._expect(self.wire.post(body, token or self.tokens.rw,
                                           request_valid=request_valid), status, code)

    def admin(self, operation: str, status: int = 200, code: str | None = None, *,
              token: str | None = None, request_valid: bool | None = True,
              **fields: Any) -> Any:
        if operation not in UNSCOPED and not {"partition", "partitions"} & set(fields):
            fields["partitions"] = [self.tokens.partition]
        body = envelope(operation, **fields)
        return self._expect(self.wire.post(body, token or self.tokens.admin,
                                           request_valid=request_valid), status, code)

    @staticmethod
    def _expect(answer: Answer, status: int, code: str | None) -> Any:
        assert answer.status == status, answer.json
        if status == 200:
            return answer.json
        assert answer.code == code, answer.json
        return answer.json["error"]

    def remember(self, fact: str, **arguments: Any) -> dict[str, Any]:
        """An agent fact through the ``remember`` tool; returns the tool's result."""
        answer = self.agent("tool", tool="remember", arguments={"fact": fact, **arguments})
        return answer["result"]

    def retain(self, content: str, tier: str = "facts", key: str = "", **fields: Any) -> Any:
        return self.admin("retain", tier=tier, key=key, content=content,
                          mode=fields.pop("mode", "replace"), **fields)

    @contextlib.contextmanager
    def unchanged(self, *, audit: bool = True) -> Iterator[None]:
        """Asserts the block wrote nothing: no item, revision, freeze, operation record,
        counter change or (unless ``audit=False``: a replayed admin call is still a call)
        api.* audit event."""
        before = memory_state()
        yield
        after = memory_state()
        if not audit:
            before.pop("api_audit"), after.pop("api_audit")
        assert after == before


@pytest.fixture
def api(wire: Wire, tokens: Tokens) -> Api:
    return Api(wire, tokens)


@pytest.fixture
def wire_compliance(workspace):
    """The workspace lets admin credentials carry compliance decisions (legal hold lifts,
    overrideHold, quarantined content) over the wire; off by default."""
    workspace.wire_compliance = True
    workspace.save(update_fields=["wire_compliance"])
    return workspace
