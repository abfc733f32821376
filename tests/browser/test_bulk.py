"""Pages built for bulk work, in Chromium: selecting all matching items and deleting them as
a job (minus the ones unticked), the editor's conflict merge, and the item list at phone
width."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.jobs import runner
from memadmin.jobs.models import Job
from memadmin.memory.models import MemoryItem
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ITEMS = "/w/acme/r/knowledge/n/alice/items/"


@pytest.fixture
def put(local_config, namespace):
    provider = provider_for(local_config)
    scope = c.Scope.of(namespace.partition_key)
    counter = iter(range(10_000))

    def put(content: str, tier: str = "facts", key: str = "") -> str:
        return provider.retain(tier, key, content, "replace",
                               operation_id=f"bb-{next(counter)}", scope=scope,
                               deadline=5).id

    return put


def test_an_owner_selects_all_matching_and_deletes_them_as_a_job(
        live_server: LiveServer, login, console_errors: list[str], put) -> None:
    for n in range(55):
        put(f"billing note {n}")
    put("hosting note")
    page: Page = login("nora")
    page.goto(f"{live_server.url}{ITEMS}")
    page.get_by_label("Search").fill("billing")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#item-total")).to_contain_text("55 items match these filters")
    expect(page.locator("mark").first).to_have_text("billing")

    page.get_by_label("Select all on this page").check()
    expect(page.locator("[data-selection-count]")).to_have_text("50 selected")
    page.get_by_role("button", name="Select all 55 matching").click()
    expect(page.locator("[data-selection-count]")).to_have_text("All 55 matching selected")
    kept = page.locator("[data-select-item]").first
    kept_id = kept.get_attribute("value")
    assert kept_id is not None
    kept.uncheck()
    expect(page.locator("[data-selection-count]")).to_have_text(
        "All 55 matching selected, 1 kept")
    page.get_by_role("button", name="Delete selected…").click()

    # The confirmation states the count of the filter, with the unticked item to keep.
    expect(page.locator("#delete-count")).to_have_text("55")
    expect(page.get_by_label("Keep these items")).to_have_value(kept_id or "")
    page.get_by_role("button", name="Delete 55 items").click()
    expect(page.locator("#job-state")).to_be_visible()
    job = Job.objects.get(kind="memory_bulk_delete")
    assert runner.run_job(str(job.pk)) == "succeeded"
    page.reload()
    expect(page.locator("#job-state")).to_have_text("succeeded")
    expect(page.locator("#job-result")).to_contain_text("Removed 54 items")
    expect(page.locator("#job-progress")).to_contain_text("(100%)")
    assert sorted(MemoryItem.objects.values_list("content", flat=True)) == sorted(
        ["hosting note", MemoryItem.objects.get(pk=kept_id).content])
    # Back to the namespace through the breadcrumbs.
    page.locator("#job-about").click()
    expect(page.locator("#item-total")).to_contain_text("2 items")
    assert console_errors == []


def test_the_conflict_merge_marks_their_lines_and_refreshes_the_revisions(
        live_server: LiveServer, login, console_errors: list[str], put, local_config,
        namespace) -> None:
    item_id = put("line one\nline two\nline three", tier="peers", key="bob")
    page: Page = login("nora")
    page.goto(f"{live_server.url}{ITEMS}{item_id}/")
    page.get_by_role("link", name="Edit").click()
    page.get_by_role("textbox", name="Content").fill("line one\nline two\nmy own line")
    provider_for(local_config).update_item(
        item_id, "line one\nTHEIR line\nline three", "replace", expected_revision=1,
        operation_id="them", actor="user:olga", scope=c.Scope.of(namespace.partition_key),
        deadline=5)
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#conflict-head")).to_contain_text("Revision 2 by user:olga at ")
    marked = page.locator("#their-version mark")
    expect(marked).to_have_count(2)
    expect(marked.nth(0)).to_have_text("THEIR line")
    expect(marked.nth(1)).to_have_text("line three")
    expect(page.get_by_role("alert")).to_contain_text("2 lines of yours are not in theirs")
    # The revision table beside the editor shows the new revision without a reload.
    expect(page.locator("#revision-rows")).to_contain_text("2 (current)")
    expect(page.locator("#revision-rows")).to_contain_text("user:olga")

    page.get_by_role("textbox").first.fill("line one\nTHEIR line\nmy own line")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#item-content")).to_have_text("line one\nTHEIR line\nmy own line")
    # The default diff compares the newest revision with its predecessor.
    page.get_by_role("button", name="Show diff").click()
    expect(page.locator("#diff .diff-added")).to_have_text("+my own line")
    # The refused save (409) is the only console noise: no CSP violation from the fragments.
    assert [e for e in console_errors if "status of 409" not in e] == []


def test_the_item_list_fits_a_phone(live_server: LiveServer, login, put) -> None:
    put("a fact with a rather long line of text " * 6, tier="peers", key="a-very-long-key-" * 4)
    put("another fact")
    page: Page = login("nora")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}{ITEMS}")
    expect(page.locator("#items")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    assert page.evaluate("document.querySelector('.table-scroll').scrollWidth "
                         "<= document.querySelector('.table-scroll').clientWidth")
