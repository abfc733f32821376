"""Rules written in code (normalise.py, encodings.py): hidden characters, look-alikes, encoded
payloads; their patterns describe the checks, so a changed threshold changes the version."""

from __future__ import annotations

from memadmin.quarantine.scanner.limits import (
    MAX_BLOCKS,
    MAX_DECODED,
    MAX_DEPTH,
    MIN_B64,
    MIN_BITS_RUN,
    MIN_ENTITIES,
    MIN_HEX,
    MIN_UNDECODED_RUN,
    MIN_VS_RUN,
    MIN_ZW_SPLITS,
    PRINTABLE_SHARE,
)
from memadmin.quarantine.scanner.spec import _Spec

_CODE_SPECS: tuple[_Spec, ...] = (
    _Spec("PI-UNICODE-TAG", "invisible_unicode",
          "Invisible Unicode tag characters carry hidden text that a model reads but a person "
          "does not see.",
          "tag characters U+E0000-E007F, except an emoji subdivision flag "
          "U+1F3F4 [tag a-z 0-9]{2,7} U+E007F"),
    _Spec("PI-UNICODE-BIDI", "invisible_unicode",
          "A bidirectional-text control character changes the order in which the text is "
          "displayed, so what a person reads differs from what a model reads.",
          "U+202D/U+202E anywhere; U+202A/U+202B/U+2066-U+2068 in text without right-to-left "
          "letters; the span runs to the closing U+202C/U+2069 or the end of the line"),
    _Spec("PI-UNICODE-ZW", "invisible_unicode",
          "Zero-width characters split words, a way to slip keywords past filters while the text "
          "looks normal.",
          f"at least {MIN_ZW_SPLITS} zero-width characters (U+200B-U+200D, U+2060, U+FEFF, "
          "U+180E; not the soft hyphen U+00AD, which marks syllables) between Latin, Cyrillic "
          "or Greek letters"),
    _Spec("PI-HOMOGLYPH-1", "homoglyph",
          "A word mixes Latin letters with look-alike Cyrillic or Greek letters, a way to "
          "disguise words such as 'ignore' or 'system'.",
          "after NFKC, a word of Latin and Cyrillic/Greek letters whose minority-script letters "
          "are all look-alikes of the majority script"),
    _Spec("PI-ENCODED-1", "encoded_payload",
          "An encoded block (base64, base32, hex, URL or form escapes, HTML entities, \\u "
          "escapes, letters spaced out or ROT13) decodes to text that itself contains a prompt "
          "injection.",
          f"base64/base64url >= {MIN_B64} chars (wrapped lines joined, also URL-quoted), "
          f"base32, hex >= {MIN_HEX} digits (plain, spaced, wrapped, \\x, "
          f"0x); >= {MIN_ENTITIES} %xx escapes ('+' a space), '+'-joined words, HTML entities "
          "or \\u, \\u{}, \\U escapes (surrogate pairs joined), with the letters just before "
          "the first (<= 24); >= 8 single characters spaced out; ROT13 lines whose letters are "
          "mostly rotated vowels, or >= 3 words (3x the plain ones) that rotate to common "
          "prompt words, with up to 3 words before and after them; "
          f"<= {MAX_BLOCKS} blocks of <= {MAX_DECODED} bytes per level, {MAX_DEPTH} levels; "
          f">= {PRINTABLE_SHARE} printable UTF-8; rescanned with every rule and the model"),
    _Spec("PI-UNICODE-HIDDEN", "invisible_unicode",
          "A run of invisible characters (variation selectors, invisible operators or "
          "zero-width characters) encodes hidden text that a model can read and a person "
          "cannot see.",
          f">= {MIN_VS_RUN} variation selectors U+FE00-FE0F/U+E0100-E01EF as bytes 0-255, or "
          f">= {MIN_BITS_RUN} of U+2061-2064 or of U+200B-D/U+2060/U+FEFF as bits (2 symbols), "
          "bits with a separator (3) or base-4 digits (4) under any assignment, decoding to "
          ">= 4 chars of UTF-8, >= 60% letters and spaces; or any run of "
          f">= {MIN_UNDECODED_RUN} invisible characters"),
)
