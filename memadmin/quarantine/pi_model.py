"""PI-MODEL-1: a linear model over word and character n-grams, a statistical second opinion
for the rule scanner (issues #7 and #19).

Pure Python, no dependency. A text (as the scanner normalised it: invisible characters
stripped, look-alikes folded, lower-cased) is split into words (a CJK character is a word).
Its features are each distinct word (``w:word``), each distinct pair of adjacent words
(``b:word word``) and the character n-grams of each distinct word padded with a space on each
side (``c: ign``, ``c:ore ``): grams never cross a word boundary, so a word's whole
contribution (its weight plus its grams') depends on the word alone, is computed once and
remembered (``Model.word_score``, a bounded cache). A word or pair counts once in a window:
repeating one (a log of the same line, filler) adds nothing, so repetition alone never
flags.

The score is ``bias + the sum of the weights of the features``, an exact integer sum (weights
x ``SCALE``), so no order or process changes a verdict. The weights are a committee: the
log-odds of class-balanced L2 logistic regression and of naive Bayes over the same features,
averaged (a single linear model), fitted on the corpus's ``tune`` split only
(``benchmarks/train_scanner_model.py``) and pruned, in ``model_weights.json``.

A text of more than ``WINDOW`` words is scored as every run of ``WINDOW`` consecutive words
(at every word, so a payload buried in a long benign document meets as little benign text
as possible; prefix sums make each run one subtraction); it is flagged if any run scores
above the threshold. There a word (or pair) counts again only ``WINDOW`` words after it last
counted, so no run counts it twice. The explanation for a reviewer is the few matched words
that push the score up most (a word's weight, its grams' and half of each adjacent pair's).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import accumulate, compress, islice, repeat
from operator import add, sub
from pathlib import Path
from typing import Any

WEIGHTS_PATH = Path(__file__).resolve().parent / "model_weights.json"
WINDOW = 40               # a longer text is scored as every run of this many words
MAX_EXPLAINED = 5          # words shown as spans
CACHE_WORDS = 100_000      # word scores remembered; the cache is emptied when it is full

_WORD_RE = re.compile(r"[^\W_]+")
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
# the same words as ``words(lower, cjk=True)``: runs of word characters other than CJK, and
# single CJK word characters
_TOKEN_RE = re.compile(f"[^\\W_{_CJK}]+|(?![\\W_])[{_CJK}]")


@dataclass(frozen=True)
class Config:
    """What the features are made of (stored with the weights, so training and scoring agree)."""

    bigrams: bool = True
    char_min: int = 3        # character n-grams of each padded word, 0 for none
    char_max: int = 5
    cjk_chars: bool = True   # single CJK characters as words


_ASCII_WORD_RE = re.compile(r"[A-Za-z0-9]+")   # what ``_WORD_RE`` matches in ASCII text
_CJK_RE = re.compile(f"[{_CJK}]")


def _splitter(lower: str, cjk: bool) -> re.Pattern[str]:
    """The regex that splits ``lower`` into its words: the same words as ``_TOKEN_RE`` (or
    ``_WORD_RE``), by a cheaper pattern where the text allows (an ASCII text, a text without
    CJK characters)."""
    if lower.isascii():
        return _ASCII_WORD_RE
    if not cjk or _CJK_RE.search(lower) is None:
        return _WORD_RE
    return _TOKEN_RE


def words(lower: str, cjk: bool = True) -> list[tuple[str, int, int]]:
    """The words of a lower-cased text with their (start, end); a run of CJK characters is
    split into single characters (Chinese and Japanese have no spaces between words)."""
    return [(match.group(), match.start(), match.end())
            for match in _splitter(lower, cjk).finditer(lower)]


def tokens(lower: str, config: Config) -> list[str]:
    """The words of a lower-cased text, in order (``words`` without the positions; one
    regex pass)."""
    return _splitter(lower, config.cjk_chars).findall(lower)


def grams(word: str, config: Config) -> list[str]:
    """The character n-grams of `` word `` (with repeats), without the ``c:`` prefix."""
    if not config.char_min:
        return []
    padded = " " + word + " "
    return [padded[i:i + n] for n in range(config.char_min, config.char_max + 1)
            for i in range(len(padded) - n + 1)]


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
    threshold: int              # x SCALE; a score above it flags
    words: dict[str, int]       # word -> weight x SCALE (``w:`` stripped)
    pairs: dict[tuple[str, str], int]   # adjacent words -> weight x SCALE (``b:``)
    chars: dict[str, int]       # character n-grams (without ``c:``) -> weight x SCALE
    digest: str                 # sha256 of the weights file
    cache: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

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
        words_sum = [0, *accumulate(values)]
        pairs_sum = [0, *accumulate(pairs)]
        # run [a, a + WINDOW): its words a .. a + WINDOW - 1, its pairs a .. a + WINDOW - 2
        runs = map(sub, words_sum[WINDOW:], words_sum)
        if pairs:
            runs = map(add, runs, map(sub, pairs_sum[WINDOW - 1:], pairs_sum))
        return list(runs)

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

    def flagged_window(self, lower: str) -> tuple[int, int] | None:
        """The first window (the whole text, or a run of ``WINDOW`` words) that scores above
        the threshold, if any, as (start, end) character offsets into ``lower``."""
        found = tokens(lower, self.config)
        if not found:
            return None
        runs = self._runs(found)
        cut = self.threshold - self.bias
        if max(runs) <= cut:
            return None
        first = next(i for i, total in enumerate(runs) if total > cut)
        # the window's first and last words, found without placing every word of the text
        placed = _splitter(lower, self.config.cjk_chars).finditer(lower)
        start = next(islice(placed, first, None))
        last = min(len(found), first + WINDOW) - 1
        end = start if last == first else next(islice(placed, last - first - 1, None))
        return start.start(), end.end()

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


def build(config: Config, bias: float, threshold: float, weights: dict[str, float],
          digest: str = "") -> Model:
    """A model from weights as stored (floats with 4 decimals, keys with their prefixes)."""
    scaled = {f: round(float(w) * SCALE) for f, w in weights.items()}
    pairs = {}
    for f, w in scaled.items():
        if f.startswith("b:"):
            left, right = f[2:].split(" ")
            pairs[(left, right)] = w
    return Model(config=config, bias=round(float(bias) * SCALE),
                 threshold=round(float(threshold) * SCALE),
                 words={f[2:]: w for f, w in scaled.items() if f.startswith("w:")},
                 pairs=pairs,
                 chars={f[2:]: w for f, w in scaled.items() if f.startswith("c:")},
                 digest=digest)


def load(path: Path = WEIGHTS_PATH) -> Model:
    data = path.read_bytes()
    stored = json.loads(data)
    return build(Config(**stored["config"]), stored["bias"], stored["threshold"],
                 stored["weights"], hashlib.sha256(data).hexdigest())


@functools.cache
def model() -> Model:
    return load()
