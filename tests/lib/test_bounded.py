"""Database work bounded by a deadline (``lib/bounded.py``)."""

from __future__ import annotations

import time

import pytest
from django.db import DatabaseError, connection

from memadmin.lib.bounded import OutOfTime, is_timeout, statements_within
from memadmin.workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def left_for(seconds: float):
    end = time.monotonic() + seconds
    return lambda: end - time.monotonic()


def setting(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting(%s)", [name])
        return str(cursor.fetchone()[0])


def both() -> tuple[int, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('statement_timeout'), "
                       "current_setting('lock_timeout')")
        row = cursor.fetchone()
    return int(row[0].removesuffix("ms")), int(row[1].removesuffix("ms"))


def test_each_statement_gets_the_time_left_and_the_callers_settings_come_back() -> None:
    before = setting("statement_timeout"), setting("lock_timeout")
    with statements_within(left_for(5)):
        first = both()
        time.sleep(0.05)
        second = both()
    assert first[0] == first[1] and second[0] == second[1]  # statement and lock timeouts
    assert 0 < second[0] < first[0] <= 5000  # each statement: the time left at that moment
    assert (setting("statement_timeout"), setting("lock_timeout")) == before


def test_a_statement_longer_than_the_time_left_is_cancelled() -> None:
    with (pytest.raises(DatabaseError) as raised, statements_within(left_for(0.2)),
          connection.cursor() as cursor):
        cursor.execute("SELECT pg_sleep(2)")
    assert is_timeout(raised.value)


def test_work_finished_after_the_deadline_is_rolled_back() -> None:
    with pytest.raises(OutOfTime), statements_within(left_for(0.2)):
        Workspace.objects.create(slug="late", name="Late")
        time.sleep(0.3)
    assert not Workspace.objects.filter(slug="late").exists()


def test_no_time_left_refuses_before_any_statement() -> None:
    with pytest.raises(OutOfTime), statements_within(left_for(-1)):
        pass  # pragma: no cover


def test_a_server_side_cursor_works_inside() -> None:
    Workspace.objects.create(slug="one", name="One")
    with statements_within(left_for(5)):
        slugs = [w.slug for w in Workspace.objects.filter(slug="one").iterator(chunk_size=10)]
    assert slugs == ["one"]


def test_a_statement_of_several_commands_runs_whole_and_bounded() -> None:
    """A pipeline prepares each statement, and a prepared statement holds one command: a
    string of several commands (without parameters, as psycopg allows them) must still run
    whole within the time left, not fail with "cannot insert multiple commands"."""
    with statements_within(left_for(5)), connection.cursor() as cursor:
        cursor.execute("SET LOCAL application_name = 'first'; "
                       "SET LOCAL search_path = public;  ")
        assert setting("application_name") == "first"
        assert setting("search_path") == "public"
    with (pytest.raises(DatabaseError) as raised, statements_within(left_for(0.2)),
          connection.cursor() as cursor):
        cursor.execute("SELECT 1; SELECT pg_sleep(2)")
    assert is_timeout(raised.value)
