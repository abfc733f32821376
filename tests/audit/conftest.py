"""Fixtures for the audit tests: anchors in a fresh storage, tampering by SQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection


@pytest.fixture
def anchor_storage(settings, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """The default storage (where checkpoints go) in a directory of this test's own."""
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "files")}}}
    return tmp_path / "files"


def tamper(*statements: str | tuple[str, list[object]], replica: bool = False) -> None:
    """Run SQL as someone with database access would: with the user triggers off, or (replica)
    with ``session_replication_role = replica``, which skips every ordinary trigger."""
    with connection.cursor() as cursor:
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
