"""PI-MODEL-1, the statistical second opinion (pi_model.py)."""

from __future__ import annotations

from memadmin.quarantine import pi_model as _pim
from memadmin.quarantine.scanner.spec import _Spec

_MODEL = _pim.model()

#: Rules that match a form a harmless document has as often as an attack does: a
#: transcript's turns, a tool trace's markup, a chat template's tokens, an address with a
#: placeholder in its query. Their match counts only where PI-MODEL-1 finds the words around
#: it less ordinary than the median harmless text (``pi_model.Model.agrees``): the form
#: carries the attack, the words say whether it does. The rules that read an order's words
#: (an override, a leak, a persona, ...) stand alone: the model cannot judge those, as
#: harmless write-ups quote the same words (its weight for "ignore" is below zero). Chosen
#: from the corpus rounds' fresh probes, where these were the rules that most often flagged
#: real transcripts and agent traces (tests/data/injection/README.md).
FORM_RULES = frozenset({"PI-ROLE-TRANSCRIPT", "PI-ROLE-TOKEN", "PI-TOOL-MARKUP",
                        "PI-EXFIL-URL"})


_MODEL_SPECS: tuple[_Spec, ...] = (
    _Spec("PI-MODEL-1", "statistical",
          "A model trained on labelled injections scores this text as an injection; the marked "
          "words weigh most.",
          f"committee of logistic regression and naive Bayes (one linear model) over the "
          f"features {_MODEL.config!r} of the normalised lower-cased text (words, adjacent "
          f"pairs, character grams within words, counted), weights x{_pim.SCALE} summed as "
          f"integers, bias {_MODEL.bias}, flagged above {_MODEL.short_threshold} for a text "
          f"of at most {_pim.WINDOW} words; a longer one where a run of {_pim.WINDOW} words "
          f"scores above {_MODEL.short_threshold} + {_MODEL.slope} x ln(runs), at most "
          f"{_MODEL.threshold}; a match of {sorted(FORM_RULES)} counts "
          f"only where it and {_pim.CONTEXT_WORDS} words each side (within "
          f"{_pim.CONTEXT_CHARS} characters) score above {_MODEL.gate}; weights sha256 "
          f"{_MODEL.digest}"),
)
