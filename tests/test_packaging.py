"""The data files the code reads at import time travel with the package: a wheel built from
pyproject.toml holds each one (setuptools takes only the files ``package-data`` names)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_json_data_file_is_declared_as_package_data() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]
    missing = []
    for path in sorted((ROOT / "memadmin").rglob("*.json")):
        package = ".".join(path.parent.relative_to(ROOT).parts)
        if not any(fnmatch.fnmatch(path.name, pattern) for pattern in declared.get(package, [])):
            missing.append(str(path.relative_to(ROOT)))
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"
