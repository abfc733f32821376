"""A person logs in and walks workspace -> resource -> namespace in Chromium."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_owner_logs_in_and_navigates_to_a_namespace(
    live_server: LiveServer, login, console_errors: list[str], namespace,
) -> None:
    page: Page = login("nora")

    page.get_by_role("link", name="Acme").click()
    expect(page.get_by_role("heading", name="Acme", exact=True)).to_be_visible()
    page.get_by_role("link", name="knowledge").first.click()
    expect(page.get_by_role("heading", name="Resource knowledge")).to_be_visible()
    page.get_by_role("link", name="alice").click()

    expect(page.get_by_role("heading", name="Namespace alice")).to_be_visible()
    expect(page.locator("#partition-key")).to_have_text(namespace.partition_key)
    # nora owns this namespace, so she may recount it; she is no admin, so no delete button.
    expect(page.get_by_role("button", name="Recount items and bytes")).to_be_visible()
    expect(page.get_by_role("button", name="Delete namespace")).to_have_count(0)
    assert console_errors == []


def test_a_recount_shows_live_progress_until_it_finishes(
    live_server: LiveServer, login, console_errors: list[str], namespace,
) -> None:
    from django.core.management import call_command

    page: Page = login("alice")
    page.goto(f"{live_server.url}/w/acme/r/knowledge/n/alice/")
    page.get_by_role("button", name="Recount items and bytes").click()
    expect(page.locator("#job-state")).to_have_text("queued")

    # A real worker runs the job; the page, polling through htmx, turns to succeeded by itself.
    call_command("db_worker", batch=True, startup_delay=False, reload=False)
    expect(page.locator("#job-state")).to_have_text("succeeded", timeout=15_000)
    assert console_errors == []


def test_a_wrong_password_keeps_the_user_on_the_login_page(
    live_server: LiveServer, page: Page, users,
) -> None:
    page.goto(live_server.url + "/accounts/login/")
    page.get_by_label("Username").fill("nora")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("correct username and password")
