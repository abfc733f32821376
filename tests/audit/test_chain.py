"""The audit trail: one hash chain per workspace, append-only, verifiable."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from memadmin.audit.models import GLOBAL_CHAIN, AuditEvent
from memadmin.audit.services import Actor, audit_event_create, verify_chain
from memadmin.workspaces.services import workspace_create
from tests.audit.conftest import as_owner

pytestmark = pytest.mark.django_db

SYSTEM = Actor.system("test")


@pytest.fixture
def workspace():
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
        with as_owner(), connection.cursor() as cursor:
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
        with as_owner(), connection.cursor() as cursor:
            cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
            cursor.execute("DELETE FROM audit_auditevent WHERE id = %s", [events[-1].pk])
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")

        report = verify_chain(str(workspace.pk))
        assert report.broken_at == events[-1].seq

    def test_the_command_fails_on_a_broken_chain(self, workspace, capsys) -> None:
        event = audit_event_create(workspace=workspace, actor=SYSTEM, action="x")
        # Its own workspace only: under xdist a worker's database may hold other files'
        # workspaces, deliberately broken ones among them.
        call_command("verify_audit_chain", workspace="acme")
        assert "acme: ok, 2 events" in capsys.readouterr().out

        with as_owner(), connection.cursor() as cursor:
            cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
            cursor.execute("UPDATE audit_auditevent SET actor_label = 'mallory' WHERE id = %s",
                           [event.pk])
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")
        with pytest.raises(CommandError):
            call_command("verify_audit_chain", workspace="acme")
        assert "BROKEN at event 2" in capsys.readouterr().out


class TestKeyedChain:
    def test_each_hash_is_an_hmac_under_the_active_audit_key(self, workspace, settings) -> None:
        import hashlib
        import hmac

        from memadmin.audit.services import _event_body
        from memadmin.lib.keys import canonical_json

        old = dict(settings.MEMADMIN_AUDIT_KEYS)  # workspace_create's event used these
        settings.MEMADMIN_AUDIT_KEYS = {"k1": "a" * 32, **old}
        event = audit_event_create(workspace=workspace, actor=SYSTEM, action="x")

        assert event.key_id == "k1"
        body = {**_event_body(event), "key_id": "k1"}
        assert event.hash == hmac.new(b"a" * 32, canonical_json(body), hashlib.sha256).hexdigest()
        # Without the key the hash cannot be recomputed: another secret under the same id fails.
        settings.MEMADMIN_AUDIT_KEYS = {"k1": "c" * 32, **old}
        report = verify_chain(str(workspace.pk))
        assert report.broken_at == event.seq and "changed" in report.problem

    def test_older_keys_still_verify_after_a_rotation(self, workspace, settings) -> None:
        old = dict(settings.MEMADMIN_AUDIT_KEYS)
        before = audit_event_create(workspace=workspace, actor=SYSTEM, action="x")
        settings.MEMADMIN_AUDIT_KEYS = {"next": "n" * 32, **old}
        after = audit_event_create(workspace=workspace, actor=SYSTEM, action="x")

        assert (before.key_id, after.key_id) == (next(iter(old)), "next")
        assert verify_chain(str(workspace.pk)).ok
        settings.MEMADMIN_AUDIT_KEYS = {"next": "n" * 32}  # the old key dropped too soon
        report = verify_chain(str(workspace.pk))
        assert not report.ok and "does not list" in report.problem

    def test_data_round_trips_through_the_database_unchanged(self, workspace) -> None:
        audit_event_create(workspace=workspace, actor=SYSTEM, action="x",
                           data={"big": 1e16, "ratio": 0.25, "name": "Zoë", "list": [2.0, "a"]})
        assert verify_chain(str(workspace.pk)).ok


class TestUnkeyedEvents:
    """Events written before the chain was keyed keep their SHA-256; migration 0005 seals each
    such chain with one keyed event."""

    def legacy_chain(self, n: int) -> list[int]:
        import hashlib

        from django.utils import timezone

        from memadmin.audit.services import _event_body
        from memadmin.lib.keys import canonical_json
        from tests.audit.conftest import tamper

        chain = GLOBAL_CHAIN
        prev, ids = "0" * 64, []
        for seq in range(1, n + 1):
            event = AuditEvent(chain=chain, seq=seq, workspace_id=None, actor_id=None,
                               actor_label="old", action="old.event", target_type="",
                               target_id="", data={"n": seq}, created_at=timezone.now(),
                               prev_hash=prev, key_id="")
            event.hash = hashlib.sha256(canonical_json(_event_body(event))).hexdigest()
            event.save(force_insert=True)
            prev = event.hash
            ids.append(event.pk)
        tamper(("INSERT INTO audit_auditchainhead (chain, seq, hash) VALUES (%s, %s, %s)",
                [chain, n, prev]))
        return ids

    def seal(self) -> None:
        import importlib

        from django.apps import apps

        migration = importlib.import_module("memadmin.audit.migrations.0005_audit_keyed")
        migration.seal_unkeyed_chains(apps, None)

    def test_an_unsealed_unkeyed_chain_fails(self, workspace) -> None:
        self.legacy_chain(3)
        report = verify_chain(GLOBAL_CHAIN)
        assert not report.ok and "unkeyed" in report.problem

    def test_the_migration_seals_them_with_a_keyed_event(self, workspace) -> None:
        self.legacy_chain(3)
        self.seal()

        seal = AuditEvent.objects.get(chain=GLOBAL_CHAIN, seq=4)
        assert (seal.action, seal.data, bool(seal.key_id)) == (
            "audit.keyed", {"unkeyed_events": 3}, True)
        assert verify_chain(GLOBAL_CHAIN).ok
        from memadmin.audit.sentences import sentence

        said = sentence(seal, workspace_slug="acme", places={}, list_url="/")
        assert f"{said.actor} {said.before}" == (
            "memadmin migration sealed the 3 unkeyed audit events before this one")
        # The workspace's own (keyed) chain gets no seal.
        assert not AuditEvent.objects.filter(chain=str(workspace.pk),
                                             action="audit.keyed").exists()

    def test_rewriting_the_unkeyed_prefix_breaks_the_seal(self, workspace) -> None:
        import hashlib

        from memadmin.audit.services import _event_body
        from memadmin.lib.keys import canonical_json
        from tests.audit.conftest import tamper

        ids = self.legacy_chain(3)
        self.seal()
        # Someone rewrites event 3 and recomputes its SHA-256 (anyone can): the keyed seal
        # after it still names the old hash.
        event = AuditEvent.objects.get(pk=ids[2])
        event.data = {"n": 99}
        tamper(("UPDATE audit_auditevent SET data = '{\"n\": 99}', hash = %s WHERE id = %s",
                [hashlib.sha256(canonical_json(_event_body(event))).hexdigest(), event.pk]))

        report = verify_chain(GLOBAL_CHAIN)
        assert report.broken_at == 4 and "does not link" in report.problem

    def test_an_unkeyed_event_after_keyed_ones_fails(self, workspace) -> None:
        import hashlib

        from memadmin.audit.services import _event_body
        from memadmin.lib.keys import canonical_json
        from tests.audit.conftest import tamper

        event = audit_event_create(workspace=workspace, actor=SYSTEM, action="x")
        event.key_id = ""
        tamper(("UPDATE audit_auditevent SET key_id = '', hash = %s WHERE id = %s",
                [hashlib.sha256(canonical_json(_event_body(event))).hexdigest(), event.pk]),
               ("UPDATE audit_auditchainhead SET hash = (SELECT hash FROM audit_auditevent "
                "WHERE id = %s) WHERE chain = %s", [event.pk, event.chain]), replica=True)

        report = verify_chain(str(workspace.pk))
        assert report.broken_at == event.seq and "unkeyed, after keyed" in report.problem


class TestHead:
    def test_the_head_only_advances_by_one(self, workspace) -> None:
        from memadmin.audit.models import AuditChainHead

        audit_event_create(workspace=workspace, actor=SYSTEM, action="x")
        for change in ({"seq": 1}, {"seq": 10}):
            with pytest.raises(DatabaseError), transaction.atomic():
                AuditChainHead.objects.filter(chain=str(workspace.pk)).update(**change)
        with pytest.raises(DatabaseError), transaction.atomic():
            AuditChainHead.objects.filter(chain=str(workspace.pk)).delete()
