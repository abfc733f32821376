"""Session idle and absolute timeouts, and ``Cache-Control: no-store`` on what logged-in users
are shown."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memadmin.lib.sessions import SEEN_RESOLUTION

pytestmark = pytest.mark.django_db

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
HOME = "/w/acme/"
MINUTE = dt.timedelta(minutes=1)


def test_the_defaults_are_thirty_minutes_idle_and_twelve_hours_in_all() -> None:
    assert settings.MEMADMIN_SESSION_IDLE_SECONDS == 30 * 60
    assert settings.MEMADMIN_SESSION_MAX_SECONDS == 12 * 3600
    assert settings.SESSION_COOKIE_AGE == settings.MEMADMIN_SESSION_MAX_SECONDS


def expired_to_login(response, next_url: str | None = HOME) -> bool:
    login = reverse("login")
    expected = f"{login}?next={next_url.replace('/', '%2F')}" if next_url else login
    return response.status_code == 302 and response["Location"] == expected


def test_an_idle_session_ends_after_thirty_minutes(client_for) -> None:
    with time_machine.travel(T0, tick=False) as clock:
        client = client_for("vic")  # the clocks start at login
        assert client.get(HOME).status_code == 200
        clock.move_to(T0 + 29 * MINUTE)
        assert client.get(HOME).status_code == 200  # activity moves the idle clock on
        clock.move_to(T0 + 58 * MINUTE)
        assert client.get(HOME).status_code == 200
        clock.move_to(T0 + 88 * MINUTE)

        response = client.get(HOME)

        assert expired_to_login(response)
        assert "_auth_user_id" not in client.session
        page = client.get(response["Location"])
        assert page.status_code == 200
        assert "expired after a period of inactivity" in page.content.decode()


def test_an_active_session_ends_twelve_hours_after_login(client_for) -> None:
    with time_machine.travel(T0, tick=False) as clock:
        client = client_for("vic")  # the clocks start at login
        for step in range(0, 12 * 60, 20):
            clock.move_to(T0 + step * MINUTE)
            assert client.get(HOME).status_code == 200, f"{step} minutes in"
        clock.move_to(T0 + 12 * 60 * MINUTE)

        response = client.get(HOME)

        assert expired_to_login(response)
        assert "maximum length" in client.get(response["Location"]).content.decode()


def test_an_htmx_request_gets_a_client_redirect_not_a_login_fragment(client_for) -> None:
    with time_machine.travel(T0, tick=False) as clock:
        client = client_for("vic")  # the clocks start at login
        client.get(HOME)
        clock.move_to(T0 + 31 * MINUTE)

        response = client.get("/w/acme/health/", HTTP_HX_REQUEST="true")

        assert response.status_code == 200
        assert response["HX-Redirect"].startswith(reverse("login") + "?next=")
        assert b"<form" not in response.content


def test_an_expired_post_is_not_served(client_for, workspace) -> None:
    with time_machine.travel(T0, tick=False) as clock:
        client = client_for("ada")
        client.get(HOME)
        clock.move_to(T0 + 31 * MINUTE)

        response = client.post("/w/acme/settings/", {"name": "Renamed"})

        assert expired_to_login(response, next_url=None)
        workspace.refresh_from_db()
        assert workspace.name == "Acme"


def test_the_last_seen_stamp_is_written_at_most_once_a_minute(client_for) -> None:
    with time_machine.travel(T0, tick=False) as clock:
        client = client_for("vic")  # the clocks start at login
        client.get(HOME)
        writes = []
        for seconds in (10, 30, 59, 61, 90, 125):
            clock.move_to(T0 + dt.timedelta(seconds=seconds))
            with CaptureQueriesContext(connection) as queries:
                assert client.get(HOME).status_code == 200
            if any("django_session" in q["sql"] and q["sql"].startswith(("UPDATE", "INSERT"))
                   for q in queries.captured_queries):
                writes.append(seconds)

    assert writes == [61, 125]
    assert SEEN_RESOLUTION == 60


def test_the_first_page_after_login_writes_no_session(client_for) -> None:
    client = client_for("vic")
    with CaptureQueriesContext(connection) as queries:
        assert client.get(HOME).status_code == 200

    assert not [q for q in queries.captured_queries
                if "django_session" in q["sql"] and q["sql"].startswith(("UPDATE", "INSERT"))]


# -- Cache-Control: no-store ---------------------------------------------------------------------


@pytest.mark.parametrize("url", [
    HOME, "/w/acme/health/", "/w/acme/health.json", "/w/acme/r/knowledge/n/alice/items/",
    "/w/acme/r/knowledge/n/alice/export.jsonl", "/w/acme/audit/", "/w/acme/audit/export.csv",
    "/w/acme/members/", "/", "/w/acme/nope/",
])
def test_every_page_and_download_of_a_logged_in_user_is_no_store(client_for, url: str) -> None:
    response = client_for("ada").get(url)

    assert response["Cache-Control"] == "no-store", (url, response.status_code)

