"""A real browser loads a page: the test plumbing (live server, Chromium, CSP) works end to end."""

from __future__ import annotations

import pytest
from playwright.sync_api import ConsoleMessage, Page
from pytest_django.live_server_helper import LiveServer


@pytest.mark.browser
def test_it_serves_the_login_page_with_a_csp_and_no_console_errors(
    live_server: LiveServer, page: Page
) -> None:
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if _is_error(msg) else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    response = page.goto(live_server.url + "/accounts/login/")

    assert response is not None
    assert response.status == 200
    assert "default-src 'self'" in response.headers.get("content-security-policy", "")
    assert errors == []


def _is_error(message: ConsoleMessage) -> bool:
    return message.type == "error"
