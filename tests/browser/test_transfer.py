"""Data owners move memory in Chromium: stream a JSON Lines export, export a ZIP file through a
job, import a file after a dry run; a viewer sees none of those controls."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.jobs.models import Job
from memadmin.memory.models import MemoryItem
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ITEMS = "/w/acme/r/knowledge/n/alice/items/"


@pytest.fixture(autouse=True)
def storage(settings, tmp_path: Path) -> Path:
    # Export files and import uploads go to a per-test directory (the live server runs in this
    # process, so it sees the override).
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "files")}}}
    return tmp_path / "files"


@pytest.fixture
def items(local_config, namespace) -> dict[tuple[str, str], str]:
    """(tier, key) -> content of the namespace's items."""
    provider = provider_for(local_config)
    scope = c.Scope.of(namespace.partition_key)
    made = {("peers", "bob"): "Bob prefers email.", ("peers", "same"): "Unchanged note.",
            ("facts", "hosting"): "We use the <b>free</b> tier."}
    for n, ((tier, key), content) in enumerate(made.items()):
        provider.retain(tier, key, content, "replace", operation_id=f"t-{n}", scope=scope,
                        deadline=5)
    return made


def run_worker() -> None:
    call_command("db_worker", batch=True, startup_delay=False, reload=False)


def test_an_owner_exports_json_lines_then_a_zip_file(
    live_server: LiveServer, login, console_errors: list[str], items, storage: Path,
) -> None:
    page: Page = login("nora")
    page.goto(live_server.url + ITEMS)

    # Streamed export: one JSON object per item.
    with page.expect_download() as info:
        page.get_by_role("link", name="Export JSON Lines").click()
    download = info.value
    assert download.suggested_filename == "acme-knowledge-alice.jsonl"
    streamed = Path(download.path()).read_bytes()
    rows = [json.loads(line) for line in streamed.decode().splitlines()]
    assert len(rows) == len(items)
    assert {(r["tier"], r["key"]): r["content"] for r in rows} == items
    assert all(r["revision"] == 1 and r["quarantine"] != "pending" for r in rows)

    # Export file: a job, run by a real worker; the page polls until it succeeds.
    page.get_by_role("link", name="Export as a file…").click()
    expect(page.get_by_role("heading", name="Export namespace knowledge/alice")).to_be_visible()
    expect(page.get_by_label("ZIP (one JSONL file per provider + manifest)")).to_be_checked()
    page.get_by_role("button", name="Start the export").click()
    expect(page.locator("#job-state")).to_have_text("queued")
    job = Job.objects.get(kind="memory_export")
    assert job.created_by is not None
    assert job.created_by.username == "nora" and job.params["format"] == "zip"

    run_worker()
    expect(page.locator("#job-state")).to_have_text("succeeded", timeout=15_000)
    expect(page.locator("#job-result")).to_contain_text("3 items exported (zip)")
    with page.expect_download() as info:
        page.get_by_role("link", name="Download").click()
    download = info.value
    assert download.suggested_filename == f"acme-export-{job.pk}.zip"
    archive = zipfile.ZipFile(io.BytesIO(Path(download.path()).read_bytes()))
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["total_items"] == 3 and manifest["scope"]["kind"] == "namespace"
    (entry,) = manifest["providers"]
    body = archive.read(entry["file"])
    assert entry["items"] == 3 and entry["sha256"] == hashlib.sha256(body).hexdigest()
    # The file holds the same JSON Lines as the streamed export.
    assert entry["sha256"] == hashlib.sha256(streamed).hexdigest()
    assert sorted(archive.namelist()) == sorted([entry["file"], "manifest.json"])
    assert console_errors == []


def test_an_owner_imports_after_a_dry_run(
    live_server: LiveServer, login, console_errors: list[str], items, namespace,
) -> None:
    before = sorted(MemoryItem.objects.values_list("id", "tier", "key", "content", "revision"))
    body = b"".join(json.dumps(row).encode() + b"\n" for row in [
        {"tier": "daily", "key": "2026-01-02", "content": "A new daily note."},    # created
        {"tier": "peers", "key": "bob", "content": "Bob prefers chat now."},      # changed
        {"tier": "peers", "key": "same", "content": "Unchanged note."},           # unchanged
        {"tier": "nonsense", "key": "", "content": "bad tier"},                  # refused
    ])
    page: Page = login("nora")
    page.goto(live_server.url + ITEMS)
    page.get_by_role("link", name="Import…").click()
    # The namespace comes preselected from the items page.
    expect(page.get_by_label("Into namespace")).to_have_value(str(namespace.pk))
    page.get_by_label("Export file").set_input_files(
        {"name": "x.jsonl", "mimeType": "application/x-ndjson", "buffer": body})
    page.get_by_role("button", name="Check the file (dry run)").click()

    expect(page.get_by_role("heading", name="Dry run: import into knowledge / alice")
           ).to_be_visible()
    expect(page.locator("#plan-counts")).to_have_text(
        "4 items: 1 created, 1 changed, 1 unchanged, 1 refused (invalid: 1).", use_inner_text=True)
    rows = page.locator("#plan tbody tr")
    expect(rows).to_have_count(4)
    expect(rows.nth(0)).to_have_class("plan-created")
    expect(rows.nth(0)).to_contain_text("daily/2026-01-02")
    expect(rows.nth(1)).to_have_class("plan-changed")
    expect(rows.nth(1)).to_contain_text("peers/bob")
    expect(rows.nth(2)).to_have_class("plan-unchanged")
    expect(rows.nth(2)).to_contain_text("peers/same")
    expect(rows.nth(3)).to_have_class("plan-refused")
    expect(rows.nth(3)).to_contain_text("refused: invalid tier or key")
    # The dry run wrote nothing and started nothing.
    assert sorted(MemoryItem.objects.values_list(
        "id", "tier", "key", "content", "revision")) == before
    assert not Job.objects.exists()

    page.get_by_role("button", name="Import 2 items").click()
    expect(page.locator("#job-state")).to_have_text("queued")
    assert Job.objects.get().kind == "memory_import"
    assert sorted(MemoryItem.objects.values_list(
        "id", "tier", "key", "content", "revision")) == before

    run_worker()
    expect(page.locator("#job-state")).to_have_text("succeeded", timeout=15_000)
    expect(page.locator("#job-result")).to_have_text(
        "Created 1, changed 1, unchanged 1, refused 1 (invalid: 1).", use_inner_text=True)
    page.get_by_text("Refused lines").click()
    expect(page.get_by_role("listitem").filter(has_text="line 4 (nonsense)")).to_be_visible()
    assert MemoryItem.objects.get(tier="daily", key="2026-01-02").content == "A new daily note."
    assert MemoryItem.objects.get(tier="peers", key="bob").content == "Bob prefers chat now."
    assert MemoryItem.objects.get(tier="peers", key="same").revision == 1
    assert not MemoryItem.objects.filter(tier="nonsense").exists()
    assert MemoryItem.objects.count() == len(items) + 1
    assert console_errors == []


def test_a_viewer_sees_no_export_import_or_delete_controls(
    live_server: LiveServer, login, console_errors: list[str], items,
) -> None:
    page: Page = login("vic")
    page.goto(live_server.url + ITEMS)
    expect(page.get_by_role("link", name="facts/hosting.md")).to_be_visible()
    expect(page.get_by_role("link", name="Recall preview")).to_be_visible()
    for name in ("Export JSON Lines", "Export as a file…", "Import…"):
        expect(page.get_by_role("link", name=name)).to_have_count(0)
    for name in ("Delete selected…", "Delete everything matching these filters…"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    expect(page.get_by_role("checkbox", name="Select facts/hosting.md")).to_have_count(0)
    assert console_errors == []
