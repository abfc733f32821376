"""Idle and absolute session timeouts: the middleware that enforces them and the
``user_logged_in`` receiver that starts both clocks (connected in ``workspaces/apps.py``, the app
that owns users)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode
from django_htmx.http import HttpResponseClientRedirect

#: Session keys (seconds since the epoch). Plain floats: the session serializer is JSON.
LOGIN_AT = "_memadmin_login_at"
SEEN_AT = "_memadmin_seen_at"
#: The last-seen stamp is rewritten at most this often, so a busy user does not cost a session
#: write per request; the idle timeout is therefore exact to within this many seconds.
SEEN_RESOLUTION = 60


def start_session_clocks(sender: Any, request: HttpRequest | None, user: Any,
                         **kwargs: Any) -> None:
    """``user_logged_in`` receiver: both clocks start at login, in the session the login saves
    anyway, so the first page after it costs no extra write."""
    if request is not None and hasattr(request, "session"):
        request.session[LOGIN_AT] = request.session[SEEN_AT] = time.time()


class SessionTimeoutMiddleware:
    """Log a user out after ``MEMADMIN_SESSION_IDLE_SECONDS`` without a request, and in any case
    ``MEMADMIN_SESSION_MAX_SECONDS`` after they logged in; send them to the login page with a
    message (htmx requests get ``HX-Redirect``, so a fragment target never shows a login form).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            expired = self._check(request)
            if expired is not None:
                return expired
        return self.get_response(request)

    def _check(self, request: HttpRequest) -> HttpResponse | None:
        session = request.session
        now = time.time()
        login_at, seen_at = session.get(LOGIN_AT), session.get(SEEN_AT)
        if not isinstance(login_at, int | float) or not isinstance(seen_at, int | float):
            # A session from before these stamps existed (logins stamp them): start now.
            session[LOGIN_AT] = session[SEEN_AT] = now
            return None
        if now - login_at >= settings.MEMADMIN_SESSION_MAX_SECONDS:
            return self._expire(request, "Your session reached its maximum length")
        if now - seen_at >= settings.MEMADMIN_SESSION_IDLE_SECONDS:
            return self._expire(request, "Your session expired after a period of inactivity")
        if now - seen_at >= SEEN_RESOLUTION:
            session[SEEN_AT] = now
        return None

    def _expire(self, request: HttpRequest, why: str) -> HttpResponse:
        logout(request)
        messages.info(request, f"{why}; please log in again.")
        url = reverse(settings.LOGIN_URL)
        if request.method == "GET":
            url += "?" + urlencode({"next": request.get_full_path()})
        if request.headers.get("HX-Request") == "true":
            return HttpResponseClientRedirect(url)
        return redirect(url)
