"""docs/provider-protocol.md and its schema stay true to the code and to each other."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memadmin.providers import contract as c
from memadmin.providers import wire
from tests.endpoint.conftest import RESPONSE_DEFS, SchemaCheck, request_def

DOC = Path(__file__).resolve().parents[2] / "docs" / "provider-protocol.md"
EXAMPLE = re.compile(r"<!-- schema: (\w+) -->\n```json\n(.*?)\n```", re.S)


def _examples() -> list[tuple[str, Any]]:
    return [(name, json.loads(text)) for name, text in EXAMPLE.findall(DOC.read_text())]


def test_it_validates_every_example_of_the_document_against_its_def(
        validator: SchemaCheck) -> None:
    examples = _examples()

    for name, example in examples:
        validator.validate(example, name)
        if name.endswith("Request"):
            validator.validate(example, "Request")
    shown = {name for name, _ in examples}
    assert {request_def(op) for op in wire.ALL_OPERATIONS} <= shown
    assert set(RESPONSE_DEFS.values()) <= shown
    assert "ErrorEnvelope" in shown


def test_it_documents_every_error_code_with_its_status() -> None:
    rows = dict(re.findall(r"^\| `(\w+)` \| (\d{3}) \|", DOC.read_text(), re.M))

    expected = {code: str(cls.http_status) for code, cls in c.ERRORS_BY_CODE.items()}
    assert rows == {**expected, "internal": "500"}


def test_it_keeps_the_schema_vocabulary_in_step_with_the_code(schema: dict[str, Any]) -> None:
    defs = schema["$defs"]

    assert set(defs["Envelope"]["properties"]["operation"]["enum"]) == wire.ALL_OPERATIONS
    assert {request_def(op) for op in wire.ALL_OPERATIONS} <= set(defs)
    assert set(RESPONSE_DEFS) == wire.ALL_OPERATIONS
    codes = set(defs["ErrorEnvelope"]["properties"]["error"]["properties"]["code"]["enum"])
    assert codes == set(c.ERRORS_BY_CODE) | {"internal"}
    assert "uncertain" not in codes  # client side only
    assert defs["Tier"]["enum"] == list(c.TIERS)
    assert defs["Mode"]["enum"] == list(c.MODES)
    assert defs["QuarantineState"]["enum"] == list(c.QUARANTINE_STATES)
    assert defs["FreezeKind"]["enum"] == list(c.FREEZE_KINDS)


@pytest.mark.parametrize("name", ["RecallResponse", "ItemPage", "Item", "ErrorEnvelope",
                                  "HealthResponse", "CapabilitiesResponse", "GetResponse",
                                  "WriteResult", "CountResponse", "DeleteResponse",
                                  "OkResponse", "Source", "Hit", "Revision"])
def test_it_closes_the_responses_the_server_fully_controls(schema: dict[str, Any],
                                                           name: str) -> None:
    assert schema["$defs"][name]["additionalProperties"] is False


def test_it_documents_the_path_setting() -> None:
    text = DOC.read_text()

    assert "`/oc-memory`" in text and "`MEMADMIN_ENDPOINT_PATH`" in text
    for operation in sorted(wire.ALL_OPERATIONS):
        assert re.search(rf"^### .*\b{operation}\b", text, re.M), operation
