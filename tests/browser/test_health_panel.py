"""The aux-status panel refreshes itself: a provider that goes down shows as down without a
reload."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.audit.services import Actor
from memadmin.providers import health
from memadmin.providers.services import provider_config_create
from tests.providers.fake_provider import FakeProvider


@pytest.fixture
def server() -> Iterator[FakeProvider]:
    started = FakeProvider.start()
    yield started
    started.stop()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_it_shows_a_provider_going_down_without_a_reload(
        live_server: LiveServer, login: Callable[[str], Page], console_errors: list[str],
        workspace, server: FakeProvider, settings) -> None:
    settings.MEMADMIN_PANEL_REFRESH_SECONDS = 1
    config = provider_config_create(actor=Actor.system("test"), workspace=workspace,
                                    slug="remote", name="Remote store", kind="http",
                                    url=server.url, credential="x", probed=True,
                                    health_deadline_ms=1000)
    health.poll([config])
    page = login("olga")
    page.goto(live_server.url + reverse("providers:health", args=[workspace.slug]))
    state = page.locator("#health-remote [data-testid=state]")
    expect(state).to_have_text("ok")
    page.evaluate("window.sameDocument = true")  # gone if the page were reloaded

    server.stop()
    health.poll([config])
    health.poll([config])

    expect(state).to_have_text("down", timeout=15000)
    expect(page.locator("#health-remote .message")).to_have_text(
        "last check failed: connection refused")
    assert page.evaluate("window.sameDocument") is True
    assert console_errors == []
