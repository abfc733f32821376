"""A form posted empty is refused with its errors (400), not shown again as a blank form.
(The namespace editor has no required field: an empty post is a valid "no quota".)"""

from __future__ import annotations

import pytest
from django.urls import reverse

from memadmin.audit.models import AuditEvent

pytestmark = pytest.mark.django_db

URLS = [
    ("providers:create", ["acme"]),
    ("providers:edit", ["acme", "builtin"]),
    ("workspaces:resource_create", ["acme"]),
    ("workspaces:resource_edit", ["acme", "knowledge"]),
    ("workspaces:namespace_create", ["acme", "knowledge"]),
    ("workspaces:settings", ["acme"]),
]


@pytest.mark.parametrize("name,args", URLS)
def test_an_empty_post_gets_the_forms_errors(client_for, namespace, name: str,
                                             args: list[str]) -> None:
    before = AuditEvent.objects.count()
    response = client_for("ada").post(reverse(name, args=args), {})
    assert response.status_code == 400
    assert "errorlist" in response.content.decode()
    assert AuditEvent.objects.count() == before
