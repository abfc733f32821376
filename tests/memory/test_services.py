"""Memory services: every change goes through the contract and is audited in its transaction."""

from __future__ import annotations

import uuid

import pytest
from django.core.exceptions import ValidationError

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.lib.keys import secret_digest
from memadmin.memory import services
from memadmin.memory.models import AgentToken, Freeze, MemoryItem, MemoryRevision
from memadmin.memory.services import (
    FreezeSubject,
    agent_token_mint,
    agent_token_revoke,
    memory_freeze_lift,
    memory_freeze_place,
    memory_item_restore,
    memory_item_update,
    memory_items_delete,
)
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

pytestmark = pytest.mark.django_db
ALICE = Actor.system("alice")


@pytest.fixture
def item_id(local_config, namespace) -> str:
    result = provider_for(local_config).retain(
        "facts", "hosting", "We use the free tier.", "replace", operation_id="seed-1",
        actor="agent:mat_abc", scope=c.Scope.of(namespace.partition_key), deadline=5)
    return result.id


def last_event(workspace) -> AuditEvent:
    return AuditEvent.objects.filter(workspace_id=workspace.pk).latest("seq")


class TestEdit:
    def test_it_saves_a_new_revision_and_audits_without_content(self, namespace,
                                                                item_id: str) -> None:
        result = memory_item_update(actor=ALICE, namespace=namespace, item_id=item_id,
                                    content="We use the paid tier.", mode="replace",
                                    expected_revision=1)
        assert result.revision == 2
        previous = MemoryRevision.objects.get(item_id=uuid.UUID(item_id))
        assert (previous.revision, previous.actor) == (1, "agent:mat_abc")
        event = last_event(namespace.resource.workspace)
        assert event.action == "memory.edit"
        assert event.data["to_revision"] == 2
        assert "paid tier" not in str(event.data)

    def test_a_stale_edit_is_refused_and_leaves_no_audit_event(self, namespace,
                                                               item_id: str) -> None:
        memory_item_update(actor=ALICE, namespace=namespace, item_id=item_id, content="v2",
                           mode="replace", expected_revision=1)
        before = AuditEvent.objects.count()
        with pytest.raises(c.Conflict):
            memory_item_update(actor=ALICE, namespace=namespace, item_id=item_id,
                               content="lost?", mode="replace", expected_revision=1)
        assert AuditEvent.objects.count() == before
        assert MemoryItem.objects.get(pk=item_id).content == "v2"

    def test_a_failed_audit_rolls_the_edit_back(self, namespace, item_id: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(**kwargs: object) -> None:
            raise RuntimeError("audit store unavailable")

        monkeypatch.setattr(services, "audit_event_create", broken)
        with pytest.raises(RuntimeError):
            memory_item_update(actor=ALICE, namespace=namespace, item_id=item_id,
                               content="changed", mode="replace", expected_revision=1)
        item = MemoryItem.objects.get(pk=item_id)
        assert (item.content, item.revision) == ("We use the free tier.", 1)
        assert not MemoryRevision.objects.filter(item_id=uuid.UUID(item_id)).exists()

    def test_restore_makes_an_old_revision_current_as_a_new_one(self, namespace,
                                                                item_id: str) -> None:
        memory_item_update(actor=ALICE, namespace=namespace, item_id=item_id, content="v2",
                           mode="replace", expected_revision=1)
        result = memory_item_restore(actor=ALICE, namespace=namespace, item_id=item_id,
                                     revision=1, expected_revision=2)
        assert result.revision == 3
        assert MemoryItem.objects.get(pk=item_id).content == "We use the free tier."
        assert last_event(namespace.resource.workspace).action == "memory.restore"


class TestDelete:
    def test_it_deletes_and_audits_counts(self, namespace, item_id: str) -> None:
        result = memory_items_delete(actor=ALICE, namespace=namespace, ids=[item_id])
        assert (result.removed, result.held) == (1, 0)
        event = last_event(namespace.resource.workspace)
        assert (event.action, event.data["removed"]) == ("memory.delete", 1)

    def test_the_audit_never_records_a_clear_subject_or_query(self, namespace) -> None:
        memory_items_delete(actor=ALICE, namespace=namespace,
                            filters=c.ItemFilters(subject="jane@example.com", q="jane"))
        data = last_event(namespace.resource.workspace).data
        assert "jane" not in str(data)
        assert data["filters"]["subject"] == "(set)"


class TestFreeze:
    def test_a_namespace_freeze_blocks_edits_and_lifting_allows_them(self, resource, namespace,
                                                                    item_id: str) -> None:
        subject = FreezeSubject(resource, namespace)
        freeze = memory_freeze_place(actor=ALICE, subject=subject, kind="freeze",
                                     reason="audit in progress")
        assert (freeze.created_by_label, freeze.level) == ("alice", "namespace")
        with pytest.raises(c.Frozen) as refused:
            memory_item_update(actor=ALICE, namespace=namespace, item_id=item_id,
                               content="x", mode="replace", expected_revision=1)
        assert refused.value.details["reason"] == "audit in progress"

        assert memory_freeze_lift(actor=ALICE, subject=subject, kind="freeze") == 1
        memory_item_update(actor=ALICE, namespace=namespace, item_id=item_id, content="x",
                           mode="replace", expected_revision=1)
        assert [e.action for e in AuditEvent.objects.filter(
            action__in=["freeze.place", "freeze.lift"])] == ["freeze.place", "freeze.lift"]

    def test_placing_twice_keeps_one_row(self, resource, namespace) -> None:
        subject = FreezeSubject(resource, namespace)
        first = memory_freeze_place(actor=ALICE, subject=subject, kind="freeze", reason="r")
        second = memory_freeze_place(actor=ALICE, subject=subject, kind="freeze", reason="r")
        assert first.pk == second.pk
        assert Freeze.objects.count() == 1

    def test_an_item_hold_blocks_that_item_only(self, resource, namespace, local_config,
                                                item_id: str) -> None:
        memory_freeze_place(actor=ALICE, subject=FreezeSubject(resource, namespace, item_id),
                            kind="legal_hold", reason="case 17")
        with pytest.raises(c.Frozen):
            memory_item_update(actor=ALICE, namespace=namespace, item_id=item_id,
                               content="x", mode="replace", expected_revision=1)
        provider_for(local_config).retain("pins", "", "other items still write", "replace",
                                          operation_id="op-2",
                                          scope=c.Scope.of(namespace.partition_key), deadline=5)

    def test_a_resource_without_namespaces_can_be_frozen(self, workspace, local_config) -> None:
        from memadmin.workspaces.services import namespace_create, resource_create

        empty = resource_create(actor=ALICE, workspace=workspace, provider=local_config,
                                slug="empty")
        memory_freeze_place(actor=ALICE, subject=FreezeSubject(empty), kind="freeze",
                            reason="not yet")
        later = namespace_create(actor=ALICE, resource=empty, slug="later")
        with pytest.raises(c.Frozen):
            provider_for(local_config).retain("pins", "", "x", "replace", operation_id="op-3",
                                              scope=c.Scope.of(later.partition_key), deadline=5)

    @pytest.mark.parametrize("reason", ["", "   "])
    def test_it_requires_a_reason(self, resource, namespace, reason: str) -> None:
        with pytest.raises(ValidationError):
            memory_freeze_place(actor=ALICE, subject=FreezeSubject(resource, namespace),
                                kind="freeze", reason=reason)


class TestAgentTokens:
    def test_the_secret_is_returned_once_and_only_its_hash_is_stored(self, workspace,
                                                                    namespace) -> None:
        token, secret = agent_token_mint(actor=ALICE, workspace=workspace,
                                         namespaces=[namespace], access="read-write",
                                         name="support bot")
        stored = AgentToken.objects.get(pk=token.pk)
        assert stored.secret_hash == secret_digest(secret)
        assert secret not in str(AgentToken.objects.filter(pk=token.pk).values().first())
        assert secret.startswith(stored.prefix)
        assert secret not in str(last_event(workspace).data)

    def test_it_refuses_namespaces_of_another_workspace(self, other_workspace,
                                                        namespace) -> None:
        with pytest.raises(ValidationError):
            agent_token_mint(actor=ALICE, workspace=other_workspace, namespaces=[namespace],
                             access="read", name="x")

    def test_revoking_is_audited_once(self, workspace, namespace) -> None:
        token, _ = agent_token_mint(actor=ALICE, workspace=workspace, namespaces=[namespace],
                                    access="read", name="x")
        agent_token_revoke(actor=ALICE, token=token)
        agent_token_revoke(actor=ALICE, token=token)
        assert AuditEvent.objects.filter(action="agent_token.revoke").count() == 1
