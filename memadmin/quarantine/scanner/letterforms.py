"""Step 4 of a scan, continued: letters written in other forms, read back as plain letters.

Six ways past filters that match words, each undone by construction (issue 19): letters
split by a separator ("I.g.n.o.r.e", "i-g-n-o-r-e"), one letter per line, letters under
stacked combining marks ("Zalgo": "Í̶g̶n̶ó̶r̶é̶"), text turned upside down ("ǝɹouƃI", each
character turned half a circle and the text read from its end), braille ("⠠⠊⠛⠝⠕⠗⠑") and the
NATO spelling alphabet ("India Golf November Oscar Romeo Echo"). Each passage found is read
back and judged as plain text is (``decoded_blocks``, then PI-ENCODED-1 if a rule or the model
matches the reading).
Letters spaced out ("I g n o r e") are an encoded kind of their own (``encodings``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable

import ahocorasick_rs

from memadmin.quarantine.scanner.limits import MAX_BLOCKS, MIN_CODES
from memadmin.quarantine.scanner.words import split_run
from memadmin.quarantine.text import line_at, non_ascii

# ---------------------------------------------------------------------------------------------
# Letters split by a separator: a whole text (or line) with the same separator at every other
# place is read without it ("I.g.n.o.r.e. .a.l.l" is ".".join of the text, whatever its
# script and punctuation), and so is a run of ``MIN_CODES`` characters or more in a line so
# written; elsewhere, each word of three letters at least, each one alone between the same
# separator ("e.g." is two; digits make no such word: "v1.2.3.4", "127.0.0.1"), a separator
# right before or after the word belonging to it. A passage is a run of such lines (blank
# lines between), read when they hold at least ``MIN_CODES`` letters.
_SEPARATORS = ".-_/*|~+"
_SEPARATED_RE = re.compile(r"(?<![^\W_])(?:[.\-_/*|~+](?=[^\W\d_]))?[^\W\d_]([.\-_/*|~+])"
                           r"[^\W\d_](?:\1[^\W\d_])+(?:\1(?![^\W_]))?(?![^\W_])")
_SEPARATOR_DROP = str.maketrans("", "", _SEPARATORS)
# the hint: a letter or digit, a separator, three times, and a letter (over the text as bytes,
# where "?" stands for any non-ASCII character: a letter of another script)
_ALNUM = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz?"
_SEPARATED_CLASSES = bytes(ord("0") if byte in _ALNUM else ord("1") if chr(byte) in _SEPARATORS
                           else ord(".") for byte in range(256))
_SEPARATED_HINT = b"0101010"
# (a few places may differ: a separator of the text's own next to a line break)
SEPARATED_SHARE = 0.9


# a run of at least ``MIN_CODES`` characters with the same separator after each
_RUN_RE = re.compile(rf"[^\n]([.\-_/*|~+])(?:[^\n]\1){{{MIN_CODES - 2},}}[^\n]?")


def _interleaved(piece: str) -> str | None:
    """``piece`` without the separator at every other place, if it has one there."""
    for offset in (1, 0):
        between = piece[offset::2]
        if len(between) >= MIN_CODES and (max(map(between.count, _SEPARATORS))
                                          >= SEPARATED_SHARE * len(between)):
            return piece[1 - offset::2]
    return None


def _every_other(run: re.Match[str]) -> str:
    return run.group()[::2]


def _separated(norm: str, ascii_bytes: bytes) -> list[tuple[int, int, str]]:
    classes = ascii_bytes.translate(_SEPARATED_CLASSES)
    at = classes.find(_SEPARATED_HINT)
    if at < 0:
        return []
    whole = _interleaved(norm)
    if whole is not None:
        return [(0, len(norm), whole)]
    blocks: list[tuple[int, int, str]] = []
    first = last = -1
    letters = 0
    readings: list[str] = []
    while at >= 0:
        start, end = line_at(ascii_bytes, at)
        line = norm[start:end]
        reading, runs = _RUN_RE.subn(_every_other, line)
        found = len(line) - len(reading)   # (each run has as many separators as characters)
        if not runs:
            words = [match.group().translate(_SEPARATOR_DROP)
                     for match in _SEPARATED_RE.finditer(line)]
            found = sum(map(len, words))
            reading = _SEPARATED_RE.sub(_joined, line) if words else line
        if found:
            if first >= 0 and norm[last:start].strip():    # (a line of other text between)
                if letters >= MIN_CODES:
                    blocks.append((first, last, "".join(readings)))
                first, letters, readings = -1, 0, []
            if first >= 0:
                readings.append(norm[last:start])
            readings.append(reading)
            first = start if first < 0 else first
            last = end
            letters += found
        at = classes.find(_SEPARATED_HINT, end)
    if letters >= MIN_CODES:
        blocks.append((first, last, "".join(readings)))
    return blocks


def _joined(match: re.Match[str]) -> str:
    return match.group().translate(_SEPARATOR_DROP)


# ---------------------------------------------------------------------------------------------
# One letter per line ("I\ng\nn\no\nr\ne"): a run of short lines, most (``VERTICAL_SHARE``)
# of those not empty one character long (a character the scan spells out, "…" as "...", an
# emoji with its joiners, may take a few), with ``MIN_CODES`` letters at least, read as one
# line of their characters. Between words a writer puts a line holding a space or an empty
# line: where the run has lines holding a space, its empty lines are line breaks; where it has
# none, they are the spaces. The hint: three lines of one character in a row (a line break
# first: the engine skips to those).
VERTICAL_SHARE = 0.8
_VERTICAL_HINT_RE = re.compile(r"\n[^\n]\n[^\n]\n[^\n]\n")
_VERTICAL_RE = re.compile(r"(?:^|(?<=\n))(?:[^\n]{0,4}\n){7,}[^\n]{0,4}(?![^\n])")


def _vertical(norm: str) -> list[tuple[int, int, str]]:
    """The runs of ``norm`` written one letter per line, each read as one line."""
    if _VERTICAL_HINT_RE.search(norm) is None:
        return []
    blocks = []
    for run in _VERTICAL_RE.finditer(norm):
        text = run.group()
        lines = text.split("\n")
        filled = [line for line in lines if line]
        if (sum(map(str.isalpha, text)) >= MIN_CODES
                and sum(len(line) == 1 for line in filled) >= VERTICAL_SHARE * len(filled)):
            gap = "\n" if " " in filled else " "
            start = run.start()
            # (the first letter may end the line before, after a space: "Note: I\ng\nn...")
            if start >= 3 and norm[start - 3] == " " and not norm[start - 2].isspace():
                start -= 2
                lines[0] = norm[start] + lines[0]
            blocks.append((start, run.end(), "".join(line or gap for line in lines)))
            if len(blocks) >= MAX_BLOCKS:
                break
    return blocks


# ---------------------------------------------------------------------------------------------
# Stacked combining marks ("Zalgo"): a passage where at least ``MARKED_SHARE`` of the letters
# carry marks of their own, and at least ``MIN_CODES`` of them do. No language marks most of
# its letters so (Vietnamese, the most marked in Latin letters, about a third, and composed).
# The scan folds each character on its own, so a mark stays apart from the letter before it:
# a text's own accents, composed as text is written ("ü", "é", "й"), stay, and the reading
# drops only the marks apart. The marks are the combining blocks' (not those of Devanagari,
# Arabic, Hebrew or Thai). Counted by regular expressions and byte counts (in C).
# Accents on letters, composed ("Ìgñórê áll prëvìòùs", a public converter's accent on every
# vowel, a way past filters that match words): a passage (the whole text, or its lines)
# where at least ``ACCENTED_SHARE`` of the letters carry one, composed or apart, is read
# without the mark it carries most (the converter's), and without any if others remain.
# Vietnamese and Yoruba pass too, and read so they are the same words without their tones:
# an extra reading, judged as the plain text is.
MARKED_SHARE = 0.6
ACCENTED_SHARE = 0.25
_LETTER_RE = re.compile(r"[^\W\d_]")
_MARKS = "\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_MARK_RE = re.compile(f"[{_MARKS}]+")
_ONE_MARK_RE = re.compile(f"[{_MARKS}]")
_ASCII_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _stacked(norm: str, start: int, end: int) -> list[re.Match[str]]:
    """The runs of marks apart right after a letter (ordinary text has none)."""
    return [mark for mark in _MARK_RE.finditer(norm, start, end)
            if mark.start() and norm[mark.start() - 1].isalpha()]


def _ascii_letters(ascii_piece: bytes) -> int:
    return len(ascii_piece) - len(ascii_piece.translate(None, _ASCII_LETTERS))


def _mostly(marked: int, ascii_piece: bytes, others: str, share: float = MARKED_SHARE) -> bool:
    """Whether ``marked`` letters are ``share`` of the letters of a piece of text (as ASCII
    bytes, and its non-ASCII characters), and ``MIN_CODES`` at least."""
    if marked < MIN_CODES:
        return False
    letters = _ascii_letters(ascii_piece)
    # (the other letters counted only if the ASCII ones leave it open: Vietnamese does not)
    return (marked >= share * letters
            and marked >= share * (letters + len(_LETTER_RE.findall(others))))


def _marked(norm: str, ascii_bytes: bytes, others: str,
            accents: bool) -> list[tuple[int, int, str]]:
    """Stacked marks; and, if ``accents``, accented letters (not inside a decoded block:
    a cipher's reading of an accented text, read again without its accents, is nonsense in
    which a rule can match by chance)."""
    stacked = _stacked(norm, 0, len(norm)) if _MARK_RE.search(others) else []
    if len(stacked) >= MIN_CODES:
        if _mostly(len(stacked), ascii_bytes, others):
            return [(0, len(norm), _MARK_RE.sub("", norm))]
        first = last = -1
        end = 0
        for mark in stacked:
            if mark.start() < end:
                continue                   # (its line was judged)
            start, end = line_at(ascii_bytes, mark.start())
            if _mostly(len(_stacked(norm, start, end)), ascii_bytes[start:end],
                       non_ascii(norm[start:end])):
                first = start if first < 0 else first
                last = end
        if first >= 0:
            return [(first, last, _MARK_RE.sub("", norm[first:last]))]
    accented = _accented(others) if accents else 0
    if accented + len(stacked) < MIN_CODES:
        return []
    if _mostly(accented + len(stacked), ascii_bytes, others, ACCENTED_SHARE):
        return [(0, len(norm), reading) for reading in _unmarked(norm)]
    if "\n" not in norm or (span := _lines_span(norm, _accented_enough)) is None:
        return []                          # (one line: judged whole above)
    return [(*span, reading) for reading in _unmarked(norm[span[0]:span[1]])]


def _accented_enough(line: str) -> bool:
    """Whether ``ACCENTED_SHARE`` of a line's letters carry a mark, composed or apart."""
    piece = line.encode("ascii", "replace")
    possible = piece.count(b"?")          # (the most its accented letters can number)
    if possible < MIN_CODES or possible < ACCENTED_SHARE * _ascii_letters(piece):
        return False
    others = non_ascii(line)
    marked = _accented(others)
    if _MARK_RE.search(others):            # (marks apart are rare: searched where they are)
        marked += len(_stacked(line, 0, len(line)))
    return _mostly(marked, piece, others, ACCENTED_SHARE)


def _accented(others: str) -> int:
    """How many marks the letters among ``others`` (a text's non-ASCII characters) carry
    composed: those their canonical decomposition holds ("é" one, "ệ" two; a turned "ǝ" or a
    "ß" none)."""
    return (len(_ONE_MARK_RE.findall(unicodedata.normalize("NFD", others)))
            - len(_ONE_MARK_RE.findall(others)))


def _unmarked(text: str) -> list[str]:
    """``text`` without the accent it carries most often (a converter's: the language's own
    others stay, "système" keeps its grave accent), and, if other marks remain, without any."""
    apart = unicodedata.normalize("NFD", text)
    marks = Counter(_ONE_MARK_RE.findall(apart))
    if not marks:
        return [text]
    most = marks.most_common(1)[0][0]
    readings = [unicodedata.normalize("NFC", apart.replace(most, ""))]
    if len(marks) > 1:
        readings.append(_MARK_RE.sub("", apart))
    return readings


# ---------------------------------------------------------------------------------------------
# Upside down: the characters the public converters write for turned letters, digits and
# marks, and what they stand for. NFKC has already folded "ſ" (a turned J) into "s", and "˙"
# (a turned full stop) and "‾" (a turned low line) into a space and a combining mark. A
# passage counts when at least ``MIN_CODES`` of its characters, and ``TURNED_SHARE`` of its
# letters, are turned ones that no ordinary text writes for a plain letter; IPA writes some of
# them ("ɹ", "ɐ", "ʌ"), a few to a transcription.
# (turned, plain): letters, digits and marks; u and n, p and d, b and q, M and W, 6 and 9, the
# brackets and the two commas turn into each other
_TURNED = dict(zip("ɐqbɔpdǝɟƃɥᴉɾʞɯɹʇnuʌʍʎ∀ꓭƆᗡƎℲ⅁ꓘ˥WԀΌᴚ⊥∩ΛM⅄ƖᄅƐㄣϛ9ㄥ6',¿¡)(][}{><⅋",
                   "abqcdpefghijkmrtunvwyABCDEFGKLMPQRTUVWY12345679,'?!()[]{}<>&", strict=True))
_READ_TURNED = str.maketrans(_TURNED)
_TURNED_ONLY = "ɐɔǝɟƃɥᴉɾʞɯɹʇʌʍʎ∀ꓭƆᗡƎℲ⅁ꓘ˥ԀΌᴚ⊥∩Λ⅄ƖᄅƐㄣϛㄥ⅋"
_TURNED_RE = re.compile(f"[{_TURNED_ONLY}]")
_FOLDED_TURNED = ((" \u0307", "."), (" \u0305", "_"))
TURNED_SHARE = 0.25


def _lines_span(norm: str, test: Callable[[str], object]) -> tuple[int, int] | None:
    """(start, end) from the first line of ``norm`` that passes ``test`` to the last, if any
    does."""
    first = last = -1
    start = 0
    for line in norm.split("\n"):
        end = start + len(line)
        if test(line):
            first = start if first < 0 else first
            last = end
        start = end + 1
    return None if first < 0 else (first, last)


def _turned_enough(text: str) -> bool:
    turned = len(_TURNED_RE.findall(text))
    return turned >= MIN_CODES and turned >= TURNED_SHARE * len(_LETTER_RE.findall(text))


def _turned(norm: str, others: str) -> list[tuple[int, int, str]]:
    if len(_TURNED_RE.findall(others)) < MIN_CODES:
        return []
    if _turned_enough(norm):
        first, last = 0, len(norm)         # (its lines in reverse order too)
    elif (span := _lines_span(norm, _turned_enough)) is not None:
        first, last = span
    else:
        return []
    text = norm[first:last]
    for folded, mark in _FOLDED_TURNED:
        text = text.replace(folded, mark)
    return [(first, last, text.translate(_READ_TURNED)[::-1])]


# ---------------------------------------------------------------------------------------------
# Braille: the cells of Unicode's Braille Patterns block (U+2800-28FF) as the letters of
# English braille, grade 1 (the same 26 cells in every Latin-script braille), with the capital
# sign (twice: the whole word), the number sign (the letters a-j as digits, to the word's end
# or the letter sign) and the common punctuation; a cell of no such meaning stays as it is,
# and so does any other character. Read from the first line with a cell to the last: no
# ordinary text writes them for anything else, and two are a word ("⠠⠁⠠⠊", "AI", inside a
# Japanese sentence).
_BRAILLE_LETTERS = dict(zip("⠁⠃⠉⠙⠑⠋⠛⠓⠊⠚⠅⠇⠍⠝⠕⠏⠟⠗⠎⠞⠥⠧⠺⠭⠽⠵", "abcdefghijklmnopqrstuvwxyz",
                            strict=True))
_BRAILLE_DIGITS = dict(zip("⠁⠃⠉⠙⠑⠋⠛⠓⠊⠚", "1234567890", strict=True))
_BRAILLE_MARKS = dict(zip("⠂⠆⠒⠲⠖⠦⠄⠤⠌⠶⠰", ",;:.!?'-/(;", strict=True))
_CAPITAL, _NUMBER = "⠠", "⠼"
_LETTER_SIGN = "⠰"     # right after a digit: the next cell is a letter again ("6a": ⠼⠋⠰⠁)
_BRAILLE_RE = re.compile("[\u2800-\u28ff]")


def _read_braille(text: str) -> str:
    """``text`` with its braille cells read as letters, digits and marks."""
    out: list[str] = []
    capitals = 0        # capital signs before this letter (two: the rest of the word)
    number = False
    for cell in text:
        if cell == _CAPITAL:                 # (a capital ends a number: "7B", "%7Bmemory")
            capitals += 1
            number = False
        elif cell == _NUMBER:
            number = True
        elif number and cell == _LETTER_SIGN:
            number = False
        elif number and cell in _BRAILLE_DIGITS:
            out.append(_BRAILLE_DIGITS[cell])
        elif (letter := _BRAILLE_LETTERS.get(cell)) is not None:
            out.append(letter.upper() if capitals else letter)
            capitals = capitals if capitals > 1 else 0
            number = False
        else:
            capitals, number = 0, False
            out.append(_BRAILLE_MARKS.get(cell, cell))
    return "".join(out)


def _braille(norm: str, others: str) -> list[tuple[int, int, str]]:
    """The passage of ``norm`` in braille, read (``others``: its non-ASCII characters)."""
    if (_BRAILLE_RE.search(others) is None
            or (span := _lines_span(norm, _BRAILLE_RE.search)) is None):
        return []
    first, last = span
    return [(first, last, _read_braille(norm[first:last]))]


# ---------------------------------------------------------------------------------------------
# The NATO spelling alphabet ("India Golf November Oscar Romeo Echo"): a run of ``MIN_CODES``
# code words or more, each a whole word, apart by spaces, commas or hyphens, is read as its
# letters (lower-case: the code has no capitals); "/", "|", a line break, a full stop or two
# spaces between two code words is a space. An encoder that drops the spaces leaves the
# words run together ("ignoreallprevious"): a run without a space is split into the words it
# most likely is (``words``).
_NATO = {"alfa": "a", "alpha": "a", "bravo": "b", "charlie": "c", "delta": "d", "echo": "e",
         "foxtrot": "f", "golf": "g", "hotel": "h", "india": "i", "juliett": "j", "juliet": "j",
         "kilo": "k", "lima": "l", "mike": "m", "november": "n", "oscar": "o", "papa": "p",
         "quebec": "q", "romeo": "r", "sierra": "s", "tango": "t", "uniform": "u",
         "victor": "v", "whiskey": "w", "whisky": "w", "xray": "x", "x-ray": "x",
         "yankee": "y", "zulu": "z"}
_NATO_KEYS = sorted(_NATO, key=len, reverse=True)
_NATO_AC = ahocorasick_rs.BytesAhoCorasick(
    [key.encode() for key in _NATO_KEYS], matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
_NATO_GAP_RE = re.compile(r"[ \t,;/|.\n-]{1,8}")
_NATO_BREAK_RE = re.compile(r"[/|.\n]|  ")


def _nato(norm: str, ascii_bytes: bytes) -> list[tuple[int, int, str]]:
    """Each run of code words of ``norm``, read as the letters (or words) it spells."""
    lower = ascii_bytes.lower()
    found = _NATO_AC.find_matches_as_indexes(lower)
    if len(found) < MIN_CODES:
        return []
    runs: list[list[tuple[int, int, str]]] = []
    run: list[tuple[int, int, str]] = []
    for number, start, end in found:
        if ((start and lower[start - 1:start].isalpha())
                or lower[end:end + 1].isalpha()):
            continue                          # inside a longer word ("echoes", "Papadopoulos")
        if run and not _NATO_GAP_RE.fullmatch(norm, run[-1][1], start):
            if len(run) >= MIN_CODES:
                runs.append(run)
            run = []
        run.append((start, end, _NATO[_NATO_KEYS[number]]))
    if len(run) >= MIN_CODES:
        runs.append(run)
    blocks = []
    for run in runs[:MAX_BLOCKS]:
        letters = [run[0][2]]
        for (_, end, _letter), (start, _end, letter) in zip(run, run[1:], strict=False):
            letters.append(" " + letter if _NATO_BREAK_RE.search(norm, end, start) else letter)
        reading = "".join(letters)
        blocks.append((run[0][0], run[-1][1],
                       reading if " " in reading else split_run(reading)))
    return blocks


def letterform_blocks(norm: str, ascii_bytes: bytes,
                      accents: bool = True) -> list[tuple[int, int, str]]:
    """``(start, end, reading)`` of each passage of ``norm`` written in one of the forms above
    (one per form, at most ``MAX_BLOCKS`` in all). ``ascii_bytes``: ``norm`` as ASCII bytes,
    any other character as "?" (indices agree). ``accents``: read accented letters too."""
    found = _separated(norm, ascii_bytes) + _vertical(norm) + _nato(norm, ascii_bytes)
    if b"?" in ascii_bytes:                    # (braille, marks and turned letters are not
        others = non_ascii(norm)               # ASCII: a few characters, searched, not all)
        if ascii_bytes.count(b"?") >= MIN_CODES:
            found += _marked(norm, ascii_bytes, others, accents) + _turned(norm, others)
        found += _braille(norm, others)
    return found[:MAX_BLOCKS]
