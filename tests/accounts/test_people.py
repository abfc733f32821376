"""Admins manage people: create an account with a one-time password link, deactivate and
reactivate it (its tokens are suspended), reset its two-factor enrolment; never across
workspaces they do not administer."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.urls import reverse
from django_otp.plugins.otp_totp.models import TOTPDevice

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.memory.services import agent_token_mint
from memadmin.workspaces import access
from memadmin.workspaces.services import role_grant, workspace_create

pytestmark = pytest.mark.django_db


def logs_in(client, username: str, password: str) -> bool:
    """Through the real login form (django-axes needs the request)."""
    response = client.post(reverse("login"), {"username": username, "password": password})
    return response.status_code == 302


def create(client, **fields):
    data = {"username": "newbie", "email": "", "roles": ["viewer"], **fields}
    return client.post(reverse("accounts:account_create", args=["acme"]), data)


class TestCreate:
    def test_an_admin_creates_an_account_whose_link_sets_the_password_once(
            self, client_for, client, django_capture_on_commit_callbacks) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            response = create(client_for("ada"), email="newbie@example.com")

        assert response.status_code == 200
        user = User.objects.get(username="newbie")
        assert not user.has_usable_password()
        assert access.workspace_roles(user, user_workspace := access.visible_workspaces(
            user).get()) == {"viewer"} and user_workspace.slug == "acme"
        found = re.search(r'<code id="password-link">([^<]+)</code>', response.content.decode())
        assert found is not None
        link = found.group(1)
        assert link in mail.outbox[0].body
        path = link.split("testserver", 1)[1]
        form_page = client.get(path, follow=True)
        assert b"Choose your password" in form_page.content
        done = client.post(form_page.redirect_chain[-1][0], {
            "new_password1": "a long new passphrase 42", "new_password2":
            "a long new passphrase 42"})
        assert done.status_code == 302
        assert logs_in(client, "newbie", "a long new passphrase 42")
        again = client.get(path, follow=True)
        assert b"already used or has expired" in again.content
        assert AuditEvent.objects.filter(action="account.create").exists()

    @pytest.mark.parametrize("fields", [{"username": "vic"}, {"username": "no spaces"},
                                        {"roles": []}, {"email": "not-an-address"},
                                        {"username": "x" * 200}])
    def test_bad_input_is_explained_and_creates_nothing(self, client_for, fields) -> None:
        before = User.objects.count()
        response = create(client_for("ada"), **fields)
        assert response.status_code == 400
        assert 'role="alert"' in response.content.decode()
        assert User.objects.count() == before

    def test_only_admins_create_accounts(self, client_for) -> None:
        assert create(client_for("olga")).status_code == 403
        assert create(client_for("mallory")).status_code == 404
        assert not User.objects.filter(username="newbie").exists()


class TestDeactivate:
    def test_deactivating_blocks_login_suspends_tokens_and_can_be_undone(
            self, client_for, client, users, workspace, namespace) -> None:
        token, _ = agent_token_mint(actor=Actor.of(users["nora"]), workspace=workspace,
                                    namespaces=[namespace], access="read", name="bot")
        url = reverse("accounts:account_active", args=["acme", "nora"])

        client_for("ada").post(url, {"active": "0"})

        users["nora"].refresh_from_db()
        token.refresh_from_db()
        assert not users["nora"].is_active and token.suspended_at is not None
        assert not logs_in(client, "nora", "correct horse battery staple")
        client_for("ada").post(url, {"active": "1"})
        users["nora"].refresh_from_db()
        assert users["nora"].is_active
        assert set(AuditEvent.objects.filter(action__startswith="account.")
                   .values_list("action", flat=True)) == {"account.deactivate",
                                                          "account.reactivate"}

    def test_an_admin_cannot_act_on_someone_who_is_also_elsewhere(
            self, client_for, users) -> None:
        elsewhere = workspace_create(actor=Actor.system("t"), slug="globex", name="Globex")
        role_grant(actor=Actor.system("t"), workspace=elsewhere, user=users["vic"],
                   role="viewer")

        client_for("ada").post(reverse("accounts:account_active", args=["acme", "vic"]),
                               {"active": "0"})
        client_for("ada").post(reverse("accounts:account_active", args=["acme", "ada"]),
                               {"active": "0"})

        users["vic"].refresh_from_db()
        users["ada"].refresh_from_db()
        assert users["vic"].is_active and users["ada"].is_active
        page = client_for("ada").get(reverse("accounts:people", args=["acme"])).content.decode()
        assert "also in workspaces you do not administer" in page

    def test_a_stranger_and_an_unknown_account_get_404(self, client_for) -> None:
        assert client_for("ada").post(reverse("accounts:account_active",
                                              args=["acme", "nobody"])).status_code == 404
        assert client_for("mallory").get(reverse("accounts:people",
                                                 args=["acme"])).status_code == 404


def test_resetting_two_factor_removes_the_devices(client_for, users) -> None:
    TOTPDevice.objects.create(user=users["carl"], name="phone", confirmed=True)

    client_for("ada").post(reverse("accounts:account_reset_2fa", args=["acme", "carl"]))

    assert not TOTPDevice.objects.filter(user=users["carl"]).exists()
    assert AuditEvent.objects.get(action="account.reset_2fa").data["devices"] == 1


class TestPageQueries:
    """The people page asks the database a fixed number of questions however many people
    it lists (it once asked two per person to decide whether each may be managed)."""

    @staticmethod
    def _queries(client) -> int:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("accounts:people", args=["acme"])).status_code == 200
        return len(captured.captured_queries)

    def test_the_count_does_not_grow_with_the_people(self, client_for, users,
                                                     workspace) -> None:
        ada = client_for("ada")
        elsewhere = workspace_create(actor=Actor.system("t"), slug="globex", name="Globex")

        def add(numbers: range) -> None:
            for n in numbers:
                user = User.objects.create_user(f"extra{n}")
                role_grant(actor=Actor.system("t"), workspace=workspace, user=user,
                           role="viewer")
                if n % 3 == 0:
                    role_grant(actor=Actor.system("t"), workspace=elsewhere, user=user,
                               role="viewer")

        add(range(2))
        before = self._queries(ada)
        add(range(2, 14))
        assert self._queries(ada) == before
        page = ada.get(reverse("accounts:people", args=["acme"])).content.decode()
        # Those also in Globex may not be managed by Acme's admin; the others may.
        row = {m.group(1): m.group(2) for m in re.finditer(
            r'<tr data-username="([^"]+)">(.*?)</tr>', page, re.S)}
        assert "Deactivate extra1" in row["extra1"]
        assert "Deactivate extra0" not in row["extra0"]
        assert "also in workspaces you do not administer" in row["extra0"]
