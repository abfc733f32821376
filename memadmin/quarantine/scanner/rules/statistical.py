"""PI-MODEL-1, the statistical second opinion (pi_model.py)."""

from __future__ import annotations

from memadmin.quarantine import pi_model as _pim
from memadmin.quarantine.scanner.spec import _Spec

_MODEL = _pim.model()


_MODEL_SPECS: tuple[_Spec, ...] = (
    _Spec("PI-MODEL-1", "statistical",
          "A model trained on labelled injections scores this text as an injection; the marked "
          "words weigh most.",
          f"committee of logistic regression and naive Bayes (one linear model) over the "
          f"features {_MODEL.config!r} of the normalised lower-cased text (words, adjacent "
          f"pairs, character grams within words, counted), weights x{_pim.SCALE} summed as "
          f"integers, bias {_MODEL.bias}, flagged above {_MODEL.threshold} for the whole text "
          f"or any run of {_pim.WINDOW} words; weights sha256 {_MODEL.digest}"),
)
