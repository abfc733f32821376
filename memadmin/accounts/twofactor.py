"""Two-factor authentication (django-otp: TOTP devices, static recovery codes) and the
account-wide login throttle.

``MEMADMIN_2FA_REQUIRED``: ``all`` (everyone), ``privileged`` (superusers and anyone with the
admin or compliance role in some workspace) or ``off``. A user with a confirmed device is always
asked for a code, whatever the setting. With ``DEBUG`` the demo users may skip it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice

PRIVILEGED_ROLES = ("admin", "compliance")
MODES = ("all", "privileged", "off")


def required_for(user: Any) -> bool:
    """Whether ``user`` must have a second factor (the setting; the demo users under DEBUG)."""
    mode = settings.MEMADMIN_2FA_REQUIRED
    if mode == "off":
        return False
    if settings.DEBUG:
        from memadmin.demo.seed import DEMO_USERS

        if user.get_username() in DEMO_USERS:
            return False
    if mode == "all":
        return True
    from memadmin.workspaces import access

    return access.has_role_anywhere(user, PRIVILEGED_ROLES)


#: Session key: whether the user had a confirmed authenticator when this session logged in
#: (so pages of an unverified session cost no query to find out).
ENROLLED = "_memadmin_2fa_enrolled"


def _enrolled(user: Any) -> bool:
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def note_enrolment(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """``user_logged_in`` receiver."""
    if request is not None and hasattr(request, "session"):
        request.session[ENROLLED] = _enrolled(user)


def _exempt(path: str) -> bool:
    prefixes = [reverse("accounts:2fa_verify"), reverse("accounts:2fa_setup"),
                reverse("logout"), reverse("login"), "/" + settings.STATIC_URL.lstrip("/"),
                "/" + settings.MEMADMIN_ENDPOINT_PATH]
    return any(path.startswith(prefix) for prefix in prefixes) or path.endswith("/metrics")


class TwoFactorMiddleware:
    """After django-otp's OTPMiddleware: a logged-in user who has a device but has not used it
    in this session goes to the code page; one who must enrol but has none goes to enrolment.
    htmx requests are sent there with ``HX-Redirect``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if (user is not None and user.is_authenticated and not user.is_verified()
                and not _exempt(request.path)):
            enrolled = request.session.get(ENROLLED)
            if enrolled is None:  # a session from before this check existed
                enrolled = request.session[ENROLLED] = _enrolled(user)
            if enrolled:
                return self._send(request, "accounts:2fa_verify")
            if required_for(user):
                return self._send(request, "accounts:2fa_setup")
        return self.get_response(request)

    @staticmethod
    def _send(request: HttpRequest, name: str) -> HttpResponse:
        url = reverse(name)
        if request.method == "GET":
            url += "?" + urlencode({"next": request.get_full_path()})
        if getattr(request, "htmx", False):
            response = HttpResponse(status=204)
            response["HX-Redirect"] = url
            return response
        return redirect(url)


class AccountThrottleBackend:
    """An account-wide login limit beside django-axes' per (username, address) one: after
    ``MEMADMIN_LOGIN_ACCOUNT_FAILURE_LIMIT`` failures for a username from any addresses within
    ``MEMADMIN_LOGIN_ACCOUNT_WINDOW_MINUTES``, every login for it is refused until the window
    has passed them (a slow spray from many addresses). Counted from axes' failure log; unknown
    usernames are counted alike, so the answer tells nothing about who exists."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     **kwargs: Any) -> None:
        from axes.models import AccessFailureLog

        if not username:
            return None
        window = dt.timedelta(minutes=settings.MEMADMIN_LOGIN_ACCOUNT_WINDOW_MINUTES)
        since = timezone.now() - window
        failures = AccessFailureLog.objects.filter(username=username,
                                                   attempt_time__gte=since).count()
        if failures >= settings.MEMADMIN_LOGIN_ACCOUNT_FAILURE_LIMIT:
            raise PermissionDenied("too many failed logins for this account")
        return None
    # No get_user: this backend never logs anyone in (and force_login must not pick it).
