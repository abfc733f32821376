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


def csv_chunks(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[bytes]:
    writer = csv.writer(_Echo())
    buffer: list[str] = [writer.writerow(list(header))]
    size = len(buffer[0])
    for row in rows:
        line = writer.writerow([csv_cell(cell) for cell in row])
        buffer.append(line)
        size += len(line)
        if size >= CHUNK:
            yield "".join(buffer).encode()
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer).encode()
