"""Losses of linear models: kernels against slow references, constants by brute force, errors."""

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

import fasterm as fe
from fasterm.erm import _losses
from fasterm.losses import Absolute, Hinge, Linear, Logistic, Squared, row_norms

LOSSES = {
    "logistic": Logistic,
    "hinge": Hinge,
    "squared": Squared,
    "absolute": Absolute,
    "linear": Linear,
}
CLASSIFICATION = {"logistic", "hinge"}
REGRESSION = {"squared", "absolute"}


# ---------------------------------------------------------------------------
# Reference: the definitions, one example at a time, in Python floats.
# ---------------------------------------------------------------------------


def ref_label(name, y, Y):
    if name in CLASSIFICATION:
        return 1.0 if y > 0 else -1.0
    if name in REGRESSION:
        return min(max(y, -Y), Y)
    return 0.0


def ref_phi(name, z, y):
    if name == "logistic":
        return float(np.logaddexp(0.0, -y * z))
    if name == "hinge":
        return max(0.0, 1.0 - y * z)
    if name == "squared":
        return (y - z) ** 2
    if name == "absolute":
        return abs(y - z)
    return z


def ref_dphi(name, z, y):
    if name == "logistic":
        m = y * z
        # sigmoid(-m), written both ways so neither exp overflows
        s = 1.0 / (1.0 + math.exp(m)) if m <= 0 else math.exp(-m) / (1.0 + math.exp(-m))
        return -y * s
    if name == "hinge":
        return -y if y * z < 1.0 else 0.0
    if name == "squared":
        return 2.0 * (z - y)
    if name == "absolute":
        return float(np.sign(z - y))
    return 1.0


def ref_row(x, data_norm):
    x = [float(v) for v in x]
    nx = math.sqrt(sum(v * v for v in x))
    if data_norm is not None and nx > data_norm:
        x = [v * (data_norm / nx) for v in x]
    return x


def ref_per_example(name, w, X, y, *, clip=None, data_norm=None, Y=math.inf):
    """(values, gradients) of every example, float64."""
    w = [float(v) for v in w]
    vals, grads = [], []
    for i in range(X.shape[0]):
        x = ref_row(X[i], data_norm)
        z = sum(a * b for a, b in zip(w, x))
        yi = ref_label(name, float(y[i]) if y is not None else 0.0, Y)
        vals.append(ref_phi(name, z, yi))
        g = [ref_dphi(name, z, yi) * v for v in x]
        ng = math.sqrt(sum(v * v for v in g))
        if clip is not None and ng > clip:
            g = [v * (clip / ng) for v in g]
        grads.append(g)
    return np.array(vals), np.array(grads).reshape(X.shape)


def make_data(name, n, d, dtype, seed, *, zero_rows=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.2, 3.0, size=(n, 1))
    if zero_rows and n > 3:
        X[[1, n - 2]] = 0.0
    w = rng.standard_normal(d) * 0.7
    if name in CLASSIFICATION:
        y = rng.choice([-1.0, 1.0], size=n)
    else:
        y = rng.standard_normal(n) * 2.0
    return X.astype(dtype), y.astype(dtype), w.astype(dtype)


def tolerances(dtype, scale):
    if dtype == np.float32:
        return dict(rtol=2e-5, atol=2e-5 * scale)
    return dict(rtol=1e-11, atol=1e-11 * scale)


# ---------------------------------------------------------------------------
# Kernels against the reference
# ---------------------------------------------------------------------------

DTYPES = [np.float64, np.float32]


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("clip", [None, 0.3])
@pytest.mark.parametrize("data_norm", [None, 1.5])
@pytest.mark.parametrize("n", [1, 37, 301])
def test_kernels_match_reference(name, dtype, clip, data_norm, n):
    d = 13  # not a multiple of any vector width
    X, y, w = make_data(name, n, d, dtype, seed=n)
    Y = 1.5
    loss = LOSSES[name](label_bound=Y) if name in REGRESSION else LOSSES[name]()
    Yref = Y if name in REGRESSION else math.inf
    vals, grads = ref_per_example(name, w, X, y, clip=clip, data_norm=data_norm, Y=Yref)

    G = loss.grad(w, X, y, clip=clip, data_norm=data_norm)
    assert G.dtype == dtype and G.shape == X.shape
    np.testing.assert_allclose(G, grads, **tolerances(dtype, np.abs(grads).max() + 1e-300))

    s = loss.grad_sum(w, X, y, clip=clip, data_norm=data_norm)
    assert s.dtype == dtype and s.shape == (d,)
    scale = np.abs(grads).sum(axis=0).max() + 1e-300
    np.testing.assert_allclose(s, grads.sum(axis=0), **tolerances(dtype, scale))

    v = loss.value(w, X, y, data_norm=data_norm)
    assert isinstance(v, float)
    vscale = np.abs(vals).mean() + 1e-300
    np.testing.assert_allclose(v, vals.mean(), **tolerances(dtype, vscale))


@pytest.mark.parametrize("name", LOSSES)
def test_float32_agrees_with_float64(name):
    X, y, w = make_data(name, 2000, 40, np.float64, seed=7)
    loss = LOSSES[name]()
    kw = dict(clip=0.7, data_norm=4.0)
    s64 = loss.grad_sum(w, X, y, **kw)
    s32 = loss.grad_sum(w.astype(np.float32), X.astype(np.float32), y.astype(np.float32), **kw)
    assert s32.dtype == np.float32
    scale = np.abs(loss.grad(w, X, y, **kw)).sum(axis=0).max()
    # float32 rounding of the inputs alone moves the sum by ~1e-7 relative.
    np.testing.assert_allclose(s32, s64, rtol=0, atol=3e-6 * scale)
    v64 = loss.value(w, X, y, data_norm=4.0)
    v32 = loss.value(w.astype(np.float32), X.astype(np.float32), y.astype(np.float32), data_norm=4.0)
    assert v32 == pytest.approx(v64, rel=1e-5, abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(LOSSES)),
    n=st.integers(1, 150),
    d=st.integers(1, 21),
    seed=st.integers(0, 2**16),
    clip=st.sampled_from([None, 0.05, 2.0]),
    data_norm=st.sampled_from([None, 0.5, 3.0]),
    f32=st.booleans(),
)
def test_grad_sum_any_shape(name, n, d, seed, clip, data_norm, f32):
    """Every remainder of the row blocks, row groups and vector lanes."""
    dtype = np.float32 if f32 else np.float64
    X, y, w = make_data(name, n, d, dtype, seed)
    loss = LOSSES[name]()
    _, grads = ref_per_example(name, w, X, y, clip=clip, data_norm=data_norm)
    s = loss.grad_sum(w, X, y, clip=clip, data_norm=data_norm)
    scale = np.abs(grads).sum(axis=0).max() + 1e-300
    np.testing.assert_allclose(s, grads.sum(axis=0), **tolerances(dtype, scale))


def test_large_problem_threads_are_deterministic():
    # Big enough for several chunks: results must not depend on n_threads.
    X, y, w = make_data("logistic", 20000, 24, np.float64, seed=3)
    loss = Logistic()
    norms = row_norms(X)
    outs = [loss.grad_sum(w, X, y, clip=0.5, data_norm=3.0, row_norms=norms, n_threads=t)
            for t in (1, 2, 3)]
    assert all(np.array_equal(outs[0], o) for o in outs[1:])
    vals = [loss.value(w, X, y, data_norm=3.0, n_threads=t) for t in (1, 2, 3)]
    assert vals[0] == vals[1] == vals[2]
    grads = [loss.grad(w, X, y, clip=0.5, n_threads=t) for t in (1, 3)]
    assert np.array_equal(grads[0], grads[1])
    # and against a vectorized transcription of the definition
    Xs = X * np.minimum(1.0, 3.0 / np.maximum(norms, 1e-300))[:, None]
    z = Xs @ w
    g = -y / (1.0 + np.exp(y * z))
    gn = np.abs(g) * np.linalg.norm(Xs, axis=1)
    f = np.where(gn > 0.5, 0.5 / np.where(gn > 0, gn, 1.0), 1.0)
    np.testing.assert_allclose(outs[0], Xs.T @ (g * f), rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("d", [1, 3, 4, 6, 8, 13, 100, 301])
def test_norms_in_the_pass_are_the_cached_norms(dtype, d):
    """Without cached norms the kernels compute them from the same loads: same bits."""
    n = 5000 if d < 100 else 1500  # several chunks
    for name in LOSSES:
        X, y, w = make_data(name, n, d, dtype, seed=d)
        X[7] *= 1e160 if dtype == np.float64 else 1.0  # squares overflow: the rescaled path
        norms = row_norms(X)
        if dtype == np.float64:
            with np.errstate(over="ignore"):
                assert math.isinf(float(np.sum(X[7] ** 2)))
            np.testing.assert_allclose(norms[7], np.linalg.norm(X[7] / 1e160) * 1e160, rtol=1e-14)
        loss = LOSSES[name]()
        for kw in ({"clip": 0.3}, {"data_norm": 2.0}, {"clip": 0.4, "data_norm": 1.0}):
            cached = loss.grad_sum(w, X, y, row_norms=norms, n_threads=2, **kw)
            fused = [loss.grad_sum(w, X, y, n_threads=t, **kw) for t in (1, 2)]
            np.testing.assert_array_equal(fused[0], cached)
            np.testing.assert_array_equal(fused[1], cached)
            np.testing.assert_array_equal(loss.grad(w, X[:300], y[:300], **kw),
                                          loss.grad(w, X[:300], y[:300], row_norms=norms[:300], **kw))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cached_norms_streaming_from_memory_give_the_in_pass_bits(dtype):
    """X beyond the kernels' cache-resident size (16 MB): cached norms (read
    for float rows, recomputed in the pass for double ones) give the bits of
    the norms computed in the pass."""
    n, d = (45_000 if dtype == np.float32 else 22_500), 100  # 18 MB
    X, y, w = make_data("logistic", n, d, dtype, seed=11)
    assert X.nbytes > 16 << 20
    norms = row_norms(X)
    loss = Logistic()
    for kw in ({"clip": 0.3}, {"clip": 0.4, "data_norm": 1.0}):
        fused = loss.grad_sum(w, X, y, n_threads=1, **kw)
        for t in (1, 2):
            np.testing.assert_array_equal(loss.grad_sum(w, X, y, row_norms=norms, n_threads=t, **kw), fused)
    _, grads = ref_per_example("logistic", w, X[:2000], y[:2000], clip=0.3)
    np.testing.assert_allclose(loss.grad_sum(w, X[:2000], y[:2000], clip=0.3), grads.sum(axis=0),
                               **tolerances(dtype, np.abs(grads).sum(axis=0).max()))


@pytest.mark.parametrize("dtype", DTYPES)
def test_which_norms_a_streaming_pass_reads(dtype):
    """Streaming from memory (X above 16 MB), float rows read the cached norms
    (the pass is then faster than computing them) and double rows recompute
    them.  Seen through a cached vector that passes the spot check but is
    wrong off the probed rows: cached norms are trusted, as documented."""
    from fasterm.erm.losses import _row_norm_probes

    n, d = (45_000 if dtype == np.float32 else 22_500), 100  # 18 MB
    X, y, w = make_data("logistic", n, d, dtype, seed=12)
    norms = row_norms(X)
    probes = set(_row_norm_probes(n).tolist())
    forged = norms.copy()
    off = [i for i in range(1000, 1100) if i not in probes]
    forged[off] *= 4.0  # four times too long: those rows are clipped harder
    loss = Logistic()
    for t in (1, 2):
        in_pass = loss.grad_sum(w, X, y, clip=0.3, n_threads=t)
        got = loss.grad_sum(w, X, y, clip=0.3, row_norms=forged, n_threads=t)
        if dtype == np.float32:
            Xo, yo = X[off], y[off]
            _, g_true = ref_per_example("logistic", w, Xo, yo, clip=0.3)
            _, g_forged = ref_per_example("logistic", w, Xo, yo, clip=0.3 / 4.0)
            # only the forged rows' share moves, by what their harder clip predicts
            shift = (g_forged - g_true).sum(axis=0)
            assert np.abs(shift).max() > 0.1
            np.testing.assert_allclose(got.astype(np.float64) - in_pass, shift, rtol=1e-3,
                                       atol=1e-3 * np.abs(shift).max())
        else:
            np.testing.assert_array_equal(got, in_pass)


def _rows_reference(name, w, X, y, rows, *, clip, data_norm):
    """Σ over X[rows] of the per-example gradients, from the Python reference."""
    d = X.shape[1]
    if len(rows) == 0:
        return np.zeros(d)
    _, grads = ref_per_example(name, w, X[rows], None if y is None else y[rows], clip=clip,
                               data_norm=data_norm)
    return grads.sum(axis=0)


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rate", [0.0, 0.01, 0.3, 1.0])
def test_grad_sum_rows_is_grad_sum_of_the_gathered_rows(name, dtype, rate):
    """A Poisson subsample read in place: the bits of grad_sum on the copied rows,
    and the Python reference's sum to rounding."""
    rng = np.random.default_rng(int(rate * 100) + 7)
    n, d = 3000, 13
    X, y, w = make_data(name, n, d, dtype, seed=5)
    rows = np.flatnonzero(rng.random(n) < rate).astype(np.int64)
    norms = row_norms(X)
    kind = LOSSES[name]._kind
    yk = None if name == "linear" else y
    for clip, data_norm in ((None, None), (0.3, None), (None, 1.5), (0.2, 1.0)):
        c, dn = clip or 0.0, data_norm or 0.0
        out = np.full(d, np.nan, dtype=dtype)
        _losses.grad_sum_rows(kind, X, yk, w, norms, dn, c, math.inf, rows, out, 2)
        fused = np.full(d, np.nan, dtype=dtype)
        _losses.grad_sum_rows(kind, X, yk, w, None, dn, c, math.inf, rows, fused, 1)
        np.testing.assert_array_equal(fused, out)
        ref = _rows_reference(name, w, X, y, rows, clip=clip, data_norm=data_norm)
        scale = np.abs(ref).max() + 1.0
        np.testing.assert_allclose(out, ref, **tolerances(dtype, scale))
        if len(rows):
            Xs, ys = np.ascontiguousarray(X[rows]), y[rows]
            dense = np.empty(d, dtype=dtype)
            _losses.grad_sum(kind, Xs, None if yk is None else ys, w, norms[rows], dn, c, math.inf,
                             dense, 1)
            np.testing.assert_array_equal(out, dense)
        else:
            np.testing.assert_array_equal(out, np.zeros(d, dtype=dtype))


def test_grad_sum_rows_large_subsample_is_thread_independent():
    X, y, w = make_data("logistic", 60000, 20, np.float32, seed=9)
    rows = np.flatnonzero(np.random.default_rng(1).random(60000) < 0.5).astype(np.int64)
    outs = []
    for t in (1, 2, 3):
        out = np.empty(20, dtype=np.float32)
        _losses.grad_sum_rows(_losses.LOGISTIC, X, y, w, None, 0.0, 0.5, math.inf, rows, out, t)
        outs.append(out)
    dense = np.empty(20, dtype=np.float32)
    _losses.grad_sum(_losses.LOGISTIC, np.ascontiguousarray(X[rows]), y[rows], w, None, 0.0, 0.5,
                     math.inf, dense, 2)
    for o in outs:
        np.testing.assert_array_equal(o, dense)


def test_grad_sum_equals_sum_of_grad_rows():
    for name in LOSSES:
        X, y, w = make_data(name, 500, 9, np.float64, seed=11)
        loss = LOSSES[name]()
        s = loss.grad_sum(w, X, y, clip=0.2, data_norm=1.0)
        G = loss.grad(w, X, y, clip=0.2, data_norm=1.0)
        np.testing.assert_allclose(s, G.sum(axis=0), rtol=1e-12, atol=1e-12)


def test_out_and_row_norms_arguments():
    X, y, w = make_data("hinge", 100, 6, np.float32, seed=1)
    loss = Hinge()
    out = np.full(6, np.nan, dtype=np.float32)
    r = loss.grad_sum(w, X, y, clip=0.1, out=out)
    assert r is out and np.isfinite(out).all()
    np.testing.assert_array_equal(out, loss.grad_sum(w, X, y, clip=0.1, row_norms=row_norms(X)))


# ---------------------------------------------------------------------------
# Kinks, extremes and the row / label clipping
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_hinge_margin_exactly_one_has_zero_subgradient(dtype):
    X = np.array([[1.0, 0.0], [0.5, 0.0], [-1.0, 0.0], [2.0, 0.0]], dtype=dtype)
    y = np.array([1.0, 1.0, -1.0, 1.0], dtype=dtype)
    w = np.array([1.0, 3.0], dtype=dtype)  # margins 1, 0.5, 1, 2
    G = Hinge().grad(w, X, y)
    np.testing.assert_array_equal(G, [[0, 0], [-0.5, 0], [0, 0], [0, 0]])
    assert Hinge().value(w, X, y) == pytest.approx(0.5 / 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_absolute_at_z_equal_y_has_zero_subgradient(dtype):
    X = np.array([[2.5, 0.0], [1.0, 0.0], [3.0, 0.0]], dtype=dtype)
    y = np.array([2.5, 2.0, 2.0], dtype=dtype)
    w = np.array([1.0, -4.0], dtype=dtype)
    G = Absolute().grad(w, X, y)
    np.testing.assert_array_equal(G, [[0, 0], [-1.0, 0], [3.0, 0]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_logistic_huge_margins_do_not_overflow(dtype):
    z = np.array([-1e30, -1e6, -800.0, -40.0, 0.0, 40.0, 800.0, 1e6, 1e30])
    X = np.stack([z, np.zeros_like(z)], axis=1).astype(dtype)
    y = np.ones(len(z), dtype=dtype)
    w = np.array([1.0, 0.0], dtype=dtype)
    loss = Logistic()
    with np.errstate(all="raise"):
        G = loss.grad(w, X, y)
        v = loss.value(w, X[:3], y[:3])
        s = loss.grad_sum(w, X, y, clip=1.0)
    assert np.isfinite(G).all() and np.isfinite(s).all() and math.isfinite(v)
    # gradient = phi'(z) x with phi' = -sigmoid(-z): -1 far left, ~0 far right
    x = X[:, 0].astype(np.float64)
    nz = x != 0
    deriv = G[nz, 0] / x[nz]
    np.testing.assert_allclose(deriv[:3], -1.0)
    np.testing.assert_allclose(deriv[4], -math.exp(-40.0) / (1 + math.exp(-40.0)), rtol=1e-6)
    assert np.all(deriv[5:] <= 0) and np.all(deriv[5:] > -1e-300)
    assert G[4, 0] == 0.0 and G[0, 0] == pytest.approx(1e30, rel=1e-6)
    # value: log(1 + e^{800}) = 800 (+ e^-800)
    v2 = loss.value(w, X[2:3], y[2:3])
    assert v2 == pytest.approx(800.0, rel=1e-12)
    assert loss.value(w, X[8:9], y[8:9]) == 0.0


def test_logistic_vector_exponential_is_accurate():
    # The derivative uses a compiled polynomial exp; compare it with numpy's
    # over the whole range of margins, including the subnormal floor.
    m = np.concatenate([-np.geomspace(1e-12, 750, 4000), [0.0], np.geomspace(1e-12, 750, 4000)])
    X = m[:, None].copy()
    y = np.ones(len(m))
    G = Logistic().grad(np.array([1.0]), X, y)[:, 0]
    nz = m != 0
    deriv = np.full_like(m, -0.5)
    deriv[nz] = G[nz] / m[nz]
    expected = -special.expit(-m)
    ok = np.abs(m) < 700
    np.testing.assert_allclose(deriv[ok], expected[ok], rtol=4e-16 * 8, atol=0)
    assert np.all(np.abs(deriv[~ok] - expected[~ok]) < 4e-308)


def test_zero_rows_are_harmless():
    for name in LOSSES:
        X = np.zeros((5, 3))
        loss = LOSSES[name]()
        # regression labels of any value; classification labels are ±1 (others are refused)
        y = np.array([1.0, -1.0, 0.5, 0.0, 2.0]) if loss._regression else np.array([1.0, -1.0, -1.0, 1.0, 1.0])
        with np.errstate(all="raise"):
            s = loss.grad_sum(np.ones(3), X, y, clip=0.1, data_norm=1.0)
            G = loss.grad(np.ones(3), X, y, clip=0.1, data_norm=1.0)
        assert np.array_equal(s, np.zeros(3)) and np.array_equal(G, np.zeros((5, 3)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_are_scaled_to_data_norm_without_touching_X(dtype):
    rng = np.random.default_rng(5)
    X = (rng.standard_normal((50, 4)) * 10).astype(dtype)
    y = rng.choice([-1.0, 1.0], 50).astype(dtype)
    w = rng.standard_normal(4).astype(dtype)
    X0, y0, w0 = X.copy(), y.copy(), w.copy()
    norms = np.linalg.norm(X.astype(np.float64), axis=1)
    Xs = X * np.minimum(1.0, 2.0 / norms)[:, None]
    for name in LOSSES:
        loss = LOSSES[name]()
        a = loss.grad_sum(w, X, y, data_norm=2.0, clip=0.3)
        b = loss.grad_sum(w, Xs.astype(dtype), y, clip=0.3)
        np.testing.assert_allclose(a, b, **tolerances(dtype, np.abs(b).max() + 1))
        assert loss.value(w, X, y, data_norm=2.0) == pytest.approx(
            loss.value(w, Xs.astype(dtype), y), rel=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(w, w0)


def test_overflowing_rows_are_still_scaled_to_data_norm():
    # Entries so large that the squares (and the dot products) overflow.
    X = np.array([[1e300, 1e300, 0.0], [3e200, -4e200, 0.0], [0.0, 0.0, 1.0]])
    y = np.array([1.0, -1.0, 1.0])
    w = np.array([10.0, 10.0, 1.0])
    np.testing.assert_allclose(row_norms(X), [math.sqrt(2) * 1e300, 5e200, 1.0])
    Xs = X / np.array([math.sqrt(2) * 1e300, 5e200, 1.0])[:, None]
    for name in LOSSES:
        loss = LOSSES[name]()
        a = loss.grad_sum(w, X, y, data_norm=1.0, clip=0.5)
        b = loss.grad_sum(w, Xs, y, clip=0.5)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        assert loss.value(w, X, y, data_norm=1.0) == pytest.approx(loss.value(w, Xs, y), rel=1e-12)
    X32 = np.array([[1e30, 1e30], [0.0, 3.0]], dtype=np.float32)
    np.testing.assert_allclose(row_norms(X32), [math.sqrt(2) * 1e30, 3.0], rtol=1e-6)


def test_labels_are_mapped_clipped_or_refused():
    # Regression labels are clipped, never rejected; classification labels are each in
    # {−1, 0, +1} (0 the negative class, -0.0 too), and any other value is refused naming y.
    rng = np.random.default_rng(8)
    X = rng.standard_normal((40, 3))
    w = rng.standard_normal(3)
    raw = rng.standard_normal(40) * 5
    raw[:4] = [0.0, -0.0, 1e-300, -7.0]
    for name in CLASSIFICATION:
        loss = LOSSES[name]()
        pm = np.where(raw > 0, 1.0, -1.0)
        for call in (loss.grad_sum, loss.value, loss.grad):
            with pytest.raises(ValueError, match="y: a classification loss"):
                call(w, X, raw)
        # {0, 1} labels: 0 is the negative class
        y01 = (raw > 0).astype(float)
        y01[1] = -0.0
        np.testing.assert_array_equal(loss.grad(w, X, y01), loss.grad(w, X, pm))
        np.testing.assert_array_equal(loss.grad_sum(w, X, y01), loss.grad_sum(w, X, pm))
        assert loss.value(w, X, y01) == loss.value(w, X, pm)
        # each label on its own: 0 and −1 mixed are both the negative class
        ymix = y01.copy()
        ymix[(raw <= 0) & (np.arange(40) % 2 == 0)] = -1.0
        np.testing.assert_array_equal(loss.grad(w, X, ymix), loss.grad(w, X, pm))
        assert loss.value(w, X, ymix) == loss.value(w, X, pm)
    for name in REGRESSION:
        clipped = np.clip(raw, -1.5, 1.5)
        a = LOSSES[name](label_bound=1.5)
        b = LOSSES[name]()
        np.testing.assert_array_equal(a.grad_sum(w, X, raw), b.grad_sum(w, X, clipped))
        # the per-call bound overrides the constructor's
        np.testing.assert_array_equal(b.grad_sum(w, X, raw, label_bound=1.5), a.grad_sum(w, X, raw))
        assert a.value(w, X, raw) == b.value(w, X, clipped)
    # linear ignores y altogether
    assert Linear().value(w, X, raw) == Linear().value(w, X) == pytest.approx(np.mean(X @ w))


# ---------------------------------------------------------------------------
# Gradients against finite differences, regularizer
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", LOSSES)
def test_gradient_matches_finite_differences(name):
    rng = np.random.default_rng(21)
    n, d = 60, 5
    X = rng.standard_normal((n, d)) * 2
    y = rng.choice([-1.0, 1.0], n) if name in CLASSIFICATION else rng.standard_normal(n)
    w = rng.standard_normal(d)
    loss = LOSSES[name](l2=0.3)
    Xs = X * np.minimum(1.0, 1.5 / np.linalg.norm(X, axis=1))[:, None]
    z = Xs @ w
    # smooth at w: no example within the step of a kink (precondition)
    if name == "hinge":
        assert np.min(np.abs(y * z - 1)) > 1e-3
    if name == "absolute":
        assert np.min(np.abs(z - y)) > 1e-3
    grad = loss.grad_sum(w, X, y, data_norm=1.5) / n + loss.reg_grad(w)
    h = 1e-6
    fd = np.empty(d)
    for j in range(d):
        e = np.zeros(d)
        e[j] = h
        fd[j] = (loss.value(w + e, X, y, data_norm=1.5) - loss.value(w - e, X, y, data_norm=1.5)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7)


def test_regularizer():
    w = np.array([3.0, -4.0])
    loss = Squared(l2=0.5)
    assert loss.reg_value(w) == pytest.approx(0.25 * 25)
    np.testing.assert_allclose(loss.reg_grad(w), [1.5, -2.0])
    X = np.array([[1.0, 0.0]])
    assert loss.value(w, X, [1.0]) == pytest.approx((1 - 3) ** 2 + 6.25)
    # grad_sum and grad exclude the regularizer
    np.testing.assert_allclose(loss.grad_sum(w, X, [1.0]), [4.0, 0.0])
    assert Logistic().reg_value(w) == 0.0 and not Logistic().reg_grad(w).any()


# ---------------------------------------------------------------------------
# Lipschitz constants and sensitivities: brute force and tightness
# ---------------------------------------------------------------------------


def _ball(rng, m, d, radius):
    """m points in the ball of the given radius, a quarter of them on its sphere."""
    v = rng.standard_normal((m, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    r = radius * rng.uniform(0, 1, m) ** (1 / d)
    r[: m // 4] = radius
    return v * r[:, None]


# (R, X, Y) with RX both small and large; Y only for regression
BOUNDS = [(0.3, 0.5, 0.7), (1.0, 1.0, 1.0), (2.0, 3.0, 0.5), (5.0, 2.0, 4.0)]


def ref_values_many(name, W, X, y, data_norm, Y):
    """ℓ(w; x_i, y_i) for every w in W (rows) and example i: the definitions, vectorized."""
    nx = np.linalg.norm(X, axis=1)
    Xs = X * np.minimum(1.0, data_norm / np.where(nx > 0, nx, 1.0))[:, None]
    Z = W @ Xs.T
    if name in CLASSIFICATION:
        yy = np.where(y > 0, 1.0, -1.0)
    else:
        yy = np.clip(y, -Y, Y)
    return {
        "logistic": lambda: np.logaddexp(0.0, -yy * Z),
        "hinge": lambda: np.maximum(0.0, 1.0 - yy * Z),
        "squared": lambda: (yy - Z) ** 2,
        "absolute": lambda: np.abs(yy - Z),
        "linear": lambda: Z,
    }[name]()


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("R,Xb,Yb", BOUNDS)
def test_constants_hold_on_random_points(name, R, Xb, Yb):
    """|ℓ(w;x) − ℓ(w;x')| ≤ Δ and ‖∇ℓ(w;x)‖ ≤ G, out-of-bound data clipped by the kernels."""
    rng = np.random.default_rng(int(100 * R + 10 * Xb) + len(name))
    d = 4
    loss = LOSSES[name](label_bound=Yb) if name in REGRESSION else LOSSES[name]()
    G = loss.lipschitz(Xb, label_bound=Yb, radius=R)
    D = loss.sensitivity(Xb, label_bound=Yb, radius=R)
    m = 500
    W = _ball(rng, 200, d, R)
    # rows up to 3x the declared norm and labels up to 3x the bound: the
    # kernels must clip them back, so the constants still hold.
    Xr = _ball(rng, m, d, 3 * Xb)
    if name in CLASSIFICATION:  # labels outside {−1, 0, +1} are refused (check_class_labels)
        y = rng.choice([-1.0, 1.0], m)
    else:
        y = rng.uniform(-3 * Yb, 3 * Yb, m)
        y[:10] = [Yb, -Yb] * 5
    # the definitions, on every (w, x, x') triple of the sample
    V = ref_values_many(name, W, Xr, y, Xb, Yb)
    assert (V.max(axis=1) - V.min(axis=1)).max() <= D * (1 + 1e-12)
    # the kernels: per-example gradient norms, and values from one-row calls
    for w in W[:25]:
        gn = np.linalg.norm(loss.grad(w, Xr, y, data_norm=Xb), axis=1)
        assert gn.max() <= G * (1 + 1e-12)
        vals = [loss.value(w, Xr[i : i + 1], y[i : i + 1], data_norm=Xb) for i in range(15)]
        assert max(vals) - min(vals) <= D * (1 + 1e-12)


def _adversarial(name, R, Xb, Yb, d=4):
    """(w, x, y, x', y') reaching the constants, per the docstrings' proofs."""
    u = np.zeros(d)
    u[0] = 1.0
    w = R * u
    if name == "logistic":
        return w, -Xb * u, 1.0, Xb * u, 1.0
    if name == "hinge":
        return w, -Xb * u, 1.0, Xb * u, 1.0
    if name in REGRESSION:
        return w, Xb * u, -Yb, 0 * u, 0.0
    return w, Xb * u, 0.0, -Xb * u, 0.0


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("R,Xb,Yb", BOUNDS)
def test_constants_are_tight(name, R, Xb, Yb):
    loss = LOSSES[name](label_bound=Yb) if name in REGRESSION else LOSSES[name]()
    D = loss.sensitivity(Xb, label_bound=Yb, radius=R)
    w, x, y, x2, y2 = _adversarial(name, R, Xb, Yb)
    v1 = loss.value(w, x[None], [y])
    v2 = loss.value(w, x2[None], [y2])
    assert abs(v1 - v2) >= 0.99 * D
    assert abs(v1 - v2) <= D * (1 + 1e-12)
    # gradient: G is a sup over margins; the logistic one is approached as RX grows
    G = loss.lipschitz(Xb, label_bound=Yb, radius=R)
    if name == "logistic":
        R, Xb = 10.0, 1.0  # sigmoid(10) > 0.9999
        G = loss.lipschitz(Xb, radius=R)
        w, x, y, _, _ = _adversarial(name, R, Xb, Yb)
    gn = np.linalg.norm(loss.grad(w, x[None], [y]))
    assert 0.99 * G <= gn <= G * (1 + 1e-12)


def test_spec_table_values():
    R, X, Y = 2.0, 3.0, 0.5
    assert Logistic().lipschitz(X) == 3.0 and Logistic().sensitivity(X, radius=R) == 6.0
    assert Hinge().lipschitz(X) == 3.0 and Hinge().sensitivity(X, radius=R) == 7.0
    assert Hinge().sensitivity(0.1, radius=1.0) == pytest.approx(0.2)  # 2RX < 1 + RX
    assert Squared().lipschitz(X, Y, radius=R) == 2 * 6.5 * 3
    assert Squared(label_bound=Y).sensitivity(X, radius=R) == 6.5**2
    assert Absolute().lipschitz(X) == 3.0 and Absolute(label_bound=Y).sensitivity(X, radius=R) == 6.5
    assert Linear().lipschitz(X) == 3.0 and Linear().sensitivity(X, radius=R) == 12.0
    assert Linear.lipschitz_simplex(16) == 4.0 and Linear.sensitivity_simplex() == 2.0


def test_linear_simplex_constants_brute_force_and_tight():
    rng = np.random.default_rng(4)
    d = 9
    loss = Linear()
    G, D = Linear.lipschitz_simplex(d), Linear.sensitivity_simplex()
    W = rng.dirichlet(np.ones(d) * 0.5, size=300)
    W[:d] = np.eye(d)  # the vertices
    Xr = rng.uniform(-1, 1, (200, d))
    Xr[:5] = np.sign(Xr[:5])  # corners of the cube
    for w in W[:50]:
        v = np.array([loss.value(w, x[None]) for x in Xr[:30]])
        assert v.max() - v.min() <= D * (1 + 1e-12)
        assert np.linalg.norm(loss.grad(w, Xr), axis=1).max() <= G * (1 + 1e-12)
    vals = Xr @ W.T
    assert (vals.max(axis=0) - vals.min(axis=0)).max() <= D * (1 + 1e-12)
    ones = np.ones(d)
    assert loss.value(W[20], ones[None]) - loss.value(W[20], -ones[None]) == pytest.approx(D)
    assert np.linalg.norm(loss.grad(W[20], ones[None])) == pytest.approx(G)


# ---------------------------------------------------------------------------
# Validation, dtypes, inputs never modified
# ---------------------------------------------------------------------------


def _xyw(dtype=np.float64):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((6, 3)).astype(dtype), np.array([1.0, -1, 1, 1, -1, 1], dtype),
            np.zeros(3, dtype))


@pytest.mark.parametrize(
    "kwargs,exc,word",
    [
        (dict(clip=0.0), ValueError, "clip"),
        (dict(clip=-1.0), ValueError, "clip"),
        (dict(clip=float("nan")), ValueError, "clip"),
        (dict(clip="1"), TypeError, "clip"),
        (dict(data_norm=0.0), ValueError, "data_norm"),
        (dict(data_norm=-2.0), ValueError, "data_norm"),
        (dict(data_norm=[1.0]), TypeError, "data_norm"),
        (dict(row_norms=np.ones(5)), ValueError, "row_norms"),
        (dict(row_norms=-np.ones(6)), ValueError, "row_norms"),
        (dict(row_norms=np.full(6, np.nan)), ValueError, "row_norms"),
        (dict(out=np.empty(4)), ValueError, "out"),
        (dict(out=np.empty(3, np.float32)), TypeError, "out"),
        (dict(out=[0.0, 0.0, 0.0]), TypeError, "out"),
        (dict(n_threads=0), ValueError, "n_threads"),
        (dict(n_threads=1.5), TypeError, "n_threads"),
        (dict(label_bound=0.0), ValueError, "label_bound"),
    ],
)
def test_bad_parameters_name_themselves(kwargs, exc, word):
    X, y, w = _xyw()
    with pytest.raises(exc, match=word):
        Squared().grad_sum(w, X, y, **kwargs)


@pytest.mark.parametrize(
    "args,exc,word",
    [
        (lambda X, y, w: (np.zeros(4), X, y), ValueError, "w"),
        (lambda X, y, w: (np.zeros((3, 1)), X, y), ValueError, "w"),
        (lambda X, y, w: (w, X, y[:5]), ValueError, "y"),
        (lambda X, y, w: (w, X[0], y), ValueError, "X"),
        (lambda X, y, w: (w, X[:0], y[:0]), ValueError, "X"),
        (lambda X, y, w: (w, np.where(X > 1, np.nan, X), y), ValueError, "X"),
        (lambda X, y, w: (w, np.where(X > 1, np.inf, X), y), ValueError, "X"),
        (lambda X, y, w: (np.array([np.inf, 0, 0]), X, y), ValueError, "w"),
        (lambda X, y, w: (w, X, np.where(y > 0, np.nan, y)), ValueError, "y"),
        (lambda X, y, w: (w, X.astype(complex), y), TypeError, "X"),
        (lambda X, y, w: (w, X.astype(object), y), TypeError, "X"),
        (lambda X, y, w: (w, X, y.astype("U3")), TypeError, "y"),
        (lambda X, y, w: (w, X, None), ValueError, "y"),
        (lambda X, y, w: (None, X, y), TypeError, "w"),
        (lambda X, y, w: (np.array([1e39, 0, 0]), X.astype(np.float32), y), ValueError, "w"),
    ],
)
@pytest.mark.parametrize("method", ["value", "grad", "grad_sum"])
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_bad_arrays_name_themselves(args, exc, word, method):
    X, y, w = _xyw()
    a = args(X, y, w)
    with pytest.raises(exc, match=rf"\b{word}\b"):
        getattr(Logistic(), method)(*a)


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("kw", [{}, dict(data_norm=1.0), dict(clip=0.5), dict(data_norm=1.0, clip=0.5)])
def test_non_finite_X_is_refused_by_every_method(name, dtype, bad, kw):
    # X's finiteness is verified from the kernels' outputs (no extra pass over
    # X); an infinite margin can give a finite loss (hinge/logistic at y z =
    # +inf), which is the case to catch.
    rng = np.random.default_rng(1)
    X = rng.uniform(0.5, 1.0, (300, 6)).astype(dtype)
    y = np.ones(300, dtype)
    w = np.ones(6, dtype)
    X[123, 4] = bad
    loss = LOSSES[name]()
    vkw = {k: v for k, v in kw.items() if k != "clip"}
    with pytest.raises(ValueError, match=r"\bX\b.*finite"):
        loss.value(w, X, y, **vkw)
    with pytest.raises(ValueError, match=r"\bX\b.*finite"):
        loss.grad_sum(w, X, y, **kw)
    with pytest.raises(ValueError, match=r"\bX\b.*finite"):
        loss.grad(w, X, y, **kw)
    with pytest.raises(ValueError, match=r"\bX\b.*finite"):
        row_norms(X)


def test_overflow_on_finite_data_is_not_mistaken_for_bad_X():
    # Finite data whose margins overflow: IEEE results, no error.
    X = np.array([[1e300, 1e300], [1.0, 0.0]])
    y = np.array([1.0, 1.0])
    w = np.array([1e10, 1e10])
    with np.errstate(over="ignore", invalid="ignore"):
        assert Hinge().value(w, X, y) == pytest.approx(0.0)
        assert Linear().value(w, X) == np.inf
        s = Linear().grad_sum(w, X)
    np.testing.assert_array_equal(s, [1e300 + 1.0, 1e300])


def test_bad_constant_and_constructor_arguments():
    with pytest.raises(ValueError, match="l2"):
        Logistic(l2=-1.0)
    with pytest.raises(ValueError, match="label_bound"):
        Squared(label_bound=0.0)
    with pytest.raises(TypeError, match="label_bound"):
        Absolute(label_bound="big")
    with pytest.raises(ValueError, match="label_bound"):
        Squared().lipschitz(1.0, radius=1.0)  # Y needed and not declared
    with pytest.raises(ValueError, match="label_bound"):
        Absolute().sensitivity(1.0, radius=1.0)
    with pytest.raises(ValueError, match="data_norm"):
        Logistic().lipschitz(0.0)
    with pytest.raises(ValueError, match="radius"):
        Hinge().sensitivity(1.0, radius=-1.0)
    with pytest.raises(TypeError, match="radius"):
        Hinge().sensitivity(1.0)
    with pytest.raises(ValueError, match="dim"):
        Linear.lipschitz_simplex(0)
    with pytest.raises(ValueError, match="total"):
        Linear.sensitivity_simplex(total=0.0)
    with pytest.raises(ValueError, match="n_threads"):
        row_norms(np.ones((2, 2)), n_threads=0)


def test_private_wrappers_refuse_inconsistent_shapes():
    # No call from Python may read out of bounds, even through _losses.
    X, y, w = _xyw()
    out = np.empty(3)
    norms = np.ones(6)
    inf = math.inf
    with pytest.raises(ValueError, match="w has"):
        _losses.grad_sum(0, X, y, w[:2], norms, 0.0, 0.0, inf, out)
    with pytest.raises(ValueError, match="y has"):
        _losses.grad_sum(0, X, y[:2], w, norms, 0.0, 0.0, inf, out)
    with pytest.raises(ValueError, match="y is required"):
        _losses.value_sum(1, X, None, w, norms, 0.0, inf)
    with pytest.raises(ValueError, match="row norms"):
        _losses.value_sum(0, X, y, w, None, 1.0, inf)
    with pytest.raises(ValueError, match="row norms"):
        _losses.grad_sum(0, X, y, w, norms[:3], 0.0, 0.5, inf, out)
    with pytest.raises(ValueError, match="out has"):
        _losses.grad_sum(0, X, y, w, norms, 0.0, 0.0, inf, out[:1])
    with pytest.raises(ValueError, match="out has"):
        _losses.grad_matrix(0, X, y, w, norms, 0.0, 0.0, inf, np.empty((6, 2)))
    with pytest.raises(ValueError, match="kind"):
        _losses.value_sum(9, X, y, w, norms, 0.0, inf)
    with pytest.raises(ValueError, match="n_threads"):
        _losses.value_sum(0, X, y, w, norms, 0.0, inf, 0)
    with pytest.raises(ValueError, match="out has"):
        _losses.row_norms(X, np.empty(2))
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _losses.grad_sum(0, X.astype(np.float32), y, w, norms, 0.0, 0.0, inf, out)
    rows = np.array([0, 2, 5], dtype=np.int64)
    for bad in ([0, 6], [-1, 2]):
        with pytest.raises(IndexError, match="outside"):
            _losses.grad_sum_rows(0, X, y, w, norms, 0.0, 0.5, inf, np.array(bad, dtype=np.int64), out)
    with pytest.raises(ValueError, match="row norms"):
        _losses.grad_sum_rows(0, X, y, w, norms[:3], 0.0, 0.5, inf, rows, out)
    with pytest.raises(ValueError, match="out has"):
        _losses.grad_sum_rows(0, X, y, w, norms, 0.0, 0.5, inf, rows, out[:1])
    with pytest.raises(ValueError, match="y has"):
        _losses.grad_sum_rows(0, X, y[:2], w, norms, 0.0, 0.5, inf, rows, out)
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _losses.grad_sum_rows(0, X, y, w, norms, 0.0, 0.5, inf, rows.astype(np.int32), out)


@pytest.mark.parametrize("dtype", DTYPES)
def test_inputs_are_never_modified(dtype):
    X, y, w = make_data("squared", 300, 7, dtype, seed=2)
    X[:5] *= 100  # rows beyond the data norm
    y[:5] = 50  # labels beyond the bound
    norms = row_norms(X)
    copies = [a.copy() for a in (X, y, w, norms)]
    y_cls = np.where(y > 0, 1, -1).astype(dtype)  # classification losses take ±1 labels only
    for name in LOSSES:
        loss = LOSSES[name](label_bound=1.0) if name in REGRESSION else LOSSES[name]()
        yy = y if name in REGRESSION else y_cls
        loss.value(w, X, yy, data_norm=1.0, row_norms=norms)
        loss.grad(w, X, yy, clip=0.5, data_norm=1.0)
        loss.grad_sum(w, X, yy, clip=0.5, data_norm=1.0, row_norms=norms)
    for a, b in zip((X, y, w, norms), copies):
        np.testing.assert_array_equal(a, b)


def test_float32_input_runs_the_float32_kernel():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((20000, 50)).astype(np.float32)  # 4 MB; a float64 copy is 8 MB
    y = rng.choice([-1.0, 1.0], 20000).astype(np.float32)
    w = rng.standard_normal(50).astype(np.float32)
    loss = Logistic()
    norms = row_norms(X)
    loss.grad_sum(w, X, y, clip=1.0, row_norms=norms)  # warm-up
    tracemalloc.start()
    try:
        s = loss.grad_sum(w, X, y, clip=1.0, row_norms=norms)
        v = loss.value(w, X, y, data_norm=2.0, row_norms=norms)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert s.dtype == np.float32 and isinstance(v, float)
    assert peak < 1_000_000  # no converted copy of X (or of y, 80 kB, beyond noise)
    # the float64 kernel on the same values gives a (slightly) different sum
    s64 = loss.grad_sum(w.astype(np.float64), X.astype(np.float64), y.astype(np.float64), clip=1.0)
    assert not np.array_equal(s.astype(np.float64), s64)
    np.testing.assert_allclose(s, s64, rtol=1e-4, atol=1e-3)


def test_mixed_and_integer_dtypes_follow_X():
    Xi = np.array([[1, 2], [3, 4], [0, 1]])
    y = np.array([1, -1, 1])
    s = Hinge().grad_sum([0.5, -0.5], Xi, y)
    assert s.dtype == np.float64
    X32 = Xi.astype(np.float32)
    assert Hinge().grad_sum(np.array([0.5, -0.5]), X32, y).dtype == np.float32
    np.testing.assert_allclose(Hinge().grad_sum([0.5, -0.5], X32, y), s)
    Xf = np.asfortranarray(Xi.astype(float))
    np.testing.assert_array_equal(Hinge().grad_sum([0.5, -0.5], Xf, y), s)


def test_row_norms_function():
    rng = np.random.default_rng(3)
    for dtype in DTYPES:
        X = rng.standard_normal((333, 17)).astype(dtype)
        r = row_norms(X)
        assert r.dtype == np.float64
        np.testing.assert_allclose(r, np.linalg.norm(X.astype(np.float64), axis=1), rtol=1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cached_row_norms_are_spot_checked_to_one_in_a_million(dtype):
    """check_row_norms accepts norms within 1e-6 relative of the probed rows' and refuses beyond."""
    X, y, w = make_data("logistic", 1000, 9, dtype, seed=5)
    probes = np.unique(np.linspace(0, 999, 16).astype(np.intp))  # the documented probe rows
    exact = np.linalg.norm(X.astype(np.float64), axis=1)
    loss = Logistic()
    for factor, ok in ((1 + 5e-7, True), (1 - 5e-7, True), (1 + 2e-6, False), (1 - 2e-6, False)):
        for k in (probes[0], probes[7], probes[-1]):
            norms = exact.copy()
            norms[k] *= factor
            if ok:
                loss.grad_sum(w, X, y, clip=0.3, row_norms=norms)
            else:
                with pytest.raises(ValueError, match="row_norms"):
                    loss.grad_sum(w, X, y, clip=0.3, row_norms=norms)


@pytest.mark.parametrize("dtype", DTYPES)
def test_compiled_probe_check_matches_its_definition(dtype):
    """_losses.check_probed_row_norms (check_row_norms' spot check for a dense
    X): true iff every probed row's given norm is within rtol of its norm,
    rows whose norm is not finite passing -- against that definition written
    here with numpy."""
    from fasterm.erm.losses import _row_norm_probes

    X, _, _ = make_data("logistic", 700, 11, dtype, seed=3)
    probes = _row_norm_probes(700)
    X[probes[2], 4] = np.inf
    with np.errstate(invalid="ignore", over="ignore"):
        exact = np.linalg.norm(X.astype(np.float64), axis=1)
    given = exact.copy()
    given[probes[2]] = 1.0

    def definition(norms, rtol):
        e = exact[probes]
        with np.errstate(invalid="ignore"):
            return bool((~np.isfinite(e) | (np.abs(norms[probes] - e) <= rtol * np.abs(e))).all())

    cases = [given.copy() for _ in range(5)]
    cases[1][probes[3]] *= 1 + 3e-6
    cases[2][probes[-1]] *= 1 - 3e-7
    cases[3][1] *= 5.0  # not a probed row
    cases[4][probes[0]] = 0.0
    assert 1 not in set(probes.tolist())
    got = {rtol: [_losses.check_probed_row_norms(X, c, probes, rtol) for c in cases]
           for rtol in (1e-6, 1e-9)}
    assert got == {rtol: [definition(c, rtol) for c in cases] for rtol in (1e-6, 1e-9)}
    assert got[1e-6] == [True, False, True, True, False]
    assert got[1e-9] == [True, False, False, True, False]
    with pytest.raises(ValueError, match="entries"):
        _losses.check_probed_row_norms(X, exact[:-1], probes, 1e-6)
    with pytest.raises(ValueError, match="probe"):
        _losses.check_probed_row_norms(X, exact, np.array([700], dtype=np.intp), 1e-6)


def test_public_namespace():
    assert fe.losses.Logistic is Logistic
    assert set(fe.losses.__all__) >= {"Logistic", "Hinge", "Squared", "Absolute", "Linear"}
    assert "losses" in fe.__all__ and "noise" in fe.__all__
    assert repr(Squared(label_bound=2.0, l2=0.1)) == "Squared(label_bound=2.0, l2=0.1)"
