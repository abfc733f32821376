"""The demo's declared agent tools can all be called as declared (their schemas ask for what
the server's behaviours read)."""

from __future__ import annotations

import pytest

from memadmin.demo.material import _tools
from memadmin.workspaces.services import resource_update

from .conftest import SYSTEM, Api

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_tools(tool_resource):
    return resource_update(actor=SYSTEM, resource=tool_resource, tools=_tools("fact"))


def test_it_reads_an_item_by_the_id_list_returns(demo_tools, api: Api) -> None:
    stored = api.retain("The demo read tool works.")
    listed = api.agent("tool", tool="list", arguments={})["result"]["items"]
    assert [i["id"] for i in listed] == [stored["id"]]
    read = api.agent("tool", tool="read", arguments={"id": listed[0]["id"]})["result"]
    assert read["content"] == "The demo read tool works."


def test_the_read_tool_refuses_the_old_source_argument(demo_tools, api: Api) -> None:
    api.agent("tool", 400, "invalid_request", tool="read", arguments={"source": "facts/x.md"})
