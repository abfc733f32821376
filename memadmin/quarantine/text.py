"""Text helpers shared by the scanner and PI-MODEL-1 (no project imports: both use them)."""

from __future__ import annotations

import re

#: A word: a run of letters and digits of any script ("_" separates words).
WORD_RE = re.compile(r"[^\W_]+")

_ASCII_BYTES = bytes(range(128))


def unspaced_char(ch: str) -> bool:
    """Whether ``ch`` belongs to a script written without spaces between words (Chinese,
    Japanese, Korean) or to its punctuation and fullwidth forms: such a character needs no space
    before a word or a quote."""
    return "\u3000" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" or "\uff00" <= ch <= "\uffef"


def non_ascii(text: str) -> str:
    """The non-ASCII characters of ``text``, in order: where a search for characters that are
    all non-ASCII (invisible, astral, Cyrillic, non-ASCII letters) can run, a few instead of
    every one. (UTF-8 writes them with bytes above 127 only, so deleting the others leaves
    them whole; in C.)"""
    return (text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
            .decode("utf-8", "surrogatepass"))


def line_at(data: bytes, at: int) -> tuple[int, int]:
    """The start and end of the line of ``data`` that holds index ``at`` (a text as bytes whose
    indices are its characters', such as ``text.encode("ascii", "replace")``)."""
    end = data.find(b"\n", at)
    return data.rfind(b"\n", 0, at) + 1, len(data) if end < 0 else end
