"""The token reveal: copy buttons, the full endpoint URL and a curl command that works as
pasted (run here with the real curl against the live server); the recall preview explains an
empty result."""

from __future__ import annotations

import html
import json
import subprocess

import pytest
from django.test import Client
from django.urls import reverse

from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

NS = ["acme", "knowledge", "alice"]


@pytest.mark.django_db(transaction=True)
def test_the_reveal_gives_the_endpoint_and_a_curl_command_that_works(
        live_server, users, namespace, local_config) -> None:
    provider_for(local_config).retain("peers", "bob", "hello from bob's notes", "replace",
                                      operation_id="tr-1",
                                      scope=c.Scope.of(namespace.partition_key), deadline=5)
    host, port = live_server.url.split("//")[1].rsplit(":", 1)
    nora = Client(SERVER_NAME=host)
    nora.force_login(users["nora"])
    response = nora.post(reverse("memory:token_mint", args=["acme"]), {
        "name": "bot", "access": "read", "namespaces": [str(namespace.pk)]}, SERVER_PORT=port)
    assert response.status_code == 200, response.content[:400]
    secret, page = response.context["secret"], response.content.decode()
    assert 'data-copy="new-token"' in page and 'data-copy="curl-example"' in page
    endpoint = response.context["endpoint"]
    assert endpoint == f"{live_server.url}/oc-memory"
    command = html.unescape(page.split('id="curl-example">')[1].split("</pre>")[0])
    assert secret in command and namespace.partition_key in command
    run = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert "hello from bob" in answer["text"]


@pytest.mark.django_db
def test_an_empty_recall_says_why(client_for, namespace, local_config) -> None:
    nora = client_for("nora")
    url = reverse("memory:recall", args=NS)
    empty = nora.get(url, {"text": "anything"}).content.decode()
    assert 'id="recall-empty"' in empty and "No item of this namespace matches" in empty
    nothing = nora.get(url, {"text": ""}).content.decode()
    assert "holds no memory an agent may read yet" in nothing
