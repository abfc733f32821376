"""The endpoint's fixtures (tokens, the schema-checking wire client) for the privacy tests."""

from __future__ import annotations

from tests.endpoint.conftest import api, schema, tokens, tool_resource, validator, wire

__all__ = ["api", "schema", "tokens", "tool_resource", "validator", "wire"]

from memadmin.audit.services import Actor  # noqa: E402

SYSTEM_ACTOR = Actor.system("test")
