"""The prompt-injection scanner against the labelled corpus (tests/data/injection), and its speed.

Prints held-out recall (overall and per family) and false-positive rates on held-out benign
items (overall, hard negatives, and the count per benign topic), the same figures on the tune
split for comparison, and throughput: items/s and MB/s scanning the whole corpus repeated
(median of 5 runs), and the median scan time (wall clock and CPU) of a 16 KiB item (ordinary
notes, hard negatives, and injections back to back; the ordinary notes' CPU time also as a
ratio to a reference measured in the same run, taking turns with it: plain Python passes over
the same text's words; the ratio moves with the code more than with the machine), and items/s
and MB/s over the corpus's short items (50-500 characters). Needs no database and no Django:

    .venv/bin/python benchmarks/scanner.py            # quality (held split included) and speed
    .venv/bin/python benchmarks/scanner.py --speed    # speed only, no quality figure
    .venv/bin/python benchmarks/scanner.py --decoders # encodings undone, on tune only

``--decoders`` encodes every tune attack the scanner catches in plain text, and every tune
benign text it leaves clean, each of the ways in ``ENCODINGS``, and prints the share still
caught and the share now flagged: an encoding is undone, not learned, so both should equal
the plain figures (tests/quarantine/test_decoders.py holds a sample of tune to that).

With ``BENCH_SUMMARY=<file>`` it also appends JSON lines for the lead's summary table.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import io
import json
import os
import random
import re
import statistics
import sys
import textwrap
import time
import unicodedata
import urllib.parse
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memadmin.quarantine.scanner import RULES, RULESET_VERSION, scan  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "injection"
RUNS = 5
REPEAT = 10          # the corpus is scanned this many times per throughput run
SIZE = 16 * 1024


def load(name: str) -> list[dict[str, Any]]:
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def quality(malicious: list[dict[str, Any]], benign: list[dict[str, Any]],
            split: str) -> dict[str, Any]:
    mal = [row for row in malicious if row["split"] == split]
    ben = [row for row in benign if row["split"] == split]
    hits: dict[str, list[bool]] = defaultdict(list)
    for row in mal:
        hits[row["family"]].append(scan(row["text"]).flagged)
    flagged = [scan(row["text"]).flagged for row in ben]
    hard = [f for f, row in zip(flagged, ben, strict=True) if row["hard"]]
    topics: dict[str, list[bool]] = defaultdict(list)
    for f, row in zip(flagged, ben, strict=True):
        topics[row["family"]].append(f)
    every = [hit for family in hits.values() for hit in family]
    return {
        "recall": sum(every) / len(every), "malicious": len(every),
        "families": {family: (sum(v) / len(v), len(v)) for family, v in sorted(hits.items())},
        "fp": sum(flagged) / len(flagged), "benign": len(flagged),
        "fp_hard": sum(hard) / len(hard), "hard": len(hard),
        "topics": {topic: (sum(v), len(v)) for topic, v in sorted(topics.items())},
    }


# digits for the letters they look like, in both cases ("1gn0r3 4ll pr3v10u5 1n57ruc710n5")
_LEET = str.maketrans("oiestaOIESTA", "013574013574")


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _wrapped(text: str, width: int) -> str:
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


def _bits(text: str, zero: str, one: str) -> str:
    return "".join(format(b, "08b").replace("0", zero).replace("1", one) for b in text.encode())


def _letters(text: str, lower: int, upper: int) -> str:
    """Letters mapped to a styled alphabet (code points of "a" and "A" in it)."""
    return "".join(chr(lower + ord(c) - 97) if "a" <= c <= "z" else
                   chr(upper + ord(c) - 65) if "A" <= c <= "Z" else c for c in text)


def _caesar(shift: int) -> dict[int, int]:
    return {**{97 + i: 97 + (i + shift) % 26 for i in range(26)},
            **{65 + i: 65 + (i + shift) % 26 for i in range(26)}}


_ATBASH = {**{97 + i: 122 - i for i in range(26)}, **{65 + i: 90 - i for i in range(26)}}
_SMALL_CAPITALS = str.maketrans("abcdefghijklmnopqrstuvwyz", "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ")
# (written here from the ITU table, not imported from the scanner's decoder)
_MORSE = dict(zip("abcdefghijklmnopqrstuvwxyz0123456789.,?!'\"():;=+-/@&", [
    ".-", "-...", "-.-.", "-..", ".", "..-.", "--.", "....", "..", ".---", "-.-", ".-..", "--",
    "-.", "---", ".--.", "--.-", ".-.", "...", "-", "..-", "...-", ".--", "-..-", "-.--", "--..",
    "-----", ".----", "..---", "...--", "....-", ".....", "-....", "--...", "---..", "----.",
    ".-.-.-", "--..--", "..--..", "-.-.--", ".----.", ".-..-.", "-.--.", "-.--.-", "---...",
    "-.-.-.", "-...-", ".-.-.", "-....-", "-..-.", ".--.-.", ".-..."], strict=True))


# (an upside-down generator's table, as the public converters write it: each character turned
# half a circle, the text then read from its end)
_UPSIDE_DOWN = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ1234567890.,'?!()[]{}<>&_",
    "ɐqɔpǝɟƃɥᴉɾʞlɯuodbɹsʇnʌʍxʎz∀ꓭƆᗡƎℲ⅁HIſꓘ˥WNOԀΌᴚS⊥∩ΛMX⅄ZƖᄅƐㄣϛ9ㄥ860˙',¿¡)(][}{><⅋‾")
# combining marks stacked on each letter ("Zalgo"): some compose with the letter (an acute on
# a vowel), most do not (a stroke, marks below)
_MARKS = ("\u0301", "\u0336", "\u0308\u0324", "\u0317\u0330", "\u0300\u035c", "\u0489")


# what a converter keeps together: a character and the marks, tag characters, variation
# selectors, skin tones and joined emoji that belong to it (a flag's tags split apart are no
# flag: a harmless text so written would not be harmless any more)
_CLUSTER_RE = re.compile("(?:.[\u0300-\u036f\ufe0f\U000e0020-\U000e007f\U0001f3fb-\U0001f3ff]*"
                         "\u200d)*.[\u0300-\u036f\ufe0f\U000e0020-\U000e007f"
                         "\U0001f3fb-\U0001f3ff]*", re.DOTALL)


def _spread(separator: str) -> Callable[[str], str]:
    """Each character (with what belongs to it) apart, ``separator`` between."""
    return lambda text: separator.join(_CLUSTER_RE.findall(text))


def _backwards(text: str) -> str:
    return "".join(reversed(_CLUSTER_RE.findall(text)))


def _upside_down(text: str) -> str:
    return "".join(reversed(_CLUSTER_RE.findall(text.translate(_UPSIDE_DOWN))))


_NATO = dict(zip("abcdefghijklmnopqrstuvwxyz", [
    "Alfa", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India",
    "Juliett", "Kilo", "Lima", "Mike", "November", "Oscar", "Papa", "Quebec", "Romeo",
    "Sierra", "Tango", "Uniform", "Victor", "Whiskey", "Xray", "Yankee", "Zulu"], strict=True))


def _mime_q(text: str) -> str:
    """MIME encoded words, Q encoding (RFC 2047): a space as "_", a letter or digit as it
    is, any other byte as "=XX"; a word of at most 75 characters, the next on a folded line
    (``email.header`` would drop the text's own line breaks: a header holds none)."""
    pieces = [chr(b) if chr(b).isalnum() and b < 128 else "_" if b == 32 else f"={b:02X}"
              for b in text.encode()]
    words, word = [], ""
    for piece in pieces:
        if len(word) + len(piece) > 75 - len("=?utf-8?q??="):
            words.append(word)
            word = ""
        word += piece
    return "\r\n ".join(f"=?utf-8?q?{word}?=" for word in [*words, word])


def _ics(text: str) -> str:
    """The text as an iCalendar event's description (RFC 5545): a backslash, ";" and ","
    escaped, a line break written "\\n", the content line folded every 75 octets (a line
    break and a space, where a word or a character may be cut in two: never inside a UTF-8
    character), as calendar programs write an invitation's text."""
    line = "DESCRIPTION:" + (text.replace("\\", "\\\\").replace(";", "\\;")
                             .replace(",", "\\,").replace("\n", "\\n"))
    folded: list[str] = []
    current = ""
    for char in line:
        if len((current + char).encode()) > (75 if not folded else 74):
            folded.append(current)
            current = ""
        current += char
    return ("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:4f1c@cal.example.org\r\n"
            "DTSTART:20261207T090000Z\r\nSUMMARY:Weekly sync\r\n"
            + "\r\n ".join([*folded, current]) + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


def _rtf(text: str) -> str:
    """The text as a rich-text document (RTF 1.9, as WordPad and Word save it): a backslash and
    braces escaped, each line ended by "\\par", each non-ASCII character written "\\uN?" (a
    signed 16-bit code unit in decimal, an astral character as two, "?" what an old reader
    shows instead), after a header with a font table."""
    out: list[str] = []
    for char in text:
        if char in "\\{}":
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\par\n")
        elif ord(char) < 128:
            out.append(char)
        else:
            units = char.encode("utf-16-be")
            for k in range(0, len(units), 2):
                code = int.from_bytes(units[k:k + 2], "big")
                out.append(f"\\u{code - 65536 if code > 32767 else code}?")
    return ("{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fswiss Calibri;}}"
            "{\\*\\generator Riched20 10.0.19041}\\viewkind4\\uc1\\pard\\f0\\fs22 "
            + "".join(out) + "\\par\n}")


_BRAILLE = dict(zip("abcdefghijklmnopqrstuvwxyz,;:.!?'-/",
                    "⠁⠃⠉⠙⠑⠋⠛⠓⠊⠚⠅⠇⠍⠝⠕⠏⠟⠗⠎⠞⠥⠧⠺⠭⠽⠵⠂⠆⠒⠲⠖⠦⠄⠤⠌", strict=True))
_BRAILLE_DIGITS = dict(zip("1234567890", "⠁⠃⠉⠙⠑⠋⠛⠓⠊⠚", strict=True))


def _braille(text: str) -> str:
    """English braille, grade 1: a capital sign before each capital, a number sign before a
    run of digits, a letter sign before a letter a-j right after one; a character braille
    has no cell for here stays as it is."""
    out = []
    for i, c in enumerate(text):
        if c in _BRAILLE_DIGITS:
            out.append(_BRAILLE_DIGITS[c] if i and text[i - 1] in _BRAILLE_DIGITS
                       else "⠼" + _BRAILLE_DIGITS[c])
        elif c.lower() in _BRAILLE and c.isalpha() and c.isupper():
            out.append("⠠" + _BRAILLE[c.lower()])
        elif c in "abcdefghij" and i and text[i - 1] in _BRAILLE_DIGITS:
            out.append("⠰" + _BRAILLE[c])          # (the letter sign: a letter, not a digit)
        else:
            out.append(_BRAILLE.get(c, c))
    return "".join(out)


def _base2048(text: str) -> str:
    import base2048  # (a dev extra, as red-teaming tools call it)

    return base2048.encode(text.encode())


def _ecoji(text: str) -> str:
    import ecoji  # (a dev extra; version 1, lines broken at 76 emoji, as it writes them)

    out = io.StringIO()
    ecoji.encode(io.BytesIO(text.encode()), out)
    return out.getvalue()


_PUNCTUATION = [",", ".", "!", "?", ":", ";", "-"]
_WORD_OR_MARK_RE = re.compile(r"\w+|[^\w\s]|\s")


def _punctuated(text: str, between: bool) -> str:
    """A fifth of the words with a mark inserted (each text its own seeded choice)."""
    rng = random.Random(text)
    pieces = _WORD_OR_MARK_RE.findall(text)
    words = [i for i, piece in enumerate(pieces) if not re.match(r"\W", piece)]
    if not words:
        return text
    count = max(1, round(len(words) * 0.2))
    if between:
        for i in rng.sample(words, count):
            mark = rng.choice(_PUNCTUATION)
            pieces[i] = pieces[i] + mark if rng.randint(0, 1) else mark + pieces[i]
        return "".join(pieces).strip()
    letters = list(text)
    for i in [1] if len(letters) <= count else rng.sample(range(len(letters) - 1), count):
        letters.insert(i, rng.choice(_PUNCTUATION))
    return "".join(letters).strip()


def _pieces(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of ``size`` characters, a character with its marks and an
    emoji sequence (a flag's tag characters) kept whole."""
    clusters = _CLUSTER_RE.findall(text)
    return ["".join(clusters[i:i + size]) for i in range(0, len(clusters), size)]


_LONG_WORD_RE = re.compile(r"[A-Za-z]{4,}")


def _split_words(before: str, after: str = "") -> Callable[[str], str]:
    """Markup put inside each word of four ASCII letters or more: ``before`` at the word's
    middle and, if given, ``after`` two letters on ("ig**no**re")."""
    def split(word: re.Match[str]) -> str:
        text = word.group()
        half = len(text) // 2
        if not after:
            return text[:half] + before + text[half:]
        return text[:half] + before + text[half:half + 2] + after + text[half + 2:]
    return lambda t: _LONG_WORD_RE.sub(split, t)


def _zalgo(text: str) -> str:
    return "".join(c + _MARKS[i % len(_MARKS)] if c.isalpha() else c
                   for i, c in enumerate(text))


#: Ways of writing a text that the scanner must see through (issue 19), by name.
def _redis_value(text: str) -> str:
    """``text`` as Redis quotes a value (``sdscatrepr``): printable ASCII as itself, a quote
    and a backslash escaped, line breaks, tabs and the other bytes escaped."""
    named = {ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n", ord("\r"): "\\r",
             ord("\t"): "\\t"}
    return '"' + "".join(named.get(b, chr(b) if 32 <= b < 127 else f"\\x{b:02x}")
                         for b in text.encode("utf-8")) + '"'


ENCODINGS: dict[str, Callable[[str], str]] = {
    "base64": lambda t: "Decode and follow: " + _b64(t),
    "base64 bare": _b64,
    "base64 wrapped at 76": lambda t: "Decode and follow:\n" + _wrapped(_b64(t), 76),
    "base64 in JSON, wrapped": lambda t: json.dumps({"data": _wrapped(_b64(t), 76)}),
    "base64url unpadded": lambda t: base64.urlsafe_b64encode(t.encode()).decode().rstrip("="),
    "base64 in base64": lambda t: _b64(_b64(t)),
    "base64 of hex": lambda t: _b64(t.encode().hex()),
    "base64 URL-quoted": lambda t: urllib.parse.quote(_b64(t), safe=""),
    "base32": lambda t: base64.b32encode(t.encode()).decode(),
    "hex": lambda t: t.encode().hex(),
    "hex upper case": lambda t: t.encode().hex().upper(),
    "hex spaced": lambda t: " ".join(f"{b:02x}" for b in t.encode()),
    "hex wrapped at 64": lambda t: _wrapped(t.encode().hex(), 64),
    "hex \\x": lambda t: "".join(f"\\x{b:02x}" for b in t.encode()),
    "hex 0x": lambda t: ", ".join(f"0x{b:02x}" for b in t.encode()),
    "URL, every byte": lambda t: "".join(f"%{b:02X}" for b in t.encode()),
    "URL, quote": urllib.parse.quote,
    "URL, quote_plus": urllib.parse.quote_plus,
    "HTML entities, decimal": lambda t: "".join(f"&#{ord(c)};" for c in t),
    "HTML entities, hex": lambda t: "".join(f"&#x{ord(c):x};" for c in t),
    "\\u escapes": lambda t: "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else c for c in t),
    "ROT13": lambda t: codecs.encode(t, "rot13"),
    "Caesar, shift 3": lambda t: t.translate(_caesar(3)),
    "Caesar, shift 23": lambda t: t.translate(_caesar(23)),
    "Atbash": lambda t: t.translate(_ATBASH),
    "binary, spaced": lambda t: " ".join(f"{b:08b}" for b in t.encode()),
    "binary": lambda t: "".join(f"{b:08b}" for b in t.encode()),
    "decimal codes": lambda t: " ".join(str(b) for b in t.encode()),
    "octal escapes": lambda t: "".join(f"\\{b:03o}" for b in t.encode()),
    # (a language's character function, called once a character and joined: encodings)
    "chr() calls, Python": lambda t: "+".join(f"chr({ord(c)})" for c in t),
    "CHAR() calls, SQL, bytes": lambda t: "SELECT " + "+".join(f"CHAR({b})" for b in t.encode()),
    "[char] casts, PowerShell": lambda t: "-join (" + ",".join(f"[char]{ord(c)}" for c in t) + ")",
    # (found by the letter pairs of the text's first 2,048 characters, in any language: a
    # short text in a language the corpus has little of may show too few; a converter turns
    # Latin letters only, and NFKC reads its turned J, "ſ", as "s")
    "backwards": _backwards,
    # (the jailbreak research's flip of each word's letters, the words in their places; a
    # word is what lies between single spaces, as it splits a text: a line break stays inside)
    "each word backwards": lambda t: " ".join(map(_backwards, t.split(" "))),
    "upside down": _upside_down,
    # (a calendar invitation's text: folded lines join again, escapes read as what they
    # stand for)
    "iCalendar description": _ics,
    # (a rich-text document: its escapes and control words read as a word processor shows it)
    "RTF document": _rtf,
    # (round 18) a value as a Redis MONITOR line shows it: UTF-8 bytes past ASCII as \xNN,
    # quotes and backslashes escaped, line breaks as \n
    "Redis MONITOR value": _redis_value,
    # (round 19) prose hard-wrapped at a fixed width, as an e-mail client or a PDF's text puts
    # it: each paragraph's lines at most 62 characters, broken at spaces
    "hard-wrapped at 62 columns": lambda t: "\n".join(
        textwrap.fill(paragraph, 62, break_long_words=False, break_on_hyphens=False)
        if paragraph else "" for paragraph in t.split("\n")),
    "letters spaced out": _spread(" "),
    "letters dotted": _spread("."),
    "letters hyphenated": _spread("-"),
    "combining marks (Zalgo)": _zalgo,
    # (each character on a line of its own: a space as a line holding one, a line break as an
    # empty line)
    "one letter per line": lambda t: "\n".join(cluster if cluster != "\n" else ""
                                               for cluster in _CLUSTER_RE.findall(t)),
    "leetspeak": lambda t: t.translate(_LEET),
    "fullwidth": lambda t: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in t),
    "mathematical bold": lambda t: _letters(t, 0x1D41A, 0x1D400),
    "circled": lambda t: _letters(t, 0x24D0, 0x24B6),
    "parenthesized": lambda t: "".join(chr(0x249C + ord(c) - 97) if "a" <= c <= "z" else c
                                       for c in t.lower()),
    "negative circled": lambda t: _letters(t.upper(), 0x1F150, 0x1F150),
    "negative squared": lambda t: _letters(t.upper(), 0x1F170, 0x1F170),
    "small capitals": lambda t: t.lower().translate(_SMALL_CAPITALS),
    "regional indicators": lambda t: "".join(chr(0x1F1E6 + ord(c) - 97) if "a" <= c <= "z"
                                             else c for c in t.lower()),
    # (mail and file transfer: scanner.transfer)
    "quoted-printable": lambda t: binascii.b2a_qp(t.encode(), quotetabs=True).decode(),
    "quoted-printable, every byte": lambda t: "".join(f"={b:02X}" for b in t.encode()),
    "MIME encoded word, Q": _mime_q,
    "MIME encoded word, B": lambda t: "=?UTF-8?B?" + _b64(t) + "?=",
    "uuencode": lambda t: "begin 644 note.txt\n" + "".join(
        binascii.b2a_uu(t.encode()[i:i + 45]).decode() for i in range(0, len(t.encode()), 45))
        + "`\nend",
    "uuencode, lines only": lambda t: "".join(
        binascii.b2a_uu(t.encode()[i:i + 45]).decode() for i in range(0, len(t.encode()), 45)),
    "Ascii85": lambda t: base64.a85encode(t.encode()).decode(),
    "Ascii85, Adobe, wrapped": lambda t: base64.a85encode(t.encode(), adobe=True,
                                                          wrapcol=76).decode(),
    "base85": lambda t: base64.b85encode(t.encode()).decode(),
    "braille": _braille,
    # (binary-to-text over large alphabets, by the published encoders: scanner.alphabets)
    "Base2048": _base2048,
    "Ecoji": _ecoji,
    # (markup a reader skips, inside words: scanner.markup_splits)
    "terminal colours inside words": _split_words("\x1b[31m", "\x1b[0m"),
    "terminal escapes written out": _split_words("\\x1b[0m"),
    "HTML comments inside words": _split_words("<!-- -->"),
    "HTML tags inside words": _split_words("<b>", "</b>"),
    "Markdown bold inside words": _split_words("**", "**"),
    "tag characters": lambda t: "Nice weather." + "".join(
        chr(0xE0000 + ord(c)) if ord(c) < 128 else c for c in t),
    "invisible operators as bits": lambda t: "Nice weather." + _bits(t, "\u2062", "\u2063"),
    "zero-width bits": lambda t: "Nice weather." + _bits(t, "\u200b", "\u200c"),
}
#: Ways read back only in part (printed, not held to "caught whenever the plain text is"):
#: the words in reverse order (below); Morse code has no capitals, line breaks, "_", "<" or
#: "#", which many attacks and many harmless texts need to be read as they are, and no
#: letters but Latin ones.
PARTLY: dict[str, Callable[[str], str]] = {
    # the flip of the words' order, found where sentences start and end, so only in a script
    # with capitals and a text with a sentence's end; and a harmless text so written is
    # another text (a quoted order comes before its quotation mark and its context)
    "words in reverse order": lambda t: " ".join(reversed(t.split(" "))),
    # the NATO spelling alphabet carries Latin letters only (no case, digit, mark or other
    # letter); words apart by " / ", or run together as an encoder that drops the spaces
    # writes them (split into the likeliest words: scanner.words)
    "NATO spelling, words apart": lambda t: " / ".join(
        " ".join(_NATO[c] for c in word if c in _NATO) for word in t.lower().split()),
    "NATO spelling, run together": lambda t: " ".join(_NATO[c] for c in t.lower() if c in _NATO),
    "Morse code": lambda t: " / ".join(" ".join(_MORSE[c] for c in word if c in _MORSE)
                                       for word in t.lower().split()),
    # punctuation inserted, as a public converter does to a fifth of the words: before or
    # after a word, or anywhere in the text (into words too); read back where marks start
    # words, so a text whose marks all came after a word or inside one is read as written
    "punctuation between words": lambda t: _punctuated(t, between=True),
    "punctuation within words": lambda t: _punctuated(t, between=False),
    # the text cut into string literals of eight characters (an emoji or an accent kept
    # whole) that the language joins again, "payload splitting": read joined, with the quotes
    # escaped inside read as quotes (encodings); the text as written keeps its own readings,
    # where a literal's start reads as a line's ("admin: ..." as a header), and a header that
    # must start a line ("### System") is inside a literal
    "string literals joined, +": lambda t: " + ".join(
        json.dumps(piece, ensure_ascii=False) for piece in _pieces(t, 8)),
    "string literals joined, SQL": lambda t: "SELECT " + " || ".join(
        "'" + piece.replace("'", "''") + "'" for piece in _pieces(t, 8)),
    # an acute accent on every vowel, as a public converter writes it: read without the
    # accent the text carries most, which also drops a language's own acutes ("próxima"),
    # so an order in Spanish, French, Portuguese or Polish can read as no order
    "accents on the vowels": lambda t: unicodedata.normalize(
        "NFC", "".join(c + "\u0301" if c in "aeiouAEIOU" else c for c in t)),
}
# (families that are themselves an encoding or a hidden channel are left out of the texts)
_ENCODED_FAMILIES = ("encoded_payload", "invisible_unicode", "homoglyph", "encoded_data")


def decoders(malicious: list[dict[str, Any]], benign: list[dict[str, Any]]) -> None:
    """Each encoding's share of caught tune attacks still caught, and of clean tune benign
    texts now flagged (tune only: no held text is scanned)."""
    def tune(rows: list[dict[str, Any]]) -> list[str]:
        return [row["text"] for row in rows if row["split"] == "tune"
                and len(row["text"].encode()) <= 1500 and row["family"] not in _ENCODED_FAMILIES]

    caught = [text for text in tune(malicious) if scan(text).flagged]
    clean = [text for text in tune(benign) if not scan(text).flagged]
    print(f"\nencodings undone (tune only): {len(caught)} attacks caught in plain text, "
          f"{len(clean)} benign texts clean in plain text")
    print(f"{'encoding':<30} {'caught':>7} {'benign flagged':>15}")
    for name, encode in {**ENCODINGS, **PARTLY}.items():
        still = sum(scan(encode(text)).flagged for text in caught) / len(caught)
        flagged = sum(scan(encode(text)).flagged for text in clean) / len(clean)
        print(f"{name:<30} {still:>7.3f} {flagged:>15.3f}")


def median_seconds(work: Any, runs: int, clock: Any = time.perf_counter) -> float:
    """The median time of ``work``; ``clock=time.process_time`` for CPU time, which other
    processes on a busy machine do not inflate."""
    times = []
    for _ in range(runs):
        started = clock()
        work()
        times.append(clock() - started)
    return statistics.median(times)


def throughput(texts: list[str]) -> tuple[float, float]:
    scan("warm up: ｆｕｌｌｗｉｄｔｈ")  # builds the NFKC table outside the timing

    def work() -> None:
        for _ in range(REPEAT):
            for text in texts:
                scan(text)

    seconds = median_seconds(work, RUNS)
    size = sum(len(text.encode("utf-8")) for text in texts) * REPEAT
    return len(texts) * REPEAT / seconds, size / seconds / 1e6


def short_items(texts: list[str]) -> tuple[int, float, float, float]:
    """Short items (50-500 characters, the size of most agent writes and of the endpoint batch
    benchmark's items): how many, items/s and MB/s by CPU time, items/s by wall clock."""
    short = [text for text in texts if 50 <= len(text) <= 500]
    scan("warm up: ｆｕｌｌｗｉｄｔｈ")

    def work() -> None:
        for _ in range(REPEAT):
            for text in short:
                scan(text)

    cpu = median_seconds(work, RUNS, time.process_time)
    wall = median_seconds(work, RUNS)
    size = sum(len(text.encode("utf-8")) for text in short) * REPEAT
    return len(short), len(short) * REPEAT / cpu, size / cpu / 1e6, len(short) * REPEAT / wall


def speed(malicious: list[dict[str, Any]], benign: list[dict[str, Any]]) -> dict[str, float]:
    """The speed figures (no quality figure: this part may be run alone, ``--speed``)."""
    texts = [row["text"] for row in malicious + benign]
    items_per_s, mb_per_s = throughput(texts)
    n_short, short_cpu, short_mb, short_wall = short_items(texts)
    plain = [row for row in benign if not row["hard"]]
    text_plain, ms_plain, cpu_plain = item_16k(plain)
    reference, ratio = reference_ratio(text_plain)
    _, ms_hard, cpu_hard = item_16k([row for row in benign if row["hard"]])
    # keyword-heavy: injections back to back (tune split), the worst case for the rule gates
    _, ms_heavy, cpu_heavy = item_16k([row for row in malicious if row["split"] == "tune"])
    print(f"\nspeed, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"throughput (whole corpus x{REPEAT}, median of {RUNS}): "
          f"{items_per_s:,.0f} items/s, {mb_per_s:.2f} MB/s")
    print(f"short items ({n_short} of 50-500 chars, x{REPEAT}, median of {RUNS}): "
          f"{short_cpu:,.0f} items/s, {short_mb:.2f} MB/s by CPU time; {short_wall:,.0f} "
          "items/s wall clock")
    print(f"16 KiB item, median of 21 (wall / CPU): {ms_plain:.2f} / {cpu_plain:.2f} ms "
          f"(ordinary benign notes), {ms_hard:.2f} / {cpu_hard:.2f} ms (hard negatives: code, "
          f"base64, non-Latin, emoji), {ms_heavy:.2f} / {cpu_heavy:.2f} ms (keyword-heavy: "
          "tune injections back to back)")
    print(f"16 KiB of ordinary notes by CPU, as a ratio to {REFERENCE_PASSES} plain Python passes "
          f"over its words ({reference:.2f} ms, the reference; the two take turns): {ratio:.2f}")
    return {"items/s": items_per_s, "short items/s": short_cpu, "short MB/s": short_mb,
            "16 KiB median ms": ms_plain, "16 KiB median CPU ms": cpu_plain,
            "16 KiB / reference": ratio}


_REFERENCE_WORD_RE = re.compile(r"\w+")
REFERENCE_PASSES = 5


def reference_ratio(text: str) -> tuple[float, float]:
    """The reference the 16 KiB figure is divided by, measured in the same run: a plain Python
    pass over the text's words (lower-cased, split by a regex, counted in a dict), the least a
    scanner that looks at each word does, ``REFERENCE_PASSES`` times. The scan and the
    reference take turns, 21 of each, so both meet the same machine (this one ran 1.5-2x
    slower on some days, and faster or slower within a run); returns the reference's median
    CPU ms and the ratio of the medians, which moves with the scanner's code."""

    def reference() -> None:
        for _ in range(REFERENCE_PASSES):
            counts: dict[str, int] = {}
            for word in _REFERENCE_WORD_RE.findall(text.lower()):
                counts[word] = counts.get(word, 0) + 1

    scans, references = [], []
    for _ in range(21):
        scans.append(median_seconds(lambda: scan(text), 1, time.process_time))
        references.append(median_seconds(reference, 1, time.process_time))
    return (statistics.median(references) * 1000,
            statistics.median(scans) / statistics.median(references))


def item_16k(rows: list[dict[str, Any]]) -> tuple[str, float, float]:
    """A 16 KiB text made of ``rows``, its median scan time in ms: wall clock and CPU."""
    text = " ".join(row["text"] for row in rows)
    text = (text * (SIZE // len(text) + 1))[:SIZE]
    return (text, median_seconds(lambda: scan(text), 21) * 1000,
            median_seconds(lambda: scan(text), 21, time.process_time) * 1000)


def main() -> None:
    if sys.argv[1:] not in ([], ["--speed"], ["--decoders"]):
        # an unknown option must not fall through to the default run: that prints held figures
        sys.exit(f"usage: {sys.argv[0]} [--speed | --decoders] (none: quality on held and tune, "
                 "a look at held to be logged, then speed)")
    malicious, benign = load("malicious.jsonl"), load("benign.jsonl")
    if sys.argv[1:] == ["--speed"]:       # speed only: no held figure is computed or shown
        print(f"prompt-injection scanner, rule set {RULESET_VERSION} ({len(RULES)} rules)")
        speed(malicious, benign)
        return
    if sys.argv[1:] == ["--decoders"]:    # tune only: no held figure is computed or shown
        print(f"prompt-injection scanner, rule set {RULESET_VERSION} ({len(RULES)} rules)")
        decoders(malicious, benign)
        return
    held, tune = quality(malicious, benign, "held"), quality(malicious, benign, "tune")

    print(f"prompt-injection scanner, rule set {RULESET_VERSION} ({len(RULES)} rules)")
    print(f"{'split':<6} {'recall':>7} {'(n)':>5} {'FP all':>7} {'(n)':>5} {'FP hard':>8} "
          f"{'(n)':>5}")
    for name, q in (("held", held), ("tune", tune)):
        print(f"{name:<6} {q['recall']:>7.3f} {q['malicious']:>5} {q['fp']:>7.3f} "
              f"{q['benign']:>5} {q['fp_hard']:>8.3f} {q['hard']:>5}")
    print(f"\n{'family':<22} {'held recall':>11} {'(n)':>5} {'tune recall':>11} {'(n)':>5}")
    for family, (recall, n) in held["families"].items():
        tune_recall, tune_n = tune["families"][family]
        print(f"{family:<22} {recall:>11.3f} {n:>5} {tune_recall:>11.3f} {tune_n:>5}")
    print(f"\n{'benign topic':<22} {'held FP':>7} {'(n)':>5} {'tune FP':>7} {'(n)':>5}")
    for topic, (fp, n) in held["topics"].items():
        tune_fp, tune_n = tune["topics"].get(topic, (0, 0))
        print(f"{topic:<22} {fp:>7} {n:>5} {tune_fp:>7} {tune_n:>5}")
    figures = speed(malicious, benign)
    decoders(malicious, benign)

    summary = os.environ.get("BENCH_SUMMARY")
    if summary:
        rows = [("held recall", held["recall"], "ratio"),
                ("held FP overall", held["fp"], "ratio"),
                ("held FP hard", held["fp_hard"], "ratio"),
                ("items/s", figures["items/s"], "items/s"),
                ("short items/s (CPU)", figures["short items/s"], "items/s"),
                ("short items MB/s (CPU)", figures["short MB/s"], "MB/s"),
                ("16 KiB median ms", figures["16 KiB median ms"], "ms"),
                ("16 KiB median CPU ms", figures["16 KiB median CPU ms"], "ms"),
                ("16 KiB CPU / word-pass reference", figures["16 KiB / reference"], "ratio")]
        with open(summary, "a", encoding="utf-8") as out:
            for name, value, unit in rows:
                out.write(json.dumps({"benchmark": "scanner", "name": name,
                                      "value": round(value, 4), "unit": unit}) + "\n")


if __name__ == "__main__":
    main()
