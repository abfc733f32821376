"""Step 4 of a scan, continued: binary-to-text encodings over large alphabets, read back from
the text as written (issue 19: "every common text encoding"). Red-teaming tools' encoding
probes write orders in both:

- **Base2048**: a character for each 11 bits, from letters of Latin, Cyrillic, Greek,
  Armenian, Indic, Thai and other scripts; the last character holds the bits left over
  (right-aligned), or, if three or fewer, is one of eight Tibetan marks.
- **Ecoji** (version 1): an emoji for each 10 bits, five bytes to four emoji; "☕" pads a
  short last group, and one of four emoji ends a group of four bytes (its last two bits).
  The published encoder breaks its lines at 76 emoji.

Read from the text as written, not from the normalised text: the look-alike step folds
Base2048's Cyrillic and Greek letters, which are data here. A run is a candidate if it is long
enough and, for Base2048, holds characters of ``MIN_SCRIPTS`` blocks of 128 code points at
least (a word of one script has one or two: a long Russian or French word is no candidate).
A candidate that decodes to text (``transfer.printable_text``) is a block, judged as a plain
text is (PI-ENCODED-1). A text of ASCII only has neither (one check, in C).

The alphabets are the published encoders' (``alphabets.json``, read off their output by
``benchmarks/train_alphabets.py``; a test checks the file is what they write, and that every
text they encode reads back).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from memadmin.quarantine.scanner.limits import MAX_BLOCKS, MAX_DECODED
from memadmin.quarantine.scanner.transfer import _texty, printable_text

ALPHABETS_PATH = Path(__file__).with_name("alphabets.json")
MIN_B2048 = 8           # characters in a Base2048 run (11 bytes)
MIN_ECOJI = 8           # emoji in an Ecoji run (10 bytes)
MIN_SCRIPTS = 3         # blocks of 128 code points among a Base2048 run's characters

_TABLES: dict[str, str] = json.loads(ALPHABETS_PATH.read_text(encoding="utf-8"))
_B2048 = {c: v for v, c in enumerate(_TABLES["base2048"])}
_B2048_TAIL = {c: v for v, c in enumerate(_TABLES["base2048_tail"])}
_ECOJI = {c: v for v, c in enumerate(_TABLES["ecoji"])}
_ECOJI_PADDING = _TABLES["ecoji_padding"]
# the last emoji of a group of four bytes: the fourth byte's last two bits, as bits 9-8
_ECOJI_PADDING4 = {c: t << 8 for t, c in enumerate(_TABLES["ecoji_padding4"])}


def _class(chars: str) -> str:
    """A regex character class body for ``chars``, as ranges of consecutive code points."""
    points = sorted(set(map(ord, chars)))
    parts = []
    start = previous = points[0]
    for point in [*points[1:], -1]:
        if point != previous + 1:
            parts.append(re.escape(chr(start)) if start == previous
                         else f"{re.escape(chr(start))}-{re.escape(chr(previous))}")
            start = point
        previous = point
    return "".join(parts)


_B2048_CLASS = _class(_TABLES["base2048"] + _TABLES["base2048_tail"])
# a whole run (not a piece of one: the lookbehind fails inside a run, so each run is tried
# once and the search stays linear)
B2048_RE = re.compile(f"(?<![{_B2048_CLASS}])[{_B2048_CLASS}]{{{MIN_B2048},}}")
_ECOJI_CLASS = _class("".join(_ECOJI) + _ECOJI_PADDING + "".join(_ECOJI_PADDING4))
# emoji, each maybe shown as an emoji ("\ufe0f"), over the encoder's line breaks
_EMOJI = f"[{_ECOJI_CLASS}]\ufe0f?"
ECOJI_RE = re.compile(f"(?<![{_ECOJI_CLASS}\ufe0f])(?:{_EMOJI}){{{MIN_ECOJI},}}"
                      f"(?:[ \t]*\r?\n(?:{_EMOJI})+)*")


def _base2048(run: str) -> bytes | None:
    """The bytes of a Base2048 run (``MAX_DECODED`` at most), or None if it is none: a tail
    mark only last, and no bits left over where the text ends on a tail mark."""
    run = run[:MAX_DECODED * 8 // 11 + 1]
    if not run:
        return None
    number = 0
    for character in run[:-1]:
        value = _B2048.get(character)
        if value is None:
            return None
        number = number << 11 | value
    last = run[-1]
    width = 11
    value = _B2048.get(last)
    if value is None:
        value, width = _B2048_TAIL.get(last), 3
        if value is None:
            return None
    before = 11 * (len(run) - 1)
    size = (before + width) // 8
    kept = 8 * size - before                # bits of the last character that are data
    if kept <= 0 or value >> kept:
        return None
    return (number << kept | value).to_bytes(size, "big")


def _ecoji(run: str) -> bytes | None:
    """The bytes of an Ecoji run (line breaks and emoji-presentation selectors left out), or
    None if it is none: padding only at a group's end (concatenated texts, each padded, are
    read one after the other)."""
    symbols = [c for c in run if c in _ECOJI or c == _ECOJI_PADDING or c in _ECOJI_PADDING4]
    symbols = symbols[:MAX_DECODED * 4 // 5 + 4]
    out = bytearray()
    for i in range(0, len(symbols) - 3, 4):
        group = symbols[i:i + 4]
        number = 0
        size = 5
        for j, symbol in enumerate(group):
            value = _ECOJI.get(symbol)
            if symbol == _ECOJI_PADDING and j:
                size = min(size, j)
                value = 0
            elif value is None and symbol in _ECOJI_PADDING4 and j == 3 and size == 5:
                size = 4
                value = _ECOJI_PADDING4[symbol]
            elif value is None or size < 5:     # (after padding, only padding)
                return None
            number = number << 10 | value
        out += number.to_bytes(5, "big")[:size]
    return bytes(out)


def alphabet_blocks(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, decoded text)`` of each Base2048 or Ecoji run of ``text`` (as written)
    that decodes to text, ``MAX_BLOCKS`` at most. A run may start a few characters early (a
    letter or an emoji of the sentence before it): the first reading that is text wins.

    Both alphabets are non-ASCII, so a run lies in a run of "?" of the text as ASCII bytes
    (found in C); the patterns, whose classes hold hundreds of ranges, run only there (over
    16 KiB of notes they cost milliseconds). An Ecoji run may go on over line breaks."""
    if text.isascii():
        return []
    found: list[tuple[int, int, str]] = []
    covered = 0                           # where the last Ecoji run, over its lines, ended
    for other in _OTHER_RUN_RE.finditer(text.encode("ascii", "replace")):
        start, end = other.span()
        if start < covered:
            continue
        for match in B2048_RE.finditer(text, start, end):
            run = match.group()
            if len({ord(c) >> 7 for c in run}) >= MIN_SCRIPTS:
                _read(found, _base2048, 8, match.start(), run)
        for match in ECOJI_RE.finditer(text, start, end):
            if match.end() == end:        # its next lines too
                match = ECOJI_RE.match(text, match.start()) or match
                covered = match.end()
            _read(found, _ecoji, 4, match.start(), match.group())
        if len(found) >= MAX_BLOCKS:
            return found[:MAX_BLOCKS]
    return found


# runs of "?" in a text as ASCII bytes (``encode("ascii", "replace")``): its non-ASCII
# characters, as many in a row as a run of either alphabet holds at least (written as
# literals, which the regex engine searches for in C: "\?{8,}" is tried at every byte, 12x
# slower on 16 KiB of notes)
_OTHER_RUN_RE = re.compile(rb"\?" * min(MIN_B2048, MIN_ECOJI) + rb"\?*")


def _read(found: list[tuple[int, int, str]], decode: Callable[[str], bytes | None],
          steps: int, start: int, run: str) -> None:
    """Append the run's block to ``found`` if it decodes to text, from its first character
    or one of the next ``steps - 1``. Its first ``2 * steps`` characters are read first (whole
    groups of bits): a run whose head is no text is not decoded whole (a megabyte of runs of
    Base2048's letters cost seconds)."""
    for skip in range(min(steps, len(run) - 1)):
        piece = run[skip:]
        if len(piece) > 2 * steps:
            head = decode(piece[:2 * steps])
            if head is None or not _texty(head):
                continue
        data = decode(piece)
        decoded = printable_text(data) if data else None
        if decoded is not None:
            found.append((start + skip, start + len(run), decoded))
            return


def masked(text: str, blocks: list[tuple[int, int, str]]) -> str:
    """``text`` with each of its ``blocks`` (``alphabet_blocks(text)``) blanked, a space for
    each character but a line break (so every index stays): the rest of the scan reads no
    letters into a block (folded look-alikes, a cipher over the line, words of the model),
    which is judged by what it decodes to."""
    if not blocks:
        return text
    parts = []
    last = 0
    for start, end, _decoded in sorted(blocks):
        parts += [text[last:start], _NOT_A_BREAK_RE.sub(" ", text[start:end])]
        last = end
    parts.append(text[last:])
    return "".join(parts)


_NOT_A_BREAK_RE = re.compile(r"[^\n]")
