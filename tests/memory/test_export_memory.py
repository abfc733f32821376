"""The export job streams: ten times the items must not need ten times the memory.

Each size runs in subprocesses against a throwaway database (benchmarks/export_memory.py): one
seeds it with ``bulk_load``, a fresh one runs the export job and reports its peak RSS.
5,000 vs 50,000 items rather than 10,000 vs 100,000: the larger pair takes about two minutes
here (the 100,000-item export alone ~46 s), the smaller one about a minute.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "export_memory.py"


def _measure():
    spec = importlib.util.spec_from_file_location("export_memory", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.measure


@pytest.mark.skipif(not os.environ.get("DATABASE_URL"), reason="needs a PostgreSQL server URL")
def test_it_exports_ten_times_the_items_in_the_same_memory() -> None:
    measure = _measure()
    small, large = measure(5_000), measure(50_000)
    assert small["outcome"] == large["outcome"] == "succeeded"
    assert (small["items"], large["items"]) == (5_000, 50_000)
    ratio = large["peak_kb"] / small["peak_kb"]
    assert ratio <= 1.5, f"peak RSS {small['peak_kb']} kB -> {large['peak_kb']} kB ({ratio:.2f})"
