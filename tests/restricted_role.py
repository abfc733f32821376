"""A pytest plugin: run the tests as the least-privilege app role of docs/deploy.md.

``python -m pytest -p tests.restricted_role tests/audit tests/gdpr`` (``make test-restricted``)
creates a login role with the grants ``manage.py audit_db_grants`` prints, in the test
database, and makes every database connection of a test ``SET ROLE`` to it: the code under
test then has exactly that role's privileges (it may only INSERT and SELECT the audit tables).
Test set-up and tear-down (creating the database, flushing it) stay with the owner, and so does
the tampering helper ``tests.audit.conftest.as_owner``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import DatabaseError, connection
from django.db.backends.signals import connection_created

DISPATCH_UID = "tests.restricted_role"


def role_name() -> str:
    return f"memadmin_app_{connection.settings_dict['NAME']}"[:63]


@pytest.fixture(scope="session")
def _restricted_role(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    from memadmin.audit.management.commands.audit_db_grants import grant_statements

    q = connection.ops.quote_name
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        role = role_name()
        cursor.execute("SELECT current_database(), current_schema(), current_user")
        database, schema, owner = cursor.fetchone()
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
        if cursor.fetchone():
            cursor.execute(f"DROP OWNED BY {q(role)}")
            cursor.execute(f"DROP ROLE {q(role)}")
        cursor.execute(f"CREATE ROLE {q(role)} LOGIN")
        for statement in grant_statements(role, database=database, schema=schema, owner=owner):
            cursor.execute(statement)
        cursor.execute(f"GRANT {q(role)} TO {q(owner)}")
    yield role
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("RESET ROLE")
        cursor.execute(f"DROP OWNED BY {q(role)}")
        cursor.execute(f"DROP ROLE {q(role)}")


@pytest.fixture(autouse=True)
def _run_as_restricted_role(request: pytest.FixtureRequest) -> Iterator[None]:
    uses_db = (request.node.get_closest_marker("django_db") is not None
               or {"db", "transactional_db"} & set(request.fixturenames))
    if not uses_db:
        yield
        return
    role = request.getfixturevalue("_restricted_role")
    request.getfixturevalue("_django_db_helper")  # set up first, torn down after this
    statement = f"SET ROLE {connection.ops.quote_name(role)}"

    def set_role(sender: object, connection: Any, **kwargs: object) -> None:
        with connection.cursor() as cursor:
            cursor.execute(statement)

    connection_created.connect(set_role, dispatch_uid=DISPATCH_UID)
    if connection.connection is not None:
        set_role(None, connection)
    yield
    connection_created.disconnect(dispatch_uid=DISPATCH_UID)
    if connection.connection is not None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET ROLE")
        except DatabaseError:
            pass  # an aborted transaction: its rollback undoes the SET ROLE too
