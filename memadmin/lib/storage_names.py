"""The storage names memadmin builds, each a strict pattern matched whole.

A name that reaches ``default_storage`` from a request, a signed token or a job's params is
checked here first: a prefix check lets ``imports/../exports/<job>.jsonl`` through, a full
match does not (no ``..``, no second slash, no trailing newline, nothing but the shape).
"""

from __future__ import annotations

import re

from django.core.exceptions import SuspiciousFileOperation

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
#: Django's storages append ``_<7 letters or digits>`` when a name is taken.
_TAKEN = r"(?:_[A-Za-z0-9]{7})?"
_SLUG = r"[A-Za-z0-9_-]{1,128}"

PATTERNS: dict[str, re.Pattern[str]] = {
    "import_upload": re.compile(rf"imports/{_UUID}{_TAKEN}\.upload"),
    "export_result": re.compile(rf"exports/{_UUID}{_TAKEN}\.(?:zip|jsonl)"),
    "export_part": re.compile(rf"exports/{_UUID}/{_SLUG}{_TAKEN}\.jsonl"),
}


class StorageNameError(SuspiciousFileOperation):
    """A storage name that does not match its pattern (the name itself is not repeated)."""


def matches(kind: str, name: object) -> bool:
    """Whether ``name`` is a string matching the whole pattern of ``kind``."""
    return isinstance(name, str) and PATTERNS[kind].fullmatch(name) is not None


def checked(kind: str, name: object) -> str:
    """``name`` if it matches the whole pattern of ``kind``; else ``StorageNameError``."""
    if not matches(kind, name):
        raise StorageNameError(f"not a valid {kind.replace('_', ' ')} storage name")
    return name  # type: ignore[return-value]
