"""An owner sets a retention policy in Chromium, previews it, runs it through a real worker, and
sees what was removed and which held item stayed; the archive file downloads."""

from __future__ import annotations

import datetime as dt
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.jobs.models import Job
from memadmin.memory.models import MemoryItem
from memadmin.memory.services import FreezeSubject, memory_freeze_place
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NAMESPACE = "/w/acme/r/knowledge/n/alice/"


@pytest.fixture(autouse=True)
def storage(settings, tmp_path: Path) -> Path:
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "files")}}}
    return tmp_path / "files"


@pytest.fixture
def aged(local_config, resource, namespace) -> dict[str, str]:
    """Three idle items (one on legal hold) and one fresh item."""
    provider = provider_for(local_config)
    scope = c.Scope.of(namespace.partition_key)
    made = {}
    for key, days in (("stale", 90), ("older", 120), ("held", 200), ("fresh", 1)):
        result = provider.retain("peers", key, f"Note {key}.", "replace",
                                 operation_id=f"r-{key}", scope=scope, deadline=5)
        MemoryItem.objects.filter(pk=result.id).update(
            updated_at=timezone.now() - dt.timedelta(days=days))
        made[key] = result.id
    memory_freeze_place(actor=Actor.system("carl"),
                        subject=FreezeSubject(resource, namespace, made["held"]),
                        kind="legal_hold", reason="case 17")
    return made


def run_worker() -> None:
    call_command("db_worker", batch=True, startup_delay=False, reload=False)


def test_an_owner_previews_and_runs_a_retention_policy(
    live_server: LiveServer, login, console_errors: list[str], aged: dict[str, str],
) -> None:
    page: Page = login("nora")
    page.goto(live_server.url + NAMESPACE)
    expect(page.locator("#retention")).to_contain_text("No retention policy")
    page.get_by_role("link", name="Retention and preview…").click()

    page.get_by_label("Action").select_option("archive")
    page.get_by_label("Rule").select_option("idle")
    page.get_by_label("Days").fill("30")
    page.get_by_role("button", name="Save the policy").click()

    policy = page.locator(".retention-policy")
    expect(policy.get_by_role("heading")).to_have_text(
        "Archive, then delete items not updated for 30 days")
    # The preview: two would go, the one on legal hold stays; nothing is removed yet.
    expect(policy.locator('[data-removable="alice"]')).to_have_text("2")
    expect(policy.locator(".retention-preview tbody td").nth(2)).to_have_text("1")
    assert MemoryItem.objects.count() == 4

    # The namespace page shows the policy and its next run.
    page.goto(live_server.url + NAMESPACE)
    expect(page.locator("#retention")).to_contain_text(
        "Archive, then delete items not updated for 30 days")
    expect(page.locator("#retention")).to_contain_text("next run")

    page.get_by_role("link", name="Retention and preview…").click()
    page.get_by_role("button", name="Run it now").click()
    expect(page.locator("#job-state")).to_have_text("queued")
    job = Job.objects.get(kind="retention_run")
    run_worker()
    expect(page.locator("#job-state")).to_have_text("succeeded", timeout=15_000)
    result = page.locator("#job-result")
    expect(result).to_contain_text("removed 2 items (archived 2 first); 1 item kept")
    expect(page.locator("#job-count")).to_have_text("4 of 4")  # archived 2 + removed 2: 100%
    result.get_by_text("Kept items").click()
    expect(result.locator(".retention-held")).to_contain_text(
        f"alice / peers/held.md {aged['held']}")

    assert {str(pk) for pk in MemoryItem.objects.values_list("id", flat=True)} == {
        aged["held"], aged["fresh"]}
    audit = AuditEvent.objects.get(action="retention.run.result")
    assert (audit.data["removed"], audit.data["held"]) == (2, 1)

    with page.expect_download() as info:
        page.get_by_role("link", name="Download the archive").click()
    archive = zipfile.ZipFile(io.BytesIO(Path(info.value.path()).read_bytes()))
    lines = archive.read("builtin.jsonl").decode().splitlines()
    assert sorted(json.loads(line)["key"] for line in lines) == ["older", "stale"]
    assert json.loads(archive.read("manifest.json"))["job"] == str(job.pk)
    assert console_errors == []
