"""The pages: the policy on the resource form, the item list's filter, labels on the item page,
the recall preview under redaction, and the subject-request page's suggestions (bytes per role
with canary values)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.gdpr.transitions import subject_request_create
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from memadmin.workspaces.services import resource_update

pytestmark = pytest.mark.django_db
NS = ["acme", "knowledge", "alice"]
CANARY_EMAIL = "canary.b1e2@example.org"
CANARY_CARD = "4666 1760 3137 2159"
SYSTEM = Actor.system("test")


@pytest.fixture
def put(local_config, namespace):
    provider = provider_for(local_config)
    counter = iter(range(10_000))

    def put(content: str, key: str = "", subject: str | None = None, ns=None) -> str:
        target = ns or namespace
        return provider.retain("peers" if key else "facts", key, content, "replace",
                               data_subject_id=subject, operation_id=f"put-{next(counter)}",
                               scope=c.Scope.of(target.partition_key), deadline=5).id

    return put


def test_the_resource_form_sets_the_policy_and_audits_it(client_for, resource) -> None:
    url = reverse("workspaces:resource_edit", args=["acme", "knowledge"])
    page = client_for("ada").get(url)
    assert b'name="pii_policy"' in page.content and b'name="secrets_policy"' in page.content
    answer = client_for("ada").post(url, {
        "description": "", "max_bytes": 1024, "item_max_bytes": 4096, "tools": "[]",
        "pii_policy": "redact_on_recall", "secrets_policy": "refuse"})
    assert answer.status_code == 302
    resource.refresh_from_db()
    assert (resource.pii_policy, resource.secrets_policy) == ("redact_on_recall", "refuse")
    event = AuditEvent.objects.filter(action="resource.update").latest("id")
    assert {"pii_policy", "secrets_policy"} <= set(event.data["fields"])
    shown = client_for("ada").get(reverse("workspaces:resource", args=["acme", "knowledge"]))
    assert b"Redact on recall" in shown.content


def test_a_bad_policy_value_is_a_form_error_not_a_500(client_for, resource) -> None:
    url = reverse("workspaces:resource_edit", args=["acme", "knowledge"])
    answer = client_for("ada").post(url, {
        "description": "", "max_bytes": 1024, "item_max_bytes": 4096, "tools": "[]",
        "pii_policy": "shout", "secrets_policy": "redact"})
    assert answer.status_code == 400
    resource.refresh_from_db()
    assert resource.pii_policy == "record"


def test_an_operator_cannot_change_the_policy(client_for, resource) -> None:
    url = reverse("workspaces:resource_edit", args=["acme", "knowledge"])
    answer = client_for("olga").post(url, {"pii_policy": "refuse", "secrets_policy": "redact",
                                           "max_bytes": 1024, "item_max_bytes": 4096})
    assert answer.status_code in (403, 404)
    resource.refresh_from_db()
    assert resource.pii_policy == "record"


def test_the_item_list_filters_by_detected_type(client_for, put) -> None:
    put(f"Paid with {CANARY_CARD}.", key="paid")
    put(f"Mail {CANARY_EMAIL}.", key="mail")
    url = reverse("memory:items", args=NS)
    page = client_for("nora").get(url, {"pii": "card"})
    assert page.status_code == 200
    assert b"peers/paid" in page.content and b"peers/mail" not in page.content
    assert b'name="pii"' in page.content
    bad = client_for("nora").get(url, {"pii": "shoe_size"})
    assert bad.status_code == 400


def test_the_item_page_names_the_types_and_staff_see_the_value(client_for, put, resource) -> None:
    resource_update(actor=SYSTEM, resource=resource, pii_policy="redact_on_recall")
    item_id = put(f"Ana: {CANARY_EMAIL}, {CANARY_EMAIL}", key="ana")
    page = client_for("nora").get(reverse("memory:item", args=[*NS, item_id]))
    assert page.status_code == 200
    assert b'id="pii-labels"' in page.content and "E-mail address ×2".encode() in page.content
    assert CANARY_EMAIL.encode() in page.content
    # A user who may not see the namespace's content gets no page at all.
    assert client_for("mallory").get(reverse("memory:item", args=[*NS, item_id])).status_code \
        == 404


def test_the_recall_preview_shows_what_agents_get(client_for, put, resource) -> None:
    resource_update(actor=SYSTEM, resource=resource, pii_policy="redact_on_recall")
    put(f"Ana pays with {CANARY_CARD} and reads {CANARY_EMAIL} daily.", key="ana")
    url = reverse("memory:recall", args=NS)
    for user in ("nora", "alice", "vic", "ada"):
        page = client_for(user).get(url, {"text": "Ana"})
        assert page.status_code == 200, user
        assert b"[card]" in page.content and b"[email]" in page.content, user
        assert CANARY_EMAIL.encode() not in page.content and b"3137" not in page.content, user


def test_the_subject_request_suggests_items_never_applies_them(client_for, put, users, workspace,
                                                                 other_namespace) -> None:
    about = put(f"Met Ana ({CANARY_EMAIL.upper()}), call +44 20 7946 0958.", key="ana")
    put("Nothing personal here.", key="plain")
    tagged = put(f"Already tagged: {CANARY_EMAIL}", key="tagged", subject=CANARY_EMAIL)
    by_phone = put("Her number: 020 7946 0958", key="phone", ns=other_namespace)
    request = subject_request_create(actor=Actor.of(users["carl"]), workspace=workspace,
                                     kind="access", subject_id=CANARY_EMAIL, reason="Art. 15")
    page = client_for("carl").get(reverse("gdpr:detail", args=["acme", request.pk]))
    assert page.status_code == 200
    body = page.content.decode()
    assert 'id="pii-suggestions"' in body and about in body and tagged not in body
    assert by_phone not in body  # the subject id is an e-mail address; the phone is not it
    from memadmin.memory.models import MemoryItem

    assert MemoryItem.objects.get(pk=about).data_subject_id is None
    by_number = subject_request_create(actor=Actor.of(users["carl"]), workspace=workspace,
                                       kind="access", subject_id="+442079460958",
                                       reason="Art. 15")
    body = client_for("carl").get(reverse("gdpr:detail", args=["acme", by_number.pk])) \
        .content.decode()
    assert about in body and by_phone in body
    # The page's live fragment (polled every 2 s) does not carry them.
    fragment = client_for("carl").get(reverse("gdpr:detail", args=["acme", by_number.pk]),
                                      HTTP_HX_REQUEST="true")
    assert b"pii-suggestions" not in fragment.content


def test_the_editor_refuses_personal_data_naming_the_type_and_keeps_the_item(
        client_for, put, resource) -> None:
    from memadmin.memory.models import MemoryItem

    resource_update(actor=SYSTEM, resource=resource, pii_policy="refuse")
    item_id = put("Ana likes tea.", key="ana")
    url = reverse("memory:item_edit", args=[*NS, item_id])
    answer = client_for("nora").post(url, {"content": f"Ana: {CANARY_CARD}", "mode": "replace",
                                           "expected_revision": 1})
    assert answer.status_code == 400
    assert b"Payment card number (card)" in answer.content
    item = MemoryItem.objects.get(pk=item_id)
    assert (item.content, item.revision) == ("Ana likes tea.", 1)


def test_the_editor_stores_a_pasted_secret_redacted(client_for, put) -> None:
    from memadmin.memory.models import MemoryItem, MemoryRevision

    item_id = put("Deploy notes.", key="deploy")
    url = reverse("memory:item_edit", args=[*NS, item_id])
    answer = client_for("nora").post(url, {
        "content": "Deploy notes. Key: AKIAQ7CANARYKEY12345", "mode": "replace",
        "expected_revision": 1})
    assert answer.status_code == 302
    assert MemoryItem.objects.get(pk=item_id).content == "Deploy notes. Key: [api_key]"
    assert not MemoryRevision.objects.filter(content__contains="AKIAQ7CANARY").exists()
