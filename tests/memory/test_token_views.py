"""Agent tokens in the UI: owners mint for their namespaces, see the secret once, revoke."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memadmin.lib.keys import secret_digest
from memadmin.memory.models import AgentToken

pytestmark = pytest.mark.django_db


def mint(client, namespaces, access="read-write"):
    return client.post(reverse("memory:token_mint", args=["acme"]), {
        "name": "support bot", "access": access, "namespaces": [str(n.pk) for n in namespaces]})


def test_an_owner_mints_a_token_and_sees_the_secret_once(client_for, namespace) -> None:
    nora = client_for("nora")
    response = mint(nora, [namespace])
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    secret = response.context["secret"]
    token = AgentToken.objects.get()
    assert token.secret_hash == secret_digest(secret)
    assert list(token.namespaces.all()) == [namespace]
    page = nora.get(reverse("memory:tokens", args=["acme"])).content.decode()
    assert secret not in page and token.prefix in page


def test_an_owner_cannot_mint_for_a_namespace_they_do_not_own(client_for,
                                                              other_namespace) -> None:
    response = mint(client_for("nora"), [other_namespace])
    assert response.status_code == 400
    assert not AgentToken.objects.exists()


def test_viewers_cannot_mint(client_for, namespace) -> None:
    assert mint(client_for("vic"), [namespace]).status_code == 403


def test_revoking_stops_the_token_and_strangers_get_404(client_for, namespace) -> None:
    mint(client_for("nora"), [namespace])
    token = AgentToken.objects.get()
    url = reverse("memory:token_revoke", args=["acme", token.pk])
    assert client_for("mallory").post(url).status_code == 404
    assert client_for("vic").post(url).status_code == 404
    assert client_for("nora").post(url).status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_a_namespace_owner_does_not_see_tokens_reaching_beyond_their_namespaces(
        client_for, namespace, other_namespace) -> None:
    mint(client_for("alice"), [namespace, other_namespace])
    page = client_for("nora").get(reverse("memory:tokens", args=["acme"]))
    assert page.context["tokens"] == []
    assert len(client_for("ada").get(reverse("memory:tokens", args=["acme"]))
               .context["tokens"]) == 1


def test_minting_rejects_get_and_bad_input(client_for, namespace) -> None:
    nora = client_for("nora")
    assert nora.get(reverse("memory:token_mint", args=["acme"])).status_code == 405
    response = nora.post(reverse("memory:token_mint", args=["acme"]),
                         {"name": "x" * 10_000, "access": "root", "namespaces": ["nope"]})
    assert response.status_code == 400
    assert not AgentToken.objects.exists()


def test_a_workspace_admin_mints_for_any_namespace(client_for, namespace,
                                                   other_namespace) -> None:
    # Admins have every owner power (README "Roles"), without holding the owner role.
    response = mint(client_for("ada"), [namespace, other_namespace])
    assert response.status_code == 200
    assert set(AgentToken.objects.get().namespaces.all()) == {namespace, other_namespace}
