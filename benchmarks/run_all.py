"""Every benchmark in one command; writes the figures to docs/benchmarks.md.

Runs, each in its own process and its own throwaway database on the server in DATABASE_URL:
``memory_1m.py`` (seeds 1,000,000 items into a fresh database, then medians of the item list's
first and a deep page, search for a rare and a common term, detail, edit, recall, export
throughput beside a raw psycopg read, and the database size), ``gdpr_erasure.py`` (erasing a
subject with 10,000 items across two providers), ``health_poll.py`` (polls with hanging
providers), ``scanner.py`` (held-out recall, false positives, throughput), ``recall_roundtrip.py``
and ``export_memory.py``. Prints each script's own output as it goes, then writes a summary
table and every script's output to ``docs/benchmarks.md``. ``--only`` reruns some scripts and keeps
the others' last results (kept in ``docs/benchmarks.json``, which the page is written from).

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/run_all.py [--items N] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from support import ROOT

SCRIPTS: dict[str, list[str]] = {
    "memory_1m": ["memory_1m.py"],
    "gdpr_erasure": ["gdpr_erasure.py"],
    "health_poll": ["health_poll.py"],
    "scanner": ["scanner.py"],
    "recall_roundtrip": ["recall_roundtrip.py"],
    "export_memory": ["export_memory.py"],
    "webhooks": ["webhooks.py"],
}


def _postgres_version() -> str:
    try:
        out = subprocess.run(["psql", "--version"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run(name: str, argv: list[str], summary: Path) -> tuple[str, float, int]:
    print(f"\n=== {name} ===", flush=True)
    started = time.monotonic()
    env = {**os.environ, "BENCH_SUMMARY": str(summary)}
    process = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / argv[0]), *argv[1:]],
                               cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    lines = []
    assert process.stdout is not None
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    code = process.wait()
    return "".join(lines), time.monotonic() - started, code


DATA = ROOT / "docs" / "benchmarks.json"


def write_report(results: dict[str, dict[str, Any]], items: int) -> Path:
    cpu = os.cpu_count()
    lines = [
        "# Benchmarks",
        "",
        f"Written by `benchmarks/run_all.py` (last run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} "
        f"UTC): {cpu} CPU cores, Python {platform.python_version()}, {_postgres_version()}, "
        f"{items:,} items for the scale run. Times are medians of repeated runs; each script "
        "creates and drops its own database. Tests assert no timings; these figures are "
        "measured here, on a shared development machine (read them as upper bounds).",
        "",
        "| benchmark | figure | value | unit |",
        "| --- | --- | ---: | --- |",
    ]
    for name in SCRIPTS:
        for row in results.get(name, {}).get("figures", []):
            value = row["value"]
            if isinstance(value, int) or abs(value) >= 100:
                shown = f"{value:,.0f}"
            else:
                shown = f"{value:,.3f}".rstrip("0").rstrip(".")
            lines.append(f"| {name} | {row['name']} | {shown} | {row['unit']} |")
    lines += ["", "## Each script's output", ""]
    for name in SCRIPTS:
        if name not in results:
            continue
        result = results[name]
        status = "" if result["code"] == 0 else f" — exited with {result['code']}"
        lines += [f"### {name} ({result['seconds']:.0f} s, {result['ran_at']}{status})", "",
                  "```", result["output"].rstrip(), "```", ""]
    path = ROOT / "docs" / "benchmarks.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000,
                        help="items seeded for the scale run (memory_1m.py)")
    parser.add_argument("--only", nargs="*", choices=sorted(SCRIPTS), help="run only these")
    args = parser.parse_args()
    chosen = args.only or list(SCRIPTS)
    results: dict[str, dict[str, Any]] = json.loads(DATA.read_text()) if DATA.exists() else {}
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name in chosen:
            summary = Path(tmp) / f"{name}.jsonl"
            summary.touch()
            argv = list(SCRIPTS[name])
            if name == "memory_1m":
                argv += ["--items", str(args.items)]
            output, seconds, code = run(name, argv, summary)
            failed = failed or code != 0
            results[name] = {
                "figures": [json.loads(line) for line in summary.read_text().splitlines()
                            if line.strip()],
                "output": output, "seconds": round(seconds, 1), "code": code,
                "ran_at": f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
            }
            DATA.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    path = write_report(results, args.items)
    print(f"\nwrote {path.relative_to(ROOT)}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
