"""After an erasure, the touched tables are vacuumed (a scheduler duty and a command), so the
erased rows' old versions do not linger in the table pages."""

from __future__ import annotations

import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from memadmin.gdpr.models import SubjectRequest
from memadmin.gdpr.services import erasure_tables, vacuum_after_erasures
from memadmin.gdpr.transitions import subject_request_create, subject_request_submit
from memadmin.jobs.scheduler import default_duties
from tests.audit.conftest import as_owner
from tests.gdpr.conftest import SUBJECT, run_job

pytestmark = pytest.mark.django_db(transaction=True)

# Only a table's owner may VACUUM it (PostgreSQL 15), so the duty runs as the owner here, as the
# deploy guide says it must; under ``make test-restricted`` the app's own role cannot (the last
# test is about what it says then).


def last_vacuums(tables: list[str]) -> dict[str, object]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush(), pg_stat_clear_snapshot()")
        cursor.execute("SELECT relname, last_vacuum FROM pg_stat_user_tables "
                       "WHERE relname = ANY(%s)", [tables])
        return dict(cursor.fetchall())


def test_the_tables_an_erasure_touched_are_vacuumed_once_it_completed(
        actor, workspace, put) -> None:
    workspace.four_eyes_erasure = False
    workspace.save()
    put("likes tea")
    with as_owner():
        vacuum_after_erasures(force=True)  # a clean start: nothing new since
        assert vacuum_after_erasures() == {
            "skipped": "no erasure completed since the last vacuum"}

    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                subject_id=SUBJECT, reason="Letter")
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    assert run_job(SubjectRequest.objects.get(pk=sr.pk).job) == "succeeded"
    assert SubjectRequest.objects.get(pk=sr.pk).state == "completed"
    tables = erasure_tables()
    assert "memory_memoryitem" in tables and "gdpr_subjectrequest" in tables
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        started = cursor.fetchone()[0]

    with as_owner():
        assert vacuum_after_erasures() == {"vacuumed": tables}
    # PostgreSQL publishes a backend's statistics at most once a second: wait for them (a
    # deadline, not a timing assertion).
    deadline = time.monotonic() + 30
    while True:
        after = last_vacuums(tables)
        done = all(after.get(t) is not None and after[t] >= started for t in tables)
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert done, (started, after)


def test_it_is_a_scheduled_duty_and_a_command(settings) -> None:
    assert next(d for d in default_duties() if d.name == "vacuum after erasures").every == 3600
    out = StringIO()
    with as_owner():
        call_command("vacuum_erased", "--force", stdout=out)
    assert out.getvalue().startswith("vacuumed: ")


def test_tables_the_role_may_not_vacuum_are_named_not_reported_vacuumed(workspace) -> None:
    """On PostgreSQL 15 only a table's owner (or a superuser) may VACUUM it; anyone else gets a
    warning and nothing happens. The duty must say so, not report those tables vacuumed."""
    role = f"vacuum_probe_{connection.settings_dict['NAME']}"[:63]
    quoted = connection.ops.quote_name(role)
    with as_owner():  # creating a role is the owner's, whichever role the tests run as
        with connection.cursor() as cursor:
            cursor.execute(f"DROP ROLE IF EXISTS {quoted}")
            cursor.execute(f"CREATE ROLE {quoted} NOLOGIN")
            cursor.execute(f"GRANT SELECT ON gdpr_subjectrequest TO {quoted}")
            cursor.execute(f"SET ROLE {quoted}")
        try:
            outcome = vacuum_after_erasures(force=True)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET ROLE")
                cursor.execute(f"REVOKE ALL ON gdpr_subjectrequest FROM {quoted}")
                cursor.execute(f"DROP ROLE {quoted}")
    assert outcome["vacuumed"] == []
    assert outcome["not_permitted"] == erasure_tables()
