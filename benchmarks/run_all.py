"""Every benchmark in one command; prints the issue's goals with their ratios and writes the
figures to docs/benchmarks.md.

Every ``benchmarks/*.py`` but the helpers (``HELPERS``, and the ``train_*`` scripts) is a
benchmark: a new script is picked up by being there (``ORDER`` only says who runs first), and
records its figures with ``support.record``. Each runs in its own process and its own
throwaway database on the server in DATABASE_URL; a script whose argument parser takes
``--items`` gets the scale of the run (``export_memory.py`` gets a tenth of it and the whole).
Each script's output is printed as it goes; then the goals (``GOALS``: each a figure, the bound
the issue sets and the reference it is a ratio to, measured in the same run) and
``docs/benchmarks.md`` (summary, goals, the machine's load average before and after each
script, every script's output). ``--only`` reruns some scripts and keeps the others' last
results (``docs/benchmarks.json``); the page then says which figures come from an earlier run.

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/run_all.py [--items N] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import dataclasses
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

HERE = ROOT / "benchmarks"
#: Modules in benchmarks/ that are not benchmarks (and every ``train_*`` script: each writes a
#: committed file from the corpus and measures nothing).
HELPERS = {"support", "bulk_load", "run_all"}
#: Who runs first (the rest follow by name).
ORDER = ["memory_1m", "erasure_1m", "export_memory", "recall_roundtrip", "recall_relevance",
         "health_poll", "gdpr_erasure", "scanner", "governed_stores"]


def discover() -> dict[str, list[str]]:
    names = sorted(p.stem for p in HERE.glob("*.py")
                   if p.stem not in HELPERS and not p.stem.startswith("train_"))
    ordered = [n for n in ORDER if n in names] + [n for n in names if n not in ORDER]
    return {name: [f"{name}.py"] for name in ordered}


SCRIPTS: dict[str, list[str]] = discover()


def _scaled(name: str, argv: list[str], items: int, runs: int | None = None) -> list[str]:
    if name == "export_memory":
        return [*argv, str(max(1, items // 10)), str(items)]
    source = (HERE / argv[0]).read_text(encoding="utf-8")
    if '"--items"' in source:
        argv = [*argv, "--items", str(items)]
    if runs and '"--runs"' in source:
        argv = [*argv, "--runs", str(runs)]
    return argv


@dataclasses.dataclass(frozen=True)
class Goal:
    """A goal of the issue: ``figure`` of ``benchmark`` within ``bound`` (``at_least`` or at
    most), a ratio to ``reference`` (a figure of the same run, or a fixed value named so)."""

    text: str
    benchmark: str
    figure: str
    bound: float
    at_least: bool
    reference: str
    reference_benchmark: str = ""

    def check(self, results: dict[str, dict[str, Any]], run_id: str) -> tuple[str, str, str]:
        """(figure, reference, verdict); a figure kept from an earlier run says so."""
        value = _figure(results, self.benchmark, self.figure)
        earlier = results.get(self.benchmark, {}).get("run") != run_id
        ref_bench = self.reference_benchmark or self.benchmark
        ref = _figure(results, ref_bench, self.reference)
        shown_ref = (f"{self.reference}: {_shown(ref)}" if ref is not None
                     else self.reference)
        if value is None:
            return "not measured in this run", shown_ref, "—"
        met = value >= self.bound if self.at_least else value <= self.bound
        sign = "≥" if self.at_least else "≤"
        verdict = f"{'met' if met else 'NOT met'} ({sign} {self.bound:g})"
        return (_shown(value) + (" (earlier run)" if earlier else ""), shown_ref, verdict)


def _figure(results: dict[str, dict[str, Any]], benchmark: str, prefix: str) -> float | None:
    for row in results.get(benchmark, {}).get("figures", []):
        if row["name"].startswith(prefix):
            return float(row["value"])
    return None


GOALS = [
    Goal("export ≥ 0.8 of COPY to JSON lines over the same rows and order", "memory_1m",
         "export / COPY", 0.8, True, "COPY to JSON lines, same rows and order"),
    Goal("export memory flat from a tenth of the items to all of them", "export_memory",
         "ratio of peaks", 1.2, False, "peak RSS exporting"),
    Goal("erasure ≥ 0.7 of one raw DELETE of the same rows", "erasure_1m",
         "erase one subject: store / raw DELETE", 0.7, True,
         "erase one subject: one raw DELETE"),
    Goal("no other writer stalled more than 100 ms by an erasure", "erasure_1m",
         "writer's worst stall", 100, False, "writer's median write before it"),
    Goal("recall through the HTTP client ≤ 2× the direct call (gunicorn, as make run)",
         "recall_roundtrip", "HTTP / direct", 2, False,
         "recall on the built-in provider directly"),
    Goal("recall with a common term ≤ 2× a rare term", "memory_1m",
         "recall common / rare term", 2, False, "recall: rare"),
    Goal("count with a common term ≤ 2× a rare term (capped at 10,000)", "memory_1m",
         "capped count common / rare term", 2, False, "count capped at 10,000: q="),
    Goal("health poll ≤ 1.05× the slowest deadline (50 providers, 10 hanging, 1 s)",
         "health_poll", "poll of 50 providers", 1.05, False, "slowest deadline 1 s"),
    Goal("endpoint batch writes ≥ 3,000 items/s with the scanner on", "endpoint_batch",
         "endpoint batch writes", 3000, True, "raw INSERT, one per transaction"),
    Goal("relevance set hit rate (printed beside the speed figures)", "recall_relevance",
         "hit rate among", 0.0, True, "hit rate, the set alone"),
]


def _shown(value: float) -> str:
    if float(value).is_integer() and abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _postgres_version() -> str:
    try:
        out = subprocess.run(["psql", "--version"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run(name: str, argv: list[str], summary: Path) -> tuple[str, float, int]:
    print(f"\n=== {name} ({' '.join(argv)}; load average {_load()}) ===", flush=True)
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


def goal_rows(results: dict[str, dict[str, Any]],
              run_id: str) -> list[tuple[str, str, str, str]]:
    return [(goal.text, *goal.check(results, run_id)) for goal in GOALS]


def write_report(results: dict[str, dict[str, Any]], items: int, run_id: str) -> Path:
    cpu = os.cpu_count()
    older = sorted(name for name, r in results.items() if r.get("run") != run_id)
    lines = [
        "# Benchmarks",
        "",
        f"Written by `benchmarks/run_all.py` (`make bench`) from the run of {run_id}: "
        f"{cpu} CPU cores, Python {platform.python_version()}, {_postgres_version()}, "
        f"{items:,} items for the scale runs. Times are medians of repeated runs; each script "
        "creates and drops its own database. Tests assert no timings. This is a shared "
        "development machine: the load average (1, 5 and 15 minutes) before and after each "
        "script is noted with its output; read absolute figures as upper bounds, and the "
        "ratios, each to a reference measured in the same run, as the comparison.",
        "",
    ]
    if older:
        lines += [f"Kept from an earlier run (not rerun this time): {', '.join(older)}.", ""]
    lines += ["## Goals (issue #18)", "", "| goal | figure | reference (same run) | verdict |",
              "| --- | ---: | --- | --- |"]
    for text, value, reference, verdict in goal_rows(results, run_id):
        lines.append(f"| {text} | {value} | {reference} | {verdict} |")
    lines += ["", "## Figures", "", "| benchmark | figure | value | unit |",
              "| --- | --- | ---: | --- |"]
    for name in SCRIPTS:
        for row in results.get(name, {}).get("figures", []):
            lines.append(f"| {name} | {row['name']} | {_shown(row['value'])} | {row['unit']} |")
    lines += ["", "## Each script's output", ""]
    for name in SCRIPTS:
        if name not in results:
            continue
        result = results[name]
        status = "" if result["code"] == 0 else f" — exited with {result['code']}"
        load = (f"; load average {result['load_before']} before, {result['load_after']} after"
                if "load_before" in result else "")
        lines += [f"### {name} ({result['seconds']:.0f} s, {result['ran_at']}{load}{status})",
                  "", "```", result["output"].rstrip(), "```", ""]
    path = ROOT / "docs" / "benchmarks.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000,
                        help="items seeded for the scale runs (memory_1m.py, erasure_1m.py, ...)")
    parser.add_argument("--runs", type=int, default=None,
                        help="timed runs per figure, for the scripts that take --runs")
    parser.add_argument("--only", nargs="*", choices=sorted(SCRIPTS), help="run only these")
    parser.add_argument("--report", action="store_true",
                        help="only rewrite the page from docs/benchmarks.json (its newest run)")
    args = parser.parse_args()
    chosen = args.only or list(SCRIPTS)
    results: dict[str, dict[str, Any]] = json.loads(DATA.read_text()) if DATA.exists() else {}
    results = {name: r for name, r in results.items() if name in SCRIPTS}
    if args.report:
        newest = max(results.values(), key=lambda r: r.get("run", ""))
        path = write_report(results, int(newest.get("items", args.items)), newest["run"])
        print(f"wrote {path.relative_to(ROOT)}")
        return
    run_id = f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name in chosen:
            summary = Path(tmp) / f"{name}.jsonl"
            summary.touch()
            argv = _scaled(name, list(SCRIPTS[name]), args.items, args.runs)
            before = _load()
            output, seconds, code = run(name, argv, summary)
            failed = failed or code != 0
            results[name] = {
                "figures": [json.loads(line) for line in summary.read_text().splitlines()
                            if line.strip()],
                "output": output, "seconds": round(seconds, 1), "code": code,
                "ran_at": f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC", "run": run_id,
                "load_before": before, "load_after": _load(), "items": args.items,
            }
            DATA.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
            write_report(results, args.items, run_id)  # a run cut short still leaves a page
    print("\n=== goals (issue #18), each a ratio to a reference of the same run ===")
    for text, value, reference, verdict in goal_rows(results, run_id):
        print(f"- {text}: {value} [{reference}] {verdict}")
    path = write_report(results, args.items, run_id)
    print(f"\nwrote {path.relative_to(ROOT)}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
