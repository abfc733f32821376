"""Tokens outlive neither their purpose nor their minter's role: every agent token, admin
credential and metrics token expires (90 days unless chosen; "never" only explicitly), shows
its last use, and is suspended when its minter loses the role that let them mint it."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.memory.models import AgentToken
from memadmin.memory.services import agent_token_mint
from memadmin.workspaces.models import MetricsToken
from memadmin.workspaces.services import (
    admin_credential_mint,
    member_set_roles,
    metrics_token_mint,
    role_revoke,
)

pytestmark = pytest.mark.django_db
SYSTEM = Actor.system("test")


def recall(token: str, partition: str) -> int:
    body = {"version": 1, "operation": "recall", "operationId": "op-1",
            "deadlineAt": (timezone.now() + dt.timedelta(seconds=30)).isoformat(),
            "partition": partition, "input": {"text": "x"}}
    return Client().post("/oc-memory", json.dumps(body), content_type="application/json",
                         headers={"Authorization": f"Bearer {token}"}).status_code


def admin_list(token: str, partition: str) -> int:
    body = {"version": 1, "operation": "count", "operationId": "op-2",
            "deadlineAt": (timezone.now() + dt.timedelta(seconds=30)).isoformat(),
            "scope": {"partitions": [partition]}, "filters": {}}
    return Client().post("/oc-memory", json.dumps(body), content_type="application/json",
                         headers={"Authorization": f"Bearer {token}"}).status_code


def metrics(token: str) -> int:
    return Client().get(reverse("providers:metrics", args=["acme"]),
                        headers={"Authorization": f"Bearer {token}"}).status_code


class TestExpiry:
    def test_every_kind_of_token_expires_after_90_days_by_default(self, workspace,
                                                                  namespace) -> None:
        agent, _ = agent_token_mint(actor=SYSTEM, workspace=workspace, namespaces=[namespace],
                                    access="read", name="bot")
        credential, _ = admin_credential_mint(actor=SYSTEM, workspace=workspace, name="remote")
        metric, _ = metrics_token_mint(actor=SYSTEM, workspace=workspace, name="prometheus")

        for row in (agent, credential, metric):
            assert row.expires_at is not None
            assert abs((row.expires_at - timezone.now()) - dt.timedelta(days=90)) < dt.timedelta(
                minutes=5)

    def test_expired_tokens_are_refused_everywhere(self, workspace, namespace) -> None:
        _, agent = agent_token_mint(actor=SYSTEM, workspace=workspace, namespaces=[namespace],
                                    access="read", name="bot", lifetime_days=7)
        _, admin = admin_credential_mint(actor=SYSTEM, workspace=workspace, name="r",
                                         lifetime_days=7)
        _, metric = metrics_token_mint(actor=SYSTEM, workspace=workspace, name="p",
                                       lifetime_days=7)
        partition = namespace.partition_key
        assert (recall(agent, partition), admin_list(admin, partition), metrics(metric)) == (
            200, 200, 200)

        with time_machine.travel(timezone.now() + dt.timedelta(days=8)):
            assert (recall(agent, partition), admin_list(admin, partition),
                    metrics(metric)) == (401, 401, 401)

    def test_never_is_an_explicit_choice_in_the_form(self, client_for, namespace) -> None:
        client_for("nora").post(reverse("memory:token_mint", args=["acme"]), {
            "name": "forever", "access": "read", "namespaces": [str(namespace.pk)],
            "lifetime": "never"})
        client_for("nora").post(reverse("memory:token_mint", args=["acme"]), {
            "name": "a week", "access": "read", "namespaces": [str(namespace.pk)],
            "lifetime": "7"})

        tokens = {t.name: t for t in AgentToken.objects.all()}
        assert tokens["forever"].expires_at is None
        assert tokens["a week"].expires_at is not None
        assert tokens["a week"].expires_at < timezone.now() + dt.timedelta(days=8)

    def test_the_pages_show_expiry_and_last_use(self, client_for, workspace,
                                                namespace) -> None:
        _, agent = agent_token_mint(actor=SYSTEM, workspace=workspace, namespaces=[namespace],
                                    access="read", name="bot")
        _, metric = metrics_token_mint(actor=SYSTEM, workspace=workspace, name="p")
        recall(agent, namespace.partition_key)
        metrics(metric)

        tokens_page = client_for("ada").get(reverse("memory:tokens", args=["acme"]))
        settings_page = client_for("ada").get(reverse("workspaces:settings", args=["acme"]))

        expiry = (timezone.now() + dt.timedelta(days=90)).strftime("%Y-%m-%d")
        assert expiry in tokens_page.content.decode() and "ago" in tokens_page.content.decode()
        assert MetricsToken.objects.get().last_used_at is not None
        assert "last used 0" in settings_page.content.decode()


class TestSuspension:
    def test_a_minter_losing_their_namespace_suspends_their_tokens(
            self, users, workspace, namespace) -> None:
        token, secret = agent_token_mint(actor=Actor.of(users["nora"]), workspace=workspace,
                                         namespaces=[namespace], access="read-write",
                                         name="nora's bot")
        assert recall(secret, namespace.partition_key) == 200

        role_revoke(actor=Actor.of(users["ada"]), workspace=workspace, user=users["nora"],
                    role="owner", namespace=namespace)

        token.refresh_from_db()
        assert token.state == "suspended" and "no longer owns" in token.suspended_reason
        assert recall(secret, namespace.partition_key) == 401
        event = AuditEvent.objects.get(action="agent_token.suspend")
        assert event.data["prefix"] == token.prefix and secret not in json.dumps(event.data)

    def test_only_the_tokens_of_the_minter_who_lost_the_role_are_suspended(
            self, users, workspace, namespace) -> None:
        token, _ = agent_token_mint(actor=Actor.of(users["alice"]), workspace=workspace,
                                    namespaces=[namespace], access="read", name="bot")

        role_revoke(actor=SYSTEM, workspace=workspace, user=users["alice"], role="owner",
                    namespace=None)
        other, _ = agent_token_mint(actor=Actor.of(users["ada"]), workspace=workspace,
                                    namespaces=[namespace], access="read", name="ada's")
        role_revoke(actor=SYSTEM, workspace=workspace, user=users["vic"], role="viewer")

        token.refresh_from_db()
        other.refresh_from_db()
        assert (token.state, other.state) == ("suspended", "active")

    def test_an_admin_removed_from_the_workspace_suspends_their_credentials(
            self, users, workspace, namespace) -> None:
        credential, secret = admin_credential_mint(actor=Actor.of(users["ada"]),
                                                   workspace=workspace, name="central")
        metric, metric_secret = metrics_token_mint(actor=Actor.of(users["ada"]),
                                                   workspace=workspace, name="p")

        member_set_roles(actor=Actor.of(users["root"]), workspace=workspace, user=users["ada"],
                         roles=[])

        credential.refresh_from_db()
        metric.refresh_from_db()
        assert (credential.state, metric.state) == ("suspended", "suspended")
        assert admin_list(secret, namespace.partition_key) == 401
        assert metrics(metric_secret) == 401

    def test_suspension_is_visible_and_an_admin_reactivates(self, client_for, users,
                                                            workspace, namespace) -> None:
        token, secret = agent_token_mint(actor=Actor.of(users["nora"]), workspace=workspace,
                                         namespaces=[namespace], access="read", name="bot")
        role_revoke(actor=SYSTEM, workspace=workspace, user=users["nora"], role="owner",
                    namespace=namespace)
        url = reverse("workspaces:secret_reactivate", args=["acme", "agent-token", token.pk])

        page = client_for("ada").get(reverse("memory:tokens", args=["acme"])).content.decode()
        assert "suspended" in page and url in page
        assert client_for("alice").post(url).status_code == 403
        assert client_for("mallory").post(url).status_code == 404
        assert client_for("ada").get(url).status_code == 405

        assert client_for("ada").post(url).status_code == 302

        token.refresh_from_db()
        assert token.state == "active" and recall(secret, namespace.partition_key) == 200
        assert AuditEvent.objects.filter(action="agent_token.reactivate").count() == 1

    def test_an_expired_token_stays_dead_when_reactivated(self, users, workspace,
                                                          namespace) -> None:
        from memadmin.workspaces.services import hashed_secret_reactivate

        token, secret = agent_token_mint(actor=Actor.of(users["nora"]), workspace=workspace,
                                         namespaces=[namespace], access="read", name="bot",
                                         lifetime_days=1)
        role_revoke(actor=SYSTEM, workspace=workspace, user=users["nora"], role="owner",
                    namespace=namespace)
        with time_machine.travel(timezone.now() + dt.timedelta(days=2)):
            hashed_secret_reactivate(actor=SYSTEM, row=token)
            assert token.state == "expired"
            assert recall(secret, namespace.partition_key) == 401


class TestAdminCredentialOnTheWire:
    """Legal holds and their overrides are compliance decisions; pending content is for the
    review screen: an admin credential carries them only where the workspace enables it."""

    @pytest.fixture
    def admin(self, workspace) -> str:
        return admin_credential_mint(actor=SYSTEM, workspace=workspace, name="remote")[1]

    @staticmethod
    def call(token: str, operation: str, partition: str, **fields):
        body = {"version": 1, "operation": operation, "operationId": f"op-{operation}-"
                f"{timezone.now().timestamp()}",
                "deadlineAt": (timezone.now() + dt.timedelta(seconds=30)).isoformat(),
                "scope": {"partitions": [partition]}, **fields}
        response = Client().post("/oc-memory", json.dumps(body),
                                 content_type="application/json",
                                 headers={"Authorization": f"Bearer {token}"})
        return response.status_code, response.json()

    def _held_item(self, admin: str, partition: str) -> str:
        status, made = self.call(admin, "retain", partition, tier="facts", key="",
                                 content="held fact", mode="replace",
                                 dataSubjectId="subject-1")
        assert status == 200
        status, _ = self.call(admin, "freeze", partition,
                              target={"level": "item", "itemId": made["id"]},
                              kind="legal_hold", reason="Case 1")
        assert status == 200
        return str(made["id"])

    def test_lifting_a_legal_hold_and_overriding_it_are_refused_by_default(
            self, admin, namespace) -> None:
        partition = namespace.partition_key
        item = self._held_item(admin, partition)

        lift = self.call(admin, "freeze", partition, target={"level": "item", "itemId": item},
                         kind="legal_hold", action="lift")
        override = self.call(admin, "forget", partition, dataSubjectId="subject-1",
                             overrideHold=True)

        assert lift[0] == 403 and "wire" in lift[1]["error"]["message"]
        assert override[0] == 403
        assert self.call(admin, "forget", partition, dataSubjectId="subject-1")[1] == {
            "removed": 0, "held": 1}

    def test_the_workspace_setting_enables_them(self, admin, workspace, namespace) -> None:
        partition = namespace.partition_key
        item = self._held_item(admin, partition)
        workspace.wire_compliance = True
        workspace.save(update_fields=["wire_compliance"])

        assert self.call(admin, "forget", partition, dataSubjectId="subject-1",
                         overrideHold=True)[1] == {"removed": 1, "held": 0}
        assert item

    def test_pending_content_never_leaves_by_default(self, admin, namespace) -> None:
        partition = namespace.partition_key
        status, made = self.call(admin, "retain", partition, tier="facts", key="",
                                 content="CANARY-pending-content", mode="replace")
        self.call(admin, "quarantine", partition, id=made["id"], state="pending")

        listed = self.call(admin, "list", partition, filters={})
        exported = self.call(admin, "export", partition, filters={})
        fetched = self.call(admin, "get", partition, id=made["id"])

        assert "CANARY" not in json.dumps(listed[1]) + json.dumps(exported[1])
        assert listed[1]["items"][0]["quarantine"] == "pending"
        assert fetched[0] == 403 and "CANARY" not in json.dumps(fetched[1])
