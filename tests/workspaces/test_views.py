"""Login, the workspace list and a workspace's home."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from memadmin.audit.services import Actor
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from memadmin.workspaces.services import namespace_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(db: None) -> Client:
    user = User.objects.create_superuser("root", "root@example.com", "correct horse battery")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def mallory_client(db: None) -> Client:
    user = User.objects.create_user("mallory", "m@example.com", "correct horse battery")
    client = Client()
    client.force_login(user)
    return client


class TestLogin:
    def test_it_renders_with_a_strict_csp(self, client: Client) -> None:
        response = client.get(reverse("login"))
        assert response.status_code == 200
        csp = response.headers["Content-Security-Policy"]
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert "object-src 'none'" in csp and "frame-ancestors 'none'" in csp

    def test_pages_need_a_login(self, client: Client, workspace) -> None:
        for url in (reverse("workspaces:list"), reverse("workspaces:home", args=["acme"])):
            response = client.get(url)
            assert response.status_code == 302
            assert response.headers["Location"].startswith(reverse("login"))

    def test_a_wrong_password_is_refused_with_a_message(self, client: Client) -> None:
        User.objects.create_user("vic", "v@example.com", "correct horse battery")
        response = client.post(reverse("login"), {"username": "vic", "password": "nope"})
        assert response.status_code == 200
        assert b"Please enter a correct username and password" in response.content


class TestWorkspaceList:
    def test_it_shows_every_workspace_to_a_superuser_with_counts(
        self, admin_client: Client, namespace, other_workspace, local_config,
        django_assert_max_num_queries,
    ) -> None:
        provider_for(local_config).retain("pins", "", "hello", "replace", operation_id="o1",
                                          scope=c.Scope.of(namespace.partition_key), deadline=5)
        with django_assert_max_num_queries(4):
            response = admin_client.get(reverse("workspaces:list"))
        page = response.content.decode()
        assert "Acme" in page and "Globex" in page
        rows = [w for w in response.context["workspaces"] if w.slug == "acme"]
        assert (rows[0].provider_count, rows[0].namespace_count, rows[0].item_count) == (1, 1, 1)

    def test_a_user_without_roles_sees_none(self, mallory_client: Client, workspace) -> None:
        response = mallory_client.get(reverse("workspaces:list"))
        assert "Acme" not in response.content.decode()
        assert response.context["workspaces"] == []

    def test_it_rejects_post(self, admin_client: Client) -> None:
        assert admin_client.post(reverse("workspaces:list")).status_code == 405


class TestWorkspaceHome:
    def test_it_shows_providers_resources_namespaces_and_counts(
        self, admin_client: Client, namespace, local_config,
    ) -> None:
        provider_for(local_config).retain("pins", "", "hello", "replace", operation_id="o1",
                                          scope=c.Scope.of(namespace.partition_key), deadline=5)
        page = admin_client.get(reverse("workspaces:home", args=["acme"])).content.decode()
        assert "Built-in" in page and "knowledge" in page and "alice" in page
        assert namespace.partition_key in page

    def test_its_query_count_does_not_grow_with_namespaces(
        self, admin_client: Client, resource, django_assert_num_queries,
        django_assert_max_num_queries,
    ) -> None:
        namespace_create(actor=Actor.system("t"), resource=resource, slug="one")
        # 16: the navigation's "to approve" badge of subject requests is one more query; 17: the
        # health panel reads the maintenance windows (one query, whatever their number).
        with django_assert_max_num_queries(17) as few:
            admin_client.get(reverse("workspaces:home", args=["acme"]))
        for n in range(10):
            namespace_create(actor=Actor.system("t"), resource=resource, slug=f"ns{n}")
        with django_assert_num_queries(len(few.captured_queries)):
            admin_client.get(reverse("workspaces:home", args=["acme"]))

    def test_a_stranger_gets_404(self, mallory_client: Client, workspace) -> None:
        assert mallory_client.get(reverse("workspaces:home", args=["acme"])).status_code == 404

    def test_an_unknown_workspace_is_404(self, admin_client: Client) -> None:
        assert admin_client.get(reverse("workspaces:home", args=["nope"])).status_code == 404

    def test_descriptions_are_escaped(self, admin_client: Client, resource) -> None:
        from memadmin.workspaces.services import resource_update

        resource_update(actor=Actor.system("t"), resource=resource,
                        description='<script>alert(1)</script><img src=x onerror=alert(2)>')
        page = admin_client.get(reverse("workspaces:home", args=["acme"])).content.decode()
        assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
