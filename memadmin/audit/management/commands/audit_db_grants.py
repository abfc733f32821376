"""Print the SQL that lets memadmin run as a database role that can only add to and read the
audit trail, while migrations keep running as the tables' owner (docs/deploy.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

AUDIT_TABLES = ("audit_auditevent", "audit_auditchainhead")


def grant_statements(role: str, *, database: str, schema: str, owner: str) -> list[str]:
    """The GRANTs, in order, for ``role`` on every memadmin table of ``schema``: everything
    normal, except that the audit tables may only be read and added to (the chain head also
    advances, which its trigger limits to one step per appended event)."""
    q = connection.ops.quote_name
    app, db, sch, own = q(role), q(database), q(schema), q(owner)
    events, heads = (q(table) for table in AUDIT_TABLES)
    return [
        f"GRANT CONNECT, TEMPORARY ON DATABASE {db} TO {app}",
        f"GRANT USAGE ON SCHEMA {sch} TO {app}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {sch} TO {app}",
        f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {sch} TO {app}",
        f"REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON {events}, {heads} FROM {app}",
        f"GRANT UPDATE (seq, hash) ON {heads} TO {app}",
        f"ALTER DEFAULT PRIVILEGES FOR ROLE {own} IN SCHEMA {sch} "
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {app}",
        f"ALTER DEFAULT PRIVILEGES FOR ROLE {own} IN SCHEMA {sch} "
        f"GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO {app}",
    ]


class Command(BaseCommand):
    help = ("Print the SQL grants that run memadmin as a role that may only INSERT and SELECT "
            "the audit tables (run them as the owner, after `migrate`).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--role", default="memadmin_app",
                            help="the role the app connects as (default: memadmin_app)")

    def handle(self, *args: Any, **options: Any) -> None:
        role = options["role"]
        if not role or len(role) > 63 or "\x00" in role:
            raise CommandError("--role must be a PostgreSQL role name (1 to 63 characters)")
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_database(), current_schema(), current_user")
            database, schema, owner = cursor.fetchone()
        q = connection.ops.quote_name
        lines = [
            f"-- memadmin: run the app as {q(role)}, which may only INSERT and SELECT the audit",
            f"-- trail. Run as {q(owner)}, the owner of the tables (the role `manage.py "
            "migrate` runs as),",
            f"-- in database {q(database)}, after every migration that adds tables (the default",
            "-- privileges below cover tables the owner creates later). Create the role once:",
            f"--   CREATE ROLE {q(role)} LOGIN PASSWORD '...';",
            "-- then point the app's DATABASE_URL at it and keep the owner's for migrations.",
        ]
        lines += [statement + ";" for statement in grant_statements(
            role, database=database, schema=schema, owner=owner)]
        self.stdout.write("\n".join(lines))
