"""Browser-test helpers: log in through the real form, fail on any console error, and run axe
on every page a browser test loads (WCAG 2.0/2.1/2.2 A and AA), failing the test on any
violation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page
from pytest_django.live_server_helper import LiveServer

from tests.conftest import PASSWORD

#: axe-core's tags for WCAG 2.0, 2.1 and 2.2, levels A and AA (2.2 added AA rules only).
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
#: Rules whose "needs review" (incomplete) results were real bugs here, checked as strictly as
#: violations: two form controls sharing an id, a control with several labels, an
#: aria-describedby naming no element; and headers with no text (a best practice, not a tag).
REVIEW_RULES = ["duplicate-id-aria", "form-field-multiple-labels", "aria-valid-attr-value",
                "empty-table-header"]

#: axe-core's source (shipped inside axe-playwright-python: nothing is fetched at test time),
#: added to every document of a test's page before the page's own scripts run.
AXE_SOURCE = Axe().axe_script
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": WCAG_TAGS},
               "rules": {rule: {"enabled": True} for rule in REVIEW_RULES},
               "resultTypes": ["violations", "incomplete"]}


def axe_problems(page: Page) -> list[str]:
    """Every WCAG A/AA violation on the page as it is now, and every "needs review" finding of
    REVIEW_RULES, one line each."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE_SOURCE)
    response = page.evaluate("options => axe.run(document, options)", AXE_OPTIONS)
    found: list[str] = []
    for kind, results in (("violation", response["violations"]),
                          ("needs review", [r for r in response["incomplete"]
                                            if r["id"] in REVIEW_RULES])):
        for rule in results:
            targets = ", ".join(str(node["target"]) for node in rule["nodes"][:5])
            found.append(f"{page.url}: {kind} {rule['id']} ({rule['help']}) at {targets}")
    return found


def _settled(page: Page) -> list[str]:
    """axe_problems once a load handler's run (which may still be going) is done."""
    for _ in range(50):
        try:
            return axe_problems(page)
        except PlaywrightError as exc:
            if "already running" not in str(exc):
                raise
            page.wait_for_timeout(100)
    return axe_problems(page)


@pytest.fixture(autouse=True)
def axe_every_page(page: Page) -> Iterator[list[str]]:
    """Check each page as it loads; the test fails at teardown if any check found a problem.

    Load handlers run between the test's own browser calls, so a page the test leaves before
    axe is done is noted and loaded again at teardown (a GET in the same session, when that
    answers 200), and the last page is checked in its final state (after any htmx swaps)."""
    problems: list[str] = []
    missed: list[str] = []

    def check(_: Any) -> None:
        url = page.url
        try:
            problems.extend(axe_problems(page))
        except PlaywrightError:
            missed.append(url)

    page.context.add_init_script(AXE_SOURCE)
    page.on("load", check)
    yield problems
    if page.is_closed():
        return
    page.wait_for_load_state()
    page.remove_listener("load", check)
    if page.url.startswith("http"):
        problems.extend(_settled(page))
    for url in dict.fromkeys(missed):
        if url == page.url or not url.startswith("http"):
            continue
        again = page.context.new_page()
        try:
            response = again.goto(url)
        except PlaywrightError:
            response = None
        if response is not None and response.ok:
            problems.extend(_settled(again))
        again.close()
    unique = list(dict.fromkeys(problems))
    assert unique == [], "\n".join(unique)


@pytest.fixture(autouse=True)
def rendered_as_in_production(settings) -> None:
    """Pages render as users get them: under DEBUG, django-htmx adds a helper that replaces
    the whole page with an htmx 4xx response (the bare fragment), which no user ever sees."""
    settings.DEBUG = False


@pytest.fixture
def console_errors(page: Page) -> list[str]:
    """Console errors and uncaught exceptions (a CSP violation shows up here)."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


@pytest.fixture
def login(live_server: LiveServer, page: Page, users) -> Callable[[str], Page]:
    def log_in(username: str) -> Page:
        page.goto(live_server.url + "/accounts/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(live_server.url + "/")
        return page

    return log_in
