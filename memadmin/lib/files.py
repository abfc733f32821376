"""Storage helpers over Django's ``default_storage`` (exports, access bundles, uploads).

Framework glue only: no app imports. Every name is a storage name (relative, forward slashes),
never an absolute path.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from typing import IO, Any

from django.core.files import File
from django.core.files.storage import default_storage

#: How much of a file is read at a time when searching it.
CHUNK = 64 * 1024


def storage_replace(name: str, content: IO[bytes]) -> str:
    """Store ``content`` under ``name``, replacing a file of that name; returns the name kept."""
    if default_storage.exists(name):
        default_storage.delete(name)
    return default_storage.save(name, File(content, name=name.rsplit("/", 1)[-1]))


def delete_file(name: str) -> int:
    """Delete one stored file if it exists; returns 1 if it did, else 0."""
    if name and default_storage.exists(name):
        default_storage.delete(name)
        return 1
    return 0


def walk(prefix: str) -> Iterator[str]:
    """Every stored file name under ``prefix`` (depth first); nothing if it does not exist."""
    try:
        directories, files = default_storage.listdir(prefix)
    except (FileNotFoundError, NotADirectoryError, OSError):
        return
    for name in files:
        yield f"{prefix}/{name}"
    for directory in directories:
        yield from walk(f"{prefix}/{directory}")


def delete_tree(prefix: str) -> int:
    """Delete every file under ``prefix`` (parts of a job's output); returns how many."""
    removed = 0
    for name in list(walk(prefix)):
        default_storage.delete(name)
        removed += 1
    return removed


def _json_needles(text: str) -> set[bytes]:
    """``text`` as it appears inside a JSON string, escaped or not, and as raw UTF-8."""
    return {json.dumps(text, ensure_ascii=False)[1:-1].encode(),
            json.dumps(text)[1:-1].encode(), text.encode()}


def _found_in(stream: Any, needles: set[bytes]) -> bool:
    overlap = max(len(n) for n in needles)
    tail = b""
    while chunk := stream.read(CHUNK):
        window = tail + chunk
        if any(n in window for n in needles):
            return True
        tail = window[-overlap:]
    return False


def file_mentions(name: str, text: str) -> bool:
    """Whether a stored file (JSON Lines, plain text, or a ZIP of them) contains ``text`` as
    is or as JSON writes it. Streamed in chunks with an overlap, so memory stays constant."""
    if not name or not text or not default_storage.exists(name):
        return False
    needles = _json_needles(text)
    with default_storage.open(name, "rb") as handle:
        if zipfile.is_zipfile(handle):
            handle.seek(0)
            with zipfile.ZipFile(handle) as archive:
                for member in archive.namelist():
                    with archive.open(member) as stream:
                        if _found_in(stream, needles):
                            return True
            return False
        handle.seek(0)
        return _found_in(handle, needles)
