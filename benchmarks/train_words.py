"""Count the words of the ``tune`` split of the labelled corpus ONLY (both labels; ``held`` is
never read) and write memadmin/quarantine/scanner/words.json: the words the scanner splits
letters run together into (``scanner.words``), most frequent first.

A word is a run of ASCII letters of the normalised, lower-cased text (2 to ``MAX_WORD``
letters, and "a" and "i"), kept if it occurs ``MIN_COUNT`` times at least, at most ``WORDS``
of them. Deterministic (ties by the word):

    .venv/bin/python benchmarks/train_words.py            # write the file
    .venv/bin/python benchmarks/train_words.py --check    # exit 1 if the file differs
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))   # (the tests load this module on its own)

from support import corpus_tune_rows, train_main  # noqa: E402

from memadmin.quarantine.scanner import words  # noqa: E402
from memadmin.quarantine.scanner.normalise import _normalise  # noqa: E402

MIN_COUNT = 3
WORDS = 12_000
_WORD_RE = re.compile(r"(?<![A-Za-z])[a-z]+(?![A-Za-z])")


def count() -> bytes:
    counts: Counter[str] = Counter()
    for row in corpus_tune_rows():
        lower = _normalise(row["text"])[0].lower
        counts.update(word for word in _WORD_RE.findall(lower)
                      if 2 <= len(word) <= words.MAX_WORD or word in ("a", "i"))
    ranked = sorted((-n, word) for word, n in counts.items() if n >= MIN_COUNT)
    return (json.dumps([word for _, word in ranked[:WORDS]], indent=0) + "\n").encode("ascii")


def main() -> None:
    train_main(__doc__ or "", words.WORDS_PATH, count)


if __name__ == "__main__":
    main()
