"""Subject requests end to end in Chromium: one compliance user requests (an erasure, a
rectification, a restriction and its lift), another approves, a real worker runs the job while
the page follows it live, and the signed receipt downloads."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.audit.services import Actor
from memadmin.gdpr.models import SubjectRequest, Tombstone
from memadmin.gdpr.receipts import receipt_verify
from memadmin.memory.models import MemoryItem
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from memadmin.workspaces.services import role_grant
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SUBJECT = "user:jane.doe@example.com"


@pytest.fixture
def subject_items(local_config, namespace, other_namespace, workspace, users) -> None:
    provider = provider_for(local_config)
    for n, ns in enumerate((namespace, namespace, other_namespace)):
        provider.retain("facts", "", f"Jane prefers phone calls ({n}).", "replace",
                        data_subject_id=SUBJECT, operation_id=f"g-{n}",
                        scope=c.Scope.of(ns.partition_key), deadline=5)
    provider.retain("facts", "", "Office closes at six.", "replace", operation_id="g-other",
                    scope=c.Scope.of(namespace.partition_key), deadline=5)
    carol = User.objects.create_user("carol", "carol@example.com", PASSWORD)
    role_grant(actor=Actor.system("test"), workspace=workspace, user=carol, role="compliance")


def test_an_erasure_is_requested_approved_run_and_proven(
    live_server: LiveServer, login, console_errors: list[str], subject_items, page: Page,
) -> None:
    login("carl")
    page.goto(f"{live_server.url}/w/acme/")
    page.get_by_role("navigation", name="Workspace").get_by_role(
        "link", name="Subject requests").click()
    page.get_by_role("link", name="New request…").click()
    page.get_by_label("Erasure (Art. 17)").check()
    page.get_by_label("Data-subject id").fill(SUBJECT)
    page.get_by_label("Reason / legal basis").fill("E-mail from the subject, ticket 4411")
    page.get_by_role("button", name="Create request").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "new")
    page.get_by_role("button", name="Preview counts").click()
    # The preview is a job: the page shows it asking, then each provider's answer.
    expect(page.locator("#preview-progress")).to_contain_text("0 of 1 providers answered")
    call_command("db_worker", batch=True, startup_delay=False, reload=False)
    expect(page.locator("#preview-progress")).to_contain_text("Preview finished",
                                                              timeout=15_000)
    expect(page.locator("#steps tbody tr").first).to_contain_text("3")
    page.get_by_role("button", name="Submit for approval").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "awaiting_approval")
    expect(page.locator("#request-state")).to_have_text("Waiting for approval")  # plain words
    # The requester has no approve button (four eyes).
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    request_url = page.url
    page.get_by_role("button", name="Log out").click()

    login("carol")
    page.goto(request_url)
    page.get_by_role("button", name="Approve").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "approved")

    # A real worker runs the cascade; the page, polling through htmx, follows it.
    call_command("db_worker", batch=True, startup_delay=False, reload=False)
    expect(page.locator("#request-state")).to_have_attribute(
        "data-state", "completed", timeout=15_000)
    expect(page.locator("#steps tbody tr").first).to_contain_text("done")
    expect(page.locator("#verification")).to_contain_text("no residue found")
    expect(page.locator("#subject-id")).to_have_count(0)

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download signed receipt").click()
    document = json.loads(download_info.value.path().read_text(encoding="utf-8"))
    req = SubjectRequest.objects.get()
    assert receipt_verify(document) == req.receipt_key_id
    assert document["receipt"]["state"] == "completed"
    assert not MemoryItem.objects.filter(data_subject_id=SUBJECT).exists()
    assert MemoryItem.objects.count() == 1
    assert Tombstone.objects.filter(workspace=req.workspace, lifted_at__isnull=True).count() == 1
    assert SUBJECT not in page.content()
    assert console_errors == []


def test_an_override_of_a_legal_hold_goes_through_a_second_approval(
    live_server: LiveServer, login, console_errors: list[str], subject_items, page: Page,
    resource, namespace, users,
) -> None:
    from memadmin.memory.services import FreezeSubject, memory_freeze_place

    memory_freeze_place(actor=Actor.of(users["carl"]), subject=FreezeSubject(resource, namespace),
                        kind="legal_hold", reason="Litigation 2026-17")
    login("carl")
    page.goto(f"{live_server.url}/w/acme/requests/new/")
    page.get_by_label("Erasure (Art. 17)").check()
    page.get_by_label("Data-subject id").fill(SUBJECT)
    page.get_by_label("Reason / legal basis").fill("Letter of 3 May")
    page.get_by_role("button", name="Create request").click()
    page.get_by_role("button", name="Submit for approval").click()
    request_url = page.url
    page.get_by_role("button", name="Log out").click()

    login("carol")
    page.goto(request_url)
    page.get_by_role("button", name="Approve").click()
    call_command("db_worker", batch=True, startup_delay=False, reload=False)
    expect(page.locator("#request-state")).to_have_attribute(
        "data-state", "partial", timeout=15_000)
    page.get_by_role("button", name="Log out").click()

    # The requester asks to override the hold: that voids carol's approval.
    login("carl")
    page.goto(request_url)
    page.get_by_label("Override legal holds and freezes for this erasure — reason").fill(
        "Court order 17 of 2 June")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Override holds").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "awaiting_approval")
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    expect(page.get_by_role("button", name="Retry the steps not done")).to_have_count(0)
    assert MemoryItem.objects.filter(data_subject_id=SUBJECT).count() == 2
    page.get_by_role("button", name="Log out").click()

    login("carol")
    page.goto(f"{live_server.url}/w/acme/requests/")
    expect(page.locator("#approvals-waiting")).to_contain_text("1")
    page.goto(request_url)
    page.get_by_role("button", name="Approve").click()
    call_command("db_worker", batch=True, startup_delay=False, reload=False)
    expect(page.locator("#request-state")).to_have_attribute(
        "data-state", "completed", timeout=15_000)
    assert not MemoryItem.objects.filter(data_subject_id=SUBJECT).exists()
    req = SubjectRequest.objects.get()
    assert req.receipt is not None
    assert (req.receipt["actors"]["decided_by"], req.receipt["actors"]["override_by"]) == \
        ("carol", "carl")
    assert console_errors == []


def test_a_partial_access_request_is_closed_with_a_manual_resolution(
    live_server: LiveServer, login, console_errors: list[str], subject_items, page: Page,
    workspace, users,
) -> None:
    from memadmin.providers.services import provider_config_create, provider_config_update

    legacy = provider_config_create(actor=Actor.system("test"), workspace=workspace,
                                    slug="legacy", name="Legacy CRM", kind="http",
                                    url="https://legacy.example.com/oc-memory", probed=True)
    login("carl")
    page.goto(f"{live_server.url}/w/acme/requests/new/")
    page.get_by_label("Access (Art. 15/20)").check()
    page.get_by_label("Data-subject id").fill(SUBJECT)
    page.get_by_label("Reason / legal basis").fill("Letter of 3 May")
    page.get_by_role("button", name="Create request").click()
    # The legacy system is switched off before the request runs: its step fails.
    provider_config_update(actor=Actor.system("test"), config=legacy, enabled=False)
    page.get_by_role("button", name="Submit").click()
    call_command("db_worker", batch=True, startup_delay=False, reload=False)
    expect(page.locator("#request-state")).to_have_attribute(
        "data-state", "partial", timeout=15_000)
    # The live refresh brought the actions card up to date as well: no reload needed.
    expect(page.get_by_role("button", name="Cancel request")).to_be_visible()
    expect(page.get_by_role("button", name="Close with exceptions")).to_be_visible()
    expect(page.get_by_role("link", name="Download the subject's data (zip): what was "
                                         "gathered so far")).to_be_visible()

    page.get_by_label("Step").select_option(label="Legacy CRM (failed)")
    page.get_by_label("Justification (shown on the receipt)").fill(
        "Legacy CRM was retired in April; its records were exported by hand and posted")
    page.get_by_role("button", name="Resolve by hand").click()
    expect(page.locator("#steps")).to_contain_text("resolved by hand")
    page.get_by_label("Close as completed with exceptions — reason").fill(
        "All other data was delivered")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Close with exceptions").click()
    expect(page.locator("#request-state")).to_have_text("Completed with exceptions")
    req = SubjectRequest.objects.get()
    assert req.subject_id is None and req.receipt is not None
    resolution = req.receipt["steps"][1]["resolution"]
    assert resolution["by"] == "carl" and "posted" in resolution["justification"]
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download signed receipt").click()
    assert receipt_verify(json.loads(download_info.value.path().read_text())) == \
        req.receipt_key_id
    assert console_errors == []


def _worker() -> None:
    call_command("db_worker", batch=True, startup_delay=False, reload=False)


def _new_request(page: Page, live_server: LiveServer, kind: str, reason: str) -> None:
    page.goto(f"{live_server.url}/w/acme/requests/new/")
    page.get_by_label(kind).check()
    page.get_by_label("Data-subject id").fill(SUBJECT)
    page.get_by_label("Reason / legal basis").fill(reason)
    page.get_by_role("button", name="Create request").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "new")


def test_a_rectification_is_proposed_approved_and_applied_as_new_revisions(
    live_server: LiveServer, login, console_errors: list[str], subject_items, page: Page,
) -> None:
    login("carl")
    _new_request(page, live_server, "Rectification (Art. 16)", "The subject prefers e-mail")
    request_url = page.url
    page.get_by_role("link", name="List the subject's items and propose corrections").click()
    items = page.locator("article.correction")
    expect(items).to_have_count(3)
    first = items.first
    item_id = first.get_attribute("data-item")
    assert item_id is not None
    first.get_by_label("Corrected text").fill("Jane prefers e-mail.")
    first.get_by_role("button", name="Propose this correction").click()
    expect(page.locator(".messages")).to_contain_text("Correction proposed")
    page.goto(request_url)
    expect(page.locator("#request-items")).to_contain_text("correction proposed")
    assert "Jane prefers e-mail." not in page.content()  # hashes on the request page
    page.get_by_role("button", name="Submit for approval").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "awaiting_approval")
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    page.get_by_role("button", name="Log out").click()

    login("carol")
    page.goto(request_url)
    page.get_by_role("button", name="Approve").click()
    _worker()
    expect(page.locator("#request-state")).to_have_attribute(
        "data-state", "completed", timeout=15_000)
    expect(page.locator("#request-items")).to_contain_text("corrected")
    expect(page.locator("#request-items")).to_contain_text("1 → 2")
    item = MemoryItem.objects.get(pk=item_id)
    assert (item.content, item.revision) == ("Jane prefers e-mail.", 2)
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download signed receipt").click()
    raw = download_info.value.path().read_text(encoding="utf-8")
    document = json.loads(raw)
    assert receipt_verify(document) == SubjectRequest.objects.get().receipt_key_id
    [changed] = [i for s in document["receipt"]["steps"] for i in s["items"]]
    assert (changed["item"], changed["from_revision"], changed["to_revision"]) == \
        (item_id, 1, 2)
    for clear in (SUBJECT, "Jane prefers", "phone calls"):
        assert clear not in raw
    assert console_errors == []


def test_a_restriction_freezes_the_subject_and_a_later_decision_lifts_it(
    live_server: LiveServer, login, console_errors: list[str], subject_items, page: Page,
) -> None:
    from memadmin.memory.models import Freeze

    def frozen() -> int:
        return Freeze.objects.filter(level="item", kind="legal_hold",
                                     lifted_at__isnull=True).count()

    login("carl")
    _new_request(page, live_server, "Restriction (Art. 18)", "Accuracy contested by letter")
    request_url = page.url
    page.get_by_role("button", name="Submit for approval").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "awaiting_approval")
    page.get_by_role("button", name="Log out").click()

    login("carol")
    page.goto(request_url)
    page.get_by_role("button", name="Approve").click()
    _worker()
    expect(page.locator("#request-state")).to_have_attribute(
        "data-state", "completed", timeout=15_000)
    expect(page.locator("#request-items tbody tr")).to_have_count(3)
    expect(page.locator("#request-items")).to_contain_text("frozen by this request")
    expect(page.locator("#cannot-freeze")).to_have_count(0)
    assert frozen() == 3
    # The later decision: carol asks to lift it, carl approves.
    page.get_by_label("Lift the restriction (Art. 18(3)) — reason (the subject is told before "
                      "it is lifted)").fill("Accuracy verified with the subject")
    page.get_by_role("button", name="Lift restriction").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "awaiting_approval")
    expect(page.locator("#lifts")).to_be_visible()
    lift_url = page.url
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    page.get_by_role("button", name="Log out").click()

    login("carl")
    page.goto(lift_url)
    page.get_by_role("button", name="Approve").click()
    _worker()
    expect(page.locator("#request-state")).to_have_attribute(
        "data-state", "completed", timeout=15_000)
    expect(page.locator("#request-items")).to_contain_text("freeze lifted")
    assert frozen() == 0
    page.goto(request_url)
    expect(page.locator("#lifted-by")).to_contain_text("Lifted by request")
    assert console_errors == []
