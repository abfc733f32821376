"""The compiled regex rules, their anchors, and the word-start index that decides cheaply which
rule parts a text can match."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain, repeat

import ahocorasick_rs

from memadmin.quarantine.scanner.normalise import _Text
from memadmin.quarantine.scanner.rules import _REGEX_SPECS
from memadmin.quarantine.scanner.spec import _B, _alt, _Part, _trie
from memadmin.quarantine.text import WORD_RE, unspaced_char

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
    lead = WORD_RE.match(literal)
    if word and lead and not _unspaced(literal):
        anchor = _Anchor(lead.group(), True, lead.group().isascii())
    else:
        anchor = _Anchor(literal, False, literal.isascii())
    return _ANCHOR_IDS.setdefault(anchor, len(_ANCHOR_IDS))


def _compile(rule_id: str, part: _Part) -> _Compiled:
    body = _alt(*part.leads) + part.rest
    cased = "(?-i:" in body
    flags = _FLAGS | re.IGNORECASE if cased else _FLAGS
    try:
        regex = re.compile((_B + body) if part.word else body, flags)
    except re.error as error:
        raise ValueError(f"{rule_id} {part.leads[:3]} {part.rest[:60]!r}: {error}") from error
    anchors = tuple(dict.fromkeys((_anchor(lead), _anchor_id(_anchor(lead), part.word))
                                  for lead in part.leads))
    before = re.compile(part.before, flags) if part.before else None
    requires = tuple(dict.fromkeys(_anchor_id(r, part.word) for r in part.requires))
    return _Compiled(rule_id, regex, before, part.word, cased, anchors, requires)


def _unspaced(anchor: str) -> bool:
    """Scripts written without spaces, where an anchor need not start a word."""
    return any(map(unspaced_char, anchor))


_COMPILED: tuple[_Compiled, ...] = tuple(
    _compile(spec.id, part) for spec in _REGEX_SPECS if not isinstance(spec.pattern, str)
    for part in spec.pattern)


_ANCHORS: tuple[_Anchor, ...] = tuple(_ANCHOR_IDS)


# The parts each anchor can start, so that a scan runs only the parts whose anchors occur.
_PARTS_BY_ANCHOR: dict[int, tuple[int, ...]] = {}


for _n, _part in enumerate(_COMPILED):
    for _, _id in _part.anchors:
        _PARTS_BY_ANCHOR[_id] = (*_PARTS_BY_ANCHOR.get(_id, ()), _n)


_BEFORE = 24     # characters before an anchor in which a part's ``before`` must match


def _word_starts(lower: str, places: list[int]) -> list[int]:
    """The ``places`` where a word starts (not after a letter or digit): what ``_B`` checks."""
    return [i for i in places if not i or not lower[i - 1].isalnum()]


class _Index:
    """Where anchors occur in a text, by plain search (the reference path's index)."""

    __slots__ = ("data", "lower", "positions")

    def __init__(self, lower: str) -> None:
        self.lower = lower
        self.positions: dict[tuple[str, bool], list[int]] = {}
        # ``data``: the text as bytes of the same length, non-ASCII characters as "?", so that
        # ASCII anchors are found by fast bytes searches at the same indices
        self.data = lower.encode("ascii", "replace")

    def find(self, anchor: str, word: bool) -> list[int]:
        """Where ``anchor`` occurs; ``word``: only where a word starts (what ``_B`` checks)."""
        key = (anchor, word)
        found = self.positions.get(key)
        if found is None:
            lower = self.lower
            found = []
            if anchor.isascii():
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
                found = _word_starts(lower, found)
            self.positions[key] = found
        return found


# The gated path's index is exact: it finds which anchors occur, and a part runs only if one
# of its anchors does (and one of its required words, if it names some).
#
# Every ASCII word anchor (a run of letters and digits) is a key of an Aho-Corasick automaton
# (ahocorasick_rs, compiled): one pass over the text finds, where each word starts, the longest
# anchor the word begins with, and so every anchor that starts a word there (its prefixes that
# are anchors). A regex trie (``spec._trie``) did the same with a backtracking try at every word.
_TRIE_WORDS: frozenset[bytes] = frozenset(
    a.text.encode("ascii") for a in _ANCHORS if a.word and a.ascii)


# Run over the text with a space before it and every byte that is no ASCII letter or digit made
# a space (``_SPACED``): a key is a word with the space before it, so it matches only where a
# word starts, at the word's own index; the longest match there is the one kept.
_WORD_KEYS: tuple[bytes, ...] = tuple(sorted(_TRIE_WORDS))


_WORDS_AC = ahocorasick_rs.BytesAhoCorasick(
    [b" " + w for w in _WORD_KEYS], matchkind=ahocorasick_rs.MatchKind.LeftmostLongest,
    implementation=ahocorasick_rs.Implementation.DFA)


_SPACED = bytes(byte if chr(byte).isascii() and chr(byte).isalnum() else 32 for byte in range(256))


# The trie words right after a "?" (which stands for any non-ASCII character in ``data``).
_AFTER_OTHER_RE = re.compile(rb"\?(" + _trie(_TRIE_WORDS) + rb")")


_WORD_ID: dict[bytes, int] = {a.text.encode("ascii"): i for i, a in enumerate(_ANCHORS)
                              if a.word and a.ascii}


_PREFIX_IDS: dict[bytes, frozenset[int]] = {   # the anchors a trie word starts with
    w: frozenset(_WORD_ID[w[:k]] for k in range(1, len(w) + 1) if w[:k] in _WORD_ID)
    for w in _TRIE_WORDS}


_EXTENSIONS: dict[bytes, tuple[bytes, ...]] = {  # the trie words that start with a trie word
    w: tuple(sorted(v for v in _TRIE_WORDS if v.startswith(w))) for w in _TRIE_WORDS}


# The other anchors through a second automaton over the lower-cased text itself: the ASCII
# substring anchors ("needles": "://", "eval"), present where they occur, and the non-ASCII
# ones (accented, Cyrillic, CJK). Of those a word anchor counts where a word starts (not after
# a letter or digit of any script, what ``_Index.find`` checks); one of one or two letters
# ("не") only if it is a whole word somewhere (its leads are whole words followed by a space),
# and then at every word it starts, as the plain search places it. A needle of one character
# ("." or "/" in most texts, "前" in Chinese) is no key: its every occurrence would be a step in
# Python, where ``in`` stops at the first.
#
# The same automaton also finds the gates' other literals of more than one character that are
# no anchor of their own ("phrases": "the assistant", "you are", "не делай", whose anchor is
# their first word): a gate counts and places them, and each was a search of the whole text,
# most of them finding nothing. The index keeps every place of a substring anchor or a phrase
# (overlapping ones too), so ``count`` and ``find`` read them off.
_SUBSTRING, _WORD, _SHORT_WORD, _PHRASE = 0, 1, 2, 3


_SINGLE_NEEDLES: tuple[tuple[str, int], ...] = tuple(
    (a.text, i) for i, a in enumerate(_ANCHORS) if not a.word and len(a.text) == 1)


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


_OTHERS: tuple[tuple[int, int, str], ...] = tuple(   # (kind, anchor id, text), by key
    (_SUBSTRING if not a.word else _WORD if len(a.text) >= 3 else _SHORT_WORD, i, a.text)
    for i, a in enumerate(_ANCHORS)
    if (not a.word and len(a.text) > 1) or (a.word and not a.ascii))


def _is_trie_literal(literal: str, word: bool) -> bool:
    """Whether a gate finds a part's literal through the trie words (else it is an "other")."""
    return word and literal.isascii() and literal.encode("ascii") in _TRIE_WORDS


_OTHERS += tuple((_PHRASE, -1, text) for text in sorted(
    {literal for part in _COMPILED for literal, _ in part.anchors
     if len(literal) > 1 and not _is_trie_literal(literal, part.word)}
    - {text for _, _, text in _OTHERS}))


# The literals whose every place the index keeps, under ``(literal, False)``.
_RECORDED: frozenset[str] = frozenset(
    text for kind, _, text in _OTHERS if kind in (_SUBSTRING, _PHRASE))


if len({text for _, _, text in _OTHERS}) < len(_OTHERS):   # a key would stand for one of them
    _twice = sorted(text for text in {t for _, _, t in _OTHERS}
                    if sum(t == text for _, _, t in _OTHERS) > 1)
    raise ValueError(f"a word anchor and a substring anchor with the same text: {_twice}")
if any(_SURROGATE_RE.search(text) or "\ufffd" in text for _, _, text in _OTHERS):
    raise ValueError("an anchor with a surrogate or U+FFFD (``_others_matches`` needs none)")


# (Standard matching: every match, overlapping ones too)
_OTHERS_AC = ahocorasick_rs.AhoCorasick(
    [text for _, _, text in _OTHERS], matchkind=ahocorasick_rs.MatchKind.Standard,
    implementation=ahocorasick_rs.Implementation.DFA)


def _others_matches(lower: str) -> list[tuple[int, int, int]]:
    """``_OTHERS_AC``'s matches in ``lower``: (key number, start, end). The automaton takes
    UTF-8, which a lone surrogate has none of: it is searched for as U+FFFD, which no key
    holds either, so the matches and their indices are the same."""
    try:
        return _OTHERS_AC.find_matches_as_indexes(lower, overlapping=True)
    except UnicodeEncodeError:
        return _OTHERS_AC.find_matches_as_indexes(_SURROGATE_RE.sub("\ufffd", lower),
                                                  overlapping=True)


@dataclass(frozen=True)
class _Gate:
    """What the gated path needs of a part, computed once. Its literals that are trie words
    are found through ``keys``: the trie words that start with one of them (a word of the text
    the trie finds starts them), each with how many of them it starts with (so a part's count
    of places is the sum over its literals, as if each were looked up alone). Its other
    literals with their anchor ids, and its required anchor ids."""

    keys: frozenset[bytes]
    weights: dict[bytes, int]
    weighted: bool                 # a key starts more than one of the literals
    others: tuple[tuple[int, str], ...]
    requires: frozenset[int]


def _gate(part: _Compiled) -> _Gate:
    weights: dict[bytes, int] = {}
    others: list[tuple[int, str]] = []
    for literal, anchor_id in part.anchors:
        if _is_trie_literal(literal, part.word):
            for key in _EXTENSIONS[literal.encode("ascii")]:
                weights[key] = weights.get(key, 0) + 1
        else:
            others.append((anchor_id, literal))
    return _Gate(frozenset(weights), weights, any(w > 1 for w in weights.values()),
                 tuple(others), frozenset(part.requires))


_GATES: tuple[_Gate, ...] = tuple(_gate(part) for part in _COMPILED)


class _ExactIndex(_Index):
    """The gated path's index: ``present`` holds exactly the ids of the anchors that occur (a
    word anchor where a word starts), ``starts`` where each trie word found starts a word
    (not after a letter or digit of any script), ``keys`` those trie words."""

    __slots__ = ("counts", "keys", "present", "starts")

    def __init__(self, lower: str) -> None:
        super().__init__(lower)
        self.counts: dict[str, int] = {}           # count, computed once a literal
        data = self.data
        starts: dict[bytes, list[int]] = {}
        get = starts.get
        for number, start, _end in _WORDS_AC.find_matches_as_indexes(
                (b" " + data).translate(_SPACED)):
            key = _WORD_KEYS[number]
            found = get(key)
            if found is None:
                starts[key] = [start]
            else:
                found.append(start)
        ascii_text = lower.isascii()
        if not ascii_text:                 # "?" before a start stands for any other character
            for match in _AFTER_OTHER_RE.finditer(data):   # (a start after a "?" is in starts)
                i = match.start() + 1
                if lower[i - 1].isalnum():     # after a letter or digit: no word start
                    key = match[1]
                    found = starts[key]
                    if len(found) == 1:
                        del starts[key]
                    else:
                        found.remove(i)
        self.starts = starts
        self.keys = set(starts)
        present: set[int] = set()
        for key in starts:
            present.update(_PREFIX_IDS[key])
        present.update([anchor_id for needle, anchor_id in _SINGLE_NEEDLES if needle in lower])
        positions = self.positions
        for number, i, end in _others_matches(lower):
            kind, anchor_id, text = _OTHERS[number]
            if kind in (_SUBSTRING, _PHRASE):
                if kind == _SUBSTRING:
                    present.add(anchor_id)
                found = positions.get((text, False))
                if found is None:
                    positions[(text, False)] = [i]
                else:
                    found.append(i)
                continue
            if i and lower[i - 1].isalnum():
                continue
            found = positions.get((text, True))
            if found is None:
                positions[(text, True)] = [i]
            else:
                found.append(i)
            if kind == _WORD or end == len(lower) or not lower[end].isalnum():
                present.add(anchor_id)
        self.present = present

    def count(self, literal: str) -> int:
        """How many places a literal that is not a trie word occurs, words or not (cheap: no
        list is made; remembered)."""
        if literal in _RECORDED:
            return len(self.positions.get((literal, False), ()))
        found = self.counts.get(literal)
        if found is None:
            found = (self.data.count(literal.encode("ascii")) if literal.isascii()
                     else self.lower.count(literal))
            self.counts[literal] = found
        return found

    def find(self, anchor: str, word: bool) -> list[int]:
        if anchor not in _RECORDED:
            return super().find(anchor, word)
        every = self.positions.get((anchor, False), [])
        if not word:
            return every
        found = self.positions.get((anchor, True))
        if found is None:
            found = _word_starts(self.lower, every)
            self.positions[(anchor, True)] = found
        return found


def _regex_matches(text: _Text, *, gated: bool = True) -> Iterator[tuple[int, int, str]]:
    """Matches of the regex rules: each part is tried where one of its anchors occurs
    (``gated``: only parts with an anchor present and, if they name required words, one of
    those present, through the exact index; ungated: every anchor of every part by plain
    search, the reference the gates must agree with)."""
    if gated:
        yield from _gated_matches(text)
        return
    norm, lower = text.norm, text.lower
    index = _Index(lower)
    for part in _COMPILED:
        word = part.word
        anchors = [text for text, _ in part.anchors]
        if len(anchors) == 1:
            positions = index.find(anchors[0], word)
        else:
            positions = sorted({i for anchor in anchors for i in index.find(anchor, word)})
        yield from _part_matches(part, norm if part.cased else lower, positions)


def _gated_matches(text: _Text) -> Iterator[tuple[int, int, str]]:
    norm, lower = text.norm, text.lower
    index = _ExactIndex(lower)
    present = index.present
    numbers = sorted({n for anchor_id in present for n in _PARTS_BY_ANCHOR.get(anchor_id, ())})
    dense = len(lower) >> _DENSE
    starts, keys, count, find = index.starts, index.keys, index.count, index.find
    for number in numbers:
        gate = _GATES[number]
        if gate.requires and gate.requires.isdisjoint(present):
            continue
        part = _COMPILED[number]
        # where the trie words among the part's literals start (each place is one key's, so
        # the lists are disjoint), and how often the others occur
        lists = [starts[key] for key in gate.keys & keys]
        if gate.weighted:
            total = sum(len(starts[key]) * gate.weights[key] for key in gate.keys & keys)
        else:
            total = sum(map(len, lists))
        others: list[str] = []
        for anchor_id, literal in gate.others:
            if anchor_id in present and (occurs := count(literal)):
                others.append(literal)
                total += occurs
        if not part.cased and total > dense:
            yield from _searched_matches(part, lower)
            continue
        for literal in others:
            if found := find(literal, part.word):
                lists.append(found)
        if not lists:
            continue
        if len(lists) == 1:
            positions = lists[0]
        elif others:
            positions = sorted(set().union(*lists))
        else:
            positions = sorted(chain.from_iterable(lists))
        # ``_part_matches``, inline (no generator per part: most yield nothing), with two
        # changes that keep the matches: the regex is tried at every place in one C-level
        # pass (a try inside a previous match is dropped here, its result does not depend on
        # that match), and ``before`` only where it matched (a place is kept if both succeed,
        # in either order; one not kept leaves ``last_end`` alone). The regex fails right
        # after the anchor nearly everywhere, and a ``before`` of many lookbehinds, tried at
        # each of the ``_BEFORE`` characters before the anchor, costs more.
        subject = norm if part.cased else lower
        before = part.before
        last_end = 0
        for match in filter(None, map(part.regex.match, repeat(subject), positions)):
            i, end = match.span()
            if i < last_end:
                continue
            if end > i and (before is None
                            or before.search(subject, max(0, i - _BEFORE), i)):
                last_end = end
                yield i, end, part.rule_id


# A part whose anchors occur at more than one place in 2**_DENSE ("[[[[", "for for for") is run
# by the regex engine's own search: every match starts at an anchor, so the matches are the
# same, found without a Python step per place.
_DENSE = 4


def _searched_matches(part: _Compiled, subject: str) -> Iterator[tuple[int, int, str]]:
    regex, before = part.regex, part.before
    start = 0
    while (match := regex.search(subject, start)) is not None:
        i = match.start()
        if match.end() > i and (before is None
                                or before.search(subject, max(0, i - _BEFORE), i)):
            start = match.end()
            yield i, start, part.rule_id
        else:
            start = i + 1


def _part_matches(part: _Compiled, subject: str,
                  positions: list[int]) -> Iterator[tuple[int, int, str]]:
    """The matches of one part tried at ``positions`` (ascending), none inside another."""
    last_end = 0
    regex, before = part.regex, part.before
    for i in positions:
        if i < last_end:
            continue                   # inside this part's previous match
        if before is not None and not before.search(subject, max(0, i - _BEFORE), i):
            continue
        match = regex.match(subject, i)
        if match and match.end() > i:
            last_end = match.end()
            yield i, last_end, part.rule_id
