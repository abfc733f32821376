"""Fixtures and hooks shared by the whole test suite."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests import fast_flush

# ---------------------------------------------------------------------------------------------
# Test infrastructure: database access from Playwright tests, and the system Chromium.
# ---------------------------------------------------------------------------------------------

# Playwright's sync API runs an event loop in the test thread; without this, every ORM call made
# by a browser test (fixtures, assertions) raises SynchronousOnlyOperation.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
# The outbound policy refuses loopback; the suite's servers are real loopback servers, so they
# run under an explicit allow-list entry (the policy stays on). The environment variable covers
# the processes tests start; the fixture below covers this one.
TEST_OUTBOUND_ALLOW = ["127.0.0.1", "::1", "localhost"]
os.environ.setdefault("MEMADMIN_OUTBOUND_ALLOW", ",".join(TEST_OUTBOUND_ALLOW))
# Belt and braces: the browser is Debian's, Playwright must never fetch its own.
os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
# Transactional tests are emptied with DELETE, and post_migrate only when it would change
# something (tests/fast_flush.py): seconds a test saved, same empty tables.
fast_flush.install()

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_INSTALL = "sudo apt-get install -y chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: Mapping[str, Any]) -> dict[str, Any]:
    """pytest-playwright's launch options (--headed, --slowmo), pointed at the system Chromium."""
    options = dict(browser_type_launch_args)
    headless = options.get("headless", True)
    args = [arg for arg in CHROMIUM_ARGS if headless or arg != "--headless"]
    return {**options, "executable_path": str(CHROMIUM), "args": args}


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("browser") is None or CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing; install it with: {CHROMIUM_INSTALL}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: browser tests must run)", pytrace=False)
    pytest.skip(message)


# ---------------------------------------------------------------------------------------------
# Shared domain fixtures (users per role, workspaces) go below this line.
# ---------------------------------------------------------------------------------------------

from memadmin.audit.services import Actor  # noqa: E402
from memadmin.providers.services import provider_config_create  # noqa: E402
from memadmin.workspaces.services import (  # noqa: E402
    namespace_create,
    resource_create,
    workspace_create,
)

SYSTEM = Actor.system("test")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The production hasher spends ~0.3 s per password by design; tests create many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True, scope="session")
def _suite_settings():
    """For the whole session, module-scoped fixtures included (the ``settings`` fixture of a
    test still overrides them and restores these values):

    - the outbound policy allows the suite's loopback servers by an explicit entry;
    - two-factor is not required: tests log users in with force_login (no second factor); the
      two-factor tests (tests/security/test_two_factor.py) set MEMADMIN_2FA_REQUIRED themselves.
    """
    from django.conf import settings

    saved = settings.MEMADMIN_OUTBOUND_ALLOW, settings.MEMADMIN_2FA_REQUIRED
    settings.MEMADMIN_OUTBOUND_ALLOW = list(TEST_OUTBOUND_ALLOW)
    settings.MEMADMIN_2FA_REQUIRED = "off"
    yield
    settings.MEMADMIN_OUTBOUND_ALLOW, settings.MEMADMIN_2FA_REQUIRED = saved


@pytest.fixture
def system_actor() -> Actor:
    return SYSTEM


@pytest.fixture
def workspace(db: None):
    return workspace_create(actor=SYSTEM, slug="acme", name="Acme")


@pytest.fixture
def other_workspace(db: None):
    return workspace_create(actor=SYSTEM, slug="globex", name="Globex")


@pytest.fixture
def local_config(workspace):
    return provider_config_create(actor=SYSTEM, workspace=workspace, slug="builtin",
                                  name="Built-in", kind="local", probed=True)


@pytest.fixture
def resource(workspace, local_config):
    return resource_create(actor=SYSTEM, workspace=workspace, provider=local_config,
                           slug="knowledge", max_bytes=1024, item_max_bytes=4096)


@pytest.fixture
def namespace(resource):
    return namespace_create(actor=SYSTEM, resource=resource, slug="alice")


@pytest.fixture
def other_namespace(resource):
    return namespace_create(actor=SYSTEM, resource=resource, slug="bob")


# Users per role in workspace "acme" (STYLE.md): ada admin, olga operator, alice owner of the
# whole workspace, nora owner of namespace "alice" only, carl compliance, vic viewer, mallory no
# role, root superuser.
ROLE_USERS = {
    "ada": "admin", "olga": "operator", "alice": "owner", "carl": "compliance", "vic": "viewer",
    "nora": None, "mallory": None, "root": None,
}
PASSWORD = "correct horse battery staple"


@pytest.fixture
def users(workspace, namespace):
    from django.contrib.auth.models import User

    from memadmin.workspaces.services import role_grant

    made = {}
    for name, role in ROLE_USERS.items():
        if name == "root":
            user = User.objects.create_superuser(name, f"{name}@example.com", PASSWORD)
        else:
            user = User.objects.create_user(name, f"{name}@example.com", PASSWORD)
        if role:
            role_grant(actor=SYSTEM, workspace=workspace, user=user, role=role)
        made[name] = user
    role_grant(actor=SYSTEM, workspace=workspace, user=made["nora"], role="owner",
               namespace=namespace)
    return made


@pytest.fixture
def client_for(users):
    """``client_for("vic")`` -> a test client logged in as that user (None: anonymous)."""
    from django.test import Client

    def make(name: str | None) -> Client:
        client = Client()
        if name is not None:
            client.force_login(users[name])
        return client

    return make
