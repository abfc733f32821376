"""Every rule of the scanner, and the rule-set version that names them."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from memadmin.quarantine.scanner import (
    alphabets,
    direction,
    encodings,
    letterforms,
    limits,
    markup_splits,
    mentions,
    normalise,
    transfer,
    words,
)
from memadmin.quarantine.scanner.rules import (
    buried,
    code_execution,
    exfiltration,
    jailbreak,
    markup,
    override,
    persistence,
    prompt_leak,
    role,
    tool_call,
)
from memadmin.quarantine.scanner.rules.hidden import _CODE_SPECS
from memadmin.quarantine.scanner.rules.statistical import _MODEL_SPECS
from memadmin.quarantine.scanner.spec import Rule, _Spec

# The regex families, in the order their parts are compiled (the order does not change a verdict).
_REGEX_SPECS: tuple[_Spec, ...] = (override.SPECS + role.SPECS + tool_call.SPECS
                                   + exfiltration.SPECS + persistence.SPECS + jailbreak.SPECS
                                   + prompt_leak.SPECS + code_execution.SPECS + markup.SPECS
                                   + buried.SPECS)
_SPECS: tuple[_Spec, ...] = _CODE_SPECS + _REGEX_SPECS + _MODEL_SPECS


RULES: dict[str, Rule] = {s.id: Rule(s.id, s.category, s.explanation) for s in _SPECS}


def ruleset_digest(entries: Iterable[tuple[str, str, str]]) -> str:
    """The version of a rule list of ``(id, category, pattern source)``; any change changes it."""
    digest = hashlib.sha256()
    for rule_id, category, source in sorted(entries):
        for part in (rule_id, category, source):
            data = part.encode("utf-8")
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)
    return "2026.11+" + digest.hexdigest()[:10]


def _pattern_source(spec: _Spec) -> str:
    """What defines a rule's behaviour, as text: its regex parts or its check's description."""
    if isinstance(spec.pattern, str):
        return spec.pattern
    return "\n".join(f"{part.leads!r} {part.rest!r} {part.word!r} {part.before!r} "
                      f"{part.requires!r}" for part in spec.pattern)


# Not a rule but part of what decides a verdict: quoted mentions of attacks are dropped.
_FILTERS = (("~quoted-mention", "", f"{mentions.META} {mentions._CLOSE} {mentions._CONTEXT} "
                                     f"{mentions._AFTER} {mentions._INSIDE} "
                                     f"{mentions._SENTENCE_END.pattern} {mentions.AFTER_META} "
                                     f"{mentions.SAYS} {mentions._SAYS_WINDOW} "
                                     f"{mentions.SAYS_CLAUSE}"),
            ("~reported-speech", "", f"{mentions.REPORTED} {mentions._REPORTED_WINDOW} "
                                     f"{mentions.ADDRESSED}"),
            ("~escaped-breaks", "", f"{normalise.ESCAPED_BREAK} {normalise.CONTINUED_LINE}"),
            # read in place: escaped UTF-8, quote entities, cut words, hard-wrapped prose
            ("~read-in-place", "", " ".join([
                normalise._UTF8_ESCAPE_RE.pattern, normalise._HIGH_ESCAPE_RE.pattern,
                normalise._ASCII_ESCAPE_RE.pattern, normalise._U_ESCAPE_RE.pattern,
                "u-escapes: past ASCII only, surrogate pairs whole", normalise._RTF_MARK.pattern,
                normalise._QUOTE_ENTITY_RE.pattern,
                normalise._CUT_WORD_RE.pattern, normalise._HALF_BEFORE_RE.pattern,
                normalise._HALF_AFTER_RE.pattern, normalise._WRAPPED_BREAK_RE.pattern,
                normalise._NOT_WRAPPED_RE.pattern, repr(normalise.WRAPPED_LINE),
                normalise._CUE_TIMING_RE.pattern, normalise._CUE_NUMBER_RE.pattern,
                normalise._CUES_END_RE.pattern, repr(sorted(normalise._LINE_ENDS)),
                normalise._ESCAPED_TIMING_RE.pattern, normalise._ANY_ESCAPED_BREAK_RE.pattern,
                "prose: 3 spaces, 2 letters a space, 0.7 letters and spaces"])),
            # a calendar read as a calendar program shows it; its text values scored alone
            ("~calendar", "", " ".join([
                normalise._CALENDAR_BEGIN_RE.pattern, normalise._CALENDAR_END_RE.pattern,
                normalise._CALENDAR_READ_RE.pattern, normalise._CALENDAR_VALUE_RE.pattern,
                "values: the first MAX_BLOCKS scored alone by the model",
                repr(limits.MAX_BLOCKS)])),
            # letters NFKC leaves alone read as Latin ones (small capitals, regional indicators)
            ("~letter-like", "", normalise._LETTER_LIKE_RE.pattern),
            ("~addressed-to-no-one", "", f"{mentions.EXAMPLE_BEFORE} {mentions._EXAMPLE_WINDOW} "
                                         f"{mentions._CODE_SPAN} {mentions.RUN_BEFORE} "
                                         f"{mentions._LIST_ITEM} {mentions._LIST_OPEN} "
                                         f"{mentions._LIST_CLOSE.pattern} "
                                         f"{mentions.IN_CODE} {mentions._TAG_NAMED_RE.pattern} "
                                         f"{sorted(mentions._QUOTES.items())} "
                                         "list elements: escaped quotes read as quotes"),
            ("~third-person-subject", "", f"{mentions.SUBJECT} {mentions._SUBJECT_WINDOW}"),
            # what the decoders find (a decoded block is judged as plain text is, and a rule's
            # match inside an encoded block is left to the block: issue 19, 2026-12-05)
            ("~decoders-2", "", " ".join(
                [pattern.pattern for pattern, _kind, _hint in encodings._KINDS]
                + [encodings._STRING_ESCAPE_RE.pattern, repr(encodings.MIN_STRING_ESCAPES),
                   encodings._WRAP_GAP_RE.pattern, encodings._WRAP_TAIL_RE.pattern,
                   encodings._ESCAPED_GAP_RE.pattern,
                   repr(sorted(encodings._WRAP_WIDTHS)), encodings._FORM_WORD_RE.pattern,
                   repr(encodings._FORM_WORDS), repr(encodings.MIN_ROT13_LETTERS),
                   repr(encodings.ROT13_SHARE), repr(encodings.ROT13_RATIO),
                   encodings._LEET_DIGIT_RE.pattern, repr(encodings.MIN_LEET_WORDS),
                   repr(encodings.LEET_SHARE), repr(encodings._NOISE_SIGN_RE.pattern),
                   repr(encodings._NOISE_SHAPE), encodings._NOISE_MARKS_RE.pattern,
                   repr((encodings.MIN_NOISE, encodings.NOISE_SHARE)),
                   "noise: not where a whole-text reading is",
                   "rot13 in a line: read from the text, non-ASCII kept",
                   encodings._JOINT_RE.pattern, encodings._ESCAPED_QUOTE_RE.pattern,
                   encodings._RTF_SKIPPED_RE.pattern, encodings._RTF_TOKEN_RE.pattern,
                   repr(sorted(encodings._RTF_BREAKS.items())),
                   encodings._RUN_RE.pattern, encodings._RUN_FORMAT_RE.pattern,
                   encodings._NEXT_ELEMENT_RE.pattern, encodings._INNER_ARRAY_RE.pattern,
                   "a block of one span read as its next kind when the first does not decode",
                   repr(sorted(encodings._CIPHERS)),
                   repr(encodings.SHIFT_RATIO), repr(encodings.PROSE_VOWELS),
                   # the words that give ROT13 and the other ciphers away, and Morse's letters
                   encodings._COMMON_WORDS, repr(sorted(encodings._MORSE.items()))])),
            # letters split by a separator, one per line, under stacked marks, upside down;
            # letters NFKC leaves alone or spells out (issue 19, 2026-12-06)
            ("~letter-forms", "", " ".join([
                letterforms._SEPARATED_RE.pattern, letterforms._RUN_RE.pattern,
                letterforms._SEPARATORS, repr(letterforms._SEPARATED_HINT),
                repr(letterforms.SEPARATED_SHARE), letterforms._MARK_RE.pattern,
                repr(letterforms.MARKED_SHARE), repr(letterforms.ACCENTED_SHARE),
                "accents: composed marks by NFD, per line; the most frequent mark dropped, "
                "then all; not inside a decoded block",
                repr(sorted(letterforms._TURNED.items())), letterforms._TURNED_ONLY,
                repr(letterforms.TURNED_SHARE), repr(limits.MIN_CODES),
                normalise._PARENTHESIZED_RE.pattern, letterforms._VERTICAL_HINT_RE.pattern,
                letterforms._VERTICAL_RE.pattern, repr(letterforms.VERTICAL_SHARE),
                repr(sorted(letterforms._BRAILLE_LETTERS.items())),
                repr(sorted(letterforms._BRAILLE_MARKS.items())),
                "braille: the letter sign after a digit ends the number",
                repr(sorted(letterforms._NATO.items())), letterforms._NATO_GAP_RE.pattern,
                letterforms._NATO_BREAK_RE.pattern,
                hashlib.sha256(words.WORDS_PATH.read_bytes()).hexdigest(),
                repr((words.MAX_WORD, words.MAX_RUN))])),
            # the encodings of mail and file transfer (their patterns are in "~decoders-2"):
            # what makes a run of printable ASCII or of capitals a candidate
            ("~transfer", "", " ".join([
                transfer._UU_HINT.decode(), repr(transfer._HEAD), transfer._SOFT_BREAK_RE.pattern,
                repr(sorted(transfer._QP_ESCAPED)), "latin-1 fallback",
                "qp: escapes apart by words in small letters",
                "printable: format characters count"])),
            # Base2048 and Ecoji, read from the text as written (issue 19, seventh session):
            # the published encoders' alphabets, what makes a run a candidate, and the blocks
            # blanked for the rest of the scan
            ("~alphabets", "", " ".join([
                hashlib.sha256(alphabets.ALPHABETS_PATH.read_bytes()).hexdigest(),
                alphabets.B2048_RE.pattern, alphabets.ECOJI_RE.pattern,
                repr((alphabets.MIN_B2048, alphabets.MIN_ECOJI, alphabets.MIN_SCRIPTS)),
                "masked: a space a character, line breaks kept"])),
            # words split by markup a reader skips (terminal escapes, HTML comments and tags,
            # Markdown marks), read again without it (issue 19, eighth session)
            ("~markup-splits", "", " ".join([
                markup_splits._PIECE_RE.pattern, markup_splits._EDGE_PIECE_RE.pattern,
                "runs between two letters, and edge runs of split words; the whole text read, "
                "and decoded (the encoded blocks as written kept); mentions as it reads"])),
            # which way a text reads: the telling letter pairs and the decision's bounds; its
            # word order, by where sentences start and end (each word backwards read so too)
            ("~direction", "", " ".join([
                hashlib.sha256(direction.DIRECTION_PATH.read_bytes()).hexdigest(),
                repr((direction.PAIRS, direction.FIRST, direction.BACKWARDS_RATIO,
                      direction.MIN_REVERSED, direction.MIN_LETTERS, direction.SAMPLE)),
                "word-order", direction._END_RE.pattern, direction._WORD_RE.pattern,
                direction._AFTER_END_RE.pattern, direction._FIRST_END_RE.pattern,
                "brackets in order", repr(direction.NESTING_LEAST)])))

RULESET_VERSION: str = ruleset_digest(
    [(s.id, s.category, _pattern_source(s)) for s in _SPECS] + list(_FILTERS))


def rule(rule_id: str) -> Rule:
    """The rule with this id; ``KeyError`` for an unknown id."""
    return RULES[rule_id]
