"""Health alerts: Apprise targets delivered to real loopback receivers, the delivery log, test
alerts, muting by maintenance windows, flapping, and degraded alerts for targets that ask."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from django.urls import reverse
from django.utils import timezone

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.jobs import runner
from memadmin.jobs.models import Job
from memadmin.providers import health
from memadmin.providers.alerts import deliver_test
from memadmin.providers.contract import HealthStatus
from memadmin.providers.models import (
    AlertDelivery,
    HealthTransition,
    MaintenanceWindow,
    ProviderConfig,
)
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.services import alert_target_add
from tests.providers.fake_provider import FakeProvider, FakeProviders

SYSTEM = Actor.system("test")
polling = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receivers() -> Iterator[FakeProviders]:
    with FakeProviders() as started:
        yield started


def remote(workspace: Any, slug: str = "remote") -> ProviderConfig:
    return provider_config_create(actor=SYSTEM, workspace=workspace, slug=slug,
                                  name=slug.title(), kind="http", probed=True,
                                  url="http://127.0.0.1:9/oc-memory", health_deadline_ms=300)


def observe(config: ProviderConfig, ok: bool, at: dt.datetime, latency_ms: float = 5.0) -> str:
    return health.record(config, HealthStatus(ok=ok, message="" if ok else "connection refused",
                                              checked_at=at, latency_ms=latency_ms))


def go_down(config: ProviderConfig, at: dt.datetime) -> None:
    observe(config, False, at - dt.timedelta(seconds=30))
    observe(config, False, at)


def apprise_url(scheme: str, server: FakeProvider) -> str:
    return f"{scheme}://127.0.0.1:{server.port}/hook"


@polling
@pytest.mark.parametrize("scheme", ["json", "form"])
def test_it_delivers_an_apprise_alert_to_a_loopback_receiver(workspace, receivers,
                                                             scheme) -> None:
    receiver = receivers.start()
    target = alert_target_add(actor=SYSTEM, workspace=workspace, kind="apprise",
                              target=apprise_url(scheme, receiver))
    config = remote(workspace)
    go_down(config, timezone.now())
    job = Job.objects.get(kind="health_alert")

    assert runner.run_job(str(job.pk)) == "succeeded"

    [request] = receiver.requests
    assert (request.method, request.path) == ("POST", "/hook")
    if scheme == "json":
        fields = request.json()
    else:
        fields = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
    assert fields["title"] == "[memadmin] Remote is down (acme)"
    assert "went from degraded to down" in fields["message"]
    assert "connection refused" in fields["message"]
    [delivery] = AlertDelivery.objects.filter(target=target)
    assert delivery.ok and delivery.transition is not None and not delivery.test


@polling
def test_it_logs_a_failed_apprise_delivery_and_retries_it(workspace, receivers) -> None:
    receiver = receivers.start()
    receiver.status(503)
    target = alert_target_add(actor=SYSTEM, workspace=workspace, kind="apprise",
                              target=apprise_url("json", receiver))
    go_down(remote(workspace), timezone.now())
    job = Job.objects.get(kind="health_alert")

    assert runner.run_job(str(job.pk)) == "retrying"
    receiver.ok()
    assert runner.run_job(str(job.pk)) == "succeeded"

    log = list(AlertDelivery.objects.filter(target=target).order_by("at", "pk")
               .values_list("ok", "attempt"))
    assert log == [(False, 1), (True, 2)]
    failure = AlertDelivery.objects.filter(target=target, ok=False).get()
    assert "503" in failure.detail
    assert str(receiver.port) not in failure.detail  # the target URL never enters the log


@polling
def test_a_test_alert_reaches_the_receiver_and_is_logged_and_audited(
        workspace, receivers, client_for) -> None:
    receiver = receivers.start()
    target = alert_target_add(actor=SYSTEM, workspace=workspace, kind="apprise",
                              target=apprise_url("json", receiver))

    response = client_for("ada").post(
        reverse("workspaces:alert_test", args=["acme", target.pk]))

    assert response.status_code == 302
    [request] = receiver.requests
    assert request.json()["title"] == "[memadmin] test alert"
    assert AlertDelivery.objects.get(target=target).test
    assert AuditEvent.objects.filter(action="alert_target.test").exists()
    assert client_for("vic").post(
        reverse("workspaces:alert_test", args=["acme", target.pk])).status_code == 403
    assert client_for("mallory").post(
        reverse("workspaces:alert_test", args=["acme", target.pk])).status_code == 404


@pytest.mark.django_db
def test_pages_mask_the_tokens_of_an_apprise_url(workspace, client_for) -> None:
    token = "T0000000/B0000000/XXXXXXXXXXXXXXXXsecretTOKEN"
    alert_target_add(actor=SYSTEM, workspace=workspace, kind="apprise",
                     target=f"slack://{token}")

    page = client_for("ada").get(reverse("workspaces:settings", args=["acme"])).content.decode()

    assert "slack://" in page and "secretTOKEN" not in page


@pytest.mark.django_db
def test_an_unknown_apprise_scheme_is_a_form_error(workspace, client_for) -> None:
    response = client_for("ada").post(reverse("workspaces:alert_add", args=["acme"]),
                                      {"kind": "apprise", "target": "nosuchscheme://x"})
    assert response.status_code == 400
    assert "Apprise does not recognise this URL" in response.content.decode()


@pytest.mark.django_db
def test_a_provider_flapping_within_the_quiet_period_pages_once(workspace, settings) -> None:
    settings.MEMADMIN_ALERT_QUIET_SECONDS = 900
    alert_target_add(actor=SYSTEM, workspace=workspace, kind="webhook",
                     target="http://127.0.0.1:9/hook")
    config = remote(workspace)
    now = timezone.now()

    go_down(config, now - dt.timedelta(minutes=10))
    observe(config, True, now - dt.timedelta(minutes=9))
    go_down(config, now - dt.timedelta(minutes=5))
    observe(config, True, now - dt.timedelta(minutes=4))
    go_down(config, now + dt.timedelta(minutes=20))  # past the quiet period: pages again

    decisions = list(HealthTransition.objects.filter(provider=config, to_state__in=["down", "ok"])
                     .order_by("at").values_list("to_state", "alerted", "muted_reason"))
    assert decisions == [
        ("down", True, ""), ("ok", True, ""),
        ("down", False, "flapping: paged recently"), ("ok", False, "its outage did not page"),
        ("down", True, ""),
    ]
    assert Job.objects.filter(kind="health_alert").count() == 3


@pytest.mark.django_db
def test_a_maintenance_window_mutes_alerts_and_the_panel_says_so(workspace, client_for) -> None:
    alert_target_add(actor=SYSTEM, workspace=workspace, kind="webhook",
                     target="http://127.0.0.1:9/hook")
    config = remote(workspace)
    now = timezone.now()
    MaintenanceWindow.objects.create(workspace=workspace, provider=config,
                                     starts_at=now - dt.timedelta(hours=1),
                                     ends_at=now + dt.timedelta(hours=1),
                                     reason="Upgrading the vector store")

    go_down(config, now)

    down = HealthTransition.objects.get(provider=config, to_state="down")
    assert (down.alerted, down.muted_reason) == (False, "maintenance")
    assert not Job.objects.filter(kind="health_alert").exists()
    page = client_for("vic").get(reverse("providers:health", args=["acme"])).content.decode()
    assert "Maintenance" in page and "Upgrading the vector store" in page


@pytest.mark.django_db
def test_degraded_alerts_reach_only_the_targets_that_ask_for_them(workspace) -> None:
    quiet = alert_target_add(actor=SYSTEM, workspace=workspace, kind="webhook",
                             target="http://127.0.0.1:9/quiet")
    eager = alert_target_add(actor=SYSTEM, workspace=workspace, kind="webhook",
                             target="http://127.0.0.1:9/eager", on_degraded=True)
    config = remote(workspace)
    now = timezone.now()

    observe(config, True, now - dt.timedelta(minutes=3), latency_ms=290.0)  # slow: degraded
    observe(config, True, now - dt.timedelta(minutes=2))  # recovers

    from memadmin.providers.alerts import _targets

    degraded = HealthTransition.objects.get(provider=config, to_state="degraded")
    recovered = HealthTransition.objects.filter(provider=config, to_state="ok").latest("at")
    assert degraded.alerted and recovered.alerted
    assert list(_targets(degraded)) == [eager] and list(_targets(recovered)) == [eager]
    assert quiet not in _targets(degraded)


@polling
def test_deliver_test_reports_an_unreachable_target(workspace) -> None:
    target = alert_target_add(actor=SYSTEM, workspace=workspace, kind="apprise",
                              target="json://127.0.0.1:9/hook")
    error = deliver_test(target)
    assert error is not None and error.startswith("delivery failed")
    assert not AlertDelivery.objects.get(target=target).ok
