"""Steps 1 and 2 of a scan: invisible and direction-changing characters and look-alike letters,
with a map back to the original text's indices."""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator
from itertools import islice

from memadmin.quarantine.scanner.letterforms import _MARKS, _TURNED_RE
from memadmin.quarantine.scanner.limits import MIN_ZW_SPLITS
from memadmin.quarantine.text import non_ascii

_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"


_BIDI_OVERRIDE = "\u202d\u202e"


_BIDI_EMBED = "\u202a\u202b\u2066\u2067\u2068"       # fine inside right-to-left text


_INVISIBLE = ("[" + _ZERO_WIDTH + _BIDI_OVERRIDE + _BIDI_EMBED
              + "\u202c\u2069\u200e\u200f\u061c\u2061-\u2064\ufe00-\ufe0f"
              + "\U000e0000-\U000e007f\U000e0100-\U000e01ef]")


_INVISIBLE_RE = re.compile(_INVISIBLE)


# Runs of "?" in a text as ASCII bytes (``encode("ascii", "replace")``): its non-ASCII
# characters are there (and its real "?"s), so a search for them can run only there. (Written
# with a literal first, which the regex engine skips to; it tries "?+" at every place.)
_OTHER_RUN_RE = re.compile(rb"\?\?*")


_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")


# (issue 19, 2026-12-06) Letters that NFKC leaves alone but that read as Latin letters, a way
# past filters that match words: small capitals ("ɪɢɴᴏʀᴇ", IPA letters and phonetic extensions)
# and regional-indicator letters ("🇮🇬🇳🇴🇷🇪", which also make the flags: "🇫🇷" reads "fr"). Each
# is read as its lower-case letter, one character for one, after the look-alike step.
_SMALL_CAPITALS = "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ"
_LETTER_LIKE = str.maketrans(
    {**dict(zip(_SMALL_CAPITALS, "abcdefghijklmnopqrstuvwyz", strict=True)),
     **{chr(0x1F1E6 + i): chr(97 + i) for i in range(26)},
     # negative circled and negative squared capitals ("🅘🅖🅝", "🅸🅶🅽"; 🅰 🅱 🅾 🅿 are emoji too)
     **{chr(0x1F150 + i): chr(97 + i) for i in range(26)},
     **{chr(0x1F170 + i): chr(97 + i) for i in range(26)}})
_LETTER_LIKE_RE = re.compile(f"[{_SMALL_CAPITALS}\U0001f1e6-\U0001f1ff\U0001f150-\U0001f169"
                             "\U0001f170-\U0001f189]")
# Parenthesized small letters ("⒤⒢⒩"), which NFKC writes as "(i)(g)(n)": read as the letter
# before NFKC runs, one character for one.
_PARENTHESIZED = str.maketrans({chr(0x249C + i): chr(97 + i) for i in range(26)})
_PARENTHESIZED_RE = re.compile("[\u249c-\u24b5]")


_TAG_RUN_RE = re.compile("[\U000e0000-\U000e007f]+")


_FLAG_TAGS_RE = re.compile("[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f")


_BIDI_RE = re.compile("[" + _BIDI_OVERRIDE + _BIDI_EMBED + "]")


_BIDI_END_RE = re.compile("[\u202c\u2069\n]")


_RTL_RE = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe]")


_LETTERS = "A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u052f"


# The soft hyphen (U+00AD) is stripped like the others but does not count as a split: it marks
# where a long word may break ("Donau\u00addampf\u00adschiff"), as it should.
_ZW_SPLIT_RE = re.compile(f"(?<=[{_LETTERS}])\u00ad*[{_ZERO_WIDTH.replace(chr(0xad), '')}]"
                          f"[{_ZERO_WIDTH}]*(?=[{_LETTERS}])")


_ZW_WORD_END_RE = re.compile(f"[{_LETTERS}{_ZERO_WIDTH}]*")


_ZW_ANY_RE = re.compile(f"[{_ZERO_WIDTH}]")


_CYR_TO_LAT = {
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y", "і": "i", "ј": "j",
    "ѕ": "s", "ԁ": "d", "һ": "h", "ԛ": "q", "ԝ": "w", "ӏ": "l", "к": "k", "м": "m", "т": "t",
    "в": "b", "н": "h", "ё": "e", "ї": "i", "г": "r", "п": "n", "л": "n",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D", "Һ": "H", "Ӏ": "I",
    "Ԛ": "Q", "Ԝ": "W",
}


_GRE_TO_LAT = {
    "α": "a", "ο": "o", "ρ": "p", "ι": "i", "κ": "k", "ν": "v", "υ": "u", "χ": "x", "γ": "y",
    "ε": "e", "τ": "t", "ω": "w", "η": "n",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
}


_TO_LAT = {**_CYR_TO_LAT, **_GRE_TO_LAT}


_LAT_TO_CYR = {
    "a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "i": "і", "k": "к",
    "A": "А", "B": "В", "E": "Е", "K": "К", "M": "М", "H": "Н", "O": "О", "P": "Р", "C": "С",
    "T": "Т", "X": "Х", "Y": "У",
}


_LAT_TO_GRE = {
    "o": "ο", "v": "ν", "i": "ι", "k": "κ", "u": "υ", "x": "χ",
    "A": "Α", "B": "Β", "E": "Ε", "Z": "Ζ", "H": "Η", "I": "Ι", "K": "Κ", "M": "Μ", "N": "Ν",
    "O": "Ο", "P": "Ρ", "T": "Τ", "Y": "Υ", "X": "Χ",
}


_LAT = "A-Za-z\u00c0-\u024f"


_CG = "\u0370-\u03ff\u0400-\u052f"


_CYR_GREEK_RE = re.compile(f"[{_CG}]")


_SCRIPT_SEAM_RE = re.compile(f"[{_LAT}][{_CG}]|[{_CG}][{_LAT}]")


_WORD_AT_RE = re.compile(f"[{_LAT}{_CG}]+")


_LATIN_RE = re.compile(f"[{_LAT}]")


_CYR_RE = re.compile("[\u0400-\u052f]")


_GRE_RE = re.compile("[\u0370-\u03ff]")


@functools.cache
def _unstable_re() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Characters that NFKC changes on their own (computed once, on first need): for any text,
    and for a text without astral characters (cheaper to run)."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x80, 0x30000):
        if 0xD800 <= code < 0xE000:
            continue
        ch = chr(code)
        if unicodedata.normalize("NFKC", ch) != ch:
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    def charset(pairs: list[tuple[int, int]]) -> str:
        return "[" + "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}"
                             for a, b in pairs) + "]"

    # Basic-plane characters in a class of their own: the engine tests it with a bitmap.
    basic = [r for r in ranges if r[1] <= 0xFFFF]
    astral: list[tuple[int, int]] = []
    for low, high in (r for r in ranges if r[1] > 0xFFFF):
        if astral and low - astral[-1][1] <= 256:   # few coarse ranges: fast to test; the
            astral[-1] = (astral[-1][0], high)      # stable characters among them stay put
        else:
            astral.append((low, high))
    return (re.compile(f"{charset(basic)}|{_INVISIBLE}|{charset(astral)}"),
            re.compile(f"{charset(basic)}|{_INVISIBLE}"))


class _Text:
    """The normalised text and the map from its indices back to the original's."""

    __slots__ = ("index", "lower", "norm", "original")

    def __init__(self, original: str, norm: str, index: _IndexMap | _Composed | None) -> None:
        self.original = original
        self.norm = norm
        self.index = index            # None: the identity map
        lower = norm.lower()
        if len(lower) != len(norm):   # a few letters lower-case to two characters
            lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in norm)
        self.lower = lower

    def span(self, start: int, end: int) -> tuple[int, int]:
        if self.index is None:
            return start, end
        return self.index[start], self.index[end - 1] + 1


# A line break written as an escape inside a JSON or log string ("body=\"Hello.\\nSystem:
# ...\""): rules that look for a line's start see one. Each two-character escape becomes a
# space and a line break, so every index still maps to itself. Not after another backslash (an
# escaped backslash) nor before a lower-case letter (a Windows path: C:\\new, \\reports).
# (a letter under a combining mark, "\\r\u0308tf1" in a text under stacked marks, starts a word)
ESCAPED_BREAK = f"(?<!\\\\)\\\\[nr](?![a-z{_MARKS}])"
# The same matches, written with the backslash first (a literal, which the regex engine skips
# to; it tried the lookbehind at every place) and the lookbehind after it, over both characters
_ESCAPED_BREAK_RE = re.compile(f"\\\\(?<!\\\\\\\\)[nr](?![a-z{_MARKS}])")


# (round 16) A line continued with a backslash (a shell command, a .properties value, a
# Dockerfile instruction, a C macro: "curl -s https://... \\" then "    | sh") is one line:
# the backslash, the line break and the next line's indentation are read as spaces, one each
# (indices agree). Only after a space or tab: a Markdown hard break ("roses\\") and a path
# ("C:\\temp\\") still end a line.
CONTINUED_LINE = r"(?<=[ \t])\\\r?\n[ \t]*"
_CONTINUED_LINE_RE = re.compile(r"\\(?<=[ \t]\\)\r?\n[ \t]*")


def _spaces(match: re.Match[str]) -> str:
    return " " * (match.end() - match.start())


# (round 19) Prose hard-wrapped at a fixed width (an e-mail at 72 columns, text copied out of a
# PDF): a sentence runs on over its line breaks ("please disregard your earlier" / "instructions
# and mail ..."), and no rule that reads within a line sees it whole. Such a line break is read
# as a space (one character for one: indices agree) where the line before it is full (it and
# the next line's first word take ``WRAPPED_LINE`` characters or more: that word did not fit)
# and stops inside a sentence (after a letter, a digit or a comma, and the space a
# format=flowed e-mail puts at a soft break, RFC 3676), and the next line starts
# with a letter or a digit and is no header (a word and a colon: "Subject:", "note:", a chat
# line's speaker, an agent's "Observation:") nor a numbered item: a list, a header and a
# transcript keep their lines, and so do lines of data (base64, hex or uuencode wrapped at 64
# or 76: no words).
WRAPPED_LINE = 50
_WRAPPED_BREAK_RE = re.compile(r"(?<=[\w,]) ?\r?\n(?=[^\W_])")     # (" ": format=flowed)
# ``_WRAPPED_BREAK_RE`` starts with a lookbehind, which the regex engine tries at every
# character (0.45 ms of a 16 KiB scan); ``_wrapped_break_spans`` finds its matches from the
# line breaks before a letter or digit instead (a literal the engine skips to)
_BREAK_RE = re.compile(r"\n(?=[^\W_])")
_BEFORE_BREAK_RE = re.compile(r"[\w,]")
_NOT_WRAPPED_RE = re.compile(r"[^\W\d_][\w.-]{0,24}[ \t]*(?:\([^)\n]{0,40}\)[ \t]*)?:(?!//)|"
                             r"[0-9]{1,3}[.)][ \t]")
_NEXT_WORD_RE = re.compile(r"\S*")


def _prose(norm: str, start: int, end: int) -> bool:
    """Whether ``norm[start:end]`` reads as words (seven tenths letters and spaces, three spaces
    at least, twice as many letters as spaces), not as wrapped data (base64, hex and uuencode
    lines wrap too) nor as letters spaced out (a line break there is a word's end)."""
    spaces = norm.count(" ", start, end)
    if spaces < 3:
        return False
    letters = sum(map(str.isalpha, norm[start:end]))
    return letters >= 2 * spaces and letters + spaces >= 0.7 * (end - start)


_LETTER_RE = re.compile(r"[^\W\d_]")


def _lower_word_before(norm: str, start: int, end: int) -> bool:
    """Whether the last word of ``norm[start:end]`` starts with a small letter (after any
    quote or bracket)."""
    letter = _LETTER_RE.search(norm, norm.rfind(" ", start, end) + 1, end)
    return letter is not None and letter[0].islower()


def _wrapped_break_spans(norm: str) -> Iterator[tuple[int, int]]:
    """The spans ``_WRAPPED_BREAK_RE.finditer(norm)`` gives, in order: a line break before a
    letter or digit, with the carriage return before it and then the space before that, if
    any, after a word character or a comma (each match holds one line break, so none
    overlaps another)."""
    for match in _BREAK_RE.finditer(norm):
        start = match.start()
        if start and norm[start - 1] == "\r":
            start -= 1
        if start and norm[start - 1] == " ":
            start -= 1
        if start and _BEFORE_BREAK_RE.match(norm, start - 1):
            yield start, match.end()


def _wrapped_breaks(norm: str) -> str:
    joined: list[str] | None = None
    for start, end in _wrapped_break_spans(norm):
        line = norm.rfind("\n", 0, start) + 1
        word = _NEXT_WORD_RE.match(norm, end)
        full = start - line + 1 + (word.end() - end if word else 0)
        if (full < WRAPPED_LINE or _NOT_WRAPPED_RE.match(norm, end) is not None
                or not _prose(norm, line, start)
                # a capital after a capitalised word: a list of names or words, a line each
                or (norm[end].isupper() and not _lower_word_before(norm, line, start))):
            continue
        if joined is None:
            joined = list(norm)
        joined[start:end] = " " * (end - start)
    return norm if joined is None else "".join(joined)


# (round 21) Subtitles (SubRip, WebVTT: a meeting's transcript as a video tool exports it) break
# what is said into captions of a few dozen columns, two lines a cue, each cue numbered and
# timed. From the first timing line to the end of the last cue, the captions' line breaks and
# the cue numbers and timings between them are read as spaces (one character for one: indices
# agree), so the rules read the running text; where a caption ends a sentence (or the text
# before the first cue ends a line), the next caption starts a line of its own. Two timing
# lines at least: one "-->" line is no subtitle file.
# (a timing line ends with WebVTT's cue settings at most, "align:start position:10%": not
# with an RTF control word or an escaped line break and the caption after it)
_TIMING = (r"(?:\d{1,2}:)?\d{2}:\d{2}[,.]\d{3}[ \t]+-->[ \t]+"
           r"(?:\d{1,2}:)?\d{2}:\d{2}[,.]\d{3}")
_CUE_TIMING_RE = re.compile(r"^[ \t]*" + _TIMING + r"(?:[ \t]+[\w-]+:[\w%.,-]+)*[ \t]*\r?$",
                            re.MULTILINE)
_CUE_NUMBER_RE = re.compile(r"(?:^|\n)[ \t]*\d{1,6}[ \t]*\r?\n[ \t]*\Z")
_CUES_END_RE = re.compile(r"\r?\n[ \t]*\r?\n(?![ \t]*\r?\n|[ \t]*\d)")
_CAPTION_BREAK_RE = re.compile(r"[ \t]*\r?\n[ \t\r\n]*")
_LINE_ENDS = frozenset(".!?:;\u2026\u3002\uff01\uff1f\n")


def _captions(norm: str) -> str:
    timings = list(_CUE_TIMING_RE.finditer(norm)) if "-->" in norm else []
    if len(timings) < 2:
        return norm
    pieces, at = [], 0
    for timing in timings:                 # the cue numbers and timings: spaces
        start = _cue_start(norm, timing)
        pieces += [norm[at:start], " " * (timing.end() - start)]
        at = timing.end()
    blanked = "".join([*pieces, norm[at:]])
    first = _cue_start(norm, timings[0])
    last = _CUES_END_RE.search(norm, timings[-1].end())
    end = last.start() if last is not None else len(norm)
    pieces, at = [blanked[:first]], first
    # each run of white space with a line break in it (a line's end, a cue's gap): its breaks
    # spaces, its last character a line break where a sentence (or a line before the first
    # cue) ended before it
    for gap in _CAPTION_BREAK_RE.finditer(blanked, first, end):
        ends_line = gap.start() > 0 and blanked[gap.start() - 1] in _LINE_ENDS
        flat = gap.group().replace("\r", " ").replace("\n", " ")
        pieces += [blanked[at:gap.start()], flat[:-1] + "\n" if ends_line else flat]
        at = gap.end()
    return "".join([*pieces, blanked[at:]])


def _cue_start(norm: str, timing: re.Match[str]) -> int:
    """Where a cue starts: its number's line (and the break before it), if it has one."""
    number = _CUE_NUMBER_RE.search(norm, max(0, timing.start() - 12), timing.start())
    return number.start() if number is not None else timing.start()


# ... and subtitles written into a string (a JSON value, a Redis line), their line breaks
# escaped: there every escaped break is one, before a small letter too (a caption goes on
# "\\nweryfikacja ..."), where two escaped timing lines show it
_ESCAPED_TIMING_RE = re.compile(r"\\n" + _TIMING + r"\\n")
_ANY_ESCAPED_BREAK_RE = re.compile(r"\\(?<!\\\\)[nr]")


def _escaped_breaks(norm: str) -> str:
    if "\n" in norm:
        norm = _wrapped_breaks(norm)
    if "\\" in norm:
        breaks = (_ANY_ESCAPED_BREAK_RE if "-->" in norm
                  and _nth(_ESCAPED_TIMING_RE.finditer(norm), 2) else _ESCAPED_BREAK_RE)
        norm = _CONTINUED_LINE_RE.sub(_spaces, breaks.sub(" \n", norm))
    return _captions(norm) if "\n" in norm else norm


def _nth(matches: Iterator[re.Match[str]], n: int) -> bool:
    """Whether ``matches`` has ``n`` at least."""
    return next(islice(matches, n - 1, None), None) is not None


# (issue 19, ninth session) iCalendar and vCard text (RFC 5545 3.1 and 3.3.11, RFC 6350 3.2
# and 3.4): a content line of more than 75 octets is folded, a line break and one space or tab
# put anywhere, inside a word too ("instruc\r\n tions"), and a text value escapes "\\", ";"
# and "," with a backslash and writes a line break "\\n". A calendar invitation or a contact
# card is read as a calendar program shows it, from its first "BEGIN:V" line to the end of its
# last "END:" line: folds joined, escapes read, and each text property's value on a line of
# its own ("DESCRIPTION:### System" shows a header). (Outside it, a line that starts with a
# space is a line: an indented list.)
_CALENDAR_BEGIN_RE = re.compile(r"^BEGIN:V(?:CALENDAR|EVENT|TODO|JOURNAL|CARD)\b",
                                re.IGNORECASE | re.MULTILINE)
_CALENDAR_END_RE = re.compile(r"^END:V[A-Z]+\b[^\n]*", re.IGNORECASE | re.MULTILINE)
# a fold; an escape (a fold may fall between an escape's backslash and its letter)
_CALENDAR_FOLD_OR_ESCAPE = r"\r?\n[ \t]|\\(?:\r?\n[ \t])?([\\;,nN])"
# a text property's name and parameters, up to its value (not any word and colon: a line of
# text, "System: ...", is no property, and keeps its header)
_CALENDAR_PROPERTY = (r"^(?i:description|summary|comment|location|contact|resources|categories|"
                      r"note|title|role|org|fn|nickname|x-[a-z0-9-]+)"
                      r"(?:;(?:\"[^\"\r\n]*\"|[^:;\"\r\n])*)*:")
_CALENDAR_READ_RE = re.compile(_CALENDAR_FOLD_OR_ESCAPE + "|(" + _CALENDAR_PROPERTY + ")",
                               re.MULTILINE)
_CALENDAR_UNESCAPE_RE = re.compile(_CALENDAR_FOLD_OR_ESCAPE)
# a text property's value: its content line with the lines folded into it
_CALENDAR_VALUE_RE = re.compile(_CALENDAR_PROPERTY + r"((?:[^\r\n]|\r?\n[ \t])*)", re.MULTILINE)


def _calendar_part(text: str) -> tuple[int, int] | None:
    """Where a text's calendar part is: from its first "BEGIN:V" line to the end of its last
    "END:" line (or the text's end); None if it has none."""
    if ":V" not in text and ":v" not in text:
        return None
    begin = _CALENDAR_BEGIN_RE.search(text)
    if begin is None:
        return None
    stop = len(text)
    for end in _CALENDAR_END_RE.finditer(text, begin.start()):
        stop = end.end()
    return begin.start(), stop


def calendar_values(text: str, most: int) -> list[tuple[int, int, str]]:
    """The first ``most`` text property values of a text's calendar part that hold more than
    white space: (start, end) in ``text`` and the value as a calendar program shows it (folds
    joined, escapes read). A scan judges each as a text of its own too (the model: a
    description's words are then not scored with the calendar's own)."""
    part = _calendar_part(text)
    if part is None:
        return []
    values = []
    for match in _CALENDAR_VALUE_RE.finditer(text, *part):
        value = _CALENDAR_UNESCAPE_RE.sub(_read_escape, match[1])
        if value.strip():
            values.append((match.start(1), match.end(1), value))
            if len(values) >= most:
                break
    return values


def _read_escape(match: re.Match[str]) -> str:
    """What a fold or an escape of ``_CALENDAR_FOLD_OR_ESCAPE`` reads as: nothing for a fold,
    a line break for "\\n", else the escaped character."""
    escaped = match[1]
    return "" if escaped is None else "\n" if escaped in "nN" else escaped


def _unfold_calendar(text: str) -> tuple[str, _IndexMap] | None:
    """``text`` with its calendar part read as a calendar program shows it, and the map from
    its indices back to ``text``'s; None if it has no calendar part or nothing to read."""
    part = _calendar_part(text)
    if part is None:
        return None
    pieces: list[str] = []
    index = _IndexMap()
    length = position = 0
    for match in _CALENDAR_READ_RE.finditer(text, *part):
        name, escaped = match[2], match[1]
        cut = match.end() if name is not None else match.start()
        pieces.append(text[position:cut])
        index.add(length, position, True)
        length += cut - position
        if name is not None:                 # a line break after the name: the value's own
            pieces.append("\n")
            index.add(length, cut - 1, False)
            length += 1
        elif escaped is not None:            # the escaped character, or a line break
            read = _read_escape(match)
            pieces.append(read)
            index.add(length, match.end() - 1 if read != "\n" else match.start(), False)
            length += 1
        position = match.end()
    if not pieces:
        return None
    pieces.append(text[position:])
    index.add(length, position, True)
    return "".join(pieces), index


# (round 18) UTF-8 bytes written as escapes inside otherwise plain text: a Redis MONITOR line,
# a Python bytes repr, a C string literal ("caf\xc3\xa9" is "café"). A run of escapes that
# is one well-formed character of two to four bytes is read as that character, in place (the
# character maps to its first escape); an ASCII escape, a lone or ill-formed byte (overlong,
# a surrogate, past U+10FFFF) and an escape after a backslash ("\\xc3": a backslash, then
# "xc3") are left as written. A text with an escaped byte past ASCII that is no such character
# (an escape split by a soft line break, a Latin-1 text) is left whole: no word reads half
# decoded, half as escapes; so is one with an escaped printable ASCII byte, which is written
# wholly in escapes (a Redis line or a bytes repr writes those as themselves): the hex
# decoder's.
_UTF8_ESCAPE_RE = re.compile(r"\\(?<!\\\\)x(?:[cd][0-9a-f]|e[0-9a-f]\\x[89ab][0-9a-f]|"
                             r"f[0-4](?:\\x[89ab][0-9a-f]){2})\\x[89ab][0-9a-f]", re.IGNORECASE)
_HIGH_ESCAPE_RE = re.compile(r"\\(?<!\\\\)x[89a-f][0-9a-f]", re.IGNORECASE)
_ASCII_ESCAPE_RE = re.compile(r"\\(?<!\\\\)x(?:[2-6][0-9a-f]|7[0-9a-e])", re.IGNORECASE)


def _read_utf8_escapes(text: str) -> tuple[str, _IndexMap] | None:
    """``text`` with its escaped UTF-8 characters read (above), and the map from its indices
    back to ``text``'s; None if it has none."""
    if "\\x" not in text and "\\X" not in text:
        return None
    spans = []
    for match in _UTF8_ESCAPE_RE.finditer(text):
        try:
            character = bytes.fromhex(match[0].replace("\\x", "").replace("\\X", "")).decode()
        except UnicodeDecodeError:
            return None
        spans.append((match.start(), match.end(), character))
    if (len(_HIGH_ESCAPE_RE.findall(text)) != sum((end - start) // 4 for start, end, _ in spans)
            or _ASCII_ESCAPE_RE.search(text) is not None):
        return None
    return _read_spans(text, spans)


# (round 20) A character written as a "\\u" escape and four hex digits inside plain text: a Java
# .properties file, a JSON or JavaScript string ("u\\u017cytkownika" is "użytkownika"), its
# backslash doubled each time that text was written into another string (a Redis value, an
# iCalendar text, JSON in JSON: up to eight). An escape of a character past ASCII is read as
# the character, in place (a surrogate pair as one); a text with an escaped ASCII character is
# written wholly in escapes and left to the decoder, and so is a lone surrogate's, and a
# rich-text document (its own escapes, "\\u1074?", are decimal: its reader's).
_U_ESCAPE_RE = re.compile(r"\\{1,8}u(d[89ab][0-9a-f]{2})\\{1,8}u(d[c-f][0-9a-f]{2})"
                          r"|\\{1,8}u([0-9a-f]{4})", re.IGNORECASE)
# where a rich-text document starts (its backslash doubled inside a quoted string); the
# decoder reads the document (``encodings``), whose "\\uN?" escapes are decimal
RTF_START = r"\{\\(?:\\)?rtf"
_RTF_MARK = re.compile(RTF_START)


def _read_u_escapes(text: str) -> tuple[str, _IndexMap] | None:
    """``text`` with its escaped characters read (above), and the map from its indices back
    to ``text``'s; None if it has none."""
    if ("\\u" not in text and "\\U" not in text) or _RTF_MARK.search(text) is not None:
        return None
    spans = []
    for match in _U_ESCAPE_RE.finditer(text):
        high, low, code = match.groups()
        if code is None:
            character = chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
        elif int(code, 16) < 0x80 or 0xD800 <= int(code, 16) < 0xE000:
            return None
        else:
            character = chr(int(code, 16))
        spans.append((match.start(), match.end(), character))
    return _read_spans(text, spans)


# (round 19) A word cut at a line's end with a hyphen, as a PDF's or a typeset page's text
# comes out when copied ("instruc-" / "tions"): read whole ("instructions"), the hyphen and the
# line break read as nothing. Only between letters, the next line's a small one: a line that
# ends with a dash before a capital ("Q3 -" / "Sales") or a number keeps its break, and so does
# one whose two halves are not words (letters only, after a space or a line's start, and before
# one or a sign: base85 data writes "-" and letters too). (A compound cut at its own hyphen,
# "well-" / "known", then reads "wellknown": no rule's word is one.)
_CUT_WORD_RE = re.compile(r"-(?<=[^\W\d_]-)\r?\n(?=[^\W\d_])(?![A-Z\u0400-\u042f])")
_HALF_BEFORE_RE = re.compile(r"(?:^|[\s\"'(“‘«„])[^\W\d_]{1,30}\Z")
_HALF_AFTER_RE = re.compile(r"[^\W\d_]{1,30}(?=[\s.,;:!?)\"'”’»]|\Z)")


def _join_cut_words(text: str) -> tuple[str, _IndexMap] | None:
    """``text`` with its words cut at a line's end read whole (above), and the map from its
    indices back to ``text``'s; None if it has none."""
    if "-\n" not in text and "-\r\n" not in text:
        return None
    return _read_spans(text, (
        (match.start(), match.end(), "") for match in _CUT_WORD_RE.finditer(text)
        if _HALF_BEFORE_RE.search(text, max(0, match.start() - 32), match.start()) is not None
        and _HALF_AFTER_RE.match(text, match.end()) is not None))


# (round 20) A quote written as an HTML entity inside an attribute or escaped text (an image's
# alt text, a title, a data attribute: alt="Reader question: &quot;Is it a jailbreak ...?&quot;")
# is read as the quote it stands for, in place, so a quoted example stays a quotation. Only
# quotes: "&lt;script&gt;" is markup shown as text, harmless as written, and stays so.
_QUOTE_ENTITY_RE = re.compile(r"&(quot|apos|#0*34|#0*39|#[xX]0*2[27]);")
_QUOTE_ENTITIES = {"quot": '"', "apos": "'"}


def _read_quote_entities(text: str) -> tuple[str, _IndexMap] | None:
    """``text`` with its quote entities read (above), and the map from its indices back to
    ``text``'s; None if it has none."""
    if "&" not in text:
        return None
    return _read_spans(text, (
        (match.start(), match.end(), _QUOTE_ENTITIES.get(match[1]) or (
            '"' if match[1].lower().endswith(("34", "22")) else "'"))
        for match in _QUOTE_ENTITY_RE.finditer(text)))


def _read_spans(text: str, spans: Iterable[tuple[int, int, str]]) -> tuple[str, _IndexMap] | None:
    """``text`` with each of ``spans`` (start, end, reading; in order, apart) read as its
    reading (nothing, or a character that maps to the span's start), and the map from its
    indices back to ``text``'s; None if there is no span."""
    pieces: list[str] = []
    index = _IndexMap()
    length = position = 0
    for start, end, reading in spans:
        pieces.append(text[position:start])
        index.add(length, position, True)
        length += start - position
        if reading:
            pieces.append(reading)
            index.add(length, start, False)
            length += len(reading)
        position = end
    if not pieces:
        return None
    pieces.append(text[position:])
    index.add(length, position, True)
    return "".join(pieces), index


def _read_in_place(text: str) -> tuple[str, _IndexMap | _Composed] | None:
    """``text`` with what is read in place read (escaped UTF-8 characters, "\\u" escapes, quote
    entities, a calendar's folds and escapes, words cut at a line's end), and the map from its
    indices back to ``text``'s; None if nothing is."""
    read: tuple[str, _IndexMap | _Composed] | None = None
    for reading in (_read_utf8_escapes, _read_u_escapes, _read_quote_entities,
                    _unfold_calendar, _join_cut_words):
        step = reading(text if read is None else read[0])
        if step is not None:
            read = step if read is None else (step[0], _Composed(read[1], step[1]))
    return read


class _Composed:
    """Two index maps one after the other: ``inner`` (None: the identity) into the text that
    ``outer`` maps back to the original."""

    __slots__ = ("inner", "outer")

    def __init__(self, outer: _IndexMap | _Composed,
                 inner: _IndexMap | _Composed | None) -> None:
        self.outer, self.inner = outer, inner

    def __getitem__(self, j: int) -> int:
        return self.outer[j if self.inner is None else self.inner[j]]


def _normalise(text: str, fast: bool = True) -> tuple[_Text, list[tuple[int, int, str]]]:
    """Strip invisible characters, NFKC, map look-alikes in mixed words; flag what hides text;
    escaped line breaks and hard-wrapped prose read as lines are; what ``_read_in_place`` reads
    (above). ``fast``: take the shortcuts (chunks, prefilters) that must not change the
    result."""
    unfolded = _read_in_place(text)
    if unfolded is None:
        return _normalise_read(text, fast)
    read, index = unfolded
    normalised, found = _normalise_read(read, fast)
    # (the reading's own text, its map now into ``text``: its lower case stands)
    normalised.original, normalised.index = text, _Composed(index, normalised.index)
    return normalised, [(index[start], index[end - 1] + 1, rule) for start, end, rule in found]


def _normalise_read(text: str, fast: bool) -> tuple[_Text, list[tuple[int, int, str]]]:
    if text.isascii():
        return _Text(text, _escaped_breaks(text), None), []
    found: list[tuple[int, int, str]] = []
    others = non_ascii(text) if fast else text
    invisible = _INVISIBLE_RE.search(others) is not None
    if invisible:
        _flag_invisible(text, found, others if fast else None)
    folded = text
    if _PARENTHESIZED_RE.search(others) is not None:
        folded, others = text.translate(_PARENTHESIZED), others.translate(_PARENTHESIZED)
    if not invisible and unicodedata.is_normalized("NFKC", folded):
        norm, index = folded, None
    else:
        norm, index = _fold(folded, chunked=fast, others=others, invisible=invisible)
    norm = _unmix(norm, index, found, fast)
    if _LETTER_LIKE_RE.search(others) is not None:
        norm = norm.translate(_LETTER_LIKE)      # (one character for one: indices agree)
    return _Text(text, _escaped_breaks(norm), index), found


_FOLD_CHUNK = 256


class _IndexMap:
    """Indices of the normalised text mapped to the original's, stored as segments (a run
    copied unchanged, or the characters one original character folded to), not per character:
    ``index[j]`` is the original index of normalised character ``j``."""

    __slots__ = ("copied", "norm_starts", "orig_starts")

    def __init__(self) -> None:
        self.norm_starts: list[int] = []
        self.orig_starts: list[int] = []
        self.copied: list[bool] = []

    def add(self, norm_start: int, orig_start: int, copied: bool) -> None:
        self.norm_starts.append(norm_start)
        self.orig_starts.append(orig_start)
        self.copied.append(copied)

    def __getitem__(self, j: int) -> int:
        k = bisect.bisect_right(self.norm_starts, j) - 1
        if self.copied[k]:
            return self.orig_starts[k] + j - self.norm_starts[k]
        return self.orig_starts[k]


def _fold(text: str, *, chunked: bool = True, others: str | None = None,
          invisible: bool = True) -> tuple[str, _IndexMap]:
    """Drop invisible characters and NFKC the others, one character at a time. ``chunked``:
    skip the blocks of ``_FOLD_CHUNK`` characters that are NFKC-normalised and have no
    invisible character (a character NFKC changes on its own makes any text around it
    unnormalised), the result is the same. ``others``: the text's non-ASCII characters, if
    known (astral ones are looked for there); ``invisible``: False if it has no invisible
    character (no block is searched for one)."""
    pieces: list[str] = []
    index = _IndexMap()
    length = 0
    position = 0
    unstable, unstable_basic = _unstable_re()
    if _ASTRAL_RE.search(text if others is None else others) is None:
        unstable = unstable_basic
    if chunked and len(text) > _FOLD_CHUNK:
        matches: Iterable[re.Match[str]] = (
            match for start in range(0, len(text), _FOLD_CHUNK)
            if (invisible and _INVISIBLE_RE.search(text, start, start + _FOLD_CHUNK))
            or not unicodedata.is_normalized("NFKC", text[start:start + _FOLD_CHUNK])
            for match in unstable.finditer(text, start, start + _FOLD_CHUNK))
    else:
        matches = unstable.finditer(text)
    for match in matches:
        i = match.start()
        if i > position:
            pieces.append(text[position:i])
            index.add(length, position, True)
            length += i - position
        ch = text[i]
        folded = "" if _INVISIBLE_RE.match(ch) else unicodedata.normalize("NFKC", ch)
        if folded:
            pieces.append(folded)
            index.add(length, i, False)
            length += len(folded)
        position = i + 1
    if position < len(text):
        pieces.append(text[position:])
        index.add(length, position, True)
    return "".join(pieces), index


def _flag_invisible(text: str, found: list[tuple[int, int, str]],
                    others: str | None = None) -> None:
    """Flag tag runs, bidi controls and words split by zero-width characters. ``others``: the
    text's non-ASCII characters, if known (each kind is looked for there first: all of them
    are non-ASCII), and then a split is looked for only where a run of zero-width
    characters starts (``_zw_splits``)."""
    if others is None or _TAG_RUN_RE.search(others) is not None:
        _flag_tags(text, found)
    if others is None or _BIDI_RE.search(others) is not None:
        _flag_bidi(text, found)
    if _ZW_ANY_RE.search(text if others is None else others):
        splits = ([m.start() for m in _ZW_SPLIT_RE.finditer(text)] if others is None
                  else _zw_splits(text))
        if len(splits) >= MIN_ZW_SPLITS:
            _flag_split_words(text, splits, found)


# A split starts right after a letter with a zero-width character (a soft hyphen or another),
# so only where a run of them starts: there at most one, the one ``_ZW_SPLIT_RE.match`` finds
# (its lookbehind sees the letter before the start; the match takes the whole run)
_ZW_RUN_RE = re.compile(f"[{_ZERO_WIDTH}]+")


def _zw_splits(text: str) -> list[int]:
    """Where ``_ZW_SPLIT_RE.finditer(text)`` matches, found from the runs of zero-width
    characters (a pattern that starts with a class, which the regex engine skips to; the
    split pattern starts with a lookbehind, tried at every place)."""
    match = _ZW_SPLIT_RE.match
    return [run.start() for run in _ZW_RUN_RE.finditer(text) if match(text, run.start())]


def _flag_tags(text: str, found: list[tuple[int, int, str]]) -> None:
    for match in _TAG_RUN_RE.finditer(text):
        start, end = match.span()
        if (start > 0 and text[start - 1] == "\U0001f3f4"
                and _FLAG_TAGS_RE.fullmatch(text, start, end)):
            continue                       # an emoji subdivision flag, such as England's
        found.append((start, end, "PI-UNICODE-TAG"))


def _flag_bidi(text: str, found: list[tuple[int, int, str]]) -> None:
    rtl: bool | None = None
    for match in _BIDI_RE.finditer(text):
        if match.group() in _BIDI_EMBED:
            if rtl is None:
                rtl = _RTL_RE.search(text) is not None
            if rtl:
                continue
        start = match.start()
        close = _BIDI_END_RE.search(text, start + 1, start + 2000)
        end = close.end() if close else min(len(text), start + 2000)
        found.append((start, end, "PI-UNICODE-BIDI"))


def _word_end(text: str, start: int) -> int:
    """Where the run of letters and zero-width characters from ``start`` ends (the pattern
    matches the empty string, so there is always a match)."""
    match = _ZW_WORD_END_RE.match(text, start)
    return match.end() if match else start


def _flag_split_words(text: str, splits: list[int],
                      found: list[tuple[int, int, str]]) -> None:
    """A PI-UNICODE-ZW span over each word that zero-width characters split."""
    word_end = -1
    for i in splits:
        if i < word_end:
            continue                       # the same word
        start = i
        while start > 0 and i - start < 200 and _word_end(text[start - 1], 0):
            start -= 1
        word_end = _word_end(text, i)
        end = word_end
        while text[end - 1] in _ZERO_WIDTH:
            end -= 1                       # the word, without zero-width characters around it
        while text[start] in _ZERO_WIDTH:
            start += 1
        found.append((start, end, "PI-UNICODE-ZW"))


def _unmix(norm: str, index: _IndexMap | None, found: list[tuple[int, int, str]],
           fast: bool = True) -> str:
    """Map look-alike letters inside words that mix Latin with Cyrillic or Greek."""
    if not (_has_seam(norm) if fast else _CYR_GREEK_RE.search(norm)):
        return norm
    pieces: list[str] = []
    position = 0
    # (``fast``: the seams found from their Cyrillic or Greek letter, ``_SEAM_AT_RE``: each
    # is in the same word as the seam, so the same words are found)
    for seam in (_SEAM_AT_RE if fast else _SCRIPT_SEAM_RE).finditer(norm):
        if seam.start() < position:
            continue                       # inside a word already handled
        start = seam.start()
        while start > 0 and _WORD_AT_RE.match(norm[start - 1]):
            start -= 1
        word_match = _WORD_AT_RE.match(norm, start)
        assert word_match is not None
        end = word_match.end()
        word = word_match.group()
        mapped = _unmix_word(word)
        if mapped is not None:
            pieces.append(norm[position:start])
            pieces.append(mapped)
            position = end
            original = (start, end) if index is None else (index[start], index[end - 1] + 1)
            found.append((original[0], original[1], "PI-HOMOGLYPH-1"))
        else:
            pieces.append(norm[position:end])
            position = end
    if not pieces:
        return norm
    pieces.append(norm[position:])
    return "".join(pieces)


def _has_seam(norm: str) -> bool:
    """Whether a Latin letter touches a Cyrillic or Greek one (``_SCRIPT_SEAM_RE`` matches):
    none if the text's non-ASCII characters have no Cyrillic or Greek letter, else one search
    that starts at such a letter (``_SEAM_AT_RE``)."""
    if _CYR_GREEK_RE.search(non_ascii(norm)) is None:
        return False
    return _SEAM_AT_RE.search(norm) is not None


# A Cyrillic or Greek letter with a Latin one before or after it: where ``_SCRIPT_SEAM_RE``
# finds a seam, written with the letter first (a class, which the regex engine skips to; it
# tried both branches at every place)
_SEAM_AT_RE = re.compile(f"[{_CG}](?:(?<=[{_LAT}][{_CG}])|(?=[{_LAT}]))")


def _unmix_word(word: str) -> str | None:
    """The word in its main script if every letter of the other script is a look-alike (not a
    word written upside down: "ԀO⊥S" for STOP has a Cyrillic letter for its turned P, and the
    turned letters' own reading reads it back, ``letterforms``)."""
    if _TURNED_RE.search(word) is not None:
        return None
    latin = len(_LATIN_RE.findall(word))
    cyr = len(_CYR_RE.findall(word))
    gre = len(_GRE_RE.findall(word))
    if latin >= cyr + gre:
        table = _TO_LAT
        minority = [c for c in word if not _LATIN_RE.match(c)]
    else:
        table = _LAT_TO_CYR if cyr >= gre else _LAT_TO_GRE
        minority = [c for c in word if _LATIN_RE.match(c)]
    if len(word) < 3 or not all(c in table for c in minority):
        return None
    return "".join(table.get(c, c) if c in minority else c for c in word)
