"""The suite's flush (tests/fast_flush.py) leaves the database as Django's own flush does: every
table empty, the content types and permissions exactly as post_migrate makes them."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection

from memadmin.audit.models import AuditEvent
from memadmin.workspaces.services import workspace_create
from tests.audit.conftest import as_owner
from tests.conftest import SYSTEM
from tests.fast_flush import KEPT

pytestmark = pytest.mark.django_db(transaction=True)


def flush() -> None:
    # As TransactionTestCase flushes after a transactional test: as the database owner.
    with as_owner():
        call_command("flush", verbosity=0, interactive=False, reset_sequences=False,
                     allow_cascade=False, inhibit_post_migrate=False)


def rows_left() -> dict[str, int]:
    counts = {}
    with connection.cursor() as cursor:
        for table in connection.introspection.django_table_names(only_existing=True):
            if table not in KEPT:
                cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
                counts[table] = cursor.fetchone()[0]
    return {table: n for table, n in counts.items() if n}


def permissions() -> list[tuple[int, str, str]]:
    return sorted(Permission.objects.values_list("id", "content_type__model", "codename"))


def test_it_empties_every_table_the_append_only_audit_trail_included() -> None:
    flush()  # the first flush of a process is a full one
    User.objects.create_user("ada", "ada@example.com", "x")
    workspace_create(actor=SYSTEM, slug="initech", name="Initech")
    assert AuditEvent.objects.exists() and User.objects.exists()
    assert rows_left()

    flush()

    assert rows_left() == {}
    with connection.cursor() as cursor:  # the triggers are on again: still append-only
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"


def test_it_keeps_unchanged_permissions_and_restores_changed_ones() -> None:
    flush()
    before = permissions()
    content_types = sorted(ContentType.objects.values_list("id", "app_label", "model"))
    assert before

    flush()  # nothing changed: kept as they were, same ids
    assert permissions() == before
    assert sorted(ContentType.objects.values_list("id", "app_label", "model")) == content_types

    Permission.objects.filter(codename="add_user").delete()
    Permission.objects.filter(codename="change_user").update(name="renamed")
    flush()  # changed: emptied and made again by post_migrate, as Django's flush does
    after = permissions()
    assert sorted(row[1:] for row in after) == sorted(row[1:] for row in before)
    assert Permission.objects.get(codename="change_user").name == "Can change user"
    assert Permission.objects.filter(codename="add_user").exists()
