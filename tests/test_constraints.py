"""Database constraints hold even when application code is bypassed."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from memadmin.gdpr.models import SubjectRequest
from memadmin.jobs.models import Job
from memadmin.memory.models import Freeze, MemoryItem, NamespaceCounter
from memadmin.providers.models import ProviderConfig
from memadmin.workspaces.models import Namespace, Resource

pytestmark = pytest.mark.django_db


def refused(create) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        create()


def item(namespace, **fields):
    now = timezone.now()
    values = {"tier": "pins", "key": "", "content": "x", "bytes": 1, "created_at": now,
              "updated_at": now, **fields}
    return MemoryItem.objects.create(namespace=namespace, **values)


class TestMemoryItem:
    def test_namespace_tier_and_key_are_unique(self, namespace) -> None:
        item(namespace)
        refused(lambda: item(namespace))

    @pytest.mark.parametrize(("tier", "key"), [
        ("AGENT", "not-empty"), ("daily", "yesterday"), ("daily", ""), ("peers", "a b"),
        ("facts", ""), ("unknown", ""),
    ])
    def test_key_rules_per_tier(self, namespace, tier: str, key: str) -> None:
        refused(lambda: item(namespace, tier=tier, key=key))

    def test_quarantine_state_is_a_known_one(self, namespace) -> None:
        refused(lambda: item(namespace, quarantine_state="maybe"))

    def test_the_search_vector_is_computed_by_the_database(self, namespace) -> None:
        row = item(namespace, content="Kubernetes clusters were upgraded")
        assert MemoryItem.objects.filter(pk=row.pk, search_vector="kubernetes").exists()


class TestCounters:
    def test_they_never_go_negative(self, namespace) -> None:
        refused(lambda: NamespaceCounter.objects.filter(namespace=namespace).update(items=-1))


class TestNamespace:
    def test_partition_keys_are_unique_across_workspaces(self, namespace, other_workspace,
                                                         local_config) -> None:
        other_provider = ProviderConfig.objects.create(
            workspace=other_workspace, slug="p", name="P", kind="local", health_deadline_ms=200)
        other_resource = Resource.objects.create(workspace=other_workspace,
                                                 provider=other_provider, slug="r")
        refused(lambda: Namespace.objects.create(resource=other_resource, slug="alice",
                                                 partition_key=namespace.partition_key))

    def test_slugs_follow_the_binding_rules(self, resource) -> None:
        refused(lambda: Namespace.objects.create(resource=resource, slug="no spaces",
                                                 partition_key="ocmem_v1_x"))


class TestFreeze:
    def test_one_active_freeze_per_target_and_kind(self, workspace, namespace) -> None:
        def place() -> Freeze:
            return Freeze.objects.create(workspace=workspace, level="namespace",
                                         namespace=namespace, kind="freeze", reason="r",
                                         created_by_label="t")

        first = place()
        refused(place)
        Freeze.objects.create(workspace=workspace, level="namespace", namespace=namespace,
                              kind="legal_hold", reason="r", created_by_label="t")
        first.lifted_at = timezone.now()
        first.save()
        place()

    def test_the_target_matches_the_level(self, workspace, resource) -> None:
        refused(lambda: Freeze.objects.create(workspace=workspace, level="namespace",
                                              resource=resource, kind="freeze", reason="r",
                                              created_by_label="t"))


class TestSubjectRequest:
    def test_a_closed_request_cannot_keep_the_clear_subject_id(self, workspace) -> None:
        request = SubjectRequest.objects.create(
            workspace=workspace, kind="erasure", subject_key_id="k", subject_hash="h",
            subject_id="jane@example.com", reason="Art. 17",
            due_at=timezone.now() + dt.timedelta(days=30))
        refused(lambda: SubjectRequest.objects.filter(pk=request.pk).update(state="completed"))
        SubjectRequest.objects.filter(pk=request.pk).update(state="completed", subject_id=None)


class TestOthers:
    def test_jobs_have_known_states(self) -> None:
        refused(lambda: Job.objects.create(kind="x", state="exploded"))

    def test_resources_cap_recall_at_16_kib(self, workspace, local_config) -> None:
        refused(lambda: Resource.objects.create(workspace=workspace, provider=local_config,
                                                slug="big", max_bytes=16385))

    def test_http_providers_need_a_url(self, workspace) -> None:
        refused(lambda: ProviderConfig.objects.create(workspace=workspace, slug="h", name="H",
                                                      kind="http", health_deadline_ms=1000))
