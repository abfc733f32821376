"""The agent tools a resource declares (seed 001's rules), validated when they are saved."""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

MAX_TOOLS = 8
TOOL_NAME = re.compile(r"^[a-z0-9_]{1,32}$")
TOOL_KEYS = {"name", "description", "access", "idempotent", "input"}


def _has_ref(schema: Any) -> bool:
    if isinstance(schema, dict):
        return "$ref" in schema or "$dynamicRef" in schema or any(
            _has_ref(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_ref(v) for v in schema)
    return False


def validate_tools(tools: Any) -> None:
    """Up to eight tools, each with a unique 1-32 character name, a description, read or write
    access, an idempotent flag and an object input schema (JSON Schema 2020-12, no ``$ref``,
    no top-level ``memory`` property: it is reserved)."""
    if not isinstance(tools, list):
        raise ValidationError("tools must be a list")
    if len(tools) > MAX_TOOLS:
        raise ValidationError(f"at most {MAX_TOOLS} tools")
    seen: set[str] = set()
    for position, tool in enumerate(tools, start=1):
        where = f"tool {position}"
        if not isinstance(tool, dict):
            raise ValidationError(f"{where} must be an object")
        extra = set(tool) - TOOL_KEYS
        if extra:
            raise ValidationError(f"{where} has unknown fields: {', '.join(sorted(extra))}")
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise ValidationError(f"{where}: name must be 1-32 lowercase letters, digits or _")
        if name in seen:
            raise ValidationError(f"{where}: the name {name!r} is used twice")
        seen.add(name)
        description = tool.get("description")
        if not isinstance(description, str) or not description.strip() or len(description) > 1000:
            raise ValidationError(f"{where}: a description of 1-1000 characters is required")
        if tool.get("access") not in ("read", "write"):
            raise ValidationError(f"{where}: access must be read or write")
        if not isinstance(tool.get("idempotent", False), bool):
            raise ValidationError(f"{where}: idempotent must be true or false")
        schema = tool.get("input")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise ValidationError(f"{where}: input must be an object JSON Schema")
        if _has_ref(schema):
            raise ValidationError(f"{where}: input must not use $ref")
        properties = schema.get("properties", {})
        if "memory" in properties or "memory" in schema.get("required", []):
            raise ValidationError(f"{where}: the top-level property 'memory' is reserved")
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise ValidationError(f"{where}: invalid input schema: {exc.message}") from None
