"""Which way a text reads: forwards, or written backwards (the "flip" attacks of the jailbreak
research write a whole prompt from its end; an upside-down converter does so to any script it
cannot turn).

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
from pathlib import Path

DIRECTION_PATH = Path(__file__).with_name("direction.json")
PAIRS = 160            # telling pairs kept for each view
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
