"""``manage.py reencrypt_secrets``: every secret at rest as a token under the active key.

Rotation: put the new key first in MEMADMIN_ENCRYPTION_KEYS (keep the old ones after it), run
this, then remove the old keys. Safe to run again; rows are rewritten in small transactions.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import connection, transaction

from memadmin.lib.crypto import EncryptedTextField, encrypt, is_token, rotate


def encrypted_columns() -> list[tuple[str, str, str]]:
    """(table, primary key column, column) of every EncryptedTextField of every model."""
    found: list[tuple[str, str, str]] = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if isinstance(field, EncryptedTextField):
                pk = model._meta.pk
                assert pk is not None and pk.column and field.column  # concrete models have both
                found.append((model._meta.db_table, pk.column, field.column))
    return found


class Command(BaseCommand):
    help = "Re-encrypt every secret stored at rest under the first MEMADMIN_ENCRYPTION_KEYS key."

    def handle(self, *args: Any, **options: Any) -> None:
        total = 0
        qn = connection.ops.quote_name
        for table, pk, column in encrypted_columns():
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT {qn(pk)} FROM {qn(table)} "  # noqa: S608 - names
                               f"WHERE {qn(column)} <> ''")
                ids = [row[0] for row in cursor.fetchall()]
            for row_id in ids:
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute(f"SELECT {qn(column)} FROM {qn(table)} "  # noqa: S608
                                   f"WHERE {qn(pk)} = %s FOR UPDATE", [row_id])
                    row = cursor.fetchone()
                    if row is None or not row[0]:
                        continue
                    value = row[0]
                    # A clear value (written around the migration) is encrypted too.
                    token = rotate(value) if is_token(value) else encrypt(value)
                    cursor.execute(f"UPDATE {qn(table)} SET {qn(column)} = %s "  # noqa: S608
                                   f"WHERE {qn(pk)} = %s", [token, row_id])
                    total += 1
        if options["verbosity"]:
            self.stdout.write(f"{total} secret(s) re-encrypted under the active key.")
