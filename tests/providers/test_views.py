"""Provider configuration pages: operators manage, everyone with a role sees; secrets stay put."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.memory.services import FreezeSubject, memory_freeze_place
from memadmin.providers.models import HealthCheck, ProviderConfig, ProviderHealth
from memadmin.providers.services import provider_config_create

pytestmark = pytest.mark.django_db
SECRET = "s3cr3t-remote-credential-value"


@pytest.fixture
def remote(workspace):
    return provider_config_create(actor=Actor.system("t"), workspace=workspace, slug="remote",
                                  name="Remote", kind="http", credential=SECRET,
                                  url="http://127.0.0.1:9/oc-memory", health_deadline_ms=200)


class TestList:
    @pytest.mark.parametrize("name", ["vic", "olga", "nora"])
    def test_everyone_with_a_role_sees_providers_but_never_the_credential(
            self, client_for, remote, name) -> None:
        page = client_for(name).get(reverse("providers:list", args=["acme"])).content.decode()
        assert "Remote" in page and SECRET not in page

    def test_a_stranger_gets_404(self, client_for) -> None:
        assert client_for("mallory").get(
            reverse("providers:list", args=["acme"])).status_code == 404


class TestCreateAndEdit:
    def test_the_new_provider_form_polls_by_default(self, client_for) -> None:
        page = client_for("olga").get(reverse("providers:create", args=["acme"])).content.decode()
        assert re.search(r'<input[^>]*name="probed"[^>]*checked', page)

    def test_an_operator_creates_a_remote_provider(self, client_for) -> None:
        response = client_for("olga").post(reverse("providers:create", args=["acme"]), {
            "name": "Vector store", "slug": "vectors", "kind": "http",
            "url": "https://memory.example.com/oc-memory", "credential": SECRET,
            "request_deadline_ms": "10000", "enabled": "on"})
        assert response.status_code == 302
        config = ProviderConfig.objects.get(slug="vectors")
        assert (config.credential, config.health_deadline_ms, config.probed) == (SECRET, 1000,
                                                                                 False)
        assert SECRET not in str(list(AuditEvent.objects.values("data")))

    def test_the_edit_form_never_renders_the_credential_and_keeps_it_when_left_empty(
            self, client_for, remote) -> None:
        url = reverse("providers:edit", args=["acme", "remote"])
        olga = client_for("olga")
        assert SECRET not in olga.get(url).content.decode()
        olga.post(url, {"name": "Renamed", "url": remote.url, "credential": "",
                        "health_deadline_ms": "300", "request_deadline_ms": "5000",
                        "enabled": "on", "probed": "on"})
        remote.refresh_from_db()
        assert (remote.name, remote.credential, remote.health_deadline_ms) == ("Renamed", SECRET,
                                                                               300)

    def test_the_credential_can_be_replaced_or_cleared(self, client_for, remote) -> None:
        url = reverse("providers:edit", args=["acme", "remote"])
        base = {"name": "Remote", "url": remote.url, "request_deadline_ms": "5000",
                "enabled": "on"}
        client_for("olga").post(url, {**base, "credential": "new-one"})
        remote.refresh_from_db()
        assert remote.credential == "new-one"
        client_for("olga").post(url, {**base, "credential": "", "clear_credential": "on"})
        remote.refresh_from_db()
        assert remote.credential == ""

    @pytest.mark.parametrize(("field", "value", "message"), [
        ("url", "", "needs its endpoint URL"),
        ("url", "https://user:pw@x.example.com/m", "credential field"),
        ("request_deadline_ms", "5", "greater than or equal to 100"),
        ("name", "x" * 10_000, "at most 200 characters"),
        ("name", "bad\x00name", "Null characters are not allowed"),
    ])
    def test_bad_input_is_explained_and_nothing_is_saved(self, client_for, field, value,
                                                         message) -> None:
        data = {"name": "V", "slug": "v", "kind": "http", "url": "https://m.example.com/m",
                "request_deadline_ms": "10000", field: value}
        response = client_for("olga").post(reverse("providers:create", args=["acme"]), data)
        assert response.status_code == 400
        assert message in response.content.decode()
        assert not ProviderConfig.objects.filter(slug="v").exists()

    @pytest.mark.parametrize("name", ["vic", "carl", "alice"])
    def test_other_roles_may_not_manage_providers(self, client_for, remote, name) -> None:
        client = client_for(name)
        assert client.get(reverse("providers:create", args=["acme"])).status_code == 403
        assert client.post(reverse("providers:delete", args=["acme", "remote"])).status_code == 403


class TestDelete:
    def test_deleting_a_remote_provider_says_remote_data_stays(self, client_for, remote) -> None:
        response = client_for("olga").post(reverse("providers:delete", args=["acme", "remote"]),
                                           follow=True)
        assert "remote data was not touched" in response.content.decode()
        assert not ProviderConfig.objects.filter(pk=remote.pk).exists()

    def test_it_is_refused_while_something_is_on_legal_hold(self, client_for, resource,
                                                           namespace, local_config) -> None:
        memory_freeze_place(actor=Actor.system("carl"), subject=FreezeSubject(resource, namespace),
                            kind="legal_hold", reason="case 7")
        response = client_for("olga").post(
            reverse("providers:delete", args=["acme", "builtin"]), follow=True)
        assert "frozen or on legal hold" in response.content.decode()
        assert ProviderConfig.objects.filter(pk=local_config.pk).exists()

    def test_get_asks_for_confirmation_and_deletes_nothing(self, client_for, remote) -> None:
        page = client_for("olga").get(reverse("providers:delete", args=["acme", "remote"]))
        assert page.status_code == 200
        html = page.content.decode()
        assert "Delete provider Remote?" in html and "not deleted" in html
        assert ProviderConfig.objects.filter(pk=remote.pk).exists()

    def test_the_confirmation_names_the_resources_and_namespaces_that_block_it(
            self, client_for, resource, namespace, other_namespace) -> None:
        html = client_for("olga").get(
            reverse("providers:delete", args=["acme", "builtin"])).content.decode()
        assert "knowledge" in html and "2 namespaces" in html
        assert "cannot be deleted yet" in html
        assert 'class="danger">Delete provider' not in html
        assert "Delete provider Built-in?" in html


class TestConnectionTest:
    def test_a_reachable_built_in_provider_reports_ok(self, client_for, local_config) -> None:
        response = client_for("olga").post(reverse("providers:test", args=["acme", "builtin"]),
                                           headers={"HX-Request": "true"})
        assert response.status_code == 200
        assert b"state-ok" in response.content and b"<html" not in response.content
        assert AuditEvent.objects.filter(action="provider.test").exists()

    def test_its_result_is_recorded_as_a_check_and_moves_the_state(
            self, client_for, workspace) -> None:
        # Nothing listens on port 9 of loopback: the test fails, and the panel must say so.
        config = provider_config_create(actor=Actor.system("test"), workspace=workspace,
                                        slug="gone", name="Gone", kind="http",
                                        url="http://127.0.0.1:9/oc-memory", probed=True)
        client_for("olga").post(reverse("providers:test", args=["acme", "gone"]))
        check = HealthCheck.objects.get(provider=config)
        assert not check.ok and "refused" in check.message
        assert ProviderHealth.objects.get(provider=config).state == "degraded"
        assert "refused" in client_for("vic").get(
            reverse("providers:health", args=["acme"])).content.decode()

    def test_viewers_may_not_run_checks(self, client_for, local_config) -> None:
        assert client_for("vic").post(
            reverse("providers:test", args=["acme", "builtin"])).status_code == 403
