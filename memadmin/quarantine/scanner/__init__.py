"""The prompt-injection scanner: explainable rules over text an agent is about to remember.

The package: ``normalise`` (steps 1-2), ``index`` (the compiled rules and the word-start index,
step 3), ``encodings``, ``transfer``, ``letterforms``, ``direction``, ``words``, ``alphabets``
and ``markup_splits`` (step 4),
``rules/`` (one module of rule data per family, the rule-set version in ``rules/__init__``),
``spec`` (the rule language), ``limits``. The engine is below.

Pure Python (no Django, no database), called inside the write transaction, so it is cheap and
linear-time. ``scan(text)`` runs, cheapest first:

1. Invisible and direction-changing Unicode. Tag characters (U+E0000-E007F) outside an emoji
   subdivision flag, a bidi override (or an embedding/isolate in text without right-to-left
   letters) and zero-width characters splitting words are flagged on their own; all of them are
   then stripped for the later checks, keeping a map back to the original indices.
2. Look-alikes: NFKC (fullwidth letters, ligatures) and, only inside a word that mixes Latin with
   Cyrillic or Greek, look-alike letters mapped to the word's main script. Such a word is flagged
   on its own; genuine Russian or Greek prose has no mixed words and is left untouched. An ASCII
   text skips this step; a long text is folded only in the blocks that need it.
3. Rule families as bounded regular expressions over the lower-cased normalised text, with
   phrasings in en, de, fr, es, pt, it, ru, zh, ja, nl and pl, written as structure (a verb
   class, a bounded gap, an object class) rather than as sentences. Each rule part names anchors
   (the literal its matches start with) and may name required words; one pass over the text
   indexes where words start, and a part runs only if its anchors (and one required word) occur,
   only at those places (or, where its anchors are everywhere, by the regex engine's search).
   So a long ordinary text costs one index and a few regex matches.
4. Encoded blocks (base64/base64url, hex, ``\\x``, ``0x``, URL escapes, HTML entities, ``\\u``
   escapes, character codes, ROT13 and the other letter ciphers, punctuation inserted before
   words: ``encodings``; the encodings of mail and file transfer: ``transfer``; letters split
   by a separator, under stacked marks or an accent each, upside down, in braille or the
   NATO alphabet: ``letterforms``; text written
   backwards, by its letter pairs: ``direction``; Base2048 and Ecoji, read from the text
   as written: ``alphabets``; words split by markup a reader skips, the text read and decoded
   without it: ``markup_splits``; at most ``MAX_BLOCKS`` blocks,
   ``MAX_DECODED`` bytes each, ``MAX_DEPTH`` levels) that decode to mostly printable UTF-8
   are rescanned; a match inside yields a ``PI-ENCODED-1`` span covering the whole block. A
   cheap pass first shows whether any such block can exist. Text hidden in invisible
   characters is decoded in ``smuggling``.
5. ``PI-MODEL-1`` (``pi_model.py``): a linear model (logistic regression and naive Bayes
   averaged) over word and character n-grams of the normalised text, fitted on the corpus's
   tune split only (``benchmarks/train_scanner_model.py``, weights in ``model_weights.json``,
   whose sha256 is part of the version), scored over runs of words; its spans are the matched
   words that weigh most. It also has a say on the rules that match a form (``FORM_RULES``:
   a transcript's turn, a tool call's markup, a chat token, an address with a placeholder):
   their match counts only where the model finds the words around it less ordinary than the
   median harmless text (``_agreed``).

Every shortcut (index, gates, chunked folding, prefilters) has a plain reference path,
``_scan(text, gated=False)``; the tests check both give the same verdict over the corpus.

Every span is ``(start, end, rule_id)`` in Python ``str`` indices of the ORIGINAL text, so a
reviewer sees ``text[start:end]`` highlighted. Every pattern bounds its gaps (``{0,n}``) and has
no nested unbounded quantifier, so the cost stays linear in the length of the text.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from memadmin.quarantine.scanner.alphabets import alphabet_blocks, masked
from memadmin.quarantine.scanner.encodings import decoded_blocks
from memadmin.quarantine.scanner.index import _regex_matches
from memadmin.quarantine.scanner.limits import MAX_BLOCKS, MAX_DEPTH, MAX_SPANS_PER_RULE
from memadmin.quarantine.scanner.markup_splits import Reread
from memadmin.quarantine.scanner.mentions import quoted_mention
from memadmin.quarantine.scanner.normalise import _normalise, _Text, calendar_values
from memadmin.quarantine.scanner.rules import RULES, RULESET_VERSION, rule, ruleset_digest
from memadmin.quarantine.scanner.rules.statistical import _MODEL, FORM_RULES
from memadmin.quarantine.scanner.smuggling import hidden_channels
from memadmin.quarantine.scanner.spec import Rule, Verdict

__all__ = ["RULES", "RULESET_VERSION", "Rule", "Verdict", "rule", "ruleset_digest", "scan"]


def scan(text: str) -> Verdict:
    """The verdict for ``text``: which rules matched and where (indices into ``text``)."""
    return _scan(text, gated=True)


def _scan(text: str, *, gated: bool) -> Verdict:
    """``gated``: with every shortcut (anchor gates, chunked folding, prefilters); without,
    the plain reference the shortcuts must agree with (tests compare the two)."""
    if not isinstance(text, str):
        raise TypeError(f"scan() takes a str, not {type(text).__name__}")
    wide = alphabet_blocks(text)
    normalised, found = _normalise(masked(text, wide), gated)
    blocks = decoded_blocks(normalised.norm, gated)
    spans = set(found)
    for start, end, _decoded in hidden_channels(text):
        spans.add((start, end, "PI-UNICODE-HIDDEN"))
    for start, end, rule_id in _agreed(normalised, _orders(normalised, gated, blocks)):
        spans.add((*normalised.span(start, end), rule_id))
    budget = [MAX_BLOCKS * MAX_DEPTH]
    for start, end in _encoded_matches(normalised.norm, 0, gated, budget, blocks):
        spans.add((*normalised.span(start, end), "PI-ENCODED-1"))
    for start, end, decoded in wide:     # (indices into ``text`` itself)
        if budget[0] > 0 and _decodes_to_order(decoded, 0, gated, budget):
            spans.add((start, end, "PI-ENCODED-1"))
    for start, end in _model_spans(normalised):
        spans.add((*normalised.span(start, end), "PI-MODEL-1"))
    # a calendar's text values scored alone too, as a calendar program shows each (the
    # calendar's own words, BEGIN:VEVENT, DTSTART, ..., are no part of a description)
    for start, end, value in calendar_values(text, MAX_BLOCKS):
        if _MODEL.flagged_window(_normalise(value, gated)[0].lower) is not None:
            spans.add((start, end, "PI-MODEL-1"))
    kept: dict[str, int] = {}
    ordered_spans = []
    for span in sorted(spans):
        kept[span[2]] = kept.get(span[2], 0) + 1
        if kept[span[2]] <= MAX_SPANS_PER_RULE:
            ordered_spans.append(span)
    rules = tuple(sorted(kept))
    return Verdict(flagged=bool(rules), rules=rules, spans=tuple(ordered_spans),
                   version=RULESET_VERSION)


def _encoded_matches(norm: str, depth: int, fast: bool, budget: list[int],
                     blocks: list[tuple[int, int, str, bool]] | None = None,
                     ) -> Iterator[tuple[int, int]]:
    """Encoded blocks whose decoded text is an injection: any rule or the model matches it, or
    a block inside it is one (``MAX_DEPTH`` levels, ``budget[0]`` blocks decoded in all).
    ``blocks``: ``decoded_blocks(norm)``, if the caller has them."""
    if depth >= MAX_DEPTH:
        return
    if blocks is None:
        blocks = decoded_blocks(norm, fast, ciphers=depth == 0)
    for start, end, decoded, _escaped in blocks:
        if budget[0] <= 0:
            return
        if _decodes_to_order(decoded, depth, fast, budget):
            yield start, end


def _decodes_to_order(decoded: str, depth: int, fast: bool, budget: list[int]) -> bool:
    """Whether a block's decoded text (at ``depth``) is an injection, as a plain text is:
    a rule or the model matches it, or a block inside it is one. Takes one of ``budget``."""
    budget[0] -= 1
    wide = alphabet_blocks(decoded)
    inner, found = _normalise(masked(decoded, wide), fast)
    if found or hidden_channels(decoded):
        return True
    nested = (decoded_blocks(inner.norm, fast, ciphers=False) if depth + 1 < MAX_DEPTH
              else [])
    return (next(_agreed(inner, _orders(inner, fast, nested)), None) is not None
            or _MODEL.flagged_window(inner.lower) is not None
            or next(_encoded_matches(inner.norm, depth + 1, fast, budget, nested),
                    None) is not None
            or (depth + 1 < MAX_DEPTH
                and any(budget[0] > 0 and _decodes_to_order(text, depth + 1, fast, budget)
                        for _start, _end, text in wide)))


def _orders(text: _Text, gated: bool,
            blocks: list[tuple[int, int, str, bool]]) -> Iterator[tuple[int, int, str]]:
    """The rule matches of ``text`` that are not a quoted mention of an attack, nor inside one
    of its encoded ``blocks`` (``decoded_blocks(text.norm)``): a match there reads the escapes'
    visible letters without the quotes and line breaks they hide ("ignore+previous+
    instructions"), so the block is judged by what it decodes to, as PI-ENCODED-1. A decoded
    block is judged so too, as the plain text is (a base64 copy of a security write-up that
    quotes "ignore previous instructions" is no more an injection than the write-up). Nor a
    mention as the text reads without markup that splits its words (``markup_splits``)."""
    escaped = [(start, end) for start, end, _text, is_escaped in blocks if is_escaped]
    reread: Reread | None = None       # (made for the first match that is left)
    for start, end, rule_id in _regex_matches(text, gated=gated):
        if (any(a <= start and end <= b for a, b in escaped)
                or quoted_mention(text.lower, start, end, fast=gated)):
            continue
        if reread is None:
            reread = Reread(text.lower, partial(quoted_mention, fast=gated))
        if not reread.mentioned(start, end):
            yield start, end, rule_id


def _agreed(text: _Text, matches: Iterator[tuple[int, int, str]],
            ) -> Iterator[tuple[int, int, str]]:
    """The rule matches that count: a match of one of ``FORM_RULES`` (a transcript's turn, a
    tool call's markup, ...) where PI-MODEL-1 finds the words around it less ordinary than
    the median harmless text (``Model.agrees``), any other rule's always."""
    for start, end, rule_id in matches:
        if rule_id not in FORM_RULES or _MODEL.agrees(text.lower, start, end):
            yield start, end, rule_id


def _model_spans(text: _Text) -> list[tuple[int, int]]:
    """PI-MODEL-1: the strongest matched words of the first window the model flags (or, if
    no single word weighs for it, the window), as spans of the normalised text."""
    window = _MODEL.flagged_window(text.lower)
    if window is None:
        return []
    spans = _MODEL.explain(text.lower, *window)
    if not spans:
        start, end = window
        while start < end - 1 and text.lower[start].isspace():
            start += 1
        spans = [(start, end)]
    return spans
