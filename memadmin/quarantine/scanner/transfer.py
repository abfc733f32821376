"""Step 4 of a scan, continued: the encodings mail and file transfer use to carry bytes as text,
read back (issue 19: "every common text encoding").

Quoted-printable (``=49=67...``, soft line breaks ``=`` at a line's end), MIME encoded words
(``=?UTF-8?Q?...?=`` and ``=?UTF-8?B?...?=``, in any charset Python knows), uuencoded lines
(with or without ``begin``/``end``) and Ascii85 (with or without Adobe's ``<~ ~>``) and base85
(RFC 1924, git). Each is one more kind of ``encodings._KINDS``: a pattern, a cheap hint, and a
decoder here; a block that decodes to text is judged as plain text is (PI-ENCODED-1).

A run of printable ASCII without spaces is Ascii85 or base85 only if all of it is in the
alphabet and its first ten characters already decode to text: a URL, a path or a line of code
(random bytes once decoded) is no candidate, so it crowds no real block out of ``MAX_BLOCKS``.
"""

from __future__ import annotations

import base64
import binascii
import email.errors
import email.header
import re
import unicodedata

from memadmin.quarantine.scanner.limits import MAX_DECODED, MIN_B64, PRINTABLE_SHARE

# -- quoted-printable: at least ``MIN_QP`` escapes (upper-case hex, as RFC 2045 writes
# them; the first one such, the others may be soft line breaks, "=" at a line's end), at most
# 256 other characters apart; the plain text before the first escape, as far back as 256
# characters or the last "=", belongs to it (``QP_LEAD_RE``: "###=20System=20Prompt:")
MIN_QP = 3          # (one fewer than other escapes: a short order has few spaces)
_QP_ESCAPE = r"=(?:[0-9A-F]{2}|\r?\n)"
QP_RE = re.compile(rf"=[0-9A-F]{{2}}(?:[^=]{{0,256}}?{_QP_ESCAPE}){{{MIN_QP - 1},}}"
                   rf"[^=]{{0,256}}")
QP_HINT = re.compile(rb"=[0-9A-F]{2}[^=]{0,256}=(?:[0-9A-F]{2}|\r?\n)").search
QP_LEAD_RE = re.compile(r".*=", re.DOTALL)
QP_LEAD = 256
_SOFT_BREAK_RE = re.compile(r"=\r?\n")

# -- MIME encoded words (RFC 2047), one or more in a row
_WORD = r"=\?[A-Za-z0-9_.:+-]{1,40}(?:\*[A-Za-z-]{1,20})?\?[BbQq]\?[^?\s]{1,1024}\?="
MIME_RE = re.compile(rf"{_WORD}(?:\s{{0,8}}{_WORD})*")
MIME_HINT = re.compile(rb"=\?[A-Za-z0-9_.:+*-]{1,60}\?[BbQq]\?").search

# -- Ascii85 and base85: a run of printable ASCII (``MIN_B64`` characters at least) between
# spaces, line breaks or the text's ends (found through ``encodings._BY_CLASSES``), and
# Adobe's form of Ascii85, which may be wrapped
TOKEN_RE = re.compile(rf"(?<![!-~])[!-~]{{{MIN_B64},}}(?![!-~])")
TOKEN_CLASSES = (bytes(range(0x21, 0x7F)),)
ADOBE_RE = re.compile(r"<~[!-uz\s]{8,}~>")
ADOBE_HINT = re.compile(rb"<~[!-uz]{5}").search
_A85 = frozenset(chr(c) for c in range(0x21, 0x76)) | {"z"}
_B85 = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                 "!#$%&()*+-;<=>?@^_`{|}~")
_HEAD = 10          # characters decoded first (two groups: eight bytes)
_NOT_BASE64_RE = re.compile(r"[^A-Za-z0-9+/=_%-]")
_NOT_A85_RE = re.compile(r"[v-y{|}~]")
_NOT_B85_RE = re.compile(r"[\"',./:\[\\\]]")

# -- uuencode: lines that each start with their length (" " + n) and hold that many bytes; the
# first may follow a label on its line ("Encoded: M26=N;W)E...")
# (the first line holds eight bytes at least; the last may be short)
UU_RE = re.compile(r"[!-M][ -`]{9,60}$(?:\n[!-M][ -`]{3,60}$)*", re.MULTILINE)
_UU_CLASSES = bytes(ord("0") if 0x20 <= b <= 0x60 else ord("1") if b == 10 else ord(".")
                    for b in range(256))
_UU_HINT = b"0" * 10 + b"1"        # a line that ends with ten such characters (``UU_RE``)


def uu_hint(data: bytes) -> bool:
    """Whether a line of ``data`` (the text as bytes, a separator in front) ends with ten
    characters or more of uuencode's that are a uuencoded line, from the line's start or
    after a space (its label's): the line ends are found in C, and few lines end so."""
    classes = (data + b"\n").translate(_UU_CLASSES)
    i = classes.find(_UU_HINT)
    while i >= 0:
        end = i + len(_UU_HINT) - 1
        start = max(classes.rfind(b".", 0, i), classes.rfind(b"1", 0, i)) + 1
        if _uu_start(data[start:end].decode("ascii")) is not None:
            return True
        i = classes.find(_UU_HINT, end + 1)
    return False


def printable_text(data: bytes, legacy: bool = False) -> str | None:
    """Decoded bytes as text, if eight characters or more, ``PRINTABLE_SHARE`` of them
    printable: UTF-8, or (``legacy``: a quoted-printable e-mail in ISO 8859-1) Latin-1.
    (Random bytes are no UTF-8, but mostly printable Latin-1.) Every decoder's check. A
    format character counts as printable: the joiners of a family emoji and the tags of a
    Scottish flag are part of ordinary text."""
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        if not legacy:
            return None
        decoded = data.decode("latin-1")
    if len(decoded) < 8:
        return None
    printable = sum(1 for c in decoded
                    if c.isprintable() or c in "\n\r\t" or unicodedata.category(c) == "Cf")
    return decoded if printable >= PRINTABLE_SHARE * len(decoded) else None


_QP_HEX_RE = re.compile(r"=([0-9A-F]{2})")
_SPACE_RE = re.compile(r"\s")
_SMALL_RE = re.compile(r"[a-z]")
# what a quoted-printable encoder escapes: "=", white space, control and non-ASCII bytes
_QP_ESCAPED = frozenset([*range(0x20), 0x20, 0x3D, *range(0x7F, 0x100)])


def _quoted_printable(block: str) -> bool:
    """Whether a block's escapes are those of quoted-printable: a soft line break, mostly
    bytes an encoder must or may escape, every byte escaped, or escapes apart by words in
    small letters ("Ign=6Fre all prev=69ous": letters escaped to get past a filter). Ascii85
    and uuencode hold a few "=" escapes by chance ("=3A", "=6F"), of letters and marks: with
    no space between in Ascii85, and no small letter in uuencode."""
    if _SOFT_BREAK_RE.search(block):
        return True
    escapes = list(_QP_HEX_RE.finditer(block))
    between = block[escapes[0].end():escapes[-1].start()]
    if _SPACE_RE.search(between) and _SMALL_RE.search(between):
        return True
    natural = sum(int(escape[1], 16) in _QP_ESCAPED for escape in escapes)
    return natural * 2 >= len(escapes) or len(escapes) * 3 * 2 >= len(block)


def decode_qp(block: str) -> str | None:
    """The text of a quoted-printable block (``QP_RE``), soft line breaks joined."""
    data = _SOFT_BREAK_RE.sub("", block[: MAX_DECODED * 3])
    try:
        raw = binascii.a2b_qp(data.encode("utf-8"))
    except (binascii.Error, ValueError):
        return None
    text = printable_text(raw, legacy=True)
    return text if text is not None and text != block else None


def decode_mime(block: str) -> str | None:
    """The text of a run of MIME encoded words (``MIME_RE``), in the charsets they name."""
    try:
        header = email.header.make_header(email.header.decode_header(block[: MAX_DECODED * 2]))
        text = str(header)
    except (LookupError, UnicodeError, ValueError, binascii.Error,
            email.errors.HeaderParseError):
        return None
    return text if text != block and printable_text(text.encode("utf-8")) else None


def _unwrapped_token(token: str) -> str:
    """A run without the quotes or brackets around it (Ascii85 writes them too: tried as
    written first), and Adobe's ``<~ ~>`` (and the line breaks inside)."""
    if token.startswith("<~") and token.endswith("~>"):
        return "".join(token[2:-2].split())
    while len(token) > 2 and token[0] in "\"'([{<`" and token[-1] in "\"')]}>`,.;:":
        token = token[1:-1]
    return token


def _decode85(token: str, head: bool = False) -> bytes | None:
    """The bytes of an Ascii85 or base85 run (of its first ``_HEAD`` characters only:
    ``head``), whichever alphabet holds all of it (as written, or without the quotes or
    brackets around it) and decodes to text (``head``: may be text); None for neither."""
    for written in dict.fromkeys((token, _unwrapped_token(token))):
        part = written[:_HEAD] if head else written[: MAX_DECODED * 5 // 4]
        chars = set(written)
        for alphabet, decode in ((_A85, base64.a85decode), (_B85, base64.b85decode)):
            if chars <= alphabet:
                try:
                    data = decode(part)
                except (ValueError, binascii.Error):
                    continue
                if _texty(data) if head else printable_text(data) is not None:
                    return data
    return None


def _texty(head: bytes) -> bool:
    """Whether the first bytes of a decoding may be text: UTF-8 (a character cut by their
    end allowed) of printable characters, line breaks and tabs."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 3:
            return False
        head = head[: error.start]
    return all(32 <= byte < 127 or byte in (9, 10, 13) or byte >= 128 for byte in head)


def base85_like(token: str) -> bool:
    """Whether a run of printable ASCII may be Ascii85 or base85: all of it in one alphabet,
    not all of it base64 (the base64 kind reads that), its first ten characters text."""
    if not token.startswith("<~") and (
            _NOT_BASE64_RE.search(token) is None                      # (base64 or a word)
            or (_NOT_A85_RE.search(token) and _NOT_B85_RE.search(token))):
        return False                 # (regex searches, in C: most runs fail here)
    return _decode85(token, head=True) is not None


def decode85(token: str) -> str | None:
    """The text of an Ascii85 or base85 run (``TOKEN_RE``, ``ADOBE_RE``)."""
    data = _decode85(token)
    return printable_text(data) if data else None


def _uu_line(line: str, start: int = 0) -> bool:
    """Whether ``line[start:]`` is as long as its first character says (it may have lost up
    to three trailing spaces): an all-capitals line of a note is not."""
    if start >= len(line):
        return False
    needed = -(-(ord(line[start]) - 32) // 3) * 4
    return 0 <= needed - (len(line) - start - 1) <= 3


# the longest line ``_uu_line`` accepts: a length character ("`", 64 bytes) and 88 more
_UU_LONGEST = 1 + 88


def _uu_start(line: str) -> str | None:
    """``line`` from where it is a uuencoded line: the whole, or after a space (its label's,
    "Encoded: M26=..."); None if from nowhere. Only the spaces near the line's end can start
    one (a line of a megabyte with a space every few characters took seconds, each place
    copied out and measured)."""
    if _uu_line(line):
        return line
    first = max(0, len(line) - _UU_LONGEST - 1)
    return next((line[i + 1:] for i in range(first, len(line))
                 if line[i] == " " and _uu_line(line, i + 1)), None)


def _uu_lines(block: str) -> list[str]:
    """The lines of a run of ``UU_RE``, the first from where it fits (after its label)."""
    lines = block.split("\n")
    lines[0] = _uu_start(lines[0]) or lines[0]
    return lines


def _uu_decodes(block: str) -> bool:
    """(Lines of figures in capitals may fit by chance; they do not decode to UTF-8.)"""
    return _uu_line(_uu_lines(block)[0]) and decode_uu(block) is not None


def decode_uu(block: str) -> str | None:
    """The bytes of a run of uuencoded lines (``UU_RE``), a line of another length (a heading
    in capitals next to it) left out."""
    data = bytearray()
    for line in _uu_lines(block):
        if not _uu_line(line):
            continue
        try:
            data += binascii.a2b_uu(line)
        except (binascii.Error, ValueError):
            return None
        if len(data) >= MAX_DECODED:
            break
    return printable_text(bytes(data[:MAX_DECODED]))


# Whether a candidate of a kind may be such a block (cheap, by its first characters, its first
# line, its escapes): the runs of printable ASCII, the lines in capitals and the "=" escapes of
# ordinary text and code are many, and must not take the places of real blocks among the
# ``MAX_BLOCKS`` that ``encodings`` decodes (a run of Ascii85 holds a few "=XX" by chance)
MAY_BE = {"base85": base85_like, "uu": _uu_decodes, "qp": _quoted_printable}
