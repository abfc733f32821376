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

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memadmin.quarantine.scanner import words  # noqa: E402
from memadmin.quarantine.scanner.normalise import _normalise  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "injection"
MIN_COUNT = 3
WORDS = 12_000
_WORD_RE = re.compile(r"(?<![A-Za-z])[a-z]+(?![A-Za-z])")


def tune_texts() -> list[str]:
    texts = []
    for name in ("malicious.jsonl", "benign.jsonl"):
        for line in (CORPUS / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row["split"] == "tune":
                    texts.append(row["text"])
    return texts


def count() -> bytes:
    counts: Counter[str] = Counter()
    for text in tune_texts():
        lower = _normalise(text)[0].lower
        counts.update(word for word in _WORD_RE.findall(lower)
                      if 2 <= len(word) <= words.MAX_WORD or word in ("a", "i"))
    ranked = sorted((-n, word) for word, n in counts.items() if n >= MIN_COUNT)
    return (json.dumps([word for _, word in ranked[:WORDS]], indent=0) + "\n").encode("ascii")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs")
    check = parser.parse_args().check
    from support import write_or_check  # (here: the tests load this module on its own)

    write_or_check(words.WORDS_PATH, count(), check=check)


if __name__ == "__main__":
    main()
