"""Every storage name built from user input matches a strict pattern (issue 14 finding 8).

The import confirmation carries a signed token naming the upload; a prefix check let
``imports/../exports/<job>.jsonl`` through. Names are now matched whole against a pattern.
"""

from __future__ import annotations

import uuid

import pytest
from django.core import signing
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from memadmin.jobs import runner
from memadmin.jobs.models import Job
from memadmin.lib import storage_names
from memadmin.memory import imports

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def storage(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "files")}}}


def _token(name: str, namespace, user) -> str:
    return signing.dumps({"file": name, "ns": str(namespace.pk), "user": user.pk, "total": 1},
                         salt=imports.TOKEN_SALT)


UUID = "0b7c6a8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"


@pytest.mark.parametrize("name", [
    f"imports/../exports/{UUID}.jsonl",
    f"imports/{UUID}.upload/../../exports/{UUID}.jsonl",
    f"imports//{UUID}.upload",
    f"/imports/{UUID}.upload",
    f"imports/{UUID}.upload\n",
    f"imports/{UUID}.jsonl",
    "imports/x.upload",
    f"imports/{UUID.upper()}.upload",
])
def test_it_refuses_an_upload_name_outside_the_pattern(name: str) -> None:
    assert not storage_names.matches("import_upload", name)


@pytest.mark.parametrize("name", [f"imports/{UUID}.upload", f"imports/{UUID}_AbC1234.upload"])
def test_it_accepts_the_names_upload_store_makes(name: str) -> None:
    assert storage_names.matches("import_upload", name)


def test_the_upload_store_makes_names_that_match() -> None:
    import io

    name = imports.upload_store(io.BytesIO(b"{}\n"))
    assert storage_names.matches("import_upload", name)


def test_a_signed_token_naming_an_export_file_is_refused(client_for, users, namespace) -> None:
    job_id = uuid.uuid4()
    stolen = default_storage.save(f"exports/{job_id}.jsonl",
                                  ContentFile(b'{"tier": "facts", "content": "x"}\n'))
    token = _token(f"imports/../{stolen}", namespace, users["nora"])
    assert default_storage.exists(f"imports/../{stolen}")  # the path does reach the file
    assert imports.upload_from_token(token, user=users["nora"]) is None
    response = client_for("nora").post(reverse("memory:import_start", args=["acme"]),
                                       {"token": token})
    assert response.status_code == 302 and response["Location"].endswith("/import/")
    assert not Job.objects.filter(kind="memory_import").exists()


def test_an_import_job_with_a_bad_upload_name_fails_and_reads_nothing(users,
                                                                      namespace) -> None:
    stolen = default_storage.save("exports/x.jsonl", ContentFile(b'{"tier": "facts"}\n'))
    job = Job.objects.create(kind="memory_import", workspace=namespace.resource.workspace,
                             created_by=users["nora"], max_attempts=1,
                             params={"namespace": str(namespace.pk),
                                     "upload": f"imports/../{stolen}", "actor": "nora"})
    assert runner.run_job(str(job.pk)) == "failed"
    job.refresh_from_db()
    assert job.error.startswith("StorageNameError")
    assert default_storage.exists(stolen)


@pytest.mark.parametrize("name", [f"exports/{UUID}.zip", f"exports/{UUID}.jsonl"])
def test_export_results_match(name: str) -> None:
    assert storage_names.matches("export_result", name)


@pytest.mark.parametrize("name", [f"exports/../imports/{UUID}.zip", f"exports/{UUID}.zip.tmp",
                                  f"subject-requests/{UUID}/access-{UUID}.zip"])
def test_other_names_are_no_export_result(name: str) -> None:
    assert not storage_names.matches("export_result", name)


def test_a_download_whose_file_name_is_off_pattern_is_404(client_for, users,
                                                           workspace) -> None:
    import datetime as dt

    from django.utils import timezone

    other = default_storage.save(f"subject-requests/{UUID}/access.zip", ContentFile(b"PK"))
    job = Job.objects.create(kind="memory_export", workspace=workspace, created_by=users["ada"],
                             state="succeeded", result_file=other, params={"namespaces": []},
                             result_expires_at=timezone.now() + dt.timedelta(hours=1))
    url = reverse("memory:export_download", args=["acme", job.pk])
    assert client_for("ada").get(url).status_code == 404
