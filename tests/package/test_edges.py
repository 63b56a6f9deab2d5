"""Privacy edges (issue #15): per-example queries, no silent float fallback in secure
mode, float32 noise scales rounded up, huge labels with float32 X, independent
streams in ``python -m fasterm``, and the Laplace sampler as documented."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import fasterm as fe
from fasterm import learning, mechanisms, noise, online
from fasterm.erm import _backends, _engine, _losses
from fasterm.mechanisms import _noise
from fasterm import __main__ as job
from fasterm.audit import epsilon_lower_bound


# ---------------------------------------------------------------------------
# 1. Statistical queries are functions of one example
# ---------------------------------------------------------------------------
def _max_label(X, y):
    # mixes examples when given the whole sample: sensitivity 1, not 1/n
    return y.max()


def _pair(n):
    X = np.zeros((n, 2))
    y_d = np.zeros(n)
    y_dp = y_d.copy()
    y_dp[0] = 1.0
    return X, y_d, y_dp


def test_sq_issue_pair_no_longer_separates():
    # The reproduction of the issue: n = 100, eps = 1, phi = y.max(), labels all
    # 0 versus one 1, 2000 seeds.  Applied to the whole sample the answers were
    # 0 + Lap(0.01) versus 1 + Lap(0.01): above 0.5 in 0% versus 100% of runs.
    # Called per example, phi is y_i and the means differ by 1/n (one noise scale).
    X, y_d, y_dp = _pair(100)
    ans = {}
    for name, y in (("d", y_d), ("dp", y_dp)):
        ans[name] = np.array([learning.SQOracle(X, y, 1.0, max_queries=1, random_state=s).query(_max_label)
                              for s in range(2000)])
    assert np.mean(ans["d"] > 0.5) == 0.0 and np.mean(ans["dp"] > 0.5) == 0.0
    # the two answer distributions are Laplace(0, b) and Laplace(1/n, b), b = 1/n
    b = 0.01
    for name, centre in (("d", 0.0), ("dp", 0.01)):
        assert abs(np.median(ans[name]) - centre) < 0.1 * b * 4


@pytest.mark.parametrize("secure", [False, True])
def test_sq_audit_worst_case_pair_stays_below_claim(secure):
    # Worst case for a per-example query: one label flips 0 -> 1, so the mean
    # moves by exactly the sensitivity 1/n.  One oracle answers m queries with
    # eps0 = 1 each (basic composition, eps = m); each answer is one run of the
    # eps0-DP mechanism, audited against the eps0 the oracle reports.  With phi
    # applied to the whole sample (the old oracle) the answers were 0 and 1 at
    # noise scale 0.1: a lower bound far above 1.
    n, m = 10, 8000
    X, y_d, y_dp = _pair(n)
    outs = []
    for y, seed in ((y_d, 40), (y_dp, 41)):
        kw = dict(secure=True) if secure else {}
        oracle = learning.SQOracle(X, y, float(m), max_queries=m, random_state=seed, **kw)
        outs.append(np.array([oracle.query(_max_label) for _ in range(m)]))
    claimed = oracle.epsilon_per_query
    assert claimed <= 1.0
    lb = epsilon_lower_bound(*outs).epsilon_lb
    assert lb <= claimed
    assert lb > 0.4  # the audit has power: the pair attains the sensitivity


def test_sq_phi_is_called_on_one_example_at_a_time():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 3)), (rng.random(30) > 0.5).astype(float)
    shapes = []

    def phi(Xi, yi):
        shapes.append((Xi.shape, yi.shape))
        return (Xi[:, 0] > 0) == (yi == 1)

    oracle = learning.SQOracle(X, y, 1.0, max_queries=3, random_state=0)
    got = oracle.query(phi)
    assert shapes == [((1, 3), (1,))] * 30
    want = np.mean((X[:, 0] > 0) == (y == 1)) + noise.laplace(1, oracle.noise_scale, random_state=0)[0]
    assert got == pytest.approx(want, abs=1e-15)
    # a result that is not one value per example is refused (before any noise is spent)
    with pytest.raises(ValueError, match="one value per example"):
        oracle.query(lambda Xi, yi: np.zeros(2))
    with pytest.raises(TypeError, match="phi"):
        oracle.query(lambda Xi, yi: "a")
    assert oracle.queries_answered == 1


def test_pac_learner_from_callables_applies_each_hypothesis_per_example():
    # Labels all 0.  h_mix predicts 1 for every row as soon as *some* x exceeds
    # 0.5 (it mixes examples); h_half errs on half the rows (column 1 is an id).
    # D: all x = 0; D': one x = 0.9.  Applied to the whole X, h_mix's error
    # jumps from 0 to 1 between the neighbours (sensitivity 1, not 1/n) and the
    # choice flips from h_mix to h_half almost surely; per example its error
    # moves by 1/n and h_mix stays the likely choice on both.
    n, eps = 100, 1.0
    X_d = np.column_stack([np.zeros(n), np.arange(n) / n])
    X_dp = X_d.copy()
    X_dp[0, 0] = 0.9
    y = np.zeros(n)
    h_mix = lambda X: np.full(len(X), float(X[:, 0].max() > 0.5))  # noqa: E731
    h_half = lambda X: (X[:, 1] < 0.5).astype(float)  # noqa: E731
    pick = {}
    for name, X in (("d", X_d), ("dp", X_dp)):
        pick[name] = np.mean([learning.private_pac_learner_from_callables([h_mix, h_half], X, y, eps,
                                                                         random_state=s)[0] == 0
                              for s in range(300)])
    assert pick["d"] > 0.99 and pick["dp"] > 0.99
    with pytest.raises(ValueError, match="hypothesis 1"):
        learning.private_pac_learner_from_callables([h_half, lambda X: np.zeros(3)], X_d, y, eps)


# ---------------------------------------------------------------------------
# 3. Secure mode never falls back to a floating-point sampler
# ---------------------------------------------------------------------------
def test_sq_oracle_secure_answers_are_the_secure_laplace_release():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((64, 2)), (rng.random(64) > 0.5).astype(float)
    phi = lambda Xi, yi: yi  # noqa: E731
    with fe.secure_mode():
        oracle = learning.SQOracle(X, y, 2.0, max_queries=4, random_state=7)
    assert oracle.secure
    answers = [oracle.query(phi) for _ in range(4)]  # secure by construction, also outside the block
    # the oracle's answers are exactly mechanisms.laplace(secure=True) of the mean
    # with Δ₁ = 1/n (rounded up) and eps0 = eps/m, drawn from the same stream
    twin = np.random.default_rng(7)
    sens = math.nextafter(1.0 / 64, math.inf)
    want = [mechanisms.laplace(y.mean(), sens, 0.5, random_state=twin, secure=True) for _ in range(4)]
    assert answers == want
    cal = fe.secure.laplace_calibration(sens, 0.5, 1)
    assert all(a / cal.granularity == round(a / cal.granularity) for a in answers)  # on the grid γℤ
    assert oracle.noise_scale == cal.noise_scale >= 1.0 / (64 * 0.5)
    assert oracle.epsilon_per_query == cal.epsilon <= 0.5
    # operating-system entropy, as for the secure mechanisms
    assert isinstance(learning.SQOracle(X, y, 1.0, max_queries=1, random_state="os", secure=True).query(phi), float)


def test_sq_oracle_created_outside_secure_mode_refuses_inside():
    X, y = np.zeros((5, 1)), np.zeros(5)
    oracle = learning.SQOracle(X, y, 1.0, max_queries=2, random_state=0)
    with fe.secure_mode():
        with pytest.raises(ValueError, match="secure mode"):
            oracle.query(lambda Xi, yi: yi)
    assert oracle.queries_answered == 0
    explicit = learning.SQOracle(X, y, 1.0, max_queries=1, random_state=0, secure=False)
    with fe.secure_mode():  # secure=False was asked for explicitly
        assert isinstance(explicit.query(lambda Xi, yi: yi), float)


def _float_samplers():
    x = np.linspace(0.0, 1.0, 11)
    X = np.full((4, 2), 0.1)
    L = np.zeros((3, 4))
    rwm = online.RWM(4, 0.5, random_state=0)  # built outside secure mode, used inside
    prwm = online.PrivateRWM(4, 3, 1.0, 0.0, random_state=0)
    return {
        "median": lambda: fe.median(x, (0.0, 1.0), 1.0, random_state=0),
        "median rank": lambda: fe.median(x, (0.0, 1.0), 1.0, method="rank", random_state=0),
        "mean": lambda: fe.mean(x, (0.0, 1.0), 1.0, random_state=0),
        "quantile": lambda: fe.quantile(x, 0.3, (0.0, 1.0), 1.0, random_state=0),
        "expmech_erm": lambda: fe.expmech_erm(fe.losses.Logistic(), X, np.ones(4), fe.L2Ball(1.0, 2), 1.0,
                                              data_norm=1.0, random_state=0),
        "RWM()": lambda: online.RWM(4, 0.5, random_state=0),
        "RWM.choose": rwm.choose,
        "RWM.run": lambda: rwm.run(L),
        "run_rwm": lambda: online.run_rwm(L, 0.5, random_state=0),
        "PrivateRWM()": lambda: online.PrivateRWM(4, 3, 1.0, 0.0, random_state=0),
        "PrivateRWM.choose": prwm.choose,
        "PrivateRWM.run": lambda: prwm.run(L),
        "linear_learner": lambda: online.linear_learner(np.zeros((5, 3)), 1.0, 1e-5, random_state=0),
    }


@pytest.mark.parametrize("name", list(_float_samplers()))
def test_no_silent_float_fallback_in_secure_mode(name):
    call = _float_samplers()[name]
    call()  # runs outside secure mode
    with fe.secure_mode():
        with pytest.raises(ValueError, match="secure mode"):
            call()
    call = _float_samplers()[name]
    fe.set_secure(True)
    try:
        with pytest.raises(ValueError, match="secure mode"):
            call()
        with fe.secure_mode(False):  # the explicit way to accept the float sampler
            call()
    finally:
        fe.set_secure(False)


def test_not_covered_list_names_every_refusing_function():
    doc = fe.secure.__doc__
    for name in ("median", "mean", "quantile", "expmech_erm", "RWM", "run_rwm", "PrivateRWM",
                 "linear_learner", "SQOracle"):
        assert f"``{name}``" in doc or f"{name}`" in doc, name


# ---------------------------------------------------------------------------
# 4. float32 noise scales are rounded up, never to nearest
# ---------------------------------------------------------------------------
def _capture(monkeypatch, module, name, index):
    seen = []
    orig = getattr(module, name)

    def spy(*args, **kwargs):
        seen.append(args[index])
        return orig(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def test_float32_noisy_pgd_sigma_used_is_at_least_sigma_reported(monkeypatch):
    # 40 float32 Gaussian fits (n varies, so does σ): the σ the compiled loop
    # multiplies by (the scale argument cast to float32) is never below the
    # certified σ.  Round-to-nearest would have gone below it in many fits.
    seen = _capture(monkeypatch, _losses, "pgd_loop", 12)
    rng = np.random.default_rng(0)
    below_nearest = 0
    for k in range(40):
        n = 50 + 7 * k
        X = (rng.standard_normal((n, 3)) / 4).astype(np.float32)
        y = np.sign(rng.standard_normal(n)).astype(np.float32)
        r = fe.noisy_pgd(fe.losses.Logistic(), X, y, fe.L2Ball(1.0, 3), 1.0, 1e-5, steps=3, noise="gaussian",
                         data_norm=1.0, random_state=k)
        used = np.float32(seen[-1])
        assert float(used) == seen[-1]  # exactly representable: the kernel's cast is exact
        assert float(used) >= r.noise_scale
        assert float(used) <= float(np.nextafter(np.float32(r.noise_scale), np.float32(np.inf)))
        below_nearest += float(np.float32(r.noise_scale)) < r.noise_scale
    assert below_nearest >= 5  # the case the fix is about does occur here
    # float64 scales pass through untouched
    r = fe.noisy_pgd(fe.losses.Logistic(), X.astype(np.float64), y.astype(np.float64), fe.L2Ball(1.0, 3), 1.0,
                     1e-5, steps=3, noise="gaussian", data_norm=1.0, random_state=0)
    assert seen[-1] == r.noise_scale


def test_float32_python_loop_scale_rounds_up(monkeypatch):
    # the numpy loop (feasible sets without a compiled projection, dask X)
    seen = _capture(monkeypatch, _noise, "laplace_fill", 2)
    w = np.zeros(2, dtype=np.float32)
    scales = 1.0 + np.arange(1, 200) * 2.0 ** -40  # between two float32 neighbours of 1
    for s in scales:
        backend = _backends.FloatNoise("laplace", "l2", np.random.default_rng(0), float(s))
        _engine.descend(lambda w, out: out.fill(0), w.copy(), fe.L2Ball(1e6, 2), 1, 0.1, scale=0.1,
                        noise=backend, average=False)
    assert all(float(np.float32(u)) >= s for u, s in zip(seen, scales))


@pytest.mark.parametrize("which", ["laplace", "gaussian"])
def test_float32_mechanism_scale_rounds_up(monkeypatch, which):
    seen = _capture(monkeypatch, _noise, f"{which}_fill", 2)
    value = np.zeros(3, dtype=np.float32)
    below_nearest = 0
    for k in range(40):
        sens = 1.0 + k / 7.0
        if which == "laplace":
            out = mechanisms.laplace(value, sens, 0.7, random_state=k)
            scale = sens / 0.7
        else:
            out = mechanisms.gaussian(value, sens, 0.7, 1e-6, random_state=k)
            scale = fe.accounting.calibrate_gaussian(sens, 1, 0.7, 1e-6)
        assert out.dtype == np.float32
        assert float(np.float32(seen[-1])) >= scale
        below_nearest += float(np.float32(scale)) < scale
    assert below_nearest >= 5


def test_scale_rounding_helper():
    for s in (1.0, 0.1, 1 / 3, 1e-30, 3.0e38):
        up = noise._scale_for(s, np.float32)
        assert up >= s and float(np.float32(up)) == up
        assert float(np.nextafter(np.float32(up), np.float32(0))) < s
    assert noise._scale_for(0.1, np.float64) == 0.1


# ---------------------------------------------------------------------------
# 5. A huge finite label with float32 X is clipped, not turned into inf
# ---------------------------------------------------------------------------
def _data32(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, d)) / 3).astype(np.float32)
    return X, rng.standard_normal(n)


@pytest.mark.parametrize("big", [1e300, -1e300, 3.5e38])
def test_huge_label_with_float32_X_fits_as_the_label_at_the_bound(big):
    X, y = _data32()
    y_big, y_bound = y.copy(), y.copy()
    y_big[5], y_bound[5] = big, math.copysign(2.0, big)
    kw = dict(constraint=fe.L2Ball(3.0, 3), epsilon=1.0, delta=1e-5, noise="gaussian", data_norm=1.0,
              label_bound=2.0, steps=5)
    loss = fe.losses.Squared()
    a = fe.noisy_pgd(loss, X, y_big, random_state=3, **kw)
    b = fe.noisy_pgd(loss, X, y_bound, random_state=3, **kw)
    assert a.w.dtype == np.float32
    np.testing.assert_array_equal(a.w, b.w)
    # classification takes labels in {−1, 0, +1} only: a label of ±1e300 is refused, naming y
    with pytest.raises(ValueError, match="y: a classification loss"):
        fe.noisy_pgd(fe.losses.Logistic(), X, y_big, random_state=4, **kw)
    # the losses' own entry points too
    w = np.full(3, 0.1, dtype=np.float32)
    bounded = fe.losses.Squared(label_bound=2.0)
    assert bounded.value(w, X, y_big) == bounded.value(w, X, y_bound)
    np.testing.assert_array_equal(bounded.grad(w, X, y_big), bounded.grad(w, X, y_bound))


def test_non_finite_labels_are_still_refused():
    X, y = _data32()
    for bad in (np.inf, -np.inf, np.nan):
        y2 = y.copy()
        y2[0] = bad
        with pytest.raises(ValueError, match="y must contain only finite"):
            fe.noisy_pgd(fe.losses.Squared(label_bound=1.0), X, y2, fe.L2Ball(1.0, 3), 1.0, 1e-5,
                         noise="gaussian", data_norm=1.0, random_state=0)


# labels beyond label_bound=1.5 (y_big[7] = 1e300 among them) are the point: their warning is expected
@pytest.mark.filterwarnings("ignore:.*have \\|y\\| > label_bound:fasterm.DataWarning")
def test_huge_label_float32_estimator_and_dask():
    pytest.importorskip("sklearn")
    X, y = _data32(60)
    y_big, y_bound = y.copy(), y.copy()
    y_big[7], y_bound[7] = 1e300, 1.5
    est = lambda: fe.DPLinearRegression(label_bound=1.5, random_state=2, steps=5)  # noqa: E731
    np.testing.assert_array_equal(est().fit(X, y_big).coef_, est().fit(X, y_bound).coef_)
    da = pytest.importorskip("dask.array")
    kw = dict(constraint=fe.L2Ball(3.0, 3), epsilon=1.0, delta=1e-5, noise="gaussian", data_norm=1.0,
              label_bound=1.5, steps=4)
    loss = fe.losses.Squared()
    Xd = da.from_array(X, chunks=(20, 3))
    a = fe.noisy_pgd(loss, Xd, y_big, random_state=5, **kw)
    b = fe.noisy_pgd(loss, Xd, da.from_array(y_bound, chunks=20), random_state=5, **kw)
    np.testing.assert_array_equal(a.w, b.w)


# ---------------------------------------------------------------------------
# 6. python -m fasterm: independent streams for the split and each fit's noise
# ---------------------------------------------------------------------------
def _first_draws(random_state):
    g = copy.deepcopy(random_state) if isinstance(random_state, np.random.Generator) \
        else np.random.default_rng(random_state)
    return tuple(g.bit_generator.random_raw(4).tolist())


def test_main_split_and_noise_streams_are_independent_and_reproducible(monkeypatch):
    calls = {"split": [], "fit": []}
    real_split, real_fit = job.train_test_split, job._linear.fit_binary

    def split(*args, random_state=None):
        calls["split"].append(_first_draws(random_state))
        return real_split(*args, random_state=random_state)

    def fit(*args, random_state=None, **kw):
        calls["fit"].append(_first_draws(random_state))
        return real_fit(*args, random_state=random_state, **kw)

    monkeypatch.setattr(job, "train_test_split", split)
    monkeypatch.setattr(job._linear, "fit_binary", fit)
    first = job.run([0.5, 2.0], seeds=3, delta=1e-5, noises=("gaussian", "laplace"))
    streams = calls["split"] + calls["fit"]
    assert len(calls["split"]) == 3 and len(calls["fit"]) == 2 * 2 * 3
    assert len(set(streams)) == len(streams)  # no two consumers share a stream
    again = job.run([0.5, 2.0], seeds=3, delta=1e-5, noises=("gaussian", "laplace"))
    for r1, r2 in zip(first["rows"], again["rows"]):
        np.testing.assert_array_equal(r1["acc"], r2["acc"])
    assert calls["split"][:3] == calls["split"][3:] and calls["fit"][:12] == calls["fit"][12:]


# ---------------------------------------------------------------------------
# 7. The Laplace sampler is the documented ziggurat (sign from bit 0)
# ---------------------------------------------------------------------------
def _ziggurat_reference(seed, n, scale):
    """src/cpp/fasterm/ziggurat.hpp in plain Python (float64 path), from raw 64-bit words."""
    R, V = 7.69711747013104972, 3.949659822581572e-3
    x = [0.0] * 257
    x[0], x[1] = V / math.exp(-R), R
    for i in range(1, 255):
        x[i + 1] = -math.log(math.exp(-x[i]) + V / x[i])
    f = [math.exp(-v) for v in x]
    f[0], f[256] = math.exp(-R), 1.0
    k = [int(x[i + 1] / x[i] * 2.0 ** 55) for i in range(256)]
    w = [x[i] / 2.0 ** 55 for i in range(256)]
    bg = np.random.PCG64(np.random.SeedSequence(seed))
    raw = lambda: int(bg.random_raw())  # noqa: E731
    unif = lambda: (raw() >> 11) * 2.0 ** -53  # noqa: E731 - numpy's next_double for PCG64
    out = []
    for _ in range(n):
        word = raw()
        while True:
            layer, pos = (word >> 1) & 0xFF, word >> 9
            mag = float(pos) * w[layer]
            if pos < k[layer]:
                break
            if layer == 0:
                mag = R - math.log1p(-unif())
                break
            if f[layer] + unif() * (f[layer + 1] - f[layer]) < math.exp(-mag):
                break
            word = raw()
        out.append(scale * (-mag if word & 1 else mag))
    return np.array(out)


def test_laplace_sampler_is_the_documented_ziggurat():
    got = noise.laplace(20_000, 2.5, random_state=123)
    want = _ziggurat_reference(123, 20_000, 2.5)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    # ... and not numpy's exponential times a sign
    assert not np.allclose(np.abs(got[:100]), 2.5 * np.random.default_rng(123).standard_exponential(100))


def test_noise_docstring_describes_the_sampler():
    doc = noise.__doc__
    assert "256-layer ziggurat" in doc and "bit 0" in doc
    assert "numpy's ziggurat\n  exponential" not in doc and "from numpy's ziggurat exponential" not in doc
