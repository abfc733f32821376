"""lib/ is the ground floor: framework glue that imports no app (DESIGN "Which way the imports
run"). Read from the source, so a lazy import inside a function counts too."""

from __future__ import annotations

import ast
from pathlib import Path

import memadmin

LIB = Path(memadmin.__file__).parent / "lib"


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                names.append("." * node.level + (node.module or ""))
            elif node.module:
                names.append(node.module)
    return names


def test_it_imports_no_app() -> None:
    upward = {f"{path.name}: {name}" for path in sorted(LIB.glob("*.py"))
              for name in _imports(path)
              if (name.startswith("memadmin.") and not name.startswith("memadmin.lib"))
              or name.startswith("..")}
    assert upward == set()


def test_it_holds_one_concern_per_middleware_module() -> None:
    from django.conf import settings

    ours = [m for m in settings.MIDDLEWARE if m.startswith("memadmin.lib.")]
    assert len({m.rsplit(".", 1)[0] for m in ours}) == len(ours) == 3
