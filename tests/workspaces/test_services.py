"""Workspace, resource, namespace and provider services: validation, partition keys, audit."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.memory.models import NamespaceCounter
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from memadmin.providers.services import (
    provider_config_create,
    provider_config_delete,
    provider_config_update,
)
from memadmin.workspaces.models import Workspace, derive_partition_key
from memadmin.workspaces.services import (
    namespace_create,
    namespace_delete,
    namespace_update,
    resource_create,
    resource_delete,
    workspace_update_settings,
)

pytestmark = pytest.mark.django_db
SYSTEM = Actor.system("test")


def actions(workspace) -> list[str]:
    return list(AuditEvent.objects.filter(workspace_id=workspace.pk)
                .order_by("seq").values_list("action", flat=True))


class TestNamespaceCreate:
    def test_it_stores_a_derived_partition_key_and_a_zero_counter(self, resource, settings) -> None:
        ns = namespace_create(actor=SYSTEM, resource=resource, slug="team_emea")

        assert ns.partition_key == derive_partition_key(
            workspace_id=resource.workspace_id, environment=settings.MEMADMIN_ENVIRONMENT,
            resource_slug="knowledge", namespace_slug="team_emea")
        assert ns.partition_key.startswith("ocmem_v1_")
        counter = NamespaceCounter.objects.get(namespace=ns)
        assert (counter.items, counter.bytes) == (0, 0)
        assert actions(resource.workspace)[-1] == "namespace.create"

    def test_it_never_recomputes_the_key(self, resource, settings) -> None:
        ns = namespace_create(actor=SYSTEM, resource=resource, slug="alice")
        key = ns.partition_key
        settings.MEMADMIN_ENVIRONMENT = "elsewhere"
        namespace_update(actor=SYSTEM, namespace=ns, description="renamed env")
        ns.refresh_from_db()
        assert ns.partition_key == key

    def test_distinct_environments_and_namespaces_get_distinct_keys(self, workspace) -> None:
        keys = {derive_partition_key(workspace_id=workspace.pk, environment=env,
                                     resource_slug="r", namespace_slug=slug)
                for env in ("prod", "staging") for slug in ("a", "b")}
        assert len(keys) == 4

    def test_it_accepts_a_remote_stores_own_key(self, resource) -> None:
        ns = namespace_create(actor=SYSTEM, resource=resource, slug="remote",
                              partition_key="remote-store:42")
        assert ns.partition_key == "remote-store:42"

    @pytest.mark.parametrize("slug", ["", "a b", "x" * 129, "é", "a/b", "a\x00b", "'; DROP"])
    def test_it_refuses_bad_slugs(self, resource, slug: str) -> None:
        with pytest.raises(ValidationError):
            namespace_create(actor=SYSTEM, resource=resource, slug=slug)

    def test_it_refuses_a_duplicate_slug_in_the_resource(self, resource) -> None:
        namespace_create(actor=SYSTEM, resource=resource, slug="alice")
        with pytest.raises(ValidationError):
            namespace_create(actor=SYSTEM, resource=resource, slug="alice")


class TestNamespaceDelete:
    def test_it_deletes_an_empty_namespace(self, namespace) -> None:
        workspace = namespace.resource.workspace
        namespace_delete(actor=SYSTEM, namespace=namespace)
        assert actions(workspace)[-1] == "namespace.delete"

    def test_it_refuses_while_memory_remains(self, namespace, local_config) -> None:
        provider_for(local_config).retain(
            "pins", "", "keep me", "replace", operation_id="op-1",
            scope=c.Scope.of(namespace.partition_key), deadline=5)
        with pytest.raises(ValidationError):
            namespace_delete(actor=SYSTEM, namespace=namespace)


class TestResource:
    @pytest.mark.parametrize("max_bytes", [0, 16385, -1])
    def test_it_keeps_max_bytes_within_1_to_16384(self, workspace, local_config,
                                                   max_bytes: int) -> None:
        with pytest.raises(ValidationError):
            resource_create(actor=SYSTEM, workspace=workspace, provider=local_config,
                            slug="r", max_bytes=max_bytes)

    def test_it_refuses_a_provider_of_another_workspace(self, other_workspace,
                                                        local_config) -> None:
        with pytest.raises(ValidationError):
            resource_create(actor=SYSTEM, workspace=other_workspace, provider=local_config,
                            slug="r")

    def test_it_deletes_only_without_namespaces(self, resource, namespace) -> None:
        with pytest.raises(ValidationError):
            resource_delete(actor=SYSTEM, resource=resource)
        namespace_delete(actor=SYSTEM, namespace=namespace)
        resource_delete(actor=SYSTEM, resource=resource)


class TestWorkspaceSettings:
    def test_it_updates_and_audits_settings(self, workspace) -> None:
        # Four eyes goes off only through a second admin (tests/workspaces/test_four_eyes.py);
        # turning it on, and the other settings, apply at once.
        Workspace.objects.filter(pk=workspace.pk).update(four_eyes_erasure=False)
        workspace.refresh_from_db()
        workspace_update_settings(actor=SYSTEM, workspace=workspace, four_eyes_erasure=True,
                                  subject_request_due_days=14)
        workspace.refresh_from_db()
        assert (workspace.four_eyes_erasure, workspace.subject_request_due_days) == (True, 14)
        event = AuditEvent.objects.filter(workspace_id=workspace.pk).latest("seq")
        assert event.action == "workspace.settings"
        assert event.data["after"] == {"four_eyes_erasure": True, "subject_request_due_days": 14}

    def test_it_refuses_out_of_range_values_and_unknown_fields(self, workspace) -> None:
        with pytest.raises(ValidationError):
            workspace_update_settings(actor=SYSTEM, workspace=workspace,
                                      subject_request_due_days=0)
        with pytest.raises(ValidationError):
            workspace_update_settings(actor=SYSTEM, workspace=workspace, slug="renamed")


class TestProviderConfig:
    def test_it_defaults_deadlines_by_kind(self, workspace) -> None:
        local = provider_config_create(actor=SYSTEM, workspace=workspace, slug="l", name="L",
                                       kind="local")
        remote = provider_config_create(actor=SYSTEM, workspace=workspace, slug="r", name="R",
                                        kind="http", url="https://memory.example.com/oc-memory")
        assert (local.health_deadline_ms, remote.health_deadline_ms) == (200, 1000)
        assert local.request_deadline_ms == 10_000
        assert local.health.state == "unprobed"

    def test_it_never_puts_the_credential_in_the_audit_trail(self, workspace) -> None:
        config = provider_config_create(actor=SYSTEM, workspace=workspace, slug="r", name="R",
                                        kind="http", url="https://m.example.com/oc-memory",
                                        credential="s3cr3t-value")
        provider_config_update(actor=SYSTEM, config=config, credential="n3w-s3cr3t")
        for event in AuditEvent.objects.filter(workspace_id=workspace.pk):
            assert "s3cr3t" not in str(event.data)

    def test_an_http_provider_needs_a_url(self, workspace) -> None:
        with pytest.raises(ValidationError):
            provider_config_create(actor=SYSTEM, workspace=workspace, slug="r", name="R",
                                   kind="http")

    def test_it_refuses_deletion_while_something_is_frozen(self, workspace, resource,
                                                           namespace, local_config) -> None:
        from memadmin.memory.services import FreezeSubject, memory_freeze_place

        memory_freeze_place(actor=SYSTEM, subject=FreezeSubject(resource, namespace),
                            kind="legal_hold", reason="litigation 2026-17")
        with pytest.raises(ValidationError, match="frozen"):
            provider_config_delete(actor=SYSTEM, config=local_config)


class TestProviderUrl:
    @pytest.mark.parametrize("url", ["https://user:pw@m.example.com/oc-memory",
                                     "https://m.example.com/oc-memory?token=abc",
                                     "javascript:alert(1)", "not a url"])
    def test_it_refuses_urls_that_carry_secrets_or_are_not_http(self, workspace, url) -> None:
        with pytest.raises(ValidationError):
            provider_config_create(actor=SYSTEM, workspace=workspace, slug="r", name="R",
                                   kind="http", url=url)
