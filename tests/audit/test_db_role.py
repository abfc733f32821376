"""memadmin runs as a role that may only add to and read the audit trail: the grants that
``manage.py audit_db_grants`` prints, applied in the test database, and a real connection as
that role."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, connections, transaction

from memadmin.audit.management.commands.audit_db_grants import grant_statements
from memadmin.audit.models import AuditChainHead, AuditEvent
from memadmin.audit.services import Actor, audit_event_create, verify_chain
from memadmin.workspaces.models import Workspace
from memadmin.workspaces.services import workspace_create

pytestmark = pytest.mark.django_db(transaction=True)
BOT = Actor.system("bot")


@pytest.fixture
def app_role(db) -> Iterator[str]:
    """A login role with the printed grants (roles are per cluster: named after this
    database, so parallel test databases do not share one)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database(), current_schema(), current_user, session_user")
        database, schema, owner, session = cursor.fetchone()
        if owner != session:
            pytest.skip("the suite already runs as the restricted role (tests/restricted_role.py)")
        role = f"memadmin_app_{database}"[:63]
        cursor.execute(f"DROP ROLE IF EXISTS {connection.ops.quote_name(role)}")
        cursor.execute(f"CREATE ROLE {connection.ops.quote_name(role)} LOGIN")
        for statement in grant_statements(role, database=database, schema=schema,
                                          owner=owner):
            cursor.execute(statement)
    yield role
    with connection.cursor() as cursor:
        cursor.execute(f"DROP OWNED BY {connection.ops.quote_name(role)}")
        cursor.execute(f"DROP ROLE {connection.ops.quote_name(role)}")


@contextmanager
def connected_as(role: str) -> Iterator[None]:
    """The default database connection, reopened as ``role``."""
    conn = connections["default"]
    saved = conn.settings_dict["USER"], conn.settings_dict["PASSWORD"]
    conn.close()
    conn.settings_dict["USER"], conn.settings_dict["PASSWORD"] = role, ""
    try:
        yield
    finally:
        conn.close()
        conn.settings_dict["USER"], conn.settings_dict["PASSWORD"] = saved


def refused(sql: str, params: list[Any] | None = None) -> str:
    """Run ``sql``, which must fail; the database's message."""
    with pytest.raises(DatabaseError) as failure, transaction.atomic(), \
            connection.cursor() as cursor:
        cursor.execute(sql, params or [])
    return str(failure.value)


def test_the_command_prints_the_grants(capsys) -> None:
    call_command("audit_db_grants", "--role", "memadmin_app")
    out = capsys.readouterr().out
    assert 'REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON "audit_auditevent", ' \
           '"audit_auditchainhead" FROM "memadmin_app";' in out
    assert 'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "public" TO ' \
           '"memadmin_app";' in out


def test_the_app_works_as_the_role_and_cannot_rewrite_the_trail(app_role: str) -> None:
    with connected_as(app_role):
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user")
            assert cursor.fetchone()[0] == app_role
        # Everything else is normal: a service writes its tables and its audit events.
        workspace = workspace_create(actor=BOT, slug="acme", name="Acme")
        event = audit_event_create(workspace=workspace, actor=BOT, action="x", data={"n": 1})
        assert verify_chain(str(workspace.pk)).ok
        Workspace.objects.filter(pk=workspace.pk).update(name="Acme Ltd")

        assert "permission denied" in refused(
            "UPDATE audit_auditevent SET data = '{}' WHERE id = %s", [event.pk])
        assert "permission denied" in refused(
            "DELETE FROM audit_auditevent WHERE id = %s", [event.pk])
        assert "permission denied" in refused("TRUNCATE audit_auditevent")
        assert "permission denied" in refused("TRUNCATE audit_auditchainhead")
        assert "permission denied" in refused("DELETE FROM audit_auditchainhead")
        # The head may advance (appending needs that), never move back.
        assert "only advances by one" in refused(
            "UPDATE audit_auditchainhead SET seq = 1 WHERE chain = %s", [event.chain])
        # And the usual ways round the triggers are closed to it.
        assert "permission denied" in refused("SET session_replication_role = replica")
        assert "must be owner" in refused("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")

    assert AuditEvent.objects.filter(pk=event.pk, data={"n": 1}).exists()
    assert AuditChainHead.objects.get(chain=event.chain).seq == event.seq
