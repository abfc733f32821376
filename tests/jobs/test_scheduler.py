"""The scheduler runs what the apps register and knows no app itself."""

from __future__ import annotations

import ast
from pathlib import Path

from django.test import override_settings

from memadmin.jobs import scheduler


def test_it_runs_every_apps_registered_duty() -> None:
    names = {duty.name for duty in scheduler.default_duties()}
    assert names == {"poll provider health", "expire health history", "reap jobs",
                     "worker heartbeat", "expire operation records", "expire export files",
                     "subject request upkeep", "apply retention policies",
                     "delete expired items", "deliver memory events", "expire the webhook log",
                     "anchor audit chains", "vacuum after erasures"}


@override_settings(MEMADMIN_HEALTH_INTERVAL=7)
def test_it_reads_a_settings_interval_when_it_starts() -> None:
    duty = next(d for d in scheduler.default_duties() if d.name == "poll provider health")
    assert duty.every == 7


def test_it_imports_no_other_app() -> None:
    tree = ast.parse(Path(scheduler.__file__).read_text())
    modules = {node.module for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) and node.module}
    assert {m for m in modules if m.startswith("memadmin.")
            and not m.startswith(("memadmin.jobs", "memadmin.lib"))} == set()
