"""Two-factor authentication (django-otp TOTP, recovery codes), tested by logging in through
the real login form with TOTP codes the test computes itself (RFC 6238)."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import re
import struct

import pytest
import time_machine
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from memadmin.audit.services import Actor
from memadmin.workspaces.services import role_grant
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db
T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
HOME = "/w/acme/"


def totp(secret_b32: str, at: dt.datetime, step: int = 30, digits: int = 6) -> str:
    """RFC 6238 TOTP (HMAC-SHA1), independent of django-otp."""
    key = base64.b32decode(secret_b32 + "=" * (-len(secret_b32) % 8))
    counter = int(at.timestamp()) // step
    digest = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    code = (struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 10**digits
    return str(code).zfill(digits)


def login(client: Client, username: str, password: str = PASSWORD):
    return client.post(reverse("login"), {"username": username, "password": password})


def enrol(client: Client, at: dt.datetime) -> tuple[str, list[str]]:
    """Enrol through the setup page; returns (the key shown, the recovery codes)."""
    page = client.get(reverse("accounts:2fa_setup")).content.decode()
    secret = re.search(r'id="totp-secret">([A-Z2-7]+)<', page).group(1)  # type: ignore[union-attr]
    done = client.post(reverse("accounts:2fa_setup"), {"code": totp(secret, at)})
    assert done.status_code == 200, done.content.decode()
    codes = re.findall(r"<li><code>([a-z0-9]+)</code></li>", done.content.decode())
    return secret, codes


@pytest.fixture
def privileged(settings):
    settings.MEMADMIN_2FA_REQUIRED = "privileged"


@time_machine.travel(T0, tick=False)
def test_an_admin_must_enrol_then_logs_in_with_a_real_totp_code(privileged, users) -> None:
    client = Client()
    login(client, "ada")

    # Every page sends an admin without a second factor to enrolment.
    assert client.get(HOME)["Location"].startswith(reverse("accounts:2fa_setup"))
    page = client.get(reverse("accounts:2fa_setup"))
    assert page.status_code == 200
    assert 'src="data:image/svg+xml' in page.content.decode()
    assert "style=" not in page.content.decode() and "<script>" not in page.content.decode()

    secret, codes = enrol(client, T0)
    assert len(codes) == 10 and client.get(HOME).status_code == 200

    client.post(reverse("logout"))
    login(client, "ada")
    assert client.get(HOME)["Location"].startswith(reverse("accounts:2fa_verify"))
    wrong = client.post(reverse("accounts:2fa_verify"), {"code": "000000"})
    assert wrong.status_code == 400 and client.get(HOME).status_code == 302

    later = T0 + dt.timedelta(seconds=60)  # a fresh time step: a used code never works twice
    with time_machine.travel(later, tick=False):
        right = client.post(reverse("accounts:2fa_verify"),
                            {"code": totp(secret, later), "next": HOME})
        assert right.status_code == 302 and right["Location"] == HOME
        assert client.get(HOME).status_code == 200


@time_machine.travel(T0, tick=False)
def test_a_recovery_code_works_once(privileged, users) -> None:
    client = Client()
    login(client, "carl")
    _, codes = enrol(client, T0)

    for attempt in range(2):
        other = Client()
        login(other, "carl")
        answer = other.post(reverse("accounts:2fa_verify"), {"code": codes[0]})
        assert answer.status_code == (302 if attempt == 0 else 400)


def test_a_viewer_is_not_forced_under_privileged_but_is_under_all(settings, users) -> None:
    settings.MEMADMIN_2FA_REQUIRED = "privileged"
    client = Client()
    login(client, "vic")
    assert client.get(HOME).status_code == 200

    settings.MEMADMIN_2FA_REQUIRED = "all"
    assert client.get(HOME)["Location"].startswith(reverse("accounts:2fa_setup"))


def test_an_enrolled_user_is_always_asked_even_when_not_required(settings, users) -> None:
    settings.MEMADMIN_2FA_REQUIRED = "all"
    client = Client()
    login(client, "vic")
    with time_machine.travel(T0, tick=False):
        enrol(client, T0)
    settings.MEMADMIN_2FA_REQUIRED = "off"

    fresh = Client()
    login(fresh, "vic")
    assert fresh.get(HOME)["Location"].startswith(reverse("accounts:2fa_verify"))


def test_htmx_requests_are_redirected_with_hx_redirect(privileged, users) -> None:
    client = Client()
    login(client, "ada")

    answer = client.get(HOME, headers={"HX-Request": "true"})

    assert answer.status_code == 204
    assert answer["HX-Redirect"].startswith(reverse("accounts:2fa_setup"))


@pytest.mark.parametrize(("debug", "forced"), [(True, False), (False, True)])
def test_the_demo_users_may_skip_it_only_with_debug(settings, workspace, debug,
                                                    forced) -> None:
    settings.MEMADMIN_2FA_REQUIRED = "all"
    settings.DEBUG = debug
    User.objects.create_user("admin", "admin@example.com", PASSWORD)
    role_grant(actor=Actor.system("t"), workspace=workspace, user=User.objects.get(
        username="admin"), role="admin")
    client = Client()
    login(client, "admin")

    assert (client.get(HOME).status_code == 302) is forced


def test_the_endpoint_is_not_redirected(privileged, users) -> None:
    client = Client()
    login(client, "ada")

    answer = client.post("/oc-memory", "{}", content_type="application/json")

    assert answer.status_code == 401


def test_the_setting_is_validated() -> None:
    from tests.test_settings import database_url, manage

    result = manage("check", env={"DEBUG": "true", "DATABASE_URL": database_url(),
                                  "MEMADMIN_2FA_REQUIRED": "sometimes"})

    assert result.returncode != 0 and "MEMADMIN_2FA_REQUIRED" in result.stderr
