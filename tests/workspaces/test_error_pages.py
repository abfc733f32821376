"""Error pages use the site's layout (a main landmark, the top bar) and say why in plain words."""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from django.urls import reverse
from django.views.defaults import server_error

pytestmark = pytest.mark.django_db


def test_it_explains_a_refusal_in_the_site_layout(client_for) -> None:
    response = client_for("vic").get(reverse("workspaces:members", args=["acme"]))
    assert response.status_code == 403
    body = response.content.decode()
    assert '<main id="main"' in body and 'class="topbar"' in body
    assert "You may not do that here" in body
    assert "your role does not allow manage members" in body


def test_it_does_not_say_whether_a_hidden_workspace_exists(client_for) -> None:
    response = client_for("mallory").get(reverse("workspaces:home", args=["acme"]))
    assert response.status_code == 404
    body = response.content.decode()
    assert '<main id="main"' in body and "Nothing here" in body
    assert "acme" not in body.lower()


def test_it_renders_a_server_error_in_the_layout_without_a_request_context() -> None:
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    body = response.content.decode()
    assert '<main id="main"' in body and "Something went wrong on our side" in body
