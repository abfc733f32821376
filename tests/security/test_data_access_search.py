"""The data-level suite's search rows (see test_data_access.py): search fans out over worker
threads with their own database connections, so it needs a committed world."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.conftest import ROLE_USERS
from tests.security.test_data_access import ROLES, SEARCH, _build, _check_gets


@pytest.mark.django_db(transaction=True)
def test_what_each_role_gets_back_from_search(settings, tmp_path) -> None:
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path)}}}
    users = {name: (User.objects.create_superuser(name, f"{name}@example.com", None)
                    if name == "root" else User.objects.create_user(name, f"{name}@example.com"))
             for name in ROLE_USERS}
    built = _build(users)
    clients = {}
    for name in ROLES:
        clients[name] = Client()
        clients[name].force_login(users[name])
    wrong = [problem for variants in SEARCH.values()
             for problem in _check_gets(variants, built, clients, savepoints=False)]
    assert not wrong, "memory:search:\n" + "\n".join(wrong)
