"""Alert targets are credentials: an Apprise URL or a webhook URL carries the token that lets
anyone post to the channel. At rest the column holds only a Fernet token; pages show a masked
form; delivery still uses the clear URL; duplicates are still refused."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import reverse
from django.utils.html import escape

from memadmin.lib.crypto import is_token
from memadmin.workspaces.models import AlertTarget, alert_target_digest, alert_target_display

pytestmark = pytest.mark.django_db

SLACK_SECRET = "T1CANARY/B2CANARY/xoxbSecretCanary9Q"  # noqa: S105 - a test canary
HOOK_SECRET = "hookPathSecretCanary7Z"  # noqa: S105 - a test canary


def _stored_targets() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT target FROM workspaces_alerttarget")
        return [row[0] for row in cursor.fetchall()]


def _add(client, kind: str, target: str):
    return client.post(reverse("workspaces:alert_add", args=["acme"]),
                       {"kind": kind, "target": target})


class TestAtRest:
    @pytest.mark.parametrize(("kind", "target", "secret"), [
        ("apprise", f"slack://{SLACK_SECRET}", "xoxbSecretCanary9Q"),
        ("webhook", f"https://hooks.example.com/services/{HOOK_SECRET}?sig=abc", HOOK_SECRET),
    ])
    def test_the_column_holds_a_token_and_the_page_a_mask(self, client_for, workspace, kind,
                                                          target, secret) -> None:
        ada = client_for("ada")
        assert _add(ada, kind, target).status_code in (200, 302)
        stored = _stored_targets()
        assert len(stored) == 1 and is_token(stored[0]) and secret not in stored[0]
        alert = AlertTarget.objects.get()
        assert alert.target == target                     # Python code sees the clear URL
        page = ada.get(reverse("workspaces:settings", args=["acme"])).content.decode()
        assert secret not in page
        assert escape(alert.display_target) in page
        assert secret not in alert.display_target

    def test_an_email_address_is_shown_as_it_is(self, client_for, workspace) -> None:
        ada = client_for("ada")
        _add(ada, "email", "oncall@example.com")
        page = ada.get(reverse("workspaces:settings", args=["acme"])).content.decode()
        assert "oncall@example.com" in page
        assert is_token(_stored_targets()[0])

    def test_a_duplicate_is_still_refused(self, client_for, workspace) -> None:
        ada = client_for("ada")
        target = f"https://hooks.example.com/services/{HOOK_SECRET}"
        _add(ada, "webhook", target)
        response = _add(ada, "webhook", target)
        assert response.status_code == 400
        assert "already" in response.content.decode()
        assert AlertTarget.objects.count() == 1
        # The same URL in another kind is another target.
        assert _add(ada, "apprise", "json://hooks.example.com/x").status_code in (200, 302)
        assert AlertTarget.objects.count() == 2


class TestShapes:
    @pytest.mark.parametrize(("kind", "target", "shown"), [
        ("webhook", "https://hooks.example.com/services/abc?x=1", "https://hooks.example.com/…"),
        ("webhook", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/"),
        ("webhook", "https://user:pw@hooks.example.com/a", "https://hooks.example.com/…"),
        ("email", "a@example.com", "a@example.com"),
    ])
    def test_display(self, kind, target, shown) -> None:
        assert alert_target_display(kind, target) == shown

    def test_the_digest_depends_on_kind_and_target_only(self) -> None:
        one = alert_target_digest("webhook", "https://a.example.com/x")
        assert one == alert_target_digest("webhook", "https://a.example.com/x")
        assert one != alert_target_digest("apprise", "https://a.example.com/x")
        assert one != alert_target_digest("webhook", "https://a.example.com/y")
        assert "a.example.com" not in one


def test_reencrypt_secrets_covers_alert_targets(workspace) -> None:
    alert = AlertTarget(workspace=workspace, kind="webhook",
                        target=f"https://hooks.example.com/{HOOK_SECRET}")
    alert.full_clean()
    alert.save()
    before = _stored_targets()[0]
    call_command("reencrypt_secrets")
    after = _stored_targets()[0]
    assert is_token(after) and after != before
    alert.refresh_from_db()
    assert alert.target == f"https://hooks.example.com/{HOOK_SECRET}"
