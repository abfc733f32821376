"""An operator's walk, in Chromium: add a remote provider, watch it go down, read the incident
and note it, schedule maintenance; then an admin sends a test alert that a loopback receiver
gets (through Apprise) and reads it in the delivery log."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.providers import health
from memadmin.providers.models import IncidentNote, MaintenanceWindow, ProviderConfig
from tests.providers.fake_provider import FakeProvider


@pytest.fixture
def store() -> Iterator[FakeProvider]:
    started = FakeProvider.start()
    yield started
    started.stop()


@pytest.fixture
def receiver() -> Iterator[FakeProvider]:
    started = FakeProvider.start()
    yield started
    started.stop()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_operator_adds_a_provider_sees_it_fail_notes_the_incident_and_plans_maintenance(
        live_server: LiveServer, login: Callable[[str], Page], console_errors: list[str],
        workspace, store: FakeProvider, receiver: FakeProvider) -> None:
    page = login("olga")
    base = live_server.url

    # 1. Add the provider; polling is on by default.
    page.goto(base + reverse("providers:create", args=[workspace.slug]))
    page.get_by_label("Name").fill("Vector store")
    page.get_by_label("Slug").fill("vectors")
    page.get_by_label("Kind").select_option("http")
    page.get_by_label("Url").fill(store.url)
    page.get_by_label("Credential").fill("remote-secret")
    expect(page.get_by_label("Probed (poll this provider's health)")).to_be_checked()
    page.get_by_role("button", name="Create provider").click()
    expect(page.get_by_text("Vector store").first).to_be_visible()
    config = ProviderConfig.objects.get(slug="vectors")
    assert config.probed

    # 2. It answers, then stops answering: two failed polls make it "down".
    health.poll([config])
    store.stop()
    health.poll([config])
    health.poll([config])
    page.goto(base + reverse("providers:health", args=[workspace.slug]))
    expect(page.locator("#health-vectors [data-testid=state]")).to_have_text("down")
    expect(page.locator("#health-vectors .message")).to_have_text(
        "last check failed: connection refused")

    # 3. The incident: when it started, that it is ongoing, its first error; a note on it.
    page.get_by_role("link", name="Vector store").click()
    incident = page.locator("[data-testid=incident]")
    expect(incident).to_have_count(1)
    expect(incident).to_contain_text("ongoing")
    expect(incident).to_contain_text("connection refused")
    incident.get_by_role("textbox").fill("Store host rebooted by the cloud provider.")
    incident.get_by_role("button", name="Save note").click()
    expect(page.locator("[data-testid=incident]")).to_contain_text(
        "Store host rebooted by the cloud provider.")
    author = IncidentNote.objects.get().author
    assert author is not None and author.username == "olga"

    # 4. Maintenance for the next hour: the panel shows the banner.
    page.goto(base + reverse("providers:maintenance", args=[workspace.slug]))
    start = timezone.now().replace(second=0, microsecond=0) - dt.timedelta(minutes=1)
    page.get_by_label("Provider").select_option(label="Vector store")
    page.get_by_label("Starts").fill(start.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("Ends").fill((start + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("Reason").fill("Moving the store to a new host")
    page.get_by_role("button", name="Schedule maintenance").click()
    expect(page.locator("#maintenance-windows")).to_contain_text("Moving the store")
    assert MaintenanceWindow.objects.filter(provider=config).exists()
    page.goto(base + reverse("providers:health", args=[workspace.slug]))
    expect(page.get_by_test_id("maintenance")).to_contain_text(
        "Maintenance of Vector store until")

    # 5. An admin sends a test alert to a receiver on loopback, through an Apprise json:// URL.
    page.get_by_role("button", name="Log out").click()
    page = login("ada")
    page.goto(base + reverse("workspaces:settings", args=[workspace.slug]))
    page.get_by_label("Kind").last.select_option("apprise")
    page.get_by_label("URL or address").fill(f"json://127.0.0.1:{receiver.port}/alerts")
    page.get_by_role("button", name="Add alert target").click()
    page.get_by_role("button", name="Send a test alert to").click()
    expect(page.locator("#alert-deliveries")).to_contain_text("test alert")
    expect(page.locator("#alert-deliveries")).to_contain_text("delivered")
    [request] = receiver.requests
    assert request.json()["title"] == "[memadmin] test alert"
    assert console_errors == []
