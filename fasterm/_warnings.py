"""Warnings, and progress, that fasterm gives the person who calls ``fit``.

:class:`DataWarning` says something about the data as it met the declared
bounds: rows clipped to ``data_norm``, labels clipped to ``label_bound``,
labels outside a declared ``classes``, a fit that ended on the boundary of
the parameter ball, a δ of at least 1/n for the n rows
(:func:`warn_large_delta`).  It is computed from the data, so it is *not* part of the
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
import functools
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import numpy as np

__all__ = ["BOUNDARY_TOLERANCE", "COST_WARN", "CostWarning", "DataWarning", "PrivacyWarning", "checks_delta",
           "delta_checked_outside", "progress", "start_reporting", "stop_reporting", "verbose", "warn_cost",
           "warn_large_delta", "warn_on_boundary"]

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


# True while a caller that checks its own δ against n (an estimator's fit, a search, the
# command line) runs the solvers: they then do not warn a second time, for their share of δ.
_DELTA_CHECKED_OUTSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("fasterm_delta_checked_outside",
                                                                               default=False)
_F = TypeVar("_F", bound=Callable[..., Any])


def warn_large_delta(delta, n, who: str) -> None:
    """Warn (:class:`DataWarning`) when 0 < δ and δ ≥ 1/n for the n private rows.

    (ε, δ)-DP with δ ≥ 1/n allows a release that publishes whole records: the
    mechanism that publishes each row independently with probability δ is
    (0, δ)-DP, and publishes δ·n ≥ 1 rows on average (Dwork & Roth, *The
    Algorithmic Foundations of Differential Privacy*, 2014, §2.3, after
    Definition 2.4).  n comes from the data, so this goes to the caller only and
    nothing of it is stored.  Silent for an unknown n (a dask array with unknown
    chunks), and inside :func:`delta_checked_outside`.
    """
    if _DELTA_CHECKED_OUTSIDE.get():
        return
    try:
        delta, n = float(delta), float(n)
    except (TypeError, ValueError):
        return
    if not (math.isfinite(n) and n >= 1.0 and 0.0 < delta and delta >= 1.0 / n):
        return
    warnings.warn(DataWarning(
        f"{who}: delta={delta:g} is at least 1/n for the n = {int(n)} rows: (epsilon, delta)-DP with "
        "delta >= 1/n allows a release that publishes whole records (publishing each row with probability "
        f"delta is (0, delta)-DP and publishes delta*n = {delta * n:.3g} rows on average; Dwork & Roth 2014, "
        "section 2.3); choose delta well below 1/n, e.g. 1/n**2.  (Computed from n, to the caller only; "
        "silence with warnings.simplefilter('ignore', fasterm.DataWarning).)"), stacklevel=_outside_stacklevel())


@contextlib.contextmanager
def delta_checked_outside() -> Iterator[None]:
    """Inside, :func:`warn_large_delta` is silent: the caller checks its own δ against n
    (a search's runs, the command line's fits), once, for the δ it reports."""
    token = _DELTA_CHECKED_OUTSIDE.set(True)
    try:
        yield
    finally:
        _DELTA_CHECKED_OUTSIDE.reset(token)


def checks_delta(fit_step: _F) -> _F:
    """Decorate an estimator's fit step ``fit_step(self, X, ...)``, which sets ``self.delta_``.

    The solvers it runs do not warn (:func:`delta_checked_outside`); after it,
    :func:`warn_large_delta` for the δ the fit reports (``delta_``: what it
    spent, the private ranges of ``bounds="private"`` included; NaN, an
    uncertified release, and 0 do not warn) and n = ``X.shape[0]``.
    """
    @functools.wraps(fit_step)
    def wrapper(self, X, *args, **kwargs):
        with delta_checked_outside():
            out = fit_step(self, X, *args, **kwargs)
        warn_large_delta(getattr(self, "delta_", 0.0), X.shape[0], type(self).__name__)
        return out

    return wrapper  # type: ignore[return-value]
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
