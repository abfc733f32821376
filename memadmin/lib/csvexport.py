"""Streaming CSV that spreadsheets open safely: cells that would run as formulas are quoted
with a leading apostrophe (CSV injection), and output is yielded in 64 KiB chunks."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

#: A spreadsheet runs a cell starting with one of these as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
CHUNK = 64 * 1024


def csv_cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           sort_keys=True)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class _Echo:
    """A file-like object whose ``write`` hands the line back to the csv writer's caller."""

    def write(self, value: str) -> str:
        return value


def csv_lines(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    """The header line, then one line per row, every cell made safe."""
    writer = csv.writer(_Echo())
    yield writer.writerow(list(header))
    for row in rows:
        yield writer.writerow([csv_cell(cell) for cell in row])


def buffered(chunks: Iterable[str]) -> Iterator[bytes]:
    """Text pieces joined into UTF-8 chunks of about CHUNK bytes (fewer, larger writes)."""
    buffer: list[str] = []
    size = 0
    for chunk in chunks:
        buffer.append(chunk)
        size += len(chunk)
        if size >= CHUNK:
            yield "".join(buffer).encode()
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer).encode()


def csv_chunks(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[bytes]:
    return buffered(csv_lines(header, rows))
