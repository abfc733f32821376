"""Step 4 of a scan: encoded blocks and the text they decode to (the engine rescans it).

Base64 (and base64url), hex (plain, spaced, ``\\x``, ``0x``), URL percent-escapes, HTML
entities, ``\\u`` escapes and ROT13. Each kind has a cheap hint (a byte pattern that must
occur) so that an ordinary text costs a few ``bytes`` searches.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import urllib.parse

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
_U_ESC_RE = re.compile(rf"(?:\\u[0-9a-fA-F]{{4}}[^\\\n]{{0,8}}){{{MIN_ENTITIES},}}")
_U_ONE_RE = re.compile(r"\\u([0-9a-fA-F]{4})")
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
_U_ESC_HINT = re.compile(rb"\\u[0-9a-fA-F]{4}")
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


def _decoded(block: str, kind: str) -> str | None:
    """The text an encoded block stands for, if it decodes to mostly printable UTF-8."""
    if kind == "0x":
        return _printable_text(_decode_hex(block.replace("0x", "")))
    if kind in ("url", "entity", "u"):
        if kind == "url":
            try:
                text = urllib.parse.unquote(block[: MAX_DECODED * 3], errors="strict")
            except UnicodeDecodeError:
                return None
        elif kind == "entity":
            text = html.unescape(block[: MAX_DECODED * 8])
        else:
            text = _U_ONE_RE.sub(lambda m: chr(int(m.group(1), 16)), block[: MAX_DECODED * 6])
        return text if text != block and _printable_text(text.encode()) else None
    if kind == "hex" or _HEX_ONLY_RE.fullmatch(block):
        decoded = _printable_text(_decode_hex(block))
        if decoded is not None or kind == "hex":
            return decoded
    data = _decode_b64(block)
    return _printable_text(data) if data else None


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
        for count, match in enumerate(pattern.finditer(norm)):
            if count >= 4 * MAX_BLOCKS:
                break
            candidates.append((match.start(), match.end(), kind))
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



def _rot13(norm: str) -> tuple[int, int, str] | None:
    """The span and decoded text of a ROT13 passage: at least three of its words are common
    prompt words once rotated, three times as many as before. (Over bytes, in C passes;
    non-ASCII characters become "?" one for one, so indices agree.)"""
    data = norm.encode("ascii", "replace")
    rotated = data.translate(_ROT13)
    hits = sum(map(_COMMON.__contains__, _WORD_BYTES_RE.findall(rotated.lower())))
    if hits < 3 or hits < 3 * sum(map(_COMMON.__contains__,
                                      _WORD_BYTES_RE.findall(data.lower()))) + 1:
        return None
    matches = [m for m in _WORD_BYTES_RE.finditer(rotated.lower()) if m.group() in _COMMON]
    start, end = matches[0].start(), matches[-1].end()
    return start, end, rotated[start:end].decode("ascii")


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
