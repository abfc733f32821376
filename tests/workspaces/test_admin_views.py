"""Workspace pages per role, and the administration views (members, resources, namespaces)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from memadmin.audit.models import AuditEvent
from memadmin.jobs.models import Job
from memadmin.workspaces import access
from memadmin.workspaces.models import Namespace, Resource

pytestmark = pytest.mark.django_db

NS = ("acme", "knowledge", "alice")
# (url name, args) of every state-changing workspace view, and the role that may use it.
MUTATING = [
    ("workspaces:member_add", ("acme",)),
    ("workspaces:member_roles", ("acme", "vic")),
    ("workspaces:owner_add", ("acme",)),
    ("workspaces:owner_remove", ("acme",)),
    ("workspaces:resource_delete", ("acme", "knowledge")),
    ("workspaces:namespace_delete", NS),
    ("workspaces:namespace_recount", NS),
    ("workspaces:credential_mint", ("acme",)),
    ("workspaces:alert_add", ("acme",)),
    ("workspaces:metrics_token_mint", ("acme",)),
]
FORMS = [
    ("workspaces:settings", ("acme",)),
    ("workspaces:resource_create", ("acme",)),
    ("workspaces:resource_edit", ("acme", "knowledge")),
    ("workspaces:namespace_create", ("acme", "knowledge")),
    ("workspaces:namespace_edit", NS),
]


class TestPagesPerRole:
    @pytest.mark.parametrize("name", ["ada", "olga", "alice", "nora", "carl", "vic", "root"])
    @pytest.mark.parametrize("url", [
        ("workspaces:home", ("acme",)), ("workspaces:resource", ("acme", "knowledge")),
        ("workspaces:namespace", NS), ("workspaces:namespace", ("acme", "knowledge", "bob")),
    ])
    def test_every_role_sees_the_workspace_pages(self, client_for, other_namespace, name,
                                                 url) -> None:
        assert client_for(name).get(reverse(url[0], args=url[1])).status_code == 200

    @pytest.mark.parametrize("url", [
        ("workspaces:home", ("acme",)), ("workspaces:resource", ("acme", "knowledge")),
        ("workspaces:namespace", NS), *FORMS, ("workspaces:members", ("acme",)),
    ])
    def test_a_stranger_gets_404_everywhere(self, client_for, url) -> None:
        assert client_for("mallory").get(reverse(url[0], args=url[1])).status_code == 404

    def test_the_list_shows_each_user_only_their_workspaces(self, client_for, users,
                                                           other_workspace) -> None:
        page = client_for("nora").get(reverse("workspaces:list")).content.decode()
        assert "Acme" in page and "Globex" not in page
        page = client_for("root").get(reverse("workspaces:list")).content.decode()
        assert "Acme" in page and "Globex" in page

    @pytest.mark.parametrize("url", [*FORMS, ("workspaces:members", ("acme",))])
    @pytest.mark.parametrize("name", ["olga", "alice", "carl", "vic", "nora"])
    def test_administration_pages_need_the_admin_role(self, client_for, name, url) -> None:
        assert client_for(name).get(reverse(url[0], args=url[1])).status_code == 403

    def test_admin_links_show_only_for_admins(self, client_for) -> None:
        settings_url = reverse("workspaces:settings", args=["acme"])
        assert settings_url in client_for("ada").get(
            reverse("workspaces:home", args=["acme"])).content.decode()
        assert settings_url not in client_for("vic").get(
            reverse("workspaces:home", args=["acme"])).content.decode()


class TestMutatingViews:
    @pytest.mark.parametrize("url", MUTATING)
    def test_they_reject_get(self, client_for, url) -> None:
        assert client_for("root").get(reverse(url[0], args=url[1])).status_code == 405

    @pytest.mark.parametrize("url", MUTATING + FORMS)
    def test_a_stranger_gets_404(self, client_for, url) -> None:
        assert client_for("mallory").post(reverse(url[0], args=url[1])).status_code == 404

    @pytest.mark.parametrize("url", MUTATING + FORMS)
    def test_a_viewer_gets_403(self, client_for, url) -> None:
        assert client_for("vic").post(reverse(url[0], args=url[1])).status_code == 403

    @pytest.mark.parametrize("url", MUTATING + FORMS)
    def test_anonymous_users_are_sent_to_log_in(self, client_for, url) -> None:
        response = client_for(None).post(reverse(url[0], args=url[1]))
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


class TestSettings:
    def test_the_page_has_a_plain_title_and_each_section_once(self, client_for) -> None:
        page = client_for("ada").get(reverse("workspaces:settings", args=["acme"]))
        html = page.content.decode()
        assert "<title>Settings · Acme · memadmin</title>" in html
        assert html.count('id="alerts-h"') == html.count('id="metrics-h"') == 1

    def test_an_admin_saves_settings_and_it_is_audited(self, client_for, workspace) -> None:
        response = client_for("ada").post(reverse("workspaces:settings", args=["acme"]), {
            "four_eyes_erasure": "", "subject_request_due_days": "21",
            "health_retention_days": "7"})
        assert response.status_code == 302
        workspace.refresh_from_db()
        # Switching four eyes off waits for a second admin (issue 14 finding 10).
        assert (workspace.four_eyes_erasure, workspace.subject_request_due_days) == (True, 21)
        assert AuditEvent.objects.filter(action="workspace.settings", actor_label="ada").exists()
        assert AuditEvent.objects.filter(action="workspace.settings.change_requested",
                                         actor_label="ada").exists()

    @pytest.mark.parametrize("days", ["0", "366", "abc", "1e9", "'; DROP TABLE", "\x00", ""])
    def test_bad_values_get_a_clear_error_and_change_nothing(self, client_for, workspace,
                                                             days: str) -> None:
        response = client_for("ada").post(reverse("workspaces:settings", args=["acme"]), {
            "subject_request_due_days": days, "health_retention_days": "7"})
        assert response.status_code == 400
        assert "errorlist" in response.content.decode()
        workspace.refresh_from_db()
        assert workspace.subject_request_due_days == 30


class TestMembers:
    def test_an_admin_adds_changes_and_removes_a_member(self, client_for, users,
                                                        workspace) -> None:
        ada = client_for("ada")
        ada.post(reverse("workspaces:member_add", args=["acme"]),
                 {"username": "mallory", "roles": ["viewer", "compliance"]})
        assert access.workspace_roles(users["mallory"], workspace) == {"viewer", "compliance"}
        users["mallory"].__dict__.pop("_memadmin_roles", None)

        ada.post(reverse("workspaces:member_roles", args=["acme", "mallory"]),
                 {"roles": ["operator"]})
        assert access.workspace_roles(users["mallory"], workspace) == {"operator"}
        users["mallory"].__dict__.pop("_memadmin_roles", None)

        # Unticking every role asks first: nothing changes until the confirmation is posted.
        asked = ada.post(reverse("workspaces:member_roles", args=["acme", "mallory"]), {})
        assert asked.status_code == 200
        assert "Remove mallory from Acme?" in asked.content.decode()
        assert access.workspace_roles(users["mallory"], workspace) == {"operator"}
        users["mallory"].__dict__.pop("_memadmin_roles", None)
        ada.post(reverse("workspaces:member_roles", args=["acme", "mallory"]),
                 {"confirm": "remove"})
        assert access.workspace_roles(users["mallory"], workspace) == frozenset()
        actions = list(AuditEvent.objects.filter(action__startswith="role.",
                                                 actor_label="ada").values_list("action",
                                                                                flat=True))
        assert actions.count("role.grant") == 3 and actions.count("role.revoke") == 3

    def test_adding_an_unknown_user_is_a_form_error(self, client_for) -> None:
        response = client_for("ada").post(reverse("workspaces:member_add", args=["acme"]),
                                          {"username": "nobody<script>", "roles": ["viewer"]})
        assert response.status_code == 400
        page = response.content.decode()
        assert "No active user has that username" in page and "<script>" not in page

    def test_an_admin_cannot_remove_their_own_admin_role(self, client_for, users,
                                                         workspace) -> None:
        client_for("ada").post(reverse("workspaces:member_roles", args=["acme", "ada"]),
                               {"roles": ["viewer"]})
        assert "admin" in access.workspace_roles(users["ada"], workspace)

    def test_namespace_owners_are_added_and_removed(self, client_for, users, workspace,
                                                    other_namespace) -> None:
        ada = client_for("ada")
        ada.post(reverse("workspaces:owner_add", args=["acme"]),
                 {"username": "vic", "namespace": str(other_namespace.pk)})
        assert access.owns_namespace(users["vic"], other_namespace)
        ada.post(reverse("workspaces:owner_remove", args=["acme"]),
                 {"username": "vic", "namespace": str(other_namespace.pk)})
        assert not access.owns_namespace(users["vic"], other_namespace)

    def test_a_namespace_of_another_workspace_cannot_be_granted(self, client_for,
                                                                other_workspace) -> None:
        from memadmin.audit.services import Actor
        from memadmin.providers.services import provider_config_create
        from memadmin.workspaces.services import namespace_create, resource_create

        system = Actor.system("t")
        config = provider_config_create(actor=system, workspace=other_workspace, slug="p",
                                        name="P", kind="local")
        foreign = namespace_create(actor=system, resource=resource_create(
            actor=system, workspace=other_workspace, provider=config, slug="r"), slug="x")
        response = client_for("ada").post(reverse("workspaces:owner_add", args=["acme"]),
                                          {"username": "vic", "namespace": str(foreign.pk)})
        assert response.status_code == 400


class TestResources:
    def test_an_admin_creates_a_resource_with_tools(self, client_for, local_config) -> None:
        tools = [{"name": "remember", "description": "Save a verified fact.", "access": "write",
                  "idempotent": False, "input": {"type": "object", "properties": {
                      "fact": {"type": "string", "maxLength": 2000}}, "required": ["fact"],
                      "additionalProperties": False}}]
        response = client_for("ada").post(reverse("workspaces:resource_create", args=["acme"]), {
            "slug": "facts", "provider": str(local_config.pk), "description": "Facts",
            "max_bytes": "4096", "item_max_bytes": "8192", "tools": json.dumps(tools)})
        assert response.status_code == 302
        assert Resource.objects.get(slug="facts").tools == tools

    @pytest.mark.parametrize(("tools", "message"), [
        ("not json", "Not valid JSON"),
        ('{"a": 1}', "tools must be a list"),
        ('[{"name": "Bad Name", "description": "d", "access": "write", "input": '
         '{"type": "object"}}]', "lowercase"),
        ('[{"name": "x", "description": "d", "access": "admin", "input": {"type": "object"}}]',
         "access must be read or write"),
        ('[{"name": "x", "description": "d", "access": "read", "input": {"type": "object", '
         '"properties": {"memory": {"type": "string"}}}}]', "reserved"),
        ('[{"name": "x", "description": "d", "access": "read", "input": {"type": "object", '
         '"properties": {"a": {"$ref": "#/x"}}}}]', "$ref"),
    ])
    def test_bad_tool_declarations_are_explained(self, client_for, local_config, tools: str,
                                                 message: str) -> None:
        response = client_for("ada").post(reverse("workspaces:resource_create", args=["acme"]), {
            "slug": "facts", "provider": str(local_config.pk), "max_bytes": "4096",
            "item_max_bytes": "8192", "tools": tools})
        assert response.status_code == 400
        assert message in response.content.decode()
        assert not Resource.objects.filter(slug="facts").exists()

    def test_a_provider_of_another_workspace_is_not_offered(self, client_for,
                                                            other_workspace) -> None:
        from memadmin.audit.services import Actor
        from memadmin.providers.services import provider_config_create

        foreign = provider_config_create(actor=Actor.system("t"), workspace=other_workspace,
                                         slug="p", name="P", kind="local")
        response = client_for("ada").post(reverse("workspaces:resource_create", args=["acme"]), {
            "slug": "x", "provider": str(foreign.pk), "max_bytes": "10",
            "item_max_bytes": "10"})
        assert response.status_code == 400

    def test_a_resource_with_namespaces_is_not_deleted(self, client_for, resource) -> None:
        response = client_for("ada").post(reverse("workspaces:resource_delete",
                                                  args=["acme", "knowledge"]), follow=True)
        assert "delete the resource" in response.content.decode()
        assert Resource.objects.filter(pk=resource.pk).exists()


class TestNamespaces:
    def test_an_admin_creates_edits_and_deletes_a_namespace(self, client_for, resource) -> None:
        ada = client_for("ada")
        response = ada.post(reverse("workspaces:namespace_create", args=["acme", "knowledge"]),
                            {"slug": "team_emea", "description": "EMEA", "quota_bytes": ""})
        assert response.status_code == 302
        ns = Namespace.objects.get(slug="team_emea")
        ada.post(reverse("workspaces:namespace_edit", args=["acme", "knowledge", "team_emea"]),
                 {"description": "Europe", "quota_bytes": "1000000"})
        ns.refresh_from_db()
        assert (ns.description, ns.quota_bytes) == ("Europe", 1_000_000)
        ada.post(reverse("workspaces:namespace_delete", args=["acme", "knowledge", "team_emea"]))
        assert not Namespace.objects.filter(pk=ns.pk).exists()

    @pytest.mark.parametrize("slug", ["has space", "x" * 129, "émoji😀", "a\x00b", "../x"])
    def test_bad_slugs_are_refused_with_a_message(self, client_for, resource, slug) -> None:
        response = client_for("ada").post(
            reverse("workspaces:namespace_create", args=["acme", "knowledge"]), {"slug": slug})
        assert response.status_code == 400
        assert not Namespace.objects.filter(resource=resource).exclude(
            slug__in=["alice", "bob"]).exists()

    def test_a_built_in_namespace_cannot_choose_its_partition_key(self, client_for,
                                                                  resource) -> None:
        response = client_for("ada").post(
            reverse("workspaces:namespace_create", args=["acme", "knowledge"]),
            {"slug": "x", "partition_key": "chosen"})
        assert response.status_code == 400

    def test_an_owner_starts_a_recount_and_follows_it(self, client_for, namespace) -> None:
        nora = client_for("nora")
        response = nora.post(reverse("workspaces:namespace_recount", args=NS))
        job = Job.objects.get()
        assert response["Location"] == reverse("jobs:detail", args=[job.pk])

        page = nora.get(response["Location"])
        assert page.status_code == 200 and "Recount a namespace" in page.content.decode()
        fragment = nora.get(response["Location"], headers={"HX-Request": "true"})
        assert b"<html" not in fragment.content and b'id="job-progress"' in fragment.content
        assert b'hx-trigger="every 2s"' in fragment.content

        # Others do not see someone else's job, except admins.
        assert client_for("vic").get(response["Location"]).status_code == 404
        assert client_for("ada").get(response["Location"]).status_code == 200

    def test_a_finished_job_stops_polling(self, client_for, namespace) -> None:
        from memadmin.jobs.runner import run_job

        nora = client_for("nora")
        nora.post(reverse("workspaces:namespace_recount", args=NS))
        job = Job.objects.get()
        run_job(str(job.pk))
        fragment = nora.get(reverse("jobs:detail", args=[job.pk]),
                            headers={"HX-Request": "true"})
        assert b"succeeded" in fragment.content and b"hx-trigger" not in fragment.content

    def test_an_owner_of_another_namespace_cannot_recount_this_one(self, client_for,
                                                                   other_namespace) -> None:
        response = client_for("nora").post(
            reverse("workspaces:namespace_recount", args=["acme", "knowledge", "bob"]))
        assert response.status_code == 403


class TestAdminCredentials:
    def test_an_admin_mints_sees_once_and_revokes(self, client_for, workspace) -> None:
        from memadmin.lib.keys import secret_digest
        from memadmin.workspaces.models import AdminCredential

        ada = client_for("ada")
        response = ada.post(reverse("workspaces:credential_mint", args=["acme"]),
                            {"name": "central"})
        secret = response.context["secret"]
        credential = AdminCredential.objects.get()
        assert credential.secret_hash == secret_digest(secret)
        assert secret not in ada.get(reverse("workspaces:settings",
                                             args=["acme"])).content.decode()
        ada.post(reverse("workspaces:credential_revoke", args=["acme", credential.pk]))
        credential.refresh_from_db()
        assert credential.revoked_at is not None

    @pytest.mark.parametrize("name", ["olga", "carl", "vic"])
    def test_only_admins_may_mint(self, client_for, name) -> None:
        assert client_for(name).post(reverse("workspaces:credential_mint", args=["acme"]),
                                     {"name": "x"}).status_code == 403


class TestAlertTargets:
    def test_an_admin_adds_and_removes_a_webhook(self, client_for, workspace) -> None:
        from memadmin.workspaces.models import AlertTarget

        ada = client_for("ada")
        ada.post(reverse("workspaces:alert_add", args=["acme"]),
                 {"kind": "webhook", "target": "https://hooks.example.com/memadmin"})
        alert = AlertTarget.objects.get()
        ada.post(reverse("workspaces:alert_remove", args=["acme", alert.pk]))
        assert not AlertTarget.objects.exists()

    @pytest.mark.parametrize(("kind", "target"), [
        ("webhook", "javascript:alert(1)"), ("webhook", "not a url"), ("email", "nobody"),
        ("sms", "+123"), ("webhook", "https://x.example.com/" + "a" * 1100)])
    def test_bad_targets_are_explained(self, client_for, kind, target) -> None:
        from memadmin.workspaces.models import AlertTarget

        response = client_for("ada").post(reverse("workspaces:alert_add", args=["acme"]),
                                          {"kind": kind, "target": target})
        assert response.status_code == 400
        assert "errorlist" in response.content.decode()
        assert not AlertTarget.objects.exists()
