"""The outbound policy (memadmin.lib.outbound): what memadmin may connect to, tested against
real loopback servers. The suite allow-lists loopback (tests/conftest.py); these tests set the
allow-list themselves."""

from __future__ import annotations

import ipaddress
import ssl

import httpx
import pytest
from django.urls import reverse

from memadmin.audit.services import Actor
from memadmin.lib import outbound
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import provider_for
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.models import AlertTarget
from tests.lib.recorder import Recorder


@pytest.fixture
def recorder():
    server = Recorder()
    yield server
    server.stop()


@pytest.fixture
def default_policy(settings):
    settings.MEMADMIN_OUTBOUND_ALLOW = []


@pytest.mark.parametrize(("address", "why"), [
    ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"), ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"), ("0.0.0.0", "unspecified"), ("::", "unspecified"),  # noqa: S104
    ("224.0.0.251", "multicast"), ("ff02::1", "multicast"), ("255.255.255.255", "reserved"),
])
def test_it_refuses_local_and_special_addresses_by_default(default_policy, address, why) -> None:
    ip = outbound._address(address)
    assert ip is not None

    reason = outbound.refusal(ip, scheme="https", host=address)

    assert reason is not None and why in reason


@pytest.mark.parametrize("address", ["10.1.2.3", "172.16.0.9", "192.168.1.20", "fd00::5",
                                     "100.64.0.1"])
def test_it_allows_the_private_ranges_self_hosted_stores_live_in(default_policy, address) -> None:
    assert outbound.refusal(ipaddress.ip_address(address), scheme="http", host=address) is None


def test_it_refuses_plain_http_to_a_public_address_but_not_https(default_policy) -> None:
    public = ipaddress.ip_address("93.184.216.34")

    assert "plain http" in (outbound.refusal(public, scheme="http", host="example.com") or "")
    assert outbound.refusal(public, scheme="https", host="example.com") is None


def test_an_allow_list_entry_lifts_the_address_rules_for_what_it_names(settings) -> None:
    settings.MEMADMIN_OUTBOUND_ALLOW = ["127.0.0.0/8", "metadata.internal", "*.corp.example"]
    public = ipaddress.ip_address("93.184.216.34")
    metadata = ipaddress.ip_address("169.254.169.254")

    assert outbound.refusal(ipaddress.ip_address("127.0.0.1"), scheme="http", host="x") is None
    assert outbound.refusal(metadata, scheme="http", host="metadata.internal") is None
    assert outbound.refusal(public, scheme="http", host="api.corp.example") is None
    assert outbound.refusal(metadata, scheme="http", host="other.internal") is not None


@pytest.mark.parametrize("url", ["ftp://files.example.com/x", "file:///etc/passwd",
                                 "gopher://127.0.0.1:70/"])
def test_it_accepts_only_http_and_https(default_policy, url) -> None:
    with pytest.raises(outbound.OutboundRefused, match="MEMADMIN_OUTBOUND_ALLOW"):
        outbound.check_url(url)


def test_a_bad_allow_list_entry_is_named() -> None:
    with pytest.raises(ValueError, match="neither a host name"):
        outbound.parse_allow(["10.0.0.0/8", "bad host!"])


def test_the_client_never_connects_to_a_refused_address(default_policy, recorder) -> None:
    with outbound.client(timeout=5) as client, pytest.raises(outbound.OutboundRefused,
                                                             match="loopback"):
        client.get(recorder.url())

    assert recorder.requests == []


def test_the_client_connects_under_an_explicit_allow_list_entry(settings, recorder) -> None:
    settings.MEMADMIN_OUTBOUND_ALLOW = ["127.0.0.1"]

    with outbound.client(timeout=5) as client:
        response = client.get(recorder.url())

    assert response.status_code == 200 and len(recorder.requests) == 1


def test_a_name_is_checked_by_the_addresses_it_resolves_to(settings, recorder) -> None:
    # "localhost" is not named in the allow-list: its address is, so the name passes by it.
    settings.MEMADMIN_OUTBOUND_ALLOW = []
    with outbound.client(timeout=5) as client, pytest.raises(outbound.OutboundRefused):
        client.get(recorder.url("localhost"))
    assert recorder.requests == []

    settings.MEMADMIN_OUTBOUND_ALLOW = ["127.0.0.1/32"]
    with outbound.client(timeout=5) as client:
        client.get(recorder.url("localhost"))
    # Connected to the checked address, with the original name as Host.
    assert recorder.requests[0]["headers"]["Host"] == f"localhost:{recorder.port}"


def test_the_checked_address_is_the_one_connected_to(settings, recorder, monkeypatch) -> None:
    """A resolver that answers differently on a second lookup (DNS rebinding) is asked once."""
    import socket

    settings.MEMADMIN_OUTBOUND_ALLOW = ["127.0.0.1/32"]
    answers = iter(["127.0.0.1", "169.254.169.254"])
    real = socket.getaddrinfo

    def rebinding(host, port, *args, **kwargs):
        if host == "rebind.test":
            return real(next(answers), port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    with outbound.client(timeout=5) as client:
        response = client.get(recorder.url("rebind.test"))

    assert response.status_code == 200 and len(recorder.requests) == 1
    assert next(answers) == "169.254.169.254"  # the second answer was never asked for


def test_redirects_are_never_followed(settings) -> None:
    settings.MEMADMIN_OUTBOUND_ALLOW = ["127.0.0.1"]
    target = Recorder()
    redirector = Recorder(lambda _h: (302, {"Location": target.url()}, b""))
    try:
        with outbound.client(timeout=5) as client:
            response = client.post(redirector.url(), content=b"{}")
        assert response.status_code == 302 and target.requests == []
    finally:
        target.stop()
        redirector.stop()


def test_environment_proxies_are_ignored(settings, recorder, monkeypatch) -> None:
    settings.MEMADMIN_OUTBOUND_ALLOW = ["127.0.0.1"]
    monkeypatch.setenv("HTTP_PROXY", "http://169.254.169.254:3128")
    monkeypatch.setenv("ALL_PROXY", "http://169.254.169.254:3128")

    with outbound.client(timeout=5) as client:
        assert client.get(recorder.url()).status_code == 200


def test_clients_share_one_verifying_tls_context() -> None:
    # Loading the CA bundle took ~15 ms of CPU a client, and a webhook delivery, an anchor or
    # an SSO call builds one each: the default context (verify on, certifi's bundle) is built
    # once per process. A client asking for something else gets its own.
    first, second = outbound.transport(), outbound.transport()
    custom = outbound.transport(verify=False)

    def context(transport: outbound.OutboundTransport) -> ssl.SSLContext:
        found = transport._pool._ssl_context
        assert found is not None
        return found

    assert context(first) is context(second)
    assert context(first).verify_mode == ssl.CERT_REQUIRED and context(first).check_hostname
    assert context(custom) is not context(first)
    assert context(custom).verify_mode == ssl.CERT_NONE


# -- the policy at every outgoing request memadmin makes -------------------------------------


@pytest.mark.django_db
class TestEveryPath:
    def test_the_provider_form_names_the_setting(self, default_policy, client_for) -> None:
        response = client_for("olga").post(reverse("providers:create", args=["acme"]), {
            "name": "Metadata", "slug": "meta", "kind": "http",
            "url": "http://169.254.169.254/latest", "request_deadline_ms": "10000",
            "enabled": "on"})

        assert response.status_code == 400
        assert "MEMADMIN_OUTBOUND_ALLOW" in response.content.decode()
        assert not ProviderConfig.objects.filter(slug="meta").exists()

    @pytest.mark.parametrize(("url", "error"), [
        ("http://localhost:5432/", "MEMADMIN_OUTBOUND_ALLOW"),
        ("http://[::1]/x", "MEMADMIN_OUTBOUND_ALLOW"),
        ("http://169.254.169.254/", "MEMADMIN_OUTBOUND_ALLOW"),
        ("ftp://files.example.com/", "Enter an http(s) URL")])
    def test_the_alert_form_refuses_what_the_policy_refuses(self, default_policy, client_for,
                                                            url, error) -> None:
        response = client_for("ada").post(reverse("workspaces:alert_add", args=["acme"]),
                                          {"kind": "webhook", "target": url})

        assert response.status_code == 400
        assert error in response.content.decode()
        assert not AlertTarget.objects.exists()

    def test_a_provider_saved_before_the_policy_is_not_contacted(
            self, settings, workspace, recorder) -> None:
        settings.MEMADMIN_OUTBOUND_ALLOW = ["127.0.0.1"]
        config = provider_config_create(actor=Actor.system("t"), workspace=workspace,
                                        slug="old", name="Old", kind="http", url=recorder.url(),
                                        credential="c" * 20, probed=True)
        settings.MEMADMIN_OUTBOUND_ALLOW = []

        status = provider_for(config).health(deadline=2)

        assert not status.ok and "MEMADMIN_OUTBOUND_ALLOW" in status.message
        assert recorder.requests == []

    def test_test_connection_is_no_port_scanner(self, default_policy, workspace, settings,
                                                recorder) -> None:
        messages = []
        for port in (recorder.port, 9, 5432):
            settings.MEMADMIN_OUTBOUND_ALLOW = ["127.0.0.1"]
            config = provider_config_create(
                actor=Actor.system("t"), workspace=workspace, slug=f"p{port}", name=f"P{port}",
                kind="http", url=f"http://127.0.0.1:{port}/oc-memory", probed=True)
            settings.MEMADMIN_OUTBOUND_ALLOW = []
            messages.append(provider_for(config).health(deadline=2).message)

        assert len(set(messages)) == 1 and recorder.requests == []

    def test_alert_webhooks_go_through_the_policy(self, default_policy, workspace,
                                                  recorder) -> None:
        from memadmin.providers.alerts import deliver

        alert = AlertTarget(workspace=workspace, kind="webhook", target=recorder.url())

        error = deliver(alert, {"provider": "x"})

        assert error is not None and "outbound policy" in error
        assert recorder.requests == []

    def test_alert_webhooks_reach_an_allow_listed_target(self, settings, workspace,
                                                         recorder) -> None:
        from memadmin.providers.alerts import deliver

        settings.MEMADMIN_OUTBOUND_ALLOW = ["127.0.0.1"]
        alert = AlertTarget(workspace=workspace, kind="webhook", target=recorder.url())

        assert deliver(alert, {"provider": "x"}) is None
        assert len(recorder.requests) == 1


def test_the_client_raises_an_httpx_error(default_policy) -> None:
    """Callers that catch httpx errors keep working: a refusal is an httpx.ConnectError."""
    assert issubclass(outbound.OutboundRefused, httpx.ConnectError)
