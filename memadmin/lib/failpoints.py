"""Failpoints: named places where a test can make a real process stop and wait.

Inactive unless ``MEMADMIN_FAILPOINTS_DIR`` is set in the process environment (tests set it for
a worker subprocess only). When ``<dir>/<name>.pause`` exists as the process reaches ``name``, it
writes ``<dir>/<name>.reached`` (JSON of the context) and waits until the pause file is removed.
A test can then kill the process at exactly that point: a barrier, not a sleep. A pause file
holding a JSON object pauses only where every key matches the context (``{"done": 10}``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any


def failpoint(name: str, **context: Any) -> None:
    directory = os.environ.get("MEMADMIN_FAILPOINTS_DIR")
    if not directory:
        return
    pause = Path(directory) / f"{name}.pause"
    try:
        wanted = pause.read_text().strip()
    except FileNotFoundError:
        return
    if wanted:
        conditions = json.loads(wanted)
        if any(str(context.get(k)) != str(v) for k, v in conditions.items()):
            return
    reached = Path(directory) / f"{name}.reached"
    tmp = reached.with_suffix(".tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), **context}, default=str))
    tmp.replace(reached)
    while pause.exists():
        time.sleep(0.01)
