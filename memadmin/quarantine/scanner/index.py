"""The compiled regex rules, their anchors, and the word-start index that decides cheaply which
rule parts a text can match."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memadmin.quarantine.scanner.normalise import _Text
from memadmin.quarantine.scanner.rules import _REGEX_SPECS
from memadmin.quarantine.scanner.spec import _B, _alt, _Part

# Patterns are written in lower case and run over the lower-cased text (same length, same
# indices): the regex engine's literal checks are cheaper without IGNORECASE. A part with a
# case-sensitive group (``(?-i:...)``, capitals as placeholders) runs case-insensitively over
# the normalised text instead.
_FLAGS = re.MULTILINE


_META = set("()[]{}.*+?|^$\\")


def _anchor(lead: str) -> str:
    """The literal text every match of a lead starts with (lower-case)."""
    literal: list[str] = []
    i = 0
    while i < len(lead):
        ch = lead[i]
        if ch == "\\" and i + 1 < len(lead) and not lead[i + 1].isalnum():
            literal.append(lead[i + 1])
            i += 2
            continue
        if ch in _META:
            if ch in "?*{" and literal:
                literal.pop()          # the last literal is optional
            break
        literal.append(ch)
        i += 1
    if not literal:
        raise ValueError(f"lead {lead!r} does not start with a literal")
    return "".join(literal).lower()


@dataclass(frozen=True)
class _Anchor:
    """A literal a match starts with (lower-case), and how its presence is checked cheaply:
    ``word``: some word of the text starts with it; otherwise it is a substring."""

    text: str
    word: bool
    ascii: bool


@dataclass(frozen=True)
class _Compiled:
    rule_id: str
    regex: re.Pattern[str]
    before: re.Pattern[str] | None
    word: bool                   # a match starts a word
    cased: bool                  # run over the original-case text, IGNORECASE
    anchors: tuple[tuple[str, int], ...]  # the literals a match starts with, and the ids (into
                                          # ``_ANCHORS``) of what shows they may be present
    requires: tuple[int, ...]    # ids of literals of which one must be present for a match


_ANCHOR_IDS: dict[_Anchor, int] = {}


def _anchor_id(literal: str, word: bool) -> int:
    """The id of an anchor; a word anchor with more after its first run of letters ("i am",
    "e-mail") is looked up by that run (a superset: presence only decides what to search)."""
    literal = literal.lower()
    lead = _WORDISH_RE.match(literal)
    if word and lead and not _unspaced(literal):
        anchor = _Anchor(lead.group(), True, lead.group().isascii())
    else:
        anchor = _Anchor(literal, False, literal.isascii())
    return _ANCHOR_IDS.setdefault(anchor, len(_ANCHOR_IDS))


def _compile(rule_id: str, part: _Part) -> _Compiled:
    body = _alt(*part.leads) + part.rest
    cased = "(?-i:" in body
    flags = _FLAGS | re.IGNORECASE if cased else _FLAGS
    regex = re.compile((_B + body) if part.word else body, flags)
    anchors = tuple(dict.fromkeys((_anchor(lead), _anchor_id(_anchor(lead), part.word))
                                  for lead in part.leads))
    before = re.compile(part.before, flags) if part.before else None
    requires = tuple(dict.fromkeys(_anchor_id(r, part.word) for r in part.requires))
    return _Compiled(rule_id, regex, before, part.word, cased, anchors, requires)


_WORDISH_RE = re.compile(r"[^\W_]+")


def _unspaced(anchor: str) -> bool:
    """Scripts written without spaces, where an anchor need not start a word."""
    return any("\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af"
               or "\uff00" <= c <= "\uffef" or "\u3000" <= c <= "\u303f" for c in anchor)


_COMPILED: tuple[_Compiled, ...] = tuple(
    _compile(spec.id, part) for spec in _REGEX_SPECS if isinstance(spec.pattern, tuple)
    for part in spec.pattern)


_ANCHORS: tuple[_Anchor, ...] = tuple(_ANCHOR_IDS)


def _trie(words: Iterable[bytes]) -> bytes:
    """A regex matching any of ``words`` (the longest at a position), factored as a trie so
    that the engine tests a few characters per position, not every word."""
    trie: dict = {}
    for word in words:
        node = trie
        for byte in word:
            node = node.setdefault(byte, {})
        node[None] = {}

    def emit(node: dict) -> bytes:
        branches = [re.escape(bytes([byte])) + emit(child)
                    for byte, child in sorted(node.items(), key=lambda kv: kv[0] or 0)
                    if byte is not None]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        return b"(?:" + body + b")?" if None in node else body

    return emit(trie)


# ASCII word anchors are found through a word-start index: one regex pass over the text lists
# where each key (the first three letters of an anchor, or a shorter anchor) starts a word.
_ASCII_WORD_KEYS: frozenset[bytes] = frozenset(
    a.text[:3].encode("ascii") for a in _ANCHORS if a.word and a.ascii)


_WORD_START_RE = re.compile(rb"(?<![A-Za-z0-9])" + _trie(_ASCII_WORD_KEYS))


_KEYS_BY_PREFIX: dict[bytes, tuple[bytes, ...]] = {   # index keys an anchor can occur under
    p: tuple(sorted(k for k in _ASCII_WORD_KEYS if k.startswith(p))) for p in _ASCII_WORD_KEYS}


_ASCII_WORDS_BY_KEY: dict[bytes, tuple[int, ...]] = {}


for _id, _a in enumerate(_ANCHORS):
    if _a.word and _a.ascii:
        for _key in _KEYS_BY_PREFIX[_a.text[:3].encode("ascii")]:
            _ASCII_WORDS_BY_KEY[_key] = (*_ASCII_WORDS_BY_KEY.get(_key, ()), _id)


# Other word anchors (accented, Cyrillic, ...) by their first three letters.
_OTHER_WORDS: dict[str, tuple[int, ...]] = {}


for _id, _a in enumerate(_ANCHORS):
    if _a.word and not _a.ascii:
        _OTHER_WORDS[_a.text[:3]] = (*_OTHER_WORDS.get(_a.text[:3], ()), _id)


# ASCII substring anchors by their first byte: most texts lack "<", "[", "`" ...
_PLAIN_ASCII: dict[bytes, tuple[tuple[int, bytes], ...]] = {}


for _id, _a in enumerate(_ANCHORS):
    if not _a.word and _a.ascii:
        _key = _a.text[:1].encode("ascii")
        _PLAIN_ASCII[_key] = (*_PLAIN_ASCII.get(_key, ()), (_id, _a.text.encode("ascii")))


_PLAIN_OTHER: tuple[tuple[int, str, str | None], ...] = tuple(   # (id, text, CJK first char)
    (i, a.text, a.text[0] if _unspaced(a.text[0]) else None)
    for i, a in enumerate(_ANCHORS) if not a.word and not a.ascii)


# The parts each anchor can start, so that a scan runs only the parts whose anchors occur.
_PARTS_BY_ANCHOR: dict[int, tuple[int, ...]] = {}


for _n, _part in enumerate(_COMPILED):
    for _, _id in _part.anchors:
        _PARTS_BY_ANCHOR[_id] = (*_PARTS_BY_ANCHOR.get(_id, ()), _n)


_BEFORE = 24     # characters before an anchor in which a part's ``before`` must match


_CJK_RE = re.compile("[\u3000-\u303f\u3040-\u9fff\uac00-\ud7af\uff00-\uffef]")


class _Index:
    """What a text contains, to decide cheaply which parts to run: the ids of the anchors that
    may be present (a superset: a word anchor whose first three letters start a word, another
    anchor that is a substring), and where each anchor occurs."""

    __slots__ = ("data", "lower", "positions", "present", "starts")

    def __init__(self, lower: str) -> None:
        self.lower = lower
        self.positions: dict[tuple[str, bool, bool], list[int]] = {}
        # ``data``: the text as bytes of the same length, non-ASCII characters as "?", so that
        # ASCII anchors are found by fast bytes searches at the same indices
        self.data = data = lower.encode("ascii", "replace")
        starts: dict[bytes, list[int]] = {}
        for match in _WORD_START_RE.finditer(data):
            key = match.group()
            found = starts.get(key)
            if found is None:
                starts[key] = [match.start()]
            else:
                found.append(match.start())
        self.starts = starts
        present: set[int] = set()
        for key in starts:
            present.update(_ASCII_WORDS_BY_KEY.get(key, ()))
        for first, anchors in _PLAIN_ASCII.items():
            if first in data:
                present.update(anchor_id for anchor_id, needle in anchors if needle in data)
        if not lower.isascii():
            prefixes = set()
            for token in set(lower.split()):
                if not token.isascii():
                    if token.isalnum():
                        prefixes.add(token[:3])
                    else:
                        prefixes.update(word[:3] for word in _WORDISH_RE.findall(token))
            for prefix in prefixes.intersection(_OTHER_WORDS):
                present.update(_OTHER_WORDS[prefix])
            cjk = set(_CJK_RE.findall(lower))
            present.update(anchor_id for anchor_id, text, first in _PLAIN_OTHER
                           if (first is None or first in cjk) and text in lower)
        self.present = present

    def has(self, anchor_id: int) -> bool:
        """Whether the anchor occurs (exactly: a word anchor where a word starts)."""
        if anchor_id not in self.present:
            return False
        anchor = _ANCHORS[anchor_id]
        return not anchor.word or bool(self.find(anchor.text, True))

    def find(self, anchor: str, word: bool, indexed: bool = True) -> list[int]:
        """Where ``anchor`` occurs; ``word``: only where a word starts (what ``_B`` checks).
        ``indexed``: an ASCII word through the word-start index, else by plain search."""
        key = (anchor, word, indexed)
        found = self.positions.get(key)
        if found is None:
            lower = self.lower
            found = []
            if indexed and word and anchor.isascii() and _WORDISH_RE.fullmatch(anchor):
                needle = anchor.encode("ascii")
                data, starts = self.data, self.starts
                keys = _KEYS_BY_PREFIX[needle[:3]]
                if len(keys) == 1:
                    found = starts.get(keys[0], [])
                else:
                    found = sorted(i for key in keys for i in starts.get(key, ()))
                if len(needle) > 3:
                    found = [i for i in found if data.startswith(needle, i)]
            elif anchor.isascii():
                data, needle = self.data, anchor.encode("ascii")
                i = data.find(needle)
                while i >= 0:
                    found.append(i)
                    i = data.find(needle, i + 1)
            else:
                i = lower.find(anchor)
                while i >= 0:
                    found.append(i)
                    i = lower.find(anchor, i + 1)
            if word:
                found = [i for i in found if not i or not lower[i - 1].isalnum()]
            self.positions[key] = found
        return found


def _regex_matches(text: _Text, *, gated: bool = True) -> Iterator[tuple[int, int, str]]:
    """Matches of the regex rules: each part is tried where one of its anchors occurs
    (``gated``: only parts with an anchor present and, if they name required words, one of
    those present; ungated: every anchor of every part, the reference the gates must agree
    with)."""
    norm, lower = text.norm, text.lower
    index = _Index(lower)
    present = index.present
    if gated:
        numbers: Iterable[int] = sorted({n for anchor_id in present
                                         for n in _PARTS_BY_ANCHOR.get(anchor_id, ())})
    else:
        numbers = range(len(_COMPILED))
    for number in numbers:
        part = _COMPILED[number]
        if gated:
            if part.requires and not any(index.has(r) for r in part.requires):
                continue
            anchors = [text for text, a in part.anchors if a in present]
        else:
            anchors = [text for text, _ in part.anchors]
        word = part.word
        if len(anchors) == 1:
            positions = index.find(anchors[0], word, gated)
        else:
            positions = sorted({i for anchor in anchors for i in index.find(anchor, word, gated)})
        last_end = 0
        regex, before = part.regex, part.before
        subject = norm if part.cased else lower
        for i in positions:
            if i < last_end:
                continue                   # inside this part's previous match
            if before is not None and not before.search(subject, max(0, i - _BEFORE), i):
                continue
            match = regex.match(subject, i)
            if match and match.end() > i:
                last_end = match.end()
                yield i, last_end, part.rule_id
