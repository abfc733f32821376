"""Fixtures for the audit tests: anchors in a fresh storage, tampering by SQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.db import connection


@pytest.fixture
def anchor_storage(settings, tmp_path: Path) -> Path:
    """The default storage (where checkpoints go) in a directory of this test's own."""
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "files")}}}
    return tmp_path / "files"


@contextmanager
def as_owner() -> Iterator[None]:
    """Act as the database owner even when the tests run as the restricted app role
    (tests/restricted_role.py): tampering is what that role cannot do."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user, session_user")
        current, session = cursor.fetchone()
        if current != session:
            cursor.execute("RESET ROLE")
    try:
        yield
    finally:
        if current != session:
            with connection.cursor() as cursor:
                cursor.execute(f"SET ROLE {connection.ops.quote_name(current)}")


def tamper(*statements: str | tuple[str, list[Any]], replica: bool = False) -> None:
    """Run SQL as someone with database access would: with the user triggers off, or (replica)
    with ``session_replication_role = replica``, which skips every ordinary trigger."""
    with as_owner(), connection.cursor() as cursor:
        if replica:
            cursor.execute("SET session_replication_role = replica")
        else:
            cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
        for statement in statements:
            sql, params = statement if isinstance(statement, tuple) else (statement, [])
            cursor.execute(sql, params)
        if replica:
            cursor.execute("RESET session_replication_role")
        else:
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")
