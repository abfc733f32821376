"""Peak memory of the export job at two sizes (PERF-NOTES "Streaming export"): it must stream.

For each size (default 10,000 and 100,000 items) this creates a throwaway database next to the
configured one, and in one subprocess migrates it and seeds the items with
``benchmarks/bulk_load.py``; in a second, fresh subprocess it runs the
``memory_export`` job (ZIP) over the bulk namespace and reports its peak RSS
(``getrusage(RUSAGE_SELF).ru_maxrss``). Seeding and exporting are separate processes, so the
seed's own memory never counts. Then it drops the database and prints both figures and the
ratio: in constant memory the ratio stays near 1 although the data grows tenfold.

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/export_memory.py [SMALL LARGE]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = (10_000, 100_000)


def _django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memadmin.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()


def _seed(count: int) -> None:
    _django()
    from bulk_load import bulk_load
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    bulk_load(count)


def _export(files: str) -> dict[str, Any]:
    import resource

    _django()
    from django.conf import settings

    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": files}}}
    from bulk_load import bulk_namespace

    from memadmin.audit.services import Actor
    from memadmin.jobs import runner
    from memadmin.jobs.models import Job
    from memadmin.memory.exports import memory_export_start
    from memadmin.providers import contract as c

    namespace = bulk_namespace()
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    job = memory_export_start(
        actor=Actor.system("benchmark"), workspace=namespace.resource.workspace,
        scope={"kind": "namespace", "id": str(namespace.pk), "label": "bulk/load"},
        namespaces=[namespace], filters=c.ItemFilters(), fmt="zip")
    started = time.monotonic()
    outcome = runner.run_job(str(job.pk))
    seconds = time.monotonic() - started
    job = Job.objects.get(pk=job.pk)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"outcome": outcome, "items": job.result.get("items"), "seconds": seconds,
            "baseline_kb": baseline, "peak_kb": peak}


def _database_url(base: str, name: str) -> str:
    head, _, tail = base.rpartition("/")
    query = ("?" + tail.split("?", 1)[1]) if "?" in tail else ""
    return f"{head}/{name}{query}"


def measure(count: int, base_url: str | None = None) -> dict[str, Any]:
    """Seed ``count`` items into a fresh database, export them in a fresh process, drop it."""
    import psycopg
    from psycopg import sql

    base_url = base_url or os.environ["DATABASE_URL"]
    name = f"memadmin_expmem_{os.getpid()}_{count}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(base_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        env = {**os.environ, "DATABASE_URL": _database_url(base_url, name),
               "DEBUG": os.environ.get("DEBUG", "true")}
        subprocess.run([sys.executable, __file__, "--seed", str(count)], env=env, check=True,
                       cwd=ROOT)
        with tempfile.TemporaryDirectory() as files:
            done = subprocess.run([sys.executable, __file__, "--export", files], env=env,
                                  check=True, cwd=ROOT, capture_output=True, text=True)
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        with psycopg.connect(base_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)))
    result["count"] = count
    return result


def main(argv: list[str]) -> None:
    if argv[:1] == ["--seed"]:
        _seed(int(argv[1]))
        return
    if argv[:1] == ["--export"]:
        print(json.dumps(_export(argv[1])))
        return
    sizes = tuple(int(a) for a in argv[:2]) if len(argv) >= 2 else DEFAULT_SIZES
    results = [measure(n) for n in sizes]
    for r in results:
        print(f"{r['count']:>9,} items: export {r['outcome']} in {r['seconds']:.1f} s, "
              f"peak RSS {r['peak_kb'] / 1024:.1f} MB "
              f"(baseline before the job {r['baseline_kb'] / 1024:.1f} MB)")
    small, large = results
    print(f"ratio of peaks ({large['count']:,} / {small['count']:,}): "
          f"{large['peak_kb'] / small['peak_kb']:.2f}")
    from support import record

    for r in results:
        record("export_memory", f"peak RSS exporting {r['count']:,} items",
               round(r["peak_kb"] / 1024, 1), "MB")
    record("export_memory", "ratio of peaks", round(large["peak_kb"] / small["peak_kb"], 2),
           "ratio")


if __name__ == "__main__":
    main(sys.argv[1:])
