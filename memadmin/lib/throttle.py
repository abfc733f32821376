"""The pieces django-axes calls for login throttling: the client address behind a known number
of proxies, the username a try is counted under, and the lockout page."""

from __future__ import annotations

import hashlib
import ipaddress
import math
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone


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
