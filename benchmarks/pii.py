"""The personal-data and secrets detector (memadmin.privacy) against its labelled set
(tests/data/pii), and what it adds to a 16 KiB write.

Prints precision and recall per type over the labelled set (a finding counts when its type and
exact text match a label), then the median time (wall clock and CPU, 21 runs) of
``privacy.screening.screen_write`` -- everything the write path adds: detection, secret
redaction, the keyed hashes -- on three 16 KiB contents: ordinary notes without personal data,
notes with a realistic sprinkling of it (one value per ~2 KiB), and the labelled set back to
back (the worst case: a value every ~150 bytes). The reference in the same run is the
prompt-injection scanner on the same contents (already on the write path), as a ratio.

    .venv/bin/python benchmarks/pii.py

With ``BENCH_SUMMARY=<file>`` it also appends JSON lines for the lead's summary table.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from support import ROOT, setup_django

DATA = ROOT / "tests" / "data" / "pii"
#: labelled: the rules were written against it (the tests check every row); fresh: written after
#: the rules were frozen and never tuned on, so its figures are the honest ones.
SETS = ("labelled.jsonl", "fresh.jsonl")
SIZE = 16 * 1024
RUNS = 21

ORDINARY = [
    "The user prefers short answers and writes in British English.",
    "Standup moved to 9:15; the retro is every second Thursday in room 4.12.",
    "They are upgrading from Python 3.11.4 to 3.12.1 and rerunning the 250 tests.",
    "Order #4815162342 shipped on 2024-03-18; the invoice INV-2024-000153 totals 1,299.00 EUR.",
    "p50 latency is 12.5 ms and p99 48 ms at 2,000 requests per second.",
    "She keeps notes about gardening, cooking and the Lisbon trip in May.",
    "Commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the flaky export test.",
    "Request id 550e8400-e29b-41d4-a716-446655440000 appears in the trace.",
    "Budget for Q3: 48,000 EUR, of which 12,500 for contractors.",
    "The token count was 4096 and the key insight was caching the embeddings.",
]
PERSONAL = [
    "Ana's e-mail is ana.silva@example.pt and her mobile +351 912 345 678.",
    "Refunds go to IBAN GB29 NWBK 6016 1331 9268 19.",
    "Paid with card 4666 1760 3137 2159, expiry 09/27.",
    "Login from 203.0.113.42 was flagged by the firewall.",
    "The office line is (212) 555-0147.",
    "SSN on the W-2 form: 536-22-1234.",
    "CI used ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12 until it was rotated.",
    "Her National Insurance number is JG 10 37 42 A.",
]


def load(name: str = "labelled.jsonl") -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()
            if line.strip()]


def fill(lines: list[str], every: int = 0, extra: list[str] | None = None) -> str:
    """Lines repeated to 16 KiB; with ``every``, one of ``extra`` after each ``every`` lines."""
    out, i, j = [], 0, 0
    while len("\n".join(out).encode()) < SIZE:
        out.append(lines[i % len(lines)])
        i += 1
        if every and extra and i % every == 0:
            out.append(extra[j % len(extra)])
            j += 1
    return "\n".join(out).encode()[:SIZE].decode("utf-8", errors="ignore")


def quality(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int, int]]:
    from memadmin.privacy.detect import TYPES, detect

    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for row in rows:
        text = row["text"]
        got = Counter((f.type, text[f.start:f.end]) for f in detect(text).findings)
        want = Counter(tuple(e) for e in row["expect"])
        for (kind, _), n in (got & want).items():
            tp[kind] += n
        for (kind, _), n in (got - want).items():
            fp[kind] += n
        for (kind, _), n in (want - got).items():
            fn[kind] += n
    return {t: (tp[t], fp[t], fn[t]) for t in TYPES}


def report(name: str, rows: list[dict[str, Any]]) -> tuple[float, float]:
    """Prints precision and recall per type over one set; returns them over all types."""
    print(f"\n{name}: {len(rows)} texts, {sum(len(r['expect']) for r in rows)} labels, "
          f"{sum(1 for r in rows if not r['expect'])} negatives")
    print(f"{'type':<12} {'precision':>9} {'recall':>7} {'tp':>4} {'fp':>4} {'fn':>4}")
    totals = [0, 0, 0]
    for kind, (tp, fp, fn) in quality(rows).items():
        if not tp + fp + fn:
            print(f"{kind:<12} {'-':>9} {'-':>7} {0:>4} {0:>4} {0:>4}")
            continue
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        totals = [totals[0] + tp, totals[1] + fp, totals[2] + fn]
        print(f"{kind:<12} {precision:>9.3f} {recall:>7.3f} {tp:>4} {fp:>4} {fn:>4}")
    tp, fp, fn = totals
    precision, recall = tp / max(1, tp + fp), tp / max(1, tp + fn)
    print(f"{'all':<12} {precision:>9.3f} {recall:>7.3f} {tp:>4} {fp:>4} {fn:>4}")
    return precision, recall


def median_ms(work: Any, clock: Any = time.perf_counter) -> float:
    times = []
    for _ in range(RUNS):
        started = clock()
        work()
        times.append(clock() - started)
    return statistics.median(times) * 1000


def main() -> None:
    setup_django()
    from memadmin.privacy.screening import screen_write
    from memadmin.quarantine.scanner import scan

    class Resource:  # what screen_write reads of a resource
        pii_policy, secrets_policy, workspace_id = "record", "redact", "bench"

    rows = load()
    overall: dict[str, tuple[float, float]] = {}
    for name in SETS:
        overall[name] = report(name, load(name))
    print("(labelled.jsonl was written by the detector's author with the rules tuned on it; "
          "fresh.jsonl was written after and never tuned on)")

    contents = {
        "ordinary notes": fill(ORDINARY),
        "notes with personal data": fill(ORDINARY, every=25, extra=PERSONAL),
        "labelled set back to back": fill([r["text"] for r in rows]),
    }
    figures: dict[str, float] = {}
    print(f"\n16 KiB write, median of {RUNS} (wall / CPU), screen_write vs the injection scanner:")
    for name, text in contents.items():
        findings = len(screen_write(text, Resource).spans)
        wall = median_ms(lambda t=text: screen_write(t, Resource))
        cpu = median_ms(lambda t=text: screen_write(t, Resource), time.process_time)
        reference = median_ms(lambda t=text: scan(t))
        figures[name] = wall
        print(f"  {name:<27} {wall:7.2f} / {cpu:7.2f} ms, {findings:3d} findings; "
              f"injection scan {reference:7.2f} ms; ratio {wall / reference:5.2f}")
    goal = figures["notes with personal data"]
    print(f"goal < 2 ms for a 16 KiB write: {'met' if goal < 2 else 'NOT met'} "
          f"({goal:.2f} ms, notes with personal data)")

    summary = os.environ.get("BENCH_SUMMARY")
    if summary:
        out_rows = [("16 KiB ordinary median ms", figures["ordinary notes"], "ms"),
                    ("16 KiB with personal data median ms", goal, "ms"),
                    ("16 KiB dense median ms", figures["labelled set back to back"], "ms"),
                    ("fresh precision", overall["fresh.jsonl"][0], "ratio"),
                    ("fresh recall", overall["fresh.jsonl"][1], "ratio")]
        with Path(summary).open("a", encoding="utf-8") as out:
            for name, value, unit in out_rows:
                out.write(json.dumps({"benchmark": "pii", "name": name,
                                      "value": round(value, 4), "unit": unit}) + "\n")


if __name__ == "__main__":
    main()
