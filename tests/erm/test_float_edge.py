"""The floating-point edge of the sensitivities (docs/guarantees.rst, "Floating point").

(a) The per-example gradient the kernels sum is the exact vector T(a)·x of the
    coefficient a as rounded to the data's dtype T and the row x as stored.
    After clipping at c its *exact* norm must be ≤ c (≤ c·w with a sample
    weight w ≤ 1), and a row scaled to the data norm X must have exact norm
    ≤ X — not just its computed norm.  The hunt below reads T(a) bit-exactly
    from the kernels (a row whose marker entry is a power of two: the product
    T(a)·2^k and every sum with zeros are exact) and checks ‖T(a)·x‖² ≤ c² in
    rational arithmetic, over random and adversarial rows, float32 and
    float64, dense and CSR.  The same hunt run on the coefficient of the
    former code, T(fl(c/N)) with N the kernel's computed norm, finds
    violations: it has the power to fail.

(b) The rounding error of the gradient sum, ‖fl(Σ g_i) − Σ g_i‖ with Σ g_i
    summed exactly, against the bound stated in docs/guarantees.rst for each
    kernel (dense/CSR × float32/float64), on adversarial data.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")

from fasterm.erm import _losses, _sparse  # noqa: E402

def exact_sq(x) -> Fraction:
    """Σ x_j² of a float vector, exactly (integers scaled by a common power of two)."""
    x = np.asarray(x, dtype=np.float64)
    x = x[x != 0]
    if x.size == 0:
        return Fraction(0)
    mant, expo = np.frexp(x)  # x = mant · 2^expo, mant·2^53 an integer
    ints = [int(m * 2.0 ** 53) for m in mant]
    e = [int(v) - 53 for v in expo]
    lo = min(e)
    total = sum(m * m << (2 * (ei - lo)) for m, ei in zip(ints, e))
    return Fraction(total) * Fraction(2) ** (2 * lo)


def _row(rng, dtype, kind):
    """A row of d values of dtype whose entry 0 is a power of two (the marker)."""
    d = int(rng.choice([1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 31, 64, 100, 257]))
    if kind == "gauss":
        body = rng.standard_normal(d) * 10.0 ** rng.uniform(-3, 3)
    elif kind == "equal":  # ‖x‖ = |v| √d: irrational, every square the same
        body = np.full(d, rng.uniform(0.1, 10.0))
    elif kind == "spread":  # one large entry and many small ones (their squares round away)
        body = rng.standard_normal(d) * 1e-5
        body[rng.integers(d)] = rng.uniform(1, 100)
    elif kind == "huge":  # float64: the squares overflow, norm_finish's rescaled path
        body = rng.standard_normal(d) * 1e160 if dtype == np.float64 else rng.standard_normal(d) * 1e18
    else:  # "fullmant": entries with every mantissa bit set
        body = (1.0 + rng.uniform(0, 1, d)) * 2.0 ** rng.integers(-4, 5, d)
    body = body.astype(dtype)
    top = float(np.max(np.abs(body))) if d else 1.0
    marker = 2.0 ** math.floor(math.log2(top)) if top > 0 else 1.0
    x = np.concatenate([[marker], body]).astype(dtype)
    return x


KINDS = ["gauss", "equal", "spread", "huge", "fullmant"]


def _norm(x):
    out = np.empty(1)
    _losses.row_norms(np.ascontiguousarray(x[None]), out, 1)
    return float(out[0])


def _bounds_for(rng, N):
    """Clip values around and below the computed norm N: clipped rows and the boundary."""
    out = [N * rng.uniform(0.02, 0.98)]
    out += [N * (1.0 + k * 2.0 ** -52) for k in range(-6, 7)]
    return out


def _coef_dense(x, c, dn):
    """T(a) of the Linear loss (φ' = 1) on the row x, from grad_matrix: column 0 / the marker."""
    G = np.empty((1, x.shape[0]), dtype=x.dtype)
    _losses.grad_matrix(_losses.LINEAR, x[None], None, np.zeros_like(x), None, dn, c, math.inf, G, 1)
    return float(G[0, 0]) / float(x[0])


def _coef_sum(x, c, dn, weight, sparse):
    """T(weight·T(a)) from a one-row gradient sum (dense kernel or CSR kernel)."""
    out = np.empty(x.shape[0], dtype=x.dtype)
    wts = None if weight is None else np.array([weight])
    w = np.zeros_like(x)
    if sparse:
        A = sp.csr_matrix(x[None])
        A.sum_duplicates()
        _sparse.grad_sum(_losses.LINEAR, A.data, A.indices, A.indptr, x.shape[0], None, w, None, dn, c,
                         math.inf, out, 1, wts)
    else:
        _losses.grad_sum(_losses.LINEAR, x[None], None, w, None, dn, c, math.inf, out, 1, wts)
    return float(out[0]) / float(x[0])


def _hunt(dtype, mode, trials, seed, coef_of):
    """Rows and bounds; returns the violations of ‖T(a) x‖ ≤ bound · weight (exact)."""
    rng = np.random.default_rng(seed)
    bad = []
    for t in range(trials):
        x = _row(rng, dtype, KINDS[t % len(KINDS)])
        N = _norm(x)
        weight = None
        if mode == "weighted":
            weight = float(rng.choice([1.0, np.nextafter(1.0, 0.0), rng.uniform(0.5, 1.0)]))
        for b in _bounds_for(rng, N):
            c, dn = (0.0, b) if mode == "data_norm" else (b, 0.0)
            coef = coef_of(x, c, dn, weight, N)
            lhs = Fraction(coef) ** 2 * exact_sq(x)
            rhs = (Fraction(b) * Fraction(1.0 if weight is None else weight)) ** 2
            if lhs > rhs:
                bad.append((t, float(lhs / rhs) - 1.0))
    return bad


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("mode", ["clip", "data_norm", "weighted", "csr", "csr_weighted"])
def test_clipped_gradient_exact_norm_within_bound(dtype, mode):
    """‖T(a)·x‖ ≤ c (c·w weighted; ≤ X for a row scaled to the data norm X), exactly."""
    def kernel(x, c, dn, weight, N):
        if mode == "clip" or mode == "data_norm":
            return _coef_dense(x, c, dn)
        return _coef_sum(x, c, dn, weight, sparse=mode.startswith("csr"))

    m = "weighted" if mode.endswith("weighted") else ("data_norm" if mode == "data_norm" else "clip")
    bad = _hunt(dtype, m, 300, seed=11, coef_of=kernel)
    assert not bad, f"{len(bad)} violations, worst relative excess {max(e for _, e in bad):.3g}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_hunt_finds_violations_of_the_naive_clip(dtype):
    """The hunt's power: the clip of the former kernels, T(fl(c / N)) when the computed
    norm N exceeds c, else 1, exceeds c in exact arithmetic on many of the same rows."""
    def naive(x, c, dn, weight, N):
        b = c if c > 0 else dn
        return float(np.asarray(b / N if N > b else 1.0, dtype=dtype))

    bad = _hunt(dtype, "clip", 300, seed=11, coef_of=naive)
    assert len(bad) >= 20


# ---------------------------------------------------------------------------
# (b) The rounding error of the gradient sum
# ---------------------------------------------------------------------------

def plan(n, d, itemsize):
    """make_plan of losses.hpp: (block, chunk rows r, chunks K)."""
    row_bytes = max(d * itemsize, 1)
    block = min(max(4096 // row_bytes, 4), 64) & ~3
    max_chunks = min(max((1 << 22) // max(d, 1), 1), 64)
    chunk = max(-(-(1 << 20) // row_bytes), -(-n // max_chunks))
    chunk = -(-chunk // block) * block
    return block, min(chunk, n), max(-(-n // chunk), 1)


def gamma(m, u):
    return m * u / (1 - m * u)


def theta(kernel, dtype, n, d) -> Fraction:
    """The bound of docs/guarantees.rst: |fl(S)_j − S_j| ≤ θ Σ_i |g_ij|.

    θ' = (1 + γ^T_f)(1 + γ_m) − 1 for at most f roundings in float32 (the dense float32
    kernel's scratch row: f = 21) and m in double, then θ = θ' + u_T (1 + θ') for the
    output's rounding to T."""
    _, r, K = plan(n, d, np.dtype(dtype).itemsize)
    f32 = np.dtype(dtype) == np.float32
    u, uT = Fraction(1, 2 ** 53), (Fraction(1, 2 ** 24) if f32 else Fraction(0))
    if kernel == "dense":
        f, m = (21, r // 4 + K) if f32 else (0, r // 4 + K + 5)
    else:
        f, m = 0, r + K
    t = (1 + gamma(f, uT)) * (1 + gamma(m, u)) - 1
    return t + uT * (1 + t)


def _dyadic(v):
    num, den = float(v).as_integer_ratio()
    return num, den.bit_length() - 1


def exact_column_sums(coef, X):
    """(S_j, Σ_i |g_ij|) for g_i = coef_i · x_i, exactly (dyadic integers), as Fractions."""
    n, d = X.shape
    cs = [_dyadic(c) for c in coef]
    S, A = [], []
    for j in range(d):
        terms = []
        for (cn, ck), x in zip(cs, X[:, j]):
            xn, xk = _dyadic(x)
            terms.append((cn * xn, ck + xk))
        top = max(k for _, k in terms)
        s = sum(t << (top - k) for t, k in terms)
        a = sum(abs(t) << (top - k) for t, k in terms)
        S.append(Fraction(s, 2 ** top))
        A.append(Fraction(a, 2 ** top))
    return S, A


def _kernel_sum(X, weights, sparse, n_threads=2):
    """The Linear loss's gradient sum (coefficient 1, so g_i = T(weight_i) · x_i), no clip."""
    d = X.shape[1]
    out = np.empty(d, dtype=X.dtype)
    w = np.zeros(d, dtype=X.dtype)
    if sparse:
        A = sp.csr_matrix(X)
        _sparse.grad_sum(_losses.LINEAR, A.data, A.indices, A.indptr, d, None, w, None, 0.0, 0.0, math.inf, out,
                         n_threads, weights)
    else:
        _losses.grad_sum(_losses.LINEAR, X, None, w, None, 0.0, 0.0, math.inf, out, n_threads, weights)
    return out


def _data(kind, dtype, rng):
    """Data sets that make the rounding of the sum large next to Σ|g_ij|."""
    if kind == "swamp":  # a large row, then rows below half an ulp of the running sum
        n, d = 70_000, 3
        tiny = 0.24 * (2.0 ** -24 if dtype == np.float32 else 2.0 ** -53)  # four of them < half an ulp of 1
        X = np.full((n, d), tiny)
        X[::64] = 1.0  # at the start of every 64-row block of the former float scratch row
        X[:, 2] *= -1.0
        weights = np.ones(n)
    elif kind == "cancel":  # alternating large terms: S small, Σ|g| large
        n, d = 5_000, 5
        X = rng.standard_normal((n, d)) * 1e3
        X[1::2] = -X[::2] * (1 + rng.standard_normal((n // 2, d)) * 1e-7)
        weights = rng.uniform(0.5, 1.0, n)
    else:  # "random": full mantissas, weights that round the products
        n, d = 3_000, 9
        X = rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-3, 3, (n, 1))
        weights = rng.uniform(0.0, 1.0, n)
    return X.astype(dtype), weights


@pytest.mark.parametrize("kernel", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("kind", ["swamp", "cancel", "random"])
def test_gradient_sum_rounding_within_stated_bound(kernel, dtype, kind):
    """|fl(S)_j − S_j| ≤ θ Σ_i |g_ij| for every column j, S summed exactly (docs/guarantees.rst)."""
    X, weights = _data(kind, dtype, np.random.default_rng(3))
    coef = np.asarray(weights, dtype=dtype)  # T(1 · weight): the kernel's weighted coefficient
    got = _kernel_sum(X, weights, kernel == "csr")
    S, A = exact_column_sums(coef, X)
    th = theta(kernel, dtype, *X.shape)
    for j in range(X.shape[1]):
        assert abs(Fraction(float(got[j])) - S[j]) <= th * A[j], (j, float(got[j]), float(S[j]))


@pytest.mark.parametrize("kernel", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_neighbouring_sums_differ_by_more_than_exact_but_within_bound(kernel, dtype):
    """Casacuberta et al. (2022): rounding makes fl(S(D)) − fl(S(D')) exceed S(D) − S(D') on some
    neighbours (here found), never by more than θ (Σ‖g_i(D)‖ + Σ‖g_i(D')‖), the stated bound."""
    rng = np.random.default_rng(4)
    c = 0.75
    n = 4097
    base = np.full((n, 1), c, dtype=dtype)
    th = theta(kernel, dtype, n, 1)
    worst = Fraction(0)
    for _ in range(150):
        a, b = (np.asarray(rng.uniform(-c, c, 2), dtype=dtype))
        D, D2 = base.copy(), base.copy()
        D[-1, 0], D2[-1, 0] = a, b
        got = abs(Fraction(float(_kernel_sum(D, None, kernel == "csr")[0]))
                  - Fraction(float(_kernel_sum(D2, None, kernel == "csr")[0])))
        exact = abs(Fraction(float(a)) - Fraction(float(b)))
        mass = (n - 1) * 2 * Fraction(c) + abs(Fraction(float(a))) + abs(Fraction(float(b)))
        assert got <= exact + th * mass
        worst = max(worst, got - exact)
    assert worst > 0  # the effect is real: the computed difference exceeds the exact one


# ---------------------------------------------------------------------------
# (a) for the multiclass kernel (fasterm.linear_model._multiclass.grad_sum, the compiled erm._mclosses)
# ---------------------------------------------------------------------------

def _scores_gradient(kind, Z, y):
    """The K-vector u_i of each row's gradient a_i u_iᵀ from its scores Z (float64): where the
    clip binds, c near ‖a_i‖·‖u_i‖."""
    rows = np.arange(Z.shape[0])
    if kind == "logistic":
        Z = np.exp(Z - Z.max(axis=1, keepdims=True))
        Z /= Z.sum(axis=1, keepdims=True)
        Z[rows, y] -= 1.0
        return Z
    S = Z + 1.0
    S[rows, y] = Z[rows, y]
    j = S.argmax(axis=1)
    U = np.zeros_like(Z)
    active = j != y
    U[rows[active], j[active]] = 1.0
    U[rows[active], y[active]] = -1.0
    return U


def _multiclass_hunt(dtype, sparse, weighted, trials, seed):
    """Violations of ‖a ⊗ u′‖_F ≤ c·w, u′ the scaled scores gradient as grad_sum forms it."""
    from fasterm.linear_model import _multiclass
    from fasterm.losses import row_norms

    rng = np.random.default_rng(seed)
    bad = []
    for t in range(trials):
        x = _row(rng, dtype, KINDS[t % len(KINDS)])
        if KINDS[t % len(KINDS)] == "huge":
            x = x / np.asarray(2.0 ** 400 if dtype == np.float64 else 2.0 ** 40, dtype=dtype)
        p, K = x.shape[0], int(rng.integers(2, 7))
        kind = "logistic" if t % 2 else "hinge"
        A = x[None].copy()
        W = (rng.standard_normal((p, K)) / max(float(np.abs(x).max()), 1e-30)).astype(dtype)
        y = rng.integers(0, K, 1)
        if sparse:
            A = sp.csr_matrix(A)
            norms = row_norms(A)
        else:
            norms = np.sqrt(np.einsum("ij,ij->i", A, A, dtype=np.float64))
        U = _scores_gradient(kind, np.asarray(A @ W, dtype=np.float64), y)
        g = float(norms[0] * np.sqrt(np.einsum("ij,ij->i", U, U, dtype=np.float64))[0])
        weight = float(rng.uniform(0.5, 1.0)) if weighted else None
        wts = None if weight is None else np.array([weight])
        for c in [g * rng.uniform(0.05, 0.95)] + [g * (1.0 + k * 2.0 ** -52) for k in range(-6, 7)]:
            if not c > 0:
                continue
            out = np.empty((p, K), dtype=dtype)
            _multiclass.grad_sum(kind, A, y, W.copy(), norms, c, out, wts)
            u = [Fraction(float(v)) / Fraction(float(x[0])) for v in out[0]]
            lhs = sum(v * v for v in u) * exact_sq(x)
            rhs = (Fraction(c) * Fraction(1.0 if weight is None else weight)) ** 2
            if lhs > rhs:
                bad.append((t, float(lhs / rhs) - 1.0))
    return bad


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_multiclass_clipped_gradient_exact_norm_within_bound(dtype, sparse, weighted):
    bad = _multiclass_hunt(dtype, sparse, weighted, 120, seed=21)
    assert not bad, f"{len(bad)} violations, worst relative excess {max(e for _, e in bad):.3g}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_multiclass_hunt_finds_violations_of_the_naive_clip(dtype, monkeypatch):
    """The same hunt with the clip at c itself (the former code) finds violations."""
    from fasterm.linear_model import _multiclass

    monkeypatch.setattr(_multiclass, "inner_clip", lambda clip, p, K, dt: clip)
    assert len(_multiclass_hunt(dtype, False, False, 120, seed=21)) >= 10


# ---------------------------------------------------------------------------
# (c) The margin: the released pre-noise vector moves by at most the REPORTED sensitivity
# ---------------------------------------------------------------------------
# The kernels clip at c/(1 + Θ) (fasterm.erm._float_margin); docs/guarantees.rst proves
# ‖V(D) − V(D′)‖ ≤ 2·c·s for the computed pre-noise vector V = fl(fl(Ŝ·s) + fl(ρ·y)).

def margin_formula(kernel, dtype, m, d, scale, bound, reg=0.0, radius=0.0, momentum=False) -> Fraction:
    """Θ written out from docs/guarantees.rst, independently of fasterm.erm._float_margin."""
    v = Fraction(1, 2 ** 24) if np.dtype(dtype) == np.float32 else Fraction(1, 2 ** 53)
    if kernel == "any":
        th = max(theta("dense", dtype, m, d), theta("csr", dtype, m, d))
    else:
        th = theta(kernel, dtype, m, d)
    if np.dtype(dtype) == np.float64:
        th = th  # theta() adds no output rounding for float64 (u_T = 0 there)
    g3 = 3 * v / (1 - 3 * v)
    t1 = m * (th + g3 * (1 + th))
    tau = Fraction(0)
    if reg > 0:
        t1 += m * v * (1 + g3) * (1 + th)
        tau = v * (1 + v) ** 2 * Fraction(reg) * (4 if momentum else 2) * Fraction(radius) / (
            Fraction(scale) * Fraction(bound))
    return (1 + t1) / (1 - tau) - 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("kernel", ["dense", "csr", "any"])
def test_margin_is_the_proved_one(dtype, kernel):
    from fasterm.erm import _float_margin
    for m, d in ((1, 1), (57, 9), (4097, 1), (10_000, 100), (160_000, 100), (1_000_000, 30)):
        for scale, reg, radius, mom in ((1.0 / m, 0.0, 0.0, False), (1.0 / (2 * m), 1e-3, 3.0, False),
                                        (1.0 / m, 1e-4, 10.0, True)):
            got = _float_margin.margin(kernel, dtype, m, d, scale=scale, bound=0.75, reg=reg, radius=radius,
                                       momentum=mom)
            assert got == margin_formula(kernel, dtype, m, d, scale, 0.75, reg, radius, mom)
            c = _float_margin.effective_clip(0.75, got)
            assert Fraction(c) * (1 + got) <= Fraction(0.75) < Fraction(math.nextafter(c, 1.0)) * (1 + got)
    # the multiclass order-free bound and the dask bound
    from fasterm.linear_model import _multiclass
    u = Fraction(1, 2 ** 53)
    for n in (10, 5000):
        g = n * u / (1 - n * u)
        want = g + Fraction(1, 2 ** 24) * (1 + g) if dtype == np.float32 else g
        assert _multiclass.sum_theta(n, dtype) == want
    chunks = (700, 13, 587, 700)
    tk = max(theta("dense", dtype, r, 4) for r in chunks)
    t = (1 + tk) * (1 + 3 * u / (1 - 3 * u)) - 1
    want = t + Fraction(1, 2 ** 24) * (1 + t) if dtype == np.float32 else t
    assert _float_margin.dask_sum_theta(dtype, chunks, 4) == want


class _Recorder:
    """Swaps the float noise backend for one that records the pre-noise vector of each release."""

    def __init__(self, monkeypatch):
        from fasterm.erm import _backends
        log = self.log = []

        class Recording(_backends.FloatNoise):
            def fused(self, dtype):  # descend(): the fused loop's arithmetic (test_optimize checks it)
                return None

            def release(self, g, shift):
                v = g.copy()
                if shift is not None:
                    v += shift
                log.append(v.astype(np.float64).ravel())
                return super().release(g, shift)

        monkeypatch.setattr(_backends, "FloatNoise", Recording)


def _exact_sq_diff(a, b) -> Fraction:
    return sum((Fraction(float(x)) - Fraction(float(y))) ** 2 for x, y in zip(a, b))


def _release_pair(path, D, D2, dtype, c, monkeypatch, reg=0.0):
    """(V(D), V(D′), the reported sensitivity of the released average, as an exact number)."""
    import fasterm as fe
    rec = _Recorder(monkeypatch)
    n, d = D.shape
    centre = np.linspace(-0.3, 0.3, d)
    C = fe.L2Ball(2.0, d, center=centre)
    out = []
    for X in (D, D2):
        X = sp.csr_matrix(X) if path == "csr" else X
        kw = dict(data_norm=1.0, clip=c, random_state=0, steps=1)
        loss = fe.losses.Linear(l2=reg)
        if path in ("dense", "csr"):
            r = fe.noisy_pgd(loss, X, None, C, 1.0, 1e-5, noise="gaussian", lr=1e-3, average=False, **kw)
            sens = Fraction(2) * Fraction(c) / n
        elif path == "gd":
            r = fe.noisy_gd(fe.losses.Squared(label_bound=1.0, l2=reg), X, np.zeros(n, dtype=dtype), C, 1.0, 1e-5,
                            lr=1e-3, **kw)
            sens = Fraction(2) * Fraction(c) / n
        else:  # minibatch SGD at q = 1: every row in the batch, m = n
            r = fe.noisy_sgd(loss, X, None, C, 1.0, 1e-5, sample_rate=1.0, lr=1e-3, **kw)
            sens = Fraction(2) * Fraction(c) / n
        assert r.sensitivity == float(sens) or path == "sgd"
        out.append(rec.log[-1])
    return out[0], out[1], sens


def _adversarial_pairs(dtype, rng, n, c):
    """Neighbours D, D′ (replace the last row): n − 1 rows at the clip c (a swamped running
    sum), the last row ±(c − tiny) in each — the exact difference is within 10⁻⁴ of 2c, and the
    rounding of the total (a float32 ulp of n·c is ~10⁻⁴ of 2c at n = 4097) pushes it beyond."""
    base = np.full((n, 1), c, dtype=dtype)
    eps = float(np.finfo(dtype).eps)
    for t in range(40):
        if t % 2:  # float64 needs both rows within a few ulps of c
            a, b = np.asarray(c * (1 - eps * rng.integers(0, 8, 2)), dtype=dtype)
        else:
            a, b = np.asarray(rng.uniform(c * (1 - 1e-4), c, 2), dtype=dtype)
        D, D2 = base.copy(), base.copy()
        D[-1, 0], D2[-1, 0] = a, -b
        yield D, D2


_PATHS = ["dense", "csr", "gd", "sgd"]


@pytest.mark.parametrize("path", _PATHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_released_difference_within_reported_sensitivity(path, dtype, monkeypatch):
    """‖V(D) − V(D′)‖² ≤ sens² exactly (rationals), V the computed pre-noise vector, over
    adversarial neighbours; the regulariser's shift included (a centred ball, w₀ ≠ 0)."""
    rng = np.random.default_rng(11)
    c = 0.75
    for n in (4097, 4099, 20_000, 33_333):
        for reg in (0.0, 1e-3):
            for D, D2 in itertools.islice(_adversarial_pairs(dtype, rng, n, c), 20 if reg else 40):
                V, V2, sens = _release_pair(path, D, D2, dtype, c, monkeypatch, reg)
                assert _exact_sq_diff(V, V2) <= sens * sens


def _hunt_violation(path, dtype, monkeypatch, n_values=(4097, 4099, 20_000, 33_333)):
    rng = np.random.default_rng(5)
    c = 0.75
    for n in n_values:
        for D, D2 in _adversarial_pairs(dtype, rng, n, c):
            V, V2, sens = _release_pair(path, D, D2, dtype, c, monkeypatch)
            if _exact_sq_diff(V, V2) > sens * sens:
                return True
    return False


@pytest.mark.parametrize("path", ["dense", "csr", "sgd"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_without_the_margin_the_hunt_finds_a_violation(path, dtype, monkeypatch):
    """Power: clipping at c itself (Θ = 0), the same search finds neighbours whose computed
    pre-noise vectors differ by more than the reported sensitivity, in float32 and float64."""
    from fasterm.erm import _float_margin
    monkeypatch.setattr(_float_margin, "effective_clip", lambda c, theta: float(c))
    # the cached clip of a release (its cache may hold the margin's clip from an earlier test)
    monkeypatch.setattr(_float_margin, "release_clip", lambda kernel, dtype, m, d, c, *a, **k: float(c))
    # (minibatch SGD's one clip per run, its one-sided margin: Θ = 0 here too)
    monkeypatch.setattr(_float_margin, "run_clip", lambda c, *a, **k: float(c))
    assert _hunt_violation(path, dtype, monkeypatch)


def test_multiclass_released_difference_within_reported_sensitivity(monkeypatch):
    """The multiclass path (the compiled kernel, summed in double with the order-free
    bound): ‖V(D) − V(D′)‖_F ≤ the reported sensitivity, exactly, on swamped neighbours."""
    import fasterm as fe
    rng = np.random.default_rng(2)
    for dtype in (np.float32, np.float64):
        for sparse in (False, True):
            n, d = 3001, 2
            X = np.tile(np.array([[0.6, 0.0]]), (n, 1)).astype(dtype)
            y = np.repeat([0, 1, 2], n // 3 + 1)[:n]
            X2, y2 = X.copy(), y.copy()
            X2[-1] = np.asarray(rng.uniform(-0.6, 0.6, d), dtype=dtype)
            y2[-1] = (y[-1] + 1) % 3
            logs = []
            for A, labels in ((X, y), (X2, y2)):
                rec = _Recorder(monkeypatch)
                m = fe.DPLogisticRegression(epsilon=1.0, steps=1, random_state=0, solver="noisy_pgd")
                m.fit(sp.csr_matrix(A) if sparse else A, labels)
                logs.append((rec.log[0], m.result_.sensitivity))
            (V, sens), (V2, _) = logs
            assert _exact_sq_diff(V, V2) <= Fraction(sens) ** 2 * (1 + Fraction(1, 2 ** 50))


def test_add_remove_refuses_float32():
    import fasterm as fe
    X = np.random.default_rng(0).uniform(-0.5, 0.5, (50, 3)).astype(np.float32)
    y = np.where(X[:, 0] > 0, 1.0, -1.0).astype(np.float32)
    with pytest.raises(ValueError, match="add_remove.*float64"):
        fe.noisy_sgd(fe.losses.Logistic(), X, y, fe.L2Ball(1.0, 3), 1.0, 1e-5, data_norm=1.0,
                     neighbors="add_remove", sample_rate=0.1, batch_size=5.0)


# --- δ = 0 class sums (fasterm.linear_model._multiclass.class_sums, clipped at c₁/(1 + Θ)) ---------------


def _class_sums_pairs(rng, n, d, K, dtype):
    """Neighbouring (X, y, X′, y′): n rows of L2 norm ≤ 1 and L1 norm beyond c₁ (so every row
    is clipped in L1 and its term has L1 norm ≈ c), most in class 0 so that the class sums are
    n times one term; the last row replaced by its mirror image (same class: the exact
    difference is 2 terms, the L1 bound itself), by a row of another class, or by hostile rows
    (zero, huge, subnormal)."""
    base = rng.normal(size=d)
    base /= np.linalg.norm(base)
    X = base + rng.normal(scale=1e-3, size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = X.astype(dtype)
    y = np.where(rng.random(n) < 0.9, 0, rng.integers(0, K, n))
    last = X[-1].copy()
    for repl, label in ((-last, y[-1]), (-last, (y[-1] + 1) % K), (np.zeros(d), y[-1]),
                        (np.full(d, 1e30), (y[-1] + 1) % K), (np.r_[5e-324, np.zeros(d - 1)], y[-1])):
        X2, y2 = X.copy(), y.copy()
        X2[-1], y2[-1] = np.asarray(repl, dtype=dtype), label
        yield X, y, X2, y2


def _exact_l1_diff(a, b) -> Fraction:
    return sum(abs(Fraction(float(x)) - Fraction(float(z))) for x, z in zip(np.ravel(a), np.ravel(b)))


def _class_sums_hunt(clip_of, *, sparse, dtype, weighted, tries):
    """The largest exact ‖Ŝ(D) − Ŝ(D′)‖₁/(2B·c₁) over adversarial neighbours."""
    from fasterm.erm import _float_margin
    from fasterm.linear_model import _multiclass
    rng = np.random.default_rng(7)
    worst = Fraction(0)
    for t in range(tries):
        n, d, K = (4097, 3, 3) if t % 2 else (20_001, 2, 4)
        c1 = 0.5 * math.sqrt(d)
        B = 2.0 if weighted else 1.0
        clip = clip_of(c1, _float_margin.class_sums_theta(n, d))
        w = np.r_[rng.uniform(1.5, 2.0, n - 1), B] if weighted else None  # the changed row at full weight
        for X, y, X2, y2 in _class_sums_pairs(rng, n, d, K, dtype):
            w2 = w
            A, A2 = (sp.csr_matrix(X), sp.csr_matrix(X2)) if sparse else (X, X2)
            S = _multiclass.class_sums(A, y, K, 1.0, clip, w)
            S2 = _multiclass.class_sums(A2, y2, K, 1.0, clip, w2)
            worst = max(worst, _exact_l1_diff(S, S2) / (2 * Fraction(B) * Fraction(c1)))
    return worst


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_class_sums_difference_within_reported_sensitivity(sparse, dtype, weighted):
    """δ = 0, K > 2: the computed class sums Ŝ of neighbouring data differ by at most the
    reported Δ₁ = 2B·c₁ in L1, exactly (rationals), on swamped neighbours whose exact
    difference is Δ₁ itself, and on hostile replacement rows (zero, huge, subnormal)."""
    from fasterm.erm import _float_margin
    worst = _class_sums_hunt(_float_margin.effective_clip, sparse=sparse, dtype=dtype, weighted=weighted, tries=4)
    assert worst <= 1
    assert worst > Fraction(99, 100)  # the neighbours do reach the bound: the test can see a violation


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_class_sums_without_the_margin_the_hunt_finds_a_violation(sparse):
    """Power: clipping at c₁ itself (Θ = 0), the same search finds neighbours whose computed
    class sums differ by more than Δ₁."""
    worst = _class_sums_hunt(lambda c, theta: float(c), sparse=sparse, dtype=np.float64, weighted=False, tries=4)
    assert worst > 1


def test_class_sums_theta_is_the_proved_one():
    """Θ recomputed from the formula in class_sums_theta's docstring, and the clip it gives."""
    from fasterm.erm import _float_margin
    u = Fraction(1, 2 ** 53)

    def g(k):
        return k * u / (1 - k * u)
    for n, d in ((1, 1), (1797, 64), (80_000, 100), (10 ** 6, 650)):
        want = (1 + 2 * u) ** 2 / (1 - g(d - 1)) * (1 + n * g(n)) * (1 + u) - 1
        assert _float_margin.class_sums_theta(n, d) == want
        c = _float_margin.effective_clip(4.0, want)
        assert Fraction(c) * (1 + want) <= 4 and c > 4.0 * (1 - 2 * float(want)) - 1e-15
    assert _float_margin.class_sums_theta(10 ** 4, 100) < 1e-7  # Θ ≈ n²u: a negligible cost


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_class_sums_fit_clips_at_the_margin(weighted, monkeypatch):
    """The δ = 0 fit (K > 2) hands class_sums the clip c₁/(1 + Θ) of class_sums_theta(n, d),
    and reports Δ₁ = 2B·c₁ of the unmargined c₁."""
    import fasterm as fe
    from fasterm.erm import _float_margin
    from fasterm.linear_model import _multiclass
    seen = []
    real = _multiclass.class_sums
    monkeypatch.setattr(_multiclass, "class_sums", lambda *a, **k: seen.append(a[4]) or real(*a, **k))
    n, d, B = 500, 4, (3.0 if weighted else 1.0)
    X = np.random.default_rng(0).uniform(-0.5, 0.5, (n, d))
    y = np.arange(n) % 3
    m = fe.DPLogisticRegression(epsilon=1.0, delta=0.0, random_state=0, weight_bound=B)
    m.fit(X, y, sample_weight=np.ones(n) if weighted else None)
    c1 = 0.5 * math.sqrt(d)
    assert seen == [_float_margin.effective_clip(c1, _float_margin.class_sums_theta(n, d))]
    assert seen[0] < c1
    assert m.result_.sensitivity == 2 * B * c1 / n
