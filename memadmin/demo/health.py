"""The demo's operations picture: remote providers beside the built-in store, a week of health
history with incidents, one provider that is really unreachable, one in a maintenance window.

- "This memadmin's endpoint" is a remote ``http`` provider pointed at the project's own wire
  endpoint (``RUN_ADDR``) with an admin credential: polled for real once ``make run`` serves.
- "Staging vector store" points at a loopback port where nothing listens: the scheduler's polls
  really fail, so the panel shows it down with its first error.
- "Archive store" is in a maintenance window from now for two hours (alerts muted, banner).
- The history before now is seeded (clearly demo data, as the items are): seven days of checks
  every 30 minutes through the same recording code polls use, with two outages of the staging
  store and a slow afternoon of the archive, so charts, uptime bars and incidents have content.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import random

from django.db import transaction
from django.utils import timezone

from memadmin.audit.services import Actor
from memadmin.providers import health
from memadmin.providers.contract import HealthStatus
from memadmin.providers.models import HealthCheck, MaintenanceWindow, ProviderConfig
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.models import Workspace
from memadmin.workspaces.services import admin_credential_mint

STEP = dt.timedelta(minutes=30)
DAYS = 7


def _ensure(workspace: Workspace, actor: Actor, slug: str, name: str, url: str,
            credential: str, created: list[str]) -> ProviderConfig:
    config = ProviderConfig.objects.filter(workspace=workspace, slug=slug).first()
    if config is None:
        config = provider_config_create(actor=actor, workspace=workspace, slug=slug, name=name,
                                        kind="http", url=url, credential=credential,
                                        probed=True, health_deadline_ms=1000)
        created.append(f"provider {workspace.slug}/{slug}")
    return config


def _status(config: ProviderConfig, at: dt.datetime, rng: random.Random) -> HealthStatus:
    """What a poll of ``config`` would have seen at ``at`` (demo history)."""
    hours_ago = (timezone.now() - at).total_seconds() / 3600
    base = {"endpoint": 6.0, "staging": 35.0, "archive": 90.0}[config.slug.split("-")[0]]
    latency = base * math.exp(rng.gauss(0, 0.25))
    if config.slug.startswith("staging") and (30 <= hours_ago < 31.5 or 100 <= hours_ago < 100.6):
        return HealthStatus(ok=False, message="connection refused", checked_at=at,
                            latency_ms=0.4)
    if config.slug.startswith("archive") and 52 <= hours_ago < 55:
        latency = 850 + rng.uniform(0, 100)  # over 80% of the 1 s deadline: degraded
    return HealthStatus(ok=True, message="", checked_at=at, latency_ms=round(latency, 2))


def seed_health(workspace: Workspace, actor: Actor, created: list[str]) -> int:
    """Idempotent: history is written once (when the providers have no check older than a day).
    Returns how many checks were written."""
    addr = os.environ.get("RUN_ADDR") or "127.0.0.1:8000"
    endpoint = ProviderConfig.objects.filter(workspace=workspace, slug="endpoint").first()
    credential = ""
    if endpoint is None:
        _, credential = admin_credential_mint(actor=actor, workspace=workspace,
                                              name="demo: this memadmin's endpoint",
                                              lifetime_days=None)
    providers = [
        _ensure(workspace, actor, "endpoint", "This memadmin's endpoint",
                f"http://{addr}/oc-memory", credential, created),
        _ensure(workspace, actor, "staging-vectors", "Staging vector store",
                "http://127.0.0.1:9/oc-memory", "demo-staging-credential", created),
        _ensure(workspace, actor, "archive", "Archive store",
                "http://127.0.0.1:9/archive/oc-memory", "demo-archive-credential", created),
    ]
    now = timezone.now()
    archive = providers[2]
    if not MaintenanceWindow.objects.filter(provider=archive, ends_at__gt=now).exists():
        MaintenanceWindow.objects.create(
            workspace=workspace, provider=archive, starts_at=now - dt.timedelta(minutes=5),
            ends_at=now + dt.timedelta(hours=2), reason="Moving the archive to new disks")
        created.append("maintenance window for the archive store")
    if HealthCheck.objects.filter(provider__in=providers,
                                  checked_at__lt=now - dt.timedelta(days=1)).exists():
        return 0
    rng = random.Random(20261201)  # the same history every time the demo is made
    written = 0
    at = now - dt.timedelta(days=DAYS)
    with transaction.atomic():
        while at < now - STEP:
            health.record_many([(config, _status(config, at, rng)) for config in providers])
            written += len(providers)
            at += STEP
    return written
