"""Attack 3 of issue 26 as a test: noisy_sgd(neighbors="add_remove") must use no private count.

Under add/remove neighbours the number of rows n is private.  The old code divided the gradient
sum by q·n and derived q (512/n) and T (epochs/q) from n; with D = n zero rows and D′ = D plus one
zero row every gradient is 0, so the released w is the noise alone, scaled by 1/(q·n): a threshold
on ‖w‖² told D from D′ in 120 of 120 fits at ε = 1.  Now q and the divisor m (``batch_size``) are
the caller's public numbers; these tests run the same attack through fasterm.audit (a
Clopper–Pearson lower bound on ε, selection and evaluation on disjoint halves) and check it stays
within the claimed (ε, δ); a power check shows the same attack catches the old divisor; and every
released field other than w is bit-identical across neighbours and across seeds.
"""
import dataclasses
import math

import numpy as np
import pytest
import scipy.sparse as sp

import fasterm as fe
from fasterm import audit

EPS, DELTA = 1.0, 1e-5
D_ATTACK = 1000          # many coordinates: ‖w‖² concentrates, so a 10% change of scale is plain
N_ZERO = 10              # |D| = 10 zero rows, |D′| = 11
Q = 0.5
RUNS = 300               # per data set; audit selects on the first half, evaluates on the second


def _zero_fit(n_rows, seed, batch_size):
    X = np.zeros((n_rows, D_ATTACK))
    y = np.ones(n_rows)
    r = fe.noisy_sgd(fe.losses.Logistic(), X, y, fe.L2Ball(1e6, D_ATTACK), EPS, DELTA, sample_rate=Q,
                     batch_size=batch_size, data_norm=1.0, lr=1.0, neighbors="add_remove", random_state=seed)
    return float(r.w @ r.w)


def _norms(n_rows, seeds, batch_size):
    return np.array([_zero_fit(n_rows, s, batch_size) for s in seeds])


def test_zero_row_attack_stays_within_epsilon():
    # Disjoint seeds for D and D′ (independent runs, as the audit's binomial bounds assume).
    m = Q * N_ZERO  # the caller's public divisor: the same for D and D′
    a = _norms(N_ZERO, range(RUNS), m)
    b = _norms(N_ZERO + 1, range(RUNS, 2 * RUNS), m)
    res = audit.epsilon_lower_bound(a, b, delta=DELTA)
    assert res.epsilon_lb <= EPS, res
    # the best threshold's true-positive rate is within e^ε·FPR + δ (its Clopper–Pearson bounds)
    assert res.p_num_lower <= math.exp(EPS) * res.p_den_upper + DELTA, res


def test_zero_row_attack_catches_the_old_divisor():
    # Power: the same attack against what the old code released — divisor q·|D| for D and
    # q·|D′| for D′ — finds ε well above the claimed 1.  (So the test above can fail.)
    a = _norms(N_ZERO, range(RUNS), Q * N_ZERO)
    b = _norms(N_ZERO + 1, range(RUNS, 2 * RUNS), Q * (N_ZERO + 1))
    res = audit.epsilon_lower_bound(a, b, delta=DELTA)
    assert res.epsilon_lb > 2 * EPS, res


def _bits(v):
    """A hashable, bit-exact spelling of a released value (floats by their bytes)."""
    if isinstance(v, dict):
        return tuple(sorted((k, _bits(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_bits(x) for x in v)
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, (float, np.floating)):
        return ("float", np.float64(v).tobytes())
    if isinstance(v, (bool, int, np.integer, str)) or v is None:
        return (type(v).__name__, v)
    raise TypeError(f"unexpected released type {type(v).__name__}")  # a new kind of field: look at it


def _public(r):
    """Every released field except the private output w, walked (not listed by name)."""
    out = {f.name: _bits(getattr(r, f.name)) for f in dataclasses.fields(r) if f.name != "w"}
    assert "info" in out
    return out


def _data(n, d, rng):
    X = rng.normal(size=(n, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    return X, np.where(rng.random(n) < 0.5, -1.0, 1.0)


CASES = {
    "last": dict(),
    "average": dict(output="average"),
    "steps": dict(steps=7),
    "epochs": dict(epochs=3.0),
    "clip": dict(clip=0.5),
    "weights": dict(weights=True, weight_bound=2.0),
    "csr": dict(csr=True),
}


# (float32 X is refused under add/remove: the float margin's proof needs equal batch sizes;
# tests/erm/test_float_edge.py::test_add_remove_refuses_float32.)
@pytest.mark.parametrize("case", sorted(CASES))
def test_add_remove_public_fields_identical_across_neighbours_and_seeds(case):
    kw = dict(CASES[case])
    dtype, csr, weighted = kw.pop("dtype", np.float64), kw.pop("csr", False), kw.pop("weights", False)
    rng = np.random.default_rng(7)
    n, d = 60, 5
    X, y = _data(n + 1, d, rng)
    sw = rng.uniform(0.0, 2.0, n + 1)
    fits = {}
    for rows in (n, n + 1):  # D, and D′ = D plus one row
        for seed in (0, 1):
            Xr = X[:rows].astype(dtype)
            if csr:
                Xr = sp.csr_matrix(Xr)
            extra = dict(sample_weight=sw[:rows]) if weighted else {}
            fits[rows, seed] = fe.noisy_sgd(
                fe.losses.Logistic(l2=0.1), Xr, y[:rows], fe.L2Ball(2.0, d), EPS, DELTA, sample_rate=0.2,
                batch_size=12.0, data_norm=1.0, neighbors="add_remove", random_state=seed, **extra, **kw)
    ref = _public(fits[n, 0])
    for key, r in fits.items():
        assert _public(r) == ref, key
        assert "n" not in r.info and r.info["batch_size"] == 12.0 and r.info["sample_rate"] == 0.2
        assert r.utility_bound is None and r.info["surrogate_utility_bound"] is None
    # the output itself does move (the comparison above is not vacuous)
    assert not np.array_equal(fits[n, 0].w, fits[n, 1].w)
    assert not np.array_equal(fits[n, 0].w, fits[n + 1, 0].w)


def test_add_remove_refuses_what_needs_n():
    X, y = _data(30, 3, np.random.default_rng(0))
    args = (fe.losses.Logistic(), X, y, fe.L2Ball(1.0, 3), EPS, DELTA)
    common = dict(data_norm=1.0, neighbors="add_remove", random_state=0)
    with pytest.raises(ValueError, match="sample_rate"):      # default q = 512/n
        fe.noisy_sgd(*args, **common)
    with pytest.raises(ValueError, match="sample_rate"):      # q = batch_size/n
        fe.noisy_sgd(*args, batch_size=8.0, **common)
    with pytest.raises(ValueError, match="batch_size"):       # divisor q·n
        fe.noisy_sgd(*args, sample_rate=0.2, **common)
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="batch_size"):
            fe.noisy_sgd(*args, sample_rate=0.2, batch_size=bad, **common)
    # replace-one keeps its rules: q or batch_size, not both; n is public there
    with pytest.raises(ValueError, match="not both"):
        fe.noisy_sgd(*args, sample_rate=0.2, batch_size=8.0, data_norm=1.0)
    r = fe.noisy_sgd(*args, sample_rate=0.2, data_norm=1.0, random_state=0)
    assert r.info["n"] == 30 and "batch_size" not in r.info


def test_add_remove_divides_by_the_given_batch_size():
    # q = 1 and one step: every row is in the batch, so w = Π(w0 − η(Σ g_i + z)/m) with the
    # same z for any m (one seed).  Two divisors: the step (w − w0) scales exactly as 1/m.
    X, y = _data(20, 4, np.random.default_rng(3))
    big = fe.L2Ball(1e6, 4)
    w = {m: fe.noisy_sgd(fe.losses.Logistic(), X, y, big, EPS, DELTA, steps=1, sample_rate=1.0, batch_size=m,
                         data_norm=1.0, lr=1.0, neighbors="add_remove", random_state=5).w for m in (4.0, 8.0)}
    np.testing.assert_allclose(w[4.0], 2.0 * w[8.0], rtol=1e-12)
