"""The one clip of Poisson-subsampled noisy SGD (``_float_margin.run_clip``, ``batch_cap``,
``binom_tail_bound``, ``sgd_delta``; docs/guarantees.rst, "The margin of Poisson-subsampled SGD").

* ``sum_theta_upto`` bounds the kernel's θ(m) for every m ≤ M (the rounding counts of every plan,
  enumerated in integers);
* the one-sided bound ‖Ṽ(B′ ∪ {x}) − Ṽ(B′)‖ ≤ s·G, checked in exact rationals on the computed
  releases (the compiled sum, the scale and the regulariser's shift in the data's dtype, as
  ``_engine.descend`` forms them) of adversarial batches of m − 1 and m ≤ M rows, float32 and
  float64 — and the same hunt finds a violation with the former per-size clips c/(1 + Θ(m));
* the binomial tail bound against scipy's survival function (above it, and not absurdly loose);
* the δ split: δ_fit + η_max ≤ δ exactly, the fit's σ calibrated for δ_fit, the reported δ the
  requested one, and the cap's tail within η_max.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import sparse, stats

import fasterm as fe
from fasterm import accounting
from fasterm.erm import _float_margin as fm
from fasterm.erm import _losses
from fasterm.erm.losses import row_norms


def _k_of(kernel, m, d, itemsize, f32):
    _, r, K = fm.plan(m, d, itemsize)
    if kernel == "dense":
        return r // 4 + K if f32 else r // 4 + K + 5
    return r + K


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("d", [1, 7, 101, 650, 70_000])
def test_sum_theta_upto_bounds_every_size(dtype, d):
    """θ grows with the rounding count k (f fixed per kernel and dtype); the largest k(m) over
    every m ≤ M, enumerated, is within the bound's — and the bound is attained or nearly."""
    dt = np.dtype(dtype)
    f32 = dt == np.float32
    for M in (1, 3, 130, 4097, 40_000, 150_000):
        for kernel in ("dense", "csr"):
            kmax = max(_k_of(kernel, m, d, dt.itemsize, f32) for m in range(1, M + 1))
            exact = max(fm.sum_theta(kernel, dtype, m, d) for m in {1, M} | {
                m for m in range(1, M + 1) if _k_of(kernel, m, d, dt.itemsize, f32) == kmax})
            up = fm.sum_theta_upto(kernel, dtype, M, d)
            assert up >= exact
            assert up <= exact * 3 + Fraction(1, 2 ** 40), (kernel, M)  # not absurdly loose
        assert fm.sum_theta_upto("any", dtype, M, d) == max(fm.sum_theta_upto("dense", dtype, M, d),
                                                            fm.sum_theta_upto("csr", dtype, M, d))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("reg, radius", [(0.0, 0.0), (1e-3, 2.0), (0.3, 40.0)])
def test_run_clip_is_the_one_sided_formula(dtype, reg, radius):
    c, d, scale, bound = 0.6, 9, 1.0 / 300.0, 1.2
    v = fm.unit_roundoff(dtype)
    g3 = fm.gamma(3, v)
    for M in (1, 17, 300, 5000):
        th = fm.sum_theta_upto("any", dtype, M, d)
        t1 = M * (th + g3 * (1 + th)) + (M * v * (1 + g3) * (1 + th) if reg > 0 else 0)
        tau = v * (1 + v) ** 2 * Fraction(reg) * 2 * Fraction(radius) / (Fraction(scale) * Fraction(bound))
        exact = Fraction(c) * (1 - 2 * tau) / (1 + 2 * t1)
        got = fm.run_clip(c, dtype, M, d, scale=scale, bound=bound, reg=reg, radius=radius)
        assert Fraction(got) <= exact < Fraction(math.nextafter(got, 1.0))
        # the one-sided bound s·B·c*(1 + 2Θ₁) + 2·s·G·τ ≤ s·G (B = bound/c)
        B = Fraction(bound) / Fraction(c)
        assert B * Fraction(got) * (1 + 2 * t1) + 2 * Fraction(bound) * tau <= Fraction(bound)
    assert fm.run_clip(0.0, dtype, 10, d, scale=scale, bound=0.0) == 0.0


# ---------------------------------------------------------------------------------------------
# The one-sided bound on computed releases.

def _release(rows, clip, dtype, scale, reg, point):
    """Ṽ = fl(fl(Ŝ·s) + fl(ρ·y)) in the data's dtype: the compiled clipped sum of the Linear loss
    (gradient x), then what _engine.descend does (grad *= scale; shift = y·ρ; g + shift)."""
    X = np.ascontiguousarray(rows, dtype=dtype)
    out = np.empty(X.shape[1], dtype=dtype)
    if X.shape[0] == 0:
        out.fill(0)
    else:
        _losses.grad_sum(_losses.LINEAR, X, None, point, row_norms(X), 0.0, clip, np.inf, out, 2)
    out *= scale
    if reg:
        out += np.multiply(point, reg)
    return out


def _sq(a, b) -> Fraction:
    return sum((Fraction(float(x)) - Fraction(float(y))) ** 2 for x, y in zip(a, b))


def _one_sided_pairs(dtype, rng, m, c):
    """(B′ of m − 1 rows, x): rows at the clip in one direction (a swamped running sum), x against
    them or with them, at or a hair below the clip."""
    eps = float(np.finfo(dtype).eps)
    base = np.full((m - 1, 1), c, dtype=dtype)
    for t in range(12):
        a = float(np.asarray(c * (1 - eps * rng.integers(0, 8)) if t % 2 else rng.uniform(c * (1 - 1e-4), c),
                             dtype=dtype))
        yield base, np.array([[a if t % 4 < 2 else -a]], dtype=dtype)


def _hunt(dtype, clip_of, c, s, reg, point, sizes, seed=3):
    """The largest ‖Ṽ(B′ ∪ {x}) − Ṽ(B′)‖² / (s·c)² found (exact), batches of m − 1 and m rows."""
    rng = np.random.default_rng(seed)
    worst = Fraction(0)
    G = Fraction(s) * Fraction(c)
    for m in sizes:
        for Bp, x in _one_sided_pairs(dtype, rng, m, c):
            V1 = _release(np.vstack([Bp, x]), clip_of(m), dtype, s, reg, point)
            V0 = _release(Bp, clip_of(m - 1), dtype, s, reg, point)
            worst = max(worst, _sq(V1, V0) / (G * G))
    return worst


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("reg", [0.0, 1e-3])
def test_one_sided_bound_holds_on_adversarial_batches(dtype, reg):
    c, q, steps = 0.75, 0.9, 3
    R = 2.0
    for n in (4097, 20_000):
        s = 1.0 / (q * n)
        cap = fm.batch_cap(n, q, steps, 1.0, 1e-5 * fm.ETA_SHARE)
        assert q * n < cap <= n
        clip = fm.run_clip(c, dtype, cap, 1, scale=s, bound=c, reg=reg, radius=R)
        point = np.array([R], dtype=dtype)
        worst = _hunt(dtype, lambda m: clip, c, s, reg, point, (cap, cap - 1, int(q * n), 2))
        assert worst <= 1


def test_the_per_size_table_breaks_the_one_sided_bound():
    """Power: the former clips c/(1 + Θ(m)), one per batch size (two-sided margins), let a batch
    and the same batch plus one row differ by more than s·G in float32."""
    c, n, q = 0.75, 4097, 0.9
    s = 1.0 / (q * n)
    point = np.zeros(1, dtype=np.float32)

    def per_size(m):
        return fm.effective_clip(c, fm.margin("any", np.float32, m, 1, scale=s, bound=c))

    worst = _hunt(np.float32, per_size, c, s, 0.0, point, range(3000, 4097, 97))
    assert worst > 1


# ---------------------------------------------------------------------------------------------
# The cap and the δ split.

@pytest.mark.parametrize("n, q", [(100, 0.3), (4097, 0.9), (60_000, 0.01), (10 ** 6, 5e-4), (500, 0.999)])
def test_binomial_tail_bound_is_above_scipy_and_tight_enough(n, q):
    mean = n * q
    ks = sorted({int(mean + z * math.sqrt(n * q * (1 - q))) for z in (0.0, 1.0, 3.0, 6.0, 10.0, 14.0)} | {n - 1})
    for k in ks:
        if k < 0 or k >= n:
            continue
        exact = float(stats.binom.sf(k, n, q))  # P[X > k]
        bound = fm.binom_tail_bound(n, q, k)
        assert bound >= exact * (1 - 1e-9)
        if 1e-300 < exact < 1e-3:  # Chernoff: within a factor ~√(var) of the tail, nowhere near 1
            assert bound <= exact * 50 * math.sqrt(n * q * (1 - q) + 1), (k, exact, bound)
    assert fm.binom_tail_bound(n, q, n) == 0.0
    assert fm.binom_tail_bound(n, q, int(mean) - 1) == 1.0


@pytest.mark.parametrize("n, q, steps, eps", [(4097, 0.9, 3, 1.0), (60_000, 0.01, 300, 1.0),
                                              (10 ** 6, 5e-4, 4000, 8.0), (50, 0.5, 10, 0.1)])
def test_batch_cap_is_the_smallest_within_eta(n, q, steps, eps):
    eta = 1e-5 * fm.ETA_SHARE
    M = fm.batch_cap(n, q, steps, eps, eta)
    f = (1 + math.exp(eps)) * steps
    assert M == n or f * fm.binom_tail_bound(n, q, M) <= eta
    assert M <= math.ceil(n * q) or f * fm.binom_tail_bound(n, q, M - 1) > eta
    # the exact tail at M is within η (so the bound is an upper bound here too), and M is not far
    # above the exact smallest cap (scipy's survival function)
    assert f * stats.binom.sf(M, n, q) <= eta
    exact_M = math.ceil(n * q)
    while f * stats.binom.sf(exact_M, n, q) > eta:
        exact_M += 1
    assert exact_M <= M <= exact_M + 3 * math.sqrt(n * q * (1 - q)) + 3


@pytest.mark.parametrize("delta", [1e-5, 3e-7, 0.1, 1e-300, 5e-324 * 2 ** 30])
def test_sgd_delta_split_is_exact(delta):
    fit, eta = fm.sgd_delta(delta)
    assert eta == delta * 2.0 ** -20 and Fraction(eta) == Fraction(delta) / 2 ** 20
    assert Fraction(fit) + Fraction(eta) <= Fraction(delta)
    assert Fraction(math.nextafter(fit, 1.0)) + Fraction(eta) > Fraction(delta)  # the largest such
    assert 0 < fit < delta


@pytest.mark.parametrize("neighbors", ["replace_one", "add_remove"])
def test_fit_reports_the_requested_delta_and_calibrates_for_delta_fit(neighbors):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4)) / 3.0
    y = np.where(X @ np.ones(4) > 0, 1.0, -1.0)
    eps, delta, q = 1.0, 1e-5, 0.02
    kw = dict(sample_rate=q, epochs=2.0, data_norm=1.0, random_state=1, neighbors=neighbors)
    if neighbors == "add_remove":
        kw["batch_size"] = 60.0
    r = fe.noisy_sgd(fe.losses.Logistic(), X, y, fe.L2Ball(2.0, 4), eps, delta, **kw)
    fit, eta = fm.sgd_delta(delta)
    assert r.delta == delta
    assert r.info["noise_multiplier"] == accounting.calibrate_sgd_sigma(q, r.steps, eps, fit, neighbors)
    assert accounting.sgd_epsilon(q, r.info["noise_multiplier"], r.steps, fit, neighbors) <= eps
    # δ_fit + (1 + e^ε)·T·P[a batch above the cap] ≤ δ, exactly
    n_pub = 3000 if neighbors == "replace_one" else fe.erm.solvers.SGD_ADD_REMOVE_ROOM * math.ceil(60.0 / q) + 1
    M = fm.batch_cap(n_pub, q, r.steps, eps, eta)
    tail = Fraction((1 + math.exp(eps)) * r.steps) * Fraction(fm.binom_tail_bound(n_pub, q, M))
    assert Fraction(fit) + tail * (1 + Fraction(1, 10 ** 12)) <= Fraction(delta)


@pytest.mark.parametrize("compiled", [True, False])
# a few of the Gaussian rows lie beyond data_norm (the fit warns before it refuses clip): not tested here
@pytest.mark.filterwarnings("ignore:.*have a norm above data_norm:fasterm.DataWarning")
def test_a_clip_that_rounds_to_zero_is_refused(compiled, monkeypatch):
    """A subnormal clip: the run's clip with its margin rounds to 0, which the kernels read as "no
    clipping" (before 0.3 the run went on unclipped with a sensitivity of 5e-324); now ValueError
    naming clip, before any kernel runs, on both paths (binary and multiclass)."""
    from fasterm.erm import _sgdrun, solvers
    from fasterm.linear_model import _mcrun
    monkeypatch.setattr(_sgdrun, "COMPILED", compiled)
    monkeypatch.setattr(_mcrun, "COMPILED", compiled)
    calls = []
    monkeypatch.setattr(solvers, "_grad_sum_kernel", lambda *a, **k: calls.append(1))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) / 3.0
    with pytest.raises(ValueError, match="clip="):
        fe.noisy_sgd(fe.losses.Logistic(), X, np.sign(X[:, 0]), fe.L2Ball(1.0, 3), 1.0, 1e-5, data_norm=1.0,
                     clip=5e-324, lr=1.0, steps=3, random_state=0)
    with pytest.raises(ValueError, match=r"(?<![A-Za-z_])clip(?![A-Za-z_])"):
        fe.DPLogisticRegression(epsilon=1.0, clip=5e-324, solver="noisy_sgd", steps=3, random_state=0).fit(
            X, rng.integers(0, 3, 300))
    assert calls == []


def test_add_remove_bound_on_n_must_be_representable():
    X = np.random.default_rng(0).normal(size=(100, 3)) / 3.0
    with pytest.raises(ValueError, match="batch_size"):
        fe.noisy_sgd(fe.losses.Logistic(), X, np.sign(X[:, 0]), fe.L2Ball(1.0, 3), 1.0, 1e-5, data_norm=1.0,
                     sample_rate=0.1, batch_size=1e308, neighbors="add_remove")


@pytest.mark.parametrize("compiled", [True, False])
def test_add_remove_refuses_data_sets_beyond_its_domain(compiled, monkeypatch):
    """Under add/remove the batch-size cap, and so the one clip, is computed from the public bound
    N = 64·⌈m/q⌉ on n: a data set of more rows has batches above the cap its clip was made for
    (Theorem "capped batches" then no longer bounds their probability).  The mechanism's domain is
    n ≤ N: N rows are fitted, N + 1 refused (ValueError naming N and its formula) before any kernel runs."""
    from fasterm.erm import _sgdrun, solvers
    monkeypatch.setattr(_sgdrun, "COMPILED", compiled)
    q, m = 0.25, 2.5
    N = solvers.SGD_ADD_REMOVE_ROOM * math.ceil(m / q)
    assert N == 640
    rng = np.random.default_rng(3)
    X = rng.normal(size=(N + 1, 3)) / 3.0
    y = np.sign(X[:, 0])
    kw = dict(data_norm=1.0, sample_rate=q, batch_size=m, neighbors="add_remove", steps=3, random_state=0)
    r = fe.noisy_sgd(fe.losses.Logistic(), X[:N], y[:N], fe.L2Ball(1.0, 3), 1.0, 1e-5, **kw)
    assert np.isfinite(r.w).all() and "n" not in r.info
    calls = []
    monkeypatch.setattr(solvers, "_grad_sum_kernel", lambda *a, **k: calls.append(1))
    monkeypatch.setattr(_sgdrun, "run", lambda *a, **k: calls.append(1))
    for A in (X, sparse.csr_matrix(X)):
        with pytest.raises(ValueError, match=r"add_remove.* at most 64·⌈batch_size/sample_rate⌉ = 640 rows"):
            fe.noisy_sgd(fe.losses.Logistic(), A, y, fe.L2Ball(1.0, 3), 1.0, 1e-5, **kw)
    assert calls == []
