"""A redacted recall in Chromium: an admin sets the resource's personal-data policy in the UI,
an agent writes a fact with an e-mail address over the wire, the agent's recall and the recall
preview show ``[email]``, and the staff item page shows the address."""

from __future__ import annotations

import datetime as dt
import uuid

import httpx
import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from memadmin.audit.services import Actor
from memadmin.memory.services import agent_token_mint
from memadmin.workspaces.services import resource_update
from tests.endpoint.conftest import TOOLS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CANARY = "ana.canary.42@example.org"


def wire(live_server: LiveServer, token: str, body: dict) -> dict:
    deadline = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=10)).isoformat()
    envelope = {"version": 1, "operationId": f"b-{uuid.uuid4().hex}",
                "deadlineAt": deadline.replace("+00:00", "Z"), **body}
    answer = httpx.post(f"{live_server.url}/oc-memory", json=envelope,
                        headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_redacted_recall(live_server: LiveServer, login, console_errors: list[str], workspace,
                           resource, namespace) -> None:
    resource_update(actor=Actor.system("test"), resource=resource, tools=TOOLS)
    _, token = agent_token_mint(actor=Actor.system("test"), workspace=workspace,
                                namespaces=[namespace], access="read-write", name="agent")

    page: Page = login("ada")
    page.goto(f"{live_server.url}/w/acme/r/knowledge/edit/")
    page.get_by_label("Personal data").select_option("redact_on_recall")
    page.get_by_role("button", name="Save resource").click()
    expect(page.locator("#pii-policy")).to_contain_text("Redact on recall")

    stored = wire(live_server, token, {
        "operation": "tool", "partition": namespace.partition_key, "tool": "remember",
        "arguments": {"fact": f"Ana prefers e-mail: {CANARY}, never phone calls."}})
    recall = wire(live_server, token, {"operation": "recall",
                                       "partition": namespace.partition_key,
                                       "input": {"text": "Ana"}})
    assert "Ana prefers e-mail: [email], never phone calls." in recall["text"]
    assert CANARY not in str(recall)

    page.goto(f"{live_server.url}/w/acme/r/knowledge/n/alice/recall/")
    page.get_by_label("What the agent receives as input").fill("Ana")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#recall-text")).to_contain_text("Ana prefers e-mail: [email]")
    assert CANARY not in page.content()

    page.goto(f"{live_server.url}/w/acme/r/knowledge/n/alice/items/{stored['result']['id']}/")
    expect(page.locator("#item-content")).to_contain_text(CANARY)
    expect(page.locator("#pii-labels")).to_contain_text("E-mail address")
    assert console_errors == []
