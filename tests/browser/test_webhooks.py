"""An operator sets up a memory-event webhook in Chromium: adds the endpoint, copies the secret
shown once, sends a test event that a loopback receiver gets, and reads the delivery with its
status code in the log; then a real memory change arrives, signed, without its content."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.events import delivery
from memadmin.events.models import WebhookEndpoint
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from tests.events.receiver import Receiver, verify

CANARY = "Canary-browser 91c2 the vault code is 4471"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver()
    yield started
    started.stop()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_operator_adds_a_webhook_sends_a_test_event_and_reads_the_log(
        live_server: LiveServer, login: Callable[[str], Page], console_errors: list[str],
        workspace, local_config, namespace, receiver: Receiver) -> None:
    page = login("olga")
    base = live_server.url

    # 1. The Webhooks tab, and a new endpoint for two event types.
    page.goto(base + reverse("workspaces:home", args=[workspace.slug]))
    page.get_by_role("link", name="Webhooks").click()
    expect(page.get_by_text("No endpoints: memory changes are not sent anywhere.")).to_be_visible()
    page.get_by_label("Name").fill("SIEM")
    page.get_by_label("URL").fill(receiver.url)
    page.get_by_label("item.created", exact=False).check()
    page.get_by_role("button", name="Add endpoint").click()

    # 2. The secret, shown once.
    secret = page.locator("#new-secret").inner_text().strip()
    assert secret.startswith("whsec_")
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.event_types == ["item.created"]
    # A GET of the same page: no secret any more.
    page.goto(base + reverse("events:endpoint", args=[workspace.slug, endpoint.pk]))
    expect(page.locator("#new-secret")).to_have_count(0)
    assert secret not in page.content()

    # 3. "Send test event": the receiver gets it, signed with that secret; the log shows 200.
    page.get_by_role("button", name="Send test event").click()
    expect(page.get_by_text("Test event delivered: the endpoint answered 200")).to_be_visible()
    row = page.locator("#delivery-log tbody tr").first
    expect(row).to_contain_text("webhook.test")
    expect(row.locator(".status-code")).to_have_text("200")
    [test] = receiver.received
    assert verify(secret, test)
    assert test.json()["type"] == "webhook.test"

    # 4. A real memory change: delivered by the worker's duty, in the log, without content.
    item = provider_for(local_config).retain(
        "facts", "", CANARY, "replace", operation_id="browser-1", actor="agent:bot",
        scope=c.Scope.of(namespace.partition_key), deadline=30).id
    assert delivery.deliver_due() == 1
    page.reload()
    row = page.locator("#delivery-log tbody tr").first
    expect(row).to_contain_text("item.created")
    expect(row.locator(".status-code")).to_have_text("200")
    change = receiver.received[1]
    assert verify(secret, change)
    assert change.json()["data"]["item"] == item
    assert b"Canary-browser" not in change.body
    assert CANARY not in page.content()

    # 5. Disable: the next change queues nothing.
    page.get_by_role("button", name="Disable").click()
    expect(page.locator("#endpoint-state")).to_have_text("disabled")
    assert console_errors == []
