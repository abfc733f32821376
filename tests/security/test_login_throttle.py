"""Login throttling (django-axes): failed logins for one username from one address lock that
pair for the cool-off, with a friendly 429 page, the same for unknown usernames."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.conf import settings
from django.test import Client, RequestFactory
from django.urls import reverse

from memadmin.lib.throttle import client_ip
from tests.conftest import PASSWORD
from tests.test_settings import database_url, manage

pytestmark = pytest.mark.django_db

WRONG = "not the password at all"
T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


def login(client: Client, username: str, password: str, ip: str = "127.0.0.1"):
    return client.post(reverse("login"), {"username": username, "password": password},
                       REMOTE_ADDR=ip)


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def fail(client: Client, username: str, times: int, ip: str = "127.0.0.1") -> list[int]:
    return [login(client, username, WRONG, ip).status_code for _ in range(times)]


def test_the_limit_and_cool_off_are_five_and_five_minutes_by_default() -> None:
    assert settings.AXES_FAILURE_LIMIT == 5
    assert settings.AXES_COOLOFF_TIME.total_seconds() == 300
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]


@time_machine.travel(T0, tick=False)
def test_the_sixth_try_is_locked_even_with_the_right_password(users) -> None:
    client = Client()
    # Four failures answer with the login form; the fifth uses up the limit and says so.
    assert fail(client, "vic", 4) == [200] * 4
    fifth = login(client, "vic", WRONG)
    assert fifth.status_code == 429

    sixth = login(client, "vic", PASSWORD)

    assert sixth.status_code == 429
    assert not logged_in(client)
    page = sixth.content.decode()
    assert "Too many login attempts" in page
    assert "Try again in 5 minutes, after 09:05 UTC" in page
    assert sixth["Retry-After"] == "300"
    assert '"vic"' not in page and ">vic<" not in page  # no echo of the username


@time_machine.travel(T0, tick=False)
def test_an_unknown_username_gets_the_same_answers(users) -> None:
    known, unknown = Client(), Client()
    known_answers = fail(known, "vic", 6)
    unknown_answers = fail(unknown, "nobody-here", 6)

    assert known_answers == unknown_answers == [200, 200, 200, 200, 429, 429]
    first_known = login(Client(), "carl", WRONG).content.decode()
    first_unknown = login(Client(), "nobody-else", WRONG).content.decode()
    assert "Please enter a correct username and password" in first_known
    assert "Please enter a correct username and password" in first_unknown


@time_machine.travel(T0, tick=False)
def test_the_lock_is_per_username_and_address(users) -> None:
    fail(Client(), "vic", 5, ip="203.0.113.7")

    assert login(Client(), "vic", PASSWORD, ip="203.0.113.7").status_code == 429
    # The same user from elsewhere, and another user from the attacker's address, get in.
    assert login(Client(), "vic", PASSWORD, ip="198.51.100.2").status_code == 302
    assert login(Client(), "carl", PASSWORD, ip="203.0.113.7").status_code == 302


def test_the_lock_lifts_after_the_cool_off(users) -> None:
    with time_machine.travel(T0, tick=False) as clock:
        fail(Client(), "vic", 5)
        clock.move_to(T0 + dt.timedelta(minutes=4, seconds=59))
        assert login(Client(), "vic", PASSWORD).status_code == 429  # and the wait restarts

        clock.move_to(T0 + dt.timedelta(minutes=9, seconds=58))
        assert login(Client(), "vic", PASSWORD).status_code == 429
        clock.move_to(T0 + dt.timedelta(minutes=15))
        client = Client()
        assert login(client, "vic", PASSWORD).status_code == 302
        assert logged_in(client)


@time_machine.travel(T0, tick=False)
def test_a_successful_login_resets_the_count(users) -> None:
    fail(Client(), "vic", 4)
    assert login(Client(), "vic", PASSWORD).status_code == 302

    assert fail(Client(), "vic", 4) == [200] * 4
    client = Client()
    assert login(client, "vic", PASSWORD).status_code == 302
    assert logged_in(client)


@pytest.mark.parametrize("username", ["x" * 10_000, "🙂" * 200, "'; --"])
def test_a_hostile_username_is_throttled_like_any_other(users, username: str) -> None:
    client = Client()

    assert fail(client, username, 6) == [200, 200, 200, 200, 429, 429]
    assert login(Client(), "vic", PASSWORD).status_code == 302  # nobody else is affected


def test_a_nul_byte_username_is_refused_by_the_form_before_any_password_check(users) -> None:
    assert fail(Client(), "vic\x00", 7) == [200] * 7
    assert login(Client(), "vic", PASSWORD).status_code == 302


def test_the_login_page_still_works(users) -> None:
    client = Client()
    assert client.get(reverse("login")).status_code == 200
    response = login(client, "vic", PASSWORD)
    assert response.status_code == 302
    assert response["Location"] == reverse("workspaces:list")


# -- the client address behind reverse proxies ---------------------------------------------------


@pytest.mark.parametrize(("count", "forwarded", "expected"), [
    (0, "198.51.100.9", "10.0.0.1"),                     # no proxy: the header is ignored
    (1, "198.51.100.9", "198.51.100.9"),                  # one proxy appended the client
    (1, "6.6.6.6, 198.51.100.9", "198.51.100.9"),         # a forged entry further left
    (2, "6.6.6.6, 198.51.100.9, 10.0.0.2", "198.51.100.9"),
    (2, "198.51.100.9", "10.0.0.1"),                      # fewer hops than proxies
    (1, "not-an-address", "10.0.0.1"),
    (1, "", "10.0.0.1"),
])
def test_the_client_address_is_read_behind_a_known_number_of_proxies(
        settings, count: int, forwarded: str, expected: str) -> None:
    settings.MEMADMIN_PROXY_COUNT = count
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=forwarded)

    assert client_ip(request) == expected


def test_the_limits_come_from_the_environment() -> None:
    result = manage("shell", "-c", "from django.conf import settings as s; "
                    "print(s.AXES_FAILURE_LIMIT, int(s.AXES_COOLOFF_TIME.total_seconds()), "
                    "s.MEMADMIN_PROXY_COUNT)",
                    env={"DEBUG": "true", "DATABASE_URL": database_url(),
                         "MEMADMIN_LOGIN_FAILURE_LIMIT": "3",
                         "MEMADMIN_LOGIN_COOLOFF_MINUTES": "20", "MEMADMIN_PROXY_COUNT": "1"})

    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-3:] == ["3", "1200", "1"]
