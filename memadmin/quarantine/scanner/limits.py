"""The bounds a scan keeps to (part of the rule-set version where a check reads them)."""

from __future__ import annotations

MAX_BLOCKS = 16          # encoded blocks decoded per text
MAX_DECODED = 4096       # bytes decoded per block
MIN_B64 = 24             # characters in a base64 block before it is decoded
MIN_HEX = 24             # hex digits in a hex block before it is decoded
PRINTABLE_SHARE = 0.9    # share of printable characters for decoded bytes to count as text
MIN_ZW_SPLITS = 2        # zero-width characters inside words before that is flagged
MAX_SPANS_PER_RULE = 100  # spans kept per rule (a reviewer needs the first ones, not 30,000)
MIN_VS_RUN = 4           # variation selectors in a row before they are decoded as bytes
MIN_BITS_RUN = 16        # invisible operators or zero-width characters in a row, decoded as digits
MIN_UNDECODED_RUN = 24   # invisible characters in a row flagged even if they decode to nothing
MAX_DEPTH = 3            # encodings inside encodings decoded
MIN_ENTITIES = 4         # HTML entities / \u escapes / %xx escapes in a block before it is decoded
MIN_CODES = 8            # binary, decimal, octal or Morse codes in a row before they are decoded
