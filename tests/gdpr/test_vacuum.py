"""After an erasure, the touched tables are vacuumed (a scheduler duty and a command), so the
erased rows' old versions do not linger in the table pages."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from memadmin.gdpr.models import SubjectRequest
from memadmin.gdpr.services import erasure_tables, vacuum_after_erasures
from memadmin.gdpr.transitions import subject_request_create, subject_request_submit
from memadmin.jobs.scheduler import default_duties
from tests.gdpr.conftest import SUBJECT, run_job

pytestmark = pytest.mark.django_db(transaction=True)


def vacuum_count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = %s",
                       [table])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def test_the_tables_an_erasure_touched_are_vacuumed_once_it_completed(
        actor, workspace, put) -> None:
    workspace.four_eyes_erasure = False
    workspace.save()
    put("likes tea")
    vacuum_after_erasures(force=True)  # a clean start: nothing new since
    assert vacuum_after_erasures() == {"skipped": "no erasure completed since the last vacuum"}

    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                subject_id=SUBJECT, reason="Letter")
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    assert run_job(SubjectRequest.objects.get(pk=sr.pk).job) == "succeeded"
    assert SubjectRequest.objects.get(pk=sr.pk).state == "completed"
    tables = erasure_tables()
    assert "memory_memoryitem" in tables and "gdpr_subjectrequest" in tables
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
    before = {t: vacuum_count(t) for t in tables}

    assert vacuum_after_erasures() == {"vacuumed": tables}
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
    assert all(vacuum_count(t) > before[t] for t in tables), before


def test_it_is_a_scheduled_duty_and_a_command(settings) -> None:
    assert next(d for d in default_duties() if d.name == "vacuum after erasures").every == 3600
    out = StringIO()
    call_command("vacuum_erased", "--force", stdout=out)
    assert out.getvalue().startswith("vacuumed: ")
