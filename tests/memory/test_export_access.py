"""Export is an owner's power (and an admin's, who owns every namespace): issue 14 finding 1.

Every way an export starts (a namespace, a resource, a filter result, the workspace, the
streamed JSON Lines file) and the download of its file answer by the roles table, not by who
may read the content.
"""

from __future__ import annotations

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from memadmin.audit.services import Actor
from memadmin.jobs import runner
from memadmin.jobs.models import Job
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from memadmin.workspaces.services import role_grant, role_revoke

pytestmark = pytest.mark.django_db
SYSTEM = Actor.system("test")
READERS = ("vic", "olga", "carl")  # they read content but own nothing


@pytest.fixture(autouse=True)
def storage(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "files")}}}


@pytest.fixture
def fact(local_config, namespace, other_namespace):
    for n, ns in enumerate((namespace, other_namespace)):
        provider_for(local_config).retain(
            "facts", "", f"jane.doe{n}@example.com", "replace", operation_id=f"f{n}",
            scope=c.Scope.of(ns.partition_key), deadline=5)


def urls() -> dict[str, str]:
    ns = ["acme", "knowledge", "alice"]
    return {"resource": reverse("memory:export_resource", args=["acme", "knowledge"]),
            "namespace": reverse("memory:export_namespace", args=ns),
            "jsonl": reverse("memory:export", args=ns),
            "workspace": reverse("memory:export_workspace", args=["acme"])}


@pytest.mark.parametrize("role", READERS)
@pytest.mark.parametrize("kind", ["resource", "namespace", "workspace"])
def test_it_refuses_a_reader_who_owns_nothing(client_for, fact, role: str, kind: str) -> None:
    url = urls()[kind]
    assert client_for(role).get(url).status_code == 403
    assert client_for(role).post(url, {"format": "jsonl"}).status_code == 403
    assert client_for(role).post(url + "?subject=jane", {"format": "zip"}).status_code == 403
    assert not Job.objects.exists()


@pytest.mark.parametrize("role", READERS)
def test_the_streamed_file_is_refused_to_readers(client_for, fact, role: str) -> None:
    assert client_for(role).get(urls()["jsonl"]).status_code == 403


def test_a_stranger_gets_404(client_for, fact) -> None:
    for url in urls().values():
        assert client_for("mallory").get(url).status_code == 404


@pytest.mark.parametrize("role", ["ada", "alice", "root"])
def test_owners_and_admins_export_a_resource_whole(client_for, fact, role: str,
                                                   namespace, other_namespace) -> None:
    response = client_for(role).post(urls()["resource"], {"format": "jsonl"})
    assert response.status_code == 302
    job = Job.objects.get()
    assert sorted(job.params["namespaces"]) == sorted([str(namespace.pk),
                                                       str(other_namespace.pk)])


def test_an_owner_of_one_namespace_exports_only_it(client_for, fact, namespace) -> None:
    assert client_for("nora").post(urls()["resource"], {"format": "jsonl"}).status_code == 302
    assert Job.objects.get().params["namespaces"] == [str(namespace.pk)]


def _exported_by(client_for, who: str) -> Job:
    assert client_for(who).post(urls()["namespace"], {"format": "jsonl"}).status_code == 302
    job = Job.objects.get()
    assert runner.run_job(str(job.pk)) == "succeeded"
    job.refresh_from_db()
    assert default_storage.exists(job.result_file)
    return job


def test_the_download_is_refused_to_anyone_but_its_starter_and_admins(client_for, fact,
                                                                       users) -> None:
    job = _exported_by(client_for, "nora")
    url = reverse("memory:export_download", args=["acme", job.pk])
    for role in ("vic", "olga", "carl", "alice", "mallory"):
        assert client_for(role).get(url).status_code == 404, role
    assert client_for("ada").get(url).status_code == 200
    assert client_for("nora").get(url).status_code == 200


def test_a_starter_who_lost_the_namespace_loses_the_download(client_for, fact, users,
                                                             workspace, namespace) -> None:
    job = _exported_by(client_for, "nora")
    url = reverse("memory:export_download", args=["acme", job.pk])
    role_revoke(actor=SYSTEM, workspace=workspace, user=users["nora"], role="owner",
                namespace=namespace)
    role_grant(actor=SYSTEM, workspace=workspace, user=users["nora"], role="viewer")
    assert client_for("nora").get(url).status_code == 404
