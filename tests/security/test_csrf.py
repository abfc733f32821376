"""CSRF: every URL refuses a POST without a token (generated from the same URL walk as the
authorization matrix, so a new view is covered the day it is added); a POST with the token is
not refused for CSRF reasons; the wire endpoint, exempt because it takes bearer tokens only,
never serves a session cookie."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client, override_settings
from django.urls import reverse

if TYPE_CHECKING:  # the test client's response type exists only in django-stubs
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse

from tests.security.test_authz_matrix import ROWS, World, _build_world, url_names

#: URLs that are CSRF-exempt on purpose, and what a tokenless, logged-in POST gets instead.
CSRF_EXEMPT = {
    "endpoint:endpoint": 401,  # bearer tokens only; the session cookie is ignored
}
CSRF_FAILURE = b"CSRF verification failed"


@pytest.fixture(scope="module")
def world(django_db_setup: None, django_db_blocker: Any) -> Iterator[tuple[World, Client]]:
    """The matrix's world, and a superuser's client that enforces CSRF like a browser."""
    from django.core.files.storage import default_storage

    # Module scope runs before the function-scoped settings fixtures (two-factor off in tests).
    with (django_db_blocker.unblock(), transaction.atomic(),
          override_settings(MEMADMIN_2FA_REQUIRED="off")):
        built = _build_world()
        client = Client(enforce_csrf_checks=True)
        client.force_login(User.objects.get(username="root"))
        # A page that renders a form sets the csrftoken cookie, as in a browser.
        assert client.get(reverse("workspaces:list")).status_code == 200
        yield built, client
        transaction.set_rollback(True)
    default_storage.delete(built.export_job_file)  # type: ignore[attr-defined]


def _post(client: Client, url: str, **extra: Any) -> TestResponse:
    cookies = copy.deepcopy(client.cookies)
    try:
        with transaction.atomic():
            response = client.post(url, **extra)
            transaction.set_rollback(True)
    finally:
        client.cookies = cookies
    return response


def _url(name: str, built: World) -> str:
    if name not in ROWS:
        pytest.fail(f"add a row for {name} in tests/security/test_authz_matrix.py")
    return reverse(name, kwargs=ROWS[name].kwargs(built))


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(set(url_names())))
def test_a_post_without_a_token_is_refused(name: str, world: tuple[World, Client]) -> None:
    built, client = world
    response = _post(client, _url(name, built))

    if name in CSRF_EXEMPT:
        assert response.status_code == CSRF_EXEMPT[name]
        assert CSRF_FAILURE not in response.content
    else:
        assert response.status_code == 403, f"{name} served a POST without a CSRF token"
        assert CSRF_FAILURE in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(set(url_names()) - set(CSRF_EXEMPT)))
def test_a_post_with_the_token_is_not_refused_for_csrf(name: str,
                                                        world: tuple[World, Client]) -> None:
    built, client = world
    token = client.cookies["csrftoken"].value
    response = _post(client, _url(name, built), data=ROWS[name].data if name in ROWS else {},
                     HTTP_X_CSRFTOKEN=token)

    assert CSRF_FAILURE not in response.content, f"{name} refused a POST with its token"


@pytest.mark.django_db
def test_the_endpoint_never_serves_a_session_cookie(world: tuple[World, Client]) -> None:
    _, client = world
    token = client.cookies["csrftoken"].value
    body = json.dumps({"version": 1, "operation": "recall", "operationId": "csrf-1",
                       "partition": "ocmem_v1_x", "deadlineAt": "2999-01-01T00:00:00Z"})
    url = reverse("endpoint:endpoint")

    for extra in ({}, {"HTTP_X_CSRFTOKEN": token}):
        response = _post(client, url, data=body, content_type="application/json", **extra)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
