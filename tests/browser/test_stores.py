"""One workspace governing four stores in Chromium: the built-in store, a Markdown folder, a
LangGraph store and Mem0. An owner browses and edits each governed store (the pages say the
store does not enforce freezes), then compliance erases a data subject across all of them, a
real worker runs the cascade, and the signed receipt downloads."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from langgraph.store.postgres import PostgresStore
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.audit.services import Actor
from memadmin.gdpr.models import SubjectRequest
from memadmin.gdpr.receipts import receipt_verify
from memadmin.memory.models import MemoryItem
from memadmin.providers.mem0 import memory_for
from memadmin.providers.registry import namespace_scope, provider_for
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.services import namespace_create, resource_create, role_grant
from tests.conftest import PASSWORD
from tests.providers import conftest as governed

# The governed stores' fixtures (tests/providers/conftest.py), here too.
langgraph_url = governed.langgraph_url
langgraph_store = governed.langgraph_store
mem0_settings = governed.mem0_settings

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SYSTEM = Actor.system("test")
SUBJECT = "cust-1042"


@pytest.fixture
def stores(workspace, local_config, namespace, users, tmp_path, langgraph_store,
           mem0_settings):
    """The built-in store and three governed ones, each holding something about SUBJECT."""
    provider_for(local_config).retain(
        "facts", "", "Maria Lopez asked for invoices by email.", "replace",
        data_subject_id=SUBJECT, operation_id="s-1", scope=namespace_scope(namespace),
        deadline=5)

    root = tmp_path / "agents"
    (root / "billing-bot" / "peers").mkdir(parents=True)
    (root / "billing-bot" / "peers" / "maria.md").write_text(
        f"---\ndata_subject_id: {SUBJECT}\n---\nMaria prefers email.")
    (root / "billing-bot" / "pins.md").write_text("Refund window: 30 days.")
    files = provider_config_create(actor=SYSTEM, workspace=workspace, slug="files",
                                   name="Agent files", kind="markdown", probed=True,
                                   options={"root": str(root)})
    res = resource_create(actor=SYSTEM, workspace=workspace, provider=files,
                          slug="agent-files")
    namespace_create(actor=SYSTEM, resource=res, slug="billing-bot")

    with PostgresStore.from_conn_string(langgraph_store) as store:
        store.put(("memories", SUBJECT), "contact", {"content": "Call after 10:00 CET."})
        store.put(("memories", "cust-7"), "contact", {"content": "Calls on Fridays."})
    graph = provider_config_create(
        actor=SYSTEM, workspace=workspace, slug="graph", name="LangGraph store",
        kind="langgraph", credential=langgraph_store, probed=True,
        options={"prefixes": {"customers": ["memories"]}, "subject": {"position": 1}})
    res = resource_create(actor=SYSTEM, workspace=workspace, provider=graph,
                          slug="customer-memories")
    namespace_create(actor=SYSTEM, resource=res, slug="customers")

    agent = f"support-{workspace.pk.hex[:8]}"
    memory_for(mem0_settings).add("Maria's account number ends in 4410.", user_id=SUBJECT,
                                  agent_id=agent, infer=False)
    mem0 = provider_config_create(
        actor=SYSTEM, workspace=workspace, slug="mem0", name="Mem0", kind="mem0", probed=True,
        options={"config": mem0_settings, "scopes": {"support": {"agent_id": agent}}})
    res = resource_create(actor=SYSTEM, workspace=workspace, provider=mem0, slug="mem0-memory")
    namespace_create(actor=SYSTEM, resource=res, slug="support")

    carol = User.objects.create_user("carol", "carol@example.com", PASSWORD)
    role_grant(actor=SYSTEM, workspace=workspace, user=carol, role="compliance")
    return {"root": root, "langgraph": langgraph_store, "mem0": mem0_settings, "agent": agent}


def residue(stores) -> dict[str, int]:
    with PostgresStore.from_conn_string(stores["langgraph"]) as store:
        graph = len(store.search(("memories", SUBJECT), limit=10))
    mem0 = memory_for(stores["mem0"]).get_all(filters={"user_id": SUBJECT}, top_k=10)
    return {
        "local": MemoryItem.objects.filter(data_subject_id=SUBJECT).count(),
        "markdown": int((stores["root"] / "billing-bot" / "peers" / "maria.md").exists()),
        "langgraph": graph,
        "mem0": len(mem0["results"]),
    }


def test_an_owner_edits_each_store_and_compliance_erases_a_subject_across_all(
    live_server: LiveServer, login, console_errors: list[str], stores, page: Page,
) -> None:
    login("alice")
    base = f"{live_server.url}/w/acme"

    # The Markdown folder: browse, open, edit; the file on disk changes, atomically.
    page.goto(f"{base}/r/agent-files/n/billing-bot/items/")
    page.get_by_text("Freeze or hold").click()
    expect(page.locator(".freeze-box")).to_contain_text("The store does not enforce it.")
    page.get_by_role("link", name="pins.md").click()
    expect(page.locator("#item-content")).to_have_text("Refund window: 30 days.")
    page.get_by_role("link", name="Edit").click()
    page.get_by_role("textbox", name="Content").fill("Refund window: 30 days from delivery.")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#item-content")).to_have_text("Refund window: 30 days from delivery.")
    assert (stores["root"] / "billing-bot" / "pins.md").read_text() == \
        "Refund window: 30 days from delivery."

    # The LangGraph store: its items and their main text field; an edit goes through put().
    page.goto(f"{base}/r/customer-memories/n/customers/items/")
    expect(page.get_by_role("link", name="facts/contact.md")).to_have_count(2)
    page.get_by_role("link", name="facts/contact.md").first.click()
    expect(page.locator("#item-content")).to_contain_text("Call")
    page.get_by_role("link", name="Edit").click()
    page.get_by_role("textbox", name="Content").fill("Call after 11:00 CET.")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#item-content")).to_have_text("Call after 11:00 CET.")

    # Mem0: the memory an agent added, listed with Mem0's own history as its revisions.
    page.goto(f"{base}/r/mem0-memory/n/support/items/")
    expect(page.locator("body")).to_contain_text("account number ends in 4410")
    page.get_by_role("button", name="Log out").click()

    # Compliance erases the subject across the four providers.
    login("carl")
    page.goto(f"{base}/")
    page.get_by_role("navigation", name="Workspace").get_by_role(
        "link", name="Subject requests").click()
    page.get_by_role("link", name="New request…").click()
    page.get_by_label("Erasure (Art. 17)").check()
    page.get_by_label("Data-subject id").fill(SUBJECT)
    page.get_by_label("Reason / legal basis").fill("Customer request, ticket 5120")
    page.get_by_role("button", name="Create request").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "new")
    page.get_by_role("button", name="Submit for approval").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "awaiting_approval")
    request_url = page.url
    page.get_by_role("button", name="Log out").click()
    login("carol")
    page.goto(request_url)
    page.get_by_role("button", name="Approve").click()
    expect(page.locator("#request-state")).to_have_attribute("data-state", "approved")

    call_command("db_worker", batch=True, startup_delay=False, reload=False)
    expect(page.locator("#request-state")).to_have_attribute("data-state", "completed",
                                                             timeout=20_000)
    expect(page.locator("#steps tbody tr")).to_have_count(4)
    expect(page.locator("#verification")).to_contain_text("no residue found")

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download signed receipt").click()
    document = json.loads(download_info.value.path().read_text(encoding="utf-8"))
    req = SubjectRequest.objects.get()
    assert receipt_verify(document) == req.receipt_key_id
    assert document["receipt"]["state"] == "completed"
    assert residue(stores) == {"local": 0, "markdown": 0, "langgraph": 0, "mem0": 0}
    assert (stores["root"] / "billing-bot" / "pins.md").exists()  # not about the subject
    assert SUBJECT not in page.content()
    assert console_errors == []
