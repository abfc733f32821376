"""The Markdown kind on the pages: configured through the provider form (a folder under
var/stores, never an absolute path), browsed and edited, with the freeze caveat shown."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memadmin.audit.services import Actor
from memadmin.providers.models import ProviderConfig
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.services import namespace_create, resource_create

pytestmark = pytest.mark.django_db


def create(client, **fields):
    return client.post(reverse("providers:create", args=["acme"]), {
        "name": "Agent files", "slug": "files", "kind": "markdown", "request_deadline_ms": "10000",
        "enabled": "on", **fields})


class TestProviderForm:
    def test_an_operator_configures_a_folder_under_var_stores(self, client_for, settings,
                                                              tmp_path) -> None:
        settings.MEMADMIN_STORES_DIR = tmp_path
        response = create(client_for("olga"), options='{"root": "team/agents", '
                                                      '"subject_marker": "Subject:"}')

        assert response.status_code == 302
        config = ProviderConfig.objects.get(slug="files")
        assert (config.kind, config.options, config.health_deadline_ms) == (
            "markdown", {"root": "team/agents", "subject_marker": "Subject:"}, 200)

    @pytest.mark.parametrize("options", [
        '{"root": "/etc"}', '{"root": "../outside"}', '{"root": "a/../../b"}', '{}',
        '{"root": ""}', '["root"]', "not json", '{"root": 5}'])
    def test_it_refuses_a_folder_outside_var_stores_with_a_form_error(self, client_for,
                                                                       options) -> None:
        response = create(client_for("olga"), options=options)

        assert response.status_code == 400
        assert not ProviderConfig.objects.filter(slug="files").exists()


class TestPages:
    @pytest.fixture
    def folder(self, workspace, settings, tmp_path):
        settings.MEMADMIN_STORES_DIR = tmp_path
        (tmp_path / "agents" / "billing-bot").mkdir(parents=True)
        (tmp_path / "agents" / "billing-bot" / "pins.md").write_text("<b>Refunds</b>: 30 days.")
        actor = Actor.system("test")
        config = provider_config_create(actor=actor, workspace=workspace, slug="files",
                                        name="Agent files", kind="markdown", probed=True,
                                        options={"root": "agents"})
        resource = resource_create(actor=actor, workspace=workspace, provider=config,
                                   slug="agent-files")
        namespace_create(actor=actor, resource=resource, slug="billing-bot")
        return tmp_path / "agents" / "billing-bot"

    def test_an_owner_browses_reads_and_edits_a_file(self, client_for, folder) -> None:
        alice = client_for("alice")
        items = alice.get(reverse("memory:items", args=["acme", "agent-files", "billing-bot"]))
        page = items.content.decode()
        assert items.status_code == 200
        assert "pins.md" in page
        assert "does not enforce it" in page
        assert str(folder) not in page

        url = reverse("memory:item", args=["acme", "agent-files", "billing-bot",
                                           "billing-bot:pins.md"])
        detail = alice.get(url).content.decode()
        assert "&lt;b&gt;Refunds&lt;/b&gt;: 30 days." in detail  # escaped, as any content
        assert "Agents write this Markdown memory folder directly" in detail

        response = alice.post(reverse("memory:item_edit", args=[
            "acme", "agent-files", "billing-bot", "billing-bot:pins.md"]),
            {"content": "Refunds: 30 days from delivery.", "expected_revision": "1",
             "mode": "replace"})
        assert response.status_code in (200, 302)
        assert (folder / "pins.md").read_text() == "Refunds: 30 days from delivery."

    def test_an_owner_of_another_namespace_cannot_read_it_and_a_stranger_gets_404(self, client_for,
                                                                      folder) -> None:
        url = reverse("memory:item", args=["acme", "agent-files", "billing-bot",
                                           "billing-bot:pins.md"])
        assert client_for("mallory").get(url).status_code == 404
        assert "Refunds" not in client_for("nora").get(url).content.decode()
