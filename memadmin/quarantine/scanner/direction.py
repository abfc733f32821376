"""Which way a text reads: forwards, or written backwards (the "flip" attacks of the jailbreak
research write a whole prompt from its end; an upside-down converter does so to any script it
cannot turn); and in which order its words come (the other flips: each word written from its
end in its place, or the words in reverse order; below, "Word order").

Written language has a direction that shows in its letter pairs: English writes "th" ten times
as often as "ht", Russian "ст" twenty times as often as "тс", Japanese "して" fifty times as
often as "てし" (in the corpus's tune texts).
``direction.json`` holds the letter pairs that show it best, counted over the corpus's tune
texts (both labels: this is about language, not attacks; ``benchmarks/train_direction.py``
writes it, and a test checks that it equals a fresh count): pairs of ASCII letters and spaces
(the text lower-cased, every other byte a space) and pairs of the text's other characters
(taken together, in order, lower-cased). A text reads backwards when, in either view of its
first ``SAMPLE`` characters (with ``MIN_LETTERS`` at least), those pairs occur reversed
``BACKWARDS_RATIO`` times as often as written and ``MIN_REVERSED`` times at least. The file
lists first the ``FIRST`` pairs whose reversal is rarest ("nt", "ch", not "e ", whose " e" is
common too): counted first, a view where they occur twice and never reversed, or
``MIN_REVERSED`` times and reversed less than half as often, reads forwards, and the other
pairs are not counted; nor the other pairs as written, where fewer than ``MIN_REVERSED``
occur reversed. A few counts of bytes and strings, in C.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

DIRECTION_PATH = Path(__file__).with_name("direction.json")
PAIRS = 160            # telling pairs kept for the ASCII view
OTHER_PAIRS = 640      # and for the other characters' view, which a dozen scripts share
                       # (at 160, corpus round 13's new languages left Chinese 7 pairs; at
                       # 320, round 18's left Russian 76 and a Russian order with each word
                       # backwards read forwards, 16 reversed pairs against 15; at 480, rounds
                       # 21-23's left a Chinese order backwards 3 pairs, a Russian one with
                       # each word backwards 19 against 16)
FIRST = 16             # the pairs counted first
BACKWARDS_RATIO = 1.2
MIN_REVERSED = 4
MIN_LETTERS = 8        # a view with fewer says too little (a text's few dashes and quotes)
SAMPLE = 2048          # characters of a text looked at: a whole text written backwards
                       # shows it in its first ones (a passage, by its words: ``encodings``)


def _load() -> tuple[tuple[bytes, ...], tuple[str, ...]]:
    data = json.loads(DIRECTION_PATH.read_text(encoding="utf-8"))
    return tuple(pair.encode("ascii") for pair in data["ascii"]), tuple(data["other"])


_ASCII_PAIRS, _OTHER_PAIRS = _load()
_ASCII_REVERSED = tuple(pair[::-1] for pair in _ASCII_PAIRS)
_OTHER_REVERSED = tuple(pair[::-1] for pair in _OTHER_PAIRS)


def _count[S: (bytes, str)](view: S, pairs: tuple[S, ...]) -> int:
    return sum(map(view.count, pairs))


def _backwards[S: (bytes, str)](view: S, pairs: tuple[S, ...], reversed_pairs: tuple[S, ...],
                                ) -> bool:
    forward, backward = _count(view, pairs[:FIRST]), _count(view, reversed_pairs[:FIRST])
    if forward >= 2 and 2 * backward < forward and (backward == 0 or forward >= MIN_REVERSED):
        return False                       # (ordinary text: its first pairs as written)
    backward += _count(view, reversed_pairs[FIRST:])
    if backward < MIN_REVERSED:
        return False                       # (too few either way: the forward ones not counted)
    return backward >= BACKWARDS_RATIO * (forward + _count(view, pairs[FIRST:]))


def reads_backwards(spaced: bytes, others: str) -> bool:
    """Whether a text reads backwards, by its first ``SAMPLE`` characters: ``spaced``, their
    ASCII letters lower-cased, every other byte a space (as ``encodings._Letters.spaced``);
    ``others``, their non-ASCII characters, in order, lower-cased. Either may show it (a line
    of English before a passage of Chinese written backwards), if it has ``MIN_LETTERS``."""
    return ((len(spaced) - spaced.count(b" ") >= MIN_LETTERS
             and _backwards(spaced, _ASCII_PAIRS, _ASCII_REVERSED))
            or (len(others) >= MIN_LETTERS and _backwards(others, _OTHER_PAIRS, _OTHER_REVERSED)))


# Word order. The other two "flips" of the jailbreak research keep each word's letters or the
# text's letter order and reverse the words instead: "instructions. previous all Ignore", or
# "erongI lla suoiverp .snoitcurtsni" (each word from its end, in its place; the letter pairs
# find it as they find a whole text backwards, and read whole it is the first kind). A text
# in a script with capitals shows its word order where its sentences start and end: a capital
# after a sentence's end, at the text's start, and a sentence's end at the text's end; read
# with its words reversed, a small letter after a sentence's end, the end at the start.
# (Words are what lies between two spaces, as the flips split a text.)
_CLOSING = "\"'\u201d\u2019\u00bb)\\]}>"
_END_RE = re.compile(f"[.!?][{_CLOSING}]*\\Z")
# a word: its first letter, after opening quotes or brackets (not markup: "<p>", "{\"id\":")
_WORD_RE = re.compile("[\"'\u201c\u2018\u00ab(\\[\u00bf\u00a1*_]*([^\\W\\d_])")
# a sentence's end, white space, a word: in a text as written a capital follows nearly always
# ("e.g. the" and "3 p.m. on" are the exceptions), read with its words reversed, a small one
_AFTER_END_RE = re.compile(f"[.!?][{_CLOSING}]*\\s+(\\S+)")
# a first word that ends a sentence
_FIRST_END_RE = re.compile(f"\\s*[^\\W\\d_]\\S*[.!?][{_CLOSING}]*\\s")


def words_reversed(text: str) -> str:
    """``text`` with its words (between single spaces) in reverse order."""
    return " ".join(reversed(text.split(" ")))


def _case(word: str) -> int:
    """+1 for a word that starts with a capital (not one in capitals: a shout, an acronym,
    "I"), -1 for one in small letters, 0 for anything else."""
    match = _WORD_RE.match(word)
    if match is None or word.isupper():
        return 0
    return 1 if match[1].isupper() else -1 if match[1].islower() else 0


def order_score(text: str) -> int:
    """How well ``text`` reads with its words as written: +1 for each sign that it does (a
    first word that starts with a capital, a last word that ends a sentence, a capital after a
    sentence's end), -1 for each sign that it reads with its words reversed (a first word in
    small letters or one that ends a sentence, a small letter after a sentence's end); words
    are those that start with a letter."""
    words = [word for word in text.split() if _WORD_RE.match(word)]
    if not words:
        return 0
    score = _case(words[0])
    if _END_RE.search(words[-1]):
        score += 1
    elif _END_RE.search(words[0]):
        score -= 1
    return score + sum(_case(match[1]) for match in _AFTER_END_RE.finditer(text))


_BRACKET_RE = re.compile(r"[(\[{)\]}]")
NESTING_LEAST = 4     # brackets a text shows before their order counts


def nesting(text: str) -> int:
    """+1 where the text's brackets (at least ``NESTING_LEAST``; ASCII ones) open before they
    close, as code, JSON and lists write them read as written; -1 where one closes more than
    were opened before it (a "}" first: such a text read with its words reversed); 0 else."""
    brackets = _BRACKET_RE.findall(text)
    if len(brackets) < NESTING_LEAST:
        return 0
    depth = 0
    for bracket in brackets:
        depth += 1 if bracket in "([{" else -1
        if depth < 0:
            return -1
    return 1


def reads_words_reversed(sample: str) -> bool:
    """Whether a text (its first ``SAMPLE`` characters) reads with its words reversed: it
    starts with a sentence's end, or some sentence's end is followed by a small letter, at
    least as often as by a capital; and it reads badly as written (``order_score`` 0 or
    less) and well with its words turned back (above 0). A text in small letters only, as
    the caseless letter forms write it, shows neither, and is left as it is."""
    if _FIRST_END_RE.match(sample) is None:
        after = [_case(match[1]) for match in _AFTER_END_RE.finditer(sample)]
        lower = after.count(-1)
        if lower == 0 or lower < after.count(1):
            return False
    return order_score(sample) <= 0 < order_score(words_reversed(sample))
