"""``make bench`` runs every script of benchmarks/ that is a benchmark, and no other: a
training script rewrites a committed file and measures nothing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def run_all() -> Any:
    sys.path.insert(0, str(BENCHMARKS))        # (its ``support`` import, as when it runs)
    try:
        spec = importlib.util.spec_from_file_location("run_all_under_test",
                                                      BENCHMARKS / "run_all.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module        # (its dataclasses look their module up)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))
        sys.modules.pop("run_all_under_test", None)


def test_training_scripts_are_not_run_as_benchmarks() -> None:
    trainers = sorted(path.stem for path in BENCHMARKS.glob("train_*.py"))
    assert trainers == ["train_alphabets", "train_direction", "train_scanner_model",
                        "train_words"]
    assert not set(trainers) & set(run_all().SCRIPTS)


def test_the_benchmarks_are_run() -> None:
    assert {"scanner", "memory_1m", "health_poll"} <= set(run_all().SCRIPTS)
