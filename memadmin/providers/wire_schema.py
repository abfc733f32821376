"""The wire's JSON Schema (docs/provider-protocol.schema.json) applied at the boundary.

The endpoint checks every request against its operation's ``$def`` and the HTTP client checks
every provider answer against the answer's ``$def`` before anything reads a field: the schema is
the one statement of the wire's shapes. What JSON Schema cannot say stays in code (UTF-8 byte
lengths, NUL characters and lone surrogates, a deadline that has passed, subject id rules in
``providers.contract``).

A refusal names the field by its JSON pointer (``/scope/partitions/3``) and the rule it broke
in the schema's own terms, never the value that broke it: the value may be memory content.

Plain Python, no Django. Validators are compiled once per ``$def`` and shared (they are
stateless, so threads may share them).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match, relevance
from referencing import Registry, Resource

#: The schema ships inside the package (a link to docs/provider-protocol.schema.json in a
#: checkout; a copy in a built wheel), so an installed memadmin validates what the docs say.
SCHEMA_PATH = Path(__file__).resolve().parent / "protocol.schema.json"
#: What an unknown key must look like to be quoted in a message (the protocol's field names).
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")
#: How much of an unknown key a message quotes (keys are names, not content, but bounded).
KEY_QUOTE_CHARS = 40


@functools.cache
def schema() -> dict[str, Any]:
    # Not checked against the meta-schema here (seconds on a busy machine, paid by the first
    # request): the test suite does that, and compiling a validator refuses a broken schema.
    document: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return document


@functools.cache
def _registry() -> Registry:
    document = schema()
    return Registry().with_resource(document["$id"], Resource.from_contents(document))


@functools.cache
def validator(name: str) -> Draft202012Validator:
    """jsonschema's validator of one ``$def``: it explains a refusal (KeyError for a name the
    schema lacks)."""
    document = schema()
    if name not in document["$defs"]:
        raise KeyError(name)
    return Draft202012Validator({"$ref": f"{document['$id']}#/$defs/{name}"},
                                registry=_registry(),
                                format_checker=Draft202012Validator.FORMAT_CHECKER)


@functools.cache
def _fast(name: str) -> Any:
    """jsonschema-rs's validator of one ``$def``: it decides. Python's jsonschema spends ~0.5 ms
    on a request and ~5 ms on a full recall answer (it resolves every ``$ref`` on every call);
    the compiled one takes ~10 and ~40 us (benchmarks/wire_schema.py)."""
    document = schema()
    if name not in document["$defs"]:
        raise KeyError(name)
    return jsonschema_rs.Draft202012Validator({**document, "$ref": f"#/$defs/{name}"},
                                              validate_formats=True)


def has_def(name: str) -> bool:
    return name in schema()["$defs"]


def problem(instance: Any, name: str) -> str | None:
    """None when ``instance`` matches ``$defs/name``; else one sentence naming the first
    field that does not (by JSON pointer) and why, without quoting its value."""
    try:
        if _fast(name).is_valid(instance):
            return None
    except (ValueError, TypeError, OverflowError, RecursionError):
        pass  # a value the compiled validator cannot take: jsonschema decides
    errors = list(validator(name).iter_errors(instance))
    if errors:
        return describe(min(errors, key=relevance))
    try:
        first = next(iter(_fast(name).iter_errors(instance)), None)
    except (ValueError, TypeError, OverflowError, RecursionError):
        return None
    if first is None:
        return None
    # The two validators disagree (they should not): name the place and the rule, not the value.
    return f"{pointer(first.instance_path) or 'the body'}: breaks the schema rule " \
           f"{type(first.kind).__name__}"


def pointer(path: Iterable[Any]) -> str:
    """RFC 6901 JSON pointer of a path (``""`` is the whole document)."""
    parts = []
    for part in path:
        text = str(part)[:KEY_QUOTE_CHARS]
        parts.append(text.replace("~", "~0").replace("/", "~1"))
    return "".join("/" + p for p in parts)


def _alternatives(subschemas: Any) -> list[str] | None:
    """The field names of a oneOf/anyOf whose branches each only require one field."""
    names = []
    for sub in subschemas if isinstance(subschemas, list) else []:
        if not (isinstance(sub, dict) and set(sub) == {"required"}
                and len(sub["required"]) == 1):
            return None
        names.append(sub["required"][0])
    return names or None


def _enum_words(values: list[Any]) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values[:20])


_TYPE_WORDS = {"object": "an object", "array": "an array", "string": "a string",
               "integer": "a whole number", "number": "a number", "boolean": "true or false",
               "null": "null"}


def describe(error: ValidationError) -> str:
    """The sentence for one validation error (descending into oneOf/anyOf where that helps)."""
    keyword, rule, instance = error.validator, error.validator_value, error.instance
    path = list(error.absolute_path)
    if keyword in ("oneOf", "anyOf"):
        names = _alternatives(rule)
        if names is not None and isinstance(instance, dict):
            given = [n for n in names if n in instance]
            where = pointer(path) or "the body"
            listed = ", ".join("/".join(("", n)) for n in names)
            if given:
                return f"{where}: give only one of {listed}"
            return f"{where}: one of {listed} is required"
        # The branch that got furthest says the most ("must be a string or null" says less
        # than the Time pattern the string broke); type mismatches say least.
        deeper = [e for e in error.context or () if e.validator != "type"]
        if deeper:
            return describe(best_match(deeper) or deeper[0])
        return f"{pointer(path) or 'the body'}: does not match any allowed form"
    if keyword == "required" and isinstance(instance, dict):
        missing = next((n for n in rule if n not in instance), rule[0] if rule else "?")
        return f"{pointer([*path, missing])}: is required"
    if keyword == "additionalProperties" and isinstance(instance, dict):
        known = set(error.schema.get("properties", {})) if isinstance(error.schema, dict) else set()
        extra = sorted(k for k in instance if k not in known)
        if extra and _NAME.fullmatch(extra[0]):
            return f"{pointer([*path, extra[0]])}: is not a known field here"
        # A key that is no field name may be content: not repeated.
        return f"{pointer(path) or 'the body'}: has a field that is not known here"
    where = pointer(path) or "the body"
    if keyword == "type":
        kinds = rule if isinstance(rule, list) else [rule]
        return f"{where}: must be " + " or ".join(_TYPE_WORDS.get(str(k), str(k))
                                                  for k in kinds)
    if keyword == "enum":
        return f"{where}: must be one of {_enum_words(rule)}"
    if keyword == "const":
        return f"{where}: must be {json.dumps(rule, ensure_ascii=False)}"
    words = {
        "maxLength": f"must be at most {rule} characters",
        "minLength": f"must be at least {rule} characters",
        "maxItems": f"must have at most {rule} entries",
        "minItems": f"must have at least {rule} entries",
        "maximum": f"must be at most {rule}",
        "minimum": f"must be at least {rule}",
        "exclusiveMaximum": f"must be below {rule}",
        "exclusiveMinimum": f"must be above {rule}",
        "uniqueItems": "must not list an entry twice",
        "pattern": _pattern_words(error),
        "format": f"must be a valid {rule}",
        "maxProperties": f"must have at most {rule} fields",
        "minProperties": f"must have at least {rule} fields",
    }
    return f"{where}: {words.get(str(keyword), f'breaks the schema rule {keyword}')}"


def _pattern_words(error: ValidationError) -> str:
    described = error.schema.get("description") if isinstance(error.schema, dict) else None
    if isinstance(described, str) and described:
        return f"is not in the expected form ({described[:120].rstrip('.')})"
    return "is not in the expected form"
