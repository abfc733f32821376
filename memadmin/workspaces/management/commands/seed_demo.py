"""Seed the demo: users and two workspaces of agent memory.

Idempotent: a second run creates nothing and bumps no revision (it only resets the demo users'
passwords to ``MEMADMIN_DEMO_PASSWORD``). Bulk loads for benchmarks are
``benchmarks/bulk_load.py --items N``.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memadmin.demo import seed as demo


class Command(BaseCommand):
    help = "Create the demo users and workspaces (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        password = settings.MEMADMIN_DEMO_PASSWORD
        if not password:
            raise CommandError("set MEMADMIN_DEMO_PASSWORD to seed demo users")

        users = demo.ensure_users(password)
        result = demo.seed()
        granted = demo.grant_demo_roles(result.workspaces, users)
        requests = demo.seed_subject_requests(users)

        self.stdout.write("Workspaces: " + ", ".join(
            f"{w.slug} ({w.name})" for w in result.workspaces))
        if result.created:
            self.stdout.write(f"Created {len(result.created)} objects: "
                              + ", ".join(result.created))
        not_restored = (f", {result.not_restored} not restored (deleted, frozen or erased "
                        "since an earlier run)" if result.not_restored else "")
        if granted:
            self.stdout.write(f"Granted {granted} demo roles (operator, owner, compliance, "
                              "compliance2, viewer)")
        self.stdout.write(f"Items: {result.written} written, {result.skipped} skipped "
                          f"(already present){not_restored}")
        if requests:
            self.stdout.write(f"Created {requests} subject requests (one erasure awaits "
                              "approval by compliance2)")

        self.stdout.write(self.style.SUCCESS(
            f"Log in at http://{os.environ.get('RUN_ADDR') or '127.0.0.1:8000'}/ as admin / "
            f"{password}"))
        self.stdout.write("Demo users (same password): "
                          + ", ".join(user.get_username() for user in users))
