"""Step 4 of a scan, continued: words split by markup that whoever reads the text skips.

A way past filters that match words (issue 19, eighth session): something a terminal, a
browser or a Markdown viewer does not print is put inside a word ("ig\\x1b[0mnore",
"in<!-- -->structions", "sys<b></b>tem", "pro**mp**t"). A model reads the word whole; a
search for it does not. Where a piece stands between two letters, the text is read again
without the pieces in and at the edges of each such word ("fa<b>is</b> abstraction" reads
"fais abstraction"), and that reading is judged as plain text is (``decoded_blocks``, then
PI-ENCODED-1 if a rule or the model matches it); the decoders read it too, not the markup
(``encodings.decoded_blocks``), and a rule's match is a mention if it is one as the text
reads (``Reread``). Markup elsewhere is left as it is: there it splits nothing.

The pieces:

- a terminal's control sequences (colours, cursor moves: ESC "[" ... a final byte; a title or
  a link: ESC "]" ... BEL or ESC "\\"), raw, or written as a log or a JSON string writes the
  escape ("\\x1b[", "\\033[", "\\u001b[", "\\e[");
- an HTML comment, and the tag of an inline element ("<b>", "</span>", "<wbr>"; attributes
  up to 200 characters): the text reads on through it (a block's tag, "<br>" or "</p><p>",
  breaks the line, so between two letters it ends a word);
- Markdown's emphasis and strike-through marks, "**" and "~~" (a single "*" or "_" between
  letters is code's, "a*b", "snake_case", and a lone letter between single marks is a letter
  spaced out, ``letterforms``).

The whole text is read, not only its split words: an order keeps its frame (the quotation
marks of a text that quotes it), as a plain text does.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from itertools import accumulate

# a control sequence's body after its escape: parameters, intermediates, a final byte
_CSI = r"\[[0-?]{0,40}[ -/]{0,4}[@-~]"
# (an inline element's tag: a block's, "<br>", "</p><p>", "</summary>", breaks the line there,
# so between two letters it ends a word rather than splitting one)
_INLINE = ("(?i:a|abbr|b|bdi|bdo|big|cite|code|data|del|dfn|em|font|i|ins|kbd|label|mark|q|s|"
           "samp|small|span|strike|strong|sub|sup|time|tt|u|var|wbr)(?![A-Za-z0-9-])")
# (a comment ends at its first "-->"; one does not start inside another, so a comment that
# wraps a split order, "<!-- ign<!-- -->ore ... -->", leaves the inner one to be found)
_PIECE = (rf"\x1b{_CSI}|\x1b\][^\x07\x1b]{{0,200}}(?:\x07|\x1b\\)"
          rf"|\\(?:x1[bB]|033|u001[bB]|e){_CSI}"
          rf"|<!--(?:(?!<!--).){{0,200}}?-->|</?{_INLINE}(?:\s[^<>]{{0,200}})?/?>"
          r"|\*\*|~~")
# the same at a split word's edge, without a tag's attributes: a link or a handler stays
# (``<a href="javascript:...">Op**en**`` keeps its link)
_EDGE_PIECE = (rf"\x1b{_CSI}|\\(?:x1[bB]|033|u001[bB]|e){_CSI}"
               rf"|<!--(?:(?!<!--).){{0,200}}?-->|</?{_INLINE}\s*/?>|\*\*|~~")
_PIECE_RE = re.compile(_PIECE, re.DOTALL)
_EDGE_PIECE_RE = re.compile(_EDGE_PIECE, re.DOTALL)


def split_pieces(norm: str) -> list[tuple[int, int]]:
    """The pieces of markup in and around each word of ``norm`` that markup splits, as
    ``(start, end)`` in order; ``[]`` if none splits a word."""
    # (a text without the characters a piece starts with, most of them, costs five searches
    # in C, half as much as the pattern's own skipping from one to the next)
    if not ("<" in norm or "\x1b" in norm or "\\" in norm or "**" in norm or "~~" in norm):
        return []
    return _split_pieces(norm, 0, len(norm), 0)


_NESTED = 2          # comments and tags looked into, one inside another


def _split_pieces(norm: str, start: int, end: int, depth: int) -> list[tuple[int, int]]:
    """``split_pieces`` of ``norm[start:end]``. The pieces are found one by one (each pattern
    bounded, found by the literal it starts with: linear in the text) and grouped here into
    runs: a run between two letters splits a word, and a run of pieces without attributes
    right before or after such a word's letters goes with it. A comment or a tag with
    attributes that is no such piece is text to a model, and is looked into ("<!--
    ign**or**e ... -->", ``<a href="javas**cr**ipt:...">``)."""
    runs: list[list[tuple[int, int]]] = []
    for match in _PIECE_RE.finditer(norm, start, end):
        if runs and runs[-1][-1][1] == match.start():
            runs[-1].append(match.span())
        else:
            runs.append([match.span()])

    def letter(i: int) -> bool:
        return 0 <= i < len(norm) and norm[i].isalpha()

    inside = [letter(run[0][0] - 1) and letter(run[-1][1]) for run in runs]
    found: list[tuple[int, int]] = []
    for k, run in enumerate(runs):
        first, last = run[0][0], run[-1][1]
        if not inside[k]:
            # at a split word's end ("fa<b>is</b> "), or at its start (" **ig**nore")
            after_split = (letter(first - 1) and k > 0 and inside[k - 1]
                           and norm[runs[k - 1][-1][1]:first].isalpha())
            before_split = (letter(last) and k + 1 < len(runs) and inside[k + 1]
                            and norm[last:runs[k + 1][0][0]].isalpha())
            if not ((after_split or before_split)
                    and all(_EDGE_PIECE_RE.fullmatch(norm, a, b) for a, b in run)):
                if depth < _NESTED:
                    for a, b in run:
                        if norm[a] == "<":         # a comment or a tag
                            found.extend(_split_pieces(norm, a + 1, b - 1, depth + 1))
                continue
        found.extend(run)
    return found


class Split:
    """A text whose words markup splits, read without the pieces (``split_pieces``), and the
    maps between the two."""

    __slots__ = ("at", "cut", "pieces", "reading")

    def __init__(self, text: str, pieces: list[tuple[int, int]]) -> None:
        self.pieces = pieces
        kept = []
        position = 0
        for start, end in pieces:
            kept.append(text[position:start])
            position = end
        kept.append(text[position:])
        self.reading = "".join(kept)
        # characters taken out up to each piece's end, and where each piece was in the reading
        self.cut = list(accumulate(end - start for start, end in pieces))
        self.at = [start - cut + end - start for (start, end), cut in zip(pieces, self.cut,
                                                                           strict=True)]

    def to_reading(self, start: int, end: int) -> tuple[int, int] | None:
        """``text[start:end]`` in the reading; None if a piece is in it or it starts inside
        one."""
        k = bisect.bisect_right(self.pieces, (start, start))
        if k and self.pieces[k - 1][1] > start:
            return None
        if k < len(self.pieces) and self.pieces[k][0] < end:
            return None
        shift = self.cut[k - 1] if k else 0
        return start - shift, end - shift

    def to_text(self, start: int, end: int) -> tuple[int, int]:
        """``reading[start:end]`` in the text: from its first character to its last, the
        pieces between them included."""
        first = start + self._shift(start)
        last = end - 1 + self._shift(end - 1) if end > start else first - 1
        return first, last + 1

    def _shift(self, i: int) -> int:
        k = bisect.bisect_right(self.at, i)         # the pieces taken out before ``i``
        return self.cut[k - 1] if k else 0


def split_text(norm: str) -> Split | None:
    """``norm`` read without the markup that splits its words; None if none does."""
    pieces = split_pieces(norm)
    return Split(norm, pieces) if pieces else None


class Reread:
    """Whether a rule's match in a text whose words markup splits is a mention of an attack
    as the text reads without the markup ("INJE<b></b>CTION_EXAMPLES = ["you are now DAN"]"
    is a list of examples to its reader, as it is without the tag). Only where the match
    itself holds no piece: the same words there, framed as the reader sees them. A frame so
    read gives a writer nothing that writing it plainly does not."""

    __slots__ = ("mention", "split")

    def __init__(self, lower: str, mention: Callable[[str, int, int], bool]) -> None:
        self.split = split_text(lower)
        self.mention = mention

    def mentioned(self, start: int, end: int) -> bool:
        if self.split is None:
            return False
        span = self.split.to_reading(start, end)
        return span is not None and self.mention(self.split.reading, *span)
