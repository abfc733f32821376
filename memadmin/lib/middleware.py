"""Session and response hardening: idle and absolute session timeouts, ``Cache-Control:
no-store`` on everything a logged-in user is shown, and the pieces django-axes calls for login
throttling (the client address behind a known number of proxies, the lockout page), and the
refusal of query strings and form bodies that are not valid text."""

from __future__ import annotations

import hashlib
import ipaddress
import math
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_to_bytes

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
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


class NoStoreMiddleware:
    """``Cache-Control: no-store`` on every response to a logged-in user: pages and downloads
    show memory, and neither a shared cache nor the browser's back button should keep it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            response["Cache-Control"] = "no-store"
        return response


# -- django-axes hooks (AXES_CLIENT_IP_CALLABLE, AXES_LOCKOUT_CALLABLE) --------------------------


def client_ip(request: HttpRequest) -> str:
    """The client's address: the connection's own, or, behind ``MEMADMIN_PROXY_COUNT`` reverse
    proxies that each append to ``X-Forwarded-For``, the entry the outermost proxy appended.
    Entries further left are whatever the client sent and are never trusted."""
    remote = request.META.get("REMOTE_ADDR") or "0.0.0.0"  # noqa: S104 -- a label, not a bind
    count = settings.MEMADMIN_PROXY_COUNT
    if count <= 0:
        return remote
    hops = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [hop for hop in hops if hop]
    if len(hops) < count:
        return remote
    candidate = hops[-count]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote


#: What a username may be in the throttling tables (a column of 255; real usernames are <= 150).
THROTTLE_USERNAME_MAX = 150


def login_username(request: HttpRequest, credentials: dict[str, Any] | None = None) -> str | None:
    """The username the throttle counts under. A value no account can have (too long, or with a
    NUL byte, which PostgreSQL refuses) is counted under a digest of itself instead: the same
    lockout rules apply to it, and it never reaches the database as it came."""
    field = settings.AXES_USERNAME_FORM_FIELD
    raw = credentials.get(field) if credentials else request.POST.get(field)
    if not isinstance(raw, str):
        return None
    if len(raw) > THROTTLE_USERNAME_MAX or "\x00" in raw:
        digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
        return f"sha256:{digest}"
    return raw


def lockout_response(request: HttpRequest, original_response: Any = None,
                     credentials: Any = None) -> HttpResponse:
    """The page a locked-out login gets: HTTP 429, when to try again, and nothing that says
    whether the username exists."""
    cool_off = settings.AXES_COOLOFF_TIME
    # Every refused try restarts the cool-off (AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT),
    # so the lock lifts one cool-off after this request.
    retry_at = timezone.now() + cool_off
    minutes = max(1, math.ceil(cool_off.total_seconds() / 60))
    response = render(request, "accounts/locked.html",
                      {"retry_at": retry_at, "minutes": minutes}, status=429)
    response["Retry-After"] = str(int(cool_off.total_seconds()))
    response["Cache-Control"] = "no-store"
    return response


# -- the input boundary: bytes that are not text ------------------------------------------------

FORM_URLENCODED = "application/x-www-form-urlencoded"


def _query_bytes(request: HttpRequest) -> bytes:
    """The query string as the client sent it (WSGI hands it over as ISO-8859-1 text)."""
    raw = request.META.get("QUERY_STRING", "")
    if isinstance(raw, bytes):
        return raw
    try:
        return raw.encode("iso-8859-1")
    except UnicodeEncodeError:  # a server that decoded it already: it is text
        return raw.encode("utf-8", "surrogatepass")


def _is_text(raw: bytes, encoding: str) -> bool:
    """Whether percent-decoded ``raw`` decodes strictly (UTF-8: no stray bytes, no encoded
    surrogates, no overlong forms). Decoding the whole string at once is the same test as
    decoding each name and value: the separators are ASCII, and no multi-byte sequence
    contains an ASCII byte."""
    if raw.isascii() and b"%" not in raw:
        return True
    try:
        unquote_to_bytes(raw).decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


class InvalidUtf8Middleware:
    """Answer a short plain-text 400 when the query string, or an
    ``application/x-www-form-urlencoded`` body, is not valid text once percent-decoded (UTF-8,
    or the charset the request declares). Django decodes both with replacement, so a lone
    surrogate or a stray byte would otherwise reach a form as U+FFFD and be stored; DESIGN.md
    refuses such input at the boundary. htmx requests get the same answer.

    Multipart bodies are not read here (uploads stream to their handlers, never into memory),
    a urlencoded body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is left to Django's own refusal, and
    the agent endpoint is skipped entirely: it checks its JSON bodies itself."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        endpoint = "/" + settings.MEMADMIN_ENDPOINT_PATH
        self.skipped = {endpoint, endpoint + "/"}

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info not in self.skipped:
            problem = self._problem(request)
            if problem is not None:
                return HttpResponseBadRequest(f"Bad request: {problem}. Nothing was done.\n",
                                              content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    @staticmethod
    def _problem(request: HttpRequest) -> str | None:
        encoding = request.encoding or settings.DEFAULT_CHARSET
        if not _is_text(_query_bytes(request), encoding):
            return f"the query string is not valid {encoding} text"
        if request.method == "POST" and request.content_type == FORM_URLENCODED:
            try:
                body = request.body
            except RequestDataTooBig:
                return None  # refused with a 400 where the form is read, as ever
            if not _is_text(body, encoding):
                return f"the form data is not valid {encoding} text"
        return None
