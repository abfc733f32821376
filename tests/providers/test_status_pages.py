"""A provider's history page (latency charts, uptime per day, incidents with notes), maintenance
windows, SLA exports and status badges."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from typing import Any

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.providers import health, history
from memadmin.providers.contract import HealthStatus
from memadmin.providers.models import HealthTransition, IncidentNote, MaintenanceWindow
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.services import workspace_badge_key_rotate

SYSTEM = Actor.system("test")
pytestmark = pytest.mark.django_db


def remote(workspace: Any, slug: str = "remote") -> Any:
    return provider_config_create(actor=SYSTEM, workspace=workspace, slug=slug,
                                  name=slug.title(), kind="http", probed=True,
                                  url="http://127.0.0.1:9/oc-memory", health_deadline_ms=1000)


def observe(config: Any, ok: bool, at: dt.datetime, latency_ms: float = 20.0,
            message: str = "connection refused") -> None:
    health.record(config, HealthStatus(ok=ok, message="" if ok else message, checked_at=at,
                                       latency_ms=latency_ms))


@pytest.fixture
def noon():
    """The clock at 12:00 UTC today, running, so "3 hours ago" is still today whenever the suite
    runs (CI at 01:52 UTC put the outage's first check on yesterday's uptime bar)."""
    at = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    with time_machine.travel(at, tick=True):
        yield at


@pytest.fixture
def outage(workspace, noon):
    """ok, then down for 10 minutes from 2 hours ago with a first error, then ok again."""
    config = remote(workspace)
    now = timezone.now()
    observe(config, True, now - dt.timedelta(hours=3), latency_ms=30.0)
    observe(config, False, now - dt.timedelta(hours=2), message="503 from upstream")
    observe(config, False, now - dt.timedelta(hours=2) + dt.timedelta(minutes=1))
    observe(config, True, now - dt.timedelta(hours=2) + dt.timedelta(minutes=10),
            latency_ms=40.0)
    return config


class TestIncidents:
    def test_it_lists_each_outage_with_start_end_duration_and_first_error(self, outage) -> None:
        [incident] = history.incidents(outage)
        assert incident.worst == "down"
        assert incident.first_error == "503 from upstream"
        assert incident.duration == dt.timedelta(minutes=10)
        assert incident.duration_text == "10 min"

    def test_an_operator_adds_a_note_and_everyone_reads_it(self, outage, client_for) -> None:
        [incident] = history.incidents(outage)
        url = reverse("providers:incident_note", args=["acme", "remote"])

        response = client_for("olga").post(url, {"incident": incident.opened.pk,
                                                 "text": "Upstream <b>rolled back</b>"})

        assert response.status_code == 302
        assert IncidentNote.objects.get().text == "Upstream <b>rolled back</b>"
        page = client_for("vic").get(reverse("providers:history", args=["acme", "remote"]))
        assert "Upstream &lt;b&gt;rolled back&lt;/b&gt;" in page.content.decode()
        assert AuditEvent.objects.filter(action="incident.note").exists()
        assert client_for("vic").post(url, {"incident": incident.opened.pk,
                                            "text": "x"}).status_code == 403

    def test_a_note_on_something_that_is_not_an_incident_is_refused(
            self, outage, workspace, client_for) -> None:
        other = remote(workspace, "other")
        observe(other, False, timezone.now())
        foreign = HealthTransition.objects.filter(provider=other).get()
        url = reverse("providers:incident_note", args=["acme", "remote"])
        for value in [str(foreign.pk), "not-a-number", "", "9" * 40]:
            response = client_for("olga").post(url, {"incident": value, "text": "x"})
            assert response.status_code == 400, value
        assert not IncidentNote.objects.exists()


class TestHistoryPage:
    def test_it_draws_charts_uptime_and_incidents_with_text_equivalents(
            self, outage, client_for) -> None:
        html = client_for("vic").get(
            reverse("providers:history", args=["acme", "remote"])).content.decode()
        # Two latency charts (24 h, 7 d), each with a text summary over successful checks only.
        assert html.count('class="latency-chart"') == 2
        assert ("Latency of successful checks over the last 24 hours: lowest 30.0 ms, "
                "median 40.0 ms, highest 40.0 ms; 2 failed checks.") in html
        assert html.count("<polyline") >= 2
        # 30 day bars with a title each, today's figure stated as text.
        assert len(re.findall(r'<rect x="\d+0" y="0" width="8" height="30"', html)) == 30
        assert "50.00% of 4 checks ok" in html
        assert html.count('data-testid="incident"') == 1
        assert "503 from upstream" in html
        assert "<script" not in html.split("<main", 1)[1].split("</main>")[0]

    def test_a_stranger_gets_404_and_an_unknown_provider_404(self, outage, client_for) -> None:
        assert client_for("mallory").get(
            reverse("providers:history", args=["acme", "remote"])).status_code == 404
        assert client_for("vic").get(
            reverse("providers:history", args=["acme", "nope"])).status_code == 404


class TestMaintenance:
    def test_an_operator_schedules_and_ends_a_window(self, workspace, outage, client_for) -> None:
        start = timezone.now().replace(second=0, microsecond=0) - dt.timedelta(minutes=5)
        response = client_for("olga").post(
            reverse("providers:maintenance_add", args=["acme"]),
            {"provider": str(outage.pk), "starts_at": start.strftime("%Y-%m-%dT%H:%M"),
             "ends_at": (start + dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"),
             "reason": "Re-indexing"})
        assert response.status_code == 302
        window = MaintenanceWindow.objects.get()
        assert (window.provider, window.reason) == (outage, "Re-indexing")
        panel = client_for("vic").get(reverse("providers:health", args=["acme"])).content.decode()
        assert "Maintenance of Remote until" in panel and "Re-indexing" in panel

        client_for("olga").post(reverse("providers:maintenance_end", args=["acme", window.pk]))

        window.refresh_from_db()
        assert window.ends_at <= timezone.now()
        assert set(AuditEvent.objects.filter(action__startswith="maintenance.")
                   .values_list("action", flat=True)) == {"maintenance.schedule",
                                                          "maintenance.end"}

    @pytest.mark.parametrize("ends", ["before", "eight-days", "garbage"])
    def test_a_bad_window_is_a_form_error_and_nothing_is_saved(
            self, workspace, client_for, ends) -> None:
        start = timezone.now().replace(second=0, microsecond=0)
        end = {"before": (start - dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"),
               "eight-days": (start + dt.timedelta(days=8)).strftime("%Y-%m-%dT%H:%M"),
               "garbage": "soon"}[ends]
        response = client_for("olga").post(
            reverse("providers:maintenance_add", args=["acme"]),
            {"provider": "", "starts_at": start.strftime("%Y-%m-%dT%H:%M"), "ends_at": end,
             "reason": "x"})
        assert response.status_code == 400
        assert 'role="alert"' in response.content.decode()
        assert not MaintenanceWindow.objects.exists()

    def test_viewers_see_windows_but_may_not_schedule(self, workspace, client_for) -> None:
        assert client_for("vic").get(
            reverse("providers:maintenance", args=["acme"])).status_code == 200
        assert client_for("vic").post(
            reverse("providers:maintenance_add", args=["acme"]), {}).status_code == 403

    def test_checks_inside_a_window_are_left_out_of_uptime(self, workspace) -> None:
        config = remote(workspace)
        # Noon UTC, so the window and both checks fall on the same UTC day whenever this runs
        # (from midnight to 02:00 the window used to straddle yesterday).
        now = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
        MaintenanceWindow.objects.create(workspace=workspace, provider=None, reason="upgrade",
                                         starts_at=now - dt.timedelta(hours=2),
                                         ends_at=now - dt.timedelta(hours=1))
        observe(config, False, now - dt.timedelta(minutes=90))  # inside: not counted
        observe(config, True, now - dt.timedelta(minutes=30))

        with time_machine.travel(now, tick=False):
            today = history.uptime_days(config)[-1]

        assert (today.uptime, today.checks, today.maintenance_checks) == (100.0, 1, 1)


class TestSlaExport:
    def test_it_exports_checks_and_incidents_as_csv(self, outage, client_for) -> None:
        client = client_for("vic")
        url = reverse("providers:sla_export", args=["acme"])

        checks = b"".join(client.get(url, {"what": "checks", "days": "7"}).streaming_content)
        incidents = b"".join(client.get(url, {"what": "incidents", "days": "7"})
                             .streaming_content)

        rows = list(csv.DictReader(io.StringIO(checks.decode())))
        assert [r["ok"] for r in rows] == ["true", "false", "false", "true"]
        assert rows[1]["latency_ms"] == ""  # a failure has no latency
        [incident] = list(csv.DictReader(io.StringIO(incidents.decode())))
        assert (incident["state"], incident["duration_seconds"],
                incident["first_error"]) == ("down", "600", "503 from upstream")

    def test_a_formula_in_a_note_is_neutralised(self, outage, client_for) -> None:
        [incident] = history.incidents(outage)
        IncidentNote.objects.create(transition=incident.opened, text="=HYPERLINK(\"x\")")
        body = b"".join(client_for("vic").get(
            reverse("providers:sla_export", args=["acme"]),
            {"what": "incidents", "days": "7"}).streaming_content).decode()
        assert "'=HYPERLINK" in body

    @pytest.mark.parametrize("query", [{}, {"what": "everything", "days": "7"},
                                       {"what": "checks", "days": "0"},
                                       {"what": "checks", "days": "x" * 2000}])
    def test_bad_parameters_get_a_clear_400(self, outage, client_for, query) -> None:
        response = client_for("vic").get(reverse("providers:sla_export", args=["acme"]), query)
        assert response.status_code == 400
        assert b"Choose what to export" in response.content


class TestBadges:
    def test_a_badge_shows_names_and_states_only_and_dies_with_its_key(
            self, workspace, outage, client) -> None:
        key = workspace_badge_key_rotate(actor=SYSTEM, workspace=workspace)
        observe(outage, True, timezone.now())  # a fresh check: ok, not stale

        svg = client.get(reverse("providers:badge_provider_svg", args=[key, "remote"]))
        data = client.get(reverse("providers:badge_provider_json", args=[key, "remote"])).json()
        overall = client.get(reverse("providers:badge_json", args=[key])).json()

        assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml"
        assert b"Remote: ok" in svg.content
        assert data == {"label": "Remote", "status": "ok", "up": True}
        assert overall["label"] == "Acme"
        new_key = workspace_badge_key_rotate(actor=SYSTEM, workspace=workspace)
        assert client.get(reverse("providers:badge_json", args=[key])).status_code == 404
        assert client.get(reverse("providers:badge_json", args=[new_key])).status_code == 200
        workspace_badge_key_rotate(actor=SYSTEM, workspace=workspace, disable=True)
        assert client.get(reverse("providers:badge_json", args=[new_key])).status_code == 404

    def test_a_badge_escapes_the_provider_name(self, workspace, client) -> None:
        config = remote(workspace, "odd")
        config.name = "<script>x</script>"
        config.save(update_fields=["name"])
        key = workspace_badge_key_rotate(actor=SYSTEM, workspace=workspace)
        body = client.get(reverse("providers:badge_provider_svg", args=[key, "odd"])).content
        assert b"<script>" not in body and b"&lt;script&gt;" in body

    def test_the_panel_counts_the_time_travelled_outage(self, workspace) -> None:
        config = remote(workspace)
        start = timezone.now() - dt.timedelta(days=3)
        with time_machine.travel(start, tick=False):
            observe(config, False, start)
            observe(config, False, start + dt.timedelta(minutes=1))
        observe(config, True, start + dt.timedelta(minutes=30))
        [incident] = history.incidents(config)
        assert incident.duration == dt.timedelta(minutes=30)
