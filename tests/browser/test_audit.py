"""The audit trail in Chromium: events read as sentences, actor and target links lead where
they say, the data opens on demand, and "Verify chain" reports on the real chain."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.audit.services import Actor
from memadmin.gdpr.transitions import (
    subject_request_approve,
    subject_request_create,
    subject_request_submit,
)
from memadmin.workspaces.services import role_grant
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def approved_erasure(workspace, users, local_config):
    compliance2 = User.objects.create_user("compliance2", "c2@example.com", PASSWORD)
    role_grant(actor=Actor.system("test"), workspace=workspace, user=compliance2,
               role="compliance")
    request = subject_request_create(actor=Actor.of(users["carl"]), workspace=workspace,
                                     kind="erasure", subject_id="user:jane@example.com",
                                     reason="ticket 4411")
    request = subject_request_submit(actor=Actor.of(users["carl"]), subject_request=request)
    return subject_request_approve(actor=Actor.of(compliance2), subject_request=request)


def test_the_trail_reads_as_sentences_and_verifies(
    live_server: LiveServer, login, console_errors: list[str], approved_erasure,
    page: Page,
) -> None:
    short = str(approved_erasure.pk)[:8]
    login("carl")
    page.goto(f"{live_server.url}/w/acme/")
    page.get_by_role("navigation", name="Workspace").get_by_role("link", name="Audit").click()

    rows = page.locator("#audit-rows tr")
    approved = rows.filter(has_text=f"compliance2 approved erasure request {short}")
    expect(approved).to_have_count(1)
    expect(rows.filter(has_text=f"carl submitted erasure request {short}")).to_have_count(1)
    expect(rows.filter(has_text=f"carl created erasure request {short}")).to_have_count(1)

    # The data is folded away until asked for, and it never shows the clear subject id.
    data = approved.locator("details pre")
    expect(data).to_be_hidden()
    approved.get_by_text("Data").click()
    expect(data).to_be_visible()
    expect(data).to_contain_text('"kind": "erasure"')
    assert "jane@example.com" not in page.content()

    # The actor's name filters the trail by them; the filter shows in the form.
    approved.get_by_role("link", name="compliance2").click()
    expect(page.get_by_label("Actor")).to_have_value("compliance2")
    expect(page.locator("#audit-rows .event-sentence").first).to_contain_text("compliance2")
    for sentence in page.locator("#audit-rows .event-sentence").all_text_contents():
        assert sentence.startswith("compliance2 ")

    # The target's link opens the request.
    page.locator("#audit-rows tr").filter(has_text="approved erasure request").get_by_role(
        "link", name=short).click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "approved")

    page.go_back()
    page.get_by_role("link", name="Clear").click()
    page.get_by_role("button", name="Verify chain").click()
    call_command("db_worker", batch=True, startup_delay=False, reload=False)
    expect(page.locator("#verify-result")).to_contain_text("OK: all", timeout=15_000)
    assert console_errors == []
