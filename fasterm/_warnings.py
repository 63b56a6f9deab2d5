"""Warnings that fasterm gives the person who calls ``fit``.

:class:`DataWarning` says something about the data as it met the declared
bounds: rows clipped to ``data_norm``, labels clipped to ``label_bound``,
labels outside a declared ``classes``, a fit that ended on the boundary of
the parameter ball.  It is computed from the data, so it is *not* part of the
private release: it goes to the caller only (who holds the data), nothing of
it is stored on the fitted object or its result, and it is never sent
anywhere else (docs/guarantees.rst, "What is released").  Silence it with
``warnings.simplefilter("ignore", fasterm.DataWarning)``.

:class:`PrivacyWarning` says something about the configuration, never the
data: a preprocessing step before a fasterm estimator that may learn from the
private rows (:func:`fasterm.model_selection.check_pipeline`).

:func:`warn_on_boundary` is the one check of the parameter ball for the three
estimators (binary, multiclass, regression): a function of the released
parameters and of public constants only (a post-processing, no privacy cost).
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

__all__ = ["BOUNDARY_TOLERANCE", "DataWarning", "PrivacyWarning", "warn_on_boundary"]

#: A fit "ends on the boundary" when ‖w‖ ≥ (1 − this)·radius (w: the released (coef, intercept/s)).
BOUNDARY_TOLERANCE = 1e-6

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class DataWarning(UserWarning):
    """The data broke or met a declared bound: a message for the caller only, not a release."""


class PrivacyWarning(UserWarning):
    """A configuration spends privacy that no accountant counts (a preprocessing step that may learn
    from the private rows): a function of the configuration, not of the data."""


def _outside_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside the fasterm package (the caller of ``fit``),
    whatever the depth of the library's own calls."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def warn_on_boundary(estimator, result) -> None:
    """Warn (:class:`DataWarning`) when the fit's released parameters lie on the radius ball.

    ``result.w`` is the released parameter vector of every estimator — (coef,
    intercept/s), or the (d + 1) × K matrix for K > 2 classes — and every
    method keeps it in the ball ‖w‖₂ ≤ R, R = ``result.info["radius"]`` (the
    resolved public radius; the estimator's ``radius`` where the result does
    not record it).  AdaSSP without a radius has no ball: no check.  A
    function of the released output and of public parameters only; nothing of
    it is stored.
    """
    info = getattr(result, "info", None) or {}
    radius = info.get("radius", getattr(estimator, "radius", None))
    if radius is None:  # solver="adassp" with radius=None: no parameter ball
        return
    norm = float(np.linalg.norm(np.asarray(result.w, dtype=np.float64)))
    if not norm >= (1.0 - BOUNDARY_TOLERANCE) * float(radius):
        return
    if getattr(estimator, "_kind", None) == "squared":
        hint = ("raise radius (a public choice), or use solver='adassp' (sufficient statistics "
                "perturbation, which needs no bound),")
    else:
        hint = ("raise radius (a public choice; it caps how confident the model may become),")
    warnings.warn(DataWarning(
        f"{type(estimator).__name__}: the fitted ‖(coef, intercept/intercept_scaling)‖ = {norm:.4g} is on the "
        f"boundary of the parameter ball radius={float(radius):g}: the fit was stopped by the bound, and the "
        f"unconstrained private solution is likely larger; {hint} and check that the features and "
        "labels are scaled into their declared bounds.  (Computed from the released model only; "
        "silence with warnings.simplefilter('ignore', fasterm.DataWarning).)"), stacklevel=_outside_stacklevel())
