"""Tests of fasterm.erm.constraints against slow, obviously-correct references.

References:
* simplex: the sort-based projection of Held, Wolfe & Crowder (1974) /
  Duchi et al. (2008), once in float64 NumPy and once in exact rational
  arithmetic (``fractions.Fraction``) for small adversarial vectors;
* L1 ball: v if ‖v‖₁ ≤ r, else sign(v)·(simplex projection of |v|);
* L2 ball: radial scaling; box: ``np.clip``.
Optimality is checked with the variational inequality ⟨v − p, w − p⟩ ≤ 0 for
all w ∈ C, evaluated exactly through the support function of C.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fasterm as fe
from fasterm.erm import _projections

EPS64 = np.finfo(np.float64).eps
EPS32 = float(np.finfo(np.float32).eps)

# ----------------------------------------------------------------------------
# Reference implementations
# ----------------------------------------------------------------------------


def simplex_sort_ref(v, s):
    """Sort-based projection onto {w >= 0, sum w = s} (Held–Wolfe–Crowder)."""
    v = np.asarray(v, dtype=np.float64)
    u = np.sort(v)[::-1]
    css = np.cumsum(u)
    j = np.arange(1, v.size + 1)
    rho = np.nonzero(u - (css - s) / j > 0)[0][-1]
    tau = (css[rho] - s) / (rho + 1)
    return np.maximum(v - tau, 0.0)


def simplex_exact(v, s):
    """The same algorithm in exact rational arithmetic; returns Fractions."""
    y = [Fraction(float(x)) for x in v]
    s = Fraction(float(s))
    css, tau = Fraction(0), None
    for j, uj in enumerate(sorted(y, reverse=True), start=1):
        css += uj
        t = (css - s) / j
        if uj > t:
            tau = t
    return [max(x - tau, Fraction(0)) for x in y]


def l1_exact(v, r):
    y = [Fraction(float(x)) for x in v]
    if sum(abs(x) for x in y) <= Fraction(float(r)):
        return y
    p = simplex_exact([abs(x) for x in y], r)
    return [pi if x >= 0 else -pi for pi, x in zip(p, y)]


def l1_ref(v, r):
    v = np.asarray(v, dtype=np.float64)
    if np.abs(v).sum() <= r:
        return v.copy()
    return np.sign(v) * simplex_sort_ref(np.abs(v), r)


def l2_ball_ref(v, R, c):
    v = np.asarray(v, dtype=np.float64)
    d = v - c
    n = np.linalg.norm(d)
    return v.copy() if n <= R else c + d * (R / n)


def as_float(fracs):
    return np.array([float(f) for f in fracs])


# ----------------------------------------------------------------------------
# Adversarial inputs
# ----------------------------------------------------------------------------


def adversarial_vectors(rng):
    """(vector, total) pairs that stress ties, scale and degenerate cases."""
    cases = []
    for d in (1, 2, 3, 5, 17):
        for scale in (1e-150, 1e-8, 1.0, 1e8, 1e150):
            for s in (1e-3, 1.0, 1e3):
                cases.append((scale * rng.standard_normal(d), s))
        cases += [
            (np.zeros(d), 1.0),
            (np.full(d, 3.25), 1.0),  # all equal
            (np.full(d, -1e20), 1.0),
            (np.full(d, 1e20), 1.0),  # all equal, |v| >> s
            (rng.integers(-2, 3, d).astype(float), 1.0),  # many ties
            (rng.integers(-2, 3, d).astype(float) * 1e18, 2.0),
            (rng.dirichlet(np.ones(d)) * 2.5, 2.5),  # already in the simplex
            (np.eye(d)[d // 2] * 1e30, 1.0),  # one nonzero, huge
            (np.eye(d)[0] * 1e-30, 1.0),  # one nonzero, tiny
            (np.eye(d)[-1] * -7.0, 0.5),
            (np.full(d, 0.2) + 1e-17 * rng.standard_normal(d), 1.0),
        ]
    cases += [
        (np.array([1e20, 1e20, 0.0]), 1.0),  # tie at a maximum far above s
        (np.array([1e20, 1e20 - 16384.0, 1e20 + 16384.0]), 1.0),  # adjacent doubles
        (np.array([1.0, 1.0, 0.5]), 1.0),  # an entry exactly at the threshold
        (np.array([5e-324, 0.0, -5e-324]), 1e-300),  # subnormals
        (np.array([1.7e308, -1.7e308, 1e308]), 1.7e308),  # overflowing intermediates
        (np.full(10, -1.5e308), 1.5e308),
        (np.full(1000, 1e305), 1e308),
        (np.array([1e300, 1.0, -1e300]), 1e-300),
    ]
    return cases


ADVERSARIAL = adversarial_vectors(np.random.default_rng(20240601))


def _fits_float32(v, s):
    with np.errstate(over="ignore"):
        return bool(np.all(np.isfinite(v.astype(np.float32)))) and 0 < np.float32(s) < np.inf


ADVERSARIAL32 = [
    (v.astype(np.float32), float(np.float32(s))) for v, s in ADVERSARIAL if _fits_float32(v, s)
]


def check_close_exact(p, exact, s, d, eps):
    """Elementwise error within a few ulps of the total s per active entry."""
    exact = as_float(exact)
    tol = 8.0 * (d + 2) * eps * s
    np.testing.assert_allclose(p, exact, rtol=0, atol=tol)


# ----------------------------------------------------------------------------
# Simplex
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", range(len(ADVERSARIAL)))
def test_simplex_adversarial_matches_exact(case):
    v, s = ADVERSARIAL[case]
    p = fe.Simplex(v.size, total=s).project(v)
    assert p.dtype == np.float64
    assert np.all(p >= 0)
    check_close_exact(p, simplex_exact(v, s), s, v.size, EPS64)
    # The constraint itself holds to rounding, whatever the magnitude of v.
    assert abs(math.fsum(p) - s) <= 8.0 * (v.size + 2) * EPS64 * s


@pytest.mark.parametrize("case", range(len(ADVERSARIAL32)))
def test_simplex_adversarial_float32(case):
    v32, s32 = ADVERSARIAL32[case]
    p = fe.Simplex(v32.size, total=s32).project(v32)
    assert p.dtype == np.float32
    assert np.all(p >= 0)
    exact = simplex_exact(v32, s32)
    np.testing.assert_allclose(p, as_float(exact), rtol=0, atol=4 * EPS32 * s32)


def test_simplex_random_matches_sort_reference():
    rng = np.random.default_rng(1)
    for d in (1, 2, 10, 100, 1000, 20000):
        for s in (0.1, 1.0, 50.0):
            v = rng.standard_normal(d) * rng.choice([0.01, 1.0, 100.0])
            p = fe.Simplex(d, total=s).project(v)
            np.testing.assert_allclose(p, simplex_sort_ref(v, s), rtol=0, atol=64 * d * EPS64 * s)
            assert np.all(p >= 0)


def test_simplex_sum_to_a_few_ulps_with_large_active_sets():
    # Every entry active: the threshold comes from a sum over 2e5 shifted
    # entries z_i = v_i - max v, and the output sum is exact up to rounding
    # of that threshold, eps·(total + Σ|z_i|), if the sum itself is exact
    # (a plain running sum would be off by ~sqrt(d) times more).
    rng = np.random.default_rng(16)
    d = 200_000
    for v, s in [
        (rng.dirichlet(np.ones(d)), 1.0),
        (rng.dirichlet(np.ones(d)) * 3e4 + 1.0, 3e4 + d),
        (0.5 + 1e-7 * rng.standard_normal(d), 7.0),
    ]:
        p = fe.Simplex(d, total=s).project(v)
        scale = s + np.abs(v - v.max()).sum()
        assert abs(math.fsum(p) - s) <= 8 * EPS64 * scale
        np.testing.assert_allclose(p, simplex_sort_ref(v, s), rtol=0, atol=1e-9 * s / d)


def test_simplex_float32_agrees_with_float64():
    rng = np.random.default_rng(2)
    for d in (3, 100, 5000):
        v = rng.standard_normal(d)
        C = fe.Simplex(d)
        p64 = C.project(v)
        p32 = C.project(v.astype(np.float32))
        # Nonexpansiveness: ‖Π(v32) − Π(v)‖ ≤ ‖v32 − v‖, plus output rounding.
        bound = np.linalg.norm(v.astype(np.float32) - v) + 4 * EPS32 * math.sqrt(d)
        assert np.linalg.norm(p32.astype(np.float64) - p64) <= bound
        np.testing.assert_allclose(p32, p64, rtol=0, atol=8 * EPS32)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    v=st.lists(
        st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False),
        min_size=1,
        max_size=12,
    ),
    s=st.floats(min_value=1e-200, max_value=1e200),
)
def test_simplex_property_exact(v, s):
    v = np.array(v)
    p = fe.Simplex(v.size, total=s).project(v)
    assert np.all(p >= 0)
    check_close_exact(p, simplex_exact(v, s), s, v.size, EPS64)


# ----------------------------------------------------------------------------
# L1 ball
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", range(len(ADVERSARIAL)))
def test_l1_ball_adversarial_matches_exact(case):
    v, r = ADVERSARIAL[case]
    p = fe.L1Ball(r, v.size).project(v)
    exact = l1_exact(v, r)
    if sum(abs(Fraction(float(x))) for x in v) <= Fraction(r):
        np.testing.assert_array_equal(p, v)  # inside: returned unchanged
    else:
        check_close_exact(p, exact, r, v.size, EPS64)
        assert np.all(np.sign(p) * np.sign(v) >= 0)  # signs are kept
        assert math.fsum(np.abs(p)) <= r * (1 + 8 * (v.size + 2) * EPS64)


def test_l1_ball_random_matches_reference():
    rng = np.random.default_rng(3)
    for d in (1, 2, 10, 1000, 20000):
        for r in (0.1, 1.0, 10.0, 1e6):
            v = rng.standard_normal(d)
            for dt, tol in ((np.float64, 64 * d * EPS64), (np.float32, 8 * EPS32)):
                p = fe.L1Ball(r, d).project(v.astype(dt))
                assert p.dtype == dt
                ref = l1_ref(v.astype(dt), r)
                np.testing.assert_allclose(p, ref, rtol=0, atol=tol * r)


@settings(max_examples=100, derandomize=True, deadline=None)
@given(
    v=st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=10),
    r=st.floats(min_value=1e-6, max_value=1e6),
)
def test_l1_ball_property_exact(v, r):
    v = np.array(v)
    p = fe.L1Ball(r, v.size).project(v)
    check_close_exact(p, l1_exact(v, r), r, v.size, EPS64)


# ----------------------------------------------------------------------------
# L2 ball and box
# ----------------------------------------------------------------------------


def test_l2_ball_matches_reference():
    rng = np.random.default_rng(4)
    for d in (1, 2, 7, 500):
        for R in (1e-3, 1.0, 30.0):
            for center in (None, rng.standard_normal(d)):
                C = fe.L2Ball(R, d, center=center)
                c = np.zeros(d) if center is None else center
                for scale in (1e-3, 1.0, 1e3):
                    v = c + scale * rng.standard_normal(d)
                    np.testing.assert_allclose(
                        C.project(v), l2_ball_ref(v, R, c), rtol=1e-14, atol=1e-14 * R
                    )
                    v32 = v.astype(np.float32)
                    p32 = C.project(v32)
                    assert p32.dtype == np.float32
                    ref32 = l2_ball_ref(v32.astype(np.float64), R, c)
                    np.testing.assert_allclose(p32, ref32, rtol=4 * EPS32, atol=4 * EPS32 * (R + np.abs(c).max()))


def test_l2_ball_extreme_magnitudes():
    # Squares that overflow or underflow take the rescaled path.
    p = fe.L2Ball(1.0, 2).project(np.array([1e200, 1e200]))
    np.testing.assert_allclose(p, [math.sqrt(0.5)] * 2, rtol=1e-15)
    p = fe.L2Ball(1e-300, 2).project(np.array([3e-200, -4e-200]))
    np.testing.assert_allclose(p, [0.6e-300, -0.8e-300], rtol=1e-14)
    C = fe.L2Ball(1.0, 3, center=np.full(3, -1e308))
    p = C.project(np.full(3, 1e308))
    np.testing.assert_allclose(p, np.full(3, -1e308), rtol=1e-15)
    assert C.contains(p)
    v = np.array([3e-170, 4e-170])  # tiny but outside a tinier ball
    np.testing.assert_allclose(fe.L2Ball(1e-250, 2).project(v), [0.6e-250, 0.8e-250], rtol=1e-14)
    np.testing.assert_array_equal(fe.L2Ball(1.0, 2).project(v), v)


def test_box_matches_clip():
    rng = np.random.default_rng(5)
    for d in (1, 4, 300):
        lo = rng.standard_normal(d)
        hi = lo + rng.exponential(size=d)
        hi[0] = lo[0]  # a degenerate coordinate
        v = 3 * rng.standard_normal((5, d))
        for dt in (np.float64, np.float32):
            vv = v.astype(dt)
            p = fe.Box(lo, hi, d).project(vv)
            assert p.dtype == dt
            np.testing.assert_array_equal(p, np.clip(vv, lo.astype(dt), hi.astype(dt)))
            p = fe.Box(-0.5, 2, d).project(vv)
            np.testing.assert_array_equal(p, np.clip(vv, dt(-0.5), dt(2.0)))


# ----------------------------------------------------------------------------
# Optimality: <v - p, w - p> <= 0 for every w in C
# ----------------------------------------------------------------------------


def support_gap(C, v, p):
    """max_{w ∈ C} ⟨v − p, w − p⟩ (exactly, via the support function), and its scale."""
    g, p = v - p, p.astype(np.float64)
    gp = float(g @ p)
    if isinstance(C, fe.Simplex):
        top = C.total * g.max()
    elif isinstance(C, fe.L1Ball):
        top = C.radius * np.abs(g).max()
    elif isinstance(C, fe.Box):
        top = float(np.maximum(g * C.low, g * C.high).sum())
    else:
        top = float(g @ C.center) + C.radius * np.linalg.norm(g)
    return top - gp, abs(top) + abs(gp) + np.abs(g).sum() * np.abs(p).max()


def some_sets(d, rng):
    return [
        fe.L2Ball(1.5, d),
        fe.L2Ball(0.7, d, center=rng.standard_normal(d)),
        fe.Box(-0.3, 0.8, d),
        fe.Box(-rng.exponential(size=d), rng.exponential(size=d), d),
        fe.Simplex(d),
        fe.Simplex(d, total=4.0),
        fe.L1Ball(2.0, d),
    ]


def random_points_in(C, rng, k):
    """Points of C: projections of wide random vectors and of points near the centre."""
    wide = C.project(5 * rng.standard_normal((k, C.dim)) + C.center)
    near = C.center + 0.01 * (C.project(rng.standard_normal((k, C.dim))) - C.center)
    return np.vstack([wide, near])


@pytest.mark.parametrize("d", [1, 2, 9, 200])
def test_projection_optimality(d):
    rng = np.random.default_rng(6 + d)
    for C in some_sets(d, rng):
        W = random_points_in(C, rng, 20)
        for scale in (0.1, 1.0, 10.0):
            for v in scale * rng.standard_normal((10, d)):
                p = C.project(v)
                assert C.contains(p)
                gap, mag = support_gap(C, v, p)
                assert gap <= 64 * d * EPS64 * mag, (C, gap, mag)
                vi = ((v - p) * (W - p)).sum(axis=1)
                assert np.all(vi <= 64 * d * EPS64 * (np.abs(v - p).sum() * np.abs(W - p).max() + 1e-300))


def test_projection_is_idempotent_on_points_of_c():
    rng = np.random.default_rng(7)
    for C in some_sets(6, rng):
        W = random_points_in(C, rng, 10)
        np.testing.assert_allclose(C.project(W), W, rtol=0, atol=1e-14 * (1 + C.radius))


# ----------------------------------------------------------------------------
# Batches, out=, in place, input untouched
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batch_equals_rows_and_out_semantics(dtype):
    rng = np.random.default_rng(8)
    d = 50
    for C in some_sets(d, rng):
        V = (3 * rng.standard_normal((7, d))).astype(dtype)
        V_before = V.copy()
        P = C.project(V)
        np.testing.assert_array_equal(V, V_before)  # input untouched
        assert P.dtype == dtype and P.shape == V.shape
        rows = np.stack([C.project(row) for row in V])
        np.testing.assert_array_equal(P, rows)

        out = np.full_like(V, np.nan)
        assert C.project(V, out=out) is out
        np.testing.assert_array_equal(out, P)

        W = V.copy()
        assert C.project(W, out=W) is W  # batch in place
        np.testing.assert_array_equal(W, P)
        w0 = V[3].copy()
        C.project(w0, out=w0)  # vector in place
        np.testing.assert_array_equal(w0, P[3])

        empty = C.project(np.empty((0, d), dtype=dtype))
        assert empty.shape == (0, d) and empty.dtype == dtype


def test_in_place_large_vector_and_overlap():
    rng = np.random.default_rng(9)
    d = 5000
    v = rng.standard_normal(d)
    for C in (fe.Simplex(d), fe.L1Ball(3.0, d)):
        expected = C.project(v)
        w = v.copy()
        C.project(w, out=w)  # in place needs the kernel's own scratch
        np.testing.assert_array_equal(w, expected)
        # out overlapping v with an offset: must not read what it wrote.
        buf = np.concatenate([v, [0.0]])
        src, dst = buf[:d], buf[1:]
        C.project(src, out=dst)
        np.testing.assert_array_equal(dst, expected)


def test_integer_and_bool_input_give_float64():
    C = fe.Simplex(3)
    p = C.project(np.array([3, 1, 0]))
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, [1.0, 0.0, 0.0])
    assert C.project([True, False, True]).dtype == np.float64
    assert fe.Box(0, 1, 2).project(np.array([2, -1], dtype=np.int8)).tolist() == [1.0, 0.0]


# ----------------------------------------------------------------------------
# diameter, radius, center, contains
# ----------------------------------------------------------------------------


def vertices(C):
    d = C.dim
    if isinstance(C, fe.Simplex):
        return C.total * np.eye(d)
    if isinstance(C, fe.L1Ball):
        return C.radius * np.vstack([np.eye(d), -np.eye(d)])
    if isinstance(C, fe.Box):
        return np.array([np.where(bits, C.high, C.low) for bits in itertools.product([0, 1], repeat=d)])
    raise TypeError


def max_pairwise(P):
    return max(np.linalg.norm(P - p, axis=1).max() for p in P)


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_diameter_and_radius_brute_force_polytopes(d):
    rng = np.random.default_rng(10 + d)
    sets = [
        fe.Simplex(d, total=2.5),
        fe.L1Ball(0.75, d),
        fe.Box(-1.0, 3.0, d),
        fe.Box(rng.standard_normal(d) - 1, rng.standard_normal(d) + 1.5, d),
    ]
    for C in sets:
        V = vertices(C)
        assert C.diameter == pytest.approx(max_pairwise(V), rel=1e-14, abs=1e-300)
        assert C.norm_bound == pytest.approx(np.linalg.norm(V, axis=1).max(), rel=1e-14)
        # Sampled points of C never exceed the norm bound or the diameter.
        W = random_points_in(C, rng, 500)
        assert np.linalg.norm(W, axis=1).max() <= C.norm_bound * (1 + 1e-12)
        assert max_pairwise(W[:200]) <= C.diameter * (1 + 1e-12) + 1e-15


def test_diameter_radius_center_values():
    c = np.array([3.0, -4.0])
    B = fe.L2Ball(2.0, 2, center=c)
    assert B.diameter == 4.0 and B.radius == 2.0
    assert B.norm_bound == pytest.approx(7.0)  # ‖c‖ + R
    assert B.contains(c + 2.0 * c / 5.0)  # the farthest point is in the ball
    np.testing.assert_array_equal(B.center, c)
    assert fe.L2Ball(2.0, 3).radius == 2.0
    assert fe.Simplex(1, total=3.0).diameter == 0.0
    assert fe.Simplex(5, total=3.0).diameter == pytest.approx(3.0 * math.sqrt(2))
    np.testing.assert_allclose(fe.Simplex(4, total=2.0).center, [0.5] * 4)
    np.testing.assert_array_equal(fe.L1Ball(1.0, 3).center, np.zeros(3))
    np.testing.assert_array_equal(fe.Box([0.0, -2.0], [1.0, 2.0], 2).center, [0.5, 0.0])
    assert fe.Box(1e308, 1.5e308, 1).center[0] == 1.25e308  # no overflow in (lo + hi)/2
    # center is a copy: mutating it does not change the set
    S = fe.Simplex(3)
    S.center[0] = 7.0
    np.testing.assert_allclose(S.center, [1 / 3] * 3)


def test_ball_norm_bound_brute_force_sampling():
    rng = np.random.default_rng(12)
    c = np.array([0.6, -0.8])
    B = fe.L2Ball(0.5, 2, center=c)
    u = rng.standard_normal((20000, 2))
    pts = c + 0.5 * u / np.linalg.norm(u, axis=1, keepdims=True) * rng.uniform(0, 1, (20000, 1)) ** 0.5
    norms = np.linalg.norm(pts, axis=1)
    assert norms.max() <= B.norm_bound * (1 + 1e-12)
    assert norms.max() >= B.norm_bound * 0.999
    assert max_pairwise(B.project(10 * u[:300])) == pytest.approx(B.diameter, rel=1e-3)


def test_center_is_inside_and_contains():
    rng = np.random.default_rng(13)
    for d in (1, 3, 50):
        for C in some_sets(d, rng):
            assert C.contains(C.center)
            V = 20 + 10 * np.abs(rng.standard_normal((20, d)))
            inside = C.contains(V)
            assert inside.shape == (20,) and inside.dtype == bool
            assert not inside.any()
            assert C.contains(C.project(V)).all()
            assert C.contains(C.project(V.astype(np.float32))).all()
            bad = C.center.copy()
            bad[0] = np.nan
            assert C.contains(bad) is False
    S = fe.Simplex(3)
    assert S.contains([0.5, 0.5, 0.0]) is True
    assert not S.contains([0.5, 0.5, 1e-6])
    assert S.contains([0.5, 0.5, 1e-6], atol=1e-5)
    assert not S.contains([1.0, 1e-9, -1e-9], atol=0)
    assert not fe.L1Ball(1.0, 2).contains([0.5, -0.6])
    assert fe.Box(0, 1, 2).contains([1.0, 0.0], atol=0)


# ----------------------------------------------------------------------------
# chord
# ----------------------------------------------------------------------------


def brute_force_chord(C, w, u, t_far):
    """Endpoints of {t : w + t u ∈ C} by bisection on exact membership."""

    def inside(t):
        x = w + t * u
        if isinstance(C, fe.Simplex):
            # The line stays in the hyperplane; its rounded sum is not exact.
            return bool(np.all(x >= 0))
        return C.contains(x, atol=0)

    def bisect(a, b):  # inside(a), not inside(b)
        for _ in range(200):
            m = 0.5 * (a + b)
            a, b = (m, b) if inside(m) else (a, m)
        return a

    return bisect(0.0, -t_far), bisect(0.0, t_far)


def random_direction(C, rng):
    u = rng.standard_normal(C.dim)
    if isinstance(C, fe.Simplex):
        u -= u.mean()
    return u


@pytest.mark.parametrize("d", [1, 2, 5, 40])
def test_chord_endpoints_on_boundary(d):
    rng = np.random.default_rng(14 + d)
    for C in some_sets(d, rng):
        if isinstance(C, fe.Simplex) and d == 1:
            continue  # a single point: no direction within the hyperplane
        starts = [C.center] + list(C.center + 0.5 * (random_points_in(C, rng, 3)[:3] - C.center))
        for w in starts:
            u = random_direction(C, rng)
            t0, t1 = C.chord(w, u)
            assert t0 <= 0 <= t1 and t0 < t1
            span = t1 - t0
            for t in (t0, t1, 0.5 * (t0 + t1)):
                assert C.contains(w + t * u)
            assert not C.contains(w + (t1 + 1e-6 * span) * u, atol=0)
            assert not C.contains(w + (t0 - 1e-6 * span) * u, atol=0)
            b0, b1 = brute_force_chord(C, w, u, 10 * (C.diameter + 1) / np.linalg.norm(u))
            assert t0 == pytest.approx(b0, abs=1e-9 * span)
            assert t1 == pytest.approx(b1, abs=1e-9 * span)


def test_chord_from_outside_and_missing_lines():
    ball = fe.L2Ball(1.0, 2)
    assert ball.chord([-3.0, 0.0], [1.0, 0.0]) == pytest.approx((2.0, 4.0))
    assert ball.chord([0.0, 1.0], [1.0, 0.0]) == pytest.approx((0.0, 0.0))  # tangent
    with pytest.raises(ValueError, match="does not meet"):
        ball.chord([0.0, 2.0], [1.0, 0.0])
    box = fe.Box(0.0, 1.0, 2)
    assert box.chord([-1.0, 0.5], [2.0, 0.0]) == pytest.approx((0.5, 1.0))
    with pytest.raises(ValueError, match="does not meet"):
        box.chord([0.5, 2.0], [1.0, 0.0])
    l1 = fe.L1Ball(1.0, 2)
    assert l1.chord([-2.0, 0.0], [1.0, 0.0]) == pytest.approx((1.0, 3.0))
    assert l1.chord([0.0, 0.0], [1.0, 1.0]) == pytest.approx((-0.5, 0.5))
    assert l1.chord([0.5, 0.5], [1.0, -1.0]) == pytest.approx((-0.5, 0.5))  # along a face
    with pytest.raises(ValueError, match="does not meet"):
        l1.chord([2.0, 2.0], [1.0, -1.0])
    S = fe.Simplex(3)
    assert S.chord([1 / 3] * 3, [1.0, -1.0, 0.0]) == pytest.approx((-1 / 3, 1 / 3))
    with pytest.raises(ValueError, match="sum"):
        S.chord([1 / 3] * 3, [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="sum"):
        S.chord([1.0] * 3, [1.0, -1.0, 0.0])
    with pytest.raises(ValueError, match="u"):
        S.chord([1 / 3] * 3, [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="w"):
        S.chord([1 / 3] * 2, [1.0, -1.0, 0.0])


def test_l1_chord_against_dense_scan():
    rng = np.random.default_rng(15)
    C = fe.L1Ball(1.3, 6)
    for _ in range(20):
        w = 0.4 * rng.standard_normal(6)
        u = rng.standard_normal(6)
        u[rng.integers(6)] = 0.0  # a coordinate the line does not move
        try:
            t0, t1 = C.chord(w, u)
        except ValueError:
            ts = np.linspace(-20, 20, 200001)
            assert np.abs(w + ts[:, None] * u).sum(axis=1).min() > 1.3
            continue
        for t in (t0, t1):
            assert np.abs(w + t * u).sum() == pytest.approx(1.3, rel=1e-12)
        ts = np.linspace(t0 - 1, t1 + 1, 20001)
        inside = np.abs(w + ts[:, None] * u).sum(axis=1) <= 1.3
        assert ts[inside].min() >= t0 - 1e-12 and ts[inside].max() <= t1 + 1e-12


# ----------------------------------------------------------------------------
# Parameter validation
# ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, exc, name",
    [
        (lambda: fe.L2Ball(0.0, 3), ValueError, "radius"),
        (lambda: fe.L2Ball(-1.0, 3), ValueError, "radius"),
        (lambda: fe.L2Ball(np.nan, 3), ValueError, "radius"),
        (lambda: fe.L2Ball(np.inf, 3), ValueError, "radius"),
        (lambda: fe.L2Ball("1", 3), TypeError, "radius"),
        (lambda: fe.L2Ball(1j, 3), TypeError, "radius"),
        (lambda: fe.L2Ball(1.0, 0), ValueError, "dim"),
        (lambda: fe.L2Ball(1.0, 2.5), TypeError, "dim"),
        (lambda: fe.L2Ball(1.0, True), TypeError, "dim"),
        (lambda: fe.L2Ball(1.0, 3, center=[1.0, 2.0]), ValueError, "center"),
        (lambda: fe.L2Ball(1.0, 2, center=[1.0, np.nan]), ValueError, "center"),
        (lambda: fe.L2Ball(1.0, 2, center=[1j, 0]), TypeError, "center"),
        (lambda: fe.Box(1.0, 0.0, 3), ValueError, "low"),
        (lambda: fe.Box([0.0, 2.0], [1.0, 1.0], 2), ValueError, "low"),
        (lambda: fe.Box(np.zeros(2), 1.0, 3), ValueError, "low"),
        (lambda: fe.Box(0.0, np.inf, 3), ValueError, "high"),
        (lambda: fe.Box(0.0, [1.0, np.nan], 2), ValueError, "high"),
        (lambda: fe.Box(0.0, "a", 2), TypeError, "high"),
        (lambda: fe.Box(0.0, 1.0, -1), ValueError, "dim"),
        (lambda: fe.Simplex(0), ValueError, "dim"),
        (lambda: fe.Simplex(3.0), TypeError, "dim"),
        (lambda: fe.Simplex(3, total=0.0), ValueError, "total"),
        (lambda: fe.Simplex(3, total=np.nan), ValueError, "total"),
        (lambda: fe.L1Ball(-2.0, 3), ValueError, "radius"),
        (lambda: fe.L1Ball(1.0, None), TypeError, "dim"),
    ],
)
def test_bad_parameters(make, exc, name):
    with pytest.raises(exc, match=name):
        make()


@pytest.mark.parametrize("C", [fe.L2Ball(1.0, 3), fe.Box(0, 1, 3), fe.Simplex(3), fe.L1Ball(1.0, 3)])
def test_bad_project_arguments(C):
    with pytest.raises(ValueError, match="v"):
        C.project(np.zeros(4))
    with pytest.raises(ValueError, match="v"):
        C.project(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="v"):
        C.project(np.zeros((2, 2, 3)))
    with pytest.raises(ValueError, match="v"):
        C.project(np.array(1.0))
    with pytest.raises(ValueError, match="v"):
        C.project(np.array([1.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="v"):
        C.project(np.array([1.0, np.inf, 0.0]))
    with pytest.raises(TypeError, match="v"):
        C.project(np.zeros(3, dtype=complex))
    with pytest.raises(TypeError, match="v"):
        C.project(np.array([1.0, None, 2.0], dtype=object))
    with pytest.raises(TypeError, match="v"):
        C.project("abc")
    with pytest.raises(TypeError, match="out"):
        C.project(np.zeros(3), out=np.zeros(3, dtype=np.float32))
    with pytest.raises(ValueError, match="out"):
        C.project(np.zeros(3), out=np.zeros(4))
    with pytest.raises(ValueError, match="out"):
        C.project(np.zeros((2, 3)), out=np.zeros((3, 2)).T)
    with pytest.raises(TypeError, match="out"):
        C.project(np.zeros(3), out=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="w"):
        C.chord(np.zeros(2), np.ones(3))
    with pytest.raises(ValueError, match="u"):
        C.chord(C.center, np.zeros(3))
    with pytest.raises(ValueError, match="atol"):
        C.contains(C.center, atol=-1.0)


def test_private_kernels_reject_inconsistent_buffers():
    v = np.zeros((2, 3))
    with pytest.raises(ValueError, match="shape"):
        _projections.simplex(v, np.zeros((3, 3)), 1.0)
    with pytest.raises(ValueError, match="shape"):
        _projections.l1_ball(v, np.zeros((2, 2)), 1.0)
    with pytest.raises((ValueError, TypeError)):
        _projections.simplex(v, np.zeros((2, 3), dtype=np.float32), 1.0)
    with pytest.raises(ValueError, match="total"):
        _projections.simplex(v, np.zeros((2, 3)), 0.0)
    with pytest.raises(ValueError, match="center"):
        _projections.l2_ball(v, np.zeros((2, 3)), np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="low"):
        _projections.box(v, np.zeros((2, 3)), np.zeros(2), np.ones(2))
    with pytest.raises(ValueError, match="contiguous"):
        _projections.simplex(np.zeros(6)[::2], np.zeros(3), 1.0)


def test_repr():
    assert repr(fe.L2Ball(1.0, 3)) == "L2Ball(radius=1.0, dim=3)"
    assert repr(fe.L2Ball(2, 2, center=[1, 0])) == "L2Ball(radius=2.0, dim=2, center=[1., 0.])"
    assert repr(fe.Box(0, 1, 4)) == "Box(low=0.0, high=1.0, dim=4)"
    assert repr(fe.Simplex(3)) == "Simplex(dim=3, total=1.0)"
    assert repr(fe.L1Ball(0.5, 10)) == "L1Ball(radius=0.5, dim=10)"
    assert "..." in repr(fe.Box(np.zeros(100), np.ones(100), 100))
