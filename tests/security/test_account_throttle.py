"""The account-wide login limit beside django-axes' per (username, address) one: a slow spray
from many addresses is stopped too."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db
T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


def login(username: str, password: str, ip: str) -> Client:
    client = Client()
    client.post(reverse("login"), {"username": username, "password": password},
                REMOTE_ADDR=ip)
    return client


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_failures_from_many_addresses_lock_the_account_for_the_window(settings,
                                                                     users) -> None:
    settings.MEMADMIN_LOGIN_ACCOUNT_FAILURE_LIMIT = 6
    settings.MEMADMIN_LOGIN_ACCOUNT_WINDOW_MINUTES = 60
    with time_machine.travel(T0, tick=False):
        # Two tries from each of three addresses: never the pair limit (5), six in all.
        for n in range(6):
            login("vic", "wrong password", f"198.51.100.{n // 2}")

        assert not logged_in(login("vic", PASSWORD, "203.0.113.9"))
        assert logged_in(login("ada", PASSWORD, "203.0.113.9"))  # other accounts are fine

    with time_machine.travel(T0 + dt.timedelta(minutes=61), tick=False):
        assert logged_in(login("vic", PASSWORD, "203.0.113.9"))


def test_the_defaults_are_twenty_failures_an_hour() -> None:
    from django.conf import settings

    assert (settings.MEMADMIN_LOGIN_ACCOUNT_FAILURE_LIMIT,
            settings.MEMADMIN_LOGIN_ACCOUNT_WINDOW_MINUTES) == (20, 60)
