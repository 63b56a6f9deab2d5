"""Warnings, and progress, that fasterm gives the person who calls ``fit``.

:class:`DataWarning` says something about the data as it met the declared
bounds: rows clipped to ``data_norm``, labels clipped to ``label_bound``,
labels outside a declared ``classes``, a fit that ended on the boundary of
the parameter ball.  It is computed from the data, so it is *not* part of the
private release: it goes to the caller only (who holds the data), nothing of
it is stored on the fitted object or its result, and it is never sent
anywhere else (docs/guarantees.rst, "What is released").  Silence it with
``warnings.simplefilter("ignore", fasterm.DataWarning)``.

:func:`warn_on_boundary` is the one check of the parameter ball for the three
estimators (binary, multiclass, regression): a function of the released
parameters and of public constants only (a post-processing, no privacy cost).

:class:`CostWarning` (:func:`warn_cost`) says, before a run starts, that its
work — T steps of m rows of p·K multiply-adds, public sizes only — is far
beyond a normal fit's.  :func:`verbose` (the estimators' ``verbose``) and
:func:`progress` show the steps done of each run on stderr (tqdm where
installed): step counts only, no value computed from the data.  Long compiled
loops honour Ctrl-C (src/fasterm/_interrupt.pxd); docs/performance.rst, "Long
fits".
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time
import warnings

import numpy as np

__all__ = ["BOUNDARY_TOLERANCE", "COST_WARN", "CostWarning", "DataWarning", "progress", "start_reporting",
           "stop_reporting", "verbose", "warn_cost", "warn_on_boundary"]

#: A fit "ends on the boundary" when ‖w‖ ≥ (1 − this)·radius (w: the released (coef, intercept/s)).
BOUNDARY_TOLERANCE = 1e-6

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class DataWarning(UserWarning):
    """The data broke or met a declared bound: a message for the caller only, not a release."""


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


class CostWarning(UserWarning):
    """A run's work, from public sizes only, is far beyond a normal fit's (:func:`warn_cost`)."""


#: Multiply-adds (T·m·p·K) above which a run warns before it starts: at the ~10⁹ per second of one
#: core, minutes of work, where the fits of docs/performance.rst make 10⁷-10⁹.
COST_WARN = 1e11


def warn_cost(steps, rows, width, *, classes=1, what="this fit") -> None:
    """Warn (:class:`CostWarning`) when T = ``steps`` steps over ``rows`` rows each (the expected
    batch for SGD) of ``width`` columns and ``classes`` classes make more than :data:`COST_WARN`
    multiply-adds.  Public sizes only (n, q, d, K, T), nothing of the data."""
    work = float(steps) * float(rows) * float(width) * float(classes)
    if not work > COST_WARN:
        return
    sizes = f"T={int(steps)} steps of {float(rows):.4g} rows x {int(width)} columns"
    if classes > 1:
        sizes += f" x K={int(classes)} classes"
    warnings.warn(CostWarning(
        f"{what} will make about {work:.1e} multiply-adds ({sizes}), far beyond a normal fit's "
        f"(10^7-10^9; this warning: above {COST_WARN:.0e}): expect it to run for many minutes.  Ctrl-C "
        "stops it; verbose=1 on the estimator shows its progress.  A large K from y: check that y holds "
        "class labels, not a continuous target.  (From public sizes only; silence with "
        "warnings.simplefilter('ignore', fasterm.CostWarning).)"), stacklevel=_outside_stacklevel())


_VERBOSE = contextvars.ContextVar("fasterm_verbose", default=(0, ""))


def start_reporting(level, name=""):
    """From here every run shows its progress (:func:`progress`) when ``level`` (an int or bool,
    anything else counts as 0) is ≥ 1, labelled ``name`` (the estimator); returns the token that
    :func:`stop_reporting` takes back (the estimators' ``fit``, in its ``finally``)."""
    level = int(level) if isinstance(level, (int, np.integer)) else 0
    return _VERBOSE.set((level, name))


def stop_reporting(token) -> None:
    """Back to the reporting before :func:`start_reporting` gave ``token``."""
    _VERBOSE.reset(token)


@contextlib.contextmanager
def verbose(level, name=""):
    """:func:`start_reporting` for the block."""
    token = start_reporting(level, name)
    try:
        yield
    finally:
        stop_reporting(token)


class _Bar:
    """The steps done of a run, on stderr: tqdm where installed, else one rewritten line
    (at most every 0.2 s)."""

    def __init__(self, total, desc):
        self.total, self.desc, self.done, self._last = int(total), desc, 0, 0.0
        try:
            from tqdm import tqdm
        except ImportError:
            self._tqdm = None
        else:
            self._tqdm = tqdm(total=self.total, desc=desc, unit="step", file=sys.stderr)

    def __call__(self, t):
        t = min(int(t), self.total)
        if t <= self.done:
            return
        if self._tqdm is not None:
            self._tqdm.update(t - self.done)
            self.done = t
            return
        self.done = t
        now = time.monotonic()
        if t == self.total or now - self._last >= 0.2:
            self._last = now
            sys.stderr.write(f"\r{self.desc}: {t}/{self.total} steps")
            sys.stderr.flush()

    def close(self):
        if self._tqdm is not None:
            self._tqdm.close()
        else:
            sys.stderr.write("\n")
            sys.stderr.flush()


@contextlib.contextmanager
def progress(total, what):
    """The progress reporter of a run of ``total`` steps: yields None unless within
    :func:`verbose` (level ≥ 1), else a callable ``report(t)``, t the steps done (the compiled
    loops call it about every 100 ms, src/fasterm/_interrupt.pxd; the Python loops every step).
    A run that ends without an exception shows ``total``/``total``."""
    level, name = _VERBOSE.get()
    if level < 1 or total < 1:
        yield None
        return
    bar = _Bar(total, f"{name}: {what}" if name else what)
    try:
        yield bar
        bar(total)
    finally:
        bar.close()
