"""The audit trail: one hash chain per workspace, append-only, verifiable."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor, audit_event_create, verify_chain
from memadmin.workspaces.services import workspace_create

pytestmark = pytest.mark.django_db

SYSTEM = Actor.system("test")


@pytest.fixture
def workspace():  # type: ignore[no-untyped-def]
    return workspace_create(actor=SYSTEM, slug="acme", name="Acme")


class TestAppend:
    def test_it_numbers_events_per_workspace_and_links_them(self, workspace) -> None:
        other = workspace_create(actor=SYSTEM, slug="globex", name="Globex")
        first = audit_event_create(workspace=workspace, actor=SYSTEM, action="x.one")
        second = audit_event_create(workspace=workspace, actor=SYSTEM, action="x.two")
        elsewhere = audit_event_create(workspace=other, actor=SYSTEM, action="x.one")

        # workspace_create wrote event 1 of each chain
        assert (first.seq, second.seq, elsewhere.seq) == (2, 3, 2)
        assert second.prev_hash == first.hash
        assert elsewhere.chain != first.chain

    def test_it_refuses_memory_content_and_clear_subject_ids(self, workspace) -> None:
        for key in ("content", "subject_id", "credential"):
            with pytest.raises(ValueError):
                audit_event_create(workspace=workspace, actor=SYSTEM, action="x",
                                   data={"nested": {key: "secret"}})

    def test_it_rolls_back_with_the_change(self, workspace) -> None:
        before = AuditEvent.objects.count()
        with pytest.raises(RuntimeError), transaction.atomic():
            audit_event_create(workspace=workspace, actor=SYSTEM, action="x")
            raise RuntimeError("the change failed")
        assert AuditEvent.objects.count() == before
        assert verify_chain(str(workspace.pk)).ok


class TestAppendOnly:
    def test_it_refuses_updates_and_deletes_in_the_database(self, workspace) -> None:
        event = audit_event_create(workspace=workspace, actor=SYSTEM, action="x")
        with pytest.raises(DatabaseError), transaction.atomic():
            AuditEvent.objects.filter(pk=event.pk).update(action="y")
        with pytest.raises(DatabaseError), transaction.atomic():
            AuditEvent.objects.filter(pk=event.pk).delete()


class TestVerify:
    def test_it_accepts_an_intact_chain(self, workspace) -> None:
        for n in range(5):
            audit_event_create(workspace=workspace, actor=SYSTEM, action="x", data={"n": n})
        report = verify_chain(str(workspace.pk))
        assert report.ok and report.checked == 6

    def test_it_names_the_first_changed_event(self, workspace) -> None:
        events = [audit_event_create(workspace=workspace, actor=SYSTEM, action="x",
                                     data={"n": n}) for n in range(4)]
        tampered = events[1]
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
            cursor.execute("UPDATE audit_auditevent SET data = '{\"n\": 99}' WHERE id = %s",
                           [tampered.pk])
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")

        report = verify_chain(str(workspace.pk))
        assert report.broken_at == tampered.seq
        assert "changed" in report.problem

    def test_it_notices_a_removed_tail(self, workspace) -> None:
        events = [audit_event_create(workspace=workspace, actor=SYSTEM, action="x")
                  for _ in range(3)]
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
            cursor.execute("DELETE FROM audit_auditevent WHERE id = %s", [events[-1].pk])
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")

        report = verify_chain(str(workspace.pk))
        assert report.broken_at == events[-1].seq

    def test_the_command_fails_on_a_broken_chain(self, workspace, capsys) -> None:
        event = audit_event_create(workspace=workspace, actor=SYSTEM, action="x")
        call_command("verify_audit_chain")
        assert "acme: ok, 2 events" in capsys.readouterr().out

        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
            cursor.execute("UPDATE audit_auditevent SET actor_label = 'mallory' WHERE id = %s",
                           [event.pk])
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")
        with pytest.raises(CommandError):
            call_command("verify_audit_chain", workspace="acme")
        assert "BROKEN at event 2" in capsys.readouterr().out
