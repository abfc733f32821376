"""A provider's credential is bound to its URL's origin (scheme, host, port): a new origin
never receives the old credential."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.providers.models import ProviderConfig
from memadmin.providers.services import (
    origin_of,
    provider_config_create,
    provider_config_update,
)
from tests.lib.recorder import Recorder

pytestmark = pytest.mark.django_db
SECRET = "origin-bound-credential-0123456789"


@pytest.fixture
def servers():
    first, second = Recorder(), Recorder()
    yield first, second
    first.stop()
    second.stop()


@pytest.fixture
def remote(workspace, servers):
    return provider_config_create(actor=Actor.system("t"), workspace=workspace, slug="remote",
                                  name="Remote", kind="http", credential=SECRET,
                                  url=servers[0].url(), health_deadline_ms=2000, probed=True)


def _form(url: str, credential: str = "") -> dict[str, str]:
    return {"name": "Remote", "url": url, "credential": credential,
            "health_deadline_ms": "2000", "request_deadline_ms": "10000", "enabled": "on",
            "probed": "on"}


def test_a_new_origin_needs_the_credential_again(client_for, remote, servers) -> None:
    url = reverse("providers:edit", args=["acme", "remote"])

    response = client_for("olga").post(url, _form(servers[1].url()))

    assert response.status_code == 400
    assert "enter the credential again" in response.content.decode()
    remote.refresh_from_db()
    assert (remote.url, remote.credential) == (servers[0].url(), SECRET)


def test_test_connection_never_sends_the_old_credential_to_a_new_origin(
        client_for, remote, servers) -> None:
    olga = client_for("olga")
    provider_config_update(actor=Actor.system("t"), config=remote, url=servers[1].url())

    olga.post(reverse("providers:test", args=["acme", "remote"]))

    remote.refresh_from_db()
    assert remote.credential == ""
    assert len(servers[1].requests) == 1
    assert not any(SECRET in header for header in servers[1].authorizations())


def test_a_new_origin_with_a_new_credential_is_saved_and_audited_without_it(
        client_for, remote, servers) -> None:
    response = client_for("olga").post(reverse("providers:edit", args=["acme", "remote"]),
                                       _form(servers[1].url(), "new-" + SECRET))

    assert response.status_code == 302
    remote.refresh_from_db()
    assert (remote.url, remote.credential) == (servers[1].url(), "new-" + SECRET)
    event = AuditEvent.objects.filter(action="provider.update").latest("id")
    assert event.data["origin"] == {"from": origin_of(servers[0].url()),
                                    "to": origin_of(servers[1].url())}
    assert SECRET not in str(event.data)


def test_a_new_origin_may_drop_the_credential_explicitly(client_for, remote, servers) -> None:
    response = client_for("olga").post(reverse("providers:edit", args=["acme", "remote"]),
                                       {**_form(servers[1].url()), "clear_credential": "on"})

    assert response.status_code == 302
    remote.refresh_from_db()
    assert (remote.url, remote.credential) == (servers[1].url(), "")


def test_the_same_origin_keeps_the_credential(client_for, remote, servers) -> None:
    other_path = servers[0].url(path="/v2/oc-memory")

    response = client_for("olga").post(reverse("providers:edit", args=["acme", "remote"]),
                                       _form(other_path))

    assert response.status_code == 302
    remote.refresh_from_db()
    assert (remote.url, remote.credential) == (other_path, SECRET)


@pytest.mark.parametrize(("old", "new", "same"), [
    ("https://m.example.com/x", "https://m.example.com:443/y", True),
    ("https://m.example.com/x", "https://M.EXAMPLE.COM/x", True),
    ("https://m.example.com/x", "http://m.example.com/x", False),
    ("https://m.example.com/x", "https://m.example.com:8443/x", False),
    ("https://m.example.com/x", "https://n.example.com/x", False),
])
def test_the_origin_is_scheme_host_and_port(old, new, same) -> None:
    assert (origin_of(old) == origin_of(new)) is same


def test_the_service_clears_the_credential_on_a_new_origin(remote, servers) -> None:
    provider_config_update(actor=Actor.system("t"), config=remote, url=servers[1].url())

    assert ProviderConfig.objects.get(pk=remote.pk).credential == ""
    event = AuditEvent.objects.filter(action="provider.update").latest("id")
    assert event.data["credential_cleared"] is True
