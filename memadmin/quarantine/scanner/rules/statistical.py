"""PI-MODEL-1, the statistical second opinion (pi_model.py)."""

from __future__ import annotations

from memadmin.quarantine import pi_model as _pim
from memadmin.quarantine.scanner.spec import _Spec

_MODEL = _pim.model()


_MODEL_SPECS: tuple[_Spec, ...] = (
    _Spec("PI-MODEL-1", "statistical",
          "A model trained on labelled injections scores this text as an injection; the marked "
          "words weigh most.",
          f"naive Bayes over binary features {_MODEL.config!r} of the normalised lower-cased "
          f"text, weights x{_pim.SCALE} summed as integers, bias {_MODEL.bias}, flagged above "
          f"{_MODEL.threshold} in any window of "
          f"{_pim.WINDOW} characters (overlap {_pim.OVERLAP}); weights sha256 {_MODEL.digest}"),
)
