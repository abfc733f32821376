"""Typed requests for views."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import HttpRequest

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


class AuthenticatedHttpRequest(HtmxHttpRequest):
    user: User


def posted(request: HttpRequest) -> Any:
    """The form data to bind: ``request.POST`` for a POST (even an empty one, so its errors
    show), None for a GET (an unbound form). ``request.POST or None`` would treat an empty POST
    as a GET."""
    return request.POST if request.method == "POST" else None
