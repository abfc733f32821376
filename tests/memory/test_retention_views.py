"""Retention pages: the policy and its next run on the namespace and resource pages, the preview,
and the forms that set, remove and run a policy (by role)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from memadmin.jobs import runner
from memadmin.jobs.models import Job
from memadmin.memory.models import MemoryItem, RetentionPolicy
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

pytestmark = pytest.mark.django_db
SET = {"act": "set", "tier": "", "action": "delete", "rule": "idle", "days": "30"}


@pytest.fixture(autouse=True)
def storage_dir(settings, tmp_path):
    """Archive files go to a per-test directory."""
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "files")}}}
    return tmp_path / "files"


@pytest.fixture
def idle(local_config, namespace) -> list[str]:
    ids = []
    for key, days in (("a", 40), ("b", 50), ("c", 1)):
        result = provider_for(local_config).retain(
            "facts", key, f"text {key}", "replace", operation_id=f"seed-{key}",
            scope=c.Scope.of(namespace.partition_key), deadline=5)
        MemoryItem.objects.filter(pk=result.id).update(
            updated_at=timezone.now() - dt.timedelta(days=days))
        ids.append(result.id)
    return ids


def ns_url(name: str, namespace) -> str:
    return reverse(name, args=["acme", "knowledge", namespace.slug])


def test_an_owner_sets_a_policy_and_sees_its_preview(client_for, namespace, idle) -> None:
    client = client_for("nora")
    url = ns_url("memory:retention_namespace", namespace)
    response = client.post(url, SET)
    assert response.status_code == 302
    page = client.get(url).content.decode()
    assert "Delete items not updated for 30 days" in page
    assert 'data-removable="alice">2<' in page
    assert MemoryItem.objects.count() == 3


def test_the_namespace_page_shows_the_policy_and_next_run(client_for, namespace) -> None:
    client_for("nora").post(ns_url("memory:retention_namespace", namespace), SET)
    policy = RetentionPolicy.objects.get()
    page = client_for("vic").get(ns_url("workspaces:namespace", namespace)).content.decode()
    assert "Delete items not updated for 30 days" in page
    assert f"next run {policy.next_run_at:%Y-%m-%d %H:%M} UTC" in page


def test_the_resource_page_shows_its_policy(client_for, namespace) -> None:
    client_for("ada").post(reverse("memory:retention_resource", args=["acme", "knowledge"]),
                           {**SET, "tier": "daily", "rule": "age", "days": "7"})
    page = client_for("vic").get(reverse("workspaces:resource", args=["acme", "knowledge"]))
    assert "Delete the daily items older than 7 days" in page.content.decode()


def test_a_namespace_owner_may_not_set_the_resource_policy(client_for, namespace) -> None:
    response = client_for("nora").post(
        reverse("memory:retention_resource", args=["acme", "knowledge"]), SET)
    assert response.status_code == 403
    assert not RetentionPolicy.objects.exists()


@pytest.mark.parametrize("user, status", [("vic", 403), ("carl", 403), ("mallory", 404)])
def test_others_may_not_set_a_namespace_policy(client_for, namespace, user: str,
                                               status: int) -> None:
    response = client_for(user).post(ns_url("memory:retention_namespace", namespace), SET)
    assert response.status_code == status
    assert not RetentionPolicy.objects.exists()


@pytest.mark.parametrize("bad", [{"days": "0"}, {"days": "x"}, {"action": "shred"},
                                 {"tier": "nope"}, {"days": ""}, {"act": "burn"}])
def test_bad_input_is_a_form_error(client_for, namespace, bad: dict[str, str]) -> None:
    response = client_for("nora").post(ns_url("memory:retention_namespace", namespace),
                                       {**SET, **bad})
    assert response.status_code == 400
    assert not RetentionPolicy.objects.exists()


def test_run_now_starts_a_job_that_removes_the_idle_items(client_for, namespace, idle) -> None:
    client = client_for("nora")
    url = ns_url("memory:retention_namespace", namespace)
    client.post(url, SET)
    response = client.post(url, {"act": "run", "tier": ""})
    job = Job.objects.get(kind="retention_run")
    assert response.status_code == 302
    assert response["Location"] == reverse("jobs:detail", args=[job.pk])
    assert runner.run_job(str(job.pk)) == "succeeded"
    assert [str(pk) for pk in MemoryItem.objects.values_list("id", flat=True)] == [idle[2]]
    page = client.get(response["Location"]).content.decode()
    assert "removed 2 items" in page


def test_remove_and_run_need_an_existing_policy(client_for, namespace) -> None:
    client = client_for("nora")
    url = ns_url("memory:retention_namespace", namespace)
    assert client.post(url, {"act": "run", "tier": ""}).status_code == 400
    client.post(url, SET)
    assert client.post(url, {"act": "remove", "tier": "daily"}).status_code == 400
    assert client.post(url, {"act": "remove", "tier": ""}).status_code == 302
    assert not RetentionPolicy.objects.exists()


def test_owners_follow_a_scheduled_run_and_fetch_its_archive(client_for, namespace, idle,
                                                             storage_dir) -> None:
    from memadmin.memory.retention import retention_sweep

    client_for("nora").post(ns_url("memory:retention_namespace", namespace),
                            {**SET, "action": "archive"})
    RetentionPolicy.objects.update(next_run_at=timezone.now())
    assert retention_sweep() == 1
    job = Job.objects.get(kind="retention_run")
    assert job.created_by is None
    assert runner.run_job(str(job.pk)) == "succeeded"
    detail = reverse("jobs:detail", args=[job.pk])
    download = reverse("memory:export_download", args=["acme", job.pk])
    assert client_for("nora").get(detail).status_code == 200
    assert client_for("nora").get(download).status_code == 200
    for user in ("vic", "carl", "olga"):
        assert client_for(user).get(detail).status_code == 404
        assert client_for(user).get(download).status_code == 404
