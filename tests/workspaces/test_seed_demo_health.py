"""The demo's operations picture: remote providers, a week of history with incidents, a
maintenance window; written once."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memadmin.audit.services import Actor
from memadmin.demo.health import DAYS, STEP, seed_health
from memadmin.providers import history
from memadmin.providers.models import HealthCheck, MaintenanceWindow, ProviderConfig

pytestmark = pytest.mark.django_db


def test_it_seeds_providers_history_incidents_and_maintenance_once(workspace, client_for) -> None:
    created: list[str] = []
    written = seed_health(workspace, Actor.system("test"), created)

    assert {"provider acme/endpoint", "provider acme/staging-vectors",
            "provider acme/archive"} <= set(created)
    per_provider = written // 3
    assert per_provider >= DAYS * 24 * 60 // int(STEP.total_seconds() // 60) - 2
    staging = ProviderConfig.objects.get(slug="staging-vectors")
    outages = history.incidents(staging)
    assert len(outages) == 2 and {i.first_error for i in outages} == {"connection refused"}
    archive = ProviderConfig.objects.get(slug="archive")
    assert MaintenanceWindow.objects.filter(provider=archive).count() == 1
    assert any(i.worst == "degraded" for i in history.incidents(archive))
    assert ProviderConfig.objects.get(slug="endpoint").credential  # an admin credential
    page = client_for("vic").get(reverse("providers:health", args=["acme"])).content.decode()
    assert "Moving the archive to new disks" in page

    again: list[str] = []
    assert seed_health(workspace, Actor.system("test"), again) == 0
    assert again == []
    assert HealthCheck.objects.count() == written
