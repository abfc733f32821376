"""Single sign-on through OpenID Connect (mozilla-django-oidc), optional.

Turned on by ``MEMADMIN_OIDC_CLIENT_ID`` (see README "Configuration"). memadmin stays the
place where roles are given: a person who signs in through the identity provider is matched to
an existing account by verified e-mail address (a new account is made only with
``MEMADMIN_OIDC_CREATE_USERS``, and it has no role until an admin grants one). Two-factor rules
apply after sign-in as after a password.

Every call to the identity provider (token, user info, signing keys) goes through memadmin's
outbound policy (``memadmin.lib.outbound``) instead of the library's own ``requests`` calls, and
any failure of the provider or of the token ends as a refused sign-in, never a 500.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
import jwt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.encoding import smart_str
from django.views.decorators.http import require_GET
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from memadmin.lib import outbound

logger = logging.getLogger(__name__)
TIMEOUT = 10.0


class MemadminOIDCBackend(OIDCAuthenticationBackend):
    def _get(self, url: str, **kwargs: Any) -> httpx.Response:
        with outbound.client(timeout=TIMEOUT) as client:
            response = client.get(url, **kwargs)
        response.raise_for_status()
        return response

    def retrieve_matching_jwk(self, token: str) -> Any:
        jwks = self._get(self.OIDC_OP_JWKS_ENDPOINT).json()
        header = jwt.get_unverified_header(token)
        for jwk in jwks.get("keys", []):
            if jwk.get("kid") != smart_str(header.get("kid")):
                continue
            if "alg" in jwk and jwk["alg"] != smart_str(header.get("alg")):
                continue
            return jwt.PyJWK(jwk)
        raise SuspiciousOperation("no signing key of the identity provider matches the token")

    def get_token(self, payload: dict[str, Any]) -> Any:
        with outbound.client(timeout=TIMEOUT) as client:
            response = client.post(self.OIDC_OP_TOKEN_ENDPOINT, data=payload)
        if response.status_code != 200:
            raise SuspiciousOperation(f"the identity provider refused the code "
                                      f"({response.status_code})")
        return response.json()

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        response = self._get(self.OIDC_OP_USER_ENDPOINT,
                             headers={"Authorization": f"Bearer {access_token}"})
        if response.headers.get("content-type", "").lower().startswith("application/jwt"):
            return self.verify_token(response.text)
        return response.json()

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        # An address the provider says it has not verified matches no account.
        return bool(claims.get("email")) and claims.get("email_verified", True) is not False

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        return get_user_model().objects.filter(email__iexact=claims.get("email", ""),
                                               is_active=True)

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        if not settings.MEMADMIN_OIDC_ENABLED or request is None or "code" not in request.GET:
            return None  # a password login: not ours
        try:
            return super().authenticate(request, **kwargs)
        except (httpx.HTTPError, SuspiciousOperation, jwt.PyJWTError, ValueError,
                KeyError) as exc:
            logger.warning("single sign-on refused: %s", type(exc).__name__)
            return None


class LoginView(auth_views.LoginView):
    """Django's login page, offering single sign-on when it is configured."""

    template_name = "accounts/login.html"
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs),
                "sso_enabled": settings.MEMADMIN_OIDC_ENABLED,
                "sso_failed": self.request.GET.get("sso") == "failed"}


def _enabled() -> None:
    if not settings.MEMADMIN_OIDC_ENABLED:
        raise Http404("single sign-on is not configured")


@require_GET
def start(request: HttpRequest) -> HttpResponse:
    """Send the browser to the identity provider (state and nonce kept in the session)."""
    _enabled()
    return OIDCAuthenticationRequestView.as_view()(request)


@require_GET
def callback(request: HttpRequest) -> HttpResponse:
    """The identity provider sends the browser back here with a code."""
    _enabled()
    return OIDCAuthenticationCallbackView.as_view()(request)
