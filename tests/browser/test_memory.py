"""Data owners in Chromium: browse, edit with a conflict and merge, freeze, delete; a viewer
reads but cannot change."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.memory.models import MemoryItem
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def item_id(local_config, namespace) -> str:
    provider = provider_for(local_config)
    scope = c.Scope.of(namespace.partition_key)
    provider.retain("facts", "other", "An unrelated fact", "replace", operation_id="b-0",
                    scope=scope, deadline=5)
    return provider.retain("facts", "hosting", "We use the <b>free</b> tier.", "replace",
                           operation_id="b-1", scope=scope, deadline=5).id


def test_an_owner_edits_through_a_conflict_then_freezes_and_deletes(
    live_server: LiveServer, login, console_errors: list[str], item_id: str, local_config,
    namespace,
) -> None:
    page: Page = login("nora")
    page.goto(f"{live_server.url}/w/acme/r/knowledge/n/alice/items/")
    page.get_by_role("link", name="facts/hosting.md").click()
    # Content is shown as text, markup and all.
    expect(page.locator("#item-content")).to_have_text("We use the <b>free</b> tier.")

    page.get_by_role("link", name="Edit").click()
    editor = page.get_by_role("textbox", name="Content")
    expect(editor).to_be_visible()
    editor.fill("We use the paid tier.")
    # Meanwhile an agent writes a new revision.
    provider_for(local_config).update_item(item_id, "We use the enterprise tier.", "replace",
                                           expected_revision=1, operation_id="agent-1",
                                           scope=c.Scope.of(namespace.partition_key), deadline=5)
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert")).to_contain_text("while you were editing")
    expect(page.locator("#their-version")).to_have_text("We use the enterprise tier.")
    # The facts above the editor follow: the item is now at revision 2.
    expect(page.locator("#item-revision")).to_contain_text("2 · ")
    page.get_by_role("textbox").first.fill("We use the enterprise tier (paid).")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#item-content")).to_have_text("We use the enterprise tier (paid).")

    # Freeze the item: Edit is no longer offered, and the page says who froze it and why.
    page.get_by_text("Freeze or hold").click()
    page.get_by_label("Reason (required)").fill("audit in progress")
    page.get_by_role("button", name="Freeze", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="audit in progress").first).to_be_visible()
    expect(page.get_by_role("link", name="Edit")).to_have_count(0)
    expect(page.locator("#frozen-no-edit")).to_contain_text(
        "nora froze it on ")
    expect(page.locator("#frozen-no-edit")).to_contain_text("because: “audit in progress”")
    assert MemoryItem.objects.get(pk=item_id).content == "We use the enterprise tier (paid)."

    # Lift it, then delete the item behind a confirmation stating the count.
    page.get_by_text("Freeze or hold").click()
    page.get_by_role("button", name="Lift freeze").click()
    expect(page.get_by_role("status").filter(has_text="Lifted")).to_be_visible()
    page.goto(f"{live_server.url}/w/acme/r/knowledge/n/alice/items/")
    page.get_by_label("Select facts/hosting.md").check()
    page.get_by_role("button", name="Delete selected…").click()
    expect(page.locator("#delete-count")).to_have_text("1")
    page.get_by_role("button", name="Delete 1 item").click()
    expect(page.get_by_role("status").filter(has_text="Deleted 1 item")).to_be_visible()
    assert not MemoryItem.objects.filter(pk=item_id).exists()
    # The two refused saves (409) are the only console noise: the browser logs every 4xx.
    assert [e for e in console_errors if "status of 409" not in e] == []


def test_a_viewer_reads_and_searches_but_cannot_edit(
    live_server: LiveServer, login, console_errors: list[str], item_id: str,
) -> None:
    page: Page = login("vic")
    page.goto(f"{live_server.url}/w/acme/search/")
    page.get_by_label("Search memory").fill("tier")
    page.get_by_role("button", name="Search").click()
    page.get_by_role("link", name="knowledge/alice: facts/hosting.md").click()
    expect(page.locator("#item-content")).to_contain_text("free")
    expect(page.get_by_role("link", name="Edit")).to_have_count(0)
    expect(page.get_by_role("button", name="Delete…")).to_have_count(0)
    assert console_errors == []
