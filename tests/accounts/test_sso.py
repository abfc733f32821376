"""Single sign-on through OpenID Connect, against a small identity provider of our own on
loopback (authorization code flow, RS256 id tokens, JWKS, user info)."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from django.urls import reverse

from tests.lib.recorder import QuietHandler, serve_in_thread

pytestmark = pytest.mark.django_db

CLIENT_ID, CLIENT_SECRET = "memadmin", "provider-shared-secret"


class Provider:
    """An OIDC provider: one RSA key, codes kept in memory, a configurable user."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.codes: dict[str, dict[str, Any]] = {}
        self.claims: dict[str, Any] = {"sub": "u-1", "email": "olga@example.com",
                                       "email_verified": True}
        self.token_status = 200
        provider = self

        class Handler(QuietHandler):
            def _send(self, status: int, body: dict[str, Any] | None = None,
                      location: str | None = None) -> None:
                data = json.dumps(body or {}).encode()
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                url = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/authorize":
                    code = secrets.token_urlsafe(12)
                    provider.codes[code] = {"nonce": query.get("nonce"),
                                            "redirect_uri": query["redirect_uri"]}
                    self._send(302, location=query["redirect_uri"] + "?" + urlencode(
                        {"code": code, "state": query["state"]}))
                elif url.path == "/jwks":
                    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(provider.key.public_key()))
                    self._send(200, {"keys": [{**jwk, "kid": "k1", "alg": "RS256",
                                               "use": "sig"}]})
                elif url.path == "/userinfo":
                    ok = self.headers.get("Authorization") == "Bearer access-1"
                    self._send(200 if ok else 401, provider.claims if ok else {})
                else:
                    self._send(404)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                grant = provider.codes.pop(form.get("code", ""), None)
                if (provider.token_status != 200 or grant is None
                        or form.get("client_secret") != CLIENT_SECRET
                        or form.get("redirect_uri") != grant["redirect_uri"]):
                    self._send(provider.token_status if provider.token_status != 200 else 400,
                               {"error": "invalid_grant"})
                    return
                now = int(time.time())
                id_token = jwt.encode({"iss": provider.url, "sub": "u-1", "aud": CLIENT_ID,
                                       "iat": now, "exp": now + 300, "nonce": grant["nonce"],
                                       "email": provider.claims["email"]},
                                      provider.key, algorithm="RS256", headers={"kid": "k1"})
                self._send(200, {"access_token": "access-1", "token_type": "Bearer",
                                 "id_token": id_token, "expires_in": 300})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = serve_in_thread(self.server)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def provider(settings) -> Iterator[Provider]:
    started = Provider()
    settings.MEMADMIN_OIDC_ENABLED = True
    settings.OIDC_RP_CLIENT_ID, settings.OIDC_RP_CLIENT_SECRET = CLIENT_ID, CLIENT_SECRET
    settings.OIDC_OP_AUTHORIZATION_ENDPOINT = started.url + "/authorize"
    settings.OIDC_OP_TOKEN_ENDPOINT = started.url + "/token"
    settings.OIDC_OP_USER_ENDPOINT = started.url + "/userinfo"
    settings.OIDC_OP_JWKS_ENDPOINT = started.url + "/jwks"
    yield started
    started.stop()


def sign_in(client, provider: Provider) -> Any:
    """Start at memadmin, follow the provider's redirect, come back with its code."""
    start = client.get(reverse("accounts:sso_start"))
    assert start.status_code == 302 and start["Location"].startswith(provider.url + "/authorize")
    back = httpx.get(start["Location"], follow_redirects=False)
    callback = urlsplit(back.headers["Location"])
    return client.get(callback.path + "?" + callback.query)


def test_a_known_person_signs_in_with_the_identity_provider(provider, client, users) -> None:
    page = client.get(reverse("login")).content.decode()
    assert "Log in with single sign-on" in page

    answer = sign_in(client, provider)

    assert answer.status_code == 302 and answer["Location"] == reverse("workspaces:list")
    assert client.get(reverse("workspaces:list")).wsgi_request.user.username == "olga"


@pytest.mark.parametrize("claims", [{"email": "stranger@example.com", "email_verified": True},
                                    {"email": "olga@example.com", "email_verified": False}])
def test_an_unknown_or_unverified_address_is_refused(provider, client, users, claims) -> None:
    provider.claims = {"sub": "u-1", **claims}

    answer = sign_in(client, provider)

    assert answer["Location"] == "/accounts/login/?sso=failed"
    page = client.get(answer["Location"]).content.decode()
    assert "Single sign-on did not log you in" in page
    assert not client.get(reverse("workspaces:list")).wsgi_request.user.is_authenticated


def test_a_provider_error_or_a_forged_state_is_a_refusal_not_a_500(provider, client, users) -> None:
    provider.token_status = 503
    assert sign_in(client, provider)["Location"] == "/accounts/login/?sso=failed"
    provider.token_status = 200
    # A state this session never sent: the library refuses it as suspicious (a 400 page).
    forged = client.get(reverse("accounts:sso_callback") + "?code=x&state=forged")
    assert forged.status_code == 400
    assert not client.get(reverse("workspaces:list")).wsgi_request.user.is_authenticated


def test_the_token_endpoint_is_reached_through_the_outbound_policy(provider, client, users,
                                                                   settings) -> None:
    settings.MEMADMIN_OUTBOUND_ALLOW = []  # loopback is refused by default
    assert sign_in(client, provider)["Location"] == "/accounts/login/?sso=failed"
    assert not client.get(reverse("workspaces:list")).wsgi_request.user.is_authenticated


def test_without_configuration_there_is_no_sso(client, settings) -> None:
    settings.MEMADMIN_OIDC_ENABLED = False
    assert client.get(reverse("accounts:sso_start")).status_code == 404
    assert "single sign-on" not in client.get(reverse("login")).content.decode()
