"""Write memadmin/quarantine/scanner/alphabets.json: the alphabets of the two binary-to-text
encodings the scanner reads from large alphabets, as their published encoders write them (the
``base2048`` and ``ecoji`` packages, which red-teaming tools' encoding probes call; both are
dev extras). Nothing is learned: the characters are read off the encoders' output.

- ``base2048``: the 2,048 characters for 11 bits each (value ``v`` is the first character of
  the eleven bytes whose first eleven bits are ``v``), and the 8 that end a text on 3 bits or
  fewer (the last of ten bytes).
- ``ecoji``: Ecoji's 1,024 emoji for 10 bits each (version 1), its padding, and the four
  that end a text on four bytes (the last two bits of the fourth).

    .venv/bin/python benchmarks/train_alphabets.py            # write the file
    .venv/bin/python benchmarks/train_alphabets.py --check    # exit 1 if the file differs
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))   # (the tests load this module on its own)

from support import train_main  # noqa: E402

from memadmin.quarantine.scanner import alphabets  # noqa: E402


def _ecoji(data: bytes) -> str:
    import ecoji

    out = io.StringIO()
    ecoji.encode(io.BytesIO(data), out, wrap=0)
    return out.getvalue().rstrip("\n")     # (it ends every text with a line break)


def count() -> bytes:
    import base2048

    tables = {
        "base2048": "".join(base2048.encode((v << 77).to_bytes(11, "big"))[0]
                            for v in range(2048)),
        "base2048_tail": "".join(base2048.encode(v.to_bytes(10, "big"))[-1] for v in range(8)),
        # five bytes are four emoji: the first carries the first byte and the top two bits
        # of the second
        "ecoji": "".join(_ecoji(bytes([v >> 2, (v & 3) << 6, 0, 0, 0]))[0]
                         for v in range(1024)),
        "ecoji_padding": _ecoji(b"\0")[-1],
        "ecoji_padding4": "".join(_ecoji(bytes([0, 0, 0, t]))[-1] for t in range(4)),
    }
    return (json.dumps(tables, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def main() -> None:
    train_main(__doc__ or "", alphabets.ALPHABETS_PATH, count)


if __name__ == "__main__":
    main()
