"""Demo stores memadmin did not create: a Markdown memory folder (under ``var/stores``) and a
LangGraph store in a database of its own on the same PostgreSQL, both in workspace ``acme``
beside the built-in store. They are written the way agents write them (files on disk, the
library's ``put``), then memadmin is pointed at them, so a new user sees it govern stores it
does not own. Idempotent: an existing folder or database is left as it is (edits survive).

Mem0 is not in the demo: importing it and building a ``Memory`` takes ~4 s on every start.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from django.db import connection

from memadmin.audit.services import Actor
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import install_command, stores_dir
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.models import Namespace, Resource, Workspace
from memadmin.workspaces.services import namespace_create, resource_create

MARKDOWN_ROOT = "demo-agents"
LANGGRAPH_DATABASE = "memadmin_demo_langgraph"

#: agent or crew folder -> tier-relative label -> content (front matter names the subject).
MARKDOWN_FILES: dict[str, dict[str, str]] = {
    "billing-bot": {
        "AGENT.md": """\
            # Billing bot
            I answer invoice, refund and payment questions for Acme customers by chat.
            I never promise a refund above 200 EUR: those go to a human (billing queue).
            """,
        "PERSONA.md": """\
            Friendly, brief, precise with numbers. Always quote the invoice number back.
            """,
        "pins.md": """\
            - The refund window is 30 days from delivery (policy REF-2).
            - Card payments settle in 2 business days; SEPA in up to 5.
            - Escalations: billing-oncall@acme.example (Dana Whitfield this week).
            """,
        "lessons.md": """\
            - Ask for the invoice number before looking anything up: names collide.
            - A "double charge" is usually a pending authorisation; check settlement first.
            """,
        "daily/2026-11-30.md": """\
            ---
            data_subject_id: cust-1042
            ---
            - 09:12 Maria Lopez (cust-1042): invoice INV-88231 charged twice. Pending
              authorisation, told her it drops in 2 days.
            - 14:40 Refund of 49.90 EUR approved for order 77312 (damaged box).
            """,
        "peers/maria-lopez.md": """\
            ---
            data_subject_id: cust-1042
            ---
            Maria Lopez, customer since 2021. Prefers email over chat; writes in Spanish
            and English. Billing address changed in October (Valencia).
            """,
        "peers/tom-becker.md": """\
            ---
            data_subject_id: cust-2210
            ---
            Tom Becker. Disputes every late fee; has a standing exception approved by Dana
            (late fees waived until March).
            """,
    },
    "ops-crew": {
        "CREW.md": """\
            # Ops crew
            The on-call agents of Acme's order platform: triage, runbooks, handovers.
            """,
        "pins.md": """\
            - Status page: status.acme.example. Post within 15 minutes of a SEV-2.
            - Never restart the payments worker during the 02:00 settlement batch.
            """,
        "daily/2026-11-29.md": """\
            - SEV-3: checkout latency p95 2.4 s for 20 minutes; cache node 3 evicted. Resolved.
            - Handover to APAC: watch the retry queue, it was at 1,200 at 18:00.
            """,
        "peers/priya-raman.md": """\
            Priya Raman, SRE lead. Wants a summary in the channel, not a DM.
            """,
    },
}

#: (LangGraph namespace, key, value) as a LangGraph / LangMem agent would put them.
LANGGRAPH_ITEMS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (("memories", "cust-1042"), "preference-contact",
     {"content": "Maria prefers email; do not call before 10:00 CET.", "kind": "preference"}),
    (("memories", "cust-1042"), "episode-2026-11-30",
     {"content": "Charged twice for INV-88231; explained pending authorisation.",
      "kind": "episode"}),
    (("memories", "cust-2210"), "preference-language",
     {"content": "Tom writes in German; answer in German.", "kind": "preference"}),
    (("memories", "cust-3307"), "profile",
     {"tier": "gold", "timezone": "Asia/Singapore", "since": "2019-04"}),
    (("memories", "cust-3307"), "episode-2026-11-28",
     {"content": "Asked to move the renewal date to January; approved by sales.",
      "kind": "episode"}),
]


def seed_stores(workspace: Workspace, actor: Actor, created: list[str], *,
                langgraph_database: str = LANGGRAPH_DATABASE) -> None:
    """The Markdown folder and the LangGraph store of the demo, in ``workspace``."""
    _seed_markdown(workspace, actor, created)
    if install_command("langgraph") is None:
        _seed_langgraph(workspace, actor, created, langgraph_database)


def _ensure(workspace: Workspace, actor: Actor, created: list[str], *, slug: str, name: str,
            kind: str, resource: str, description: str, namespaces: dict[str, str],
            **config: Any) -> None:
    provider = ProviderConfig.objects.filter(workspace=workspace, slug=slug).first()
    if provider is None:
        provider = provider_config_create(actor=actor, workspace=workspace, slug=slug,
                                          name=name, kind=kind, probed=True, **config)
        created.append(f"provider {workspace.slug}/{slug}")
    res = Resource.objects.filter(workspace=workspace, slug=resource).first()
    if res is None:
        res = resource_create(actor=actor, workspace=workspace, provider=provider,
                              slug=resource, description=description)
        created.append(f"resource {workspace.slug}/{resource}")
    for ns_slug, ns_description in namespaces.items():
        if not Namespace.objects.filter(resource=res, slug=ns_slug).exists():
            namespace_create(actor=actor, resource=res, slug=ns_slug, description=ns_description)
            created.append(f"namespace {workspace.slug}/{resource}/{ns_slug}")


def _seed_markdown(workspace: Workspace, actor: Actor, created: list[str]) -> None:
    root = stores_dir() / MARKDOWN_ROOT
    if not root.exists():
        for folder, files in MARKDOWN_FILES.items():
            for label, text in files.items():
                path = root / folder / label
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(textwrap.dedent(text), encoding="utf-8")
        created.append(f"Markdown folder var/stores/{MARKDOWN_ROOT}")
    _ensure(workspace, actor, created, slug="agent-files", name="Agent memory files",
            kind="markdown", resource="agent-files",
            description="The Markdown memory folders the billing bot and the ops crew keep "
                        "on disk (written by the agents; memadmin governs them).",
            namespaces={"billing-bot": "The billing chat agent's memory folder.",
                        "ops-crew": "The on-call crew's shared memory folder."},
            options={"root": MARKDOWN_ROOT, "subject_marker": "Subject:"})


def _server_conninfo(dbname: str) -> str:
    from psycopg.conninfo import make_conninfo

    params = connection.get_connection_params()
    keep = {k: v for k, v in params.items()
            if k in ("host", "port", "user", "password") and v not in (None, "")}
    return make_conninfo(**{k: str(v) for k, v in keep.items()}, dbname=dbname)


def _seed_langgraph(workspace: Workspace, actor: Actor, created: list[str],
                    database: str) -> None:
    import psycopg
    from langgraph.store.postgres import PostgresStore

    url = _server_conninfo(database)
    with psycopg.connect(_server_conninfo("postgres"), autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                               [database]).fetchone()
        if not exists:
            admin.execute(f'CREATE DATABASE "{database}"')
    if not exists:
        with PostgresStore.from_conn_string(url) as store:
            store.setup()
            for namespace, key, value in LANGGRAPH_ITEMS:
                store.put(namespace, key, value, index=False)
        created.append(f"LangGraph store database {database}")
    _ensure(workspace, actor, created, slug="langgraph-support", name="Support agent store "
            "(LangGraph)", kind="langgraph", resource="customer-memories",
            description="The LangGraph long-term memory of the support agent: one LangGraph "
                        "namespace per customer (memories, <customer id>).",
            namespaces={"customers": "Every customer's memories (LangGraph prefix memories)."},
            credential=url,
            options={"prefixes": {"customers": ["memories"]}, "subject": {"position": 1}})


def markdown_demo_root() -> Path:
    return stores_dir() / MARKDOWN_ROOT
