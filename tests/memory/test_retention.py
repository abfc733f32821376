"""Retention: policies, their preview, and the run that removes only old items nobody holds."""

from __future__ import annotations

import datetime as dt
import json
import zipfile
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.utils import timezone

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.jobs import runner
from memadmin.jobs.models import Job
from memadmin.memory.models import MemoryItem, RetentionPolicy
from memadmin.memory.retention import (
    RUN_EVERY,
    namespace_policies,
    policy_filters,
    retention_policy_remove,
    retention_policy_set,
    retention_preview,
    retention_run_start,
    retention_sweep,
)
from memadmin.memory.services import FreezeSubject, memory_freeze_place
from memadmin.providers import contract as c
from memadmin.providers import wire
from memadmin.providers.registry import provider_for

pytestmark = pytest.mark.django_db
ALICE = Actor.system("alice")
NOW = timezone.now()


@pytest.fixture(autouse=True)
def storage_dir(settings, tmp_path):
    """Archive files go to a per-test directory."""
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "files")}}}
    return tmp_path / "files"


def put(config, namespace, key: str, *, updated_days: int, created_days: int | None = None,
        tier: str = "facts") -> str:
    """An item last updated ``updated_days`` ago (created ``created_days`` ago)."""
    result = provider_for(config).retain(
        tier, key, f"content of {key}", "replace", operation_id=f"seed-{namespace.slug}-{key}",
        actor="agent:test", scope=c.Scope.of(namespace.partition_key), deadline=5)
    created = created_days if created_days is not None else updated_days
    MemoryItem.objects.filter(pk=result.id).update(
        updated_at=NOW - dt.timedelta(days=updated_days),
        created_at=NOW - dt.timedelta(days=created))
    return result.id


def events(workspace, action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(workspace_id=workspace.pk, action=action)
                .order_by("seq"))


@pytest.fixture
def aged(local_config, namespace, other_namespace):
    """alice: two idle items (40 and 100 days), one fresh; bob: one idle item, one fresh."""
    return {
        "old": put(local_config, namespace, "old", updated_days=40),
        "older": put(local_config, namespace, "older", updated_days=100),
        "fresh": put(local_config, namespace, "fresh", updated_days=2, created_days=200),
        "bob-old": put(local_config, other_namespace, "old", updated_days=60),
        "bob-fresh": put(local_config, other_namespace, "fresh", updated_days=1),
    }


class TestPolicies:
    def test_it_sets_a_policy_and_audits_it(self, namespace) -> None:
        policy = retention_policy_set(actor=ALICE, namespace=namespace, action="delete",
                                      rule="idle", days=30)
        assert policy.next_run_at > timezone.now() + RUN_EVERY - dt.timedelta(minutes=5)
        (event,) = events(namespace.resource.workspace, "retention.policy_set")
        assert event.target_type == "namespace"
        assert event.data == {"tier": None, "action": "delete", "rule": "idle", "days": 30,
                              "created": True, "policy": str(policy.pk)}

    def test_setting_it_again_replaces_it(self, namespace) -> None:
        first = retention_policy_set(actor=ALICE, namespace=namespace, action="delete",
                                     rule="idle", days=30)
        second = retention_policy_set(actor=ALICE, namespace=namespace, action="archive",
                                      rule="age", days=90)
        assert first.pk == second.pk
        assert RetentionPolicy.objects.get().summary == \
            "Archive, then delete items older than 90 days"

    def test_one_policy_per_tier(self, resource) -> None:
        retention_policy_set(actor=ALICE, resource=resource, action="delete", rule="idle",
                             days=30)
        retention_policy_set(actor=ALICE, resource=resource, tier="daily", action="delete",
                             rule="age", days=7)
        assert RetentionPolicy.objects.filter(resource=resource).count() == 2

    @pytest.mark.parametrize("days", [0, -1, 36_501])
    def test_it_refuses_days_out_of_range(self, namespace, days: int) -> None:
        with pytest.raises(ValidationError):
            retention_policy_set(actor=ALICE, namespace=namespace, action="delete",
                                 rule="idle", days=days)
        assert not RetentionPolicy.objects.exists()

    def test_it_refuses_an_unknown_action_or_rule_or_tier(self, namespace) -> None:
        bads: list[dict[str, Any]] = [{"action": "shred", "rule": "idle"},
                                      {"action": "delete", "rule": "soon"}]
        for bad in bads:
            with pytest.raises(ValidationError):
                retention_policy_set(actor=ALICE, namespace=namespace, days=3, **bad)
        with pytest.raises(ValidationError):
            retention_policy_set(actor=ALICE, namespace=namespace, tier="nope",
                                 action="delete", rule="idle", days=3)
        assert not RetentionPolicy.objects.exists()

    def test_removing_it_is_audited(self, namespace) -> None:
        policy = retention_policy_set(actor=ALICE, namespace=namespace, action="delete",
                                      rule="idle", days=30)
        pk = str(policy.pk)
        retention_policy_remove(actor=ALICE, policy=policy)
        assert not RetentionPolicy.objects.exists()
        (event,) = events(namespace.resource.workspace, "retention.policy_remove")
        assert event.data["policy"] == pk

    def test_a_namespace_sees_its_resource_policy_too(self, resource, namespace,
                                                      other_namespace) -> None:
        retention_policy_set(actor=ALICE, resource=resource, action="delete", rule="idle",
                             days=30)
        retention_policy_set(actor=ALICE, namespace=namespace, action="delete", rule="age",
                             days=5)
        assert len(namespace_policies(namespace)) == 2
        assert len(namespace_policies(other_namespace)) == 1


class TestFilters:
    def test_updated_before_and_created_before_travel_on_the_wire(self) -> None:
        cutoff = dt.datetime(2026, 1, 5, tzinfo=dt.UTC)
        filters = c.ItemFilters(updated_before=cutoff, created_before=cutoff)
        data = wire.filters_to_wire(filters)
        assert data == {"updatedBefore": "2026-01-05T00:00:00Z",
                        "createdBefore": "2026-01-05T00:00:00Z"}
        assert wire.filters_from_wire(data) == filters

    def test_a_naive_cutoff_is_refused(self, local_config, namespace) -> None:
        naive = dt.datetime(2026, 1, 5)  # noqa: DTZ001
        with pytest.raises(c.InvalidRequest):
            provider_for(local_config).count(c.ItemFilters(updated_before=naive),
                                             scope=c.Scope.of(namespace.partition_key),
                                             deadline=5)

    def test_idle_counts_the_last_update_and_age_the_creation(self, local_config, namespace,
                                                              aged) -> None:
        provider = provider_for(local_config)
        scope = c.Scope.of(namespace.partition_key)
        cutoff = NOW - dt.timedelta(days=30)
        assert provider.count(c.ItemFilters(updated_before=cutoff), scope=scope,
                              deadline=5) == 2
        # "fresh" was created 200 days ago and updated 2 days ago: old, but not idle.
        assert provider.count(c.ItemFilters(created_before=cutoff), scope=scope,
                              deadline=5) == 3


class TestPreview:
    def test_it_counts_per_namespace_what_would_go_and_what_is_held(
            self, resource, namespace, other_namespace, aged) -> None:
        memory_freeze_place(actor=ALICE, subject=FreezeSubject(resource, namespace,
                                                               aged["older"]),
                            kind="legal_hold", reason="case 17")
        policy = retention_policy_set(actor=ALICE, resource=resource, action="delete",
                                      rule="idle", days=30)
        rows = {row.namespace.slug: row for row in retention_preview(policy)}
        assert (rows["alice"].removable, rows["alice"].held) == (1, 1)
        assert (rows["bob"].removable, rows["bob"].held) == (1, 0)
        assert MemoryItem.objects.count() == 5  # a preview removes nothing

    def test_a_tier_policy_counts_only_that_tier(self, local_config, namespace, aged) -> None:
        put(local_config, namespace, "2026-01-01", updated_days=50, tier="daily")
        policy = retention_policy_set(actor=ALICE, namespace=namespace, tier="daily",
                                      action="delete", rule="idle", days=30)
        (row,) = retention_preview(policy)
        assert row.removable == 1


def run(job: Job) -> Job:
    assert runner.run_job(str(job.pk)) == "succeeded"
    job.refresh_from_db()
    return job


class TestRun:
    def test_it_deletes_only_old_unfrozen_items_and_names_the_held_ones(
            self, resource, namespace, other_namespace, aged) -> None:
        memory_freeze_place(actor=ALICE, subject=FreezeSubject(resource, namespace,
                                                               aged["older"]),
                            kind="legal_hold", reason="case 17")
        memory_freeze_place(actor=ALICE, subject=FreezeSubject(resource, other_namespace, None),
                            kind="freeze", reason="audit in progress")
        policy = retention_policy_set(actor=ALICE, resource=resource, action="delete",
                                      rule="idle", days=30)
        job = run(retention_run_start(actor=ALICE, policy=policy))
        left = {str(pk) for pk in MemoryItem.objects.values_list("id", flat=True)}
        assert left == {aged["older"], aged["fresh"], aged["bob-old"], aged["bob-fresh"]}
        assert job.result["removed"] == 1
        assert job.result["held"] == 2
        assert {(h["namespace"], h["id"]) for h in job.result["held_items"]} == {
            ("alice", aged["older"]), ("bob", aged["bob-old"])}
        assert job.percent == 100

    def test_each_run_is_audited_with_counts(self, resource, namespace, aged) -> None:
        memory_freeze_place(actor=ALICE, subject=FreezeSubject(resource, namespace,
                                                               aged["older"]),
                            kind="freeze", reason="keep")
        policy = retention_policy_set(actor=ALICE, namespace=namespace, action="delete",
                                      rule="idle", days=30)
        job = run(retention_run_start(actor=ALICE, policy=policy))
        workspace = namespace.resource.workspace
        (started,) = events(workspace, "retention.run")
        assert started.data["job"] == str(job.pk)
        (finished,) = events(workspace, "retention.run.result")
        assert finished.data["removed"] == 1
        assert finished.data["held"] == 1
        assert finished.data["held_ids"] == [aged["older"]]
        assert "content of" not in json.dumps(finished.data)

    def test_archive_writes_the_file_before_deleting(self, resource, namespace, aged) -> None:
        policy = retention_policy_set(actor=ALICE, namespace=namespace, action="archive",
                                      rule="idle", days=30)
        job = run(retention_run_start(actor=ALICE, policy=policy))
        assert [str(pk) for pk in MemoryItem.objects.filter(namespace=namespace)
                .values_list("id", flat=True)] == [aged["fresh"]]
        assert job.result["archived"] == 2 and job.result["removed"] == 2
        with default_storage.open(job.result_file, "rb") as raw, zipfile.ZipFile(raw) as zf:
            lines = zf.read("builtin.jsonl").decode().splitlines()
            manifest = json.loads(zf.read("manifest.json"))
        assert {json.loads(line)["id"] for line in lines} == {aged["old"], aged["older"]}
        assert {json.loads(line)["content"] for line in lines} == {"content of old",
                                                                  "content of older"}
        assert manifest["total_items"] == 2
        assert job.result_expires_at is not None
        assert job.result_expires_at > timezone.now() + dt.timedelta(days=29)

    def test_an_archive_run_with_nothing_to_remove_writes_no_file(self, namespace) -> None:
        policy = retention_policy_set(actor=ALICE, namespace=namespace, action="archive",
                                      rule="idle", days=30)
        job = run(retention_run_start(actor=ALICE, policy=policy))
        assert (job.result["removed"], job.result["archived"], job.result_file) == (0, 0, "")

    def test_a_failed_archive_deletes_nothing(self, resource, namespace, aged,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
        from memadmin.memory import exports

        def broken(*args: object, **kwargs: object) -> None:
            raise OSError("disk full")

        monkeypatch.setattr(exports, "_assemble", broken)
        policy = retention_policy_set(actor=ALICE, namespace=namespace, action="archive",
                                      rule="idle", days=30)
        job = retention_run_start(actor=ALICE, policy=policy)
        assert runner.run_job(str(job.pk)) == "retrying"
        assert MemoryItem.objects.filter(namespace=namespace).count() == 3

    def test_a_resumed_run_removes_the_same_set(self, resource, namespace, aged) -> None:
        policy = retention_policy_set(actor=ALICE, namespace=namespace, action="delete",
                                      rule="idle", days=30)
        job = retention_run_start(actor=ALICE, policy=policy)
        # An item that turns idle after the run started is not in this run's set.
        cutoff = wire.filters_from_wire(job.params["filters"]).updated_before
        assert cutoff is not None
        assert cutoff == policy_filters(policy, cutoff + dt.timedelta(days=30)).updated_before
        MemoryItem.objects.filter(pk=aged["fresh"]).update(
            updated_at=cutoff + dt.timedelta(seconds=1))
        assert run(job).result["removed"] == 2


class TestSweep:
    def test_it_starts_due_policies_once_and_moves_the_next_run_on(self, namespace,
                                                                   aged) -> None:
        policy = retention_policy_set(actor=ALICE, namespace=namespace, action="delete",
                                      rule="idle", days=30)
        assert retention_sweep() == 0  # a new policy waits a period: time to preview
        RetentionPolicy.objects.filter(pk=policy.pk).update(next_run_at=timezone.now())
        assert retention_sweep() == 1
        policy.refresh_from_db()
        assert policy.next_run_at > timezone.now() + RUN_EVERY - dt.timedelta(minutes=5)
        RetentionPolicy.objects.filter(pk=policy.pk).update(next_run_at=timezone.now())
        assert retention_sweep() == 0  # the previous run has not finished yet
        assert policy.last_job is not None
        run(policy.last_job)
        assert MemoryItem.objects.filter(namespace=namespace).count() == 1
        assert policy.last_job.created_by is None


def test_the_audit_page_reads_a_run_as_a_sentence(resource, namespace, aged) -> None:
    from memadmin.audit.sentences import sentence

    policy = retention_policy_set(actor=ALICE, namespace=namespace, action="delete",
                                  rule="idle", days=30)
    run(retention_run_start(actor=ALICE, policy=policy))
    said = {e.action: sentence(e, workspace_slug="acme", places={}, list_url="/a/")
            for e in AuditEvent.objects.filter(action__startswith="retention.")}
    assert said["retention.policy_set"].before == \
        "set a retention policy (delete, idle, 30 days) on"
    assert said["retention.run.result"].after == ": 2 removed, 0 held"
