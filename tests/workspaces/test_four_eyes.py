"""Switching off four-eyes erasure takes two admins (issue 14 finding 10).

One admin asks (the setting stays on, a pending change shows on the settings page); another
admin confirms it (then it is off) or either cancels it. Every step is audited. Turning four
eyes on is immediate: it only tightens the rules.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.urls import reverse

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.workspaces import services
from memadmin.workspaces.models import Workspace, WorkspaceSettingChange
from memadmin.workspaces.services import role_grant

pytestmark = pytest.mark.django_db
SYSTEM = Actor.system("test")
SETTINGS = {"subject_request_due_days": "30", "health_retention_days": "14"}


@pytest.fixture
def ed(users, workspace):
    """A second admin."""
    user = User.objects.create_user("ed", "ed@example.com", "x")
    role_grant(actor=SYSTEM, workspace=workspace, user=user, role="admin")
    users["ed"] = user
    return user


def settings_url() -> str:
    return reverse("workspaces:settings", args=["acme"])


def ask_off(client) -> WorkspaceSettingChange:
    response = client.post(settings_url(), SETTINGS)  # the checkbox unticked
    assert response.status_code == 302
    return WorkspaceSettingChange.objects.get(state="pending")


def four_eyes() -> bool:
    return Workspace.objects.get(slug="acme").four_eyes_erasure


def test_one_admin_only_asks_and_the_setting_stays_on(client_for, ed) -> None:
    change = ask_off(client_for("ada"))
    assert four_eyes() is True
    assert change.requested_by is not None
    assert (change.setting, change.value, change.requested_by.username) == \
        ("four_eyes_erasure", False, "ada")
    event = AuditEvent.objects.get(action="workspace.settings.change_requested")
    assert event.data["setting"] == "four_eyes_erasure" and event.data["value"] is False
    page = client_for("ed").get(settings_url()).content.decode()
    assert 'id="pending-changes"' in page and "ada" in page and "Confirm" in page
    own = client_for("ada").get(settings_url()).content.decode()
    assert 'id="pending-changes"' in own and "another admin" in own


def test_the_requester_cannot_confirm_their_own_change(client_for, ed) -> None:
    change = ask_off(client_for("ada"))
    url = reverse("workspaces:setting_change_confirm", args=["acme", change.pk])
    assert client_for("ada").post(url).status_code == 403
    assert four_eyes() is True
    change.refresh_from_db()
    assert change.state == "pending"


def test_a_second_admin_confirms_and_it_is_off(client_for, ed) -> None:
    change = ask_off(client_for("ada"))
    url = reverse("workspaces:setting_change_confirm", args=["acme", change.pk])
    assert client_for("ed").post(url).status_code == 302
    assert four_eyes() is False
    change.refresh_from_db()
    assert change.decided_by is not None
    assert change.state == "confirmed" and change.decided_by.username == "ed"
    event = AuditEvent.objects.get(action="workspace.settings.change_confirmed")
    assert event.data["requested_by"] == "ada"
    assert event.data["before"] == {"four_eyes_erasure": True}
    assert client_for("ed").post(url).status_code == 409  # already confirmed


def test_either_admin_cancels(client_for, ed) -> None:
    change = ask_off(client_for("ada"))
    url = reverse("workspaces:setting_change_cancel", args=["acme", change.pk])
    assert client_for("ed").post(url).status_code == 302
    change.refresh_from_db()
    assert change.state == "cancelled" and four_eyes() is True
    assert AuditEvent.objects.filter(action="workspace.settings.change_cancelled").exists()


@pytest.mark.parametrize("who", ["vic", "olga", "alice", "carl"])
def test_other_roles_get_403_and_strangers_404(client_for, ed, who: str) -> None:
    change = ask_off(client_for("ada"))
    for name in ("setting_change_confirm", "setting_change_cancel"):
        url = reverse(f"workspaces:{name}", args=["acme", change.pk])
        assert client_for(who).post(url).status_code == 403
        assert client_for("mallory").post(url).status_code == 404
        assert client_for("ada").get(url).status_code == 405
    assert four_eyes() is True


def test_the_service_refuses_to_switch_it_off_directly(users, workspace) -> None:
    with pytest.raises(ValidationError, match="second admin"):
        services.workspace_update_settings(actor=Actor.of(users["ada"]), workspace=workspace,
                                           four_eyes_erasure=False)
    assert four_eyes() is True


def test_asking_twice_keeps_one_pending_change(client_for, ed) -> None:
    ask_off(client_for("ada"))
    assert client_for("ed").post(settings_url(), SETTINGS).status_code == 302
    assert WorkspaceSettingChange.objects.filter(state="pending").count() == 1


def test_turning_it_on_is_immediate(client_for, workspace) -> None:
    Workspace.objects.filter(pk=workspace.pk).update(four_eyes_erasure=False)
    response = client_for("ada").post(settings_url(), {**SETTINGS, "four_eyes_erasure": "on"})
    assert response.status_code == 302 and four_eyes() is True
    assert not WorkspaceSettingChange.objects.exists()


def test_other_settings_still_save_at_once(client_for, ed) -> None:
    client_for("ada").post(settings_url(), {**SETTINGS, "subject_request_due_days": "20"})
    workspace = Workspace.objects.get(slug="acme")
    assert workspace.subject_request_due_days == 20 and workspace.four_eyes_erasure is True


def test_a_change_of_another_workspace_is_404(client_for, ed, other_workspace) -> None:
    change = ask_off(client_for("ada"))
    role_grant(actor=SYSTEM, workspace=other_workspace, user=User.objects.get(username="ed"),
               role="admin")
    url = reverse("workspaces:setting_change_confirm", args=["globex", change.pk])
    assert client_for("ed").post(url).status_code == 404
