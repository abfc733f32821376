"""The rule language: what a rule is, what a verdict is, and the regex fragments and helpers every
family's rules are written with."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: The attack families in plain words, for reviewers (the review queue shows these).
FAMILY_NAMES: dict[str, str] = {
    "instruction_override": "Overrides the AI's instructions",
    "role_impersonation": "Pretends to be the system or another role",
    "tool_call_imitation": "Imitates a tool call",
    "exfiltration": "Sends data out",
    "persistence": "Tries to persist in memory",
    "jailbreak": "Jailbreak (switches the rules off)",
    "prompt_leak": "Asks for the system prompt",
    "homoglyph": "Look-alike letters",
    "encoded_payload": "Encoded instructions",
    "invisible_unicode": "Hidden characters",
    "code_execution": "Runs code through the agent's tools",
    "markup_injection": "Script that runs when shown",
    "buried_instruction": "Instructions hidden in a document",
    "statistical": "Statistical model",
}


@dataclass(frozen=True)
class Rule:
    id: str            # stable, shown to reviewers
    category: str      # the attack family
    explanation: str   # one plain-English sentence

    @property
    def family(self) -> str:
        """The family in plain words."""
        return FAMILY_NAMES.get(self.category, self.category.replace("_", " ").capitalize())


@dataclass(frozen=True)
class Verdict:
    flagged: bool
    rules: tuple[str, ...]                   # ids of the rules that matched, sorted, unique
    spans: tuple[tuple[int, int, str], ...]  # (start, end, rule_id) into the original text
    version: str                             # == RULESET_VERSION


@dataclass(frozen=True)
class _Part:
    """One regex of a rule: a match starts at one of ``leads`` (each begins with a literal, its
    anchor), continues with ``rest``; ``word``: the lead starts a word; ``before``: a regex that
    must match the text right before the lead (ending in ``\\Z``); ``requires``: cheap words
    of which a text must contain one for the part to be tried at all."""

    leads: tuple[str, ...]
    rest: str
    word: bool
    before: str | None
    requires: tuple[str, ...]      # one of these must occur in the text (a word start, if a word)


@dataclass(frozen=True)
class _Spec:
    """A rule and what it matches: regex parts or, for a check written in code, a description
    of the check and its parameters (so a changed threshold changes the version too)."""

    id: str
    category: str
    explanation: str
    pattern: str | tuple[_Part, ...]


def _alt(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


def _falt(*words: str) -> str:
    """``_alt`` factored by first character (same language), for long lists: the regex
    engine then tests a few branches per position instead of every word."""
    groups: dict[str, list[str]] = {}
    rest: list[str] = []
    for word in words:
        first = word[:1]
        if first.isalnum() and word[1:2] not in ("?", "*", "+", "{"):
            groups.setdefault(first, []).append(word[1:])
        else:
            rest.append(word)
    branches = [first + (_alt(*tails) if len(tails) > 1 else tails[0]) if any(tails)
                else first + (_alt(*tails) if len(tails) > 1 else "")
                for first, tails in groups.items()]
    return _alt(*branches, *rest)


# Reusable fragments. Gaps are bounded and do not cross a sentence end.
# word start: no letter or digit right before, and not inside an identifier
# (``test_ignore_previous_instructions`` names a test, it gives no order)
_B = r"(?<![^\W_])(?<![^\W_]_)"


_E = r"(?![^\W_])"               # word end


_GAP = r"[^.!?\n]{0,40}?"


_GAP20 = r"[^.!?\n]{0,20}?"


_LONG = r"[^\n]{0,80}?"


_CJK_GAP = r"[^。！？\n]{0,12}"


def _p(leads: Iterable[str], rest: str = "", *, word: bool = True, before: str | None = None,
       requires: Iterable[str] = ()) -> _Part:
    return _Part(tuple(leads), rest, word, before, tuple(requires))


_LINE_START = r"(?:^|(?<=\n))[ \t]{0,8}\Z"


_HEADING_START = r"(?:^|(?<=[\n>\[(\"'.!?:;*]))[ \t]{0,8}(?:#{1,6}[ \t]*|\*\*)?\Z"


# The engine tests a trie node's branches in order, one byte each, and at most one can match
# (they start with different bytes): common letters first, the fewest tests on ordinary text.
_FREQUENT = b"etaoinsrhldcumfpgwybvkxjqz"


def _byte_order(item: tuple[int | None, dict]) -> tuple[int, int]:
    byte = item[0] or 0
    return (_FREQUENT.find(byte) % (len(_FREQUENT) + 1), byte)


def _trie(words: Iterable[bytes]) -> bytes:
    """A regex matching any of ``words`` (the longest at a position), factored as a trie so
    that the engine tests a few characters per position, not every word."""
    trie: dict = {}
    for word in words:
        node = trie
        for byte in word:
            node = node.setdefault(byte, {})
        node[None] = {}

    def emit(node: dict) -> bytes:
        branches = [re.escape(bytes([byte])) + emit(child)
                    for byte, child in sorted(node.items(), key=_byte_order)
                    if byte is not None]
        if not branches:
            return b""
        if None in node:    # a word ends here: an empty branch last, which the engine tries
            return b"(?:" + b"|".join(branches) + b"|)"   # faster than an optional group
        return branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"

    return emit(trie)
