"""Count the letter pairs that show which way a text reads (memadmin/quarantine/scanner/
direction.py) over the ``tune`` split of the labelled corpus ONLY (both labels; ``held`` is
never read), and write memadmin/quarantine/scanner/direction.json.

A pair is telling when it occurs more often as written than reversed; the pairs are ranked by
how many more (pairs of one letter twice, which read the same both ways, are left out), and
the first ``PAIRS`` of ASCII letters and spaces (pairs seen 50 times at least) and the first
``OTHER_PAIRS`` of the other characters (20 times) are kept, each language's counts weighed
alike. Of the first half, the ``FIRST`` whose reversal is rarest come first (the scanner
counts them first).
Deterministic (ties by the pair):

    .venv/bin/python benchmarks/train_direction.py            # write the file
    .venv/bin/python benchmarks/train_direction.py --check    # exit 1 if the file differs
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))   # (the tests load this module on its own)

from support import corpus_tune_rows, train_main  # noqa: E402

from memadmin.quarantine.scanner import direction  # noqa: E402
from memadmin.quarantine.scanner.encodings import _letters_of  # noqa: E402
from memadmin.quarantine.scanner.normalise import _normalise  # noqa: E402
from memadmin.quarantine.text import non_ascii  # noqa: E402

MIN_ASCII, MIN_OTHER = 50, 20


def views(text: str) -> tuple[bytes, str]:
    """The two views the scanner counts pairs in (``direction.reads_backwards``)."""
    norm = _normalise(text)[0].norm
    return _letters_of(norm.encode("ascii", "replace")).spaced, non_ascii(norm).lower()


def telling(by_language: dict[str, Counter[str]], least: int, keep: int) -> list[str]:
    """The pairs ranked by how much more often they occur as written than reversed, each
    language's share of it counted per pair of that language's text (so that English, most of
    the corpus, does not choose for Polish or Korean); a pair must occur ``least`` times; the
    first ``keep`` are kept."""
    gain: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for counts in by_language.values():
        total = sum(counts.values())
        for pair, count in counts.items():
            seen[pair] += count
            if pair[0] != pair[1]:
                gain[pair] += (count - counts.get(pair[::-1], 0)) / total
    ranked = [pair for _, pair in sorted((-round(value, 12), pair) for pair, value in gain.items()
                                         if value > 0 and seen[pair] + seen[pair[::-1]] >= least)]
    kept = ranked[:keep]
    # first, the ``FIRST`` of them whose reversal is rarest (counted first, they tell ordinary
    # text from text written backwards on their own: "nt", not "e ", whose " e" is common too)
    first = sorted(kept[:keep // 2],
                   key=lambda pair: (round(seen[pair[::-1]] / seen[pair], 12), pair))
    first = first[:direction.FIRST]
    return first + [pair for pair in kept if pair not in first]


def count() -> bytes:
    ascii_pairs: dict[str, Counter[str]] = {}
    other_pairs: dict[str, Counter[str]] = {}
    for row in corpus_tune_rows():
        language, text = row["lang"], row["text"]
        spaced, others = views(text)
        letters = spaced.decode("ascii")
        ascii_pairs.setdefault(language, Counter()).update(
            letters[i:i + 2] for i in range(len(letters) - 1) if letters[i:i + 2] != "  ")
        other_pairs.setdefault(language, Counter()).update(
            others[i:i + 2] for i in range(len(others) - 1))
    data = {"ascii": telling(ascii_pairs, MIN_ASCII, direction.PAIRS),
            "other": telling(other_pairs, MIN_OTHER, direction.OTHER_PAIRS)}
    return (json.dumps(data, ensure_ascii=False, indent=0) + "\n").encode("utf-8")


def main() -> None:
    train_main(__doc__ or "", direction.DIRECTION_PATH, count)


if __name__ == "__main__":
    main()
