"""PI-MODEL-1: a small linear model over word n-grams, a statistical second opinion for the
rule scanner (issue #7).

Pure Python, no dependency. The features of a text are the SET of its lower-cased word
unigrams and bigrams (``w:word``, ``b:word word``) and character n-grams (``c:...``) of the
text as the scanner normalised it (invisible characters stripped, look-alikes folded). The
score is ``bias + sum(weight[f] for f in features)`` (weights with 4 decimals, summed as
exact integers so the order of a set never changes a verdict); the weights were fitted by logistic
regression on the corpus's ``tune`` split only (``benchmarks/train_scanner_model.py``) and
are stored, pruned to the strongest few thousand, in ``model_weights.json``. A long text is
scored in windows of ``WINDOW`` characters (overlapping by ``OVERLAP``); the text is flagged
if any window scores above the threshold. The explanation for a reviewer is the few matched
word n-grams that weigh most.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

WEIGHTS_PATH = Path(__file__).resolve().parent / "model_weights.json"
WINDOW = 2000
OVERLAP = 200
MAX_EXPLAINED = 5          # word n-grams shown as spans

_WORD_RE = re.compile(r"[^\W_]+")
_CJK_RE = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True)
class Config:
    """What the features are made of (stored with the weights, so training and scoring agree)."""

    bigrams: bool = True
    char_min: int = 3        # character n-grams, 0 for none
    char_max: int = 5
    cjk_chars: bool = True   # single CJK characters and their pairs as words


def words(lower: str, cjk: bool = True) -> list[tuple[str, int, int]]:
    """The words of a lower-cased text with their (start, end); a run of CJK characters is
    split into single characters (Chinese and Japanese have no spaces between words)."""
    found = []
    for match in _WORD_RE.finditer(lower):
        token = match.group()
        start = match.start()
        if cjk and _CJK_RE.search(token):
            piece_start = start
            for offset, ch in enumerate(token):
                if _CJK_RE.match(ch):
                    if piece_start < start + offset:
                        found.append((lower[piece_start:start + offset], piece_start,
                                      start + offset))
                    found.append((ch, start + offset, start + offset + 1))
                    piece_start = start + offset + 1
            if piece_start < match.end():
                found.append((lower[piece_start:match.end()], piece_start, match.end()))
        else:
            found.append((token, start, match.end()))
    return found


def word_features(lower: str, config: Config) -> dict[str, tuple[int, int]]:
    """Word unigrams and bigrams, each with the span of its first occurrence."""
    tokens = words(lower, config.cjk_chars)
    features: dict[str, tuple[int, int]] = {}
    for i, (token, start, end) in enumerate(tokens):
        features.setdefault("w:" + token, (start, end))
        if config.bigrams and i + 1 < len(tokens):
            following = tokens[i + 1]
            features.setdefault(f"b:{token} {following[0]}", (start, following[2]))
    return features


def features(lower: str, config: Config) -> set[str]:
    """Every feature of a lower-cased, normalised text."""
    found = set(word_features(lower, config))
    if config.char_min:
        squeezed = " " + " ".join(lower.split()) + " "
        for n in range(config.char_min, config.char_max + 1):
            found.update("c:" + squeezed[i:i + n] for i in range(len(squeezed) - n + 1))
    return found


SCALE = 10_000             # weights are stored with 4 decimals: summed as exact integers


@dataclass(frozen=True)
class Model:
    config: Config
    bias: int                   # x SCALE
    threshold: int              # x SCALE; a score above it flags
    words: dict[str, int]       # word features (``w:``, ``b:``) -> weight x SCALE
    chars: dict[str, int]       # character n-grams (without ``c:``) -> weight x SCALE
    digest: str                 # sha256 of the weights file

    def score(self, lower: str) -> int:
        """The score x SCALE: an exact integer sum, the same in any order and any process.
        (Features without a weight add nothing: only the intersection with the weighted ones
        is looked up, a set operation in C.)"""
        words, config = self.words, self.config
        if not config.bigrams and not (config.cjk_chars and _CJK_RE.search(lower)):
            present = {"w:" + token for token in _WORD_RE.findall(lower)}
        else:
            present = set(word_features(lower, config))
        total = self.bias + sum(map(words.__getitem__, present & words.keys()))
        if config.char_min:
            chars = self.chars
            squeezed = " " + " ".join(lower.split()) + " "
            grams = {squeezed[i:i + n] for n in range(config.char_min, config.char_max + 1)
                     for i in range(len(squeezed) - n + 1)}
            total += sum(map(chars.__getitem__, grams & chars.keys()))
        return total

    def windows(self, length: int) -> list[tuple[int, int]]:
        if length <= WINDOW:
            return [(0, length)]
        step = WINDOW - OVERLAP
        return [(start, min(length, start + WINDOW))
                for start in range(0, max(1, length - OVERLAP), step)]

    def flagged_window(self, lower: str) -> tuple[int, int] | None:
        """The first window of the text that scores above the threshold, if any."""
        for start, end in self.windows(len(lower)):
            if self.score(lower[start:end]) > self.threshold:
                return start, end
        return None

    def explain(self, lower: str, start: int, end: int) -> list[tuple[int, int]]:
        """Spans (into ``lower``) of the matched word n-grams that push the score up most."""
        words = self.words
        ranked = sorted(((words[f], span) for f, span in
                         word_features(lower[start:end], self.config).items()
                         if words.get(f, 0) > 0), key=lambda ws: (-ws[0], ws[1]))
        return sorted((start + a, start + b) for _, (a, b) in ranked[:MAX_EXPLAINED])


def load(path: Path = WEIGHTS_PATH) -> Model:
    data = path.read_bytes()
    stored = json.loads(data)
    scaled = {f: round(float(w) * SCALE) for f, w in stored["weights"].items()}
    return Model(config=Config(**stored["config"]), bias=round(float(stored["bias"]) * SCALE),
                 threshold=round(float(stored["threshold"]) * SCALE),
                 words={f: w for f, w in scaled.items() if not f.startswith("c:")},
                 chars={f[2:]: w for f, w in scaled.items() if f.startswith("c:")},
                 digest=hashlib.sha256(data).hexdigest())


@functools.cache
def model() -> Model:
    return load()
