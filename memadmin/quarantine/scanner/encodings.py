"""Step 4 of a scan: base64 and hex blocks, and the text they decode to (the engine rescans it)."""

from __future__ import annotations

import base64
import binascii
import re

from memadmin.quarantine.scanner.limits import (
    MAX_BLOCKS,
    MAX_DECODED,
    MIN_B64,
    MIN_HEX,
    PRINTABLE_SHARE,
)

_B64_RE = re.compile(rf"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_-]{{{MIN_B64},}}={{0,2}}")


_HEX_ONLY_RE = re.compile(r"(?:[0-9a-fA-F]{2})+")


_SPACED_HEX_RE = re.compile(rf"(?<![0-9A-Za-z])[0-9a-fA-F]{{2}}(?:[ :][0-9a-fA-F]{{2}})"
                            rf"{{{MIN_HEX // 2 - 1},}}(?![0-9A-Za-z])")


_ESC_HEX_RE = re.compile(rf"(?:\\x[0-9a-fA-F]{{2}}){{{MIN_HEX // 2},}}")


_NOT_HEX_RE = re.compile(r"[^0-9a-fA-F]")


# Cheap necessary conditions, over the text as bytes (non-ASCII as "?"): each pattern starts
# with a rare byte class, which the regex engine skips to quickly.
_ESC_HEX_HINT = re.compile(rb"\\x[0-9a-fA-F]{2}\\x")


_SPACED_HEX_HINT = re.compile(rb"[ :][0-9a-fA-F]{2}(?:[ :][0-9a-fA-F]{2}){%d}"
                              % (MIN_HEX // 2 - 2))   # the pairs after the first


_B64_HINT = re.compile(rb"[^A-Za-z0-9+/_=-][A-Za-z0-9+/_-]{%d}" % MIN_B64)


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
    if kind == "hex" or _HEX_ONLY_RE.fullmatch(block):
        text = _printable_text(_decode_hex(block))
        if text is not None or kind == "hex":
            return text
    data = _decode_b64(block)
    return _printable_text(data) if data else None


def _encoded_blocks(norm: str, hinted: bool = True) -> list[tuple[int, int, str]]:
    """Candidate blocks, the widest first where they overlap, at most ``MAX_BLOCKS``."""
    candidates: list[tuple[int, int, str]] = []
    data = b" " + norm.encode("ascii", "replace")     # a separator before the first block
    for pattern, kind, hint in ((_ESC_HEX_RE, "hex", _ESC_HEX_HINT), (_SPACED_HEX_RE, "hex",
                                _SPACED_HEX_HINT), (_B64_RE, "base64", _B64_HINT)):
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

