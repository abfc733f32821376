"""Words run together read apart ("ignoreallpreviousinstructions" -> "ignore all previous
instructions"): an encoding that carries letters only, the NATO spelling alphabet as the
published encoders write it, loses the spaces between words.

``words.json`` lists the words of the corpus's tune split (ASCII letters, lower-cased), the
most frequent first, as ``benchmarks/train_words.py`` counts them (``held`` is never read; the
tests check the file is what counting writes). A run is split where the sum of its words'
costs is least, a word's cost growing with the log of its rank (Zipf's law: the split a
reader would choose, most often), a letter that starts no listed word costing more than any
word; linear in the run (at most ``MAX_WORD`` letters a word).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

WORDS_PATH = Path(__file__).with_name("words.json")
MAX_WORD = 20           # letters in a listed word at most
MAX_RUN = 4096          # letters of a run split at most (the rest stays as it is)


def _costs() -> dict[str, float]:
    words = json.loads(WORDS_PATH.read_text(encoding="utf-8"))
    scale = math.log(len(words))
    return {word: math.log((rank + 1) * scale) for rank, word in enumerate(words)}


_COSTS = _costs()
_UNKNOWN = 2 * max(_COSTS.values())     # a letter on its own that is no listed word


def split_run(letters: str) -> str:
    """``letters`` (lower-case a-z) with spaces between the words they most likely are."""
    run, rest = letters[:MAX_RUN], letters[MAX_RUN:]
    n = len(run)
    best = [0.0] + [math.inf] * n
    back = [0] * (n + 1)
    costs = _COSTS
    for end in range(1, n + 1):
        for start in range(max(0, end - MAX_WORD), end):
            cost = costs.get(run[start:end])
            if cost is None:
                if start != end - 1:
                    continue
                cost = _UNKNOWN
            total = best[start] + cost
            if total < best[end]:
                best[end], back[end] = total, start
    words = []
    end = n
    while end > 0:
        words.append(run[back[end]:end])
        end = back[end]
    return " ".join(reversed(words)) + rest
