"""The cascade job over real providers: the built-in store, the ``http`` provider against this
project's own endpoint (live_server), and a loopback server that answers ``unsupported`` or
plays a flaky or leaky store. Verification, tombstone, the scrub of the clear id (searched for
in every text and JSON column, every stored file and the logs), the access ZIP, a worker killed
with SIGKILL mid-step, and an admin's cancel while the job runs."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import logging
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.gdpr.access_output import access_file_open
from memadmin.gdpr.models import SubjectRequest, Tombstone
from memadmin.gdpr.services import subject_request_preview, subject_requests_upkeep
from memadmin.gdpr.transitions import (
    subject_request_cancel,
    subject_request_create,
    subject_request_retry,
    subject_request_submit,
)
from memadmin.jobs import runner
from memadmin.memory import exports
from memadmin.memory.imports import import_plan, upload_store
from memadmin.memory.models import MemoryItem
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from tests.gdpr.conftest import MARKER, OTHER_SUBJECT, SUBJECT, run_job
from tests.gdpr.helpers import job_of, receipt_of, username
from tests.jobs.test_runner import database_url, wait_for

BASE_DIR = Path(settings.BASE_DIR)
REASON = "Erasure asked for in writing on 2 March"
transactional = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_four_eyes(workspace):
    workspace.four_eyes_erasure = False
    workspace.save()


def start(actor: Actor, workspace, kind: str = "erasure", reason: str = REASON) -> SubjectRequest:
    request = subject_request_create(actor=actor, workspace=workspace, kind=kind,
                                     subject_id=SUBJECT, reason=reason)
    subject_request_submit(actor=actor, subject_request=request)
    return SubjectRequest.objects.get(pk=request.pk)


def finished(request: SubjectRequest) -> SubjectRequest:
    """Run the request's job here (in-process) and return the request as it ended."""
    request = SubjectRequest.objects.get(pk=request.pk)
    assert run_job(request.job) == "succeeded", job_of(request).error
    return SubjectRequest.objects.get(pk=request.pk)


def steps(request: SubjectRequest) -> dict[str, tuple[str, int, int, int | None]]:
    return {s.provider_label: (s.state, s.removed, s.held, s.residue)
            for s in request.steps.order_by("pk")}


def seed(put, other_namespace) -> None:
    for i in range(3):
        put(f"{MARKER}: note {i}")
    put(f"{MARKER}: lives in Lyon", ns=other_namespace)
    put(f"{MARKER}: <script>alert('x')</script> & more", ns=other_namespace)
    put("someone else's note", subject=OTHER_SUBJECT)


@transactional
def test_an_erasure_across_three_providers_is_partial_and_shows_the_unsupported_step(
        actor, workspace, put, other_namespace, http_config, legacy, legacy_config) -> None:
    seed(put, other_namespace)
    request = start(actor("carl"), workspace)
    preview = subject_request_preview(actor=actor("carl"), subject_request=request)
    assert [(s.provider_label, s.found) for s in preview] == [
        ("Across HTTP", 5), ("Built-in", 5), ("Legacy store", None)]
    assert preview[2].error == "the provider can neither count nor list the subject's items"

    request = finished(request)

    assert steps(request) == {"Across HTTP": ("done", 5, 0, 0), "Built-in": ("done", 0, 0, 0),
                              "Legacy store": ("unsupported", 0, 0, None)}
    legacy_step = request.steps.get(provider_label="Legacy store")
    assert legacy_step.error.startswith("unsupported:")
    assert request.state == "partial"
    assert request.subject_id == SUBJECT  # a partial request may still be retried
    assert request.verification["total_residue"] == 0
    assert request.verification["unverified"][0].startswith("Legacy store:")
    assert receipt_of(request)["state"] == "partial"
    assert not Tombstone.objects.exists()
    assert list(MemoryItem.objects.values_list("data_subject_id", flat=True)) == [OTHER_SUBJECT]
    assert {"forget", "count"} <= set(legacy.operations)
    # The HTTP step went through the wire: the endpoint audited the admin call.
    forget = AuditEvent.objects.get(action="api.forget")
    assert forget.data["removed"] == 5 and forget.data["by_subject"] is True


@pytest.mark.django_db
def test_a_provider_fault_is_retried_with_backoff_then_the_request_completes(
        actor, workspace, put, legacy, legacy_config) -> None:
    put("likes tea")
    legacy.store(items=2, fail=2)
    request = finished(start(actor("carl"), workspace))

    legacy_step = request.steps.get(provider_label="Legacy store")
    assert (legacy_step.state, legacy_step.removed, legacy_step.attempts) == ("done", 2, 3)
    assert steps(request) == {"Built-in": ("done", 1, 0, 0), "Legacy store": ("done", 2, 0, 0)}
    assert request.state == "completed"
    assert legacy.operations.count("forget") == 3


@pytest.mark.django_db
def test_a_step_failing_past_its_attempts_is_failed_and_a_retry_completes_the_request(
        actor, workspace, put, legacy, legacy_config) -> None:
    put("likes tea")
    legacy.store(items=2, fail=100)
    request = finished(start(actor("carl"), workspace))
    failed = request.steps.get(provider_label="Legacy store")
    assert (request.state, failed.state, failed.attempts) == ("partial", "failed", 4)
    assert "unavailable" in failed.error and SUBJECT not in failed.error

    legacy.store(items=2)  # the store is back
    subject_request_retry(actor=actor("ada"), subject_request=request)
    request = finished(request)
    assert request.state == "completed"
    assert steps(request) == {"Built-in": ("done", 1, 0, 0), "Legacy store": ("done", 2, 0, 0)}
    assert request.steps.get(provider_label="Built-in").attempts == 1  # done steps not re-run
    assert request.run_round == 2


@pytest.mark.django_db
def test_residue_a_provider_keeps_after_reporting_success_makes_the_request_partial(
        actor, workspace, put, legacy, legacy_config) -> None:
    put("likes tea")
    legacy.store(items=3, keeps=1)  # forget says 2 removed; count still finds 1
    request = finished(start(actor("carl"), workspace))

    assert steps(request) == {"Built-in": ("done", 1, 0, 0), "Legacy store": ("done", 2, 0, 1)}
    assert request.state == "partial"
    assert request.verification["residue"] == {"Built-in": 0, "Legacy store": 1}
    assert request.verification["total_residue"] == 1
    assert receipt_of(request)["steps"][1]["residue"] == 1
    assert not Tombstone.objects.exists()


# -- completion: tombstone and the clear id gone everywhere ------------------------------------


def text_columns() -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
            "AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE' "
            "WHERE c.table_schema = current_schema() "
            "AND c.data_type IN ('text', 'character varying', 'json', 'jsonb')")
        return list(cursor.fetchall())


def database_hits(needle: str) -> list[str]:
    hits = []
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table, column in text_columns():
            cursor.execute(f"SELECT count(*) FROM {quote(table)} "  # noqa: S608 - quoted names
                           f"WHERE strpos({quote(column)}::text, %s) > 0", [needle])
            if cursor.fetchone()[0]:
                hits.append(f"{table}.{column}")
    return hits


def file_hits(root: Path, needle: str) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        blobs = [data]
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                blobs += [archive.read(name) for name in archive.namelist()]
        if any(needle.encode() in blob for blob in blobs) or needle in str(path):
            hits.append(str(path.relative_to(root)))
    return hits


@transactional
def test_a_completed_erasure_leaves_a_tombstone_and_the_clear_id_nowhere(
        actor, workspace, put, namespace, other_namespace, http_config, storage,
        caplog) -> None:
    caplog.set_level(logging.DEBUG)
    seed(put, other_namespace)
    # Before the erasure the subject's data sits in an owner's filtered export and in the
    # output of an earlier access request.
    export = exports.memory_export_start(
        actor=actor("ada"), workspace=workspace, scope={"kind": "workspace"},
        namespaces=[namespace, other_namespace], filters=c.ItemFilters(subject=SUBJECT),
        fmt="zip")
    assert run_job(export) == "succeeded"
    # Reasons people write quote the id; an import was uploaded but never confirmed.
    access = finished(start(actor("carl"), workspace, kind="access",
                            reason=f"Access asked for by {SUBJECT} on 1 March"))
    assert access.state == "completed" and access.access_file
    upload = json.dumps({"tier": "facts", "key": "k9", "content": f"{MARKER}: imported",
                         "dataSubjectId": SUBJECT}).encode()
    upload_name = upload_store(io.BytesIO(upload))
    assert file_hits(storage, SUBJECT) and file_hits(storage, MARKER)
    assert database_hits(SUBJECT) and database_hits(MARKER)

    request = finished(start(actor("carl"), workspace,
                             reason=f"{SUBJECT} wrote to us on 2 March asking for erasure"))

    assert request.state == "completed"
    assert steps(request) == {"Across HTTP": ("done", 5, 0, 0), "Built-in": ("done", 0, 0, 0)}
    tombstone = Tombstone.objects.get()
    assert (tombstone.key_id, tombstone.subject_hash, tombstone.request_id) == \
        (request.subject_key_id, request.subject_hash, request.pk)
    assert request.subject_id is None
    assert receipt_of(request)["state"] == "completed"
    assert SubjectRequest.objects.get(pk=access.pk).access_file == ""
    # The reasons keep their sense, with the keyed-hash label in place of the id, and the
    # receipt was sealed over the scrubbed reason.
    label = f"[subject {request.subject_key_id}:{request.subject_hash[:16]}]"
    assert request.reason == f"{label} wrote to us on 2 March asking for erasure"
    assert receipt_of(request)["reason"] == request.reason
    assert SubjectRequest.objects.get(pk=access.pk).reason == \
        f"Access asked for by {label} on 1 March"
    assert not default_storage.exists(upload_name)
    # Gone: every text and JSON column of every table (ours and the task backend's), every
    # file under the storage location, and everything logged.
    assert database_hits(SUBJECT) == []
    assert database_hits(MARKER) == []
    assert file_hits(storage, SUBJECT) == []
    assert file_hits(storage, MARKER) == []
    assert SUBJECT not in caplog.text and MARKER not in caplog.text
    assert [r.getMessage() for r in caplog.records if SUBJECT in r.getMessage()] == []

    # The tombstone refuses the subject from every write path: retain (built-in and over the
    # wire) and imports.
    for provider in (provider_for(namespace.resource.provider), provider_for(http_config)):
        with pytest.raises(c.ErasedSubject):
            provider.retain("facts", "", "back again", "replace", data_subject_id=SUBJECT,
                            operation_id=f"again-{provider.kind}",
                            scope=c.Scope.of(namespace.partition_key), deadline=5)
    line = {"tier": "facts", "key": "k1", "content": "imported", "dataSubjectId": SUBJECT}
    plan = import_plan(namespace=namespace, stream=io.BytesIO(json.dumps(line).encode()))
    assert dict(plan.reasons) == {"erased_subject": 1}
    put("still welcome", subject=OTHER_SUBJECT)  # other subjects are not affected


# -- the access output --------------------------------------------------------------------------


@transactional
def test_the_access_zip_has_a_part_per_provider_a_manifest_and_an_escaped_summary(
        actor, workspace, put, namespace, other_namespace, http_config, legacy, legacy_config,
        users) -> None:
    seed(put, other_namespace)
    request = finished(start(actor("carl"), workspace, kind="access"))

    assert request.state == "completed"  # unsupported steps do not block an access request
    assert request.subject_id is None
    assert request.access_file_expires_at is not None
    assert request.access_file_expires_at - timezone.now() > dt.timedelta(days=6)
    with pytest.raises(PermissionDenied):
        access_file_open(request, users["vic"])
    handle, download_name = access_file_open(request, users["carl"])
    assert SUBJECT not in download_name and SUBJECT not in request.access_file
    with handle, zipfile.ZipFile(handle) as archive:
        names = sorted(archive.namelist())
        manifest = json.loads(archive.read("manifest.json"))
        summary = archive.read("summary.html").decode()
        parts = {name: archive.read(name) for name in names if name.endswith(".jsonl")}

    assert names == ["01-across-http.jsonl", "02-builtin.jsonl", "manifest.json",
                     "summary.html"]
    assert all(SUBJECT not in name for name in names)
    by_file = {p.get("file"): p for p in manifest["files"]}
    for name, data in parts.items():
        assert by_file[name]["sha256"] == hashlib.sha256(data).hexdigest()
        assert by_file[name]["items"] == 5 == len(data.splitlines())
        assert all(json.loads(line)["data_subject"] == SUBJECT for line in data.splitlines())
    # The subject's view: their data in plain terms, none of our internals.
    record = json.loads(next(iter(parts.values())).splitlines()[0])
    assert set(record) == {"type", "content", "data_subject", "written", "last_changed"}
    assert record["type"] == "fact"
    everything = b"".join(parts.values()).decode() + json.dumps(manifest) + summary
    for internal in (namespace.partition_key, other_namespace.partition_key,
                     request.subject_hash, '"frozen"', "quarantine", "revision"):
        assert internal not in everything, internal
    assert manifest["not_included"] == [{
        "system": "Legacy store",
        "why": "this system cannot export data automatically; we will send it separately"}]
    assert manifest["reference"] == str(request.pk) and manifest["total_items"] == 10
    assert "Not included yet" in summary and "10 items from 2 systems" in summary
    assert "<script>" not in summary
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; more" in summary
    assert SUBJECT in summary  # the subject may see their own id
    assert "someone else" not in summary

    # Seven days later the scheduler's upkeep deletes the file.
    assert subject_requests_upkeep(now=timezone.now() + dt.timedelta(days=8))[
        "expired_files"] == 1
    request.refresh_from_db()
    with pytest.raises(FileNotFoundError):
        access_file_open(request, users["carl"])


# -- a real worker: killed mid-step, and cancelled mid-run ---------------------------------------


def worker(tmp_path: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "MEMADMIN_FAILPOINTS_DIR": str(tmp_path),
           "DATABASE_URL": database_url(), "DEBUG": "true"}
    return subprocess.Popen(
        [sys.executable, "manage.py", "db_worker", "--no-startup-delay", "--no-reload",
         "--interval", "0.1"],
        cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@transactional
def test_a_worker_killed_after_a_provider_call_is_reaped_and_resumes_without_double_counting(
        actor, workspace, put, other_namespace, http_config, tmp_path: Path) -> None:
    seed(put, other_namespace)
    (tmp_path / "gdpr_step.pause").write_text(json.dumps(
        {"stage": "after_call", "provider": "Across HTTP"}))
    process = worker(tmp_path)
    try:
        request = start(actor("carl"), workspace)
        reached = wait_for(tmp_path / "gdpr_step.reached", process)
        assert reached["removed"] == 5 and reached["request"] == str(request.pk)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    (tmp_path / "gdpr_step.pause").unlink()

    # The store removed the items, but the step never recorded it.
    request.refresh_from_db()
    step = request.steps.get(provider_label="Across HTTP")
    assert (request.state, step.state, step.removed, step.attempts) == ("running", "running",
                                                                        0, 1)
    assert not MemoryItem.objects.filter(data_subject_id=SUBJECT).exists()

    assert runner.reap() == 0  # the dead worker's lease still looks alive
    later = timezone.now() + dt.timedelta(seconds=settings.MEMADMIN_JOB_LEASE_SECONDS + 1)
    assert runner.reap(now=later) == 1
    call_command("db_worker", batch=True, startup_delay=False, reload=False)

    request.refresh_from_db()
    assert request.state == "completed", job_of(request).error
    # The repeated call carried the same operation id: the endpoint replayed its answer, so
    # the step counts the 5 items once (not 0, not 10).
    assert steps(request) == {"Across HTTP": ("done", 5, 0, 0), "Built-in": ("done", 0, 0, 0)}
    assert request.steps.get(provider_label="Across HTTP").attempts == 2
    assert job_of(request).state == "succeeded" and job_of(request).attempts == 2
    forgets = AuditEvent.objects.filter(action="api.forget").order_by("seq")
    assert [e.data["removed"] for e in forgets][:2] == [5, 5]


@transactional
def test_a_request_and_its_job_end_cancelled_together(
        actor, workspace, put, other_namespace, http_config, tmp_path: Path) -> None:
    """The request page and the job page never disagree: the request is closed as cancelled
    in the same transaction that ends its job, so no reader sees one cancelled and the other
    still running (the runner's own end of a cancelled job, paused here, comes after both)."""
    seed(put, other_namespace)
    (tmp_path / "gdpr_step.pause").write_text(json.dumps(
        {"stage": "before_call", "provider": "Across HTTP"}))
    (tmp_path / "job.cancelled.pause").write_text("")
    process = worker(tmp_path)
    try:
        request = start(actor("carl"), workspace)
        wait_for(tmp_path / "gdpr_step.reached", process)
        subject_request_cancel(actor=actor("ada"), subject_request=request)
        (tmp_path / "gdpr_step.pause").unlink()
        wait_for(tmp_path / "job.cancelled.reached", process)
        assert (SubjectRequest.objects.get(pk=request.pk).state,
                job_of(request).state) == ("cancelled", "cancelled")
        (tmp_path / "job.cancelled.pause").unlink()
    finally:
        process.kill()
        process.wait(timeout=30)


@transactional
def test_an_admin_cancel_while_running_stops_after_the_step_in_flight(
        actor, workspace, put, other_namespace, http_config, tmp_path: Path) -> None:
    seed(put, other_namespace)
    (tmp_path / "gdpr_step.pause").write_text(json.dumps(
        {"stage": "before_call", "provider": "Across HTTP"}))
    process = worker(tmp_path)
    try:
        request = start(actor("carl"), workspace)
        wait_for(tmp_path / "gdpr_step.reached", process)
        subject_request_cancel(actor=actor("ada"), subject_request=request)
        assert SubjectRequest.objects.get(pk=request.pk).state == "running"
        (tmp_path / "gdpr_step.pause").unlink()  # the step in flight goes on
        end = timezone.now() + dt.timedelta(seconds=60)
        while SubjectRequest.objects.get(pk=request.pk).state == "running":
            assert timezone.now() < end, "the job never stopped"
            assert process.poll() is None, "the worker died"
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait(timeout=30)

    request.refresh_from_db()
    assert (request.state, request.subject_id, username(request.cancelled_by)) == \
        ("cancelled", None, "ada")
    assert steps(request) == {"Across HTTP": ("done", 5, 0, None),
                              "Built-in": ("pending", 0, 0, None)}
    assert job_of(request).state == "cancelled"
    assert receipt_of(request)["state"] == "cancelled"
    assert not Tombstone.objects.exists()
