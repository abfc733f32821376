"""Hidden channels: text smuggled in characters a person does not see, decoded.

Invisible characters carry bytes under every documented scheme we know of: variation selectors
as bytes (U+FE00-FE0F are 0-15, U+E0100-E01EF are 16-255, after any visible character), the
invisible operators U+2061-U+2064 as bits or base-4 digits, zero-width characters (U+200B-D,
U+2060, U+FEFF) as bits, with or without a separator, or as base-4 digits. Rather than one
decoder per published tool, a run of such characters is decoded under every assignment of its
(two to four) distinct symbols to digits, and counts as a channel if one assignment gives
UTF-8 text. Tag characters (U+E0000-E007F) and bidi overrides are flagged in ``normalise``.

Legitimate text has runs of one or two: a VS16 after an emoji, an ideographic variation
selector after a kanji, a ZWJ inside an emoji sequence, a ZWNJ inside a Persian word.
"""

from __future__ import annotations

import itertools
import re

from memadmin.quarantine.scanner.limits import (
    MAX_DECODED,
    MIN_BITS_RUN,
    MIN_UNDECODED_RUN,
    MIN_VS_RUN,
)
from memadmin.quarantine.text import non_ascii


def _run_re(chars: str, least: int) -> re.Pattern[str]:
    """Runs of at least ``least`` of ``chars``, written as one of them first: a pattern that
    starts with a class, which the regex engine skips to (it tries a repeat at every place)."""
    return re.compile(f"[{chars}][{chars}]{{{least - 1},}}")


_VS_RUN_RE = _run_re("\ufe00-\ufe0f\U000e0100-\U000e01ef", MIN_VS_RUN)
_OPS_RUN_RE = _run_re("\u2061-\u2064", MIN_BITS_RUN)
_ZW_RUN_RE = _run_re("\u200b\u200c\u200d\u2060\ufeff", MIN_BITS_RUN)
_ANY_RUN_RE = _run_re("\u200b-\u200f\u2060-\u2064\ufeff\ufe00-\ufe0f\U000e0100-\U000e01ef"
                      "\u180e\u061c", MIN_UNDECODED_RUN)
_HINT_RE = re.compile("[\u200b-\u200d\u2060-\u2064\ufeff\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_TEXTLIKE_RE = re.compile(r"[^\W\d_]|\s")


def _text(data: bytes) -> str | None:
    """``data`` as text if it is UTF-8 made mostly of letters and spaces (at least 4 chars)."""
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(decoded) < 4 or not all(c.isprintable() or c in "\n\t" for c in decoded):
        return None
    letters = len(_TEXTLIKE_RE.findall(decoded))
    return decoded if letters >= 0.6 * len(decoded) else None


def _digits_to_bytes(digits: list[int], base: int) -> bytes:
    per_byte = 8 if base == 2 else 4
    out = bytearray()
    for i in range(0, len(digits) - per_byte + 1, per_byte):
        value = 0
        for d in digits[i:i + per_byte]:
            value = value * base + d
        out.append(value)
    return bytes(out)


def _decode_symbols(run: str) -> str | None:
    """Text hidden in a run of two to four distinct invisible symbols, under any assignment."""
    run = run[: MAX_DECODED * 8]
    symbols = sorted(set(run))
    if len(symbols) == 2 or len(symbols) == 4:
        base = len(symbols)
        for order in itertools.permutations(symbols):
            value = {s: i for i, s in enumerate(order)}
            text = _text(_digits_to_bytes([value[c] for c in run], base))
            if text is not None:
                return text
    elif len(symbols) == 3:
        for separator in symbols:
            zero, one = (s for s in symbols if s != separator)
            for a, b in ((zero, one), (one, zero)):
                data = bytearray()
                for group in run.split(separator):
                    if 0 < len(group) <= 8:
                        data.append(int(group.replace(a, "0").replace(b, "1"), 2))
                text = _text(bytes(data))
                if text is not None:
                    return text
    return None


def _decode_selectors(run: str) -> str | None:
    data = bytes(ord(c) - 0xFE00 if ord(c) <= 0xFE0F else ord(c) - 0xE0100 + 16
                 for c in run[:MAX_DECODED])
    return _text(data)


def hidden_channels(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, decoded)`` of every run of invisible characters that carries text, and of
    every longer run that decodes under no scheme (nothing legitimate needs one)."""
    if text.isascii():
        return []
    others = non_ascii(text)
    if _HINT_RE.search(others) is None:
        return []                          # (invisible characters are all non-ASCII)
    return _channels(text, others)


def _channels(text: str, others: str | None = None) -> list[tuple[int, int, str]]:
    """``hidden_channels``' runs. ``others``: the text's non-ASCII characters, if known: a
    pattern finds no run in the text if it finds none there (a run's characters are all
    non-ASCII, so they are adjacent there too), a search of a few characters, not all."""
    found: list[tuple[int, int, str]] = []
    for pattern, decode in ((_VS_RUN_RE, _decode_selectors), (_OPS_RUN_RE, _decode_symbols),
                            (_ZW_RUN_RE, _decode_symbols)):
        if others is not None and pattern.search(others) is None:
            continue
        for match in pattern.finditer(text):
            decoded = decode(match.group())
            if decoded is not None:
                found.append((match.start(), match.end(), decoded))
    if others is not None and _ANY_RUN_RE.search(others) is None:
        return found
    for match in _ANY_RUN_RE.finditer(text):
        if not any(start < match.end() and match.start() < end for start, end, _ in found):
            found.append((match.start(), match.end(), ""))
    return found
