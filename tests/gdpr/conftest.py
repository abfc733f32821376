"""Fixtures of the subject-request tests.

The workspace "acme" (tests/conftest.py) gets up to three providers:

- ``local_config`` "Built-in": the built-in store holding namespaces "alice" and "bob";
- ``http_config`` "Across HTTP": the ``http`` provider talking to this project's own
  ``/oc-memory`` endpoint served by ``live_server`` with an admin credential of the workspace.
  It declares no namespaces, so the cascade asks it about the workspace's partitions: it reaches
  the same built-in store over the wire (its name sorts first, so its step does the removal);
- ``legacy_config`` "Legacy store": a real loopback server (``unsupported_provider.py``) that
  answers ``unsupported`` to count, forget and export, or plays a store switched at runtime.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from memadmin.audit.services import Actor
from memadmin.jobs import runner
from memadmin.jobs.models import Job
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from memadmin.providers.services import provider_config_create
from tests.gdpr.unsupported_provider import ProtocolServer
from tests.providers.conftest import self_over_http

SYSTEM = Actor.system("test")
SUBJECT = "subject-7f3a9c@example.com"
OTHER_SUBJECT = "someone-else-41@example.com"
MARKER = "Zebrafinch appointment 0417"  # erased content, looked for everywhere afterwards


@pytest.fixture(autouse=True)
def storage(settings, tmp_path: Path) -> Path:
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "files")}}}
    settings.MEMADMIN_GDPR_RETRY_SECONDS = 0.05
    return tmp_path / "files"


@pytest.fixture
def put(local_config, namespace):
    """Retain into the built-in store: ``put("text", subject=SUBJECT, ns=other_namespace)``."""
    provider = provider_for(local_config)
    counter = itertools.count()

    def put(content: str, subject: str | None = SUBJECT, ns=None, tier: str = "facts",
            key: str = "") -> str:
        return provider.retain(tier, key, content, "replace", data_subject_id=subject,
                               operation_id=f"put-{next(counter)}",
                               scope=c.Scope.of((ns or namespace).partition_key),
                               deadline=5).id

    return put


@pytest.fixture
def actor(users):
    """``actor("carl")`` -> the Actor of that user."""
    return lambda name: Actor.of(users[name])


@pytest.fixture
def carol(users, workspace):
    """A second compliance user (four eyes)."""
    from django.contrib.auth.models import User

    from memadmin.workspaces.services import role_grant

    user = User.objects.create_user("carol", "carol@example.com", "x")
    role_grant(actor=SYSTEM, workspace=workspace, user=user, role="compliance")
    users["carol"] = user
    return user


@pytest.fixture
def http_config(request: pytest.FixtureRequest, workspace):
    return self_over_http(request, workspace, slug="across-http", name="Across HTTP")


@pytest.fixture
def legacy() -> Iterator[ProtocolServer]:
    server = ProtocolServer.start()
    yield server
    server.stop()


@pytest.fixture
def legacy_config(workspace, legacy: ProtocolServer):
    from memadmin.providers.http import clear_capabilities_cache

    clear_capabilities_cache()
    return provider_config_create(actor=SYSTEM, workspace=workspace, slug="legacy",
                                  name="Legacy store", kind="http", url=legacy.url,
                                  credential="legacy-token", probed=True,
                                  request_deadline_ms=2000)


def run_job(job: Job | None) -> str:
    """Run the request's job in this process (a real worker is used where it matters)."""
    assert job is not None
    return runner.run_job(str(job.pk))
