"""Browser-test helpers: log in through the real form, and fail on any console error."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page
from pytest_django.live_server_helper import LiveServer

from tests.conftest import PASSWORD


@pytest.fixture
def console_errors(page: Page) -> list[str]:
    """Console errors and uncaught exceptions (a CSP violation shows up here)."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


@pytest.fixture
def login(live_server: LiveServer, page: Page, users) -> Callable[[str], Page]:  # type: ignore[no-untyped-def]
    def log_in(username: str) -> Page:
        page.goto(live_server.url + "/accounts/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(live_server.url + "/")
        return page

    return log_in
