"""Step 4 of a scan: encoded blocks and the text they decode to (the engine rescans it).

Base64 (and base64url), hex (plain, spaced, ``\\x``, ``0x``), URL percent-escapes, HTML
entities, ``\\u`` escapes (also ``\\u{...}`` and ``\\U........``) and ROT13. Each kind has a
cheap hint (a byte pattern that must occur) so that an ordinary text costs a few ``bytes``
searches. A block of escapes takes in the plain characters right before its first escape
("Disreg%61rd"), a ROT13 passage the words around its common ones.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import urllib.parse
from itertools import islice

from memadmin.quarantine.scanner.index import _trie
from memadmin.quarantine.scanner.limits import (
    MAX_BLOCKS,
    MAX_DECODED,
    MIN_B64,
    MIN_ENTITIES,
    MIN_HEX,
    PRINTABLE_SHARE,
)

_B64_RE = re.compile(rf"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{{{MIN_B64},}}={{0,2}}")


_HEX_ONLY_RE = re.compile(r"(?:[0-9a-fA-F]{2})+")


_SPACED_HEX_RE = re.compile(rf"(?<![0-9A-Za-z])[0-9a-fA-F]{{2}}(?:[ :][0-9a-fA-F]{{2}})"
                            rf"{{{MIN_HEX // 2 - 1},}}(?![0-9A-Za-z])")


_ESC_HEX_RE = re.compile(rf"(?:\\x[0-9a-fA-F]{{2}}){{{MIN_HEX // 2},}}")


_NOT_HEX_RE = re.compile(r"[^0-9a-fA-F]")
_0X_HEX_RE = re.compile(rf"(?<![0-9A-Za-z])0x[0-9a-fA-F]{{2}}(?:[ ,;]{{1,3}}0x[0-9a-fA-F]{{2}})"
                        rf"{{{MIN_HEX // 2 - 1},}}")
_URL_ESC_RE = re.compile(rf"(?:%[0-9a-fA-F]{{2}}[^\s%\"'<>]{{0,24}}){{{MIN_ENTITIES},}}")
_ENTITY_RE = re.compile(r"(?:&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,15});"
                        rf"[^&\n]{{0,24}}){{{MIN_ENTITIES},}}")
# \u00e9, \u{e9} (JavaScript), \U000000e9 (Python)
_U_ESC = r"\\(?:u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]{1,6})\}|U([0-9a-fA-F]{8}))"
_U_ESC_RE = re.compile(rf"(?:{_U_ESC}[^\\\n]{{0,8}}){{{MIN_ENTITIES},}}")
_U_ONE_RE = re.compile(_U_ESC)
# Common words of English prompts: ROT13 text has few of them and many once decoded.
_COMMON_WORDS = (
    "the and you your all to of is are now ignore previous instructions system prompt user send "
    "tell reveal every from with this that do not new password admin any must never rules "
    "print say reply answer instead las los del und die der les des instrucciones anweisungen "
    "sistema tu el de y et")
_COMMON = frozenset(word.encode() for word in _COMMON_WORDS.split())
_WORD_BYTES_RE = re.compile(rb"[a-z]+")
_ROT13 = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                         b"NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")


# Cheap necessary conditions, over the text as bytes (non-ASCII as "?"): each pattern starts
# with a rare byte class, which the regex engine skips to quickly.
_ESC_HEX_HINT = re.compile(rb"\\x[0-9a-fA-F]{2}\\x")


_SPACED_HEX_HINT = re.compile(rb"[ :][0-9a-fA-F]{2}(?:[ :][0-9a-fA-F]{2}){%d}"
                              % (MIN_HEX // 2 - 2))   # the pairs after the first


_0X_HINT = re.compile(rb"0x[0-9a-fA-F]{2}[ ,;]{1,3}0x")
_URL_HINT = re.compile(rb"%[0-9a-fA-F]{2}")
_ENTITY_HINT = re.compile(rb"&#?[0-9A-Za-z]{1,16};")
_U_ESC_HINT = re.compile(rb"\\(?:u[0-9a-fA-F]{4}|u\{[0-9a-fA-F]|U[0-9a-fA-F]{8})")
_B64_HINT = re.compile(rb"[^A-Za-z0-9+/_-][A-Za-z0-9+/_-]{%d}" % MIN_B64)


def _printable_text(data: bytes) -> str | None:
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(decoded) < 8:
        return None
    printable = sum(1 for c in decoded if c.isprintable() or c in "\n\r\t")
    return decoded if printable >= PRINTABLE_SHARE * len(decoded) else None


def _decode_b64(block: str) -> bytes | None:
    block = block.rstrip("=")[: MAX_DECODED * 4 // 3]
    if len(block) % 4 == 1:
        block = block[:-1]
    altchars = b"-_" if ("-" in block or "_" in block) else None
    try:
        return base64.b64decode(block + "=" * (-len(block) % 4), altchars=altchars,
                                validate=True)
    except (binascii.Error, ValueError):
        return None


def _decode_hex(block: str) -> bytes:
    digits = _NOT_HEX_RE.sub("", block.replace("\\x", ""))[: MAX_DECODED * 2]
    return bytes.fromhex(digits[: len(digits) - len(digits) % 2])


def _code_point(match: re.Match[str]) -> str:
    code = int(match.group(1) or match.group(2) or match.group(3), 16)
    return chr(code) if code <= 0x10FFFF else "\ufffd"


def _decoded(block: str, kind: str) -> str | None:
    """The text an encoded block stands for, if it decodes to mostly printable UTF-8."""
    if kind == "0x":
        return _printable_text(_decode_hex(block.replace("0x", "")))
    if kind in ("url", "entity", "u"):
        if kind == "url":
            unquote = urllib.parse.unquote_plus if "+" in block else urllib.parse.unquote
            try:
                text = unquote(block[: MAX_DECODED * 3], errors="strict")
            except UnicodeDecodeError:
                return None
        elif kind == "entity":
            text = html.unescape(block[: MAX_DECODED * 8])
        else:
            text = _U_ONE_RE.sub(_code_point, block[: MAX_DECODED * 6])
            # a surrogate pair (as JSON writes an emoji) is one character; a lone half is none
            text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return text if text != block and _printable_text(text.encode()) else None
    if kind == "hex" or _HEX_ONLY_RE.fullmatch(block):
        decoded = _printable_text(_decode_hex(block))
        if decoded is not None or kind == "hex":
            return decoded
    data = _decode_b64(block)
    return _printable_text(data) if data else None


# Escapes mixed with plain text ("Disreg%61rd%20your"): the letters right before the first
# escape (at most ``_LEAD``), the start of its word, belong to the block.
_LEAD = 24


_LEAD_RE = re.compile(r"[^\W_]*\Z")


_ESCAPE_KINDS = frozenset(("url", "entity", "u"))


_KINDS = ((_ESC_HEX_RE, "hex", _ESC_HEX_HINT), (_SPACED_HEX_RE, "hex", _SPACED_HEX_HINT),
          (_0X_HEX_RE, "0x", _0X_HINT), (_URL_ESC_RE, "url", _URL_HINT),
          (_ENTITY_RE, "entity", _ENTITY_HINT), (_U_ESC_RE, "u", _U_ESC_HINT),
          (_B64_RE, "base64", _B64_HINT))


def _encoded_blocks(norm: str, hinted: bool = True) -> list[tuple[int, int, str]]:
    """Candidate blocks, the widest first where they overlap, at most ``MAX_BLOCKS``."""
    candidates: list[tuple[int, int, str]] = []
    data = b" " + norm.encode("ascii", "replace")     # a separator before the first block
    for pattern, kind, hint in _KINDS:
        if hinted and hint.search(data) is None:
            continue                       # a cheap pass shows there is no such block
        escapes = kind in _ESCAPE_KINDS
        for count, match in enumerate(pattern.finditer(norm)):
            if count >= 4 * MAX_BLOCKS:
                break
            start = match.start()
            if escapes:                    # "Disreg%61rd": the block starts with its word
                before = _LEAD_RE.search(norm, max(0, start - _LEAD), start)
                start = before.start() if before else start   # (it matches, if only at start)
            candidates.append((start, match.end(), kind))
    candidates.sort(key=lambda c: (c[0], c[0] - c[1]))
    taken: list[tuple[int, int, str]] = []
    last_end = -1
    for start, end, kind in candidates:
        if start >= last_end:
            taken.append((start, end, kind))
            last_end = end
            if len(taken) >= MAX_BLOCKS:
                break
    return taken



def _words_re(words: frozenset[bytes]) -> re.Pattern[bytes]:
    """Counts the words of a lower-cased text (runs of a-z, after a space put in front) that
    are one of ``words``: each match is the character before such a run and the run."""
    return re.compile(rb"[^a-z]" + _trie(words) + rb"(?![a-z])")


_COMMON_RE = _words_re(_COMMON)


_COMMON_ROT13_RE = _words_re(frozenset(word.translate(_ROT13) for word in _COMMON))


def _rotated_enough(lower: bytes) -> bool:
    """Whether at least three words of ``lower`` (with a space in front) rotate to common
    prompt words, three times as many as are common prompt words, plus one: the common words
    are counted only as far as needed (an ordinary text has its first few early on)."""
    hits = len(_COMMON_ROT13_RE.findall(lower))
    if hits < 3:
        return False
    allowed = (hits - 1) // 3          # hits >= 3 * common + 1, so common <= allowed
    return next(islice(_COMMON_RE.finditer(lower), allowed, None), None) is None


def _rot13(norm: str) -> tuple[int, int, str] | None:
    """The span and decoded text of a ROT13 passage: at least three of its words are common
    prompt words once rotated, three times as many as before. (Over bytes, in C passes;
    non-ASCII characters become "?" one for one, so indices agree.)"""
    data = norm.encode("ascii", "replace")
    lower = b" " + data.lower()
    if not _rotated_enough(lower):
        return None
    rotated = data.translate(_ROT13)
    matches = [m for m in _WORD_BYTES_RE.finditer(rotated.lower()) if m.group() in _COMMON]
    start, end = matches[0].start(), matches[-1].end()
    # the words just before the first common one and after the last (at most
    # ``_ROT13_REACH`` each way, not past punctuation) are part of the passage: "Qvfertneq lbhe"
    before = _ROT13_BEFORE_RE.search(data, max(0, start - 24 * _ROT13_REACH), start)
    start = before.start() if before else start
    after = _ROT13_AFTER_RE.match(data, end)
    end = after.end() if after else end
    return start, end, rotated[start:end].decode("ascii")


_ROT13_REACH = 3


_ROT13_BEFORE_RE = re.compile(rb"(?<![A-Za-z])(?:[A-Za-z]{1,24}[ \t]{1,4}){0,%d}\Z"
                              % _ROT13_REACH)


_ROT13_AFTER_RE = re.compile(rb"(?:[ \t]{1,4}[A-Za-z]{1,24}(?![A-Za-z])){0,%d}" % _ROT13_REACH)


def decoded_blocks(norm: str, hinted: bool = True) -> list[tuple[int, int, str]]:
    """``(start, end, decoded text)`` of each encoded block of ``norm`` that decodes to text."""
    found = []
    for start, end, kind in _encoded_blocks(norm, hinted):
        text = _decoded(norm[start:end], kind)
        if text is not None:
            found.append((start, end, text))
    rot = _rot13(norm)
    if rot is not None:
        found.append(rot)
    return found
