"""Hostile input against every public function: an error naming the parameter, or a correct, finite answer.

Each public entry point (``fasterm.__all__`` and the public functions of its modules) is listed in
``ENTRIES`` with one valid baseline call and the kind of each parameter.  One
parameter at a time is replaced by a hostile value — NaN/±inf, empty, one
row, huge values (1e308), wrong dtypes (object, float16, int, bool, complex,
str), Fortran-ordered, non-contiguous and read-only arrays, mismatched
shapes, 0-d or 3-d arrays, ε ≤ 0 / inf / NaN, δ ∉ [0, 1), radius ≤ 0,
sizes like 3.5, bad random states — and the call must

* raise ``ValueError``/``TypeError`` whose message names the parameter
  (the word itself, e.g. ``epsilon``, ``X``, ``bounds``), or
* return a finite result (every float, array and result field finite); a
  value that only changes the memory layout or a convertible dtype must give
  **exactly** the baseline answer on the equivalent float64 C-array (same
  seed).  Such *valid equivalent spellings* (an int 2 for 2.0, a numpy
  float32 or int32 scalar, a 0-d array, a Fortran-ordered or read-only array,
  …: the items with an ``equivalent``) must behave exactly as the
  equivalent does — a spelling that raises where its equivalent succeeds
  fails the test (a regression that starts refusing valid input).

Never a crash, a hang or a silent NaN.  The deterministic catalogue runs
first in a subprocess (a segfault or an abort would kill pytest itself; a
hang hits the timeout); hypothesis then draws further values in-process
(random arrays with NaN/inf/huge entries, random dtypes and shapes, random
scalars).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import fasterm as fe
from fasterm.mechanisms.noise import OSRandom

HERE = os.path.dirname(os.path.abspath(__file__))
NAN, INF = float("nan"), float("inf")

# ---------------------------------------------------------------------------
# Baseline data (valid)
# ---------------------------------------------------------------------------
N, D = 6, 3
_rng = np.random.default_rng(0)
X0 = _rng.uniform(-1, 1, (N, D)) / math.sqrt(D)
Y0 = np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
Y3 = np.array([0.0, 1.0, 2.0, 2.0, 1.0, 0.0])  # three classes: the multiclass estimators
YR = _rng.uniform(-1, 1, N)  # regression labels
SW0 = np.array([0.5, 1.0, 2.0, 0.0, 1.5, 1.0])  # sample weights (bound 2)
V0 = np.array([0.3, -0.2, 0.5])
X1 = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.9])
SC0 = np.array([0.0, 1.0, 2.0, 0.5])
LM0 = _rng.uniform(0, 1, (5, 4))
PRED0 = np.array([[1, -1, 1, 1, -1, -1], [1, 1, 1, 1, 1, 1.0]])


# ---------------------------------------------------------------------------
# Hostile values per parameter kind.  Each item: (label, value, equivalent)
# where `equivalent` (or None) is a clean float64 C-array the call must
# treat identically.
# ---------------------------------------------------------------------------
class _Weird:
    def __float__(self):
        raise RuntimeError("not a number")


def _scalar_bad():
    return [("nan", NAN, None), ("inf", INF, None), ("-inf", -INF, None), ("str", "1", None),
            ("bool", True, None), ("complex", 1 + 2j, None), ("array2", np.array([1.0, 2.0]), None),
            ("list", [1.0], None), ("object", object(), None), ("weird", _Weird(), None),
            ("none", None, None)]


def _positive():
    return _scalar_bad() + [("zero", 0.0, None), ("neg", -1.0, None), ("-0", -0.0, None),
                            ("huge", 1e308, None), ("tiny", 1e-308, None), ("subnormal", 5e-324, None),
                            ("0d", np.array(2.0), 2.0), ("f32", np.float32(0.5), 0.5),
                            ("int", 2, 2.0), ("np-f64", np.float64(0.5), 0.5)]


def _epsilon():
    return _positive()


def _delta():
    return _scalar_bad() + [("neg", -0.1, None), ("one", 1.0, None), ("big", 1.5, None),
                            ("zero", 0.0, None), ("tiny", 1e-300, None), ("almost1", 1 - 1e-16, None),
                            ("0d", np.array(0.25), 0.25), ("f32", np.float32(0.125), 0.125),
                            ("int0", 0, 0.0)]


def _integer(base=None):
    """Bad integers; with ``base``, also valid spellings of it (numpy int, 0-d array)."""
    out = [("zero", 0, None), ("neg", -1, None), ("frac", 3.5, None), ("float-int", 2.0, None),
           ("nan", NAN, None), ("inf", INF, None), ("str", "3", None), ("bool", True, None),
           ("complex", 2j, None), ("array", np.array([2, 3]), None), ("none", None, None)]
    if base is not None:
        out += [("np-int", np.int32(base), int(base)), ("0d", np.array(base), int(base)),
                ("np-uint", np.uint16(base), int(base))]
    return out


def _random_state():
    return [("neg", -1, None), ("str", "seed", None), ("float", 1.5, None), ("bool", True, None),
            ("legacy", np.random.RandomState(0), None), ("object", object(), None),
            ("huge", 2**80, None), ("generator", np.random.default_rng(3), None),
            ("seedseq", np.random.SeedSequence(3), None), ("os", "os", None), ("OSRandom", OSRandom(), None)]


def _arrays(base, *, ndim):
    """Hostile variants of a valid float64 C-array ``base``."""
    b = np.asarray(base, dtype=np.float64)
    out = []
    for lab, val in [("nan", NAN), ("inf", INF), ("-inf", -INF), ("huge", 1e308), ("-huge", -1e308)]:
        a = b.copy()
        a.flat[0] = val
        out.append((lab, a, None))
    out.append(("all-huge", np.full_like(b, 1e308), None))
    ro = b.copy()
    ro.flags.writeable = False
    nc = np.repeat(b, 2, axis=-1)[..., ::2]
    out += [
        ("object", b.astype(object), None), ("complex", b.astype(complex), None),
        ("str", b.astype(str), None), ("datetime", np.zeros(b.shape, dtype="datetime64[s]"), None),
        ("float16", b.astype(np.float16), b.astype(np.float16).astype(np.float64)),
        ("int", np.round(b * 3).astype(np.int64), np.round(b * 3)),
        ("bool", b > 0, (b > 0).astype(np.float64)),
        ("fortran", np.asfortranarray(b), b), ("noncontig", nc, b), ("readonly", ro, b),
        ("list", b.tolist(), b),
        ("0d", np.array(0.5), None), ("3d", b.reshape((1,) * (4 - b.ndim) + b.shape[:1] + (-1,)), None),
        ("none", None, None), ("scalar", 0.5, None),
    ]
    if ndim == 1:
        out += [("empty", np.zeros(0), None), ("one", b[:1].copy(), None), ("2d", b[None, :], None),
                ("short", b[:-1].copy(), None), ("long", np.append(b, b[0]), None)]
    else:
        out += [("empty-rows", np.zeros((0, b.shape[1])), None), ("empty-cols", np.zeros((b.shape[0], 0)), None),
                ("one-row", b[:1].copy(), None), ("1d", b[0].copy(), None),
                ("fewer-rows", b[:-1].copy(), None), ("more-cols", np.hstack([b, b[:, :1]]), None),
                ("fewer-cols", b[:, :-1].copy(), None)]
    return out


def _sparse_X(base, *, converted=False):
    """scipy.sparse spellings of the (n, d) float64 array ``base`` (empty without scipy).

    A CSR X (matrix or array, int32 or int64 indices, duplicate entries) is a
    valid spelling of ``base``: the fit must equal the dense one (the entry's
    ``rtol``: the CSR kernel sums rows in another order).  Other formats are
    refused naming X, unless ``converted`` (the estimators convert them).
    """
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is in the test extra
        return []
    b = np.asarray(base, dtype=np.float64)
    csr = sp.csr_matrix(b)
    i64 = csr.copy()
    i64.indices, i64.indptr = i64.indices.astype(np.int64), i64.indptr.astype(np.int64)
    half = csr.copy()
    half.data = half.data / 2
    segs = [slice(half.indptr[i], half.indptr[i + 1]) for i in range(b.shape[0])]
    dup = sp.csr_matrix((np.concatenate([half.data[g] for g in segs for _ in (0, 1)]),
                         np.concatenate([half.indices[g] for g in segs for _ in (0, 1)]), 2 * half.indptr),
                        shape=b.shape)  # every stored value twice, halved: non-canonical, summing to b
    nan, huge = csr.copy(), csr.copy()
    nan.data[0] = np.nan
    huge.data[0] = 1e308
    badcol = sp.csr_matrix((csr.data.copy(), csr.indices.copy(), csr.indptr.copy()), shape=b.shape)
    badcol.indices[0] = b.shape[1] + 5
    out = [("csr", csr, b), ("csr-array", sp.csr_array(b), b), ("csr-int64", i64, b),
           ("csr-nan", nan, None), ("csr-huge", huge, None), ("csr-f32", sp.csr_matrix(b.astype(np.float32)), None),
           ("csr-int", sp.csr_matrix(np.round(b * 3).astype(np.int64)), None),
           ("csr-empty", sp.csr_matrix((0, b.shape[1])), None), ("csr-fewer-rows", csr[:-1], None),
           ("csr-more-cols", sp.hstack([csr, csr[:, :1]], format="csr"), None),
           ("csr-complex", sp.csr_matrix(b.astype(complex)), None), ("csr-duplicates", dup, b)]
    if not converted:  # scikit-learn's own format check words its error its way
        out.append(("csr-bad-column", badcol, None))
    out += [("csc", sp.csc_matrix(b), b if converted else None), ("coo", sp.coo_matrix(b), b if converted else None)]
    return out


def _not_spellings(values, *labels, reason):
    """``values`` with the items ``labels`` no longer treated as valid spellings
    (their equivalent dropped: an error naming the parameter is then fine), for ``reason``."""
    assert reason and {lab for lab, _, _ in values} >= set(labels)
    return [(lab, v, None if lab in labels else eq) for lab, v, eq in values]


def _choice(options):
    return [("bad", "nonsense", None), ("int", 1, None), ("none", None, None), ("list", [options[0]], None)]


def _bounds():
    return [("reversed", (1.0, 0.0), None), ("equal", (0.5, 0.5), None), ("nan", (NAN, 1.0), None),
            ("inf", (0.0, INF), None), ("overflow", (-1e308, 1e308), None), ("three", (0, 1, 2), None),
            ("one", (0.0,), None), ("str", "ab", None), ("scalar", 1.0, None), ("2d", np.zeros((2, 2)), None),
            ("complex", (0j, 1j), None), ("none", None, None), ("array", np.array([0.0, 1.0]), (0.0, 1.0)),
            ("ints", (0, 1), (0.0, 1.0))]


def _loss():
    return [("none", None, None), ("str", "logistic", None), ("class", fe.losses.Logistic, None),
            ("object", object(), None)]


def _constraint():
    return [("none", None, None), ("wrong-dim", fe.L2Ball(1.0, D + 1), None), ("str", "ball", None)]


def _granularity():
    """Bad grid spacings (secure mode: a power of two 2^k, -1000 <= k <= 960), and valid spellings."""
    return _scalar_bad() + [
        ("zero", 0.0, None), ("neg", -0.5, None), ("neg-pow2", -(2.0 ** -10), None), ("three", 3.0, None),
        ("tenth", 0.1, None), ("huge", 1e308, None), ("2^1000", 2.0 ** 1000, None), ("2^-1074", 5e-324, None),
        ("2^-1000", 2.0 ** -1000, None), ("2^-60", 2.0 ** -60, None), ("2^960", 2.0 ** 960, None),
        ("0d", np.array(0.25), 0.25), ("fraction", Fraction(1, 4), 0.25),
        ("int-pow2", 4, 4.0), ("f32", np.float32(2.0 ** -8), 2.0 ** -8), ("coarse", 0.5, None),
        ("fraction-near", Fraction(2 ** 60 + 1, 2 ** 60), None),  # a float would round it to 1.0
        ("fraction-huge", Fraction(2 ** 2000, 3), None)]


def _secure_random_state():
    return _random_state() + [("OS", "OS", None),
                              ("urandom", "urandom", None), ("empty-str", "", None), ("bytes", b"os", None)]


def _secure_flag():
    return [("int", 1, None), ("str", "yes", None), ("nan", NAN, None), ("array", np.array([True]), None),
            ("np-bool", np.bool_(True), None), ("object", object(), None)]


# Deliberate refusals of an otherwise valid spelling (the reason is the contract):
_NO_BOOL_BUDGETS = "a privacy budget is a number; True/False are refused rather than read as 1/0"
_SKLEARN_0D = ("the estimators validate parameters with scikit-learn's constraints, which (like every "
               "scikit-learn estimator) refuse 0-d arrays for numeric parameters")


# ---------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Entry:
    name: str
    call: object            # call(**kwargs)
    base: dict              # valid keyword arguments
    params: dict            # parameter -> list of (label, value, equivalent)
    aliases: dict = dataclasses.field(default_factory=dict)  # parameter -> extra words its errors may use
    inf_ok: bool = False    # the result is a bound or a prediction: +-inf is truthful (overflow), NaN never
    rtol: float = 0.0       # layout-equivalent inputs must agree to this tolerance (0: bit for bit)
    reproducible: bool = True  # False (OS entropy): equivalent spellings must succeed, results not compared


def _method(factory, method, **fixed):
    def call(**kw):
        init = {k: kw.pop(k) for k in list(kw) if k in fixed}
        return getattr(factory(**init), method)(**kw)
    return call


def _ctor_then(cls, method, ctor_keys, **method_kw):
    def call(**kw):
        ctor = {k: kw.pop(k) for k in list(kw) if k in ctor_keys}
        obj = cls(**ctor)
        return getattr(obj, method)(**{**method_kw, **kw})
    return call


def _loss_call(loss_cls, method, **init):
    def call(**kw):
        return getattr(loss_cls(**init), method)(**kw)
    return call


def _estimator(cls, method):
    def call(X, y, X_pred=None, **params):
        est = cls(**params).fit(X, y)
        if method == "fit":
            return est.coef_, est.intercept_
        return getattr(est, method)(X0 if X_pred is None else X_pred)
    return call


def _search_fit(X, y, param_grid, **kw):
    from fasterm.model_selection import PrivateSearch
    s = PrivateSearch(fe.DPLogisticRegression(), param_grid, **kw).fit(X, y)
    return s.best_estimator_.coef_, s.best_score_, s.epsilon_, s.delta_


def _rwm_update(losses=None, **kw):
    r = fe.online.RWM(**kw)  # default losses: one per expert, whatever n_experts is
    return r.update(np.linspace(0.0, 1.0, r.n_experts) if losses is None else losses)


def _private_rwm_run(loss_matrix=None, **kw):
    p = fe.online.PrivateRWM(**kw)
    if loss_matrix is None:
        loss_matrix = np.random.default_rng(0).random((min(p.rounds, 5), p.n_experts))
    return p.run(loss_matrix)


def _project_own(c):
    return c.project(np.linspace(-0.5, 0.7, c.dim))


def _set_secure(flag):
    try:
        fe.set_secure(flag)
        return fe.secure.is_secure(), fe.mechanisms.laplace(V0, 1.0, 1.0, random_state=0)
    finally:
        fe.set_secure(False)  # the process-wide default must not leak into the next case


def _secure_mode_call(flag=True, value=V0):
    with fe.secure_mode(flag):
        return fe.secure.is_secure(), fe.mechanisms.laplace(value, 1.0, 1.0, random_state=0)


def _os_integers(low, high, size=None):
    return OSRandom().integers(low, high, size)


def _audit_call(**kw):
    r = fe.audit.epsilon_lower_bound(**kw)
    return r.epsilon_lb, r.threshold, r.counts, r.p_num_lower, r.p_den_upper, r.confidence


def _entries():
    L, R, P = fe.losses, fe.accounting, fe.online
    pos, eps, dl, it, rs = _positive, _epsilon, _delta, _integer, _random_state
    E = []
    for nm in ("laplace", "gaussian"):
        E.append(Entry(f"noise.{nm}", getattr(fe.noise, nm), dict(size=5, scale=1.0, random_state=0),
                       dict(size=it(5) + [("tuple-frac", (2, 3.5), None), ("neg-tuple", (2, -1), None)],
                            scale=pos(), random_state=rs(),
                            dtype=[("int", np.int64, None), ("f16", np.float16, None), ("str", "x", None)])))
    E += [
        Entry("mechanisms.laplace", fe.mechanisms.laplace,
              dict(value=V0, sensitivity=1.0, epsilon=1.0, random_state=0),
              dict(value=_arrays(V0, ndim=1), sensitivity=pos(), epsilon=eps(), random_state=rs())),
        Entry("mechanisms.laplace_l2", fe.mechanisms.laplace_l2,
              dict(value=V0, l2_sensitivity=1.0, epsilon=1.0, delta=1e-5, random_state=0),
              dict(value=_arrays(V0, ndim=1), l2_sensitivity=pos(), epsilon=eps(), delta=dl(), random_state=rs())),
        Entry("mechanisms.gaussian", fe.mechanisms.gaussian,
              dict(value=V0, l2_sensitivity=1.0, epsilon=1.0, delta=1e-5, random_state=0),
              dict(value=_arrays(V0, ndim=1), l2_sensitivity=pos(), epsilon=eps(), delta=dl(), random_state=rs())),
        Entry("mechanisms.exponential", fe.mechanisms.exponential,
              dict(scores=SC0, sensitivity=1.0, epsilon=1.0, random_state=0),
              dict(scores=_arrays(SC0, ndim=1), sensitivity=pos(), epsilon=eps(), random_state=rs())),
        # accounting
        Entry("accounting.basic_composition", R.basic_composition, dict(epsilons=[1.0, 0.5], deltas=[0.0, 1e-6]),
              dict(epsilons=_not_spellings(_arrays([1.0, 0.5], ndim=1), "bool", reason=_NO_BOOL_BUDGETS),
                   deltas=_not_spellings(_arrays([0.0, 1e-6], ndim=1), "bool", reason=_NO_BOOL_BUDGETS))),
        Entry("accounting.advanced_composition", R.advanced_composition,
              dict(epsilon=0.1, delta=1e-6, k=10, delta_prime=1e-6),
              dict(epsilon=eps(), delta=dl(), k=it(10), delta_prime=dl())),
        Entry("accounting.heterogeneous_composition", R.heterogeneous_composition,
              dict(epsilons=[0.1, 0.2], delta_prime=1e-6),
              dict(epsilons=_not_spellings(_arrays([0.1, 0.2], ndim=1), "bool", reason=_NO_BOOL_BUDGETS),
                   delta_prime=dl())),
        Entry("accounting.calibrate_laplace_pure", R.calibrate_laplace_pure,
              dict(l2_sensitivity=1.0, dim=3, steps=10, epsilon=1.0),
              dict(l2_sensitivity=pos(), dim=it(3), steps=it(5), epsilon=eps())),
        Entry("accounting.calibrate_laplace_coordinate", R.calibrate_laplace_coordinate,
              dict(l2_sensitivity=1.0, dim=3, steps=10, epsilon=1.0, delta=1e-5),
              dict(l2_sensitivity=pos(), dim=it(3), steps=it(5), epsilon=eps(), delta=dl())),
        Entry("accounting.calibrate_laplace_l2", R.calibrate_laplace_l2,
              dict(l2_sensitivity=1.0, dim=3, steps=10, epsilon=1.0, delta=1e-5),
              dict(l2_sensitivity=pos(), dim=it(3), steps=it(5), epsilon=eps(), delta=dl())),
        Entry("accounting.laplace_l2_epsilon", R.laplace_l2_epsilon,
              dict(scale=1.0, l2_sensitivity=1.0, dim=3, steps=10, delta=1e-5),
              dict(scale=pos(), l2_sensitivity=pos(), dim=it(3), steps=it(5), delta=dl())),
        Entry("accounting.gaussian_delta", R.gaussian_delta, dict(mu=1.0, epsilon=1.0),
              dict(mu=pos(), epsilon=eps())),
        Entry("accounting.gaussian_epsilon", R.gaussian_epsilon, dict(mu=1.0, delta=1e-5),
              dict(mu=pos(), delta=dl())),
        Entry("accounting.gaussian_mu", R.gaussian_mu, dict(epsilon=1.0, delta=1e-5),
              dict(epsilon=eps(), delta=dl())),
        Entry("accounting.calibrate_gaussian", R.calibrate_gaussian,
              dict(l2_sensitivity=1.0, steps=10, epsilon=1.0, delta=1e-5),
              dict(l2_sensitivity=pos(), steps=it(5), epsilon=eps(), delta=dl())),
        Entry("accounting.rdp_subsampled_gaussian", R.rdp_subsampled_gaussian,
              dict(sample_rate=0.1, noise_multiplier=1.0, steps=10, orders=[2, 3, 8]),
              dict(sample_rate=_delta(), noise_multiplier=pos(), steps=it(5),
                   orders=_arrays([2.0, 3.0, 8.0], ndim=1) + [("frac", [2.5], None), ("one", [1], None),
                                                                ("huge", [10**9], None)])),
        Entry("accounting.rdp_epsilon", R.rdp_epsilon,
              dict(rdp=[0.1, 0.2], orders=[2.0, 4.0], delta=1e-5),
              dict(rdp=_arrays([0.1, 0.2], ndim=1), orders=_arrays([2.0, 4.0], ndim=1), delta=dl())),
        Entry("accounting.sgd_epsilon", R.sgd_epsilon,
              dict(sample_rate=0.1, noise_multiplier=1.0, steps=10, delta=1e-5),
              dict(sample_rate=_delta(), noise_multiplier=pos(), steps=it(5), delta=dl(),
                   neighbors=_choice(["add_remove"]))),
        Entry("accounting.calibrate_sgd_sigma", R.calibrate_sgd_sigma,
              dict(sample_rate=0.1, steps=10, epsilon=1.0, delta=1e-5),
              dict(sample_rate=_delta(), steps=it(5), epsilon=eps(), delta=dl(),
                   neighbors=_choice(["add_remove"]))),
        Entry("accounting.private_search_epsilon", R.private_search_epsilon,
              dict(mu=0.5, delta=1e-5, eta=0.0, gamma=0.1),
              dict(mu=pos(), delta=dl(), eta=_positive() + [("-1", -1.0, None), ("-2", -2.0, None)],
                   gamma=_delta())),
        Entry("accounting.calibrate_private_search", R.calibrate_private_search,
              dict(epsilon=1.0, delta=1e-5, eta=0.0, expected_runs=8.0),
              dict(epsilon=eps(), delta=dl(), eta=_positive() + [("-1", -1.0, None)],
                   expected_runs=pos() + [("one", 1.0, None), ("1e30", 1e30, None)])),
        Entry("accounting.calibrate_steps", R.calibrate_steps,
              dict(noise="laplace", calibration="l2", l2_sensitivity=1.0, dim=3, steps=10, epsilon=1.0,
                   delta=1e-5),
              dict(noise=_choice(["laplace"]), calibration=_choice(["l2"]), l2_sensitivity=pos(),
                   dim=it(3), steps=it(5), epsilon=eps(), delta=dl())),
        Entry("accounting.calibrate_steps(gaussian)", R.calibrate_steps,
              dict(noise="gaussian", calibration="l2", l2_sensitivity=1.0, dim=3, steps=10, epsilon=1.0,
                   delta=1e-5),
              dict(l2_sensitivity=pos(), dim=it(3), steps=it(5), epsilon=eps(), delta=dl())),
        Entry("accounting.pure_share", R.pure_share, dict(epsilon=1.0, delta=1e-5, k=10),
              dict(epsilon=eps(), delta=dl(), k=it(10))),
        Entry("accounting.compose_pure", R.compose_pure, dict(epsilon=0.1, k=10, delta=1e-5),
              dict(epsilon=eps(), k=it(10), delta=dl())),
        Entry("accounting.BudgetAccountant", R.BudgetAccountant, dict(epsilon=1.0, delta=1e-5),
              dict(epsilon=_scalar_bad() + [("neg", -1.0, None), ("zero", 0.0, None)],
                   delta=_scalar_bad() + [("neg", -0.1, None), ("big", 2.0, None)])),
        Entry("accounting.BudgetAccountant.spend", lambda **k: R.BudgetAccountant(1.0, 1e-5).spend(**k),
              dict(epsilon=0.5, delta=0.0), dict(epsilon=_scalar_bad() + [("neg", -1.0, None)],
                                                 delta=_scalar_bad() + [("neg", -0.1, None), ("big", 2.0, None)])),
    ]
    # constraints
    E += [
        Entry("L2Ball", lambda **k: _project_own(fe.L2Ball(**k)), dict(radius=1.0, dim=3, center=None),
              dict(radius=pos(), dim=it(3), center=_arrays(np.zeros(3), ndim=1))),
        Entry("Box", lambda **k: _project_own(fe.Box(**k)), dict(low=-0.1, high=0.2, dim=3),
              dict(low=_scalar_bad() + [("above", 0.5, None)], high=_scalar_bad() + [("below", -0.5, None)],
                   dim=it(3))),
        Entry("Simplex", lambda **k: _project_own(fe.Simplex(**k)), dict(dim=3, total=1.0),
              dict(dim=it(3), total=pos())),
        Entry("L1Ball", lambda **k: _project_own(fe.L1Ball(**k)), dict(radius=1.0, dim=3),
              dict(radius=pos(), dim=it(3))),
    ]
    for cname, c in [("L2Ball", fe.L2Ball(1.0, 3)), ("Box", fe.Box(-0.1, 0.2, 3)), ("Simplex", fe.Simplex(3)),
                     ("L1Ball", fe.L1Ball(1.0, 3))]:
        E.append(Entry(f"{cname}.project", c.project, dict(v=V0),
                       dict(v=_arrays(V0, ndim=1) + [("batch-bad", np.zeros((2, 4)), None)])))
    # losses
    for lname, lcls, y in [("Logistic", L.Logistic, Y0), ("Hinge", L.Hinge, Y0), ("Squared", L.Squared, YR),
                           ("Absolute", L.Absolute, YR), ("Linear", L.Linear, None)]:
        for method in ("value", "grad", "grad_sum"):
            base = dict(w=V0, X=X0, y=y, data_norm=1.0)
            params = dict(w=_arrays(V0, ndim=1), X=_arrays(X0, ndim=2), data_norm=pos(),
                          row_norms=_arrays(np.linalg.norm(X0, axis=1), ndim=1))
            if y is not None:
                params["y"] = _arrays(y, ndim=1)
            if method != "value":
                base["clip"] = 0.5
                params["clip"] = pos()
            # X and w must agree in d: a mismatch may be reported under either name
            # (value: finite data whose margins overflow give the IEEE result, +inf — a
            # documented choice, tests/erm/test_losses.py — never NaN)
            E.append(Entry(f"losses.{lname}.{method}", _loss_call(lcls, method), base, params,
                           aliases={"X": ["w"]}, inf_ok=method == "value"))
        E.append(Entry(f"losses.{lname}.lipschitz", _loss_call(lcls, "lipschitz"),
                       dict(data_norm=1.0, label_bound=1.0, radius=1.0),
                       dict(data_norm=pos(), label_bound=pos(), radius=pos())))
        E.append(Entry(f"losses.{lname}.sensitivity", _loss_call(lcls, "sensitivity"),
                       dict(data_norm=1.0, label_bound=1.0, radius=1.0),
                       dict(data_norm=pos(), label_bound=pos(), radius=pos())))
        if hasattr(lcls, "smoothness"):
            E.append(Entry(f"losses.{lname}.smoothness", _loss_call(lcls, "smoothness"),
                           dict(data_norm=1.0, label_bound=1.0, radius=1.0),
                           dict(data_norm=pos(), label_bound=pos(), radius=pos())))
    E.append(Entry("losses.row_norms", L.row_norms, dict(X=X0), dict(X=_arrays(X0, ndim=2) + _sparse_X(X0)),
                   rtol=1e-15))
    E.append(Entry("losses.Logistic(l2)", lambda l2, **k: L.Logistic(l2=l2).value(**k), dict(l2=0.1, w=V0, X=X0, y=Y0),
                   dict(l2=_scalar_bad() + [("neg", -1.0, None), ("huge", 1e308, None)])))
    # optimisation
    ball = fe.L2Ball(1.0, D)
    E += [
        Entry("pgd", fe.pgd, dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, steps=5),
              dict(loss=_loss(), X=_arrays(X0, ndim=2), y=_arrays(Y0, ndim=1), constraint=_constraint(),
                   steps=it(5), lr=pos(), average=[("str", "yes", None)])),
        Entry("noisy_pgd", fe.noisy_pgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   data_norm=1.0, random_state=0),
              dict(loss=_loss(), X=_arrays(X0, ndim=2), y=_arrays(Y0, ndim=1), constraint=_constraint(),
                   epsilon=eps(), delta=dl(), steps=it(5), noise=_choice(["laplace"]),
                   calibration=_choice(["l2"]), data_norm=pos(), clip=pos(), random_state=rs(),
                   label_bound=pos(), lr=pos(), max_steps=it(5))),
        Entry("noisy_pgd(gaussian, squared)", fe.noisy_pgd,
              dict(loss=L.Squared(), X=X0, y=YR, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   noise="gaussian", data_norm=1.0, label_bound=1.0, random_state=0),
              dict(X=_arrays(X0, ndim=2), y=_arrays(YR, ndim=1), epsilon=eps(), delta=dl(),
                   label_bound=pos(), data_norm=pos())),
        Entry("noisy_gd", fe.noisy_gd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   data_norm=1.0, random_state=0),
              dict(loss=_loss(), X=_arrays(X0, ndim=2), y=_arrays(Y0, ndim=1), constraint=_constraint(),
                   epsilon=eps(), delta=dl(), steps=it(5), noise=_choice(["laplace"]),
                   calibration=_choice(["l2"]), data_norm=pos(), clip=pos(), random_state=rs(),
                   label_bound=pos(), lr=pos(), max_steps=it(5), output=_choice(["average"]),
                   accelerate=_choice(["auto"]))),
        Entry("noisy_gd(accelerate, squared)", fe.noisy_gd,
              dict(loss=L.Squared(), X=X0, y=YR, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   data_norm=1.0, label_bound=1.0, random_state=0, accelerate=True),
              dict(X=_arrays(X0, ndim=2), y=_arrays(YR, ndim=1), epsilon=eps(), delta=dl(),
                   label_bound=pos(), data_norm=pos(), lr=pos())),
        Entry("noisy_sgd", fe.noisy_sgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   sample_rate=0.5, data_norm=1.0, random_state=0),
              dict(loss=_loss(), X=_arrays(X0, ndim=2), y=_arrays(Y0, ndim=1), constraint=_constraint(),
                   epsilon=eps(), delta=dl(), steps=it(5), sample_rate=_delta(), data_norm=pos(),
                   clip=pos(), random_state=rs(), label_bound=pos(), lr=pos(),
                   output=_choice(["average"]), neighbors=_choice(["add_remove"]))),
        Entry("noisy_sgd(batch_size, epochs)", fe.noisy_sgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, delta=1e-5,
                   batch_size=2.0, epochs=2.0, data_norm=1.0, random_state=0),
              dict(batch_size=pos(), epochs=pos())),
        # add/remove: q and the divisor m are the caller's (n is private); both required
        Entry("noisy_sgd(add_remove)", fe.noisy_sgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, delta=1e-5,
                   sample_rate=0.5, batch_size=3.0, epochs=2.0, data_norm=1.0, random_state=0,
                   neighbors="add_remove"),
              dict(sample_rate=_delta(), batch_size=pos(), epochs=pos())),
        # scipy.sparse X: CSR is a spelling of the dense X (equal fits to rounding), other formats named
        Entry("noisy_pgd(csr)", fe.noisy_pgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   data_norm=1.0, random_state=0),
              dict(X=_sparse_X(X0)), rtol=1e-12),
        Entry("noisy_gd(csr)", fe.noisy_gd,
              dict(loss=L.Squared(), X=X0, y=YR, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   data_norm=1.0, label_bound=1.0, random_state=0, sample_weight=SW0, weight_bound=2.0),
              dict(X=_sparse_X(X0)), rtol=1e-12),
        Entry("noisy_sgd(csr)", fe.noisy_sgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   sample_rate=0.5, data_norm=1.0, random_state=0),
              dict(X=_sparse_X(X0)), rtol=1e-12),
        # sample weights: hostile values are mapped into [0, weight_bound] (a finite fit), shapes named
        Entry("noisy_pgd(sample_weight)", fe.noisy_pgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   data_norm=1.0, random_state=0, sample_weight=SW0, weight_bound=2.0),
              dict(sample_weight=_arrays(SW0, ndim=1), weight_bound=pos())),
        Entry("noisy_gd(sample_weight)", fe.noisy_gd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   data_norm=1.0, random_state=0, sample_weight=SW0, weight_bound=2.0),
              dict(sample_weight=_arrays(SW0, ndim=1), weight_bound=pos())),
        Entry("noisy_sgd(sample_weight)", fe.noisy_sgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, delta=1e-5, steps=5,
                   sample_rate=0.5, data_norm=1.0, random_state=0, sample_weight=SW0, weight_bound=2.0),
              dict(sample_weight=_arrays(SW0, ndim=1), weight_bound=pos())),
        Entry("expmech_erm", fe.expmech_erm,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=ball, epsilon=1.0, data_norm=1.0, steps=3,
                   random_state=0),
              dict(loss=_loss(), X=_arrays(X0, ndim=2), y=_arrays(Y0, ndim=1), constraint=_constraint(),
                   epsilon=eps(), data_norm=pos(), steps=it(5), random_state=rs(),
                   directions=_choice(["mixed"]), beta=_delta())),
    ]
    # univariate
    for nm in ("median", "mean"):
        E.append(Entry(nm, getattr(fe, nm), dict(x=X1, bounds=(0.0, 1.0), epsilon=1.0, random_state=0),
                       dict(x=_arrays(X1, ndim=1), bounds=_bounds(), epsilon=eps(), random_state=rs())))
    E.append(Entry("median(rank)", fe.median, dict(x=X1, bounds=(0.0, 1.0), epsilon=1.0, method="rank",
                                                   random_state=0),
                   dict(x=_arrays(X1, ndim=1), method=_choice(["erm"]))))
    E.append(Entry("quantile", fe.quantile, dict(x=X1, q=0.3, bounds=(0.0, 1.0), epsilon=1.0, random_state=0),
                   dict(x=_arrays(X1, ndim=1), q=_scalar_bad() + [("neg", -0.1, None), ("big", 1.1, None)],
                        bounds=_bounds(), epsilon=eps())))
    # online
    E += [
        Entry("online.run_rwm", P.run_rwm, dict(loss_matrix=LM0, eta=0.5, random_state=0),
              dict(loss_matrix=_arrays(LM0, ndim=2), eta=pos(), random_state=rs())),
        Entry("online.RWM.update", _rwm_update, dict(n_experts=4, eta=0.5, random_state=0),
              dict(n_experts=it(4), eta=pos(), random_state=rs(), losses=_arrays(LM0[0, :4], ndim=1))),
        Entry("online.RWM.run", _ctor_then(P.RWM, "run", ("n_experts", "eta", "random_state")),
              dict(n_experts=4, eta=0.5, random_state=0, loss_matrix=LM0),
              dict(loss_matrix=_arrays(LM0, ndim=2))),
        Entry("online.PrivateRWM.run", _private_rwm_run,
              dict(n_experts=4, rounds=10, epsilon=1.0, delta=1e-5, random_state=0),
              dict(n_experts=it(4), rounds=it(10), epsilon=eps(), delta=dl(), random_state=rs(),
                   loss_range=_bounds(), loss_matrix=_arrays(LM0, ndim=2))),
        Entry("online.linear_learner", P.linear_learner, dict(S=LM0, epsilon=1.0, delta=1e-5, random_state=0),
              dict(S=_arrays(LM0, ndim=2), epsilon=eps(), delta=dl(), random_state=rs(),
                   calibration=_choice(["exact"]))),
        Entry("online.calibrate_eta", P.calibrate_eta, dict(epsilon=1.0, delta=1e-5, rounds=10),
              dict(epsilon=eps(), delta=dl(), rounds=it(10), loss_sensitivity=pos(),
                   calibration=_choice(["exact"]))),
        Entry("online.regret_bound", P.regret_bound, dict(eta=0.5, n_experts=4, rounds=10),
              dict(eta=pos(), n_experts=it(4), rounds=it(10), loss_range=_bounds()), inf_ok=True),
    ]
    # learning
    E += [
        Entry("learning.private_pac_learner", fe.learning.private_pac_learner,
              dict(predictions=PRED0, y=Y0, epsilon=1.0, random_state=0),
              dict(predictions=_arrays(PRED0, ndim=2), y=_arrays(Y0, ndim=1), epsilon=eps(), random_state=rs())),
        Entry("learning.SQOracle.query",
              _ctor_then(fe.learning.SQOracle, "query", ("X", "y", "epsilon", "delta", "max_queries",
                                                          "random_state"), phi=lambda X, y: y > 0),
              dict(X=X0, y=Y0, epsilon=1.0, delta=0.0, max_queries=3, random_state=0),
              dict(X=_arrays(X0, ndim=2), y=_arrays(Y0, ndim=1), epsilon=eps(), delta=dl(), max_queries=it(3),
                   random_state=rs(), phi=[("none", None, None), ("nan", lambda X, y: np.full(len(y), NAN), None),
                                           ("wrong-len", lambda X, y: np.zeros(2), None)])),
        Entry("learning.pac_learner_bound", fe.learning.pac_learner_bound,
              dict(n_hypotheses=4, n=10, epsilon=1.0, beta=0.05),
              dict(n_hypotheses=it(4), n=it(10), epsilon=eps(), beta=_delta()), inf_ok=True),
    ]
    # datasets (train_test_split only moves rows: NaN in, NaN out — its data
    # variants are the shape and type ones)
    shape_only = lambda vs: [v for v in vs if v[0] not in ("nan", "inf", "-inf", "huge", "-huge", "all-huge")]  # noqa: E731
    E += [
        Entry("datasets.scale_to_unit_ball", fe.datasets.scale_to_unit_ball,
              dict(X=X0, low=-np.ones(D), high=np.ones(D)),
              dict(X=_arrays(X0, ndim=2), low=_arrays(-np.ones(D), ndim=1), high=_arrays(np.ones(D), ndim=1)),
              aliases={"X": ["low"]}),
        Entry("datasets.train_test_split", fe.datasets.train_test_split, dict(X=X0, y=Y0, random_state=0),
              dict(X=shape_only(_arrays(X0, ndim=2)), y=shape_only(_arrays(Y0, ndim=1)),
                   test_size=_delta(), random_state=rs()), aliases={"X": ["y"], "y": ["X"]}),
        Entry("learning.private_pac_learner_from_callables", fe.learning.private_pac_learner_from_callables,
              dict(hypotheses=[lambda X: np.sign(X[:, 0]), lambda X: np.ones(len(X))], X=X0, y=Y0, epsilon=1.0,
                   random_state=0),
              dict(hypotheses=[("none", None, None), ("empty", [], None), ("str", "ab", None),
                               ("not-callable", [1, 2], None)],
                   # X only reaches the caller's own callables (their errors are theirs)
                   X=[v for v in _arrays(X0, ndim=2) if v[0] in ("none", "0d", "empty-rows", "fewer-rows")],
                   y=_arrays(Y0, ndim=1), epsilon=eps(), random_state=rs()),
              aliases={"y": ["labels"], "X": ["y"]}),
    ]
    # secure mode (fasterm.mechanisms.secure, the exact samplers of fasterm.mechanisms.noise, zCDP accounting)
    srs, gran, flag = _secure_random_state, _granularity, _secure_flag
    for nm, base, extra in [
            ("laplace", dict(value=V0, sensitivity=1.0, epsilon=1.0), dict(sensitivity=pos())),
            ("laplace_l2", dict(value=V0, l2_sensitivity=1.0, epsilon=1.0, delta=1e-5),
             dict(l2_sensitivity=pos(), delta=dl())),
            ("gaussian", dict(value=V0, l2_sensitivity=1.0, epsilon=1.0, delta=1e-5),
             dict(l2_sensitivity=pos(), delta=dl()))]:
        E.append(Entry(f"mechanisms.{nm}(secure)", getattr(fe.mechanisms, nm),
                       dict(base, secure=True, random_state=0),
                       dict(value=_arrays(V0, ndim=1), epsilon=eps(), granularity=gran(), random_state=srs(),
                            secure=flag(), **extra)))
        E.append(Entry(f"mechanisms.{nm}(granularity, not secure)", getattr(fe.mechanisms, nm),
                       dict(base, random_state=0),
                       dict(granularity=[("pow2", 2.0 ** -10, None), ("bad", 3.0, None)], secure=flag())))
    E.append(Entry("mechanisms.exponential(secure)", fe.mechanisms.exponential,
                   dict(scores=SC0, sensitivity=1.0, epsilon=1.0, secure=True, random_state=0),
                   dict(scores=_arrays(SC0, ndim=1), sensitivity=pos(), epsilon=eps(), granularity=gran(),
                        random_state=srs(), secure=flag(), monotonic=[("int", 1, None), ("str", "yes", None)])))
    E.append(Entry("learning.SQOracle.query(secure)",
                   _ctor_then(fe.learning.SQOracle, "query", ("X", "y", "epsilon", "delta", "max_queries",
                                                               "random_state", "secure"), phi=lambda X, y: y > 0),
                   dict(X=X0, y=Y0, epsilon=1.0, delta=0.0, max_queries=3, random_state=0, secure=True),
                   dict(X=_arrays(X0, ndim=2), y=_arrays(Y0, ndim=1), epsilon=eps(), delta=dl(), max_queries=it(3),
                        random_state=srs(), secure=flag(),
                        phi=[("none", None, None), ("nan", lambda X, y: np.full(len(y), NAN), None),
                             ("wrong-len", lambda X, y: np.zeros(2), None)])))
    E.append(Entry("mechanisms.exponential(granularity, not secure)", fe.mechanisms.exponential,
                   dict(scores=SC0, sensitivity=1.0, epsilon=1.0, random_state=0),
                   dict(granularity=[("pow2", 2.0 ** -10, None), ("bad", 3.0, None)], secure=flag())))
    E += [
        Entry("noise.discrete_laplace", fe.noise.discrete_laplace, dict(size=5, scale=2.5, random_state=0),
              dict(size=it(5), scale=pos() + [("fraction", Fraction(7, 3), None), ("neg-fraction", Fraction(-1, 2), None),
                                              ("big-int", 10 ** 30, None), ("2^60", 2.0 ** 60, None)],
                   random_state=srs())),
        Entry("noise.discrete_gaussian", fe.noise.discrete_gaussian, dict(size=5, sigma2=2.5, random_state=0),
              dict(size=it(5), sigma2=pos() + [("fraction", Fraction(7, 3), None), ("big-int", 10 ** 40, None),
                                               ("2^120", 2.0 ** 120, None)],
                   random_state=srs())),
        Entry("noise.bernoulli_exp", fe.noise.bernoulli_exp, dict(gamma=0.7, size=5, random_state=0),
              dict(gamma=_scalar_bad() + [("zero", 0.0, None), ("neg", -0.5, None), ("huge", 1e308, None),
                                          ("tiny", 5e-324, None), ("fraction", Fraction(4, 3), None),
                                          ("big-int", 10 ** 30, None), ("2^63", 2 ** 63, None)],
                   size=it(5), random_state=srs())),
        Entry("noise.OSRandom.integers", _os_integers, dict(low=0, high=10, size=5),
              dict(low=[("nan", NAN, None), ("frac", 2.5, None), ("str", "0", None), ("object", object(), None),
                        ("above", 11, None), ("huge", 2 ** 70, None), ("array", np.array([0, 1, 2, 3, 4]), None)],
                   high=[("nan", NAN, None), ("inf", INF, None), ("equal", 0, None), ("neg", -3, None),
                         ("str", "9", None), ("huge", 2 ** 70, None), ("2^63-1", 2 ** 63 - 1, None),
                         ("none", None, None), ("frac", 9.5, None)],
                   size=it(5) + [("tuple", (2, 3), None)]), reproducible=False),
        Entry("noise.OSRandom.randbits", lambda k: OSRandom().randbits(k), dict(k=64),
              dict(k=it(64) + [("big", 1000, None)]), reproducible=False),
        Entry("secure.OSRandom(noisy_pgd)", fe.noisy_pgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=fe.L2Ball(1.0, D), epsilon=1.0, delta=1e-5, steps=3,
                   data_norm=1.0, random_state=OSRandom(), secure=True),
              # OS entropy is not reproducible: no layout-equivalence comparison here
              dict(X=[v for v in _arrays(X0, ndim=2) if v[2] is None], epsilon=eps()), reproducible=False),
        Entry("set_secure", _set_secure, dict(flag=False), dict(flag=flag())),
        Entry("secure.set_secure", _set_secure, dict(flag=True), dict(flag=[("none", None, None), ("str", "1", None)])),
        Entry("secure_mode", _secure_mode_call, dict(flag=True),
              dict(flag=flag(), value=_arrays(V0, ndim=1))),
        Entry("secure.secure_mode", _secure_mode_call, dict(flag=False), dict(flag=[("none", None, None)])),
        Entry("secure.is_secure", lambda: fe.secure.is_secure(), {}, {}),
        Entry("secure.default_granularity", fe.secure.default_granularity, dict(sensitivity=1.0, dim=3, norm="l2"),
              dict(sensitivity=pos(), dim=it(3), norm=_choice(["l1"]))),
        Entry("accounting.zcdp_delta", R.zcdp_delta, dict(rho=0.1, epsilon=1.0),
              dict(rho=pos(), epsilon=eps())),
        Entry("accounting.zcdp_rho", R.zcdp_rho, dict(epsilon=1.0, delta=1e-5), dict(epsilon=eps(), delta=dl())),
        Entry("noisy_pgd(secure)", fe.noisy_pgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=fe.L2Ball(1.0, D), epsilon=1.0, delta=1e-5, steps=5,
                   data_norm=1.0, random_state=0, secure=True),
              dict(X=_arrays(X0, ndim=2), y=_arrays(Y0, ndim=1), epsilon=eps(), delta=dl(), steps=it(5),
                   noise=_choice(["laplace"]), calibration=_choice(["l2"]), data_norm=pos(), clip=pos(),
                   lr=pos(), granularity=gran(), random_state=srs(), secure=flag(),
                   client=[("object", object(), None), ("empty", "", None)])),
        Entry("noisy_pgd(secure, gaussian, squared)", fe.noisy_pgd,
              dict(loss=L.Squared(), X=X0, y=YR, constraint=fe.L2Ball(1.0, D), epsilon=1.0, delta=1e-5, steps=5,
                   noise="gaussian", data_norm=1.0, label_bound=1.0, random_state=0, secure=True),
              # (the data variants are those of noisy_pgd(secure): one loop for both noises)
              dict(y=_arrays(YR, ndim=1)[:6], epsilon=eps(), delta=dl(), label_bound=pos(),
                   granularity=gran(), random_state=srs())),
        Entry("noisy_pgd(client, numpy X)", fe.noisy_pgd,
              dict(loss=L.Logistic(), X=X0, y=Y0, constraint=fe.L2Ball(1.0, D), epsilon=1.0, delta=1e-5, steps=3,
                   data_norm=1.0, random_state=0),
              dict(client=[("object", object(), None), ("int", 3, None), ("empty", "", None), ("bytes", b"x", None),
                           ("unused-address", "tcp://127.0.0.1:1", None), ("list", ["tcp://a:1"], None)],
                   granularity=[("not-secure", 2.0 ** -10, None)])),
    ]
    # sufficient statistics perturbation (AdaSSP)
    ssp_base = dict(X=X0, y=YR, epsilon=1.0, delta=1e-5, data_norm=1.0, label_bound=1.0, random_state=0)
    E += [
        Entry("ssp.adassp", fe.ssp.adassp, ssp_base,
              dict(X=_arrays(X0, ndim=2), y=_arrays(YR, ndim=1), epsilon=eps(), delta=dl(), data_norm=pos(),
                   label_bound=pos(), weight_bound=pos(), rho=pos(), random_state=rs())),
        Entry("ssp.adassp(delta=0)", fe.ssp.adassp, dict(ssp_base, delta=0.0),
              dict(X=_arrays(X0, ndim=2), epsilon=eps(), data_norm=pos(), label_bound=pos())),
        Entry("ssp.adassp_scales", lambda **k: list(v for v in fe.ssp.adassp_scales(**k).values()
                                                    if not isinstance(v, str)),
              dict(epsilon=1.0, delta=1e-5, dim=3, data_norm=1.0, label_bound=1.0),
              dict(epsilon=eps(), delta=dl(), dim=it(3), data_norm=pos(), label_bound=pos(), weight_bound=pos())),
    ]
    # objective perturbation (pure ε)
    OP = fe.objpert

    def _objpert_loss(ctor, **kw):
        def call(**k):
            init = {p: k.pop(p) for p in list(k) if p in ("smoothness", "margin", "width", "l2")}
            return fe.objective_perturbation(ctor(**init), **{**kw, **k})
        return call

    op_base = dict(X=X0, y=Y0, epsilon=1.0, data_norm=1.0, random_state=0)
    op_params = dict(X=_arrays(X0, ndim=2), y=_arrays(Y0, ndim=1), epsilon=eps(), data_norm=pos(),
                     regularization=pos(), label_bound=pos(), random_state=rs(), secure=_secure_flag())
    E += [
        Entry("objective_perturbation", fe.objective_perturbation, dict(loss=OP.SmoothHinge(), **op_base),
              dict(loss=_loss() + [("hinge", L.Hinge(), None), ("squared", L.Squared(), None)], **op_params)),
        Entry("objpert.objective_perturbation(LogCosh)", fe.objective_perturbation,
              dict(op_base, loss=OP.LogCosh(), y=YR),
              dict(X=_arrays(X0, ndim=2), y=_arrays(YR, ndim=1), epsilon=eps(), label_bound=pos(),
                   regularization=pos())),
        Entry("objpert.SmoothHinge", _objpert_loss(OP.SmoothHinge), dict(op_base, smoothness=0.25, margin=1.0),
              dict(smoothness=pos(), margin=_scalar_bad(), l2=_scalar_bad() + [("neg", -1.0, None)])),
        Entry("objpert.LogCosh", _objpert_loss(OP.LogCosh), dict(op_base, y=YR, width=1.0),
              dict(width=pos(), l2=_scalar_bad() + [("neg", -1.0, None), ("huge", 1e308, None)])),
        Entry("objpert.private_threshold", OP.private_threshold,
              dict(scores=V0, y=Y0[:3], epsilon=1.0, bound=1.0, grid=8, random_state=0),
              dict(scores=_arrays(V0, ndim=1), y=_arrays(Y0[:3], ndim=1), epsilon=eps(), bound=pos(),
                   grid=it(8), random_state=rs())),
        Entry("objpert.default_regularization", OP.default_regularization,
              dict(epsilon=1.0, n=10, data_norm=1.0, curvature=1.0),
              dict(epsilon=eps(), n=it(10), data_norm=pos(), curvature=pos())),
        Entry("accounting.objpert_epsilon", R.objpert_epsilon,
              dict(noise_epsilon=0.9, curvature=1.0, n=100, regularization=0.1, output_epsilon=0.01),
              dict(noise_epsilon=eps(), curvature=_scalar_bad() + [("neg", -1.0, None), ("huge", 1e308, None)],
                   n=it(100), regularization=pos(), output_epsilon=_scalar_bad() + [("neg", -1.0, None)])),
        Entry("accounting.calibrate_objpert", R.calibrate_objpert,
              dict(epsilon=1.0, curvature=1.0, n=100, regularization=0.1, output_epsilon=0.01),
              dict(epsilon=eps(), curvature=_scalar_bad() + [("neg", -1.0, None), ("huge", 1e308, None)],
                   n=it(100), regularization=pos(), output_epsilon=_scalar_bad() + [("neg", -1.0, None)])),
        Entry("accounting.objpert_regularization", R.objpert_regularization,
              dict(epsilon=1.0, curvature=1.0, n=100, fraction=0.5),
              dict(epsilon=eps(), curvature=pos(), n=it(100), fraction=_delta())),
        Entry("accounting.norm_laplace_scale", R.norm_laplace_scale, dict(l2_sensitivity=1.0, epsilon=1.0),
              dict(l2_sensitivity=pos(), epsilon=eps())),
    ]
    # empirical privacy audit (fasterm.audit)
    import fasterm.audit  # noqa: F401 - not imported by fasterm itself (it needs scipy)
    ra = np.random.default_rng(1)
    A0, B0 = ra.laplace(0.0, 1.0, 40), ra.laplace(1.0, 1.0, 40)
    OUT0 = ra.normal(size=(8, 3))
    E += [
        Entry("audit.clopper_pearson", fe.audit.clopper_pearson, dict(k=3, n=10, confidence=0.95),
              dict(k=_scalar_bad() + [("neg", -1, None), ("above-n", 11, None), ("frac", 2.5, None),
                                      ("array-bad", np.array([1, 2, 11]), None), ("empty", np.zeros(0), None),
                                      ("array", np.array([0, 3, 10]), None), ("2d", np.array([[1, 2]]), None)],
                   n=it(10) + [("huge", 10 ** 30, None)],
                   confidence=_delta() + [("half", 0.5, None)])),
        Entry("audit.epsilon_lower_bound", _audit_call,
              dict(outputs_d=A0, outputs_dprime=B0, delta=0.0),
              dict(outputs_d=_arrays(A0, ndim=1), outputs_dprime=_arrays(B0, ndim=1), delta=dl(),
                   confidence=_delta() + [("half", 0.5, None), ("low", 0.2, None)], n_thresholds=it(400),
                   thresholds=[("empty", np.zeros(0), None), ("nan", np.array([0.5, NAN]), None),
                               ("2d", np.zeros((2, 2)), None), ("str", "ab", None), ("object", object(), None),
                               ("list", [0.0, 0.5], None), ("huge", np.array([1e308]), None)],
                   sides=[("bad", "x", None), ("int", 5, None), ("none", None, None), ("empty", (), None),
                          ("list", [">"], None), ("dup", (">", ">"), None)],
                   directions=[("bad", ("DD",), None), ("int", 5, None), ("none", None, None), ("empty", (), None)]),
              aliases={"outputs_d": ["outputs_dprime"]},  # a length mismatch may be reported under either
              inf_ok=True),  # epsilon_lb = -inf: "no bound found", a truthful answer; NaN never
        Entry("audit.project", fe.audit.project, dict(outputs=OUT0, direction=V0),
              dict(outputs=_arrays(OUT0, ndim=2), direction=_arrays(V0, ndim=1) + [("zero", np.zeros(D), None)]),
              aliases={"outputs": ["direction"]}, inf_ok=True),  # a projection of 1e308s overflows (IEEE)
    ]
    # dask arrays (local threaded scheduler: few cases, each starts a small graph)
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover - dask is in the test extra
        da = None
    if da is not None:
        Xn = X0.copy()
        Xn[4, 1] = NAN
        Yn = Y0.copy()
        Yn[5] = NAN
        dX0 = da.from_array(X0, chunks=(3, D))
        E.append(Entry("noisy_pgd(dask)", fe.noisy_pgd,
                       dict(loss=L.Logistic(), X=dX0, y=Y0, constraint=fe.L2Ball(1.0, D), epsilon=1.0, delta=1e-5,
                            steps=3, data_norm=1.0, random_state=0),
                       dict(X=[("nan-chunk", da.from_array(Xn, chunks=(3, D)), None),
                               ("column-chunks", da.from_array(X0, chunks=(3, 1)), None),
                               ("empty", da.zeros((0, D), chunks=(1, D)), None),
                               ("1d", da.from_array(X0[0], chunks=2), None),
                               ("complex", da.from_array(X0.astype(complex), chunks=(3, D)), None),
                               ("unknown-chunks", dX0[dX0[:, 0] > -10.0], None),
                               ("int", da.from_array(np.round(X0 * 3).astype(np.int64), chunks=(3, D)),
                                np.round(X0 * 3)),
                               ("empty-chunk", da.concatenate([da.zeros((0, D), chunks=(1, D)), dX0]), X0),
                               ("one-chunk", da.from_array(X0, chunks=(N, D)), X0)],
                            y=[("short", da.from_array(Y0[:-1], chunks=3), None),
                               ("nan-chunk", da.from_array(Yn, chunks=3), None),
                               ("2d", da.from_array(Y0[:, None], chunks=(3, 1)), None),
                               ("str", da.from_array(Y0.astype(str), chunks=3), None),
                               ("none", None, None),
                               ("other-chunks", da.from_array(Y0, chunks=2), Y0)],
                            client=[("object", object(), None), ("int", 3, None), ("empty", "", None)],
                            secure=[("on", True, None)]),
                       rtol=1e-9))  # chunked sums: the same terms, another summation order
        E.append(Entry("DPLogisticRegression.fit(dask)", _estimator(fe.DPLogisticRegression, "fit"),
                       dict(X=dX0, y=Y0, random_state=0, steps=3),
                       dict(X=[("nan-chunk", da.from_array(Xn, chunks=(3, D)), None),
                               ("column-chunks", da.from_array(X0, chunks=(3, 1)), None)],
                            y=[("short", da.from_array(Y0[:-1], chunks=3), None),
                               ("nan-chunk", da.from_array(Yn, chunks=3), None)],
                            secure=[("on", True, None)]),
                       aliases={"X": ["array", "data"], "y": ["array", "labels", "classes"]}))
    # scikit-learn estimators
    try:
        import sklearn  # noqa: F401
    except ImportError:  # pragma: no cover - sklearn is in the test extra
        return E
    for cls, y in [(fe.DPLogisticRegression, Y0)]:  # the secure loop itself: noisy_pgd(secure) above
        E.append(Entry(f"{cls.__name__}.fit(secure)", _estimator(cls, "fit"),
                       dict(X=X0, y=y, random_state=0, steps=5, secure=True),
                       dict(X=_arrays(X0, ndim=2), y=_arrays(y, ndim=1),
                            epsilon=_not_spellings(eps(), "0d", reason=_SKLEARN_0D), random_state=_secure_random_state(),
                            secure=_secure_flag()),
                       aliases={"X": ["array", "data", "dim", "samples", "features"],
                                "y": ["array", "samples", "classes", "labels", "data"]}))
    for cls, y in [(fe.DPLogisticRegression, Y0), (fe.DPLinearRegression, YR)]:  # delta=0: objpert
        E.append(Entry(f"{cls.__name__}.fit(delta=0)", _estimator(cls, "fit"),
                       dict(X=X0, y=y, delta=0.0, random_state=0),
                       dict(X=_arrays(X0, ndim=2), y=_arrays(y, ndim=1),
                            epsilon=_not_spellings(eps(), "0d", reason=_SKLEARN_0D),
                            data_norm=_not_spellings(pos(), "0d", reason=_SKLEARN_0D),
                            random_state=rs(), solver=_choice(["objpert"])),
                       aliases={"X": ["array", "data", "dim", "samples", "features"],
                                "y": ["array", "samples", "classes", "labels", "data"]}))
    def _weighted_fit(cls):
        def call(X, y, sample_weight, **params):
            est = cls(**params).fit(X, y, sample_weight=sample_weight)
            return est.coef_, est.intercept_
        return call

    for cls, y in [(fe.DPLogisticRegression, Y0), (fe.DPLinearSVC, Y0), (fe.DPLinearRegression, YR)]:
        E.append(Entry(f"{cls.__name__}.fit(csr)", _estimator(cls, "fit"), dict(X=X0, y=y, random_state=0, steps=5),
                       dict(X=_sparse_X(X0, converted=True)), rtol=1e-12,
                       aliases={"X": ["array", "data", "dim", "samples", "features", "sparse"]}))
        E.append(Entry(f"{cls.__name__}.fit(sample_weight)", _weighted_fit(cls),
                       dict(X=X0, y=y, sample_weight=SW0, weight_bound=2.0, random_state=0, steps=5),
                       dict(sample_weight=_arrays(SW0, ndim=1),
                            weight_bound=_not_spellings(pos(), "0d", reason=_SKLEARN_0D))))
    for cls, y in [(fe.DPLogisticRegression, Y0), (fe.DPLinearSVC, Y0), (fe.DPLinearRegression, YR)]:
        for method in ("fit", "predict"):
            E.append(Entry(f"{cls.__name__}.{method}", _estimator(cls, method),
                           dict(X=X0, y=y, random_state=0, steps=5),
                           dict(X=_arrays(X0, ndim=2), y=_arrays(y, ndim=1),
                                epsilon=_not_spellings(eps(), "0d", reason=_SKLEARN_0D),
                                delta=_not_spellings(dl(), "0d", reason=_SKLEARN_0D),
                                data_norm=_not_spellings(pos(), "0d", reason=_SKLEARN_0D), random_state=rs(),
                                steps=_not_spellings(it(5), "0d", reason=_SKLEARN_0D),
                                solver=_choice(["auto"]),
                                **({"X_pred": _arrays(X0, ndim=2)} if method == "predict" else {})),
                           # scikit-learn's own input checks word their messages its way
                           aliases={"X_pred": ["X", "array", "data", "dim", "features"],
                                    "X": ["array", "data", "dim", "samples", "features"],
                                    "y": ["array", "samples", "classes", "labels", "data"]},
                           # predictions at 1e308 features overflow to inf (IEEE); BLAS may sum a
                           # non-contiguous X in another order (last-bit differences)
                           inf_ok=method == "predict", rtol=1e-12 if method == "predict" else 0.0))
    E.append(Entry("PrivateSearch.fit", _search_fit,
                   dict(X=X0, y=Y0, param_grid={"max_steps": [2, 3]}, epsilon=1.0, delta=1e-5, random_state=0),
                   dict(X=_arrays(X0, ndim=2), y=_arrays(Y0, ndim=1),
                        epsilon=_not_spellings(eps(), "0d", reason=_SKLEARN_0D),
                        delta=_not_spellings(dl(), "0d", "zero", "int0", reason=_SKLEARN_0D + "; delta=0 "
                                             "is refused (the search's accounting is Rényi DP)"),
                        random_state=[(lab, v, eq) for lab, v, eq in rs() if lab not in ("os", "OSRandom")]
                        + [("os", "os", None)],
                        param_grid=[("empty-list", [], None), ("scalar", {"alpha": 1.0}, None),
                                    ("str", "alpha", None), ("none", None, None), ("unknown", {"C": [1.0]}, None),
                                    ("reserved", {"epsilon": [1.0]}, None), ("laplace", {"noise": ["laplace"]}, None),
                                    ("nan", {"alpha": [NAN]}, None), ("object", object(), None)],
                        expected_runs=[("one", 1.0, None), ("nan", NAN, None), ("inf", INF, None),
                                       ("neg", -3.0, None), ("str", "3", None), ("huge", 1e30, None)],
                        eta=[("neg", -0.5, None), ("nan", NAN, None), ("inf", INF, None), ("str", "0", None)],
                        score_fraction=[("zero", 0.0, None), ("one", 1.0, None), ("nan", NAN, None)]),
                   aliases={"X": ["array", "data", "dim", "samples", "features"],
                            "y": ["array", "samples", "classes", "labels", "data"],
                            "param_grid": ["parameter", "C", "epsilon", "noise", "alpha", "Gaussian"],
                            "expected_runs": ["calibration", "gamma"]}))
    for cls in (fe.DPLogisticRegression, fe.DPLinearSVC):  # K > 2 classes: fasterm.linear_model._multiclass
        for method in ("fit", "predict"):
            E.append(Entry(f"{cls.__name__}.{method}(multiclass)", _estimator(cls, method),
                           dict(X=X0, y=Y3, random_state=0, steps=5),
                           dict(X=_arrays(X0, ndim=2), y=_arrays(Y3, ndim=1),
                                epsilon=_not_spellings(eps(), "0d", reason=_SKLEARN_0D),
                                delta=_not_spellings(dl(), "0d", reason=_SKLEARN_0D),
                                random_state=rs(), solver=_choice(["auto", "pgd"]),
                                classes=[("pair", [0.0, 1.0], None), ("one", [0.0], None),
                                         ("repeated", [0.0, 1.0, 0.0], None), ("2d", [[0.0, 1.0, 2.0]], None),
                                         ("empty", [], None), ("strings", ["a", "b", "c"], None),
                                         ("declared", [2.0, 0.0, 1.0], None)],
                                **({"X_pred": _arrays(X0, ndim=2)} if method == "predict" else {})),
                           aliases={"X_pred": ["X", "array", "data", "dim", "features"],
                                    "X": ["array", "data", "dim", "samples", "features"],
                                    "y": ["array", "samples", "classes", "labels", "data"]},
                           inf_ok=method == "predict", rtol=1e-12 if method == "predict" else 0.0))
    return E


ENTRIES = {e.name: e for e in _entries()}


# ---------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------
def _finite(r, path="result"):
    """Every number reachable in ``r`` is finite; returns the path of a non-finite one, or None."""
    if r is None or isinstance(r, (bool, str, np.bool_)):
        return None
    if isinstance(r, (int, np.integer)):
        return None
    if isinstance(r, (float, np.floating)):
        return None if math.isfinite(r) else path
    if isinstance(r, np.ndarray):
        if r.dtype.kind in "fc":
            return None if np.isfinite(r).all() else path
        return None
    if isinstance(r, (tuple, list)):
        for i, v in enumerate(r):
            bad = _finite(v, f"{path}[{i}]")
            if bad:
                return bad
        return None
    if dataclasses.is_dataclass(r):
        for f in dataclasses.fields(r):
            if f.name in ("info", "calibration", "note"):
                continue
            v = getattr(r, f.name)
            # +inf is a truthful value for a bound ("no useful bound") and for
            # the epsilon of the non-private pgd (no guarantee); NaN never is.
            if (f.name.endswith("bound") or f.name == "epsilon") and isinstance(v, float) and v == INF:
                continue
            bad = _finite(getattr(r, f.name), f"{path}.{f.name}")
            if bad:
                return bad
        return None
    if hasattr(r, "w"):
        return _finite(r.w, f"{path}.w")
    if hasattr(r, "actions"):
        return _finite(r.actions, f"{path}.actions")
    return None


def _flat_floats(r):
    if isinstance(r, (tuple, list)):
        return [x for v in r for x in _flat_floats(v)]
    try:
        return np.asarray(r, dtype=float).ravel().tolist()
    except (TypeError, ValueError):
        return []


def _equal(a, b, rtol=0.0):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        return a.shape == b.shape and (np.array_equal(a, b) or (rtol > 0 and np.allclose(a, b, rtol=rtol, atol=0)))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y, rtol) for x, y in zip(a, b))
    if dataclasses.is_dataclass(a):
        return _equal(getattr(a, "w", None), getattr(b, "w", None), rtol) if hasattr(a, "w") else \
            _equal(getattr(a, "actions", None), getattr(b, "actions", None), rtol)
    if isinstance(a, float) and isinstance(b, float):
        return a == b
    return a == b


def run_case(entry: Entry, param: str, value, equivalent) -> str | None:
    """None if the call behaves (error naming ``param`` or a finite, correct result), else a description."""
    kw = dict(entry.base)
    kw[param] = value
    words = [param] + entry.aliases.get(param, [])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = entry.call(**kw)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        if equivalent is not None:  # a valid spelling: it may raise only as its equivalent does
            kw[param] = equivalent
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    entry.call(**kw)
            except type(exc):
                pass
            except Exception as ref_exc:  # noqa: BLE001
                return f"raised {type(exc).__name__} where the equivalent raised {type(ref_exc).__name__}"
            else:
                return f"valid spelling rejected ({type(exc).__name__}: {msg[:150]})"
        if any(re.search(rf"(?<![A-Za-z_]){re.escape(w)}(?![A-Za-z_])", msg) for w in words):
            return None
        return f"{type(exc).__name__} not naming {param!r}: {msg[:200]}"
    except Exception as exc:  # noqa: BLE001 - anything else is a bug
        return f"unexpected {type(exc).__name__}: {str(exc)[:200]}"
    bad = _finite(result)
    if bad and not (entry.inf_ok and not np.isnan(np.asarray(_flat_floats(result))).any()):
        return f"non-finite {bad} returned"
    if equivalent is not None:
        kw[param] = equivalent
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = entry.call(**kw)
        if entry.reproducible and not _equal(result, ref, entry.rtol):
            return "result differs from the call on the equivalent float64 C-array"
    return None


def all_cases():
    for entry in ENTRIES.values():
        for param, values in entry.params.items():
            for label, value, equivalent in values:
                yield entry, param, label, value, equivalent


def _main():  # run by the subprocess smoke test: prints a JSON list of failures
    failures, count = [], 0
    for entry, param, label, value, equivalent in all_cases():
        count += 1
        problem = run_case(entry, param, value, equivalent)
        if problem:
            failures.append(f"{entry.name}({param}={label}): {problem}")
    print(json.dumps({"count": count, "failures": failures}))


_NOT_FUNCTIONS = {"OptimizeResult", "RWMCalibration", "RWMRun", "PrivateRWMRun", "LinearLearnerResult",
                  "BudgetExceededError", "Constraint", "ExpMechResult", "ObjPertResult", "DataWarning", "PrivacyWarning", "CostWarning",
                  "__version__"}


def test_catalogue_covers_fasterm_all():
    """Every callable in fasterm.__all__ and in its public modules' __all__ has an entry."""
    import types
    names = set(ENTRIES)
    missing = []
    for top in fe.__all__:
        obj = getattr(fe, top)
        if isinstance(obj, types.ModuleType):
            for fn in getattr(obj, "__all__", []):
                if fn in _NOT_FUNCTIONS or fn.isupper() or not callable(getattr(obj, fn)):
                    continue
                if not any(e == f"{top}.{fn}" or e.startswith(f"{top}.{fn}.") or e.startswith(f"{top}.{fn}(")
                           for e in names):
                    missing.append(f"{top}.{fn}")
        elif top not in _NOT_FUNCTIONS and not any(e == top or e.startswith(f"{top}.") or e.startswith(f"{top}(")
                                                   for e in names):
            missing.append(top)
    # load_breast_cancer takes no data; default_steps/utility_bound are helpers of expmech (not in __all__ paths)
    # show_config takes only an output stream (it prints the build record)
    assert set(missing) <= {"datasets.load_breast_cancer", "show_config"}, missing


def _has(module):
    import importlib.util
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def test_catalogue_covers_every_public_function():
    names = set(ENTRIES)
    for fn in ("noise.laplace", "noise.gaussian", "mechanisms.laplace", "mechanisms.laplace_l2",
               "mechanisms.gaussian", "mechanisms.exponential", "pgd", "noisy_pgd", "noisy_gd", "noisy_sgd",
               "expmech_erm", "median",
               "mean", "quantile", "online.run_rwm", "online.RWM.update", "online.PrivateRWM.run",
               "online.linear_learner", "learning.private_pac_learner", "learning.SQOracle.query",
               "L2Ball", "Box", "Simplex", "L1Ball", "losses.row_norms", "DPLogisticRegression.fit",
               "DPLinearSVC.predict", "DPLinearRegression.fit", "noisy_pgd(sample_weight)",
               "noisy_gd(sample_weight)", "noisy_sgd(sample_weight)", "DPLogisticRegression.fit(sample_weight)",
               "DPLinearSVC.fit(sample_weight)", "DPLinearRegression.fit(sample_weight)", "noisy_pgd(csr)",
               "noisy_gd(csr)", "noisy_sgd(csr)", "DPLogisticRegression.fit(csr)", "DPLinearSVC.fit(csr)",
               "DPLinearRegression.fit(csr)", "DPLogisticRegression.fit(multiclass)",
               "DPLinearSVC.predict(multiclass)", "PrivateSearch.fit",
               "accounting.private_search_epsilon", "accounting.calibrate_private_search"):
        assert fn in names
    for fn in fe.accounting.__all__:
        if fn not in ("BudgetExceededError", "BudgetAccountant"):
            assert f"accounting.{fn}" in names
    # secure mode, the exact samplers, the auditor (not imported by fasterm itself), dask input
    import fasterm.audit
    for mod, skip in [(fe.noise, ()), (fe.secure, ()), (fasterm.audit, ("AuditResult",))]:
        short = mod.__name__.split(".")[-1]
        for fn in mod.__all__:
            if fn not in skip:
                assert any(e == f"{short}.{fn}" or e.startswith((f"{short}.{fn}.", f"{short}.{fn}(")) for e in names), fn
    for fn in ("set_secure", "secure_mode", "mechanisms.laplace(secure)", "mechanisms.laplace_l2(secure)",
               "mechanisms.gaussian(secure)", "mechanisms.exponential(secure)", "noisy_pgd(secure)", "noisy_pgd(secure, gaussian, squared)",
               "DPLogisticRegression.fit(secure)", "noisy_pgd(client, numpy X)"):
        assert fn in names
    if _has("dask.array"):
        assert {"noisy_pgd(dask)", "DPLogisticRegression.fit(dask)"} <= names
    for lname in fe.losses.__all__:
        if lname != "row_norms":
            assert {f"losses.{lname}.{m}" for m in ("value", "grad", "grad_sum")} <= names


def test_runner_fails_a_valid_spelling_that_raises():
    """The runner itself: refusing an int 2, a numpy float32 or a 0-d array where the
    equivalent float is accepted is a failure, even with an error naming the parameter."""
    def picky(epsilon):
        if type(epsilon) is not float:
            raise TypeError(f"epsilon must be a float, got {type(epsilon).__name__}")
        return epsilon

    entry = Entry("picky", picky, dict(epsilon=1.0), dict(epsilon=_positive()))
    spellings = {lab: (v, eq) for lab, v, eq in _positive() if eq is not None}
    assert {"int", "f32", "0d"} <= set(spellings)
    for lab, (value, eq) in spellings.items():
        assert "valid spelling rejected" in run_case(entry, "epsilon", value, eq), lab
    assert run_case(entry, "epsilon", "1", None) is None  # a hostile value: the named error is right
    # and a valid spelling must give the equivalent's result
    assert "differs" in run_case(Entry("off", lambda epsilon: float(epsilon) + isinstance(epsilon, int), {}, {}),
                                 "epsilon", 2, 2.0)
    n_valid = sum(eq is not None for _, _, _, _, eq in all_cases())
    assert n_valid > 500, n_valid


def test_hostile_catalogue_in_subprocess():
    """Every (function, parameter, hostile value) of the catalogue, in a child process."""
    proc = subprocess.run([sys.executable, os.path.join(HERE, "test_hostile.py")], capture_output=True, text=True,
                          timeout=300, cwd=HERE)
    assert proc.returncode == 0, f"child died (signal/abort): rc={proc.returncode}\n{proc.stderr[-3000:]}"
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["count"] > 1000
    assert not report["failures"], "\n".join(report["failures"])


# ---------------------------------------------------------------------------
# Hypothesis: random hostile arrays and scalars, in-process
# ---------------------------------------------------------------------------
_ARRAY_PARAMS = {  # entry -> (parameter, ndim) whose arrays hypothesis draws
    "mechanisms.laplace": ("value", 1), "mechanisms.gaussian": ("value", 1),
    "mechanisms.exponential": ("scores", 1), "median": ("x", 1), "mean": ("x", 1), "quantile": ("x", 1),
    "L2Ball.project": ("v", 1), "Simplex.project": ("v", 1), "L1Ball.project": ("v", 1), "Box.project": ("v", 1),
    "losses.Logistic.grad_sum": ("X", 2), "losses.Squared.value": ("X", 2), "losses.Hinge.grad": ("X", 2),
    "noisy_pgd": ("X", 2), "noisy_gd": ("X", 2), "noisy_sgd": ("X", 2), "pgd": ("X", 2), "expmech_erm": ("X", 2), "online.run_rwm": ("loss_matrix", 2),
    "online.linear_learner": ("S", 2), "learning.private_pac_learner": ("predictions", 2),
    "online.PrivateRWM.run": ("loss_matrix", 2),
    "mechanisms.laplace(secure)": ("value", 1), "mechanisms.gaussian(secure)": ("value", 1),
    "mechanisms.exponential(secure)": ("scores", 1),
    "noisy_pgd(secure)": ("X", 2), "audit.epsilon_lower_bound": ("outputs_d", 1), "audit.project": ("outputs", 2),
    "objective_perturbation": ("X", 2),
}

_elements = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, 5e-324, 1.0, -1.0, 0.5]),
)
_dtypes = st.sampled_from([np.float64, np.float32, np.float16, np.int64, np.int8, np.bool_, np.complex128, object])


@st.composite
def _hostile_array(draw, ndim, like):
    shape = list(like.shape)
    if draw(st.booleans()):  # a random shape, often the wrong one
        shape = draw(st.lists(st.integers(0, 7), min_size=max(0, ndim - 1), max_size=ndim + 1))
    a = draw(hnp.arrays(np.float64, tuple(shape), elements=_elements))
    dt = draw(_dtypes)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = a.astype(dt) if dt is not object else a.astype(object)
    layout = draw(st.sampled_from(["c", "f", "nc", "ro"]))
    if layout == "f":
        a = np.asfortranarray(a)
    elif layout == "nc" and a.ndim >= 1:
        a = np.repeat(a, 2, axis=-1)[..., ::2]
    elif layout == "ro":
        a = a.copy()
        a.flags.writeable = False
    return a


@pytest.mark.parametrize("name", sorted(_ARRAY_PARAMS))
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_hypothesis_hostile_arrays(name, data):
    entry = ENTRIES[name]
    param, ndim = _ARRAY_PARAMS[name]
    a = data.draw(_hostile_array(ndim, np.asarray(entry.base.get(param, LM0))), label=param)
    problem = run_case(entry, param, a, None)
    assert problem is None, problem


_SCALAR_ENTRIES = [(n, p) for n, e in sorted(ENTRIES.items()) for p in e.params
                   if p in ("epsilon", "delta", "sensitivity", "l2_sensitivity", "radius", "data_norm", "scale",
                            "eta", "clip", "mu", "lr", "steps", "rounds", "dim", "size", "n_experts", "total",
                            "granularity", "sigma2", "gamma", "rho", "confidence")]


@pytest.mark.parametrize("name,param", _SCALAR_ENTRIES)
@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**70, 2**70),
                       st.sampled_from([3.5, -0.0, 1e-320, 1e308, True, "1", 1j, None])))
def test_hypothesis_hostile_scalars(name, param, value):
    entry = ENTRIES[name]
    if param in ("steps", "rounds", "dim", "size", "n_experts", "max_steps") and isinstance(value, int) \
            and not isinstance(value, bool) and value > 64:
        value = 64 + value % 7  # a huge count is a legitimate (slow) request, not a hostile one
    problem = run_case(entry, param, value, None)
    assert problem is None, problem


@pytest.mark.parametrize("mech", ["laplace", "laplace_l2", "gaussian"])
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(k=st.integers(-1074, 1023), value=hnp.arrays(np.float64, st.integers(1, 4),
                                                    elements=st.floats(-1e308, 1e308, allow_subnormal=True)),
       epsilon=st.sampled_from([1e-300, 1e-6, 0.5, 1.0, 1e6]), sens=st.sampled_from([5e-324, 1e-3, 1.0, 1e300]))
def test_hypothesis_secure_grid(mech, k, value, epsilon, sens):
    """Any power of two as granularity, any finite value: refused naming the parameters, or every
    release an exact multiple of the granularity (the secure-mode grid), finite."""
    g = math.ldexp(1.0, k)
    args = (value, sens, epsilon) if mech == "laplace" else (value, sens, epsilon, 1e-6)
    try:
        out = getattr(fe.mechanisms, mech)(*args, random_state=0, secure=True, granularity=g)
    except ValueError as exc:
        assert re.search(r"granularity|epsilon", str(exc)), str(exc)
        return
    assert np.isfinite(out).all()
    assert np.array_equal(out / g, np.round(out / g))


# ---------------------------------------------------------------------------
# The bugs this suite found, pinned down one by one
# ---------------------------------------------------------------------------
def test_zero_d_array_is_not_a_vector():
    with pytest.raises(ValueError, match=r"\bx\b.*dimension"):
        fe.median(np.array(0.5), (0.0, 1.0), 1.0)
    with pytest.raises(ValueError, match="scores"):
        fe.mechanisms.exponential(np.array(1.0), 1.0, 1.0)


def test_fractional_size_is_refused_not_truncated():
    for size in (3.5, (2, 3.5), "3", True):
        with pytest.raises(TypeError, match="size"):
            fe.noise.laplace(size)
    assert fe.noise.laplace(np.int64(3), random_state=0).shape == (3,)
    assert fe.noise.gaussian((2, np.int32(2)), random_state=0).shape == (2, 2)
    with pytest.raises(ValueError, match="scale"):
        fe.noise.laplace(3, 1e308)  # would overflow to ±inf


def test_row_norms_of_another_matrix_are_caught():
    loss = fe.losses.Logistic()
    good = fe.losses.row_norms(X0)
    np.testing.assert_array_equal(loss.grad_sum(V0, X0, Y0, clip=0.1, row_norms=good),
                                  loss.grad_sum(V0, X0, Y0, clip=0.1))
    with pytest.raises(ValueError, match="row_norms"):
        loss.grad_sum(V0, X0, Y0, clip=0.1, row_norms=good[::-1].copy())
    with pytest.raises(ValueError, match="row_norms"):
        loss.grad_sum(V0, X0, Y0, clip=0.1, row_norms=0.5 * good)


def test_absurd_bounds_name_the_callers_parameters():
    with pytest.raises(ValueError, match="epsilon"):
        fe.accounting.calibrate_laplace_l2(1.0, 3, 10, 1e-320, 1e-5)
    with pytest.raises(ValueError, match="l2_sensitivity"):
        fe.mechanisms.gaussian(1.0, 1e308, 1.0, 1e-5)
    with pytest.raises(ValueError, match="data_norm"):
        fe.noisy_pgd(fe.losses.Logistic(), X0, Y0, fe.L2Ball(1.0, D), 1.0, 1e-5, data_norm=1e308, steps=3)
    with pytest.raises(ValueError, match="epsilon"):
        fe.online.PrivateRWM(4, 10, 5e-324, 0.0)
    with pytest.raises(ValueError, match="data_norm"):
        fe.losses.Squared(label_bound=1.0).sensitivity(1e308, radius=1.0)
    # a subnormal delta is a valid (tiny) delta: ln(1/δ) is taken as -ln δ, without overflow
    eps, _ = fe.accounting.advanced_composition(0.1, 0.0, 10, 1e-320)
    assert math.isfinite(eps) and eps > 0


def test_overflowing_loss_sums_are_refused_and_rolled_back():
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(ValueError, match="loss_matrix"):
        fe.online.run_rwm(np.full((3, 2), 1e308), 0.5, random_state=rng)
    assert rng.bit_generator.state == before


def test_secure_mode_refuses_noise_beyond_the_grid():
    # a grid far finer than the sensitivity, or a tiny epsilon: the releases would sit on the
    # clamp ±2^53 grid units (an OverflowError before); refused, naming the caller's parameters
    with pytest.raises(ValueError, match="granularity"):
        fe.mechanisms.gaussian(V0, 1.0, 1.0, 1e-5, secure=True, granularity=2.0 ** -1000)
    with pytest.raises(ValueError, match="epsilon"):
        fe.mechanisms.laplace(V0, 1.0, 1e-300, secure=True)
    with pytest.raises(ValueError, match="granularity"):
        fe.noisy_pgd(fe.losses.Squared(), X0, YR, fe.L2Ball(1.0, D), 1.0, 1e-5, steps=3, noise="gaussian",
                     data_norm=1.0, label_bound=1.0, secure=True, granularity=2.0 ** -60)
    # the limit is 2^47 grid units: just inside it the release is on the grid and finite
    out = fe.mechanisms.laplace(V0, 1.0, 1.0, random_state=0, secure=True, granularity=2.0 ** -40)
    assert np.array_equal(out * 2.0 ** 40, np.round(out * 2.0 ** 40)) and np.abs(out - V0).max() < 1e3
    # a subnormal sensitivity gets the finest default grid instead of an error
    assert np.isfinite(fe.mechanisms.gaussian(V0, 5e-324, 1.0, 1e-5, random_state=0, secure=True)).all()
    with pytest.raises(ValueError, match="dim"):
        fe.secure.default_granularity(1.0, 0)


def test_discrete_samplers_refuse_scales_beyond_int64():
    with pytest.raises(ValueError, match="scale"):
        fe.noise.discrete_laplace(3, 1e308, random_state=0)
    with pytest.raises(ValueError, match="sigma2"):
        fe.noise.discrete_gaussian(3, 10 ** 40, random_state=0)
    assert fe.noise.discrete_laplace(3, 2.0 ** 56, random_state=0).dtype == np.int64
    assert fe.accounting.zcdp_delta(1e308, 1.0) == 1.0  # was an OverflowError in exp


def test_os_random_names_its_arguments():
    r = OSRandom()
    for kw, word in [(dict(low=NAN, high=3), "low"), (dict(low=0, high=2 ** 70), "high"),
                     (dict(low=0, high=3, size=-1), "size"), (dict(low=0, high=3, size=2.5), "size"),
                     (dict(low=-(2 ** 63), high=2 ** 63 - 1), "high")]:
        with pytest.raises((ValueError, TypeError), match=word):
            r.integers(**kw)
    v = r.integers(0, 3, size=(2, 4))
    assert v.shape == (2, 4) and ((v >= 0) & (v < 3)).all()
    with pytest.raises(TypeError, match=r"\bk\b"):
        r.randbits(2.5)
    assert 0 <= r.randbits(np.int32(64)) < 2 ** 64


def test_malformed_scheduler_address_names_client():
    da = pytest.importorskip("dask.array")
    pytest.importorskip("distributed")
    X = da.from_array(X0, chunks=(3, D))
    for address in ("nonsense", "foo://bar:1", "tcp://host-without-port"):
        with pytest.raises(ValueError, match="client"):
            fe.noisy_pgd(fe.losses.Logistic(), X, Y0, fe.L2Ball(1.0, D), 1.0, 1e-5, steps=3, data_norm=1.0,
                         client=address)


def test_pgd_on_all_zero_float32_data_is_finite():
    r = fe.pgd(fe.losses.Logistic(), np.zeros((6, 3), np.float32), Y0.astype(np.float32), fe.L2Ball(1.0, 3), 5)
    assert np.isfinite(r.w).all() and np.isfinite(r.lr)


if __name__ == "__main__":
    _main()
