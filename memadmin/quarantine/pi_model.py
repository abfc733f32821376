"""PI-MODEL-1: a linear model over word and character n-grams, a statistical second opinion
for the rule scanner (issues #7 and #19).

Pure Python, no dependency. A text (as the scanner normalised it: invisible characters
stripped, look-alikes folded, lower-cased) is split into words (a CJK character is a word; a
combining mark belongs to the word before it, as Hindi's vowel signs do).
Its features are each distinct word (``w:word``), each distinct pair of adjacent words
(``b:word word``) and the distinct character n-grams of each distinct word padded with a space
on each side (``c: ign``, ``c:ore ``): grams never cross a word boundary, so a word's whole
contribution (its weight plus its grams') depends on the word alone, is computed once and
remembered (``Model.word_score``, a bounded cache). A word or pair counts once in a window:
repeating one (a log of the same line, filler) adds nothing, so repetition alone never
flags.

The score is ``bias + the sum of the weights of the features``, an exact integer sum (weights
x ``SCALE``), so no order or process changes a verdict. The weights are a committee: the
log-odds of class-balanced L2 logistic regression and of naive Bayes over the same features,
averaged (a single linear model), fitted on the corpus's ``tune`` split only
(``benchmarks/train_scanner_model.py``) and pruned, in ``model_weights.json``.

A text of at most ``WINDOW`` words is one window, scored whole and flagged above
``short_threshold``. A text of more than ``WINDOW`` words is scored as every run of ``WINDOW``
consecutive words (at every word, so a payload buried in a long benign document meets as little
benign text as possible; prefix sums make each run one subtraction); it is flagged if any run
scores above its cut, which is higher: the highest of many runs' scores is higher than one
window's, for a harmless text too, and the more runs the higher. The cut of a text of ``n``
runs is ``short_threshold + slope * ln(n)``, at most ``threshold`` (``cut_for``): a short
attack with a few dozen words around it is not held to a long document's cut. There a word
(or pair) counts again only ``WINDOW`` words after it last counted, so no run counts it twice.
Most texts pass without those exact sums: if no run passes the cut with each positive pair
counted wherever it occurs and each negative one nowhere (no less than its sum), none does.
The explanation for a reviewer is the few matched words that push the score up most (a word's
weight, its grams' and half of each adjacent pair's).

The model also judges the words around a rule's match (``agrees``: the match and
``CONTEXT_WORDS`` words each side, scored as a window, against ``gate``, the score half of the
tune split's harmless texts pass out of fold): the scanner counts a form rule's match (a
transcript's turn, a tool call's markup) only where they are less ordinary than that.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, islice, repeat
from operator import add, not_, sub
from pathlib import Path
from typing import Any

from memadmin.quarantine.text import WORD_RE as _WORD_RE
from memadmin.quarantine.text import non_ascii

WEIGHTS_PATH = Path(__file__).resolve().parent / "model_weights.json"
WINDOW = 40               # a longer text is scored as every run of this many words
MAX_EXPLAINED = 5          # words shown as spans
CACHE_WORDS = 100_000      # word scores remembered; the cache is emptied when it is full
CONTEXT_WORDS = 10         # a rule's match is judged with this many words each side (``agrees``)
CONTEXT_CHARS = 400        # found within this many characters

# Kana, CJK ideographs and Hangul syllables: each such character is a word (Chinese and
# Japanese put no spaces between words). (Korean does, but read as words of Hangul its texts
# did worse out of fold: 0.377 -> 0.344 recall at 1% harmless flagged, on tune.)
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"


def _mark_ranges() -> str:
    """The combining marks (Unicode categories Mn, Mc and Me) as ranges of a character class.
    They belong to the word of the letter before them: Hindi and the other Indic scripts write
    most vowels and the virama as marks, Thai its vowels and tones; read as separators, they cut
    "सिस्टम" into "स", "स", "टम". (Planes 0, 1 and 14 hold every mark; 2 and 3 hold CJK
    ideographs, 15 and 16 private use.)"""
    marks = [code for plane in (0, 1, 14) for code in range(plane << 16, (plane + 1) << 16)
             if unicodedata.category(chr(code))[0] == "M"]
    ranges: list[list[int]] = []
    for code in marks:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


_MARKS = _mark_ranges()
# a word: a letter or digit, then letters, digits and combining marks
_MARKED_WORD_RE = re.compile(f"[^\\W_](?:[^\\W_]|[{_MARKS}])*")
# the same words as ``words(lower, cjk=True)``: words of characters other than CJK, and single
# CJK characters (a word character, then nothing more if it is CJK: a pattern that starts with
# a class, which the regex engine skips to)
_TOKEN_RE = re.compile(f"[^\\W_](?:(?<=[{_CJK}])|(?:[^\\W_{_CJK}]|[{_MARKS}])*)")


@dataclass(frozen=True)
class Config:
    """What the features are made of (stored with the weights, so training and scoring agree)."""

    bigrams: bool = True
    char_min: int = 3        # character n-grams of each padded word, 0 for none
    char_max: int = 5
    cjk_chars: bool = True   # single kana, CJK ideographs and Hangul syllables as words


_ASCII_WORD_RE = re.compile(r"[A-Za-z0-9]+")   # what ``_WORD_RE`` matches in ASCII text
_CJK_RE = re.compile(f"[{_CJK}]")
_MARK_RE = re.compile(f"[{_MARKS}]")
_LETTER_RE = re.compile(f"[^\\W_]|[{_MARKS}]")   # a letter, a digit or a mark (of any script)


def _splitter(lower: str, cjk: bool) -> re.Pattern[str]:
    """The regex that splits ``lower`` into its words: the same words as ``_TOKEN_RE`` (or
    ``_MARKED_WORD_RE``), by a cheaper pattern where the text allows: an ASCII text, or one
    whose non-ASCII characters are no letters, digits or marks (dashes, quotes, emoji:
    separators, so its words are runs of ASCII letters and digits), a text without CJK
    characters, one without combining marks (``_WORD_RE``: a run of letters and digits)."""
    if lower.isascii():
        return _ASCII_WORD_RE
    others = non_ascii(lower)
    if _LETTER_RE.search(others) is None:
        return _ASCII_WORD_RE
    if cjk and _CJK_RE.search(others) is not None:
        return _TOKEN_RE
    if _MARK_RE.search(others) is not None:
        return _MARKED_WORD_RE
    return _WORD_RE


def _in_word(char: str) -> bool:
    """Whether ``char`` may be part of a word: a letter, a digit or a combining mark."""
    return char.isalnum() or _MARK_RE.match(char) is not None


def words(lower: str, cjk: bool = True) -> list[tuple[str, int, int]]:
    """The words of a lower-cased text with their (start, end); a run of CJK characters is
    split into single characters (Chinese and Japanese have no spaces between words)."""
    return [(match.group(), match.start(), match.end())
            for match in _splitter(lower, cjk).finditer(lower)]


# UTF-8 bytes with every ASCII byte that is no letter or digit ("_" too) made a space: the
# text's words are then the runs of other characters, cut where a non-ASCII character is no
# letter or digit (or a CJK character, a word of its own)
_SPACED = bytes(b if b >= 128 or chr(b).isalnum() else 32 for b in range(256))


def tokens(lower: str, config: Config) -> list[str]:
    """The words of a lower-cased text, in order (``words`` without the positions): the
    text split at ASCII separators and white space in C passes, and only the pieces with a
    non-ASCII character split further by the regex (a regex match per word costs more)."""
    pieces = (lower.encode("utf-8", "surrogatepass").translate(_SPACED)
              .decode("utf-8", "surrogatepass").split())
    if lower.isascii():
        return pieces
    others = list(compress(range(len(pieces)), map(not_, map(str.isascii, pieces))))
    if not others:
        return pieces
    # the regex chosen from these pieces, which hold every non-ASCII character of the text but
    # white space (no letter, no CJK): the same choice, without another pass over the text
    findall = _splitter("".join(map(pieces.__getitem__, others)), config.cjk_chars).findall
    found: list[str] = []
    start = 0
    for i in others:
        found += pieces[start:i]
        found += findall(pieces[i])
        start = i + 1
    found += pieces[start:]
    return found


def grams(word: str, config: Config) -> list[str]:
    """The distinct character n-grams of `` word ``, without the ``c:`` prefix. A gram counts
    once per word, as a word counts once per window: with repeats, a long run of one
    character (a hundred zeros) summed the same gram's weight past the threshold."""
    if not config.char_min:
        return []
    padded = " " + word + " "
    return list(dict.fromkeys(padded[i:i + n] for n in range(config.char_min, config.char_max + 1)
                              for i in range(len(padded) - n + 1)))


def features(lower: str, config: Config) -> dict[str, int]:
    """The features of a lower-cased, normalised text with their counts: each distinct word
    and its grams (a gram shared by two distinct words counts twice), each distinct pair
    (training and scoring share this definition; ``Model.score`` computes the same sum
    faster)."""
    found = tokens(lower, config)
    counts: dict[str, int] = {}
    for word in dict.fromkeys(found):
        counts["w:" + word] = counts.get("w:" + word, 0) + 1
        for gram in grams(word, config):
            counts["c:" + gram] = counts.get("c:" + gram, 0) + 1
    if config.bigrams:
        for left, right in dict.fromkeys(zip(found, found[1:], strict=False)):
            counts[f"b:{left} {right}"] = counts.get(f"b:{left} {right}", 0) + 1
    return counts


def _once_per_window(keys: list[Any], values: list[int], window: int) -> list[int]:
    """``values`` with a key's value kept only where the key has not counted in the previous
    ``window`` positions (0 elsewhere): within any run of ``window`` positions a key counts at
    most once, and a text of at most ``window`` keys counts each distinct key once."""
    if len(set(keys)) == len(keys):
        return values
    counted: dict[Any, int] = {}
    kept = list(values)
    for i, key in enumerate(keys):
        last = counted.get(key)
        if last is not None and i - last < window:
            kept[i] = 0
        else:
            counted[key] = i
    return kept


def _once_per_window_sparse(keys: Iterable[Any], values: list[int], window: int) -> list[int]:
    """``_once_per_window`` for values that are mostly 0 (adjacent pairs, most of which the
    model does not know), ``keys`` an iterable of the same length: a key's value is the same
    wherever it occurs, so a key of value 0 adds 0 whether it counts or not, and only the
    places of the others are deduplicated (the same result)."""
    places = list(compress(range(len(values)), values))
    known = list(compress(keys, values))
    first = dict(zip(reversed(known), reversed(places), strict=True))
    if len(first) == len(places):
        return values
    counted = dict(first)
    kept = list(values)
    for i, key in zip(places, known, strict=True):
        last = counted[key]
        if i == last:
            continue                       # the key's first place: it counts
        if i - last < window:
            kept[i] = 0
        else:
            counted[key] = i
    return kept


SCALE = 10_000             # weights are stored with 4 decimals: summed as exact integers


@dataclass(frozen=True)
class Model:
    config: Config
    bias: int                   # x SCALE
    threshold: int              # x SCALE; the highest cut (a text of many windows)
    short_threshold: int        # x SCALE; the cut of a text of one window (``WINDOW`` words
    #                             at most): its one score is no highest of many
    slope: int                  # x SCALE; the cut's rise per ln(windows) (``cut_for``)
    gate: int                   # x SCALE; a form rule's match counts only where the words
    #                             around it score above it (``agrees``; the scanner's ``_agreed``)
    words: dict[str, int]       # word -> weight x SCALE (``w:`` stripped)
    pairs: dict[tuple[str, str], int]   # adjacent words -> weight x SCALE (``b:``)
    chars: dict[str, int]       # character n-grams (without ``c:``) -> weight x SCALE
    digest: str                 # sha256 of the weights file
    cache: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    # the pairs of positive weight, for ``_may_pass``
    positive_pairs: dict[tuple[str, str], int] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        positive = {pair: weight for pair, weight in self.pairs.items() if weight > 0}
        if not self.config.bigrams:
            positive = {}
        object.__setattr__(self, "positive_pairs", positive)

    def word_score(self, word: str) -> int:
        """A word's weight plus its character grams' (x SCALE, exact)."""
        known = self.cache.get(word)
        if known is not None:
            return known
        total = self.words.get(word, 0) + sum(map(self.chars.get, grams(word, self.config),
                                                  repeat(0)))
        self.cache[word] = total
        return total

    def _values(self, found: list[str]) -> list[int]:
        """Each word's score (x SCALE; look-ups by ``map`` in C, a word not yet in the cache
        scored once; the cache is only ever emptied before use, so a concurrent scan never
        loses a value it read)."""
        cache = self.cache
        known: list[int | None] = list(map(cache.get, found))
        if None not in known:
            return known  # type: ignore[return-value]  # no None in it: checked
        if len(cache) >= CACHE_WORDS:
            cache.clear()
        return [self.word_score(word) if value is None else value
                for word, value in zip(found, known, strict=True)]

    def _pair_values(self, found: list[str]) -> list[int]:
        """The weight of each adjacent pair of ``found`` (0 for none), in one pass."""
        if not (self.config.bigrams and self.pairs and len(found) > 1):
            return []
        return list(map(self.pairs.get, zip(found, found[1:], strict=False), repeat(0)))

    def _counted(self, found: list[str], window: int) -> tuple[list[int], list[int]]:
        """The words' and pairs' values, each word and pair counted once per ``window``."""
        values = _once_per_window(found, self._values(found), window)
        pairs = self._pair_values(found)
        if pairs:
            pairs = _once_per_window_sparse(zip(found, found[1:], strict=False), pairs,
                                            window - 1)
        return values, pairs

    def _runs(self, found: list[str]) -> list[int]:
        """The feature sum (x SCALE, exact) of the whole text if it has at most ``WINDOW``
        words, else of each run of ``WINDOW`` consecutive words, in order."""
        values, pairs = self._counted(found, WINDOW)
        if len(found) <= WINDOW:
            return [sum(values) + sum(pairs)]
        # run [a, a + WINDOW): its words a .. a + WINDOW - 1, its pairs a .. a + WINDOW - 2,
        # so word a and the sum of ``joined`` a + 1 .. a + WINDOW - 1, where ``joined[i]`` is
        # word i and the pair before it (one prefix sum for both)
        joined = (accumulate(map(add, values[1:], pairs), initial=values[0]) if pairs
                  else accumulate(values))
        sums = [0, *joined]
        return list(map(add, values, map(sub, sums[WINDOW:], sums[1:])))

    def _first_over(self, found: list[str], cut: int) -> int | None:
        """The index of the first of ``_runs(found)`` above ``cut`` (None if none is), the
        same sums in one pass over the words, which stops there: each word's value, the
        pair before it and their once-per-window counting in one step (separate passes over
        the words cost more), each run checked as soon as its last word is summed. A text
        whose runs all stay under an upper bound of their sums (``_may_pass``) has none."""
        if len(found) <= WINDOW:
            return 0 if self._runs(found)[0] > cut else None
        if not self._may_pass(found, cut):
            return None
        cache, score, pairs = self.cache, self.word_score, self.pairs
        bigrams = self.config.bigrams and bool(pairs)
        counted: dict[str, int] = {}               # where each word last counted
        pair_counted: dict[tuple[str, str], int] = {}
        # ``heads[i]``: word i's value less the sum up to and including word i (its pair
        # too), so that the run from word a to word i sums to ``heads[a] + total``
        heads: list[int] = []
        total = 0
        last = WINDOW - 1
        previous = ""
        for i, word in enumerate(found):
            value = cache.get(word)
            if value is None:
                if len(cache) >= CACHE_WORDS:
                    cache.clear()
                value = score(word)
            seen = counted.get(word)
            if seen is not None and i - seen < WINDOW:
                value = 0
            else:
                counted[word] = i
            total += value
            if bigrams and i:
                pair = (previous, word)
                weight = pairs.get(pair, 0)
                if weight:                         # pair i - 1, counted once in WINDOW - 1
                    seen = pair_counted.get(pair)
                    if seen is None or i - 1 - seen >= last:
                        pair_counted[pair] = i - 1
                        total += weight
            heads.append(value - total)
            previous = word
            if i >= last and heads[i - last] + total > cut:
                return i - last
        return None

    def _may_pass(self, found: list[str], cut: int) -> bool:
        """Whether a run of ``WINDOW`` words of ``found`` may sum above ``cut``: the runs of
        ``_first_over`` with each word counted as there (exactly), but each pair by its weight
        if positive, wherever it occurs, and not at all if negative: no less than the pair
        adds there, so no run sums more than its bound. Pairs cost most of ``_first_over``
        (a tuple and a look-up each); here they are looked up in C, from the positive pairs
        only. An ordinary text's runs stay far under the threshold, and so do their bounds
        (16 KiB of notes: 23,761 at most, the exact 23,272, the cut 40,536); a text whose
        bound passes the cut is summed exactly."""
        cache, score = self.cache, self.word_score
        counted: dict[str, int] = {}               # where each word last counted
        heads: list[int] = []                      # as in ``_first_over``
        total = 0
        last = WINDOW - 1
        # the bound of the pair before each word (0 before the first)
        bounds = chain((0,), map(self.positive_pairs.get,
                                 zip(found, islice(found, 1, None), strict=False), repeat(0)))
        for i, (word, bound) in enumerate(zip(found, bounds, strict=True)):
            # (the words' step of ``_first_over``, written again on purpose: as one generator
            # shared by both, it cost this loop 16% on 16 KiB of notes, 0.98 -> 1.14 ms)
            value = cache.get(word)
            if value is None:
                if len(cache) >= CACHE_WORDS:
                    cache.clear()
                value = score(word)
            seen = counted.get(word)
            if seen is not None and i - seen < WINDOW:
                value = 0
            else:
                counted[word] = i
            total += value + bound
            heads.append(value - total)
            if i >= last and heads[i - last] + total > cut:
                return True
        return False

    def score(self, lower: str) -> int:
        """The score x SCALE of a text as one window: the bias plus the feature sum."""
        found = tokens(lower, self.config)
        values, pairs = self._counted(found, len(found) + 1)
        return self.bias + sum(values) + sum(pairs)

    def top_score(self, lower: str) -> int:
        """The highest score x SCALE of a window of the text (the whole text, or a run of
        ``WINDOW`` words): what is compared with the threshold."""
        found = tokens(lower, self.config)
        return self.bias + max(self._runs(found)) if found else self.bias

    def cut(self, found: list[str]) -> int:
        """The threshold x SCALE for a text of words ``found`` (``cut_for``)."""
        return cut_for(windows(len(found)), self.short_threshold, self.slope, self.threshold)

    def flagged_window(self, lower: str) -> tuple[int, int] | None:
        """The first window (the whole text, or a run of ``WINDOW`` words) that scores above
        the threshold, if any, as (start, end) character offsets into ``lower``."""
        found = tokens(lower, self.config)
        if not found:
            return None
        first = self._first_over(found, self.cut(found) - self.bias)
        if first is None:
            return None
        # the window's first and last words, found without placing every word of the text
        placed = _splitter(lower, self.config.cjk_chars).finditer(lower)
        start = next(islice(placed, first, None))
        last = min(len(found), first + WINDOW) - 1
        end = start if last == first else next(islice(placed, last - first - 1, None))
        return start.start(), end.end()

    def agrees(self, lower: str, start: int, end: int) -> bool:
        """Whether the words around ``lower[start:end]`` (a rule's match, ``context``) score
        above ``gate`` as a window: the model need not call them an injection, only find them
        less ordinary than the median harmless text (the gate is the score that half of the
        tune split's harmless texts pass, out of fold). A match among words more ordinary
        than that is read as talk about the subject (a transcript, a tool's trace, a
        write-up), not as an order."""
        found = self.context(lower, start, end)
        if not found:
            return self.bias > self.gate
        return self._first_over(found, self.gate - self.bias) is not None

    def context(self, lower: str, start: int, end: int) -> list[str]:
        """The words of ``lower[start:end]`` and ``CONTEXT_WORDS`` words each side of it,
        found within ``CONTEXT_CHARS`` characters (a word the edge cuts left out)."""
        left, right = max(0, start - CONTEXT_CHARS), min(len(lower), end + CONTEXT_CHARS)
        before = tokens(lower[left:start], self.config)
        if before and left and _in_word(lower[left - 1]) and _in_word(lower[left]):
            before = before[1:]
        after = tokens(lower[end:right], self.config)
        if after and right < len(lower) and _in_word(lower[right - 1]) and _in_word(lower[right]):
            after = after[:-1]
        return [*before[-CONTEXT_WORDS:], *tokens(lower[start:end], self.config),
                *after[:CONTEXT_WORDS]]

    def explain(self, lower: str, start: int, end: int) -> list[tuple[int, int]]:
        """Spans (into ``lower``) of the matched words that push the score up most: a word's
        own weight and its grams', plus half the weight of each adjacent pair it is in."""
        found = words(lower[start:end], self.config.cjk_chars)
        weight: dict[str, int] = {}
        first: dict[str, tuple[int, int]] = {}
        for token, a, b in found:
            if token not in first:
                first[token] = (a, b)
                weight[token] = self.word_score(token)
        if self.config.bigrams:
            seen = set()
            for (left, _, _), (right, _, _) in zip(found, found[1:], strict=False):
                pair_weight = self.pairs.get((left, right), 0)
                if pair_weight and (left, right) not in seen:
                    seen.add((left, right))
                    weight[left] += pair_weight // 2
                    weight[right] += pair_weight - pair_weight // 2
        ranked = sorted(((w, first[token]) for token, w in weight.items() if w > 0),
                        key=lambda ws: (-ws[0], ws[1]))
        return sorted((start + a, start + b) for _, (a, b) in ranked[:MAX_EXPLAINED])


def windows(n_words: int) -> int:
    """How many windows a text of ``n_words`` words is scored as (one, at least)."""
    return max(1, n_words - WINDOW + 1)


def cut_for(n_windows: int, short_threshold: int, slope: int, threshold: int) -> int:
    """The cut x SCALE of a text of ``n_windows`` windows: ``short_threshold`` for one, then
    ``slope * ln(n_windows)`` higher, at most ``threshold``. The highest of a harmless text's
    windows' scores rises with their number (about with its logarithm: neighbouring windows
    share most of their words), so a cut that rises with it flags long and short harmless
    texts alike rarely, and an attack with a few dozen words around it (a note's header, a
    mail's greeting) meets a cut near the short one, not a long document's; the three are
    chosen together on tune (``benchmarks/train_scanner_model.py``). ``slope`` 0: every text
    of several windows is cut at ``threshold``."""
    if n_windows <= 1:
        return short_threshold
    if slope == 0:
        return threshold
    return min(threshold, short_threshold + round(slope * math.log(n_windows)))


def build(config: Config, bias: float, threshold: float, weights: dict[str, float],
          digest: str = "", gate: float = 0.0, short_threshold: float | None = None,
          slope: float = 0.0) -> Model:
    """A model from weights as stored (floats with 4 decimals, keys with their prefixes)."""
    scaled = {f: round(float(w) * SCALE) for f, w in weights.items()}
    pairs = {}
    for f, w in scaled.items():
        if f.startswith("b:"):
            left, right = f[2:].split(" ")
            pairs[(left, right)] = w
    return Model(config=config, bias=round(float(bias) * SCALE),
                 threshold=round(float(threshold) * SCALE),
                 short_threshold=round(float(threshold if short_threshold is None
                                             else short_threshold) * SCALE),
                 slope=round(float(slope) * SCALE),
                 gate=round(float(gate) * SCALE),
                 words={f[2:]: w for f, w in scaled.items() if f.startswith("w:")},
                 pairs=pairs,
                 chars={f[2:]: w for f, w in scaled.items() if f.startswith("c:")},
                 digest=digest)


def load(path: Path = WEIGHTS_PATH) -> Model:
    data = path.read_bytes()
    stored = json.loads(data)
    return build(Config(**stored["config"]), stored["bias"], stored["threshold"],
                 stored["weights"], hashlib.sha256(data).hexdigest(), stored["gate"],
                 stored["short_threshold"], stored["slope"])


@functools.cache
def model() -> Model:
    return load()
