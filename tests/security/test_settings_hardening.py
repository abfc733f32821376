"""Production settings pass Django's deployment checks; the CSP on real pages forbids inline
and eval'd script, plugins, <base> and framing; session and login settings come from the
environment."""

from __future__ import annotations

import pytest
from django.core.management.utils import get_random_secret_key

from tests.test_settings import database_url, manage

pytestmark = pytest.mark.django_db

PRODUCTION = {
    "DEBUG": "false",
    "ALLOWED_HOSTS": "memadmin.example.com",
    "MEMADMIN_SIGNING_KEYS": "s1:" + "a" * 40,
    "MEMADMIN_HASHING_KEYS": "h1:" + "b" * 40,
    "MEMADMIN_ENCRYPTION_KEYS": "e1:mKb6yq3YhW1L8eB0n9m4kJ0fX4b2cR9sV7tQ1uZ5aE8=",
    "MEMADMIN_AUDIT_KEYS": "a1:" + "c" * 40,
}


def test_the_deployment_checks_pass_behind_a_proxy_with_every_security_variable_set() -> None:
    result = manage("check", "--deploy", "--fail-level", "WARNING", env={
        **PRODUCTION, "SECRET_KEY": get_random_secret_key(), "DATABASE_URL": database_url(),
        "MEMADMIN_BEHIND_PROXY": "true", "MEMADMIN_PROXY_COUNT": "1",
        "CSRF_TRUSTED_ORIGINS": "https://memadmin.example.com",
        "MEMADMIN_LOGIN_FAILURE_LIMIT": "5", "MEMADMIN_LOGIN_COOLOFF_MINUTES": "15",
        "MEMADMIN_SESSION_IDLE_MINUTES": "20", "MEMADMIN_SESSION_MAX_HOURS": "8",
    })
    output = result.stdout + result.stderr

    assert result.returncode == 0, output
    assert "System check identified no issues" in output, output


def test_session_lengths_come_from_the_environment() -> None:
    result = manage("shell", "-c", "from django.conf import settings as s; print("
                    "s.MEMADMIN_SESSION_IDLE_SECONDS, s.MEMADMIN_SESSION_MAX_SECONDS, "
                    "s.SESSION_COOKIE_AGE)",
                    env={"DEBUG": "true", "DATABASE_URL": database_url(),
                         "MEMADMIN_SESSION_IDLE_MINUTES": "20",
                         "MEMADMIN_SESSION_MAX_HOURS": "8"})

    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-3:] == ["1200", "28800", "28800"]


def test_the_old_session_variable_is_refused_with_its_replacement_named() -> None:
    result = manage("check", env={"DEBUG": "true", "DATABASE_URL": database_url(),
                                  "MEMADMIN_SESSION_SECONDS": "3600"})

    assert result.returncode != 0
    assert "MEMADMIN_SESSION_MAX_HOURS" in result.stderr


@pytest.mark.parametrize(("who", "url"), [
    (None, "/accounts/login/"),
    ("ada", "/"),
    ("ada", "/w/acme/"),
    ("ada", "/w/acme/r/knowledge/n/alice/items/"),
    ("ada", "/w/acme/audit/"),
    ("ada", "/w/acme/settings/"),
])
def test_real_pages_carry_a_strict_csp(client_for, who: str | None, url: str) -> None:
    response = client_for(who).get(url)
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    directives = {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}

    assert directives["object-src"] == ["'none'"]
    assert directives["base-uri"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["default-src"] == ["'self'"]
    assert "'unsafe-inline'" not in policy
    assert "'unsafe-eval'" not in policy
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
