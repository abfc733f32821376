"""The webhook pages: who may use them, the secret shown once, the test button, enabling and
disabling, filters, bad input, CSRF."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.events.models import DeliveryAttempt, WebhookEndpoint
from memadmin.events.services import webhook_endpoint_create
from tests.events.receiver import verify

pytestmark = pytest.mark.django_db
SYSTEM = Actor.system("test")


@pytest.fixture
def endpoint(workspace, receiver):
    made, secret = webhook_endpoint_create(actor=SYSTEM, workspace=workspace, name="siem",
                                           url=receiver.url)
    made.plain_secret = secret  # type: ignore[attr-defined]  # what the page showed once
    return made


def url(name: str, endpoint=None, slug: str = "acme") -> str:
    kwargs = {"slug": slug}
    if endpoint is not None:
        kwargs["endpoint_id"] = str(endpoint.pk)
    return reverse(f"events:{name}", kwargs=kwargs)


@pytest.mark.parametrize(("who", "status"), [
    ("olga", 200), ("ada", 200), ("root", 200), ("vic", 403), ("alice", 403), ("carl", 403),
    ("nora", 403), ("mallory", 404)])
def test_only_operators_and_admins_see_the_endpoints(client_for, endpoint, who,
                                                     status) -> None:
    client = client_for(who)
    assert client.get(url("endpoints")).status_code == status
    assert client.get(url("endpoint", endpoint)).status_code == status
    assert client.post(url("endpoint_test", endpoint)).status_code in (
        {302} if status == 200 else {status})


def test_an_endpoint_of_another_workspace_is_not_found(client_for, endpoint, other_workspace,
                                                       users) -> None:
    from memadmin.workspaces.services import role_grant

    role_grant(actor=SYSTEM, workspace=other_workspace, user=users["vic"], role="operator")
    client = client_for("vic")
    assert client.get(url("endpoint", endpoint, slug="globex")).status_code == 404
    assert client.post(url("endpoint_remove", endpoint, slug="globex")).status_code == 404
    assert WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()


def test_adding_an_endpoint_shows_its_secret_once(client_for, receiver) -> None:
    client = client_for("olga")
    response = client.post(url("endpoint_add"), {
        "name": "warehouse", "url": receiver.url, "event_types": ["item.deleted",
                                                                 "subject.erased"]})
    assert response.status_code == 200
    made = WebhookEndpoint.objects.get(name="warehouse")
    assert made.event_types == ["item.deleted", "subject.erased"]
    assert made.secret.startswith("whsec_")
    assert made.secret in response.content.decode()
    # Never again: not on the page, not in the list, not in the audit trail.
    assert made.secret not in client.get(url("endpoint", made)).content.decode()
    assert made.secret not in client.get(url("endpoints")).content.decode()
    event = AuditEvent.objects.get(action="webhook.create")
    assert made.secret not in str(event.data)
    assert event.data["origin"] == f"http://127.0.0.1:{receiver.port}"


def test_bad_input_is_refused_with_the_form_and_nothing_saved(client_for) -> None:
    client = client_for("ada")
    for data, message in [
        ({"name": "x", "url": "ftp://example.com/x"}, "is not http or https"),
        ({"name": "x", "url": "https://169.254.169.254/latest"}, "link-local"),
        ({"name": "x", "url": "https://hooks.invalid/x", "event_types": ["item.eaten"]},
         "not one of the available choices"),
        ({"name": "x", "url": "https://hooks.invalid/x", "secret": "whsec_!!"}, "base64"),
        ({"name": "", "url": ""}, "This field is required"),
    ]:
        response = client.post(url("endpoint_add"), data)
        assert response.status_code == 400, data
        assert message in response.content.decode(), data
    assert not WebhookEndpoint.objects.exists()


def test_send_test_event_logs_the_answer_and_the_signature_verifies(
        client_for, endpoint, receiver) -> None:
    receiver.statuses = [202]
    client = client_for("olga")
    response = client.post(url("endpoint_test", endpoint), follow=True)
    page = response.content.decode()
    assert "Test event delivered: the endpoint answered 202" in page
    assert 'id="delivery-log"' in page and "webhook.test" in page
    [got] = receiver.received
    assert verify(endpoint.plain_secret, got)
    assert got.json()["data"]["test"] is True
    assert DeliveryAttempt.objects.get().status_code == 202


def test_a_failed_test_event_says_why_and_is_not_retried(client_for, endpoint,
                                                         receiver) -> None:
    receiver.statuses = [500]
    response = client_for("ada").post(url("endpoint_test", endpoint), follow=True)
    assert "The test event was not delivered: the endpoint answered 500" in \
        response.content.decode()
    assert endpoint.deliveries.get().state == "failed"


def test_disable_and_enable(client_for, endpoint) -> None:
    client = client_for("olga")
    assert client.post(url("endpoint_toggle", endpoint), {"enabled": "0"}).status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.enabled is False
    assert client.post(url("endpoint_toggle", endpoint), {"enabled": "1"}).status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.enabled is True
    assert client.post(url("endpoint_toggle", endpoint), {"enabled": "maybe"}).status_code == 400
    assert [e.action for e in AuditEvent.objects.filter(action__startswith="webhook.")
            .order_by("seq")] == ["webhook.create", "webhook.disable", "webhook.enable"]


def test_edit_changes_the_filter_and_keeps_the_secret(client_for, endpoint, receiver) -> None:
    client = client_for("ada")
    response = client.post(url("endpoint_edit", endpoint), {
        "name": "siem", "url": receiver.url, "event_types": ["item.expired"]})
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.event_types == ["item.expired"]
    assert endpoint.secret == endpoint.plain_secret


def test_rotating_shows_a_new_secret_once(client_for, endpoint) -> None:
    response = client_for("ada").post(url("endpoint_rotate", endpoint))
    endpoint.refresh_from_db()
    assert endpoint.secret != endpoint.plain_secret
    assert endpoint.secret in response.content.decode()


def test_remove(client_for, endpoint) -> None:
    response = client_for("ada").post(url("endpoint_remove", endpoint))
    assert response.status_code == 302
    assert not WebhookEndpoint.objects.exists()


def test_posts_need_the_csrf_token(users, endpoint) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["ada"])
    for name in ("endpoint_test", "endpoint_toggle", "endpoint_rotate", "endpoint_remove",
                 "endpoint_edit"):
        assert client.post(url(name, endpoint), {"enabled": "0"}).status_code == 403, name
    assert client.post(url("endpoint_add"), {"name": "x"}).status_code == 403
    assert WebhookEndpoint.objects.get().enabled


def test_the_tab_shows_for_those_who_may_use_it(client_for, endpoint) -> None:
    home = reverse("workspaces:home", kwargs={"slug": "acme"})
    assert url("endpoints") in client_for("olga").get(home).content.decode()
    assert url("endpoints") not in client_for("vic").get(home).content.decode()
